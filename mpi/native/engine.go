package native

// #include "engine.h"
// #cgo noescape cc_eng_next
// #cgo nocallback cc_eng_next
// #cgo noescape cc_eng_send
// #cgo nocallback cc_eng_send
// #cgo noescape cc_eng_recv_body
// #cgo nocallback cc_eng_recv_body
// #cgo noescape cc_eng_flush
// #cgo nocallback cc_eng_flush
// #cgo noescape cc_eng_drain
// #cgo nocallback cc_eng_drain
// #cgo noescape cc_eng_reap
// #cgo nocallback cc_eng_reap
// #cgo noescape cc_eng_barrier
// #cgo nocallback cc_eng_barrier
// #cgo noescape cc_eng_dissemination
// #cgo nocallback cc_eng_dissemination
import "C"

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

var (
	_ mpi.EngineKernel      = (*Comm)(nil)
	_ mpi.EngineReplier     = (*engine)(nil)
	_ mpi.EngineSendTracker = (*engine)(nil)
)

// engine is mpi.Engine over engine.c: one cgo crossing per message sent
// and per message received (two for a body over InlineBytes), none per
// poll, and a barrier that runs entirely in C unless a message for the
// caller arrives meanwhile.
type engine struct {
	c    *Comm
	e    *C.cc_eng
	spec mpi.EngineSpec
	// pinned are the Go bodies C may read, by token: a body MPI is
	// sending, or a reply body (SetReply), which holds one reference for
	// its table entry and one per answer sent from it apart that has not
	// completed.
	pinned map[int64]*pinRef
	// sending are the pinned bodies with sends not yet completed (the
	// pinned entries whose sends > 0), for Sending.
	sending map[int64]*pinRef
	token   int64
	done    [64]C.longlong
	// replies views the engine's table of answers (C memory, written
	// here without a crossing); replyTok is the token of each key's body,
	// 0 for none.
	replies  []C.cc_eng_reply
	replyTok []int64
	// batch queues the messages with inline bodies, Send's records for
	// the next call into C (cc_eng_flush's format): one crossing carries
	// them and the wait that follows.
	batch []byte
}

// pinRef is a pinned body and the references to it: refs counts its
// table entry (a reply body) and its sends, sends only the sends that
// have not completed; [lo, hi) is the memory MPI may read.
type pinRef struct {
	h      *holder
	refs   int
	sends  int
	lo, hi uintptr
}

// pin pins body under a new token, with refs references of which sends
// are sends in flight.
func (x *engine) pin(body []byte, refs, sends int) int64 {
	x.token++
	p := &pinRef{h: hold(body), refs: refs}
	if len(body) > 0 {
		p.lo = uintptr(unsafe.Pointer(&body[0]))
		p.hi = p.lo + uintptr(len(body))
	}
	x.pinned[x.token] = p
	x.addSends(x.token, p, sends)
	return x.token
}

// addSends records n more (or, negative, fewer) sends in flight from the
// body of token tok.
func (x *engine) addSends(tok int64, p *pinRef, n int) {
	if n == 0 {
		return
	}
	p.sends += n
	if p.sends > 0 {
		x.sending[tok] = p
	} else {
		delete(x.sending, tok)
	}
}

// NewEngine implements mpi.EngineKernel.
func (c *Comm) NewEngine(spec mpi.EngineSpec) (mpi.Engine, error) {
	const op = "NewEngine"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if spec.Tag < 0 || spec.HeadBytes < 0 || spec.InlineBytes < 0 || spec.HeadBytes+spec.InlineBytes > 1<<24 {
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("tag %d, head %d bytes, inline %d bytes", spec.Tag, spec.HeadBytes, spec.InlineBytes))
	}
	if r := spec.Reply; r != nil && (r.KindOffset < 0 || r.KindOffset >= spec.HeadBytes || r.KeyOffset < 0 || r.KeyOffset+4 > spec.HeadBytes ||
		len(r.Head) != spec.HeadBytes || r.Served == nil) {
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("reply: kind at byte %d, key at byte %d, head of %d bytes (want %d), Served set %t",
			r.KindOffset, r.KeyOffset, len(r.Head), spec.HeadBytes, r.Served != nil))
	}
	nb := len(spec.Barrier)
	ids, need, pid, prank := make([]C.int, nb+1), make([]C.int, nb+1), make([]C.int, nb+1), make([]C.int, nb+1)
	koff := make([]C.int, nb+1)
	kid, krank := []C.int{0}, []C.int{0}
	kid, krank = kid[:0], krank[:0]
	for i, n := range spec.Barrier {
		if len(n.Kids) != len(n.KidRanks) || n.Need < 1 || n.ParentRank < 0 || n.ParentRank >= c.size {
			return nil, classError(op, mpi.ErrArg, fmt.Sprintf("barrier node %d: %d kids with %d ranks, need %d, parent rank %d", n.ID, len(n.Kids), len(n.KidRanks), n.Need, n.ParentRank))
		}
		ids[i], need[i], pid[i], prank[i] = C.int(n.ID), C.int(n.Need), C.int(n.Parent), C.int(n.ParentRank)
		koff[i] = C.int(len(kid))
		for k := range n.Kids {
			if n.KidRanks[k] < 0 || n.KidRanks[k] >= c.size {
				return nil, classError(op, mpi.ErrRank, fmt.Sprintf("barrier node %d: kid rank %d", n.ID, n.KidRanks[k]))
			}
			kid = append(kid, C.int(n.Kids[k]))
			krank = append(krank, C.int(n.KidRanks[k]))
		}
	}
	koff[nb] = C.int(len(kid))
	kid, krank = append(kid, 0), append(krank, 0) // never empty: &kid[0] below
	if err := enter(op); err != nil {
		return nil, err
	}
	e := C.cc_eng_new(c.h, C.int(spec.Tag), C.int(spec.HeadBytes), C.int(spec.InlineBytes), C.int(c.rank), C.int(c.size), C.int(nb),
		&ids[0], &need[0], &pid[0], &prank[0], &koff[0], &kid[0], &krank[0])
	leave()
	if e == nil {
		return nil, classError(op, mpi.ErrOther, "out of memory for the engine")
	}
	if r := spec.Reply; r != nil {
		// No MPI call: no guard.
		if rc := C.cc_eng_replies(e, C.int(r.KindOffset), C.int(r.Request), C.int(r.KeyOffset), (*C.char)(ptr(r.Head))); rc != 0 {
			C.cc_eng_free(e)
			return nil, newError(op, rc)
		}
	}
	return &engine{c: c, e: e, spec: spec, pinned: map[int64]*pinRef{}, sending: map[int64]*pinRef{}}, nil
}

func (x *engine) usable(op string) error {
	if x.e == nil {
		return classError(op, mpi.ErrOther, "the engine is closed or broken")
	}
	return x.c.usable(op)
}

// fail gives up the engine after an MPI error: its C side keeps what MPI
// may still hold, and so do the pinned bodies (never unpinned).
func (x *engine) fail(op string, rc C.int) error {
	x.e = nil
	return newError(op, rc)
}

// Send implements mpi.Engine.
func (x *engine) Send(head, body []byte, dest int) error {
	const op = "Engine.Send"
	if err := x.usable(op); err != nil {
		return err
	}
	if len(head) != x.spec.HeadBytes {
		return classError(op, mpi.ErrArg, fmt.Sprintf("head of %d bytes, the engine's is %d", len(head), x.spec.HeadBytes))
	}
	if dest < 0 || dest >= x.c.size {
		return classError(op, mpi.ErrRank, fmt.Sprintf("invalid rank %d, communicator size %d", dest, x.c.size))
	}
	if err := checkCount(op, "body", len(body)); err != nil {
		return err
	}
	if len(body) <= x.spec.InlineBytes {
		var w [8]byte
		binary.LittleEndian.PutUint32(w[0:], uint32(dest))
		binary.LittleEndian.PutUint32(w[4:], uint32(len(body)))
		x.batch = append(append(append(x.batch, w[:]...), head...), body...)
		return nil
	}
	// Queued messages go first: messages between two ranks stay in order.
	if err := x.Flush(); err != nil {
		return err
	}
	// MPI sends the body from Go memory after the call: pinned until the
	// engine reports the send complete.
	tok := x.pin(body, 1, 1)
	if err := enter(op); err != nil {
		x.sent(tok)
		return err
	}
	rc := C.cc_eng_send(x.e, C.int(dest), (*C.char)(ptr(head)), (*C.char)(ptr(body)), C.int(len(body)), C.int(x.spec.InlineBytes), C.longlong(tok))
	leave()
	if rc != 0 {
		return x.fail(op, rc)
	}
	return nil
}

// takeBatch hands the queued messages to the C call being made (which
// copies them before it returns) and empties the queue.
func (x *engine) takeBatch() (*C.char, C.int) {
	if len(x.batch) == 0 {
		return nil, 0
	}
	b := (*C.char)(unsafe.Pointer(&x.batch[0]))
	n := C.int(len(x.batch))
	x.batch = x.batch[:0]
	return b, n
}

// Flush implements mpi.Engine: it sends the queued messages.
func (x *engine) Flush() error {
	const op = "Engine.Flush"
	if len(x.batch) == 0 {
		return nil
	}
	if err := x.usable(op); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	b, n := x.takeBatch()
	rc := C.cc_eng_flush(x.e, b, n)
	leave()
	if rc != 0 {
		return x.fail(op, rc)
	}
	return nil
}

// unpin drops the references of the sends that completed.
func (x *engine) unpin(n C.int) {
	for _, t := range x.done[:n] {
		x.sent(int64(t))
	}
}

// sent drops the reference of one completed (or never posted) send from
// the body of token tok.
func (x *engine) sent(tok int64) {
	if p := x.pinned[tok]; p != nil {
		x.addSends(tok, p, -1)
	}
	x.unref(tok)
}

// Sending implements mpi.EngineSendTracker. Sends complete in MPI without
// the engine's knowledge until it tests them: a body in the set of
// unfinished sends costs one crossing and a Testsome, any other nothing.
func (x *engine) Sending(body []byte) (bool, error) {
	const op = "Engine.Sending"
	if len(body) == 0 || !x.overlapsSend(body) {
		return false, nil
	}
	if err := x.usable(op); err != nil {
		return true, err
	}
	for {
		if err := enter(op); err != nil {
			return true, err
		}
		ev := C.cc_eng_reap(x.e, &x.done[0], C.int(len(x.done)))
		leave()
		x.unpin(ev.ndone)
		if ev.rc != 0 {
			return true, x.fail(op, ev.rc)
		}
		if int(ev.ndone) < len(x.done) {
			return x.overlapsSend(body), nil
		}
	}
}

// overlapsSend reports whether an unfinished send reads memory of body.
func (x *engine) overlapsSend(body []byte) bool {
	lo := uintptr(unsafe.Pointer(&body[0]))
	hi := lo + uintptr(len(body))
	for _, p := range x.sending {
		if p.lo < hi && lo < p.hi {
			return true
		}
	}
	return false
}

// unref drops one reference to the body of token tok, and unpins it with
// the last.
func (x *engine) unref(tok int64) {
	p := x.pinned[tok]
	if p == nil {
		return
	}
	if p.refs--; p.refs <= 0 {
		p.h.release()
		delete(x.pinned, tok)
	}
}

// SetReply implements mpi.EngineReplier.
func (x *engine) SetReply(key int, body []byte) error {
	const op = "Engine.SetReply"
	if err := x.usable(op); err != nil {
		return err
	}
	if x.spec.Reply == nil {
		return classError(op, mpi.ErrArg, "the engine was made without replies (EngineSpec.Reply)")
	}
	if key < 0 || key > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("key %d outside [0, %d]", key, mpi.MaxCount))
	}
	if err := checkCount(op, "body", len(body)); err != nil {
		return err
	}
	if key >= len(x.replies) {
		n := max(key+1, 2*len(x.replies), 64)
		// No MPI call: no guard. realloc may move the table.
		if rc := C.cc_eng_reply_grow(x.e, C.int(n)); rc != 0 {
			return newError(op, rc)
		}
		x.replies = unsafe.Slice(x.e.r_tab, n)
		x.replyTok = append(x.replyTok, make([]int64, n-len(x.replyTok))...)
	}
	r := &x.replies[key]
	var p *C.char
	if len(body) > 0 {
		p = (*C.char)(unsafe.Pointer(&body[0]))
	}
	if old := x.replyTok[key]; old != 0 {
		if r.body == p && int(r.len) == len(body) {
			// The body held already (the key's, cleared or not: a
			// registration holds a buffer, so no other has its address).
			r.on = 1
			return nil
		}
		defer x.unref(old)
	}
	// C keeps the address past the call: pinned (cgo's rules) until the
	// entry is replaced and the answers sent from it have left. Pinning
	// and unpinning cost about 80 ns (runtime.Pinner, the holders' lock),
	// which is why ClearReply keeps the body.
	tok := x.pin(body, 1, 0)
	x.replyTok[key] = tok
	*r = C.cc_eng_reply{body: p, len: C.int(len(body)), on: 1, tok: C.longlong(tok)}
	return nil
}

// ClearReply implements mpi.EngineReplier. It turns the entry off and
// keeps its body held until the key's next SetReply (which turns it on
// again for free if the body is the same) or Close: at most one body a key
// outlives its use, and clearing costs one store.
func (x *engine) ClearReply(key int) {
	if x.e == nil || key < 0 || key >= len(x.replyTok) || x.replyTok[key] == 0 {
		return
	}
	x.replies[key].on = 0
}

// dropReplies releases every key's body (Close: every send has left).
func (x *engine) dropReplies() {
	for key, tok := range x.replyTok {
		if tok != 0 {
			x.replies[key] = C.cc_eng_reply{}
			x.unref(tok)
			x.replyTok[key] = 0
		}
	}
}

// served hands the requests the engine answered since the last call to
// the caller, oldest first; an answer whose body went apart holds a
// reference to it until its send completes.
func (x *engine) served() {
	n := int(x.e.nserved)
	if n == 0 {
		return
	}
	log := unsafe.Slice(x.e.served, 2*n)
	x.e.nserved = 0
	for i := 0; i < n; i++ {
		key, src := int(log[2*i]), int(log[2*i+1])
		bytes := int(x.replies[key].len)
		if bytes > x.spec.InlineBytes {
			tok := x.replyTok[key]
			p := x.pinned[tok]
			p.refs++
			x.addSends(tok, p, 1)
		}
		x.spec.Reply.Served(key, src, bytes)
	}
}

// Next implements mpi.Engine.
func (x *engine) Next(block bool) (mpi.EngineMessage, bool, error) {
	const op = "Engine.Next"
	if err := x.usable(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	if err := enter(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	b, n := x.takeBatch()
	ev := C.cc_eng_next(x.e, b, n, cbool(block), &x.done[0], C.int(len(x.done)))
	leave()
	return x.event(op, ev)
}

// event turns what the engine returned into a message, after the answers
// it sent (which came first).
func (x *engine) event(op string, ev C.cc_eng_event) (mpi.EngineMessage, bool, error) {
	x.served()
	x.unpin(ev.ndone)
	if ev.rc != 0 {
		return mpi.EngineMessage{}, false, x.fail(op, ev.rc)
	}
	if ev.what != 1 {
		return mpi.EngineMessage{}, false, nil
	}
	head := C.CC_ENG_PREFIX
	raw := unsafe.Slice((*byte)(unsafe.Pointer(x.e.rbuf)), int(ev.count))
	m := mpi.EngineMessage{Source: int(ev.source), Head: raw[head : head+x.spec.HeadBytes]}
	if inline := raw[head+x.spec.HeadBytes:]; len(inline) > 0 {
		m.Body = x.alloc(len(inline))
		copy(m.Body, inline)
	}
	if sep := int(ev.sep); sep > 0 {
		m.Body = x.alloc(sep)
		if err := enter(op); err != nil {
			return mpi.EngineMessage{}, false, err
		}
		rc := C.cc_eng_recv_body(x.e, ev.source, (*C.char)(rptr(m.Body)), C.int(sep))
		leave()
		if rc != 0 {
			return mpi.EngineMessage{}, false, x.fail(op, rc)
		}
	}
	return m, true, nil
}

func (x *engine) alloc(n int) []byte {
	if x.spec.Alloc != nil {
		if b := x.spec.Alloc(n); len(b) == n {
			return b
		}
	}
	return make([]byte, n)
}

// Barrier implements mpi.Engine.
func (x *engine) Barrier(a, b int64) (mpi.EngineMessage, bool, error) {
	const op = "Engine.Barrier"
	if err := x.usable(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	if len(x.spec.Barrier) == 0 {
		return mpi.EngineMessage{}, false, classError(op, mpi.ErrArg, "the engine was made without a barrier")
	}
	if x.e.b_done != x.e.b_epoch {
		return mpi.EngineMessage{}, false, classError(op, mpi.ErrOther, "the previous barrier has not completed")
	}
	if err := enter(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	bp, n := x.takeBatch()
	ev := C.cc_eng_barrier(x.e, bp, n, C.longlong(a), C.longlong(b), &x.done[0], C.int(len(x.done)))
	leave()
	return x.event(op, ev)
}

// Dissemination implements mpi.Engine.
func (x *engine) Dissemination() (mpi.EngineMessage, bool, error) {
	const op = "Engine.Dissemination"
	if err := x.usable(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	if x.e.d_done != x.e.d_epoch {
		return mpi.EngineMessage{}, false, classError(op, mpi.ErrOther, "the previous barrier has not completed")
	}
	if err := enter(op); err != nil {
		return mpi.EngineMessage{}, false, err
	}
	b, n := x.takeBatch()
	ev := C.cc_eng_dissemination(x.e, b, n, &x.done[0], C.int(len(x.done)))
	leave()
	return x.event(op, ev)
}

// BarrierDone implements mpi.Engine.
func (x *engine) BarrierDone() (int64, int64, bool) {
	if x.e == nil || x.e.b_done != x.e.b_epoch {
		return 0, 0, false
	}
	return int64(x.e.b_res[0]), int64(x.e.b_res[1]), true
}

// DisseminationDone implements mpi.Engine.
func (x *engine) DisseminationDone() bool {
	return x.e != nil && x.e.d_done == x.e.d_epoch
}

// Close implements mpi.Engine: it waits for the sends and frees the engine.
func (x *engine) Close() error {
	const op = "Engine.Close"
	if err := x.usable(op); err != nil {
		return err
	}
	if err := x.Flush(); err != nil {
		return err
	}
	for {
		if err := enter(op); err != nil {
			return err
		}
		ev := C.cc_eng_drain(x.e, &x.done[0], C.int(len(x.done)))
		leave()
		x.unpin(ev.ndone)
		if ev.rc != 0 {
			return x.fail(op, ev.rc)
		}
		if ev.ndone == 0 {
			break
		}
	}
	// Every send has completed: the reply bodies are only the table's.
	x.dropReplies()
	// Freeing cancels the engine's posted receives: an MPI call.
	if err := enter(op); err != nil {
		return err
	}
	C.cc_eng_free(x.e)
	leave()
	x.e = nil
	return nil
}

// setEngineYield tells the C engine whether a blocking wait polls and
// yields the processor (more ranks than cores under an MPI that spins
// without yielding, yield.go) instead of blocking in MPI_Wait on its
// oldest posted receive.
func setEngineYield(y bool) {
	v := C.int(0)
	if y {
		v = 1
	}
	C.cc_eng_yield_idle = v
}
