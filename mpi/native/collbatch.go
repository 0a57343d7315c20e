package native

// #include "harness.h"
// #cgo noescape cc_coll_batch
// #cgo nocallback cc_coll_batch
// #cgo noescape cc_overlap_batch
// #cgo nocallback cc_overlap_batch
import "C"

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

var (
	_ mpi.CollKernels    = (*Comm)(nil)
	_ mpi.OverlapKernels = (*Comm)(nil)
)

// collC is a collective call's arguments converted for C.
type collC struct {
	op, dtype, rop, root, count C.int
	counts, displs              []C.int
	rcounts, rdispls            []C.int
	send, recv                  []byte
}

// collArgs checks call as the method that makes it would (collective.go,
// typed.go) and converts it. name is the MPI function for errors.
func (c *Comm) collArgs(name string, k mpi.CollCall) (a collC, err error) {
	a = collC{op: C.int(k.Op), root: C.int(k.Root), send: k.Send, recv: k.Recv}
	if k.Op.Reduces() {
		if a.dtype, a.rop, err = typedArgs(name, k.Type, k.Reduce, k.Send, k.Recv); err != nil {
			return a, err
		}
	}
	switch k.Op {
	case mpi.CollBarrier:
		err = c.usable(name)
	case mpi.CollBcast:
		err = c.collective(name, true, k.Root, "buffer", len(k.Send))
		a.count = C.int(len(k.Send))
	case mpi.CollReduce, mpi.CollAllreduce:
		all := k.Op == mpi.CollAllreduce
		var rbuf []byte
		if _, _, _, rbuf, err = c.reduceArgs(name, k.Send, k.Recv, k.Type, k.Reduce, all, k.Root); err == nil {
			a.recv, a.count = rbuf, C.int(len(k.Send)/k.Type.Size())
		}
	case mpi.CollGather, mpi.CollAllgather:
		rooted := k.Op == mpi.CollGather
		if err = c.collective(name, rooted, k.Root, "send buffer", len(k.Send)); err == nil && (!rooted || c.rank == k.Root) {
			err = needBytes(name, "recv", len(k.Recv), c.size*len(k.Send), "Size()*len(send)")
		}
		a.count = C.int(len(k.Send))
	case mpi.CollScatter:
		if err = c.collective(name, true, k.Root, "recv buffer", len(k.Recv)); err == nil && c.rank == k.Root {
			err = needBytes(name, "send", len(k.Send), c.size*len(k.Recv), "Size()*len(recv)")
		}
		a.count = C.int(len(k.Recv))
	case mpi.CollAlltoall:
		if err = c.collective(name, false, 0, "send buffer", len(k.Send)); err == nil {
			if len(k.Send)%c.size != 0 {
				err = classError(name, mpi.ErrCount, fmt.Sprintf("send holds %d bytes, not a multiple of Size() = %d", len(k.Send), c.size))
			} else {
				err = needBytes(name, "recv", len(k.Recv), len(k.Send), "len(send)")
			}
		}
		a.count = C.int(len(k.Send) / c.size)
	case mpi.CollGatherv, mpi.CollAllgatherv:
		rooted := k.Op == mpi.CollGatherv
		if err = c.collective(name, rooted, k.Root, "send buffer", len(k.Send)); err == nil {
			bufLen := -1
			if !rooted || c.rank == k.Root {
				bufLen = len(k.Recv)
			}
			if a.counts, a.displs, err = c.vArgs(name, "recv", k.Counts, k.Displs, bufLen); err == nil {
				err = ownCount(name, "recv", k.Counts, c.rank, len(k.Send))
			}
		}
		a.count = C.int(len(k.Send))
	case mpi.CollScatterv:
		if err = c.collective(name, true, k.Root, "recv buffer", len(k.Recv)); err == nil {
			bufLen := -1
			if c.rank == k.Root {
				bufLen = len(k.Send)
			}
			if a.counts, a.displs, err = c.vArgs(name, "send", k.Counts, k.Displs, bufLen); err == nil {
				err = ownCount(name, "send", k.Counts, c.rank, len(k.Recv))
			}
		}
		a.count = C.int(len(k.Recv))
	case mpi.CollAlltoallv:
		if err = c.usable(name); err == nil {
			if a.counts, a.displs, err = c.vArgs(name, "send", k.Counts, k.Displs, len(k.Send)); err == nil {
				a.rcounts, a.rdispls, err = c.vArgs(name, "recv", k.RecvCounts, k.RecvDispls, len(k.Recv))
			}
		}
	case mpi.CollReduceScatterBlock:
		if err = c.collective(name, false, 0, "recv", len(k.Recv)); err == nil {
			err = needBytes(name, "send", len(k.Send), c.size*len(k.Recv), "Size()*len(recv)")
		}
		a.count = C.int(len(k.Recv) / k.Type.Size())
	case mpi.CollReduceScatter:
		err = c.reduceScatterCounts(name, k, &a)
	default:
		err = classError(name, mpi.ErrArg, fmt.Sprintf("unknown collective %v", k.Op))
	}
	if err == nil && k.Op.Reduces() {
		err = disjoint(name, k.Send, a.recv)
	}
	return a, err
}

// disjoint refuses a reduction whose send and receive buffers overlap: a
// batch does not reduce in place (the data would change from one call to
// the next, and MPI_IN_PLACE is a different algorithm in some libraries).
func disjoint(name string, send, recv []byte) error {
	if len(send) == 0 || len(recv) == 0 {
		return nil
	}
	s, r := uintptr(unsafe.Pointer(&send[0])), uintptr(unsafe.Pointer(&recv[0]))
	if s < r+uintptr(len(recv)) && r < s+uintptr(len(send)) {
		return classError(name, mpi.ErrBuffer, "send and recv overlap: a batch of reductions needs separate buffers")
	}
	return nil
}

// reduceScatterCounts checks MPI_Reduce_scatter's counts (elements)
// against the buffers.
func (c *Comm) reduceScatterCounts(name string, k mpi.CollCall, a *collC) error {
	if err := c.usable(name); err != nil {
		return err
	}
	if len(k.Counts) != c.size {
		return classError(name, mpi.ErrArg, fmt.Sprintf("counts has %d entries, want Size() = %d", len(k.Counts), c.size))
	}
	a.counts = make([]C.int, c.size)
	total := 0
	for i, n := range k.Counts {
		if n < 0 || n > mpi.MaxCount {
			return classError(name, mpi.ErrCount, fmt.Sprintf("counts[%d] = %d outside [0, mpi.MaxCount]", i, n))
		}
		a.counts[i] = C.int(n)
		total += n
	}
	es := k.Type.Size()
	if err := needBytes(name, "send", len(k.Send), total*es, "sum(counts)*dt.Size()"); err != nil {
		return err
	}
	return needBytes(name, "recv", len(k.Recv), k.Counts[c.rank]*es, "counts[rank]*dt.Size()")
}

// collName is the MPI function of a collective, for errors.
func collName(o mpi.CollOp) string {
	switch o {
	case mpi.CollReduceScatterBlock:
		return "MPI_Reduce_scatter_block"
	case mpi.CollReduceScatter:
		return "MPI_Reduce_scatter"
	}
	s := o.String()
	return "MPI_" + string(s[0]-'a'+'A') + s[1:]
}

// CollBatch implements mpi.CollKernels: iters calls per repetition, the
// whole batch in C (harness.c).
func (c *Comm) CollBatch(b mpi.Batch, k mpi.CollCall, iters int) error {
	name := collName(k.Op)
	a, err := c.collArgs(name, k)
	if err != nil {
		return err
	}
	ba, err := c.batchOf(name, b)
	if err != nil {
		return err
	}
	if iters < 0 || iters > mpi.MaxCount {
		return classError(name, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	if err := enter(name); err != nil {
		return err
	}
	r := C.cc_coll_batch(c.h, ba.reps, ba.sync, ba.rank0, ba.me, ba.own, ba.samples,
		a.op, a.dtype, a.rop, a.root, a.count, ptr(a.send), rptr(a.recv),
		ints(a.counts), ints(a.displs), ints(a.rcounts), ints(a.rdispls), C.int(iters))
	leave()
	return batchError(name, r)
}

// OverlapBatch implements mpi.OverlapKernels: OSU's overlap loop in C
// (harness.c), the non-blocking form of call per repetition.
func (c *Comm) OverlapBatch(b mpi.Batch, k mpi.CollCall, compute float64, probes int, cpu, test []float64) error {
	name := "MPI_I" + strings.ToLower(collName(k.Op)[4:5]) + collName(k.Op)[5:]
	if !k.Op.NonBlocking() {
		return classError(name, mpi.ErrArg, fmt.Sprintf("collective %v has no non-blocking form", k.Op))
	}
	if err := c.Missing(mpi.FeatureNonBlocking); err != nil {
		return classError(name, mpi.ErrOther, err.Error())
	}
	a, err := c.collArgs(name, k)
	if err != nil {
		return err
	}
	ba, err := c.batchOf(name, b)
	if err != nil {
		return err
	}
	switch {
	case !(compute >= 0) || math.IsInf(compute, 0):
		return classError(name, mpi.ErrArg, fmt.Sprintf("compute %g s: want a finite number >= 0", compute))
	case probes < 0 || probes > mpi.MaxCount:
		return classError(name, mpi.ErrArg, fmt.Sprintf("probes %d outside [0, %d]", probes, mpi.MaxCount))
	case len(cpu) < len(b.Own) || len(test) < len(b.Own):
		return classError(name, mpi.ErrArg, fmt.Sprintf("cpu and test hold %d and %d times for %d repetitions", len(cpu), len(test), len(b.Own)))
	}
	if err := enter(name); err != nil {
		return err
	}
	r := C.cc_overlap_batch(c.h, ba.reps, ba.sync, ba.rank0, ba.me, ba.own, ba.samples,
		a.op, a.dtype, a.rop, a.root, a.count, ptr(a.send), rptr(a.recv),
		ints(a.counts), ints(a.displs), ints(a.rcounts), ints(a.rdispls), C.double(compute), C.int(probes),
		(*C.double)(unsafe.Pointer(&cpu[0])), (*C.double)(unsafe.Pointer(&test[0])))
	leave()
	return batchError(name, r)
}

// DummyCompute runs OSU's dummy compute kernel in C for seconds (what
// OverlapBatch computes between the start and the wait).
func DummyCompute(seconds float64) { C.cc_dummy_compute(C.double(seconds)) }
