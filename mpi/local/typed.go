package local

import (
	"runtime"
	"slices"

	"github.com/commcost/commcost/mpi"
)

// Reductions on byte buffers of any element type (mpi.Reducer) and MPI-3's
// non-blocking collectives (mpi.NonBlockingCollectives). A non-blocking
// collective joins its round at once and waits for it at Wait: the round is
// executed when its last member joins, blocking or not, so the data has
// moved by the time every member has started the call.

var (
	_ mpi.Reducer                = (*comm)(nil)
	_ mpi.NonBlockingCollectives = (*comm)(nil)
)

// The non-blocking calls, and the blocking call each one executes as.
var nonBlocking = map[string]string{
	"MPI_Ibarrier": opBarrier, "MPI_Ibcast": opBcast, "MPI_Igather": opGather, "MPI_Igatherv": opGatherv,
	"MPI_Iscatter": opScatter, "MPI_Iscatterv": opScatterv, "MPI_Iallgather": opAllgather,
	"MPI_Iallgatherv": opAllgatherv, "MPI_Ialltoall": opAlltoall, "MPI_Ialltoallv": opAlltoallv,
	"MPI_Ireduce": opReduce, "MPI_Iallreduce": opAllreduce,
}

// blockingOf is the blocking collective that op executes as.
func blockingOf(op string) string {
	if b, ok := nonBlocking[op]; ok {
		return b
	}
	return op
}

// typedPart builds a byte-buffer reduction part with the rank's own checks:
// the root, the element type and operation, whole elements, and a receive
// buffer that can hold what this rank gets (need bytes, where it gets any).
func (c *comm) typedPart(op string, rooted bool, root int, send, recv []byte, dt mpi.Datatype, redOp mpi.Op, need int) *part {
	p := &part{op: op, redOp: redOp, typed: true, dt: dt, bs: send, br: recv}
	if rooted {
		p = c.rooted(op, root)
		p.redOp, p.typed, p.dt, p.bs, p.br = redOp, true, dt, send, recv
	}
	if p.err != nil {
		return p
	}
	if err := mpi.CheckTyped(op, dt, redOp, send, recv); err != nil {
		p.err = err.(*mpi.Error)
		return p
	}
	if need > len(recv) {
		p.err = errorf(op, mpi.ErrCount, "receive buffer of %d bytes cannot hold %d", len(recv), need)
	}
	return p
}

// reduceBytes is execReduce on byte buffers: the contributions folded in
// rank order, as reduce does.
func reduceBytes(op string, ps []*part, all bool) *mpi.Error {
	m := len(ps[0].bs)
	for i, p := range ps {
		if len(p.bs) != m {
			return truncated(op, "rank %d reduces %d bytes, rank 0 reduces %d", i, len(p.bs), m)
		}
	}
	acc := slices.Clone(ps[0].bs)
	for _, p := range ps[1:] {
		mpi.ReduceInto(acc, p.bs, p.dt, p.redOp)
	}
	for i, p := range ps {
		if all || i == p.root {
			copy(p.br, acc)
		}
	}
	return nil
}

// execReduceScatter is MPI_Reduce_scatter_block (block) or
// MPI_Reduce_scatter: every rank's send vector folded in rank order, and
// rank i's part of the result copied to it.
func execReduceScatter(ps []*part, block bool) *mpi.Error {
	op := ps[0].op
	n, es := len(ps), ps[0].dt.Size()
	offs := make([]int, n+1) // byte offsets of the ranks' parts
	if block {
		blk := len(ps[0].br)
		for i, p := range ps {
			if len(p.br) != blk {
				return truncated(op, "rank %d receives %d bytes, rank 0 receives %d: all must receive the same", i, len(p.br), blk)
			}
		}
		for i := range n {
			offs[i+1] = offs[i] + blk
		}
	} else {
		for i, p := range ps {
			if !slices.Equal(p.rsCounts, ps[0].rsCounts) {
				return errorf(op, mpi.ErrArg, "ranks disagree on the counts: rank 0 passed %v, rank %d passed %v", ps[0].rsCounts, i, p.rsCounts)
			}
		}
		for i, k := range ps[0].rsCounts {
			offs[i+1] = offs[i] + k*es
		}
	}
	total := offs[n]
	acc := slices.Clone(ps[0].bs[:total])
	for _, p := range ps[1:] {
		mpi.ReduceInto(acc, p.bs[:total], p.dt, p.redOp)
	}
	for i, p := range ps {
		copy(p.br, acc[offs[i]:offs[i+1]])
	}
	return nil
}

// Reduce implements mpi.Reducer: MPI_Reduce; recv is written at root only.
func (c *comm) Reduce(send, recv []byte, dt mpi.Datatype, op mpi.Op, root int) error {
	return c.collective(c.reducePart(opReduce, send, recv, dt, op, root))
}

func (c *comm) reducePart(name string, send, recv []byte, dt mpi.Datatype, op mpi.Op, root int) *part {
	need := 0
	if c.rank == root {
		need = len(send)
	}
	return c.typedPart(name, true, root, send, recv, dt, op, need)
}

// Allreduce implements mpi.Reducer: MPI_Allreduce.
func (c *comm) Allreduce(send, recv []byte, dt mpi.Datatype, op mpi.Op) error {
	return c.collective(c.typedPart(opAllreduce, false, 0, send, recv, dt, op, len(send)))
}

// ReduceScatterBlock implements mpi.Reducer: MPI_Reduce_scatter_block.
func (c *comm) ReduceScatterBlock(send, recv []byte, dt mpi.Datatype, op mpi.Op) error {
	p := c.typedPart(opReduceScatterBlock, false, 0, send, recv, dt, op, 0)
	if p.err == nil && len(send) < c.s.size*len(recv) {
		p.err = errorf(opReduceScatterBlock, mpi.ErrCount, "send buffer of %d bytes cannot hold %d blocks of %d bytes", len(send), c.s.size, len(recv))
	}
	return c.collective(p)
}

// ReduceScatter implements mpi.Reducer: MPI_Reduce_scatter with counts in
// elements, the same on every rank.
func (c *comm) ReduceScatter(send, recv []byte, counts []int, dt mpi.Datatype, op mpi.Op) error {
	p := c.typedPart(opReduceScatter, false, 0, send, recv, dt, op, 0)
	p.rsCounts = counts
	if p.err == nil {
		p.err = c.checkReduceScatter(counts, len(send), len(recv), dt)
	}
	return c.collective(p)
}

// checkReduceScatter checks MPI_Reduce_scatter's counts against the
// buffers.
func (c *comm) checkReduceScatter(counts []int, sendLen, recvLen int, dt mpi.Datatype) *mpi.Error {
	if len(counts) != c.s.size {
		return errorf(opReduceScatter, mpi.ErrArg, "counts has %d entries, communicator size %d", len(counts), c.s.size)
	}
	total := 0
	for i, k := range counts {
		if k < 0 || k > mpi.MaxCount {
			return errorf(opReduceScatter, mpi.ErrCount, "invalid count: counts[%d] = %d", i, k)
		}
		total += k
	}
	es := dt.Size()
	switch {
	case sendLen < total*es:
		return errorf(opReduceScatter, mpi.ErrCount, "send buffer of %d bytes cannot hold the %d elements of the counts", sendLen, total)
	case recvLen < counts[c.rank]*es:
		return errorf(opReduceScatter, mpi.ErrCount, "receive buffer of %d bytes cannot hold counts[%d] = %d elements", recvLen, c.rank, counts[c.rank])
	}
	return nil
}

// collRequest is a non-blocking collective: the round it joined.
type collRequest struct {
	c *comm
	r *round
	p *part
}

// Wait blocks until the round has been executed; a collective's status is
// empty.
func (q *collRequest) Wait() (mpi.Status, error) {
	return mpi.Status{}, q.c.await(q.r, q.p)
}

// Test reports whether the round has been executed, yielding when not (as
// MPI's polling drives progress).
func (q *collRequest) Test() (bool, mpi.Status, error) {
	if !q.c.executed(q.r) {
		runtime.Gosched()
		return false, mpi.Status{}, nil
	}
	return true, mpi.Status{}, q.r.result(q.c.rank)
}

// start joins p's round and returns its request. An argument error the
// rank finds itself is returned at once, without joining, as the native
// backend returns it from the posting call.
func (c *comm) start(p *part) (mpi.Request, error) {
	if p.err != nil {
		return nil, p.err
	}
	r, err := c.join(p)
	if err != nil {
		return nil, err
	}
	return &collRequest{c: c, r: r, p: p}, nil
}

// named returns p renamed as the non-blocking call op.
func named(p *part, op string) *part {
	p.op = op
	if p.err != nil {
		e := *p.err
		e.Op = op
		p.err = &e
	}
	return p
}

// partOf runs a blocking call's argument checks without joining a round:
// the call builds its part and hands it to capture instead of collective.
func (c *comm) partOf(call func(*comm) error) *part {
	var got *part
	cc := *c
	cc.capture = func(p *part) { got = p }
	_ = call(&cc)
	return got
}

// Ibarrier implements mpi.NonBlockingCollectives.
func (c *comm) Ibarrier() (mpi.Request, error) {
	return c.start(&part{op: "MPI_Ibarrier"})
}

// Ibcast implements mpi.NonBlockingCollectives.
func (c *comm) Ibcast(buf []byte, root int) (mpi.Request, error) {
	return c.startAs("MPI_Ibcast", func(cc *comm) error { return cc.Bcast(buf, root) })
}

// Igather implements mpi.NonBlockingCollectives.
func (c *comm) Igather(send, recv []byte, root int) (mpi.Request, error) {
	return c.startAs("MPI_Igather", func(cc *comm) error { return cc.Gather(send, recv, root) })
}

// Igatherv implements mpi.NonBlockingCollectives.
func (c *comm) Igatherv(send, recv []byte, counts, displs []int, root int) (mpi.Request, error) {
	return c.startAs("MPI_Igatherv", func(cc *comm) error { return cc.Gatherv(send, recv, counts, displs, root) })
}

// Iscatter implements mpi.NonBlockingCollectives.
func (c *comm) Iscatter(send, recv []byte, root int) (mpi.Request, error) {
	return c.startAs("MPI_Iscatter", func(cc *comm) error { return cc.Scatter(send, recv, root) })
}

// Iscatterv implements mpi.NonBlockingCollectives.
func (c *comm) Iscatterv(send []byte, counts, displs []int, recv []byte, root int) (mpi.Request, error) {
	return c.startAs("MPI_Iscatterv", func(cc *comm) error { return cc.Scatterv(send, counts, displs, recv, root) })
}

// Iallgather implements mpi.NonBlockingCollectives.
func (c *comm) Iallgather(send, recv []byte) (mpi.Request, error) {
	return c.startAs("MPI_Iallgather", func(cc *comm) error { return cc.Allgather(send, recv) })
}

// Iallgatherv implements mpi.NonBlockingCollectives.
func (c *comm) Iallgatherv(send, recv []byte, counts, displs []int) (mpi.Request, error) {
	return c.startAs("MPI_Iallgatherv", func(cc *comm) error { return cc.Allgatherv(send, recv, counts, displs) })
}

// Ialltoall implements mpi.NonBlockingCollectives.
func (c *comm) Ialltoall(send, recv []byte) (mpi.Request, error) {
	return c.startAs("MPI_Ialltoall", func(cc *comm) error { return cc.Alltoall(send, recv) })
}

// Ialltoallv implements mpi.NonBlockingCollectives.
func (c *comm) Ialltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) (mpi.Request, error) {
	return c.startAs("MPI_Ialltoallv", func(cc *comm) error {
		return cc.Alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
	})
}

// Ireduce implements mpi.NonBlockingCollectives.
func (c *comm) Ireduce(send, recv []byte, dt mpi.Datatype, op mpi.Op, root int) (mpi.Request, error) {
	return c.start(c.reducePart("MPI_Ireduce", send, recv, dt, op, root))
}

// Iallreduce implements mpi.NonBlockingCollectives.
func (c *comm) Iallreduce(send, recv []byte, dt mpi.Datatype, op mpi.Op) (mpi.Request, error) {
	return c.start(c.typedPart("MPI_Iallreduce", false, 0, send, recv, dt, op, len(send)))
}

// startAs starts the non-blocking form op of a blocking call: the call's
// own part, with its argument checks, renamed.
func (c *comm) startAs(op string, call func(*comm) error) (mpi.Request, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	return c.start(named(c.partOf(call), op))
}

// ReduceLocal implements mpi.Reducer: MPI_Reduce_local, in Go.
func (c *comm) ReduceLocal(in, inout []byte, dt mpi.Datatype, op mpi.Op) error {
	const name = "MPI_Reduce_local"
	if err := c.check(name); err != nil {
		return err
	}
	if err := mpi.CheckTyped(name, dt, op, in, inout); err != nil {
		return err
	}
	if len(in) != len(inout) {
		return errorf(name, mpi.ErrCount, "in holds %d bytes, inout %d: want equal lengths", len(in), len(inout))
	}
	mpi.ReduceInto(inout, in, dt, op)
	return nil
}
