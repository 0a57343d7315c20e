package patterns

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// AggKind is one of the aggregate communication operations of paper 003
// (Grama, Kumar, Ranka, Singh, file 003_e6d8b5ab6c2aa305.txt), slides "Role
// of Aggregate Communication Operations" and "A Two-Level Model": one-to-all
// and all-to-all broadcast, one-to-all and all-to-all personalized
// communication, the circular q-shift and the NEWS shift.
type AggKind int

const (
	AggBcast     AggKind = iota // one-to-all broadcast of m bytes from Root
	AggAllgather                // all-to-all broadcast: every rank's m bytes to all
	AggScatter                  // one-to-all personalized: Root sends m distinct bytes to each rank
	AggAlltoall                 // all-to-all personalized: m distinct bytes between every pair
	AggQShift                   // circular q-shift: rank i sends m bytes to i+q mod p
	AggNEWS                     // NEWS shift: m bytes to each of the 4 neighbours on a 2-D torus
)

var aggNames = []string{"bcast", "allgather", "scatter", "alltoall", "qshift", "news"}

// AggKinds lists every operation in record order.
var AggKinds = []AggKind{AggBcast, AggAllgather, AggScatter, AggAlltoall, AggQShift, AggNEWS}

func (k AggKind) String() string {
	if k >= 0 && int(k) < len(aggNames) {
		return aggNames[k]
	}
	return fmt.Sprintf("AggKind(%d)", int(k))
}

// ParseAggKind parses an operation name as records spell it.
func ParseAggKind(s string) (AggKind, error) {
	for i, n := range aggNames {
		if s == n {
			return AggKind(i), nil
		}
	}
	return 0, fmt.Errorf("aggregate op %q: accepted values are bcast, allgather, scatter, alltoall, qshift and news", s)
}

// AggImpl selects how an aggregate operation is carried out.
type AggImpl int

const (
	// ImplMPI uses the MPI library's collective: MPI_Bcast, MPI_Allgather,
	// MPI_Scatter, MPI_Alltoall, and MPI_Alltoallv with only the shift's
	// blocks non-empty for the q-shift and NEWS shift (MPI's collective
	// for an arbitrary sparse personalized exchange).
	ImplMPI AggImpl = iota
	// ImplTextbook uses the algorithm paper 003's cost table ("Timings for
	// Various Aggregate Communication Operations") assumes, written with
	// point-to-point messages; see AggregateOp.
	ImplTextbook
	// ImplMesh1D and ImplMesh2D use the algorithms behind the table's 1-D
	// and 2-D mesh columns, with the ranks mapped onto a virtual ring
	// (0, 1, ..., p-1) or onto a virtual 2-D mesh with wrap-around
	// (Dims2(p) rows x cols, row-major); see aggregate_mesh.go.
	ImplMesh1D
	ImplMesh2D
)

var implNames = []string{"mpi", "textbook", "mesh1d", "mesh2d"}

// AggImpls lists every implementation in record order.
var AggImpls = []AggImpl{ImplMPI, ImplTextbook, ImplMesh1D, ImplMesh2D}

func (i AggImpl) String() string {
	if i >= 0 && int(i) < len(implNames) {
		return implNames[i]
	}
	return fmt.Sprintf("AggImpl(%d)", int(i))
}

// ParseAggImpl parses an implementation name as records spell it.
func ParseAggImpl(s string) (AggImpl, error) {
	for i, n := range implNames {
		if s == n {
			return AggImpl(i), nil
		}
	}
	return 0, fmt.Errorf("aggregate impl %q: accepted values are mpi, textbook, mesh1d and mesh2d", s)
}

// mesh reports whether the implementation is one of the mesh columns'.
func (i AggImpl) mesh() bool { return i == ImplMesh1D || i == ImplMesh2D }

// BenchAggregate is the bench name of the records of paper 003's aggregate
// operations (AggregateOp.Params), which model.FitTwoLevel reads.
const BenchAggregate = "aggregate"

// AggregateOp configures one aggregate operation of paper 003 with message
// size m = Bytes, in the units of the cost table: the broadcast message,
// each rank's contribution to an all-to-all broadcast, each block of a
// personalized operation, the shifted message.
//
// The textbook algorithms are those behind the table's hypercube column
// ("Log P-D Mesh"), which are the ones an MPI program can realise on any
// network, with the 1-D (ring) column's algorithm where the hypercube one
// needs p to be a power of two:
//
//	op         algorithm                                   rounds     table (hypercube)
//	bcast      binomial tree (recursive doubling)          ceil lg p  (t_s + t_w m) log p
//	allgather  recursive doubling, message doubles         lg p       t_s log p + t_w m (p-1)
//	           (ring, p-1 steps, when p is not 2^d)        p-1        (t_s + t_w m)(p-1)  [1-D]
//	scatter    binomial tree, halving the data per level   ceil lg p  t_s log p + t_w m (p-1)
//	alltoall   pairwise exchange with i XOR j (E-cube)     p-1        (t_s + t_w m)(p-1) + (t_h/2) p log p
//	           (i+j / i-j mod p when p is not 2^d)         p-1
//	qshift     one direct exchange i -> i+q               1          t_s + t_w m + t_h log p
//	news       four shifts N, S, W, E on the Grid torus    4          4 (t_s + t_w m) on a 2-D mesh
//
// ImplMesh1D and ImplMesh2D run the algorithms of the table's 1-D and 2-D
// mesh columns (aggregate_mesh.go). The "textbook_rounds" counter of a
// record says how many rounds the point-to-point algorithm of its impl
// takes. A sample is the maximum over ranks of the time for Iters
// operations back to back divided by Iters.
type AggregateOp struct {
	Op    AggKind
	Impl  AggImpl
	Bytes int
	Root  int    // root of bcast and scatter
	Q     int    // shift of qshift, 1 <= Q < p
	Grid  [2]int // rows, cols of the NEWS torus; zero means Dims2(p)
	Iters int    // operations per repetition; 0 means 1
	// Validate checks every received byte after each repetition.
	Validate bool
	Reps     Reps
}

// Counters of every aggregate record (the same for both implementations, so
// a run's records share one set of columns): the two-level model's volume
// and the rounds of the textbook algorithm for this operation and p (for
// the MPI implementation a reference: the library's own algorithm and
// messages are not visible). Measurement.Mine holds a textbook run's
// messages.
const (
	CounterTextbookRounds = "textbook_rounds" // communication rounds of the textbook algorithm
	CounterVolumeBytes    = "volume_bytes"    // the two-level model's m: most data into or out of one rank
)

const aggTag = 360

// Dims2 returns the most nearly square rows x cols = p with rows <= cols,
// as MPI_Dims_create does for two dimensions.
func Dims2(p int) [2]int {
	for r := int(math.Sqrt(float64(p))); r >= 1; r-- {
		if p%r == 0 {
			return [2]int{r, p / r}
		}
	}
	return [2]int{1, p}
}

// grid is the NEWS torus: Grid, or the most nearly square shape; the
// ring 1 x p for ImplMesh1D.
func (a AggregateOp) grid(p int) [2]int {
	switch {
	case a.Impl == ImplMesh1D:
		return [2]int{1, p}
	case a.Grid == [2]int{}:
		return Dims2(p)
	}
	return a.Grid
}

// Check reports a configuration that cannot run on p ranks.
func (a AggregateOp) Check(p int) error {
	switch {
	case a.Op < AggBcast || a.Op > AggNEWS:
		return fmt.Errorf("aggregate op %d is not defined", int(a.Op))
	case a.Impl < ImplMPI || a.Impl > ImplMesh2D:
		return fmt.Errorf("aggregate impl %d is not defined", int(a.Impl))
	case a.Bytes < 0:
		return fmt.Errorf("bytes = %d: must be >= 0", a.Bytes)
	case a.Iters < 0:
		return fmt.Errorf("iters = %d: must be >= 1", a.Iters)
	case (a.Op == AggBcast || a.Op == AggScatter) && (a.Root < 0 || a.Root >= p):
		return fmt.Errorf("%w: root rank %d, but ranks are 0..%d", ErrTooManyTargets, a.Root, p-1)
	case a.Op == AggQShift && (a.Q < 1 || a.Q >= p):
		return fmt.Errorf("%w: q-shift by q = %d needs 1 <= q < p = %d", ErrTooManyTargets, a.Q, p)
	case a.Op == AggNEWS:
		if g := a.grid(p); g[0] < 1 || g[1] < 1 || g[0] > p || g[1] > p || g[0]*g[1] != p { // a side beyond p first: the product may wrap around
			return fmt.Errorf("%w: NEWS grid %dx%d has %s places for %d ranks", ErrTooManyTargets, g[0], g[1], results.FormatCount(float64(g[0])*float64(g[1])), p)
		}
	}
	return a.Reps.Validate()
}

// Neighbors is the number of NEWS messages per rank that go to another
// rank: 4 on a torus with at least 2 rows and columns, 2 when one side is 1
// (the shifts along it stay on the rank).
func (a AggregateOp) Neighbors(p int) int {
	g := a.grid(p)
	n := 0
	if g[0] > 1 {
		n += 2
	}
	if g[1] > 1 {
		n += 2
	}
	return n
}

// VolumeBytes is the m of paper 003's two-level model: the most data
// entering or leaving one rank in the operation.
func (a AggregateOp) VolumeBytes(p int) int {
	switch a.Op {
	case AggAllgather, AggScatter, AggAlltoall:
		return (p - 1) * a.Bytes
	case AggNEWS:
		return a.Neighbors(p) * a.Bytes
	}
	return a.Bytes
}

// Rounds is the number of communication rounds of the point-to-point
// algorithm of the implementation: the textbook one for ImplTextbook and,
// as a reference, for ImplMPI; the mesh column's for ImplMesh1D and
// ImplMesh2D (meshRounds).
func (a AggregateOp) Rounds(p int) int {
	if a.Impl.mesh() {
		return a.meshRounds(p)
	}
	lg := bits.Len(uint(p - 1)) // ceil(log2 p)
	switch a.Op {
	case AggBcast, AggScatter:
		return lg
	case AggAllgather:
		if isPow2(p) {
			return lg
		}
		return p - 1
	case AggAlltoall:
		return p - 1
	case AggQShift:
		return 1
	}
	return 4
}

func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// aggRun holds one rank's buffers and counts for an aggregate operation.
// Its program (mpi.Step) addresses the buffers by index: send, recv, tmp.
type aggRun struct {
	a        AggregateOp
	p, me, m int
	send     []byte
	recv     []byte
	tmp      []byte
	nb       [4]int // NEWS neighbours N, S, W, E
	counts   Counts
	steps    []mpi.Step // the program being built
}

// Buffer indices of an aggregate program.
const (
	aggSend = iota
	aggRecv
	aggTmp
)

// Run measures the operation (collective over c).
func (a AggregateOp) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := a.Check(p); err != nil {
		return Measurement{}, err
	}
	r := &aggRun{a: a, p: p, me: c.Rank(), m: a.Bytes}
	r.setup()
	prog := [][]mpi.Step{r.program()}
	iters := max(a.Iters, 1)
	calls := 0
	kernel := programKernel(c, [][]byte{r.send, r.recv, r.tmp}, iters, &r.counts, &calls)
	cfg := a.Reps
	cfg.Reduction = ReduceMax
	meas, err := MeasureBatch(c, cfg, a.Validate, func(b mpi.Batch) error {
		if err := kernel(b, prog); err != nil {
			return err
		}
		if a.Validate { // one repetition per batch
			return r.check()
		}
		return nil
	})
	if err != nil {
		return Measurement{}, err
	}
	// Mine holds a point-to-point run's messages; the counters are the
	// same for every implementation (the MPI library's messages are not
	// visible).
	m := meas.Scaled(1 / float64(iters))
	m.Mine = r.counts.PerRep(calls)
	m.Counters = map[string]float64{
		CounterVolumeBytes:    float64(a.VolumeBytes(p)),
		CounterTextbookRounds: float64(a.Rounds(p)),
	}
	return m, nil
}

// Params are the record parameters on p ranks: op, impl, the message size
// m (bytes), the shift q and the NEWS neighbours. q and neighbors are on
// every record, 0 where they do not apply, so that a run's records share
// one set of columns (CSV); the two-level model reads neighbors for news.
// A root other than 0 is the root param: the root of bcast and scatter,
// 0 on the other records of the same run (a run's instances share Root);
// records of root 0 leave it out, as those written before it was a param
// do, so they compare with them.
func (a AggregateOp) Params(p int) results.Params {
	params := results.Params{"op": a.Op.String(), "impl": a.Impl.String(), "bytes": a.Bytes, "q": 0, "neighbors": 0}
	switch a.Op {
	case AggQShift:
		params["q"] = a.Q
	case AggNEWS:
		params["neighbors"] = a.Neighbors(p)
	}
	if a.Root != 0 {
		params["root"] = 0
		if a.Op == AggBcast || a.Op == AggScatter {
			params["root"] = a.Root
		}
	}
	return params
}

// Bench is the bench name of the records.
func (AggregateOp) Bench() string { return BenchAggregate }

// Record is the aggregate-operation record of m, over all p ranks.
func (a AggregateOp) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchAggregate, a.Params(m.CommSize), m.CommSize, meta)
}

// setup allocates and fills the buffers: every block rank s addresses to
// rank d holds blockByte(s, d, ·); a broadcast's data is the root's block
// to rank 0, an all-to-all broadcast's the rank's block to rank 0.
func (r *aggRun) setup() {
	p, m, me := r.p, r.m, r.me
	switch r.a.Op {
	case AggBcast:
		r.send = make([]byte, m) // the broadcast buffer
		if me == r.a.Root {
			fillBlock(r.send, me, 0)
		}
	case AggAllgather:
		r.send = make([]byte, m)
		fillBlock(r.send, me, 0)
		r.recv = make([]byte, p*m)
	case AggScatter:
		r.send = make([]byte, p*m)
		if me == r.a.Root {
			for d := 0; d < p; d++ {
				fillBlock(r.send[d*m:(d+1)*m], me, d)
			}
		}
		r.recv = make([]byte, m)
		r.tmp = make([]byte, p*m)
	case AggAlltoall:
		r.send = make([]byte, p*m)
		for d := 0; d < p; d++ {
			fillBlock(r.send[d*m:(d+1)*m], me, d)
		}
		r.recv = make([]byte, p*m)
	case AggQShift:
		r.send = make([]byte, m)
		fillBlock(r.send, me, (me+r.a.Q)%p)
		r.recv = make([]byte, m)
	case AggNEWS:
		g := r.a.grid(p)
		row, col := me/g[1], me%g[1]
		at := func(rw, cl int) int { return ((rw+g[0])%g[0])*g[1] + (cl+g[1])%g[1] }
		r.nb = [4]int{at(row-1, col), at(row+1, col), at(row, col-1), at(row, col+1)}
		r.send = make([]byte, 4*m) // block d goes to nb[d]
		for d, n := range r.nb {
			fillBlock(r.send[d*m:(d+1)*m], me, n)
		}
		r.recv = make([]byte, 4*m)
		if r.a.Impl == ImplMPI {
			r.sparseSend()
		}
	}
	if r.a.Impl.mesh() && r.a.Op != AggNEWS {
		r.tmp = make([]byte, r.a.meshWork(p))
	}
}

// opposite is the NEWS direction a shift in direction d receives from.
var opposite = [4]int{1, 0, 3, 2}

// program builds the operation as this rank's program of steps.
func (r *aggRun) program() []mpi.Step {
	r.steps = nil
	switch {
	case r.a.Impl == ImplMPI:
		r.mpiProgram()
		return r.steps
	case r.a.Impl.mesh() && r.a.Op != AggNEWS:
		r.meshProgram()
		return r.steps
	}
	m := r.m
	switch r.a.Op {
	case AggBcast:
		r.binomialBcast()
	case AggAllgather:
		r.allgather()
	case AggScatter:
		r.binomialScatter()
	case AggAlltoall:
		r.pairwiseAlltoall()
	case AggQShift:
		r.sendrecv(span(aggSend, 0, m), (r.me+r.a.Q)%r.p, span(aggRecv, 0, m), (r.me-r.a.Q+r.p)%r.p, aggTag)
	case AggNEWS:
		for d := 0; d < 4; d++ {
			r.sendrecv(span(aggSend, d*m, m), r.nb[d], span(aggRecv, d*m, m), r.nb[opposite[d]], aggTag+d)
		}
	}
	return r.steps
}

func span(buf, off, n int) mpi.Span { return mpi.Span{Buf: buf, Off: off, Len: n} }

func (r *aggRun) mpiProgram() {
	m, p := r.m, r.p
	switch r.a.Op {
	case AggBcast:
		r.add(mpi.Step{Op: mpi.StepBcast, Send: span(aggSend, 0, m), Peer: r.a.Root})
	case AggAllgather:
		r.add(mpi.Step{Op: mpi.StepAllgather, Send: span(aggSend, 0, m), Recv: span(aggRecv, 0, p*m)})
	case AggScatter:
		r.add(mpi.Step{Op: mpi.StepScatter, Send: span(aggSend, 0, p*m), Recv: span(aggRecv, 0, m), Peer: r.a.Root})
	case AggAlltoall:
		r.add(mpi.Step{Op: mpi.StepAlltoall, Send: span(aggSend, 0, p*m), Recv: span(aggRecv, 0, p*m)})
	default:
		// Sparse personalized exchanges: one block per peer, in rank order.
		sc, sd, rc, rd := r.sparseLayout()
		send := span(aggSend, 0, len(r.send))
		if r.a.Op == AggNEWS {
			send = span(aggTmp, 0, len(r.tmp))
		}
		r.add(mpi.Step{Op: mpi.StepAlltoallv, Send: send, Recv: span(aggRecv, 0, len(r.recv)), Counts: slices.Concat(sc, sd, rc, rd)})
	}
}

// sparseLayout gives the Alltoallv counts and displacements of the q-shift
// and NEWS shift: m bytes per message, messages to one peer adjacent.
func (r *aggRun) sparseLayout() (sc, sd, rc, rd []int) {
	p, m := r.p, r.m
	sc, sd, rc, rd = make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	if r.a.Op == AggQShift {
		sc[(r.me+r.a.Q)%p] = m
		rc[(r.me-r.a.Q+p)%p] = m
		return
	}
	for d := 0; d < 4; d++ {
		sc[r.nb[d]] += m
		rc[r.nb[opposite[d]]] += m
	}
	for i := 1; i < p; i++ {
		sd[i] = sd[i-1] + sc[i-1]
		rd[i] = rd[i-1] + rc[i-1]
	}
	return
}

// sparseSend builds the NEWS Alltoallv send buffer tmp: the blocks
// regrouped by destination rank.
func (r *aggRun) sparseSend() {
	_, sd, _, _ := r.sparseLayout()
	r.tmp = make([]byte, 4*r.m)
	at := append([]int(nil), sd...)
	for d := 0; d < 4; d++ {
		n := r.nb[d]
		copy(r.tmp[at[n]:at[n]+r.m], r.send[d*r.m:(d+1)*r.m])
		at[n] += r.m
	}
}

func (r *aggRun) add(s mpi.Step) { r.steps = append(r.steps, s) }

func (r *aggRun) sendrecv(send mpi.Span, dst int, recv mpi.Span, src, tag int) {
	r.add(mpi.Step{Op: mpi.StepSendrecv, Send: send, Peer: dst, Recv: recv, From: src, Tag: tag})
}

func (r *aggRun) sendTo(b mpi.Span, dst int) {
	r.add(mpi.Step{Op: mpi.StepSend, Send: b, Peer: dst, Tag: aggTag})
}

func (r *aggRun) recvFrom(b mpi.Span, src int) {
	r.add(mpi.Step{Op: mpi.StepRecv, Recv: b, From: src, Tag: aggTag})
}

func (r *aggRun) copyTo(dst, src mpi.Span) {
	r.add(mpi.Step{Op: mpi.StepCopy, Send: src, Recv: dst})
}

// binomialBcast: relative rank v receives from v - 2^j (its lowest set bit)
// and sends to v + 2^i for the smaller powers, so the message reaches all p
// ranks in ceil(lg p) rounds.
func (r *aggRun) binomialBcast() {
	p, root := r.p, r.a.Root
	buf := span(aggSend, 0, r.m)
	rel := (r.me - root + p) % p
	mask := 1
	for mask < p {
		if rel&mask != 0 {
			r.recvFrom(buf, (r.me-mask+p)%p)
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			r.sendTo(buf, (r.me+mask)%p)
		}
	}
}

// binomialScatter: the same tree; each rank receives the blocks of its
// whole subtree (in relative rank order) into tmp and passes the upper
// part on, so the data halves at every level.
func (r *aggRun) binomialScatter() {
	p, m, root := r.p, r.m, r.a.Root
	rel := (r.me - root + p) % p
	cnt := 0 // blocks held, for relative ranks rel, rel+1, ...
	if rel == 0 {
		for i := 0; i < p; i++ {
			r.copyTo(span(aggTmp, i*m, m), span(aggSend, ((i+root)%p)*m, m))
		}
		cnt = p
	}
	mask := 1
	for mask < p {
		if rel&mask != 0 {
			cnt = min(mask, p-rel)
			r.recvFrom(span(aggTmp, 0, cnt*m), (r.me-mask+p)%p)
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			r.sendTo(span(aggTmp, mask*m, (cnt-mask)*m), (r.me+mask)%p)
			cnt = mask
		}
	}
	r.copyTo(span(aggRecv, 0, m), span(aggTmp, 0, m))
}

// allgather: recursive doubling when p is a power of two (partner me XOR
// 2^j, the exchanged data doubling each round), else the ring.
func (r *aggRun) allgather() {
	p, m, me := r.p, r.m, r.me
	r.copyTo(span(aggRecv, me*m, m), span(aggSend, 0, m))
	if isPow2(p) {
		for mask := 1; mask < p; mask <<= 1 {
			mine := me &^ (mask - 1)
			theirs := mine ^ mask
			r.sendrecv(span(aggRecv, mine*m, mask*m), me^mask, span(aggRecv, theirs*m, mask*m), me^mask, aggTag)
		}
		return
	}
	right, left := (me+1)%p, (me-1+p)%p
	for s := 0; s < p-1; s++ {
		out := (me - s + p) % p
		in := (me - s - 1 + p) % p
		r.sendrecv(span(aggRecv, out*m, m), right, span(aggRecv, in*m, m), left, aggTag)
	}
}

// pairwiseAlltoall: p-1 rounds; in round j rank i exchanges with i XOR j
// when p is a power of two (E-cube routing on the hypercube), else sends to
// i+j and receives from i-j.
func (r *aggRun) pairwiseAlltoall() {
	p, m, me := r.p, r.m, r.me
	r.copyTo(span(aggRecv, me*m, m), span(aggSend, me*m, m))
	for j := 1; j < p; j++ {
		to, from := (me+j)%p, (me-j+p)%p
		if isPow2(p) {
			to, from = me^j, me^j
		}
		r.sendrecv(span(aggSend, to*m, m), to, span(aggRecv, from*m, m), from, aggTag)
	}
}

// check compares what arrived with what was sent, then clears it.
func (r *aggRun) check() error {
	p, m, me := r.p, r.m, r.me
	what := r.a.Op.String() + "/" + r.a.Impl.String()
	switch r.a.Op {
	case AggBcast:
		if err := checkBlock(r.send, r.a.Root, 0, what); err != nil {
			return err
		}
		if me != r.a.Root {
			clear(r.send)
		}
		return nil
	case AggAllgather:
		for s := 0; s < p; s++ {
			if err := checkBlock(r.recv[s*m:(s+1)*m], s, 0, what); err != nil {
				return err
			}
		}
	case AggScatter:
		if err := checkBlock(r.recv, r.a.Root, me, what); err != nil {
			return err
		}
	case AggAlltoall:
		for s := 0; s < p; s++ {
			if err := checkBlock(r.recv[s*m:(s+1)*m], s, me, what); err != nil {
				return err
			}
		}
	case AggQShift:
		if err := checkBlock(r.recv, (me-r.a.Q+p)%p, me, what); err != nil {
			return err
		}
	case AggNEWS:
		if r.a.Impl != ImplMPI {
			for d := 0; d < 4; d++ {
				if err := checkBlock(r.recv[d*m:(d+1)*m], r.nb[opposite[d]], me, what); err != nil {
					return err
				}
			}
		} else {
			_, _, rc, rd := r.sparseLayout()
			for s := 0; s < p; s++ {
				for off := 0; off < rc[s]; off += m {
					if err := checkBlock(r.recv[rd[s]+off:rd[s]+off+m], s, me, what); err != nil {
						return err
					}
				}
			}
		}
	}
	clear(r.recv)
	return nil
}

// Torus is the ROWSxCOLS of a NEWS torus; the zero value means the most
// nearly square shape of the rank count (Dims2).
type Torus [2]int

// UnmarshalText parses ROWSxCOLS with positive integers.
func (t *Torus) UnmarshalText(b []byte) error {
	rows, cols, ok := strings.Cut(strings.ToLower(string(b)), "x")
	r, err1 := strconv.Atoi(rows)
	c, err2 := strconv.Atoi(cols)
	if !ok || err1 != nil || err2 != nil || r < 1 || c < 1 {
		return errors.New("accepted form ROWSxCOLS with positive integers, e.g. 2x4")
	}
	if r > results.MaxRecordRanks || c > results.MaxRecordRanks {
		// No side is longer than the ranks, and so rows x cols stays far
		// from wrapping around an int.
		return fmt.Errorf("each side is at most %d, the most ranks a run has", results.MaxRecordRanks)
	}
	*t = Torus{r, c}
	return nil
}

func (t Torus) String() string {
	if t == (Torus{}) {
		return ""
	}
	return fmt.Sprintf("%dx%d", t[0], t[1])
}

// AggregateSweep is the sweep of 'commcost aggregate': paper 003's
// aggregate operations through the MPI collective and the cost table's
// textbook algorithm, op x q x impl x size.
type AggregateSweep struct {
	RepFlags
	Iters
	RepWarmup
	SyncFlags
	Ops   []AggKind  `flag:"ops" default:"bcast,allgather,scatter,alltoall,qshift,news" usage:"operations: a list of bcast (one-to-all broadcast), allgather (all-to-all broadcast), scatter (one-to-all personalized), alltoall (all-to-all personalized), qshift (circular q-shift), news (NEWS shift on a 2-D torus)"`
	Impl  []AggImpl  `flag:"impl" default:"mpi,textbook" usage:"implementations, a list of: mpi (the library's collective), textbook (the algorithms of paper 003's cost table, its hypercube column), mesh1d and mesh2d (the algorithms of its 1-D and 2-D mesh columns, the ranks on a virtual ring or a virtual most nearly square mesh with wrap-around)"`
	Sizes opts.Sizes `flag:"sizes" default:"8,1K,64K" param:"bytes" usage:"message sizes m (the cost table's m): a list or LO:HI doubling; K = 1024"`
	Root  int        `flag:"root" usage:"root rank of bcast and scatter"`
	Q     opts.Ints  `flag:"q" default:"1" usage:"shifts q of qshift, each 1 <= q < ranks: a list"`
	Grid  Torus      `flag:"grid" usage:"NEWS torus as ROWSxCOLS with ROWS*COLS = ranks (default: the most nearly square; mesh1d shifts on the ring 1 x ranks)"`
	Set   opts.Given
}

func init() {
	Register(Def{Name: "aggregate", Summary: "paper 003 aggregate operations (bcast ... news), MPI collective vs textbook algorithm",
		New: func() Sweep { return new(AggregateSweep) }, Defaults: map[string]string{"max-time": "0.5"}})
}

// aggReads are the flags of 'commcost aggregate' that only some operations
// read: given with none of them in --ops, they are refused.
var aggReads = OpReads[AggKind]{
	"Root": func(k AggKind) bool { return k == AggBcast || k == AggScatter },
	"Q":    func(k AggKind) bool { return k == AggQShift },
	"Grid": func(k AggKind) bool { return k == AggNEWS },
}

// Validate checks the sweep's settings.
func (s *AggregateSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, s.SyncFlags.Check,
		func() error { return CheckValues("Sizes", BenchAggregate, "bytes", s.Sizes) },
		func() error { return aggReads.Check(s.Set, "Ops", "ops", s.Ops, AggKinds) },
		func() error {
			if s.Root < 0 {
				return opts.Field("Root", s.Root, "must be a rank >= 0")
			}
			for _, q := range s.Q {
				if q < 1 {
					return opts.Field("Q", q, "is not positive; the value must be positive (an integer >= 1)")
				}
			}
			return nil
		})
}

func (s *AggregateSweep) uses(k AggKind) bool { return slices.Contains(s.Ops, k) }

// Plan lists the instances; the root, the shifts and the torus must fit p.
func (s *AggregateSweep) Plan(p int) ([]Pattern, error) {
	if (s.uses(AggBcast) || s.uses(AggScatter)) && s.Root >= p {
		return nil, opts.Field("Root", s.Root, "more ranks asked for than exist (ranks are 0..%d)", p-1)
	}
	if s.uses(AggQShift) {
		for _, q := range s.Q {
			if q >= p {
				return nil, opts.Item("Q", q, "a circular q-shift needs q < ranks = %d", p)
			}
		}
	}
	if s.uses(AggNEWS) && s.Grid != (Torus{}) && (s.Grid[0] > p || s.Grid[1] > p || s.Grid[0]*s.Grid[1] != p) {
		return nil, opts.Field("Grid", s.Grid, "the torus has %s places, but there are %d ranks", results.FormatCount(float64(s.Grid[0])*float64(s.Grid[1])), p)
	}
	reps := s.SyncFlags.Reps(s.RepWarmup.Reps(s.RepFlags.Reps()))
	var out []Pattern
	for _, op := range s.Ops {
		qs := []int{0}
		if op == AggQShift {
			qs = s.Q
		}
		for _, q := range qs {
			for _, impl := range s.Impl {
				for _, m := range s.Sizes {
					out = append(out, AggregateOp{Op: op, Impl: impl, Bytes: m, Root: s.Root, Q: q, Grid: s.Grid,
						Iters: s.IterCount(), Validate: s.Verify, Reps: reps})
				}
			}
		}
	}
	return out, nil
}
