package local

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/commcost/commcost/mpi"
)

// Collective operation names; they are also the round's kind.
const (
	opBarrier            = "MPI_Barrier"
	opBcast              = "MPI_Bcast"
	opGather             = "MPI_Gather"
	opGatherv            = "MPI_Gatherv"
	opAllgather          = "MPI_Allgather"
	opAllgatherv         = "MPI_Allgatherv"
	opScatter            = "MPI_Scatter"
	opScatterv           = "MPI_Scatterv"
	opAlltoall           = "MPI_Alltoall"
	opAlltoallv          = "MPI_Alltoallv"
	opReduce             = "MPI_Reduce"
	opAllreduce          = "MPI_Allreduce"
	opReduceScatterBlock = "MPI_Reduce_scatter_block"
	opReduceScatter      = "MPI_Reduce_scatter"
	opSplit              = "MPI_Comm_split"
	opDup                = "MPI_Comm_dup"
)

// part is one rank's arguments to a collective, and its result.
type part struct {
	op     string
	rooted bool
	root   int
	send   []byte
	recv   []byte
	// counts and displs: Gatherv/Allgatherv receive side, Scatterv and
	// Alltoallv send side; rcounts and rdispls: Alltoallv receive side.
	counts, displs   []int
	rcounts, rdispls []int
	// Reductions carry one of the two element types.
	f64s, f64r []float64
	i64s, i64r []int64
	isInt      bool
	redOp      mpi.Op
	// Byte-buffer reductions (mpi.Reducer): typed is set, bs and br are
	// the send and receive buffers of elements of dt; rsCounts are
	// MPI_Reduce_scatter's element counts.
	typed      bool
	dt         mpi.Datatype
	bs, br     []byte
	rsCounts   []int
	color, key int

	err     *mpi.Error // argument error found by the rank itself
	newComm *comm      // Split and Dup result
	winSize int        // MPI_Win_allocate: this rank's bytes
	newWin  *lwin      // MPI_Win_allocate result
}

// round is one collective call of every member of a communicator.
type round struct {
	parts   []*part
	arrived int
	wps     []waitPoint
	err     []*mpi.Error
	done    bool // executed (guarded by collMu)
}

// collective runs p as c's next collective call: it joins the round and
// waits until the round has been executed.
func (c *comm) collective(p *part) error {
	if c.capture != nil {
		c.capture(p)
		return nil
	}
	r, err := c.join(p)
	if err != nil {
		return err
	}
	return c.await(r, p)
}

// join adds p to c's next round (the k-th collective call of every member
// meets the others' k-th, blocking or not). The last rank to arrive runs the
// operation for everyone, under collMu, and wakes the ranks already waiting
// for it. join never blocks for other ranks: a non-blocking collective is a
// join now and an await at its Wait.
func (c *comm) join(p *part) (*round, error) {
	if err := c.check(p.op); err != nil {
		return nil, err
	}
	s, w := c.s, c.s.w
	s.collMu.Lock()
	defer s.collMu.Unlock()
	if w.aborted.Load() {
		return nil, c.abortError(p.op)
	}
	seq := c.seq
	r := s.rounds[seq]
	if r == nil {
		r = &round{parts: make([]*part, s.size), wps: make([]waitPoint, s.size)}
		if s.rounds == nil {
			s.rounds = map[uint64]*round{}
		}
		s.rounds[seq] = r
	}
	if r.parts[c.rank] != nil {
		return nil, errorf(p.op, mpi.ErrOther, "rank %d entered a collective on communicator %d while in another one (concurrent use of a Comm)", c.rank, s.id)
	}
	c.seq++
	r.parts[c.rank] = p
	r.arrived++
	if r.arrived == s.size {
		delete(s.rounds, seq)
		r.err = s.execute(r.parts)
		r.done = true
		for i := range r.wps {
			if i != c.rank {
				w.fire(&r.wps[i])
			}
		}
	}
	return r, nil
}

// await blocks until round r, which c joined with p, has been executed, and
// returns c's result. A rank woken by an abort takes collMu before
// returning so that no execution is still writing into its buffers.
func (c *comm) await(r *round, p *part) error {
	s, w := c.s, c.s.w
	s.collMu.Lock()
	if r.done {
		s.collMu.Unlock()
		return r.result(c.rank)
	}
	info := blockInfo{op: p.op, comm: s.id, peer: none, tag: none}
	if p.rooted {
		info.peer = p.root
	}
	w.arm(&r.wps[c.rank], c.wrank, info)
	s.collMu.Unlock()
	if !w.wait(&r.wps[c.rank], c.wrank) {
		s.collMu.Lock()
		fired := r.wps[c.rank].fired
		s.collMu.Unlock()
		if !fired {
			return c.abortError(p.op)
		}
	}
	return r.result(c.rank)
}

// executed reports, without blocking, whether round r has been executed.
func (c *comm) executed(r *round) bool {
	c.s.collMu.Lock()
	defer c.s.collMu.Unlock()
	return r.done
}

func (r *round) result(rank int) error {
	if r.err == nil || r.err[rank] == nil {
		return nil
	}
	return r.err[rank]
}

// execute checks that the members agree and performs the collective. It
// returns nil or one error per rank. A panic (a bug here, since arguments
// are checked first) becomes an error for every rank rather than escaping
// with collMu held, which would leave the other ranks unable to abort.
func (s *shared) execute(ps []*part) (errs []*mpi.Error) {
	defer func() {
		if p := recover(); p != nil {
			errs = s.all(errorf(ps[0].op, mpi.ErrIntern, "local: internal error: %v\n%s", p, debug.Stack()))
		}
	}()
	op := ps[0].op
	for i, p := range ps {
		if p.op != op {
			return s.all(errorf(op, mpi.ErrOther, "collective mismatch on communicator %d: rank 0 called %s, rank %d called %s", s.id, op, i, p.op))
		}
	}
	for i, p := range ps {
		if p.err == nil {
			continue
		}
		errs := make([]*mpi.Error, len(ps))
		for j, q := range ps {
			if q.err != nil {
				errs[j] = q.err
			} else {
				errs[j] = &mpi.Error{Op: op, Class: p.err.Class, Code: p.err.Code, Msg: fmt.Sprintf("%s (on rank %d)", p.err.Msg, i)}
			}
		}
		return errs
	}
	if ps[0].rooted {
		for i, p := range ps {
			if p.root != ps[0].root {
				return s.all(errorf(op, mpi.ErrRoot, "ranks disagree on the root: rank 0 passed %d, rank %d passed %d", ps[0].root, i, p.root))
			}
		}
	}
	var e *mpi.Error
	base := blockingOf(op)
	switch base {
	case opBarrier:
	case opBcast:
		e = execBcast(ps)
	case opGather, opAllgather:
		e = execGather(ps, base == opAllgather)
	case opGatherv:
		e = execGatherv(ps)
	case opAllgatherv:
		e = execAllgatherv(ps)
	case opScatter:
		e = execScatter(ps)
	case opScatterv:
		e = execScatterv(ps)
	case opAlltoall:
		e = execAlltoall(ps)
	case opAlltoallv:
		e = execAlltoallv(ps)
	case opReduce, opAllreduce:
		e = execReduce(ps, base == opAllreduce)
	case opReduceScatterBlock, opReduceScatter:
		e = execReduceScatter(ps, base == opReduceScatterBlock)
	case opWinAllocate:
		execWinAllocate(ps)
	case opWinFence, opWinFree:
	case opSplit:
		s.execSplit(ps)
	case opDup:
		s.execDup(ps)
	default:
		panic("local: unknown collective " + op)
	}
	if e != nil {
		e.Op = op // the call as the ranks made it (MPI_Ibcast, say)
		return s.all(e)
	}
	return nil
}

func (s *shared) all(e *mpi.Error) []*mpi.Error {
	errs := make([]*mpi.Error, s.size)
	for i := range errs {
		errs[i] = e
	}
	return errs
}

func truncated(op, format string, args ...any) *mpi.Error {
	return errorf(op, mpi.ErrTruncate, format, args...)
}

func execBcast(ps []*part) *mpi.Error {
	root := ps[ps[0].root].send
	for i, p := range ps {
		if len(p.send) != len(root) {
			return truncated(opBcast, "rank %d passed %d bytes, root %d passed %d", i, len(p.send), ps[0].root, len(root))
		}
	}
	for _, p := range ps {
		copy(p.send, root)
	}
	return nil
}

// execGather is Gather, or Allgather when all.
func execGather(ps []*part, all bool) *mpi.Error {
	op, ref := opGather, 0
	if all {
		op = opAllgather
	} else {
		ref = ps[0].root
	}
	blk := len(ps[ref].send)
	for i, p := range ps {
		if len(p.send) != blk {
			return truncated(op, "rank %d sends %d bytes, rank %d sends %d: all must send the same", i, len(p.send), ref, blk)
		}
	}
	for j, q := range ps {
		if !all && j != ref {
			continue
		}
		for i, p := range ps {
			copy(q.recv[i*blk:], p.send)
		}
	}
	return nil
}

func execGatherv(ps []*part) *mpi.Error {
	root := ps[ps[0].root]
	for i, p := range ps {
		if len(p.send) != root.counts[i] {
			return truncated(opGatherv, "rank %d sends %d bytes, root expects counts[%d] = %d", i, len(p.send), i, root.counts[i])
		}
	}
	for i, p := range ps {
		copy(root.recv[root.displs[i]:], p.send)
	}
	return nil
}

func execAllgatherv(ps []*part) *mpi.Error {
	for j, q := range ps {
		for i, p := range ps {
			if len(p.send) != q.counts[i] {
				return truncated(opAllgatherv, "rank %d sends %d bytes, rank %d expects counts[%d] = %d", i, len(p.send), j, i, q.counts[i])
			}
		}
	}
	for _, q := range ps {
		for i, p := range ps {
			copy(q.recv[q.displs[i]:], p.send)
		}
	}
	return nil
}

func execScatter(ps []*part) *mpi.Error {
	root := ps[ps[0].root]
	blk := len(root.recv)
	for i, p := range ps {
		if len(p.recv) != blk {
			return truncated(opScatter, "rank %d receives %d bytes, root %d receives %d: all must receive the same", i, len(p.recv), ps[0].root, blk)
		}
	}
	for i, p := range ps {
		copy(p.recv, root.send[i*blk:])
	}
	return nil
}

func execScatterv(ps []*part) *mpi.Error {
	root := ps[ps[0].root]
	for i, p := range ps {
		if len(p.recv) != root.counts[i] {
			return truncated(opScatterv, "rank %d receives %d bytes, root sends counts[%d] = %d", i, len(p.recv), i, root.counts[i])
		}
	}
	for i, p := range ps {
		copy(p.recv, root.send[root.displs[i]:root.displs[i]+root.counts[i]])
	}
	return nil
}

func execAlltoall(ps []*part) *mpi.Error {
	n := len(ps)
	blk := len(ps[0].send) / n
	for i, p := range ps {
		if len(p.send)/n != blk {
			return truncated(opAlltoall, "rank %d sends blocks of %d bytes, rank 0 of %d: all must be the same", i, len(p.send)/n, blk)
		}
	}
	for j, q := range ps {
		for i, p := range ps {
			copy(q.recv[i*blk:(i+1)*blk], p.send[j*blk:])
		}
	}
	return nil
}

func execAlltoallv(ps []*part) *mpi.Error {
	for j, q := range ps {
		for i, p := range ps {
			if p.counts[j] != q.rcounts[i] {
				return truncated(opAlltoallv, "rank %d sends %d bytes to rank %d, which expects recvCounts[%d] = %d", i, p.counts[j], j, i, q.rcounts[i])
			}
		}
	}
	for j, q := range ps {
		for i, p := range ps {
			copy(q.recv[q.rdispls[i]:q.rdispls[i]+q.rcounts[i]], p.send[p.displs[j]:p.displs[j]+p.counts[j]])
		}
	}
	return nil
}

func execReduce(ps []*part, all bool) *mpi.Error {
	op := opReduce
	if all {
		op = opAllreduce
	}
	for i, p := range ps {
		if p.redOp != ps[0].redOp {
			return errorf(op, mpi.ErrOp, "ranks disagree on the operation: rank 0 passed %v, rank %d passed %v", ps[0].redOp, i, p.redOp)
		}
		if p.isInt != ps[0].isInt || p.typed != ps[0].typed || p.dt != ps[0].dt {
			return errorf(op, mpi.ErrOther, "collective mismatch: ranks reduce different element types")
		}
	}
	if ps[0].typed {
		return reduceBytes(op, ps, all)
	}
	if ps[0].isInt {
		return reduce(op, ps, all, func(p *part) ([]int64, []int64) { return p.i64s, p.i64r })
	}
	return reduce(op, ps, all, func(p *part) ([]float64, []float64) { return p.f64s, p.f64r })
}

// reduce folds the send vectors in rank order, ((x0 op x1) op x2) ..., into
// a temporary and copies it to the receivers: every receiver gets the same
// bits, run after run, and send may alias recv.
func reduce[T int64 | float64](op string, ps []*part, all bool, vecs func(*part) (send, recv []T)) *mpi.Error {
	first, _ := vecs(ps[0])
	m := len(first)
	for i, p := range ps {
		if s, _ := vecs(p); len(s) != m {
			return truncated(op, "rank %d reduces %d elements, rank 0 reduces %d", i, len(s), m)
		}
	}
	acc := slices.Clone(first)
	for _, p := range ps[1:] {
		s, _ := vecs(p)
		switch p.redOp {
		case mpi.OpSum:
			for k, v := range s {
				acc[k] += v
			}
		case mpi.OpMin:
			for k, v := range s {
				if v < acc[k] {
					acc[k] = v
				}
			}
		case mpi.OpMax:
			for k, v := range s {
				if v > acc[k] {
					acc[k] = v
				}
			}
		}
	}
	for i, p := range ps {
		if all || i == p.root {
			_, r := vecs(p)
			copy(r, acc)
		}
	}
	return nil
}

// execSplit forms one communicator per color, ranked by (key, old rank).
func (s *shared) execSplit(ps []*part) {
	groups := map[int][]int{}
	var colors []int
	for i, p := range ps {
		if p.color < 0 {
			continue
		}
		if _, ok := groups[p.color]; !ok {
			colors = append(colors, p.color)
		}
		groups[p.color] = append(groups[p.color], i)
	}
	// Creating the groups in order of color keeps communicator ids
	// deterministic.
	slices.Sort(colors)
	for _, color := range colors {
		members := groups[color]
		slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(ps[a].key, ps[b].key) })
		wranks := make([]int, len(members))
		for k, old := range members {
			wranks[k] = s.wranks[old]
		}
		ns := s.w.newShared(wranks)
		for k, old := range members {
			ps[old].newComm = &comm{s: ns, rank: k, wrank: wranks[k]}
		}
	}
}

func (s *shared) execDup(ps []*part) {
	ns := s.w.newShared(s.wranks)
	for i, p := range ps {
		p.newComm = &comm{s: ns, rank: i, wrank: s.wranks[i]}
	}
}

// Barrier is MPI_Barrier.
func (c *comm) Barrier() error { return c.collective(&part{op: opBarrier}) }

// rooted starts a rooted part, recording a bad root as the rank's error.
func (c *comm) rooted(op string, root int) *part {
	p := &part{op: op, rooted: true, root: root}
	if err := c.checkRoot(op, root); err != nil {
		p.err = err.(*mpi.Error)
	}
	return p
}

// Bcast is MPI_Bcast; len(buf) must be the same on every rank.
func (c *comm) Bcast(buf []byte, root int) error {
	p := c.rooted(opBcast, root)
	p.send = buf
	return c.collective(p)
}

// Gather is MPI_Gather; every rank sends len(send) bytes, the same on all,
// and the root's recv holds Size() such blocks in rank order.
func (c *comm) Gather(send, recv []byte, root int) error {
	p := c.rooted(opGather, root)
	p.send, p.recv = send, recv
	if p.err == nil && c.rank == root && len(recv) < c.s.size*len(send) {
		p.err = errorf(opGather, mpi.ErrCount, "receive buffer of %d bytes cannot hold %d blocks of %d bytes", len(recv), c.s.size, len(send))
	}
	return c.collective(p)
}

// Gatherv is MPI_Gatherv; counts and displs are read at the root only.
func (c *comm) Gatherv(send, recv []byte, counts, displs []int, root int) error {
	p := c.rooted(opGatherv, root)
	p.send, p.recv, p.counts, p.displs = send, recv, counts, displs
	if p.err == nil && c.rank == root {
		p.err = c.checkRegions(opGatherv, "", counts, displs, len(recv))
	}
	return c.collective(p)
}

// Allgather is MPI_Allgather.
func (c *comm) Allgather(send, recv []byte) error {
	p := &part{op: opAllgather, send: send, recv: recv}
	if len(recv) < c.s.size*len(send) {
		p.err = errorf(opAllgather, mpi.ErrCount, "receive buffer of %d bytes cannot hold %d blocks of %d bytes", len(recv), c.s.size, len(send))
	}
	return c.collective(p)
}

// Allgatherv is MPI_Allgatherv.
func (c *comm) Allgatherv(send, recv []byte, counts, displs []int) error {
	p := &part{op: opAllgatherv, send: send, recv: recv, counts: counts, displs: displs}
	p.err = c.checkRegions(opAllgatherv, "", counts, displs, len(recv))
	return c.collective(p)
}

// Scatter is MPI_Scatter; every rank receives len(recv) bytes, the same on
// all, and the root's send holds Size() such blocks in rank order.
func (c *comm) Scatter(send, recv []byte, root int) error {
	p := c.rooted(opScatter, root)
	p.send, p.recv = send, recv
	if p.err == nil && c.rank == root && len(send) < c.s.size*len(recv) {
		p.err = errorf(opScatter, mpi.ErrCount, "send buffer of %d bytes cannot hold %d blocks of %d bytes", len(send), c.s.size, len(recv))
	}
	return c.collective(p)
}

// Scatterv is MPI_Scatterv; counts and displs are read at the root only.
func (c *comm) Scatterv(send []byte, counts, displs []int, recv []byte, root int) error {
	p := c.rooted(opScatterv, root)
	p.send, p.recv, p.counts, p.displs = send, recv, counts, displs
	if p.err == nil && c.rank == root {
		p.err = c.checkRegions(opScatterv, "", counts, displs, len(send))
	}
	return c.collective(p)
}

// Alltoall is MPI_Alltoall: send holds Size() blocks, block j for rank j.
func (c *comm) Alltoall(send, recv []byte) error {
	p := &part{op: opAlltoall, send: send, recv: recv}
	n := c.s.size
	switch {
	case len(send)%n != 0:
		p.err = errorf(opAlltoall, mpi.ErrCount, "send buffer of %d bytes is not %d equal blocks", len(send), n)
	case len(recv) < len(send):
		p.err = errorf(opAlltoall, mpi.ErrCount, "receive buffer of %d bytes cannot hold %d blocks of %d bytes", len(recv), n, len(send)/n)
	}
	return c.collective(p)
}

// Alltoallv is MPI_Alltoallv.
func (c *comm) Alltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) error {
	p := &part{op: opAlltoallv, send: send, recv: recv, counts: sendCounts, displs: sendDispls, rcounts: recvCounts, rdispls: recvDispls}
	p.err = c.checkRegions(opAlltoallv, "send", sendCounts, sendDispls, len(send))
	if p.err == nil {
		p.err = c.checkRegions(opAlltoallv, "recv", recvCounts, recvDispls, len(recv))
	}
	return c.collective(p)
}

// checkRegions validates per-rank counts and displacements into a buffer of
// n bytes.
func (c *comm) checkRegions(op, side string, counts, displs []int, n int) *mpi.Error {
	name := func(s string) string {
		if side == "" {
			return s
		}
		return side + string(s[0]-'a'+'A') + s[1:]
	}
	size := c.s.size
	if len(counts) != size || len(displs) != size {
		return errorf(op, mpi.ErrArg, "%s has %d entries and %s %d, communicator size %d", name("counts"), len(counts), name("displs"), len(displs), size)
	}
	for i, k := range counts {
		d := displs[i]
		switch {
		case k < 0 || k > mpi.MaxCount:
			return errorf(op, mpi.ErrCount, "invalid count: %s[%d] = %d", name("counts"), i, k)
		case d < 0:
			return errorf(op, mpi.ErrArg, "invalid displacement: %s[%d] = %d", name("displs"), i, d)
		case d > n-k:
			return errorf(op, mpi.ErrCount, "region %s[%d] = %d, %s[%d] = %d ends past the %d-byte buffer", name("displs"), i, d, name("counts"), i, k, n)
		}
	}
	return nil
}

// reduction builds a reduction part with the rank's own checks.
func (c *comm) reduction(op string, root int, all bool, sendLen, recvLen int, redOp mpi.Op) *part {
	p := &part{op: op, redOp: redOp}
	if !all {
		p = c.rooted(op, root)
		p.redOp = redOp
	}
	switch {
	case p.err != nil:
	case redOp != mpi.OpSum && redOp != mpi.OpMin && redOp != mpi.OpMax:
		p.err = errorf(op, mpi.ErrOp, "invalid operation %v", redOp)
	case (all || c.rank == root) && recvLen < sendLen:
		p.err = errorf(op, mpi.ErrCount, "receive buffer of %d elements cannot hold %d", recvLen, sendLen)
	}
	return p
}

// ReduceFloat64s is MPI_Reduce on float64; recv is only used at the root.
func (c *comm) ReduceFloat64s(send, recv []float64, op mpi.Op, root int) error {
	p := c.reduction(opReduce, root, false, len(send), len(recv), op)
	p.f64s, p.f64r = send, recv
	return c.collective(p)
}

// AllreduceFloat64s is MPI_Allreduce on float64.
func (c *comm) AllreduceFloat64s(send, recv []float64, op mpi.Op) error {
	p := c.reduction(opAllreduce, 0, true, len(send), len(recv), op)
	p.f64s, p.f64r = send, recv
	return c.collective(p)
}

// ReduceInt64s is MPI_Reduce on int64; recv is only used at the root.
func (c *comm) ReduceInt64s(send, recv []int64, op mpi.Op, root int) error {
	p := c.reduction(opReduce, root, false, len(send), len(recv), op)
	p.i64s, p.i64r, p.isInt = send, recv, true
	return c.collective(p)
}

// AllreduceInt64s is MPI_Allreduce on int64.
func (c *comm) AllreduceInt64s(send, recv []int64, op mpi.Op) error {
	p := c.reduction(opAllreduce, 0, true, len(send), len(recv), op)
	p.i64s, p.i64r, p.isInt = send, recv, true
	return c.collective(p)
}
