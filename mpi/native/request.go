package native

// #include "shim.h"
// #cgo noescape cc_waitany
// #cgo nocallback cc_waitany
import "C"

import (
	"runtime"
	"sync"

	"github.com/commcost/commcost/mpi"
)

// reqKind is what posted a request.
type reqKind uint8

const (
	kindSend reqKind = iota // MPI_Isend
	kindRecv                // MPI_Irecv
)

// The operation names of errors, as constants so that no call on the
// request path builds a string.
func (k reqKind) postOp() string {
	if k == kindRecv {
		return "MPI_Irecv"
	}
	return "MPI_Isend"
}

func (k reqKind) waitOp() string {
	if k == kindRecv {
		return "MPI_Wait(MPI_Irecv)"
	}
	return "MPI_Wait(MPI_Isend)"
}

func (k reqKind) testOp() string {
	if k == kindRecv {
		return "MPI_Test(MPI_Irecv)"
	}
	return "MPI_Test(MPI_Isend)"
}

// nullRequest is MPI_REQUEST_NULL, read once: in Open MPI it is the address
// of a library object, fixed once the library is loaded; in MPICH a
// constant. Reading it per call was a cgo crossing per request.
var nullRequest = C.cc_request_null()

// request is an outstanding MPI_Isend or MPI_Irecv. From posting until
// completion it holds a holder, which keeps the buffer pinned and reachable
// so neither can be collected while MPI may still use the memory, whatever
// the caller does with the request.
type request struct {
	h    C.MPI_Request
	kind reqKind
	done bool
	peer int     // the rank of the send or receive; mpi.AnySource for any
	hold *holder // nil once complete
	st   mpi.Status
	err  error
}

// holder pins one posted buffer. Holders are recycled rather than made per
// request: a fresh runtime.Pinner costs an allocation and a SetFinalizer on
// its first Pin, which with a live-request map made a posted request cost
// ten times what MPI itself takes (BenchmarkSelfRoundTrip). A recycled
// Pinner keeps (or takes back from the runtime's per-P cache) its internal
// state, so pinning is then only the pin itself.
type holder struct {
	pin   runtime.Pinner
	buf   []byte
	inUse bool // guarded by holders
}

// holders is every holder ever made (which keeps the in-use ones reachable
// after their request is dropped: a runtime.Pinner collected with pinned
// objects is a fatal error, and an unpinned buffer collected under a
// pending receive would be overwritten memory) and the free ones among
// them. The number in use is the number of outstanding requests.
var holders struct {
	sync.Mutex
	all  []*holder
	free []*holder
}

// hold pins buf (if not empty) in a free holder.
func hold(buf []byte) *holder {
	holders.Lock()
	var h *holder
	if n := len(holders.free); n > 0 {
		h = holders.free[n-1]
		holders.free = holders.free[:n-1]
	} else {
		h = new(holder)
		holders.all = append(holders.all, h)
	}
	h.inUse = true
	holders.Unlock()
	if len(buf) > 0 {
		// cgo's rules require pinning since C keeps the address past the
		// call.
		h.pin.Pin(&buf[0])
		h.buf = buf
	}
	return h
}

// release unpins h's buffer and returns h to the free list. Releasing a
// holder twice (one request completed twice, which MPI forbids) would hand
// one Pinner to two live requests and unpin a buffer MPI still uses, so it
// panics instead.
func (h *holder) release() {
	holders.Lock()
	defer holders.Unlock()
	if !h.inUse {
		panic("native: a request was completed twice (from two goroutines at once?)")
	}
	h.inUse = false
	if h.buf != nil {
		h.pin.Unpin()
		h.buf = nil
	}
	holders.free = append(holders.free, h)
}

// outstanding is the number of posted, not yet completed requests.
func outstanding() int {
	holders.Lock()
	defer holders.Unlock()
	return len(holders.all) - len(holders.free)
}

// finish records completion by op (MPI_Wait or MPI_Test) and releases the
// buffer.
func (r *request) finish(op string, s C.cc_status) {
	r.done = true
	r.h = nullRequest
	if r.kind == kindRecv {
		r.st = mpi.Status{Source: int(s.source), Tag: int(s.tag), Count: int(s.count)}
	}
	// A send's status carries nothing (MPI leaves its fields undefined).
	if s.rc != 0 {
		r.err = newError(op, s.rc)
	}
	r.hold.release()
	r.hold = nil
}

// Wait is MPI_Wait. After completion it returns the same result again.
func (r *request) Wait() (mpi.Status, error) {
	if r.done {
		return r.st, r.err
	}
	op := r.kind.waitOp()
	if err := enterPeer(op, r.peer); err != nil {
		return mpi.Status{}, err
	}
	s := C.cc_wait(r.h)
	leave()
	if s.rc == C.CC_ERR_WRONG_THREAD {
		// Refused before MPI saw it: the request is still in flight.
		return mpi.Status{}, wrongThread(op)
	}
	r.finish(op, s)
	return r.st, r.err
}

// waitanyScratch is how many handles WaitanyOf passes from the stack
// (cc_waitany is declared noescape); longer lists are allocated.
const waitanyScratch = 32

// WaitanyOf implements mpi.AnyWaiter with one MPI_Waitany over reqs (nil
// entries are passed as MPI_REQUEST_NULL, which MPI skips). ok is false if
// some request is not a native one.
func (r *request) WaitanyOf(reqs []mpi.Request) (int, mpi.Status, error, bool) {
	var scratch [waitanyScratch]C.MPI_Request
	handles := scratch[:0]
	if len(reqs) > waitanyScratch {
		handles = make([]C.MPI_Request, 0, len(reqs))
	}
	for i, q := range reqs {
		h := nullRequest
		if q != nil {
			nr, ok := q.(*request)
			if !ok {
				return 0, mpi.Status{}, nil, false
			}
			if nr.done {
				return i, nr.st, nr.err, true
			}
			h = nr.h
		}
		handles = append(handles, h)
	}
	const op = "MPI_Waitany"
	if len(reqs) > mpi.MaxCount {
		return -1, mpi.Status{}, classError(op, mpi.ErrCount, "more requests than a C int counts"), true
	}
	if err := enter(op); err != nil {
		return -1, mpi.Status{}, err, true
	}
	res := C.cc_waitany(C.int(len(handles)), &handles[0])
	leave()
	if res.rc == C.CC_ERR_WRONG_THREAD {
		return -1, mpi.Status{}, wrongThread(op), true
	}
	i := int(res.index)
	if i < 0 || i >= len(reqs) || reqs[i] == nil {
		if res.rc != 0 {
			return -1, mpi.Status{}, newError(op, res.rc), true
		}
		return -1, mpi.Status{}, nil, true
	}
	q := reqs[i].(*request) // checked above
	q.finish(q.kind.waitOp(), res.st)
	return i, q.st, q.err, true
}

// Test is MPI_Test.
func (r *request) Test() (bool, mpi.Status, error) {
	if r.done {
		return true, r.st, r.err
	}
	op := r.kind.testOp()
	if err := enter(op); err != nil {
		return false, mpi.Status{}, err
	}
	t := C.cc_test(r.h)
	leave()
	if t.flag == 0 {
		if t.rc != 0 {
			return false, mpi.Status{}, newError(op, t.rc)
		}
		return false, mpi.Status{}, nil
	}
	r.finish(op, t.st)
	return true, r.st, r.err
}

func (c *Comm) post(kind reqKind, buf []byte, peer, tag int) (mpi.Request, error) {
	op := kind.postOp()
	recv := kind == kindRecv
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := checkCount(op, "buffer", len(buf)); err != nil {
		return nil, err
	}
	if err := c.checkPeer(op, peer, recv); err != nil {
		return nil, err
	}
	if err := enter(op); err != nil {
		return nil, err
	}
	h := hold(buf)
	var res C.cc_req_result
	if recv {
		res = C.cc_irecv(c.h, rptr(buf), C.int(len(buf)), C.int(peer), C.int(tag))
	} else {
		res = C.cc_isend(c.h, ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag))
	}
	leave()
	if res.rc != 0 {
		h.release()
		return nil, newError(op, res.rc)
	}
	return &request{h: res.req, kind: kind, peer: peer, hold: h}, nil
}

// Isend is MPI_Isend. buf must not be modified until the request completes.
func (c *Comm) Isend(buf []byte, dest, tag int) (mpi.Request, error) {
	return c.post(kindSend, buf, dest, tag)
}

// Irecv is MPI_Irecv. buf must not be read or written until the request
// completes.
func (c *Comm) Irecv(buf []byte, source, tag int) (mpi.Request, error) {
	return c.post(kindRecv, buf, source, tag)
}
