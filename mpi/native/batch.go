package native

// #include "harness.h"
// #cgo noescape cc_pingpong_batch
// #cgo nocallback cc_pingpong_batch
// #cgo noescape cc_bandwidth_batch
// #cgo nocallback cc_bandwidth_batch
// #cgo noescape cc_prtt_batch
// #cgo nocallback cc_prtt_batch
// #cgo noescape cc_alltoall_batch
// #cgo nocallback cc_alltoall_batch
// #cgo noescape cc_steps_batch
// #cgo nocallback cc_steps_batch
// #cgo noescape cc_access_batch
// #cgo nocallback cc_access_batch
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// The batch kernels (mpi.BatchKernels, mpi.AccessBatcher): the kernels of
// kernels.go and access.go, a batch of repetitions per cgo call with the
// harness's barrier and max-reduction inside C (harness.c). Buffers are Go
// memory passed for the duration of the call (the cgo rules allow it: they
// hold no Go pointers, and C keeps none after returning).

var (
	_ mpi.BatchKernels  = (*Comm)(nil)
	_ mpi.AccessBatcher = (*access)(nil)
)

// batchArgs are the C arguments every batch function starts with.
type batchArgs struct {
	reps, sync, rank0, me C.int
	own, samples          *C.double
}

// batchOf checks b and converts it. The samples pointer is own's when b
// does not synchronise (C then never writes it).
func (c *Comm) batchOf(op string, b mpi.Batch) (batchArgs, error) {
	if err := c.usable(op); err != nil {
		return batchArgs{}, err
	}
	if err := b.Check(); err != nil {
		return batchArgs{}, classError(op, mpi.ErrArg, err.Error())
	}
	own := (*C.double)(unsafe.Pointer(&b.Own[0]))
	samples := own
	if b.Sync {
		samples = (*C.double)(unsafe.Pointer(&b.Samples[0]))
	}
	return batchArgs{C.int(len(b.Own)), cbool(b.Sync), cbool(b.Rank0), C.int(c.rank), own, samples}, nil
}

// batchError converts a batch's result.
func batchError(op string, r C.cc_batch_result) error {
	switch {
	case r.rc != 0:
		return newError(op, r.rc)
	case r.peer_failed != 0:
		return fmt.Errorf("%s: repetition %d: %w", op, int(r.done), mpi.ErrPeerFailed)
	}
	return nil
}

// idlePeer checks a two-party kernel's peer: another rank, or mpi.NoPeer.
func (c *Comm) idlePeer(op string, buf []byte, peer, iters int) error {
	if peer == mpi.NoPeer {
		if err := checkCount(op, "buffer", len(buf)); err != nil {
			return err
		}
		if iters < 0 || iters > mpi.MaxCount {
			return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
		}
		return nil
	}
	return c.kernelArgs(op, buf, peer, iters)
}

// exchangeBatchOf is batchOf for a kernel that sends send to peer and
// receives as much back into recv: the peer, the counts and the receive
// buffer's length checked too.
func (c *Comm) exchangeBatchOf(op string, b mpi.Batch, send, recv []byte, peer, iters int) (batchArgs, error) {
	a, err := c.batchOf(op, b)
	if err != nil {
		return a, err
	}
	if err := c.idlePeer(op, send, peer, iters); err != nil {
		return a, err
	}
	if len(recv) < len(send) {
		return a, classError(op, mpi.ErrTruncate, fmt.Sprintf("receive buffer of %d bytes is shorter than the %d-byte message", len(recv), len(send)))
	}
	return a, nil
}

// PingPongBatch implements mpi.BatchKernels: PingPong per repetition.
func (c *Comm) PingPongBatch(b mpi.Batch, send, recv []byte, peer, tag, iters int, initiator bool) error {
	const op = "PingPongBatch"
	a, err := c.exchangeBatchOf(op, b, send, recv, peer, iters)
	if err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_pingpong_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples,
		ptr(send), rptr(recv), C.int(len(send)), C.int(peer), C.int(tag), C.int(iters), cbool(initiator))
	leave()
	return batchError(op, r)
}

// BandwidthBatch implements mpi.BatchKernels: Bandwidth per repetition.
func (c *Comm) BandwidthBatch(b mpi.Batch, buf []byte, peer, tag, window, iters int, sender bool) error {
	const op = "BandwidthBatch"
	a, err := c.batchOf(op, b)
	if err != nil {
		return err
	}
	if err := c.idlePeer(op, buf, peer, iters); err != nil {
		return err
	}
	if window < 1 || window > 1<<20 {
		return classError(op, mpi.ErrArg, fmt.Sprintf("window %d outside [1, %d]", window, 1<<20))
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_bandwidth_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples,
		ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag), C.int(window), C.int(iters), cbool(sender))
	leave()
	return batchError(op, r)
}

// PRTTBatch implements mpi.BatchKernels: PRTT per repetition.
func (c *Comm) PRTTBatch(b mpi.Batch, buf []byte, peer, tag, n int, delay float64, iters int, client, serverDelay bool, report mpi.PRTTReport) error {
	const op = "PRTTBatch"
	a, err := c.batchOf(op, b)
	if err != nil {
		return err
	}
	if err := c.idlePeer(op, buf, peer, iters); err != nil {
		return err
	}
	if n < 1 || n > mpi.MaxCount || !(delay >= 0) || math.IsInf(delay, 0) || report < mpi.PRTTElapsed || report > mpi.PRTTNothing {
		return classError(op, mpi.ErrArg, fmt.Sprintf("n %d, delay %g, report %d: need n in [1, %d], a finite delay >= 0 and a PRTTReport", n, delay, report, mpi.MaxCount))
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_prtt_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples,
		ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag), C.int(n), C.double(delay), C.int(iters),
		cbool(client), cbool(serverDelay), C.int(report))
	leave()
	return batchError(op, r)
}

// AllToAllBatch implements mpi.BatchKernels: AllToAllPt2Pt per repetition
// on ranks 0..n-1; the other ranks only join the barriers and reductions.
func (c *Comm) AllToAllBatch(b mpi.Batch, send, recv []byte, block, n, tag, iters int) error {
	const op = "AllToAllBatch"
	a, err := c.batchOf(op, b)
	if err != nil {
		return err
	}
	switch {
	case n < 1 || n > c.size:
		return classError(op, mpi.ErrRank, fmt.Sprintf("n = %d ranks of %d: need 1 <= n <= size", n, c.size))
	case c.rank < n && (block < 0 || block > mpi.MaxCount || len(send) < n*block || len(recv) < n*block):
		return classError(op, mpi.ErrCount, fmt.Sprintf("block %d bytes for %d ranks with buffers of %d and %d bytes", block, n, len(send), len(recv)))
	case iters < 0 || iters > mpi.MaxCount:
		return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_alltoall_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples,
		(*C.char)(ptr(send)), (*C.char)(rptr(recv)), C.int(block), C.int(n), C.int(tag), C.int(iters))
	leave()
	return batchError(op, r)
}

var stepOps = [...]C.int{
	mpi.StepSend: C.CC_STEP_SEND, mpi.StepRecv: C.CC_STEP_RECV, mpi.StepSendrecv: C.CC_STEP_SENDRECV,
	mpi.StepCopy: C.CC_STEP_COPY, mpi.StepBcast: C.CC_STEP_BCAST, mpi.StepAllgather: C.CC_STEP_ALLGATHER,
	mpi.StepScatter: C.CC_STEP_SCATTER, mpi.StepAlltoall: C.CC_STEP_ALLTOALL, mpi.StepAlltoallv: C.CC_STEP_ALLTOALLV,
}

// StepsBatch implements mpi.BatchKernels: the programs run in C, one
// switch per step, so a textbook algorithm pays MPI's cost per message and
// not a cgo crossing (BenchmarkSelfRoundTrip: about 650 ns per request
// through Go against 99 ns in C).
func (c *Comm) StepsBatch(b mpi.Batch, bufs [][]byte, progs [][]mpi.Step, iters int) error {
	const op = "StepsBatch"
	a, err := c.batchOf(op, b)
	if err != nil {
		return err
	}
	if len(progs) != 1 && len(progs) != len(b.Own) {
		return classError(op, mpi.ErrArg, fmt.Sprintf("%d programs for %d repetitions: want 1 or one per repetition", len(progs), len(b.Own)))
	}
	if iters < 0 || iters > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	lens := make([]int, len(bufs))
	for i, buf := range bufs {
		lens[i] = len(buf)
	}
	var steps []C.cc_step
	var aux []C.int
	start := make([]C.int, 0, len(progs)+1)
	for _, prog := range progs {
		if err := mpi.CheckSteps(c.size, lens, prog); err != nil {
			return classError(op, mpi.ErrArg, err.Error())
		}
		if len(steps)+len(prog) > mpi.MaxCount {
			return classError(op, mpi.ErrArg, "more than 2^31-1 steps in one batch")
		}
		start = append(start, C.int(len(steps)))
		for _, s := range prog {
			cs := C.cc_step{soff: C.longlong(s.Send.Off), roff: C.longlong(s.Recv.Off), op: stepOps[s.Op],
				sbuf: C.int(s.Send.Buf), rbuf: C.int(s.Recv.Buf), slen: C.int(s.Send.Len), rlen: C.int(s.Recv.Len),
				peer: C.int(s.Peer), from: C.int(s.From), tag: C.int(s.Tag)}
			if s.Op == mpi.StepAlltoallv {
				cs.aux = C.int(len(aux))
				for _, v := range s.Counts {
					aux = append(aux, C.int(v))
				}
			}
			steps = append(steps, cs)
		}
	}
	start = append(start, C.int(len(steps)))
	if len(steps) == 0 {
		steps = append(steps, C.cc_step{}) // a valid address for C; start says every program is empty
	}
	if len(aux) == 0 {
		aux = append(aux, 0)
	}
	// Each buffer gets its own address even when empty (see rptr): two
	// empty spans must not look like one buffer to a library's checks.
	var p [mpi.MaxStepBuffers]*C.char
	for i := range p {
		p[i] = (*C.char)(unsafe.Pointer(&C.cc_zero_buf[2*i]))
		if i < len(bufs) && len(bufs[i]) > 0 {
			p[i] = (*C.char)(unsafe.Pointer(&bufs[i][0]))
		}
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_steps_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples, p[0], p[1], p[2], p[3],
		&steps[0], &start[0], C.int(len(progs)), &aux[0], C.int(c.size), C.int(iters))
	leave()
	return batchError(op, r)
}

// RunBatch implements mpi.AccessBatcher: runs[i] is repetition i, with
// consecutive Rep numbers (the sequence numbers of repetition i are those
// of runs[0].Rep + i) and one Slot and CheckSlot for the batch.
func (x *access) RunBatch(b mpi.Batch, runs []mpi.AccessRun) error {
	const op = "AccessBatch"
	if x.a == nil {
		return classError(op, mpi.ErrOther, "the access runner is closed or broken")
	}
	a, err := x.c.batchOf(op, b)
	if err != nil {
		return err
	}
	if len(runs) != len(b.Own) {
		return classError(op, mpi.ErrArg, fmt.Sprintf("%d runs for %d repetitions", len(runs), len(b.Own)))
	}
	k := x.spec.K
	steps := len(runs[0].Targets) / k
	x.targets = x.targets[:0]
	incoming := make([]C.int, len(runs))
	for i, run := range runs {
		if run.Rep != runs[0].Rep+uint64(i) || run.Slot != runs[0].Slot || run.CheckSlot != runs[0].CheckSlot || len(run.Targets) != steps*k {
			return classError(op, mpi.ErrArg, fmt.Sprintf("run %d: want consecutive Rep numbers and the same Slot, CheckSlot and number of targets as run 0", i))
		}
		if err := x.appendTargets(op, run); err != nil {
			return err
		}
		incoming[i] = C.int(run.Incoming)
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_access_batch(x.a, a.reps, a.sync, a.rank0, a.me, a.own, a.samples, &x.targets[0], C.int(steps), &incoming[0],
		C.int(runs[0].Slot), C.ulonglong(runs[0].Rep), cbool(runs[0].CheckSlot))
	leave()
	if r.b.rc == C.CC_ERR_WRONG_THREAD {
		return wrongThread(op)
	}
	if r.b.rc != 0 {
		return x.broken(op, r.b.rc, r.fault)
	}
	x.collectServed()
	return batchError(op, r.b)
}
