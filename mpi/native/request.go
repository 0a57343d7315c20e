package native

// #include "shim.h"
import "C"

import (
	"runtime"
	"sync"

	"github.com/commcost/commcost/mpi"
)

// request is an outstanding MPI_Isend or MPI_Irecv. From posting until
// completion it holds its buffer pinned and is itself held by live, so
// neither the buffer nor the pinner can be collected while MPI may still use
// the memory, whatever the caller does with the request. (A runtime.Pinner
// collected with pinned objects is a fatal error, and an unpinned buffer
// collected under a pending receive would be overwritten memory.)
type request struct {
	h    C.MPI_Request
	op   string // "MPI_Isend" or "MPI_Irecv"
	recv bool
	buf  []byte
	pin  runtime.Pinner
	done bool
	st   mpi.Status
	err  error
}

// live holds every request between posting and completion.
var live struct {
	sync.Mutex
	m map[*request]struct{}
}

func track(r *request) {
	live.Lock()
	if live.m == nil {
		live.m = make(map[*request]struct{})
	}
	live.m[r] = struct{}{}
	live.Unlock()
}

// outstanding is the number of posted, not yet completed requests.
func outstanding() int {
	live.Lock()
	defer live.Unlock()
	return len(live.m)
}

// finish records completion by op (MPI_Wait or MPI_Test) and releases the
// buffer.
func (r *request) finish(op string, s C.cc_status) {
	r.done = true
	r.h = C.cc_request_null()
	if r.recv {
		r.st = mpi.Status{Source: int(s.source), Tag: int(s.tag), Count: int(s.count)}
	}
	// A send's status carries nothing (MPI leaves its fields undefined).
	if s.rc != 0 {
		r.err = newError(op, s.rc)
	}
	r.pin.Unpin()
	r.buf = nil
	live.Lock()
	delete(live.m, r)
	live.Unlock()
}

func waitOp(op string) string { return "MPI_Wait(" + op + ")" }

// Wait is MPI_Wait. After completion it returns the same result again.
func (r *request) Wait() (mpi.Status, error) {
	if r.done {
		return r.st, r.err
	}
	op := waitOp(r.op)
	if err := enter(op); err != nil {
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

// WaitanyOf implements mpi.AnyWaiter with one MPI_Waitany over reqs (nil
// entries are passed as MPI_REQUEST_NULL, which MPI skips). ok is false if
// some request is not a native one.
func (r *request) WaitanyOf(reqs []mpi.Request) (int, mpi.Status, error, bool) {
	handles := make([]C.MPI_Request, len(reqs))
	for i, q := range reqs {
		handles[i] = C.cc_request_null()
		if q == nil {
			continue
		}
		nr, ok := q.(*request)
		if !ok {
			return 0, mpi.Status{}, nil, false
		}
		if nr.done {
			return i, nr.st, nr.err, true
		}
		handles[i] = nr.h
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
	q.finish(waitOp(q.op), res.st)
	return i, q.st, q.err, true
}

// Test is MPI_Test.
func (r *request) Test() (bool, mpi.Status, error) {
	if r.done {
		return true, r.st, r.err
	}
	op := "MPI_Test(" + r.op + ")"
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

func (c *Comm) post(op string, buf []byte, peer, tag int, recv bool) (mpi.Request, error) {
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := checkCount(op, "buffer", len(buf)); err != nil {
		return nil, err
	}
	if err := c.checkPeer(op, peer, recv); err != nil {
		return nil, err
	}
	r := &request{op: op, recv: recv}
	if len(buf) > 0 {
		// Pinning keeps the memory in place and, with live, reachable;
		// cgo's rules require it since C keeps the address past the call.
		r.pin.Pin(&buf[0])
		r.buf = buf
	}
	if err := enter(op); err != nil {
		r.pin.Unpin()
		return nil, err
	}
	var res C.cc_req_result
	if recv {
		res = C.cc_irecv(c.h, rptr(buf), C.int(len(buf)), C.int(peer), C.int(tag))
	} else {
		res = C.cc_isend(c.h, ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag))
	}
	leave()
	if res.rc != 0 {
		r.pin.Unpin()
		return nil, newError(op, res.rc)
	}
	r.h = res.req
	track(r)
	return r, nil
}

// Isend is MPI_Isend. buf must not be modified until the request completes.
func (c *Comm) Isend(buf []byte, dest, tag int) (mpi.Request, error) {
	return c.post("MPI_Isend", buf, dest, tag, false)
}

// Irecv is MPI_Irecv. buf must not be read or written until the request
// completes.
func (c *Comm) Irecv(buf []byte, source, tag int) (mpi.Request, error) {
	return c.post("MPI_Irecv", buf, source, tag, true)
}
