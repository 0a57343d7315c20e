package native

// #include <stdlib.h>
// #include "harness.h"
// #cgo noescape cc_reduce_local_batch
// #cgo nocallback cc_reduce_local_batch
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// Typed reductions on byte buffers (mpi.Reducer) and MPI-3's non-blocking
// collectives (mpi.NonBlockingCollectives). Arguments are checked here as
// for the blocking collectives (collective.go) before any communication.

var (
	_ mpi.Reducer                = (*Comm)(nil)
	_ mpi.LocalReduceKernels     = (*Comm)(nil)
	_ mpi.NonBlockingCollectives = (*Comm)(nil)
	_ mpi.Provider               = (*Comm)(nil)
)

// missingMPI3 are the features that need a library built for MPI-3.
var missingMPI3 = []mpi.Feature{mpi.FeatureNonBlocking}

// Missing implements mpi.Provider: the features of missingMPI3 need a
// library built for MPI-3.
func (c *Comm) Missing(f mpi.Feature) error {
	if slices.Contains(missingMPI3, f) && C.cc_mpi3() == 0 {
		return fmt.Errorf("the MPI library (%s, MPI %s) provides no %s", firstLine(LibraryVersion()), mpiVersion(), f)
	}
	return nil
}

var dtypes = [...]C.int{mpi.Float32: C.CC_FLOAT32, mpi.Float64: C.CC_FLOAT64, mpi.Int32: C.CC_INT32, mpi.Int64: C.CC_INT64, mpi.Int8: C.CC_INT8}

// typedArgs checks a typed reduction's element type, operation and buffers
// and converts the first two for C.
func typedArgs(op string, dt mpi.Datatype, rop mpi.Op, bufs ...[]byte) (C.int, C.int, error) {
	if err := mpi.CheckTyped(op, dt, rop, bufs...); err != nil {
		e := err.(*mpi.Error)
		return 0, 0, classError(op, e.Class, e.Msg[len(mpi.ClassName(e.Class))+2:])
	}
	var cop C.int
	switch rop {
	case mpi.OpMin:
		cop = C.CC_MIN
	case mpi.OpMax:
		cop = C.CC_MAX
	default:
		cop = C.CC_SUM
	}
	return dtypes[dt], cop, nil
}

// inPlace says whether send and recv are the same buffer (MPI_IN_PLACE),
// and refuses other overlaps.
func inPlace(op string, send, recv []byte) (C.int, error) {
	if len(send) == 0 || len(recv) == 0 {
		return 0, nil
	}
	s, r := uintptr(unsafe.Pointer(&send[0])), uintptr(unsafe.Pointer(&recv[0]))
	switch {
	case s == r:
		return 1, nil
	case s < r+uintptr(len(recv)) && r < s+uintptr(len(send)):
		return 0, classError(op, mpi.ErrBuffer, "send and recv overlap (pass the same slice to reduce in place)")
	}
	return 0, nil
}

// reduceArgs checks a Reduce or Allreduce (all) and returns its C
// arguments.
func (c *Comm) reduceArgs(op string, send, recv []byte, dt mpi.Datatype, rop mpi.Op, all bool, root int) (cdt, cop, place C.int, rbuf []byte, err error) {
	if err = c.collective(op, !all, root, "send", len(send)); err != nil {
		return
	}
	if cdt, cop, err = typedArgs(op, dt, rop, send, recv); err != nil {
		return
	}
	if all || c.rank == root {
		if err = needBytes(op, "recv", len(recv), len(send), "len(send)"); err != nil {
			return
		}
		place, err = inPlace(op, send, recv)
		rbuf = recv
	}
	return
}

// Reduce implements mpi.Reducer: MPI_Reduce on len(send)/dt.Size()
// elements; recv is written at root only.
func (c *Comm) Reduce(send, recv []byte, dt mpi.Datatype, rop mpi.Op, root int) error {
	const op = "MPI_Reduce"
	cdt, cop, place, rbuf, err := c.reduceArgs(op, send, recv, dt, rop, false, root)
	if err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_reduce(c.h, ptr(send), rptr(rbuf), C.int(len(send)/dt.Size()), cdt, cop, C.int(root), place)
	leave()
	return c.result(op, rc)
}

// Allreduce implements mpi.Reducer: MPI_Allreduce.
func (c *Comm) Allreduce(send, recv []byte, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Allreduce"
	cdt, cop, place, _, err := c.reduceArgs(op, send, recv, dt, rop, true, 0)
	if err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_allreduce(c.h, ptr(send), rptr(recv), C.int(len(send)/dt.Size()), cdt, cop, place)
	leave()
	return c.result(op, rc)
}

// ReduceScatterBlock implements mpi.Reducer: MPI_Reduce_scatter_block of
// len(recv)/dt.Size() elements per rank.
func (c *Comm) ReduceScatterBlock(send, recv []byte, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Reduce_scatter_block"
	if err := c.collective(op, false, 0, "recv", len(recv)); err != nil {
		return err
	}
	cdt, cop, err := typedArgs(op, dt, rop, send, recv)
	if err != nil {
		return err
	}
	if err := needBytes(op, "send", len(send), c.size*len(recv), "Size()*len(recv)"); err != nil {
		return err
	}
	if _, err := inPlace(op, send, recv); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_reduce_scatter_block(c.h, ptr(send), rptr(recv), C.int(len(recv)/dt.Size()), cdt, cop)
	leave()
	return c.result(op, rc)
}

// ReduceScatter implements mpi.Reducer: MPI_Reduce_scatter with counts in
// elements.
func (c *Comm) ReduceScatter(send, recv []byte, counts []int, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Reduce_scatter"
	if err := c.usable(op); err != nil {
		return err
	}
	cdt, cop, err := typedArgs(op, dt, rop, send, recv)
	if err != nil {
		return err
	}
	if len(counts) != c.size {
		return classError(op, mpi.ErrArg, fmt.Sprintf("counts has %d entries, want Size() = %d", len(counts), c.size))
	}
	cc := make([]C.int, c.size)
	total := 0
	for i, k := range counts {
		if k < 0 || k > mpi.MaxCount {
			return classError(op, mpi.ErrCount, fmt.Sprintf("counts[%d] = %d outside [0, mpi.MaxCount]", i, k))
		}
		cc[i] = C.int(k)
		total += k
	}
	es := dt.Size()
	if err := needBytes(op, "send", len(send), total*es, "sum(counts)*dt.Size()"); err != nil {
		return err
	}
	if err := needBytes(op, "recv", len(recv), counts[c.rank]*es, "counts[rank]*dt.Size()"); err != nil {
		return err
	}
	if _, err := inPlace(op, send, recv); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_reduce_scatter(c.h, ptr(send), rptr(recv), &cc[0], cdt, cop)
	leave()
	return c.result(op, rc)
}

// localArgs checks MPI_Reduce_local's arguments.
func localArgs(op string, in, inout []byte, dt mpi.Datatype, rop mpi.Op) (C.int, C.int, error) {
	cdt, cop, err := typedArgs(op, dt, rop, in, inout)
	if err != nil {
		return 0, 0, err
	}
	if len(in) != len(inout) {
		return 0, 0, classError(op, mpi.ErrCount, fmt.Sprintf("in holds %d bytes, inout %d: want equal lengths", len(in), len(inout)))
	}
	if err := disjoint(op, in, inout); err != nil {
		return 0, 0, err
	}
	return cdt, cop, nil
}

// ReduceLocal implements mpi.Reducer: MPI_Reduce_local.
func (c *Comm) ReduceLocal(in, inout []byte, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Reduce_local"
	if err := c.usable(op); err != nil {
		return err
	}
	cdt, cop, err := localArgs(op, in, inout, dt, rop)
	if err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_reduce_local(ptr(in), rptr(inout), C.int(len(in)/dt.Size()), cdt, cop)
	leave()
	return c.result(op, rc)
}

// ReduceLocalBatch implements mpi.LocalReduceKernels: iters calls of
// MPI_Reduce_local per repetition, in C (harness.c).
func (c *Comm) ReduceLocalBatch(b mpi.Batch, in, inout []byte, dt mpi.Datatype, rop mpi.Op, iters int) error {
	const op = "ReduceLocalBatch"
	cdt, cop, err := localArgs(op, in, inout, dt, rop)
	if err != nil {
		return err
	}
	a, err := c.batchOf(op, b)
	if err != nil {
		return err
	}
	if iters < 0 || iters > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_reduce_local_batch(a.reps, a.sync, a.rank0, a.me, a.own, a.samples, c.h,
		ptr(in), rptr(inout), C.int(len(in)/dt.Size()), cdt, cop, C.int(iters))
	leave()
	return batchError(op, r)
}

// collRequest is a non-blocking collective in flight. It pins the Go
// buffers MPI reads and writes until completion and owns the C copies of
// a v-form's counts and displacements, which MPI may read until then too.
type collRequest struct {
	h    C.MPI_Request
	op   string // "MPI_Ibcast"
	done bool
	err  error
	pin  runtime.Pinner
	arrs []unsafe.Pointer // C arrays, freed on completion
}

// liveColl keeps every request in flight reachable: a Pinner collected
// with pinned objects is a fatal error, and a dropped request's buffers
// must stay put while MPI may still write them.
var liveColl struct {
	sync.Mutex
	m map[*collRequest]struct{}
}

// newColl starts tracking a request of op over bufs.
func newColl(op string, bufs ...[]byte) *collRequest {
	q := &collRequest{op: op}
	for _, b := range bufs {
		if len(b) > 0 {
			q.pin.Pin(&b[0])
		}
	}
	return q
}

// cInts copies v into a C array owned by q (nil for nil v).
func (q *collRequest) cInts(v []C.int) *C.int {
	if v == nil {
		return nil
	}
	p := C.malloc(C.size_t(len(v)+1) * C.size_t(unsafe.Sizeof(C.int(0))))
	copy(unsafe.Slice((*C.int)(p), len(v)), v)
	q.arrs = append(q.arrs, p)
	return (*C.int)(p)
}

// release frees what q holds once MPI is done with it.
func (q *collRequest) release() {
	q.pin.Unpin()
	for _, p := range q.arrs {
		C.free(p)
	}
	q.arrs = nil
	liveColl.Lock()
	delete(liveColl.m, q)
	liveColl.Unlock()
}

// posted finishes starting q with the posting call's result.
func (q *collRequest) posted(r C.cc_req_result) (mpi.Request, error) {
	if r.rc != 0 {
		q.release()
		return nil, newError(q.op, r.rc)
	}
	q.h = r.req
	liveColl.Lock()
	if liveColl.m == nil {
		liveColl.m = map[*collRequest]struct{}{}
	}
	liveColl.m[q] = struct{}{}
	liveColl.Unlock()
	return q, nil
}

// Wait is MPI_Wait; a collective's status is empty.
func (q *collRequest) Wait() (mpi.Status, error) {
	if q.done {
		return mpi.Status{}, q.err
	}
	op := "MPI_Wait(" + q.op + ")"
	if err := enter(op); err != nil {
		return mpi.Status{}, err
	}
	s := C.cc_wait(q.h)
	leave()
	if s.rc == C.CC_ERR_WRONG_THREAD {
		return mpi.Status{}, wrongThread(op)
	}
	q.finish(op, s.rc)
	return mpi.Status{}, q.err
}

// Test is MPI_Test.
func (q *collRequest) Test() (bool, mpi.Status, error) {
	if q.done {
		return true, mpi.Status{}, q.err
	}
	op := "MPI_Test(" + q.op + ")"
	if err := enter(op); err != nil {
		return false, mpi.Status{}, err
	}
	t := C.cc_test(q.h)
	leave()
	if t.flag == 0 {
		if t.rc != 0 {
			return false, mpi.Status{}, newError(op, t.rc)
		}
		return false, mpi.Status{}, nil
	}
	q.finish(op, t.st.rc)
	return true, mpi.Status{}, q.err
}

func (q *collRequest) finish(op string, rc C.int) {
	q.done = true
	q.h = nullRequest
	if rc != 0 {
		q.err = newError(op, rc)
	}
	q.release()
}

// startColl is the common entry of a non-blocking collective: the library
// must be MPI-3, and the call may not overlap another.
func (c *Comm) startColl(op string) error {
	if err := c.Missing(mpi.FeatureNonBlocking); err != nil {
		return classError(op, mpi.ErrOther, err.Error())
	}
	return enter(op)
}

// Ibarrier implements mpi.NonBlockingCollectives.
func (c *Comm) Ibarrier() (mpi.Request, error) {
	const op = "MPI_Ibarrier"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op)
	r := C.cc_ibarrier(c.h)
	leave()
	return q.posted(r)
}

// Ibcast implements mpi.NonBlockingCollectives.
func (c *Comm) Ibcast(buf []byte, root int) (mpi.Request, error) {
	const op = "MPI_Ibcast"
	if err := c.collective(op, true, root, "buffer", len(buf)); err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, buf)
	r := C.cc_ibcast(c.h, ptr(buf), C.int(len(buf)), C.int(root))
	leave()
	return q.posted(r)
}

// Igather implements mpi.NonBlockingCollectives.
func (c *Comm) Igather(send, recv []byte, root int) (mpi.Request, error) {
	const op = "MPI_Igather"
	if err := c.collective(op, true, root, "send buffer", len(send)); err != nil {
		return nil, err
	}
	if c.rank == root {
		if err := needBytes(op, "recv", len(recv), c.size*len(send), "Size()*len(send)"); err != nil {
			return nil, err
		}
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_igather(c.h, ptr(send), C.int(len(send)), rptr(recv), C.int(root))
	leave()
	return q.posted(r)
}

// Igatherv implements mpi.NonBlockingCollectives.
func (c *Comm) Igatherv(send, recv []byte, counts, displs []int, root int) (mpi.Request, error) {
	const op = "MPI_Igatherv"
	if err := c.collective(op, true, root, "send buffer", len(send)); err != nil {
		return nil, err
	}
	var cc, cd []C.int
	if c.rank == root || counts != nil || displs != nil {
		bufLen := -1
		if c.rank == root {
			bufLen = len(recv)
		}
		var err error
		if cc, cd, err = c.vArgs(op, "recv", counts, displs, bufLen); err != nil {
			return nil, err
		}
		if c.rank == root {
			if err := ownCount(op, "recv", counts, c.rank, len(send)); err != nil {
				return nil, err
			}
		}
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_igatherv(c.h, ptr(send), C.int(len(send)), rptr(recv), q.cInts(cc), q.cInts(cd), C.int(root))
	leave()
	return q.posted(r)
}

// Iscatter implements mpi.NonBlockingCollectives.
func (c *Comm) Iscatter(send, recv []byte, root int) (mpi.Request, error) {
	const op = "MPI_Iscatter"
	if err := c.collective(op, true, root, "recv buffer", len(recv)); err != nil {
		return nil, err
	}
	if c.rank == root {
		if err := needBytes(op, "send", len(send), c.size*len(recv), "Size()*len(recv)"); err != nil {
			return nil, err
		}
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_iscatter(c.h, ptr(send), C.int(len(recv)), rptr(recv), C.int(root))
	leave()
	return q.posted(r)
}

// Iscatterv implements mpi.NonBlockingCollectives.
func (c *Comm) Iscatterv(send []byte, counts, displs []int, recv []byte, root int) (mpi.Request, error) {
	const op = "MPI_Iscatterv"
	if err := c.collective(op, true, root, "recv buffer", len(recv)); err != nil {
		return nil, err
	}
	var cc, cd []C.int
	if c.rank == root || counts != nil || displs != nil {
		bufLen := -1
		if c.rank == root {
			bufLen = len(send)
		}
		var err error
		if cc, cd, err = c.vArgs(op, "send", counts, displs, bufLen); err != nil {
			return nil, err
		}
		if c.rank == root {
			if err := ownCount(op, "send", counts, c.rank, len(recv)); err != nil {
				return nil, err
			}
		}
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_iscatterv(c.h, ptr(send), q.cInts(cc), q.cInts(cd), rptr(recv), C.int(len(recv)), C.int(root))
	leave()
	return q.posted(r)
}

// Iallgather implements mpi.NonBlockingCollectives.
func (c *Comm) Iallgather(send, recv []byte) (mpi.Request, error) {
	const op = "MPI_Iallgather"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return nil, err
	}
	if err := needBytes(op, "recv", len(recv), c.size*len(send), "Size()*len(send)"); err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_iallgather(c.h, ptr(send), C.int(len(send)), rptr(recv))
	leave()
	return q.posted(r)
}

// Iallgatherv implements mpi.NonBlockingCollectives.
func (c *Comm) Iallgatherv(send, recv []byte, counts, displs []int) (mpi.Request, error) {
	const op = "MPI_Iallgatherv"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return nil, err
	}
	cc, cd, err := c.vArgs(op, "recv", counts, displs, len(recv))
	if err != nil {
		return nil, err
	}
	if err := ownCount(op, "recv", counts, c.rank, len(send)); err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_iallgatherv(c.h, ptr(send), C.int(len(send)), rptr(recv), q.cInts(cc), q.cInts(cd))
	leave()
	return q.posted(r)
}

// Ialltoall implements mpi.NonBlockingCollectives.
func (c *Comm) Ialltoall(send, recv []byte) (mpi.Request, error) {
	const op = "MPI_Ialltoall"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return nil, err
	}
	if len(send)%c.size != 0 {
		return nil, classError(op, mpi.ErrCount, fmt.Sprintf("send holds %d bytes, not a multiple of Size() = %d", len(send), c.size))
	}
	if err := needBytes(op, "recv", len(recv), len(send), "len(send)"); err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_ialltoall(c.h, ptr(send), C.int(len(send)/c.size), rptr(recv))
	leave()
	return q.posted(r)
}

// Ialltoallv implements mpi.NonBlockingCollectives.
func (c *Comm) Ialltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) (mpi.Request, error) {
	const op = "MPI_Ialltoallv"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	sc, sd, err := c.vArgs(op, "send", sendCounts, sendDispls, len(send))
	if err != nil {
		return nil, err
	}
	rcs, rd, err := c.vArgs(op, "recv", recvCounts, recvDispls, len(recv))
	if err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_ialltoallv(c.h, ptr(send), q.cInts(sc), q.cInts(sd), rptr(recv), q.cInts(rcs), q.cInts(rd))
	leave()
	return q.posted(r)
}

// Ireduce implements mpi.NonBlockingCollectives.
func (c *Comm) Ireduce(send, recv []byte, dt mpi.Datatype, rop mpi.Op, root int) (mpi.Request, error) {
	const op = "MPI_Ireduce"
	cdt, cop, place, rbuf, err := c.reduceArgs(op, send, recv, dt, rop, false, root)
	if err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, rbuf)
	r := C.cc_ireduce(c.h, ptr(send), rptr(rbuf), C.int(len(send)/dt.Size()), cdt, cop, C.int(root), place)
	leave()
	return q.posted(r)
}

// Iallreduce implements mpi.NonBlockingCollectives.
func (c *Comm) Iallreduce(send, recv []byte, dt mpi.Datatype, rop mpi.Op) (mpi.Request, error) {
	const op = "MPI_Iallreduce"
	cdt, cop, place, _, err := c.reduceArgs(op, send, recv, dt, rop, true, 0)
	if err != nil {
		return nil, err
	}
	if err := c.startColl(op); err != nil {
		return nil, err
	}
	q := newColl(op, send, recv)
	r := C.cc_iallreduce(c.h, ptr(send), rptr(recv), C.int(len(send)/dt.Size()), cdt, cop, place)
	leave()
	return q.posted(r)
}
