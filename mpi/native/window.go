package native

// #include <stdlib.h>
// #include "harness.h"
// #cgo noescape cc_rma_batch
// #cgo nocallback cc_rma_batch
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// One-sided communication (mpi.WindowAllocator, mpi.Window) and OSU's
// one-sided loops in C (mpi.RMAKernels). A window's memory is MPI's
// (MPI_Win_allocate); the Go buffers a call reads or writes stay pinned
// until the synchronisation that completes it.

var (
	_ mpi.WindowAllocator = (*Comm)(nil)
	_ mpi.RMAKernels      = (*Comm)(nil)
)

// window is an MPI window with MPI_ERRORS_RETURN.
type window struct {
	c     *Comm
	h     C.MPI_Win
	mem   []byte
	sizes []int // every rank's window size, for the range checks
	// component is the one-sided component that serves the window, the
	// first word of Open MPI's window name ("rdma", "pt2pt"; "" when the
	// library names none).
	component string
	// pins hold, per target, the buffers of calls not yet completed.
	pins  map[int]*runtime.Pinner
	freed bool
}

// liveWindows keeps every window with pinned buffers reachable (a
// collected Pinner with pins is a fatal error).
var liveWindows struct {
	sync.Mutex
	m map[*window]struct{}
}

// AllocateWindow implements mpi.WindowAllocator: MPI_Win_allocate.
func (c *Comm) AllocateWindow(size int) (mpi.Window, error) {
	const op = "MPI_Win_allocate"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := c.Missing(mpi.FeatureWindows); err != nil {
		return nil, classError(op, mpi.ErrOther, err.Error())
	}
	if size < 0 {
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("size %d is negative", size))
	}
	all := make([]int64, c.size)
	if err := c.Allgather(mpi.Int64Bytes([]int64{int64(size)}), mpi.Int64Bytes(all)); err != nil {
		return nil, err
	}
	if err := enter(op); err != nil {
		return nil, err
	}
	r := C.cc_win_allocate(c.h, C.longlong(size))
	leave()
	if r.rc != 0 {
		return nil, newError(op, r.rc)
	}
	w := &window{c: c, h: r.win, sizes: make([]int, c.size), pins: map[int]*runtime.Pinner{}}
	var name [C.MPI_MAX_OBJECT_NAME]C.char
	if C.cc_win_name(r.win, &name[0], C.int(len(name))) == 0 {
		if f := strings.Fields(C.GoString(&name[0])); len(f) > 0 {
			w.component = f[0]
		}
	}
	for i, v := range all {
		w.sizes[i] = int(v)
	}
	if size > 0 {
		w.mem = unsafe.Slice((*byte)(r.base), size)
	} else {
		w.mem = []byte{}
	}
	liveWindows.Lock()
	if liveWindows.m == nil {
		liveWindows.m = map[*window]struct{}{}
	}
	liveWindows.m[w] = struct{}{}
	liveWindows.Unlock()
	return w, nil
}

// Missing covers the windows too (typed.go): they need MPI-3.
func init() { missingMPI3 = append(missingMPI3, mpi.FeatureWindows) }

func (w *window) Mem() []byte { return w.mem }

// Fault implements mpi.RMAFaulty: Open MPI before version 5 crashes in
// MPI_Compare_and_swap on 8-byte elements through its osc/rdma component
// (a segmentation fault in the emulated atomics of its byte transfer
// layer; osu_cas_latency dies the same way), so the call is refused
// before it is made.
func (w *window) Fault(op mpi.RMAOp, dt mpi.Datatype) error {
	if op != mpi.RMACompareAndSwap || dt.Size() != 8 || w.component != "rdma" {
		return nil
	}
	lib := firstLine(LibraryVersion())
	var major int
	if _, err := fmt.Sscanf(lib, "Open MPI v%d", &major); err != nil || major >= 5 {
		return nil
	}
	name, _, _ := strings.Cut(lib, ",")
	return fmt.Errorf("MPI_Compare_and_swap on %d-byte %v elements crashes %s through its osc/rdma one-sided component (a segmentation fault; osu_cas_latency crashes too): run under mpirun --mca osc pt2pt (or --mca osc sm on one node), or on 4-byte elements",
		dt.Size(), dt, name)
}

func (w *window) usable(op string) error {
	if w.freed {
		return classError(op, mpi.ErrOther, "the window was freed")
	}
	return w.c.usable(op)
}

// hold pins bufs until the synchronisation that completes target's calls.
func (w *window) hold(target int, bufs ...[]byte) {
	p := w.pins[target]
	if p == nil {
		p = new(runtime.Pinner)
		w.pins[target] = p
	}
	for _, b := range bufs {
		if len(b) > 0 {
			p.Pin(&b[0])
		}
	}
}

// release unpins target's buffers, or every target's for -1.
func (w *window) release(target int) {
	for t, p := range w.pins {
		if target < 0 || t == target {
			p.Unpin()
			delete(w.pins, t)
		}
	}
}

// comm checks a call and enters MPI; the caller leaves.
func (w *window) comm(op string, target, disp, n int) error {
	if err := w.usable(op); err != nil {
		return err
	}
	if err := mpi.CheckRMA(op, w.sizes, target, disp, n); err != nil {
		e := err.(*mpi.Error)
		return classError(op, e.Class, e.Msg[len(mpi.ClassName(e.Class))+2:])
	}
	return enter(op)
}

// typed checks a typed call's element type, operation and lengths.
func typedRMA(op string, dt mpi.Datatype, rop mpi.Op, one bool, bufs ...[]byte) (C.int, C.int, error) {
	cdt, cop, err := typedArgs(op, dt, rop, bufs...)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range bufs[1:] {
		if len(b) != len(bufs[0]) {
			return 0, 0, classError(op, mpi.ErrCount, fmt.Sprintf("buffers of %d and %d bytes: want equal lengths", len(bufs[0]), len(b)))
		}
	}
	if one && len(bufs[0]) != dt.Size() {
		return 0, 0, classError(op, mpi.ErrCount, fmt.Sprintf("%d bytes: the call moves one %d-byte %v element", len(bufs[0]), dt.Size(), dt))
	}
	return cdt, cop, nil
}

func (w *window) result(op string, target int, rc C.int, bufs ...[]byte) error {
	if rc != 0 {
		return newError(op, rc)
	}
	w.hold(target, bufs...)
	return nil
}

// Put implements mpi.Window.
func (w *window) Put(origin []byte, target, disp int) error {
	const op = "MPI_Put"
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_put(w.h, ptr(origin), C.int(len(origin)), C.int(target), C.longlong(disp))
	leave()
	return w.result(op, target, rc, origin)
}

// Get implements mpi.Window.
func (w *window) Get(origin []byte, target, disp int) error {
	const op = "MPI_Get"
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_get(w.h, rptr(origin), C.int(len(origin)), C.int(target), C.longlong(disp))
	leave()
	return w.result(op, target, rc, origin)
}

// Accumulate implements mpi.Window.
func (w *window) Accumulate(origin []byte, target, disp int, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Accumulate"
	cdt, cop, err := typedRMA(op, dt, rop, false, origin)
	if err != nil {
		return err
	}
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_acc(w.h, ptr(origin), C.int(len(origin)/dt.Size()), cdt, C.int(target), C.longlong(disp), cop)
	leave()
	return w.result(op, target, rc, origin)
}

// GetAccumulate implements mpi.Window.
func (w *window) GetAccumulate(origin, result []byte, target, disp int, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Get_accumulate"
	cdt, cop, err := typedRMA(op, dt, rop, false, origin, result)
	if err != nil {
		return err
	}
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_get_acc(w.h, ptr(origin), rptr(result), C.int(len(origin)/dt.Size()), cdt, C.int(target), C.longlong(disp), cop)
	leave()
	return w.result(op, target, rc, origin, result)
}

// FetchAndOp implements mpi.Window.
func (w *window) FetchAndOp(origin, result []byte, target, disp int, dt mpi.Datatype, rop mpi.Op) error {
	const op = "MPI_Fetch_and_op"
	cdt, cop, err := typedRMA(op, dt, rop, true, origin, result)
	if err != nil {
		return err
	}
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_fop(w.h, ptr(origin), rptr(result), cdt, C.int(target), C.longlong(disp), cop)
	leave()
	return w.result(op, target, rc, origin, result)
}

// CompareAndSwap implements mpi.Window.
func (w *window) CompareAndSwap(origin, compare, result []byte, target, disp int, dt mpi.Datatype) error {
	const op = "MPI_Compare_and_swap"
	cdt, _, err := typedRMA(op, dt, mpi.OpSum, true, origin, compare, result)
	if err != nil {
		return err
	}
	if err := w.Fault(mpi.RMACompareAndSwap, dt); err != nil {
		return classError(op, mpi.ErrOther, err.Error())
	}
	if err := w.comm(op, target, disp, len(origin)); err != nil {
		return err
	}
	rc := C.cc_rma_cas(w.h, ptr(origin), ptr(compare), rptr(result), cdt, C.int(target), C.longlong(disp))
	leave()
	return w.result(op, target, rc, origin, compare, result)
}

// sync runs a synchronisation call and, when it succeeds, releases the
// buffers of the calls it completed (target's, or all for -1; none for
// -2).
func (w *window) sync(op string, release int, call func() C.int) error {
	if err := w.usable(op); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := call()
	leave()
	if rc != 0 {
		return newError(op, rc)
	}
	if release > -2 {
		w.release(release)
	}
	return nil
}

func (w *window) checkTarget(op string, target int) error {
	if target < 0 || target >= w.c.size {
		return classError(op, mpi.ErrRank, fmt.Sprintf("target %d outside [0, %d)", target, w.c.size))
	}
	return nil
}

// Lock implements mpi.Window.
func (w *window) Lock(target int, exclusive bool) error {
	const op = "MPI_Win_lock"
	if err := w.checkTarget(op, target); err != nil {
		return err
	}
	return w.sync(op, -2, func() C.int { return C.cc_win_lock(w.h, C.int(target), cbool(exclusive)) })
}

// Unlock implements mpi.Window.
func (w *window) Unlock(target int) error {
	const op = "MPI_Win_unlock"
	if err := w.checkTarget(op, target); err != nil {
		return err
	}
	return w.sync(op, target, func() C.int { return C.cc_win_unlock(w.h, C.int(target)) })
}

// LockAll implements mpi.Window.
func (w *window) LockAll() error {
	return w.sync("MPI_Win_lock_all", -2, func() C.int { return C.cc_win_lock_all(w.h) })
}

// UnlockAll implements mpi.Window.
func (w *window) UnlockAll() error {
	return w.sync("MPI_Win_unlock_all", -1, func() C.int { return C.cc_win_unlock_all(w.h) })
}

// Flush implements mpi.Window.
func (w *window) Flush(target int) error {
	const op = "MPI_Win_flush"
	if err := w.checkTarget(op, target); err != nil {
		return err
	}
	return w.sync(op, target, func() C.int { return C.cc_win_flush(w.h, C.int(target)) })
}

// Fence implements mpi.Window.
func (w *window) Fence() error {
	return w.sync("MPI_Win_fence", -1, func() C.int { return C.cc_win_fence(w.h) })
}

// groupArgs checks a PSCW group and converts it for C.
func (w *window) groupArgs(op string, group []int) ([]C.int, error) {
	if err := mpi.CheckGroup(op, group, w.c.size); err != nil {
		e := err.(*mpi.Error)
		return nil, classError(op, e.Class, e.Msg[len(mpi.ClassName(e.Class))+2:])
	}
	g := make([]C.int, len(group)+1) // never empty, for &g[0]
	for i, r := range group {
		g[i] = C.int(r)
	}
	return g, nil
}

// Post implements mpi.Window.
func (w *window) Post(group []int) error {
	const op = "MPI_Win_post"
	g, err := w.groupArgs(op, group)
	if err != nil {
		return err
	}
	return w.sync(op, -2, func() C.int { return C.cc_win_post(w.h, w.c.h, &g[0], C.int(len(group))) })
}

// Start implements mpi.Window.
func (w *window) Start(group []int) error {
	const op = "MPI_Win_start"
	g, err := w.groupArgs(op, group)
	if err != nil {
		return err
	}
	return w.sync(op, -2, func() C.int { return C.cc_win_start(w.h, w.c.h, &g[0], C.int(len(group))) })
}

// Complete implements mpi.Window.
func (w *window) Complete() error {
	return w.sync("MPI_Win_complete", -1, func() C.int { return C.cc_win_complete(w.h) })
}

// Wait implements mpi.Window.
func (w *window) Wait() error {
	return w.sync("MPI_Win_wait", -2, func() C.int { return C.cc_win_wait(w.h) })
}

// Free implements mpi.Window: MPI_Win_free (collective).
func (w *window) Free() error {
	const op = "MPI_Win_free"
	if err := w.usable(op); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_win_free(w.h)
	leave()
	if rc != 0 {
		return newError(op, rc)
	}
	w.freed = true
	w.release(-1)
	w.mem = nil
	liveWindows.Lock()
	delete(liveWindows.m, w)
	liveWindows.Unlock()
	return nil
}

var rmaOps = [...]C.int{mpi.RMAPut: C.CC_RMA_PUT, mpi.RMAGet: C.CC_RMA_GET, mpi.RMAAccumulate: C.CC_RMA_ACC,
	mpi.RMAGetAccumulate: C.CC_RMA_GET_ACC, mpi.RMAFetchAndOp: C.CC_RMA_FOP, mpi.RMACompareAndSwap: C.CC_RMA_CAS}
var rmaSyncs = [...]C.int{mpi.SyncFlush: C.CC_SYNC_FLUSH, mpi.SyncLock: C.CC_SYNC_LOCK, mpi.SyncLockAll: C.CC_SYNC_LOCK_ALL,
	mpi.SyncFence: C.CC_SYNC_FENCE, mpi.SyncPSCW: C.CC_SYNC_PSCW}
var rmaModes = [...]C.int{mpi.RMALatency: C.CC_RMA_LAT, mpi.RMABandwidth: C.CC_RMA_BW, mpi.RMABibw: C.CC_RMA_BIBW}

// rmaRunner is OSU's one-sided loop of one rank: the kernel's state and
// its buffers in C memory, so C keeps no Go pointer between calls.
type rmaRunner struct {
	c    *Comm
	w    *window
	k    *C.cc_rma_kernel
	bufs mpi.RMABuffers
	mem  []unsafe.Pointer
	pscw bool
}

// NewRMA implements mpi.RMAKernels.
func (c *Comm) NewRMA(spec mpi.RMASpec) (mpi.RMARunner, error) {
	const op = "NewRMA"
	switch {
	case spec.Op < mpi.RMAPut || int(spec.Op) >= len(rmaOps) || spec.Sync < mpi.SyncFlush || int(spec.Sync) >= len(rmaSyncs) ||
		spec.Mode < mpi.RMALatency || int(spec.Mode) >= len(rmaModes):
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("spec %+v: unknown call, synchronisation or mode", spec))
	case spec.Peer < 0 || spec.Peer >= c.size || spec.Peer == c.rank:
		return nil, classError(op, mpi.ErrRank, fmt.Sprintf("peer %d must be another rank in [0, %d)", spec.Peer, c.size))
	case spec.Sync == mpi.SyncFence && c.size != 2:
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("a fence loop of two ranks on a communicator of %d", c.size))
	case spec.Count < 0 || spec.Calls() < 1 || int64(spec.Bytes())*int64(spec.Calls()) > mpi.MaxCount:
		return nil, classError(op, mpi.ErrCount, fmt.Sprintf("%d calls of %d bytes", spec.Calls(), spec.Bytes()))
	}
	if spec.Op.Typed() {
		if _, _, err := typedArgs(op, spec.Type, mpi.OpSum); err != nil {
			return nil, err
		}
	}
	n := spec.Bytes() * spec.Calls()
	w, err := c.AllocateWindow(n)
	if err != nil {
		return nil, err
	}
	if err := w.(*window).Fault(spec.Op, spec.Type); err != nil {
		return nil, errors.Join(classError(op, mpi.ErrOther, err.Error()), w.Free())
	}
	r := &rmaRunner{c: c, w: w.(*window), pscw: spec.Sync == mpi.SyncPSCW}
	alloc := func() []byte {
		p := C.calloc(C.size_t(n+1), 1)
		r.mem = append(r.mem, p)
		return unsafe.Slice((*byte)(p), n)
	}
	r.bufs = mpi.RMABuffers{Origin: alloc(), Result: alloc(), Compare: alloc(), Mem: r.w.mem}
	r.k = (*C.cc_rma_kernel)(C.calloc(1, C.size_t(unsafe.Sizeof(C.cc_rma_kernel{}))))
	*r.k = C.cc_rma_kernel{win: r.w.h, op: rmaOps[spec.Op], sync: rmaSyncs[spec.Sync], mode: rmaModes[spec.Mode],
		origin: (*C.char)(r.mem[0]), result: (*C.char)(r.mem[1]), compare: (*C.char)(r.mem[2]),
		count: C.int(spec.Count), bytes: C.int(spec.Bytes()), window: C.int(spec.Calls()),
		peer: C.int(spec.Peer), first: cbool(spec.First)}
	if spec.Op.Typed() {
		r.k.dtype = dtypes[spec.Type]
	}
	if r.pscw {
		if err := enter(op); err != nil {
			r.free()
			return nil, err
		}
		rc := C.cc_rma_group(c.h, C.int(spec.Peer), &r.k.group)
		leave()
		if rc != 0 {
			r.free()
			return nil, newError("MPI_Group_incl", rc)
		}
	}
	return r, nil
}

func (r *rmaRunner) Buffers() mpi.RMABuffers { return r.bufs }

// Batch implements mpi.RMARunner.
func (r *rmaRunner) Batch(b mpi.Batch, iters int) error {
	const op = "RMABatch"
	if r.k == nil {
		return classError(op, mpi.ErrOther, "the runner is closed")
	}
	a, err := r.c.batchOf(op, b)
	if err != nil {
		return err
	}
	if iters < 0 || iters > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	r.k.iters = C.int(iters)
	if err := enter(op); err != nil {
		return err
	}
	res := C.cc_rma_batch(r.c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples, r.k)
	leave()
	return batchError(op, res)
}

// free releases the C memory.
func (r *rmaRunner) free() {
	if r.k != nil && r.pscw {
		C.cc_rma_group_free(&r.k.group)
	}
	for _, p := range r.mem {
		C.free(p)
	}
	r.mem = nil
	if r.k != nil {
		C.free(unsafe.Pointer(r.k))
		r.k = nil
	}
}

// Close implements mpi.RMARunner: the window is freed (collective).
func (r *rmaRunner) Close() error {
	if r.k == nil {
		return nil
	}
	err := r.w.Free()
	r.free()
	return err
}
