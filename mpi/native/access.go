package native

// #include "harness.h"
// #cgo noescape cc_access_run
// #cgo nocallback cc_access_run
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// access runs repetitions of paper 000's access engine in C (access.c),
// one cgo crossing per repetition: the Go request path costs several times
// what MPI takes per message (BenchmarkSelfRoundTrip: 650 ns against 99 ns
// for the same loop in C), which a k-k-access pays on every packet.
type access struct {
	c       *Comm
	a       *C.cc_access
	spec    mpi.AccessSpec
	bufs    mpi.AccessBuffers
	targets []C.int
	served  []mpi.AccessServed
}

// NewAccess implements mpi.AccessKernel.
func (c *Comm) NewAccess(spec mpi.AccessSpec) (mpi.AccessRunner, error) {
	const op = "NewAccess"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	reqLen, replyLen := mpi.AccessHeaderBytes, spec.L // int: no overflow before the check below
	if spec.Write {
		reqLen, replyLen = mpi.AccessHeaderBytes+spec.L, mpi.AccessHeaderBytes
	}
	steps := 1
	if spec.KeepReplies {
		steps = spec.MaxSteps
	}
	// Every value must fit a C int before it is converted, and k and the
	// steps the 16 bits the sequence number gives them; sizes are checked
	// in float64 so that no product can wrap.
	const maxIndex = 1<<16 - 1
	switch {
	case spec.K < 1 || spec.K > maxIndex || spec.MaxSteps < 1 || spec.MaxSteps > maxIndex || spec.Slots < 1 || spec.Slots > mpi.MaxCount || spec.L < 0:
		return nil, classError(op, mpi.ErrArg, fmt.Sprintf("k %d, l %d, slots %d, steps %d: need k and steps in 1..%d, slots in 1..%d and l >= 0",
			spec.K, spec.L, spec.Slots, spec.MaxSteps, maxIndex, mpi.MaxCount))
	case spec.L > mpi.MaxCount-mpi.AccessHeaderBytes ||
		float64(spec.Slots)*float64(spec.L) > 1<<40 || float64(spec.K)*float64(replyLen)*float64(steps) > 1<<40:
		return nil, classError(op, mpi.ErrCount, fmt.Sprintf("k %d, l %d, slots %d, steps %d: a message over mpi.MaxCount or buffers over 1 TiB",
			spec.K, spec.L, spec.Slots, steps))
	}
	a := C.cc_access_new(c.h, cbool(spec.Write), C.int(spec.K), C.int(spec.L), C.int(spec.Slots), C.int(spec.MaxSteps),
		cbool(spec.KeepReplies), C.int(spec.ReqTag), C.int(spec.ReplyTag))
	if a == nil {
		return nil, classError(op, mpi.ErrOther, "out of memory for the access buffers")
	}
	// The buffers are C memory: Go may read and write them through these
	// views, and no cgo pointer rule applies to what MPI keeps.
	view := func(p *C.char, n int) []byte {
		if n == 0 {
			return []byte{}
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
	}
	return &access{
		c:    c,
		a:    a,
		spec: spec,
		bufs: mpi.AccessBuffers{
			Mem:     view(a.mem, spec.Slots*spec.L),
			ReqMsgs: view(a.req_msgs, spec.K*reqLen),
			Replies: view(a.replies, spec.K*replyLen*steps),
		},
	}, nil
}

func (x *access) Buffers() mpi.AccessBuffers { return x.bufs }

func (x *access) Served() []mpi.AccessServed { return x.served }

// Close frees the buffers, unless an error left requests in flight on them
// (then they stay allocated, as MPI may still write them).
func (x *access) Close() {
	if x.a != nil {
		C.cc_access_free(x.a)
		x.a = nil
		x.bufs = mpi.AccessBuffers{}
	}
}

// Run implements mpi.AccessRunner.
func (x *access) Run(run mpi.AccessRun) (float64, error) {
	const op = "Access"
	if x.a == nil {
		return 0, classError(op, mpi.ErrOther, "the access runner is closed or broken")
	}
	x.targets = x.targets[:0]
	if err := x.appendTargets(op, run); err != nil {
		return 0, err
	}
	if err := enter(op); err != nil {
		return 0, err
	}
	r := C.cc_access_run(x.a, &x.targets[0], C.int(len(run.Targets)/x.spec.K), C.int(run.Slot), C.int(run.Incoming),
		C.ulonglong(run.Rep), cbool(run.CheckSlot))
	leave()
	if r.rc == C.CC_ERR_WRONG_THREAD {
		return 0, wrongThread(op)
	}
	if r.rc != 0 || r.fault != 0 {
		return 0, x.broken(op, r.rc, r)
	}
	x.collectServed()
	return float64(r.seconds), nil
}

// appendTargets checks run's targets and incoming count and appends the
// targets to x.targets, the kernel's input.
func (x *access) appendTargets(op string, run mpi.AccessRun) error {
	k := x.spec.K
	if len(run.Targets)%k != 0 || len(run.Targets)/k > x.spec.MaxSteps || len(run.Targets) == 0 {
		return classError(op, mpi.ErrArg, fmt.Sprintf("%d targets: want a whole number of rows of k = %d, at most %d rows", len(run.Targets), k, x.spec.MaxSteps))
	}
	if run.Incoming < 0 || run.Incoming > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("incoming %d outside [0, %d]", run.Incoming, mpi.MaxCount))
	}
	// A row is idle (its first entry negative; the kernel reads no more of
	// it) or all ranks of the communicator: a negative rank would reach MPI
	// as a wildcard or MPI_PROC_NULL.
	for i := 0; i < len(run.Targets); i += k {
		row := run.Targets[i : i+k]
		for _, t := range row {
			if row[0] >= 0 && (t < 0 || t >= x.c.size) {
				return classError(op, mpi.ErrRank, fmt.Sprintf("target %d outside [0, %d) in access %d", t, x.c.size, i/k))
			}
			x.targets = append(x.targets, C.int(t))
		}
	}
	return nil
}

// broken ends the runner after a failed repetition (an MPI error rc, or
// the fault r reports) and returns the error. A broken runner keeps its
// buffers (MPI may still use them); otherwise nothing is in flight and
// they are freed.
func (x *access) broken(op string, rc C.int, r C.cc_access_result) error {
	C.cc_access_free(x.a)
	x.a = nil
	x.bufs = mpi.AccessBuffers{}
	if rc != 0 && rc != C.CC_ERR_FAULT {
		return newError(op, rc)
	}
	return &mpi.AccessFault{Kind: mpi.AccessFaultKind(r.fault), Rank: int(r.rank), Count: int(r.count), Want: int(r.want), Slot: uint64(r.slot)}
}

// collectServed copies the requests the last repetition served.
func (x *access) collectServed() {
	served := unsafe.Slice(x.a.served, int(x.a.nserved))
	x.served = x.served[:0]
	for _, s := range served {
		x.served = append(x.served, mpi.AccessServed{Source: int(s.source), Slot: uint64(s.slot), Seq: uint64(s.seq)})
	}
}
