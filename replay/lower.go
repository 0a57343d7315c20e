package replay

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
)

// kind is an engine operation.
type kind uint8

const (
	kPostSend kind = iota // post message arg as its sender
	kPostRecv             // post message arg as its receiver
	kWaitSend             // wait for the send of message arg
	kWaitRecv             // wait for the receive of message arg
	kDelay                // spend dur seconds
	kColl                 // collective instance arg, priced whole
	kEnd                  // MPI_Finalize
)

// op is one engine operation of a rank. gap is the compute time before it
// (the trace's time since the previous call, on the first op of a call);
// call indexes the rank's calls, for the breakdown. v is the op's one
// operand: a delay's seconds (the float's bits), else the index of its
// message or collective instance; one word keeps an op at 24 bytes, and a
// decomposed collective lowers into two ops per message.
type op struct {
	gap  float64
	v    uint64
	call int32
	kind kind
}

func argOp(k kind, arg int32) op { return op{kind: k, v: uint64(uint32(arg))} }
func delayOp(dur float64) op     { return op{kind: kDelay, v: math.Float64bits(dur)} }

// arg is the message or collective instance of a post, wait or
// collective op.
func (o *op) arg() int32 { return int32(uint32(o.v)) }

// dur is a delay's seconds.
func (o *op) dur() float64 { return math.Float64frombits(o.v) }

// call is one MPI call of the trace as replay accounts it.
type call struct {
	op    trace.Op
	event int32
}

// message is one matched point-to-point message.
type message struct {
	src, dst int32
	bytes    int64
	sync     bool // Ssend: always rendezvous
}

// collInst is one collective call priced whole: its members and price.
type collInst struct {
	members int32
	sec     float64
}

// Program is a trace lowered for the engine: per rank its operations, the
// matched messages, the collectives priced whole.
type Program struct {
	Ranks [][]op
	Calls [][]call
	Msgs  []message
	Colls []collInst
	// Events counts the trace's events lowered (calls, completions and
	// definitions): the unit of replay speed.
	Events int
}

// posting is a send or receive as one rank posted it, before matching
// (48 bytes: a decomposed collective posts one per message and member).
type posting struct {
	rank  int32
	event int32 // index in the rank's events
	peer  int32 // world rank
	tag   int32
	bytes int64
	op    int32  // index of the post op in the rank's ops, patched with the message
	wait  int32  // index of the wait op, -1 while none, -2 cancelled
	next  int32  // the next posting of the same request handle (then of the same envelope), -1 none
	ci    uint32 // the communicator's number (with the collective context): key, envelope
	send  bool
	sync  bool
	used  bool // matched
	coll  bool // a step of a decomposed collective
}

// reqQueues are the postings of each request handle not yet completed, in
// posting order (Open MPI hands one completed request to several sends).
type reqQueues map[uint64][2]int32

func (q reqQueues) push(posts []posting, h uint64, pi int) {
	posts[pi].next = -1
	if e, ok := q[h]; ok && e[0] >= 0 {
		posts[e[1]].next = int32(pi)
		q[h] = [2]int32{e[0], int32(pi)}
		return
	}
	q[h] = [2]int32{int32(pi), int32(pi)}
}

func (q reqQueues) pop(posts []posting, h uint64) (int, bool) {
	e, ok := q[h]
	if !ok || e[0] < 0 {
		return 0, false
	}
	q[h] = [2]int32{posts[e[0]].next, e[1]}
	return int(e[0]), true
}

type envelope struct {
	src, dst, tag int32
	ci            uint32
}

// collContext marks the messages of decomposed collectives, which MPI
// keeps apart from the point-to-point ones of the same communicator.
const collContext = 1 << 63

// lowerer builds a Program.
type lowerer struct {
	t      *trace.Trace
	cm     CollectiveModel
	prog   *Program
	posts  []posting
	colls  map[[2]uint64]int32 // (comm id, sequence) -> instance
	seq    map[uint64]uint64   // per rank, reset: the rank's collective count per comm
	rank   int32
	ops    []op
	calls  []call
	gap    float64
	curCal int32
	// commIndex numbers the communicators' identities for key.
	commIndex map[uint64]uint32
	lastComm  uint64
	lastCI    uint32
	lastOK    bool
	opCap     []int64 // per rank, its ops at most (demandOf)
}

func (l *lowerer) callCap(rk *trace.Rank) int {
	n := 0
	for i := range rk.Events {
		if rk.Events[i].Op.Call() {
			n++
		}
	}
	return n
}

// demand is what lowering a trace makes at most: its postings, per rank
// its engine ops, its calls, and the postings of decomposed collectives
// by op (for the refusal).
type demand struct {
	posts, calls int64
	ops          []int64
	collPosts    map[trace.Op]int64
	collCalls    map[trace.Op]int64
}

// demandOf counts, in one pass over the events and without building
// anything, the postings and ops lowerRank makes at most: a blocking send
// or receive posts once and waits once, a non-blocking one or a Start
// posts, a completion waits, a Sendrecv does both twice, a decomposed
// collective posts and waits once per message of its algorithm (Xfers:
// p-1 of each per member for a large all-to-all, so p(p-1) per call), and
// every other call is one op.
func demandOf(t *trace.Trace, cm CollectiveModel) demand {
	d := demand{ops: make([]int64, len(t.Ranks)), collPosts: map[trace.Op]int64{}, collCalls: map[trace.Op]int64{}}
	for r, rk := range t.Ranks {
		var ops int64
		for i := range rk.Events {
			e := &rk.Events[i]
			switch o := e.Op; {
			case o == trace.OpComplete:
				ops++
			case !o.Call():
			case o == trace.OpSend || o == trace.OpSsend || o == trace.OpBsend || o == trace.OpRsend || o == trace.OpRecv:
				d.calls++
				ops, d.posts = ops+2, d.posts+1
			case o.Sends() || o == trace.OpIrecv || o == trace.OpStart:
				d.calls++
				ops, d.posts = ops+1, d.posts+1
			case o == trace.OpSendrecv || o == trace.OpSendrecvReplace:
				d.calls++
				ops, d.posts = ops+4, d.posts+2
			case o.Collective():
				d.calls++
				x := int64(collXfers(rk, e, cm))
				ops, d.posts = ops+max(2*x, 1), d.posts+x
				if x > 0 {
					d.collPosts[o] += x
					d.collCalls[o]++
				}
			default:
				d.calls++
				ops++
			}
		}
		d.ops[r] = ops
	}
	return d
}

// collXfers is the number of messages collective e of rk lowers into: 0
// when cm prices it whole or lowerRank refuses it.
func collXfers(rk *trace.Rank, e *trace.Event, cm CollectiveModel) int {
	_, members, ok := commID(rk, e.Comm)
	if !ok {
		return 0
	}
	me, root := -1, 0
	for k, m := range members {
		if m == int32(rk.Header.Rank) {
			me = k
		}
		if e.Peer >= 0 && m == e.Peer {
			root = k
		}
	}
	if me < 0 {
		return 0
	}
	if cm != nil {
		if _, ok := cm.PriceCollective(e.Op, len(members), e.Bytes); ok {
			return 0
		}
	}
	return Xfers(e.Op, me, len(members), root, e.Bytes, max(e.Bytes2, 0))
}

// Memory per unit of a lowered program and its replay: a posting, an op,
// a call, and per message (at most half the postings) its matched pair,
// its engine state and its share of the matching's queues and maps.
var (
	postingBytes = float64(unsafe.Sizeof(posting{}))
	opBytes      = float64(unsafe.Sizeof(op{}))
	callBytes    = float64(unsafe.Sizeof(call{}))
	messageBytes = float64(unsafe.Sizeof(message{})+unsafe.Sizeof(msgState{})) + 32
)

// availableMemory is what this process may still allocate (a variable for
// tests).
var availableMemory = sysmem.Available

// bytes is the memory of the lowered program and its replay.
func (d demand) bytes() float64 {
	var ops int64
	for _, n := range d.ops {
		ops += n
	}
	return float64(d.posts)*postingBytes + float64(ops)*opBytes + float64(d.calls)*callBytes + float64(d.posts/2)*messageBytes
}

// check refuses, as bad input before anything is built, a lowered program
// larger than this process may take (the trace read already, its lowering
// is counted against what is left), or with more messages than an op's
// index reaches. The refusal names the collectives that decompose into
// most messages, the usual cause: a file of a few MB can hold 2^20 of
// them.
func (d demand) check(t *trace.Trace) error {
	need := d.bytes()
	avail, src, ok := availableMemory()
	tooMany := d.posts > math.MaxInt32
	for _, n := range d.ops {
		tooMany = tooMany || n > math.MaxInt32
	}
	if !tooMany && (!ok || need <= float64(avail)) {
		return nil
	}
	why := fmt.Sprintf("%d point-to-point messages", d.posts/2)
	var worst trace.Op
	for o, n := range d.collPosts {
		if worst == 0 || n > d.collPosts[worst] || n == d.collPosts[worst] && o < worst {
			worst = o
		}
	}
	if worst != 0 {
		why += fmt.Sprintf(" (of them %d from its %d MPI_%s calls on %d ranks, decomposed into their algorithm's messages)",
			d.collPosts[worst]/2, d.collCalls[worst]/int64(len(t.Ranks)), worst, len(t.Ranks))
	}
	if tooMany {
		return opts.Badf("%v: the trace lowers into %s, more than the %d replay indexes", results.ErrTooLarge, why, math.MaxInt32)
	}
	return opts.Badf("%v: the trace lowers into %s, which need about %s of memory, more than this process may take (%s)",
		results.ErrTooLarge, why, sysmem.Format(need), sysmem.Allows(need, avail, src))
}

// Lower turns a trace into a Program: it resolves the requests' completions
// to their postings, decomposes the collectives (or prices them whole with
// cm), and matches every receive to its send by MPI's rule: in the order
// of posting per (source, destination, tag, communicator), with the actual
// source and tag of wildcard receives from the trace. A send or receive
// left unmatched is bad input naming its file, rank and event.
func Lower(t *trace.Trace, cm CollectiveModel) (*Program, error) {
	l := &lowerer{t: t, cm: cm, prog: &Program{}, colls: map[[2]uint64]int32{}, commIndex: map[uint64]uint32{}}
	d := demandOf(t, cm)
	if err := d.check(t); err != nil {
		return nil, err
	}
	// every slice at its final size: a regrown slice holds its old and new
	// arrays at once, and a trace of collectives lowers into many more
	// postings than it has events
	l.posts = make([]posting, 0, d.posts)
	l.opCap = d.ops
	for r, rk := range t.Ranks {
		if err := l.lowerRank(int32(r), rk); err != nil {
			return nil, err
		}
	}
	if err := l.match(); err != nil {
		return nil, err
	}
	return l.prog, nil
}

// LowerDir is Lower on the trace read from dir, for the commands that take
// a trace directory (replay, export tit): its refusals carry the "DIR
// dir:" prefix that the refusals of reading the directory carry.
func LowerDir(dir string, t *trace.Trace, cm CollectiveModel) (*Program, error) {
	prog, err := Lower(t, cm)
	if err == nil {
		return prog, nil
	}
	if opts.IsBadInput(err) {
		return nil, opts.Badf("DIR %s: %v", dir, err)
	}
	return nil, fmt.Errorf("DIR %s: %w", dir, err)
}

func (l *lowerer) emit(o op) int {
	o.call = l.curCal
	o.gap, l.gap = l.gap, 0
	l.ops = append(l.ops, o)
	return len(l.ops) - 1
}

func (l *lowerer) post(rk *trace.Rank, ev int, peer, tag int32, comm uint64, bytes int64, send, sync bool) int {
	k := kPostRecv
	if send {
		k = kPostSend
	}
	pi := len(l.posts)
	if pi < cap(l.posts) {
		l.posts = l.posts[:pi+1]
	} else {
		l.posts = append(l.posts, posting{})
	}
	p := &l.posts[pi]
	*p = posting{rank: l.rank, event: int32(ev), peer: peer, tag: tag, bytes: bytes, send: send, sync: sync, wait: -1, ci: l.number(comm), coll: comm&collContext != 0}
	l.posts[pi].op = int32(l.emit(argOp(k, int32(pi))))
	return pi
}

func (l *lowerer) wait(pi int) {
	k := kWaitRecv
	if l.posts[pi].send {
		k = kWaitSend
	}
	l.posts[pi].wait = int32(l.emit(argOp(k, int32(pi))))
}

func bad(rk *trace.Rank, ev int, format string, args ...any) error {
	return opts.Badf("%s: rank %d, event %d: %s", rk.Path, rk.Header.Rank, ev, fmt.Sprintf(format, args...))
}

func commID(rk *trace.Rank, c int32) (uint64, []int32, bool) {
	if c < 0 || int(c) >= len(rk.Comms) {
		return 0, nil, false
	}
	return rk.Comms[c].ID, rk.Comms[c].Members, true
}

func (l *lowerer) lowerRank(r int32, rk *trace.Rank) error {
	l.rank, l.gap, l.curCal = r, 0, -1
	l.ops = make([]op, 0, l.opCap[r])
	l.calls = make([]call, 0, l.callCap(rk))
	first := len(l.posts)
	l.seq = map[uint64]uint64{}
	pending := reqQueues{}                 // request handle -> postings not yet completed
	persistent := map[uint64]trace.Event{} // persistent request handle -> its init
	inflight := reqQueues{}                // started persistent requests
	var last int64                         // end of the previous timed event, ns
	evs := rk.Events
	for i := 0; i < len(evs); i++ {
		e := &evs[i]
		l.prog.Events++
		if !e.Op.Call() {
			if e.Op == trace.OpFlush && e.T0 >= last {
				last = e.T1 // the library's write between calls is neither compute nor MPI
			}
			continue
		}
		l.gap += float64(e.T0-last) * 1e-9
		last = e.T1
		l.calls = append(l.calls, call{op: e.Op, event: int32(i)})
		l.curCal = int32(len(l.calls) - 1)
		dur := float64(e.T1-e.T0) * 1e-9
		cid, members, ok := commID(rk, e.Comm)
		needComm := func() error {
			if !ok {
				return bad(rk, i, "%s on communicator %d, which the trace does not define", e.Op, e.Comm)
			}
			return nil
		}
		switch o := e.Op; {
		case o == trace.OpFinalize:
			l.emit(op{kind: kEnd})
		case o == trace.OpSend || o == trace.OpSsend || o == trace.OpBsend || o == trace.OpRsend:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(delayOp(dur))
				break
			}
			l.wait(l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes, true, o == trace.OpSsend))
		case o == trace.OpRecv:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(delayOp(dur))
				break
			}
			l.wait(l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes2, false, false))
		case o == trace.OpIsend || o == trace.OpIssend || o == trace.OpIbsend || o == trace.OpIrsend || o == trace.OpIrecv:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(delayOp(dur))
				break
			}
			send := o != trace.OpIrecv
			pi := l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes, send, o == trace.OpIssend)
			pending.push(l.posts, e.Req, pi)
		case o == trace.OpSendInit || o == trace.OpSsendInit || o == trace.OpRecvInit:
			if err := needComm(); err != nil {
				return err
			}
			persistent[e.Req] = *e
			l.emit(delayOp(dur))
		case o == trace.OpStart:
			in, ok := persistent[e.Req]
			if !ok {
				return bad(rk, i, "Start of request %#x, which no traced Send_init, Ssend_init, Bsend_init, Rsend_init or Recv_init created (persistent collectives are not traced)", e.Req)
			}
			if in.Peer == trace.PeerNull {
				l.emit(delayOp(dur))
				break
			}
			icid, _, _ := commID(rk, in.Comm)
			pi := l.post(rk, i, in.Peer, in.Tag, icid, in.Bytes, in.Op != trace.OpRecvInit, in.Op == trace.OpSsendInit)
			inflight.push(l.posts, e.Req, pi)
		case o == trace.OpRequestFree:
			delete(persistent, e.Req)
			l.emit(delayOp(dur))
		case o == trace.OpWait || o == trace.OpWaitall || o == trace.OpWaitany || o == trace.OpWaitsome ||
			o == trace.OpTest || o == trace.OpTestall || o == trace.OpTestany || o == trace.OpTestsome:
			n := len(l.ops)
			var err error
			if i, last, err = l.completions(rk, i, last, pending, inflight); err != nil {
				return err
			}
			if len(l.ops) == n { // nothing modelled completed: a poll's time is waiting, re-derived where it completes
				l.emit(delayOp(0))
			}
		case o == trace.OpPollRun || o == trace.OpProbe || o == trace.OpIprobe:
			l.emit(delayOp(0))
		case o == trace.OpSendrecv || o == trace.OpSendrecvReplace:
			if err := needComm(); err != nil {
				return err
			}
			var ps []int
			if e.Peer != trace.PeerNull {
				ps = append(ps, l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes, true, false))
			}
			if e.Peer2 != trace.PeerNull {
				ps = append(ps, l.post(rk, i, e.Peer2, e.Tag2, cid, e.Bytes2, false, false))
			}
			for _, pi := range ps {
				l.wait(pi)
			}
			if len(ps) == 0 {
				l.emit(delayOp(dur))
			}
		case o.Collective():
			if err := needComm(); err != nil {
				return err
			}
			if err := l.collective(rk, i, e, cid, members); err != nil {
				return err
			}
			// a non-blocking collective runs at its call: its wait finds
			// no posting of its handle and completes at once
		default:
			// communicator management and other local calls: their measured time
			l.emit(delayOp(dur))
		}
	}
	if len(l.ops) == 0 || l.ops[len(l.ops)-1].kind != kEnd {
		return bad(rk, len(evs)-1, "the trace has no MPI_Finalize")
	}
	for pi := first; pi < len(l.posts); pi++ {
		if p := &l.posts[pi]; !p.send && p.wait < 0 {
			o := delayOp(0) // never completed: not a message
			o.call, o.gap = l.ops[p.op].call, l.ops[p.op].gap
			l.ops[p.op] = o
		}
	}
	l.prog.Ranks = append(l.prog.Ranks, l.ops)
	l.prog.Calls = append(l.prog.Calls, l.calls)
	return nil
}

// completions lowers the completions that follow the Wait or Test call
// at event i: each completes the oldest posting of its request handle
// (with the actual source and tag of a receive). It returns the index of
// the last event it read and the end of the last timed event.
func (l *lowerer) completions(rk *trace.Rank, i int, last int64, pending, inflight reqQueues) (int, int64, error) {
	evs := rk.Events
	for i+1 < len(evs) && (evs[i+1].Op == trace.OpComplete || evs[i+1].Op == trace.OpFlush) {
		i++
		l.prog.Events++
		c := &evs[i]
		if c.Op == trace.OpFlush { // the library wrote a block between the completions
			last = max(last, c.T1)
			continue
		}
		pi, ok := pending.pop(l.posts, c.Req)
		if !ok {
			if pi, ok = inflight.pop(l.posts, c.Req); !ok {
				continue // a request the replay does not model (probe, cancelled, null)
			}
		}
		p := &l.posts[pi]
		if !p.send && c.Peer < 0 {
			// a receive cancelled (MPI_Cancel), or from MPI_PROC_NULL:
			// no message; its posting becomes a delay at the end
			p.wait = -2
			continue
		}
		if !p.send {
			if p.peer == trace.PeerAny || c.Flags&trace.FlagLocalPeer != 0 {
				src, err := l.actualSource(rk, i, p, c)
				if err != nil {
					return i, last, err
				}
				p.peer = src
			}
			p.tag = c.Tag
		}
		if p.wait == -1 {
			l.wait(pi)
		}
	}
	return i, last, nil
}

// actualSource translates a completion's source, a rank of the posting's
// communicator, to a world rank.
func (l *lowerer) actualSource(rk *trace.Rank, ev int, p *posting, c *trace.Event) (int32, error) {
	if c.Flags&trace.FlagLocalPeer == 0 {
		return c.Peer, nil
	}
	e := rk.Events[p.event]
	cidx := e.Comm
	if e.Op == trace.OpStart {
		return p.peer, nil
	}
	_, members, ok := commID(rk, cidx)
	if !ok || c.Peer < 0 || int(c.Peer) >= len(members) {
		return 0, bad(rk, ev, "a receive completed from rank %d of communicator %d, which has %d members", c.Peer, cidx, len(members))
	}
	return members[c.Peer], nil
}

// collective lowers one collective call: priced whole by the collective
// model when it describes it, else decomposed into rounds of messages.
func (l *lowerer) collective(rk *trace.Rank, ev int, e *trace.Event, cid uint64, members []int32) error {
	me := -1
	for k, m := range members {
		if m == int32(rk.Header.Rank) {
			me = k
			break
		}
	}
	if me < 0 {
		return bad(rk, ev, "%s on a communicator this rank is not a member of", e.Op)
	}
	p := len(members)
	seq := l.seq[cid]
	l.seq[cid] = seq + 1
	if l.cm != nil {
		if sec, ok := l.cm.PriceCollective(e.Op, p, e.Bytes); ok {
			key := [2]uint64{cid, seq}
			inst, ok := l.colls[key]
			if !ok {
				l.prog.Colls = append(l.prog.Colls, collInst{members: int32(p), sec: sec})
				inst = int32(len(l.prog.Colls) - 1)
				l.colls[key] = inst
			}
			l.emit(argOp(kColl, inst))
			return nil
		}
	}
	root := 0
	if e.Peer >= 0 {
		for k, m := range members {
			if m == e.Peer {
				root = k
			}
		}
	}
	rounds := Decompose(e.Op, me, p, root, e.Bytes, max(e.Bytes2, 0))
	if len(rounds) == 0 {
		l.emit(delayOp(0))
		return nil
	}
	// One tag for every step: the messages between two members follow in
	// the same order on both sides, and rounds are not numbered alike on
	// every member (recursive doubling's extra ranks).
	for _, rd := range rounds {
		ps := make([]int, 0, len(rd))
		for _, x := range rd {
			ps = append(ps, l.post(rk, ev, members[x.Peer], 0, cid|collContext, x.Bytes, x.Send, false))
		}
		for _, pi := range ps {
			l.wait(pi)
		}
	}
	return nil
}

// number returns the small number of a communicator identity (collective
// context included), the same for every rank; the last one is cached.
func (l *lowerer) number(comm uint64) uint32 {
	if comm == l.lastComm && l.lastOK {
		return l.lastCI
	}
	ci, ok := l.commIndex[comm]
	if !ok {
		ci = uint32(len(l.commIndex))
		l.commIndex[comm] = ci
	}
	l.lastComm, l.lastCI, l.lastOK = comm, ci, true
	return ci
}

// key packs an envelope into 64 bits when its fields fit (ranks below
// 2^16, communicator numbers below 2^11, tags in [0, 2^20)), so the
// matching map hashes a word; ok is false otherwise.
func key(src, dst, tag int32, ci uint32) (uint64, bool) {
	if src < 0 || src >= 1<<16 || dst < 0 || dst >= 1<<16 || tag < 0 || tag >= 1<<20 || ci >= 1<<11 {
		return 0, false
	}
	return uint64(src) | uint64(dst)<<16 | uint64(tag)<<32 | uint64(ci)<<52, true
}

// match pairs the postings into messages, in the order of posting, and
// patches the ops. The receives of one envelope wait in a queue threaded
// through next, in posting order; one map look-up per posting finds it.
func (l *lowerer) match() error {
	type queue struct{ head, tail int32 }
	var queues []queue
	fast := map[uint64]int32{}
	slow := map[envelope]int32{}
	find := func(src, dst, tag int32, p *posting, create bool) int32 {
		var q int32
		var ok bool
		k, packed := key(src, dst, tag, p.ci)
		if packed {
			q, ok = fast[k]
		} else {
			q, ok = slow[envelope{src, dst, tag, p.ci}]
		}
		if ok || !create {
			if !ok {
				return -1
			}
			return q
		}
		queues = append(queues, queue{-1, -1})
		q = int32(len(queues) - 1)
		if packed {
			fast[k] = q
		} else {
			slow[envelope{src, dst, tag, p.ci}] = q
		}
		return q
	}
	// posting.next, the request queues' link while lowering, links the
	// receives of one envelope now
	for pi := range l.posts {
		p := &l.posts[pi]
		if p.send || p.wait < 0 {
			continue
		}
		p.next = -1
		q := &queues[find(p.peer, p.rank, p.tag, p, true)]
		if q.head < 0 {
			q.head = int32(pi)
		} else {
			l.posts[q.tail].next = int32(pi)
		}
		q.tail = int32(pi)
	}
	l.prog.Msgs = make([]message, 0, len(l.posts)/2)
	for si := range l.posts {
		s := &l.posts[si]
		if !s.send {
			continue
		}
		qi := find(s.rank, s.peer, s.tag, s, false)
		if qi < 0 || queues[qi].head < 0 {
			return l.unmatched(si, "send", "no matching receive in rank %d's trace")
		}
		ri := queues[qi].head
		if err := l.truncated(si, int(ri)); err != nil {
			return err
		}
		queues[qi].head = l.posts[ri].next
		l.posts[ri].used = true
		l.prog.Msgs = append(l.prog.Msgs, message{src: s.rank, dst: s.peer, bytes: s.bytes, sync: s.sync})
		mi := int32(len(l.prog.Msgs) - 1)
		l.patch(s, mi)
		l.patch(&l.posts[ri], mi)
	}
	for pi := range l.posts {
		if p := &l.posts[pi]; !p.send && p.wait >= 0 && !p.used {
			return l.unmatched(pi, "receive", "no matching send in rank %d's trace")
		}
	}
	return nil
}

// truncated refuses a point-to-point receive smaller than the send it
// matches: a real run fails there with MPI_ERR_TRUNCATE. A receive's size
// is its buffer (non-blocking) or its status count (blocking; -1 when the
// MPI left it undefined, which is not compared). The messages of
// decomposed collectives are not compared: their sizes are derived from
// each member's own totals.
func (l *lowerer) truncated(si, ri int) error {
	s, r := &l.posts[si], &l.posts[ri]
	if s.coll || r.bytes < 0 || r.bytes >= s.bytes {
		return nil
	}
	srk, rrk := l.t.Ranks[s.rank], l.t.Ranks[r.rank]
	return opts.Badf("%s: offset %d (event %d): %s of %d bytes from rank %d (tag %d) matches the %s of %d bytes at %s: offset %d (event %d): a receive holds at least the bytes of its matched send (a real run fails with MPI_ERR_TRUNCATE)",
		rrk.Path, trace.EventOffset(int(r.event)), r.event, rrk.Events[r.event].Op, r.bytes, r.peer, r.tag,
		srk.Events[s.event].Op, s.bytes, srk.Path, trace.EventOffset(int(s.event)), s.event)
}

func (l *lowerer) patch(p *posting, mi int32) {
	ops := l.prog.Ranks[p.rank]
	ops[p.op].v = uint64(uint32(mi))
	if p.wait >= 0 {
		ops[p.wait].v = uint64(uint32(mi))
	}
}

func (l *lowerer) unmatched(pi int, what, why string) error {
	p := l.posts[pi]
	rk := l.t.Ranks[p.rank]
	e := rk.Events[p.event]
	ctx := "point-to-point"
	if p.coll {
		ctx = "a step of the collective's algorithm"
	}
	dir := "to"
	if what == "receive" {
		dir = "from"
	}
	return bad(rk, int(p.event), "%s of %d bytes %s rank %d (tag %d, %s) has "+why+" (a program that ended without receiving?)",
		e.Op, p.bytes, dir, p.peer, p.tag, ctx, p.peer)
}
