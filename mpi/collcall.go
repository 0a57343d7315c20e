package mpi

import "fmt"

// CollOp is one of MPI's collectives, as a pattern's kernel names it.
type CollOp uint8

// The collectives. Every one has a non-blocking form (MPI-3) except the
// reduce-scatters, which OSU has no non-blocking benchmark of.
const (
	CollBarrier            CollOp = iota + 1 // MPI_Barrier
	CollBcast                                // MPI_Bcast of Send from Root
	CollReduce                               // MPI_Reduce of Send into Recv at Root
	CollAllreduce                            // MPI_Allreduce of Send into Recv
	CollGather                               // MPI_Gather of Send into Recv at Root
	CollGatherv                              // MPI_Gatherv: Recv's blocks at Root by Counts, Displs
	CollScatter                              // MPI_Scatter of Send at Root into Recv
	CollScatterv                             // MPI_Scatterv: Send's blocks at Root by Counts, Displs
	CollAllgather                            // MPI_Allgather of Send into Recv
	CollAllgatherv                           // MPI_Allgatherv: Recv's blocks by Counts, Displs
	CollAlltoall                             // MPI_Alltoall of Send into Recv
	CollAlltoallv                            // MPI_Alltoallv: Send by Counts, Displs; Recv by RecvCounts, RecvDispls
	CollReduceScatterBlock                   // MPI_Reduce_scatter_block: len(Recv) bytes per rank
	CollReduceScatter                        // MPI_Reduce_scatter: Counts elements per rank
	collEnd
)

var collNames = [...]string{CollBarrier: "barrier", CollBcast: "bcast", CollReduce: "reduce", CollAllreduce: "allreduce",
	CollGather: "gather", CollGatherv: "gatherv", CollScatter: "scatter", CollScatterv: "scatterv",
	CollAllgather: "allgather", CollAllgatherv: "allgatherv", CollAlltoall: "alltoall", CollAlltoallv: "alltoallv",
	CollReduceScatterBlock: "reduce_scatter_block", CollReduceScatter: "reduce_scatter"}

// CollOps lists every collective in the order of its constant.
func CollOps() []CollOp {
	out := make([]CollOp, 0, collEnd-1)
	for o := CollBarrier; o < collEnd; o++ {
		out = append(out, o)
	}
	return out
}

func (o CollOp) String() string {
	if o > 0 && o < collEnd {
		return collNames[o]
	}
	return fmt.Sprintf("CollOp(%d)", int(o))
}

// ParseCollOp reads a collective's name as String writes it.
func ParseCollOp(s string) (CollOp, error) {
	for o := CollBarrier; o < collEnd; o++ {
		if collNames[o] == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("collective %q: accepted values are barrier, bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, reduce_scatter_block and reduce_scatter", s)
}

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (o *CollOp) UnmarshalText(b []byte) error {
	v, err := ParseCollOp(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (o CollOp) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Reduces reports whether o combines data (takes Type and Reduce).
func (o CollOp) Reduces() bool {
	switch o {
	case CollReduce, CollAllreduce, CollReduceScatterBlock, CollReduceScatter:
		return true
	}
	return false
}

// Rooted reports whether o has a root.
func (o CollOp) Rooted() bool {
	switch o {
	case CollBcast, CollReduce, CollGather, CollGatherv, CollScatter, CollScatterv:
		return true
	}
	return false
}

// NonBlocking reports whether o has a non-blocking form here.
func (o CollOp) NonBlocking() bool {
	return o > 0 && o < collEnd && o != CollReduceScatterBlock && o != CollReduceScatter
}

// CollCall is one collective call with its arguments, built once by a
// pattern and run many times: by a backend's kernel (CollKernels), or
// through the Comm's own methods (Do, Start).
type CollCall struct {
	Op         CollOp
	Send, Recv []byte
	Type       Datatype // element type of a reduction
	Reduce     Op       // operation of a reduction
	Root       int
	// Counts and Displs are the per-rank byte counts and displacements of
	// the v-forms (the receive side of gatherv and allgatherv, the send
	// side of scatterv and alltoallv), or reduce_scatter's element counts;
	// RecvCounts and RecvDispls are alltoallv's receive side.
	Counts, Displs, RecvCounts, RecvDispls []int
}

// Do runs the call once through c's own methods; a reduction needs a
// Reducer.
func (k CollCall) Do(c Comm) error {
	switch k.Op {
	case CollBarrier:
		return c.Barrier()
	case CollBcast:
		return c.Bcast(k.Send, k.Root)
	case CollGather:
		return c.Gather(k.Send, k.Recv, k.Root)
	case CollGatherv:
		return c.Gatherv(k.Send, k.Recv, k.Counts, k.Displs, k.Root)
	case CollScatter:
		return c.Scatter(k.Send, k.Recv, k.Root)
	case CollScatterv:
		return c.Scatterv(k.Send, k.Counts, k.Displs, k.Recv, k.Root)
	case CollAllgather:
		return c.Allgather(k.Send, k.Recv)
	case CollAllgatherv:
		return c.Allgatherv(k.Send, k.Recv, k.Counts, k.Displs)
	case CollAlltoall:
		return c.Alltoall(k.Send, k.Recv)
	case CollAlltoallv:
		return c.Alltoallv(k.Send, k.Counts, k.Displs, k.Recv, k.RecvCounts, k.RecvDispls)
	}
	red, ok := c.(Reducer)
	if !ok {
		return fmt.Errorf("%v: the %s backend has no %s", k.Op, c.Backend(), FeatureReducer)
	}
	switch k.Op {
	case CollReduce:
		return red.Reduce(k.Send, k.Recv, k.Type, k.Reduce, k.Root)
	case CollAllreduce:
		return red.Allreduce(k.Send, k.Recv, k.Type, k.Reduce)
	case CollReduceScatterBlock:
		return red.ReduceScatterBlock(k.Send, k.Recv, k.Type, k.Reduce)
	case CollReduceScatter:
		return red.ReduceScatter(k.Send, k.Recv, k.Counts, k.Type, k.Reduce)
	}
	return fmt.Errorf("collective %v: unknown", k.Op)
}

// Start starts the call's non-blocking form on nb.
func (k CollCall) Start(nb NonBlockingCollectives) (Request, error) {
	switch k.Op {
	case CollBarrier:
		return nb.Ibarrier()
	case CollBcast:
		return nb.Ibcast(k.Send, k.Root)
	case CollReduce:
		return nb.Ireduce(k.Send, k.Recv, k.Type, k.Reduce, k.Root)
	case CollAllreduce:
		return nb.Iallreduce(k.Send, k.Recv, k.Type, k.Reduce)
	case CollGather:
		return nb.Igather(k.Send, k.Recv, k.Root)
	case CollGatherv:
		return nb.Igatherv(k.Send, k.Recv, k.Counts, k.Displs, k.Root)
	case CollScatter:
		return nb.Iscatter(k.Send, k.Recv, k.Root)
	case CollScatterv:
		return nb.Iscatterv(k.Send, k.Counts, k.Displs, k.Recv, k.Root)
	case CollAllgather:
		return nb.Iallgather(k.Send, k.Recv)
	case CollAllgatherv:
		return nb.Iallgatherv(k.Send, k.Recv, k.Counts, k.Displs)
	case CollAlltoall:
		return nb.Ialltoall(k.Send, k.Recv)
	case CollAlltoallv:
		return nb.Ialltoallv(k.Send, k.Counts, k.Displs, k.Recv, k.RecvCounts, k.RecvDispls)
	}
	return nil, fmt.Errorf("collective %v has no non-blocking form", k.Op)
}

// CollKernels is implemented by backends that run a collective's timed
// loop in the MPI library's language, a batch of repetitions per foreign
// call (BatchKernels' harness: barrier, timed kernel, max-reduction).
type CollKernels interface {
	// CollBatch runs iters calls back to back per repetition. The call's
	// arguments are checked once, before the batch, as Do would check
	// them.
	CollBatch(b Batch, call CollCall, iters int) error
}

// OverlapKernels is implemented by backends that run OSU 6.1's overlap
// measurement of a non-blocking collective (osu_iallreduce.c and its
// siblings) in the MPI library's language, a batch of repetitions per
// foreign call.
type OverlapKernels interface {
	// OverlapBatch runs one overlapped call per repetition: start the
	// call's non-blocking form, compute for compute seconds with OSU's
	// dummy kernel (DummyCompute), calling MPI_Test on the request after
	// each of probes equal parts of it when probes > 0, then wait; the
	// repetition's own time is from the start to the end of the wait.
	// cpu[i] and test[i] (len(b.Own) each) receive this rank's compute
	// time (its MPI_Test calls included, as OSU times it) and MPI_Test
	// time of repetition i. compute 0 is OSU's pure communication
	// measurement: start, then wait at once.
	OverlapBatch(b Batch, call CollCall, compute float64, probes int, cpu, test []float64) error
}

// DummyDim is the order of OSU's dummy compute kernel (osu_util_mpi.c
// compute_on_host): x[i] += a[i][j] a[j][i] + y[j] over a DummyDim x
// DummyDim float matrix, repeated until the target time has passed on the
// clock.
const DummyDim = 25
