package replay

import (
	"fmt"

	"github.com/commcost/commcost/opts"
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
// call indexes the rank's calls, for the breakdown.
type op struct {
	kind kind
	arg  int32
	call int32
	gap  float64
	dur  float64
}

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

// posting is a send or receive as one rank posted it, before matching.
type posting struct {
	rank  int32
	event int32 // index in the rank's events
	peer  int32 // world rank
	tag   int32
	comm  uint64
	bytes int64
	send  bool
	sync  bool
	used  bool   // matched
	op    int    // index of the post op in the rank's ops, patched with the message
	wait  int    // index of the wait op, -1 while none
	next  int32  // the next posting of the same request handle (then of the same envelope), -1 none
	ci    uint32 // the communicator's number (with the collective context) for key
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
	comm          uint64
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
}

// Lower turns a trace into a Program: it resolves the requests' completions
// to their postings, decomposes the collectives (or prices them whole with
// cm), and matches every receive to its send by MPI's rule: in the order
// of posting per (source, destination, tag, communicator), with the actual
// source and tag of wildcard receives from the trace. A send or receive
// left unmatched is bad input naming its file, rank and event.
func Lower(t *trace.Trace, cm CollectiveModel) (*Program, error) {
	l := &lowerer{t: t, cm: cm, prog: &Program{}, colls: map[[2]uint64]int32{}, commIndex: map[uint64]uint32{}}
	total := 0
	for _, rk := range t.Ranks {
		total += len(rk.Events)
	}
	l.posts = make([]posting, 0, total) // at most about one per event: no regrowth of the largest slice
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
	*p = posting{rank: l.rank, event: int32(ev), peer: peer, tag: tag, comm: comm, bytes: bytes, send: send, sync: sync, wait: -1, ci: l.number(comm)}
	l.posts[pi].op = l.emit(op{kind: k, arg: int32(pi)})
	return pi
}

func (l *lowerer) wait(pi int) {
	k := kWaitRecv
	if l.posts[pi].send {
		k = kWaitSend
	}
	l.posts[pi].wait = l.emit(op{kind: k, arg: int32(pi)})
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
	l.ops = make([]op, 0, len(rk.Events)+len(rk.Events)/4)
	l.calls = make([]call, 0, len(rk.Events))
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
			l.emit(op2(kEnd))
		case o == trace.OpSend || o == trace.OpSsend || o == trace.OpBsend || o == trace.OpRsend:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(op{kind: kDelay, dur: dur})
				break
			}
			l.wait(l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes, true, o == trace.OpSsend))
		case o == trace.OpRecv:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(op{kind: kDelay, dur: dur})
				break
			}
			l.wait(l.post(rk, i, e.Peer, e.Tag, cid, e.Bytes2, false, false))
		case o == trace.OpIsend || o == trace.OpIssend || o == trace.OpIbsend || o == trace.OpIrsend || o == trace.OpIrecv:
			if err := needComm(); err != nil {
				return err
			}
			if e.Peer == trace.PeerNull {
				l.emit(op{kind: kDelay, dur: dur})
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
			l.emit(op{kind: kDelay, dur: dur})
		case o == trace.OpStart:
			in, ok := persistent[e.Req]
			if !ok {
				return bad(rk, i, "Start of request %#x, which no Send_init or Recv_init created", e.Req)
			}
			if in.Peer == trace.PeerNull {
				l.emit(op{kind: kDelay, dur: dur})
				break
			}
			icid, _, _ := commID(rk, in.Comm)
			pi := l.post(rk, i, in.Peer, in.Tag, icid, in.Bytes, in.Op != trace.OpRecvInit, in.Op == trace.OpSsendInit)
			inflight.push(l.posts, e.Req, pi)
		case o == trace.OpRequestFree:
			delete(persistent, e.Req)
			l.emit(op{kind: kDelay, dur: dur})
		case o == trace.OpWait || o == trace.OpWaitall || o == trace.OpWaitany || o == trace.OpWaitsome ||
			o == trace.OpTest || o == trace.OpTestall || o == trace.OpTestany || o == trace.OpTestsome:
			n := len(l.ops)
			var err error
			if i, last, err = l.completions(rk, i, last, pending, inflight); err != nil {
				return err
			}
			if len(l.ops) == n { // nothing modelled completed: a poll's time is waiting, re-derived where it completes
				l.emit(op{kind: kDelay})
			}
		case o == trace.OpPollRun || o == trace.OpProbe || o == trace.OpIprobe:
			l.emit(op{kind: kDelay})
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
				l.emit(op{kind: kDelay, dur: dur})
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
			l.emit(op{kind: kDelay, dur: dur})
		}
	}
	if len(l.ops) == 0 || l.ops[len(l.ops)-1].kind != kEnd {
		return bad(rk, len(evs)-1, "the trace has no MPI_Finalize")
	}
	for pi := first; pi < len(l.posts); pi++ {
		if p := &l.posts[pi]; !p.send && p.wait < 0 {
			l.ops[p.op] = op{kind: kDelay, call: l.ops[p.op].call, gap: l.ops[p.op].gap} // never completed: not a message
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

func op2(k kind) op { return op{kind: k} }

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
			l.emit(op{kind: kColl, arg: inst})
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
		l.emit(op{kind: kDelay})
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
			q, ok = slow[envelope{src, dst, tag, p.comm}]
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
			slow[envelope{src, dst, tag, p.comm}] = q
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
	if s.comm&collContext != 0 || r.bytes < 0 || r.bytes >= s.bytes {
		return nil
	}
	srk, rrk := l.t.Ranks[s.rank], l.t.Ranks[r.rank]
	return opts.Badf("%s: offset %d (event %d): %s of %d bytes from rank %d (tag %d) matches the %s of %d bytes at %s: offset %d (event %d): a receive holds at least the bytes of its matched send (a real run fails with MPI_ERR_TRUNCATE)",
		rrk.Path, trace.EventOffset(int(r.event)), r.event, rrk.Events[r.event].Op, r.bytes, r.peer, r.tag,
		srk.Events[s.event].Op, s.bytes, srk.Path, trace.EventOffset(int(s.event)), s.event)
}

func (l *lowerer) patch(p *posting, mi int32) {
	ops := l.prog.Ranks[p.rank]
	ops[p.op].arg = mi
	if p.wait >= 0 {
		ops[p.wait].arg = mi
	}
}

func (l *lowerer) unmatched(pi int, what, why string) error {
	p := l.posts[pi]
	rk := l.t.Ranks[p.rank]
	e := rk.Events[p.event]
	ctx := "point-to-point"
	if p.comm&collContext != 0 {
		ctx = "a step of the collective's algorithm"
	}
	dir := "to"
	if what == "receive" {
		dir = "from"
	}
	return bad(rk, int(p.event), "%s of %d bytes %s rank %d (tag %d, %s) has "+why+" (a program that ended without receiving?)",
		e.Op, p.bytes, dir, p.peer, p.tag, ctx, p.peer)
}
