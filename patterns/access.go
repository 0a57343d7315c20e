package patterns

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/commcost/commcost/mpi"
)

// This file is the engine shared by the k-k-access (kkaccess.go) and the
// k-access (kaccess.go) of paper 000 (Fischer, Rethmann, Wachsmann), which
// "route a function f in F_k" (Definition 1): every accessing rank i sends
// its k packets, packet j to the memory module of rank f(i, j), where the
// global variable is accessed and a packet is sent back to i.
//
// Every rank is at once an application processor (it issues accesses) and a
// memory module (it serves the accesses addressed to it), as with p
// application processors and p shared memory modules in the paper (section
// 1). A rank serves requests while it waits for its own answers, one request
// at a time in arrival order ("these requests must be answered one after the
// other", section 5.1).
//
// Messages:
//   - request: a 16-byte header (slot, sequence number), followed for a
//     write by the l bytes to store; the paper's header is at most 12 bytes
//     (section 3.2);
//   - answer: for a read the l bytes of the slot, for a write a 16-byte
//     acknowledgement (the request's header).
//
// The k requests of one access are issued one after another without
// waiting for answers (the send hot spot k, pipelined as in section 4,
// "Pipelining in direct and indirect networks"); the access ends when all k
// answers are in. With a > 1 accesses per repetition (k-access, section 5)
// the next access starts as soon as the previous one ended, with no
// synchronisation in between.
//
// The global variable of a rank has one slot of l bytes per requesting rank
// (rank i uses slot i mod slots; slots = p unless p*l would exceed
// maxVariableBytes). A read returns the slot's bytes, which are a function
// of the holding rank and the byte index; a write stores the packet in the
// requester's slot. With validation, a requester checks every answer of a
// read against the holder's bytes, and a holder checks after each
// repetition that every slot holds the last write addressed to it.

// AccessOp is the kind of global-variable access (paper 000, section 3.2).
type AccessOp int

const (
	// AccessRead: the request is a header; the holder answers with the data.
	AccessRead AccessOp = iota
	// AccessWrite: the request carries the data; the holder stores it and
	// answers with an acknowledgement.
	AccessWrite
)

func (o AccessOp) String() string {
	if o == AccessWrite {
		return "write"
	}
	return "read"
}

// ParseAccessOp parses "read" or "write".
func ParseAccessOp(s string) (AccessOp, error) {
	switch s {
	case "read":
		return AccessRead, nil
	case "write":
		return AccessWrite, nil
	}
	return 0, fmt.Errorf("access op %q: accepted values are read and write", s)
}

const (
	accessHeaderBytes = mpi.AccessHeaderBytes
	accessReqTag      = 300
	accessReplyTag    = 301
	// maxVariableBytes bounds one rank's global variable; with more ranks
	// times packet bytes than this, ranks share slots.
	maxVariableBytes = 64 << 20
	// maxAccessIndex bounds k and a: the sequence number packs the
	// repetition, the access and the packet index.
	maxAccessIndex = 1<<16 - 1
)

// accessPlan is the routing function of one repetition: a successive
// accesses of k packets each; packet j of rank i in access x goes to rank
// targets[x][i*k+j], or nowhere (-1) when rank i does not access.
type accessPlan struct {
	p, k    int
	targets [][]int
}

func newAccessPlan(p, k, a int) *accessPlan {
	pl := &accessPlan{p: p, k: k, targets: make([][]int, a)}
	for x := range pl.targets {
		pl.targets[x] = make([]int, p*k)
	}
	return pl
}

// row is rank i's k targets in access x.
func (pl *accessPlan) row(x, i int) []int { return pl.targets[x][i*pl.k : (i+1)*pl.k] }

// incoming counts the requests rank r serves in the whole repetition.
func (pl *accessPlan) incoming(r int) int {
	n := 0
	for _, t := range pl.targets {
		for _, v := range t {
			if v == r {
				n++
			}
		}
	}
	return n
}

// maxShare is the largest portion of the p ranks that send packet j of one
// access to the same rank, over all steps j and accesses x: the h of
// paper 000, section 5.
func (pl *accessPlan) maxShare() float64 {
	load := make([]int, pl.p)
	best := 0
	for _, t := range pl.targets {
		for j := 0; j < pl.k; j++ {
			clear(load)
			for i := 0; i < pl.p; i++ {
				if v := t[i*pl.k+j]; v >= 0 {
					load[v]++
					best = max(best, load[v])
				}
			}
		}
	}
	return float64(best) / float64(pl.p)
}

// accessingRanks counts the ranks that access in access x.
func (pl *accessPlan) accessingRanks(x int) int {
	n := 0
	for i := 0; i < pl.p; i++ {
		if pl.row(x, i)[0] >= 0 {
			n++
		}
	}
	return n
}

// writer is the last write a slot received: from which rank, with which
// sequence number, in which repetition (rep 0 = none yet).
type writer struct {
	src int
	seq uint64
	rep uint64
}

// accessEngine runs access plans on one rank: in the backend's own language
// when it implements mpi.AccessKernel (native: a batch of repetitions per
// cgo crossing, mpi.AccessBatcher, so the time is MPI's), else with the Go
// loop of run below. Both run the same protocol on the same buffer layout.
type accessEngine struct {
	c        mpi.Comm
	op       AccessOp
	l, k     int
	validate bool
	slots    int
	runner   mpi.AccessRunner // the backend's kernel, or nil
	rows     []int            // this rank's targets of a repetition, for the kernel
	mem      []byte           // this rank's global variable
	reqBuf   []byte           // the one posted request receive
	reqMsgs  [][]byte         // this rank's k outgoing requests
	replies  [][]byte         // answers to them (k, or k per access with a kernel that keeps them)
	acks     [][]byte         // acknowledgements of served writes, one per request served
	replyReq []mpi.Request
	waits    []mpi.Request // the request receive, then the k answers' receives
	reqSend  []mpi.Request
	sends    []mpi.Request // answers sent while serving
	writers  []writer
	rep      uint64 // repetitions run, identical on every rank
	counts   Counts // accumulated over every repetition
}

// maxKeptReplies bounds the answer buffers a validating kernel keeps for a
// whole repetition (a*k answers); beyond it the Go loop, which checks after
// every access, validates instead.
const maxKeptReplies = 64 << 20

// newAccessEngine prepares an engine for plans of at most steps accesses of
// k packets of l bytes. Call close when done.
func newAccessEngine(c mpi.Comm, op AccessOp, k, l, steps int, validate bool) (*accessEngine, error) {
	p := c.Size()
	slots := p
	if l > 0 && p*l > maxVariableBytes {
		slots = max(1, maxVariableBytes/l)
	}
	e := &accessEngine{c: c, op: op, l: l, k: k, validate: validate, slots: slots}
	reqLen, replyLen := e.msgLens()
	var bufs mpi.AccessBuffers
	keep := 1
	if ak, ok := c.(mpi.AccessKernel); ok && (!validate || steps*k*replyLen <= maxKeptReplies) {
		if validate {
			keep = steps
		}
		r, err := ak.NewAccess(mpi.AccessSpec{Write: op == AccessWrite, K: k, L: l, Slots: slots, MaxSteps: steps,
			KeepReplies: validate, ReqTag: accessReqTag, ReplyTag: accessReplyTag})
		if err != nil {
			return nil, err
		}
		e.runner = r
		bufs = r.Buffers()
	} else {
		bufs = mpi.AccessBuffers{Mem: make([]byte, slots*l), ReqMsgs: make([]byte, k*reqLen), Replies: make([]byte, k*replyLen)}
	}
	e.mem = bufs.Mem
	if op == AccessRead {
		for i := range e.mem {
			e.mem[i] = memByte(c.Rank(), i)
		}
	}
	e.reqBuf = make([]byte, reqLen)
	e.reqMsgs = make([][]byte, k)
	for j := range e.reqMsgs {
		e.reqMsgs[j] = bufs.ReqMsgs[j*reqLen : (j+1)*reqLen]
	}
	e.replies = make([][]byte, k*keep)
	for j := range e.replies {
		e.replies[j] = bufs.Replies[j*replyLen : (j+1)*replyLen]
	}
	e.replyReq = make([]mpi.Request, k)
	e.waits = make([]mpi.Request, k+1)
	e.reqSend = make([]mpi.Request, k)
	e.writers = make([]writer, slots)
	e.prepare()
	return e, nil
}

// close releases the kernel's buffers; the engine's views of them go too.
func (e *accessEngine) close() {
	if e.runner != nil {
		e.runner.Close()
		e.runner = nil
		e.mem, e.reqMsgs, e.replies = nil, nil, nil
	}
}

// msgLens are the byte lengths of a request and of its answer.
func (e *accessEngine) msgLens() (req, reply int) {
	if e.op == AccessWrite {
		return accessHeaderBytes + e.l, accessHeaderBytes
	}
	return accessHeaderBytes, e.l
}

// memByte is byte i of rank r's global variable in read mode.
func memByte(r, i int) byte { return byte(r*131 + i*7 + 3) }

// writeByte is byte i of the packet rank src writes as packet j of
// repetition rep.
func writeByte(src int, rep uint64, j, i int) byte {
	return byte(src*37 + int(rep%251)*101 + j*11 + i*7 + 5)
}

func packSeq(rep uint64, x, j int) uint64 { return rep<<32 | uint64(x)<<16 | uint64(j) }

func unpackSeq(seq uint64) (rep uint64, x, j int) {
	return seq >> 32, int(seq>>16) & maxAccessIndex, int(seq) & maxAccessIndex
}

// prepare fills the write payloads of the next repetition (outside the
// timed region); without validation the payload is filled once.
func (e *accessEngine) prepare() {
	if e.op != AccessWrite || (!e.validate && e.rep > 0) {
		return
	}
	me := e.c.Rank()
	for j, m := range e.reqMsgs {
		data := m[accessHeaderBytes:]
		for i := range data {
			data[i] = writeByte(me, e.rep+1, j, i)
		}
	}
}

// run executes one repetition's plan and returns this rank's own time: from
// the call until the answers of its last access are in (0 when it accesses
// nothing). It returns only when it has also served every request addressed
// to it and all its messages are complete.
func (e *accessEngine) run(pl *accessPlan) (float64, error) {
	if e.runner != nil {
		return e.runKernel(pl)
	}
	c := e.c
	me := c.Rank()
	k := e.k
	e.rep++
	incoming := pl.incoming(me)
	_, replyLen := e.msgLens()
	mySlot := me % e.slots
	e.sends = e.sends[:0]
	for len(e.acks) < incoming {
		e.acks = append(e.acks, make([]byte, accessHeaderBytes))
	}
	served := 0
	var reqRecv mpi.Request
	var err error
	t0 := c.Wtime()
	post := func() error {
		if served < incoming {
			reqRecv, err = c.Irecv(e.reqBuf, mpi.AnySource, accessReqTag)
			return err
		}
		reqRecv = nil
		return nil
	}
	if err := post(); err != nil {
		return 0, err
	}
	own := 0.0
	last := -1
	for x := range pl.targets {
		if pl.row(x, me)[0] >= 0 {
			last = x
		}
	}
	for x := 0; x <= last; x++ {
		row := pl.row(x, me)
		if row[0] < 0 {
			continue
		}
		// Post every answer's receive before the first request leaves, so
		// no answer ever waits for a receive.
		for j, t := range row {
			if e.replyReq[j], err = c.Irecv(e.replies[j], t, accessReplyTag); err != nil {
				return 0, err
			}
		}
		for j, t := range row {
			m := e.reqMsgs[j]
			binary.LittleEndian.PutUint64(m[0:8], uint64(mySlot))
			binary.LittleEndian.PutUint64(m[8:16], packSeq(e.rep, x, j))
			if e.reqSend[j], err = c.Isend(m, t, accessReqTag); err != nil {
				return 0, err
			}
			e.counts.Sent(len(m))
		}
		// Wait for whatever completes first, the posted request receive
		// (entry 0) or an answer (entry 1+j): one MPI_Waitany per message
		// on the native backend, so the cost per message does not grow
		// with k, as polling each request with Test would.
		waits := e.waits
		waits[0] = reqRecv
		copy(waits[1:], e.replyReq[:k])
		for pending := k; pending > 0; {
			i, st, err := mpi.Waitany(waits)
			if err != nil {
				return 0, err
			}
			switch {
			case i == 0:
				if err := e.serve(st, served); err != nil {
					return 0, err
				}
				served++
				if err := post(); err != nil {
					return 0, err
				}
				waits[0] = reqRecv
			case i > 0:
				if st.Count != replyLen {
					return 0, e.fault(&mpi.AccessFault{Kind: mpi.FaultAnswerLength, Rank: row[i-1], Count: st.Count, Want: replyLen})
				}
				e.counts.Recv(st.Count)
				waits[i] = nil
				pending--
			default:
				return 0, fmt.Errorf("%s access: %d answers pending but no request to wait for", e.op, pending)
			}
		}
		// Every request was answered, so its send is complete.
		if _, err := mpi.Waitall(e.reqSend[:k]); err != nil {
			return 0, err
		}
		if x == last {
			own = c.Wtime() - t0
		}
		if e.validate && e.op == AccessRead {
			if err := e.checkReads(row, mySlot, e.replies); err != nil {
				return 0, err
			}
		}
	}
	for served < incoming {
		st, err := reqRecv.Wait()
		if err != nil {
			return 0, err
		}
		if err := e.serve(st, served); err != nil {
			return 0, err
		}
		served++
		if err := post(); err != nil {
			return 0, err
		}
	}
	if _, err := mpi.Waitall(e.sends); err != nil {
		return 0, err
	}
	if e.validate && e.op == AccessWrite {
		if err := e.checkWrites(); err != nil {
			return 0, err
		}
	}
	e.prepare()
	return own, nil
}

// serve answers the request that completed with st; n is its index among
// the requests served in this repetition.
func (e *accessEngine) serve(st mpi.Status, n int) error {
	reqLen, _ := e.msgLens()
	if st.Count != reqLen {
		return e.fault(&mpi.AccessFault{Kind: mpi.FaultRequestLength, Rank: st.Source, Count: st.Count, Want: reqLen})
	}
	e.counts.Recv(st.Count)
	slot := binary.LittleEndian.Uint64(e.reqBuf[0:8])
	seq := binary.LittleEndian.Uint64(e.reqBuf[8:16])
	if slot >= uint64(e.slots) {
		return e.fault(&mpi.AccessFault{Kind: mpi.FaultSlotRange, Rank: st.Source, Slot: slot, Want: e.slots})
	}
	if e.validate && int(slot) != st.Source%e.slots {
		return e.fault(&mpi.AccessFault{Kind: mpi.FaultSlotOwn, Rank: st.Source, Slot: slot, Want: st.Source % e.slots})
	}
	region := e.mem[int(slot)*e.l : int(slot+1)*e.l]
	var answer []byte
	if e.op == AccessWrite {
		copy(region, e.reqBuf[accessHeaderBytes:])
		e.writers[slot] = writer{src: st.Source, seq: seq, rep: e.rep}
		answer = e.acks[n]
		copy(answer, e.reqBuf[:accessHeaderBytes])
	} else {
		answer = region
	}
	r, err := e.c.Isend(answer, st.Source, accessReplyTag)
	if err != nil {
		return err
	}
	e.sends = append(e.sends, r)
	e.counts.Sent(len(answer))
	return nil
}

// fault is the error of a protocol violation, from either engine; a
// request for another rank's slot is a validation failure.
func (e *accessEngine) fault(f *mpi.AccessFault) error {
	if f.Kind == mpi.FaultSlotOwn {
		return fmt.Errorf("%s access: %w: %v", e.op, ErrValidation, f)
	}
	return fmt.Errorf("%s access: %w", e.op, f)
}

// runKernel runs one repetition's plan with the backend's kernel; it
// counts and validates as run does.
func (e *accessEngine) runKernel(pl *accessPlan) (float64, error) {
	me := e.c.Rank()
	e.rep++
	e.rows = e.rows[:0]
	for x := range pl.targets {
		e.rows = append(e.rows, pl.row(x, me)...)
	}
	incoming := pl.incoming(me)
	own, err := e.runner.Run(mpi.AccessRun{Targets: e.rows, Slot: me % e.slots, Incoming: incoming, Rep: e.rep, CheckSlot: e.validate})
	if err != nil {
		e.close() // it must not run again
		if f, ok := err.(*mpi.AccessFault); ok {
			return 0, e.fault(f)
		}
		return 0, err
	}
	reqLen, replyLen := e.msgLens()
	for x := range pl.targets {
		if pl.row(x, me)[0] < 0 {
			continue
		}
		for range e.k {
			e.counts.Sent(reqLen)
			e.counts.Recv(replyLen)
		}
		if e.validate && e.op == AccessRead {
			if err := e.checkReads(pl.row(x, me), me%e.slots, e.replies[x*e.k:(x+1)*e.k]); err != nil {
				return 0, err
			}
		}
	}
	for _, s := range e.runner.Served() {
		e.counts.Recv(reqLen)
		e.counts.Sent(replyLen)
		if e.op == AccessWrite {
			e.writers[s.Slot] = writer{src: s.Source, seq: s.Seq, rep: e.rep}
		}
	}
	if e.validate && e.op == AccessWrite {
		if err := e.checkWrites(); err != nil {
			return 0, err
		}
	}
	e.prepare()
	return own, nil
}

// checkReads compares the answers of one access with the holders' bytes.
func (e *accessEngine) checkReads(row []int, slot int, replies [][]byte) error {
	for j, t := range row {
		got := replies[j]
		for i := range got {
			if want := memByte(t, slot*e.l+i); got[i] != want {
				return fmt.Errorf("read access: %w: packet %d from rank %d, byte %d is %#x, want %#x",
					ErrValidation, j, t, i, got[i], want)
			}
		}
		clear(got)
	}
	return nil
}

// checkWrites checks that every slot written in this repetition holds the
// last packet addressed to it.
func (e *accessEngine) checkWrites() error {
	want := make([]byte, e.l)
	for s, w := range e.writers {
		if w.rep != e.rep {
			continue
		}
		rep, _, j := unpackSeq(w.seq)
		if rep != e.rep {
			return fmt.Errorf("write access: %w: slot %d holds a packet of repetition %d in repetition %d", ErrValidation, s, rep, e.rep)
		}
		for i := range want {
			want[i] = writeByte(w.src, rep, j, i)
		}
		if got := e.mem[s*e.l : (s+1)*e.l]; !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					return fmt.Errorf("write access: %w: slot %d (written by rank %d), byte %d is %#x, want %#x",
						ErrValidation, s, w.src, i, got[i], want[i])
				}
			}
		}
	}
	return nil
}

// newRand is the random source of a pattern: every rank seeds it the same
// way and draws the same numbers in the same order, so all ranks agree on
// every random instance without communicating.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x636f6d6d636f7374)) // "commcost"
}

// derangement fills perm with a uniformly random permutation of 0..len-1
// without fixed points (rejection sampling: on average e shuffles), or
// with any permutation when self is true. It needs len >= 2 unless self.
func derangement(rng *rand.Rand, perm []int, self bool) {
	for {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		if self {
			return
		}
		ok := true
		for i, v := range perm {
			if v == i {
				ok = false
				break
			}
		}
		if ok {
			return
		}
	}
}

// AccessingRanks is the number of ranks that take part in a k-k-access with
// portion r of p ranks: r p rounded to the nearest integer, at least 1.
func AccessingRanks(r float64, p int) int {
	return min(p, max(1, int(math.Round(r*float64(p)))))
}

// measure times repetitions of the engine with MeasureBatch (max over
// ranks), each on a fresh plan from draw, drawn ahead of the batch that
// runs it (ahead), so drawing is never timed; the plans are drawn in the
// same order whatever the batches. It returns the measurement and the
// number of repetitions run (warm-up included).
func (e *accessEngine) measure(reps Reps, draw func() *accessPlan) (Measurement, int, error) {
	n := 0
	reps.Reduction = ReduceMax
	plans := ahead[*accessPlan]{draw: draw}
	plans.refill()
	bt, batched := e.runner.(mpi.AccessBatcher)
	var ran []*accessPlan
	serial := SerialBatch(e.c, func() (float64, error) {
		pl := ran[0]
		ran = ran[1:]
		return e.run(pl)
	})
	m, err := MeasureBatch(e.c, reps, e.validate, func(b mpi.Batch) error {
		ran = plans.take(b.Reps())
		var err error
		if batched {
			err = e.runBatch(bt, b, ran)
		} else {
			err = serial(b)
		}
		if err != nil {
			return err
		}
		n += b.Reps()
		plans.refill() // the next plan, outside the timed region
		return nil
	})
	return m, n, err
}

// runBatch runs one batch of plans with the backend's batch kernel; it
// counts and validates as runKernel does (a validating engine runs one
// repetition per batch, MeasureBatch's perRep).
func (e *accessEngine) runBatch(bt mpi.AccessBatcher, b mpi.Batch, plans []*accessPlan) error {
	if e.validate && len(plans) != 1 {
		return fmt.Errorf("%s access: a validating batch must hold one repetition, not %d", e.op, len(plans))
	}
	me := e.c.Rank()
	runs := make([]mpi.AccessRun, len(plans))
	for i, pl := range plans {
		rows := make([]int, 0, len(pl.targets)*e.k)
		for x := range pl.targets {
			rows = append(rows, pl.row(x, me)...)
		}
		runs[i] = mpi.AccessRun{Targets: rows, Slot: me % e.slots, Incoming: pl.incoming(me), Rep: e.rep + 1 + uint64(i), CheckSlot: e.validate}
	}
	if err := bt.RunBatch(b, runs); err != nil {
		e.close() // it must not run again
		if f, ok := err.(*mpi.AccessFault); ok {
			return e.fault(f)
		}
		return err
	}
	reqLen, replyLen := e.msgLens()
	for i, pl := range plans {
		e.rep++
		for x := range pl.targets {
			if pl.row(x, me)[0] < 0 {
				continue
			}
			e.counts.add(e.k, reqLen, e.k, replyLen)
			if e.validate && e.op == AccessRead {
				if err := e.checkReads(pl.row(x, me), me%e.slots, e.replies[x*e.k:(x+1)*e.k]); err != nil {
					return err
				}
			}
		}
		e.counts.add(runs[i].Incoming, replyLen, runs[i].Incoming, reqLen)
	}
	if e.validate && e.op == AccessWrite {
		for _, s := range e.runner.Served() {
			e.writers[s.Slot] = writer{src: s.Source, seq: s.Seq, rep: e.rep}
		}
		if err := e.checkWrites(); err != nil {
			return err
		}
	}
	e.prepare()
	return nil
}
