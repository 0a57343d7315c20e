package native

// #include "shim.h"
// #cgo nocallback cc_store_batch
// #cgo nocallback cc_store_wait
// #cgo noescape cc_store_poll
// #cgo nocallback cc_store_poll
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// storeServer serves a direct store's home memory in C (access.c,
// cc_store_*), one cgo crossing per batch or wait, with the protocol of the
// access kernel, so a batch's packets cost what MPI takes and not the Go
// request path's several times more (see access.go).
type storeServer struct {
	c    *Comm
	s    *C.cc_store
	spec mpi.StoreSpec
	// Per-batch arrays passed to C; reused.
	targets []C.int
	offs    []C.longlong
	lens    []C.int
	boffs   []C.longlong
	bufs    []unsafe.Pointer
	handles []C.MPI_Request
	pin     runtime.Pinner
	// kept holds the pinned buffers of a batch an error broke: MPI may
	// still write into them, so they stay pinned and reachable for good.
	kept [][]byte
}

// NewStoreServer implements mpi.StoreKernel.
func (c *Comm) NewStoreServer(spec mpi.StoreSpec) (mpi.StoreServer, error) {
	const op = "NewStoreServer"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if spec.MaxPacket < 0 || spec.MaxPacket > mpi.MaxCount-mpi.AccessHeaderBytes {
		return nil, classError(op, mpi.ErrCount, fmt.Sprintf("largest packet %d bytes: want 0..%d", spec.MaxPacket, mpi.MaxCount-mpi.AccessHeaderBytes))
	}
	if err := enter(op); err != nil {
		return nil, err
	}
	var rc C.int
	s := C.cc_store_new(c.h, C.int(spec.ReqTag), C.int(spec.ReplyTag), C.int(spec.MaxPacket), &rc)
	leave()
	if s == nil {
		if rc != 0 {
			return nil, newError(op, rc)
		}
		return nil, classError(op, mpi.ErrOther, "out of memory for the store server")
	}
	return &storeServer{c: c, s: s, spec: spec}, nil
}

func (x *storeServer) usable(op string) error {
	if x.s == nil {
		return classError(op, mpi.ErrOther, "the store server is closed or broken")
	}
	return nil
}

// Mem implements mpi.StoreServer: a view of the C home memory.
func (x *storeServer) Mem() []byte {
	if x.s == nil || x.s.mem_len == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(x.s.mem)), int(x.s.mem_len))
}

// Grow implements mpi.StoreServer.
func (x *storeServer) Grow(n int) error {
	const op = "StoreGrow"
	if err := x.usable(op); err != nil {
		return err
	}
	if n < 0 {
		return classError(op, mpi.ErrArg, fmt.Sprintf("size %d is negative", n))
	}
	if C.cc_store_grow(x.s, C.size_t(n)) == 0 {
		return classError(op, mpi.ErrOther, fmt.Sprintf("out of memory for %d bytes of home memory", n))
	}
	return nil
}

// Served implements mpi.StoreServer.
func (x *storeServer) Served() (reads, writes int64) {
	if x.s == nil {
		return 0, 0
	}
	return int64(x.s.served_reads), int64(x.s.served_writes)
}

// broke marks the server unusable after an error: C keeps its buffers (MPI
// may still hold them) and this side keeps the Go buffers of the batch
// pinned, for the same reason.
func (x *storeServer) broke(bufs [][]byte) {
	x.s = nil
	x.kept = append(x.kept, bufs...)
}

// fault converts a C result into the error it carries.
func (x *storeServer) fault(op string, r C.cc_access_result) error {
	if r.rc != 0 {
		return newError(op, r.rc)
	}
	return &mpi.AccessFault{Kind: mpi.AccessFaultKind(r.fault), Rank: int(r.rank), Count: int(r.count), Want: int(r.want), Slot: uint64(r.slot)}
}

// Batch implements mpi.StoreServer. C receives into the packets' Go
// buffers and sends from them directly (a write's data is copied into its
// request, as the request carries it after the header). When every packet
// lies within the first packet's backing array (the pieces of one buffer,
// as globalvar.Split cuts them), that array is passed as one argument with
// offsets: pinning each packet costs about as much as a shared-memory
// k-k-access moves a packet (runtime.Pinner, some 100-400 ns a pin). Other
// batches pin every packet for the call.
func (x *storeServer) Batch(b mpi.StoreBatch) error {
	const op = "StoreBatch"
	if err := x.usable(op); err != nil {
		return err
	}
	n := len(b.Targets)
	if len(b.Offs) != n || len(b.Bufs) != n {
		return classError(op, mpi.ErrArg, fmt.Sprintf("%d targets, %d offsets, %d buffers: want one of each per packet", n, len(b.Offs), len(b.Bufs)))
	}
	if b.K < 1 || b.K > mpi.MaxCount-1 {
		return classError(op, mpi.ErrArg, fmt.Sprintf("k = %d packets in flight: want k >= 1", b.K))
	}
	if n == 0 {
		return nil
	}
	x.targets, x.offs, x.lens, x.boffs = x.targets[:0], x.offs[:0], x.lens[:0], x.boffs[:0]
	// The first packet's backing array, and whether every packet is in it.
	var whole []byte
	if b0 := b.Bufs[0]; cap(b0) > 0 {
		whole = b0[:cap(b0)]
	}
	start := uintptr(0)
	if whole != nil {
		start = uintptr(unsafe.Pointer(&whole[0]))
	}
	for j := range n {
		t, off, buf := b.Targets[j], b.Offs[j], b.Bufs[j]
		if t < 0 || t >= x.c.size {
			return classError(op, mpi.ErrRank, fmt.Sprintf("packet %d: home %d outside [0, %d)", j, t, x.c.size))
		}
		if off < 0 || len(buf) > x.spec.MaxPacket {
			return classError(op, mpi.ErrArg, fmt.Sprintf("packet %d: %d bytes at offset %d; want offset >= 0 and at most %d bytes", j, len(buf), off, x.spec.MaxPacket))
		}
		x.targets = append(x.targets, C.int(t))
		x.offs = append(x.offs, C.longlong(off))
		x.lens = append(x.lens, C.int(len(buf)))
		rel := 0
		if len(buf) > 0 {
			// Only compared, never turned back into a pointer.
			d := uintptr(unsafe.Pointer(&buf[0])) - start
			if whole == nil || d >= uintptr(len(whole)) || int(d)+len(buf) > len(whole) {
				whole = nil
			} else {
				rel = int(d)
			}
		}
		x.boffs = append(x.boffs, C.longlong(rel))
	}
	var base *C.char
	var bufs **C.char
	if whole != nil {
		base = (*C.char)(unsafe.Pointer(&whole[0]))
	} else {
		x.bufs = x.bufs[:0]
		for _, buf := range b.Bufs {
			var p unsafe.Pointer
			if len(buf) > 0 {
				x.pin.Pin(&buf[0])
				p = unsafe.Pointer(&buf[0])
			}
			x.bufs = append(x.bufs, p)
		}
		bufs = (**C.char)(unsafe.Pointer(&x.bufs[0]))
	}
	if err := enter(op); err != nil {
		x.pin.Unpin()
		return err
	}
	r := C.cc_store_batch(x.s, cbool(b.Write), C.int(n), C.int(b.K), &x.targets[0], &x.offs[0], &x.lens[0], base, &x.boffs[0], bufs)
	leave()
	runtime.KeepAlive(whole)
	if r.rc == C.CC_ERR_WRONG_THREAD {
		x.pin.Unpin()
		return wrongThread(op)
	}
	if r.rc != 0 || r.fault != 0 {
		// Receives may still be posted into the buffers: keep them
		// reachable (and pinned) for good.
		x.broke(b.Bufs)
		x.pin = runtime.Pinner{}
		return x.fault(op, r)
	}
	x.pin.Unpin()
	clear(x.bufs) // no Go pointer outlives the call in this slice
	return nil
}

// WaitAny implements mpi.StoreServer for requests of this backend.
func (x *storeServer) WaitAny(reqs []mpi.Request) (int, mpi.Status, error) {
	const op = "StoreWaitAny"
	if err := x.usable(op); err != nil {
		return -1, mpi.Status{}, err
	}
	x.handles = x.handles[:0]
	any := false
	for i, q := range reqs {
		h := nullRequest
		if q != nil {
			nr, ok := q.(*request)
			if !ok {
				return -1, mpi.Status{}, classError(op, mpi.ErrRequest, fmt.Sprintf("request %d is not a native request", i))
			}
			if nr.done {
				return i, nr.st, nr.err
			}
			h = nr.h
			any = true
		}
		x.handles = append(x.handles, h)
	}
	if !any {
		return -1, mpi.Status{}, nil
	}
	if err := enter(op); err != nil {
		return -1, mpi.Status{}, err
	}
	w := C.cc_store_wait(x.s, C.int(len(x.handles)), &x.handles[0])
	leave()
	if w.r.rc == C.CC_ERR_WRONG_THREAD {
		return -1, mpi.Status{}, wrongThread(op)
	}
	i := int(w.index)
	if i >= 0 {
		q := reqs[i].(*request)
		q.finish(q.kind.waitOp(), w.st)
	}
	if w.r.rc != 0 || w.r.fault != 0 {
		x.broke(nil)
		return -1, mpi.Status{}, x.fault(op, w.r)
	}
	if i < 0 {
		return -1, mpi.Status{}, nil
	}
	q := reqs[i].(*request)
	return i, q.st, q.err
}

// call makes one C call of the server that serves requests and breaks the
// server on an MPI error or a protocol fault.
func (x *storeServer) call(op string, fn func() C.cc_access_result) error {
	if err := enter(op); err != nil {
		return err
	}
	r := fn()
	leave()
	if r.rc == C.CC_ERR_WRONG_THREAD {
		return wrongThread(op)
	}
	if r.rc != 0 || r.fault != 0 {
		x.broke(nil)
		return x.fault(op, r)
	}
	return nil
}

// Poll implements mpi.StoreServer.
func (x *storeServer) Poll() error {
	const op = "StorePoll"
	if err := x.usable(op); err != nil {
		return err
	}
	return x.call(op, func() C.cc_access_result { return C.cc_store_poll(x.s) })
}

// Close implements mpi.StoreServer.
func (x *storeServer) Close() error {
	if x.s == nil {
		return nil
	}
	if err := x.call("StoreClose", func() C.cc_access_result { return C.cc_store_close(x.s) }); err != nil {
		return err
	}
	C.cc_store_free(x.s)
	x.s = nil
	return nil
}

var _ mpi.StoreKernel = (*Comm)(nil)
