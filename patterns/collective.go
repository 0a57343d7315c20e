package patterns

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchCollective is the bench name of the records of MPI's blocking
// collectives through the library (Collective): params op, bytes, type,
// reduction, root and iters, unit s.
const BenchCollective = "collective"

// OSU Micro-Benchmarks 6.1 iteration counts of the collective benchmarks
// (osu_util.h COLL_LOOP_*, COLL_SKIP_*): small messages up to
// OSULargeMessage get more.
const (
	OSUCollItersSmall = 1000
	OSUCollItersLarge = 100
	OSUCollSkipSmall  = 100
	OSUCollSkipLarge  = 10
)

// Collective configures one of MPI's collectives (mpi.CollOp) through the
// library, measured as OSU 6.1's collective benchmarks do (osu_allreduce.c
// and its siblings) and by commcost's harness at the same time.
//
// Bytes is the size column of the OSU benchmark: the broadcast buffer,
// the reduced vector (reduce, allreduce, reduce_scatter), each rank's
// block (gather, scatter, allgather and their v-forms with equal counts),
// the block to each peer (alltoall, alltoallv) and each rank's share of
// reduce_scatter_block; barrier moves none. reduce_scatter splits its
// vector as osu_reduce_scatter does: size/p elements each, the remainder
// one more to the first ranks.
//
// A repetition is a barrier, Iters calls back to back timed on every rank,
// and the harness's max-reduction; with Iters 1 (the default) that is
// OSU's loop, a barrier around every timed call. Two figures come out of
// the same repetitions: commcost's, the median over repetitions of the
// maximum over ranks (the record's summary, with its CI), and OSU's, the
// average over ranks of each rank's mean time per call, with its minimum
// and maximum (derived osu_avg_s, osu_min_s, osu_max_s). OSU sets OSU's
// own repetition counts instead of the stopping rule.
type Collective struct {
	Op mpi.CollOp
	// Alg is the algorithm the library was told to run (ForcedAlgorithm),
	// recorded in the record's "alg"; "" means the library's default.
	Alg      string
	Bytes    int
	Type     mpi.Datatype // element type of a reduction
	Reduce   mpi.Op       // operation of a reduction
	Root     int          // root of the rooted collectives
	Iters    int          // calls per repetition; 0 means 1
	OSU      bool         // OSU's iteration and skip counts as the repetitions
	Validate bool
	Reps     Reps
}

// Derived values of collective records: OSU's figure.
const (
	DerivedOSUAvg = "osu_avg_s" // average over ranks of each rank's mean time per call
	DerivedOSUMin = "osu_min_s" // minimum over ranks of the same
	DerivedOSUMax = "osu_max_s" // maximum over ranks of the same
)

// collTypeByte is the type parameter of the collectives that move bytes.
const collTypeByte = "byte"

// collNoReduction is the reduction parameter of the same.
const collNoReduction = "none"

// osuLarge reports whether OSU uses its large-message counts for a
// collective of bytes: its size variable exceeds 8192, and that variable
// counts floats in the reduction benchmarks and bytes elsewhere.
func osuLarge(op mpi.CollOp, bytes int) bool {
	size := bytes
	if op.Reduces() {
		size = bytes / 4 // sizeof(float)
	}
	return size > OSULargeMessage
}

// OSUCollCounts are OSU 6.1's timed and untimed iterations of a collective
// benchmark at bytes.
func OSUCollCounts(op mpi.CollOp, bytes int) (iters, skip int) {
	if osuLarge(op, bytes) {
		return OSUCollItersLarge, OSUCollSkipLarge
	}
	return OSUCollItersSmall, OSUCollSkipSmall
}

// osuCollReps are the repetitions of OSU's loop at bytes: skip untimed,
// then exactly iters timed, none stopped early.
func osuCollReps(op mpi.CollOp, bytes int, r Reps) Reps {
	iters, skip := OSUCollCounts(op, bytes)
	r.Warmup, r.MinReps, r.MaxReps, r.MaxTime = skip, iters, iters, math.MaxFloat64
	return r
}

// OSUReduceScatterCounts are osu_reduce_scatter's receive counts of a
// vector of n elements over p ranks.
func OSUReduceScatterCounts(n, p int) []int {
	counts := make([]int, p)
	if n < p {
		for i := 0; i < n; i++ {
			counts[i] = 1
		}
		return counts
	}
	for i := range counts {
		counts[i] = n / p
		if i < n%p {
			counts[i]++
		}
	}
	return counts
}

func (k Collective) iters() int { return max(k.Iters, 1) }

func (k Collective) bytes() int {
	if k.Op == mpi.CollBarrier {
		return 0
	}
	return k.Bytes
}

// Check reports an instance no run could measure on p ranks.
func (k Collective) Check(p int) error {
	switch {
	case p < 2:
		return fmt.Errorf("collective %v needs at least 2 ranks, got %d", k.Op, p)
	case k.Op.Rooted() && (k.Root < 0 || k.Root >= p):
		return fmt.Errorf("collective %v: root %d outside the %d ranks", k.Op, k.Root, p)
	case k.Op.Reduces() && k.Bytes%k.Type.Size() != 0:
		return fmt.Errorf("collective %v of %v: %d bytes is not a whole number of %d-byte elements", k.Op, k.Type, k.Bytes, k.Type.Size())
	}
	return nil
}

// collData is one rank's buffers and call of a collective, and how to fill
// and check them for validation.
type collData struct {
	k        Collective
	p, me, m int
	call     mpi.CollCall
}

// newCollData allocates and lays out this rank's buffers.
func newCollData(k Collective, p, me int) *collData {
	d := &collData{k: k, p: p, me: me, m: k.bytes()}
	m := d.m
	c := mpi.CollCall{Op: k.Op, Type: k.Type, Reduce: k.Reduce, Root: k.Root}
	equal := func() (counts, displs []int) {
		counts, displs = make([]int, p), make([]int, p)
		for i := range counts {
			counts[i], displs[i] = m, i*m
		}
		return
	}
	switch k.Op {
	case mpi.CollBcast:
		c.Send = make([]byte, m)
	case mpi.CollReduce, mpi.CollAllreduce:
		c.Send, c.Recv = make([]byte, m), make([]byte, m)
	case mpi.CollGather, mpi.CollAllgather:
		c.Send, c.Recv = make([]byte, m), make([]byte, p*m)
	case mpi.CollGatherv, mpi.CollAllgatherv:
		c.Send, c.Recv = make([]byte, m), make([]byte, p*m)
		c.Counts, c.Displs = equal()
	case mpi.CollScatter:
		c.Send, c.Recv = make([]byte, p*m), make([]byte, m)
	case mpi.CollScatterv:
		c.Send, c.Recv = make([]byte, p*m), make([]byte, m)
		c.Counts, c.Displs = equal()
	case mpi.CollAlltoall:
		c.Send, c.Recv = make([]byte, p*m), make([]byte, p*m)
	case mpi.CollAlltoallv:
		c.Send, c.Recv = make([]byte, p*m), make([]byte, p*m)
		c.Counts, c.Displs = equal()
		c.RecvCounts, c.RecvDispls = equal()
	case mpi.CollReduceScatterBlock:
		c.Send, c.Recv = make([]byte, p*m), make([]byte, m)
	case mpi.CollReduceScatter:
		es := k.Type.Size()
		c.Counts = OSUReduceScatterCounts(m/es, p)
		c.Send, c.Recv = make([]byte, m), make([]byte, c.Counts[me]*es)
	}
	d.call = c
	touch(c.Send)
	touch(c.Recv)
	return d
}

// collValue is element k of rank r's vector: a small integer, so that
// every reduction's result is exact in every element type and any order.
func collValue(r, k int) float64 { return float64((r*5+k*3)%13 - 6) }

// collExpected is element k of the reduction over p ranks.
func collExpected(p, k int, op mpi.Op) float64 {
	acc := collValue(0, k)
	for r := 1; r < p; r++ {
		v := collValue(r, k)
		switch op {
		case mpi.OpSum:
			acc += v
		case mpi.OpMin:
			acc = min(acc, v)
		case mpi.OpMax:
			acc = max(acc, v)
		}
	}
	return acc
}

// prepare fills the send data every rank contributes and clears what it
// receives, so a call that delivered nothing cannot pass check.
func (d *collData) prepare() {
	c, m, me, p := d.call, d.m, d.me, d.p
	clear(c.Recv)
	switch d.k.Op {
	case mpi.CollBcast:
		clear(c.Send)
		if me == d.k.Root {
			fillBlock(c.Send, me, 0)
		}
	case mpi.CollReduce, mpi.CollAllreduce, mpi.CollReduceScatterBlock, mpi.CollReduceScatter:
		dt := d.k.Type
		for i := range len(c.Send) / dt.Size() {
			mpi.PutElement(c.Send, dt, i, collValue(me, i))
		}
	case mpi.CollGather, mpi.CollGatherv, mpi.CollAllgather, mpi.CollAllgatherv:
		fillBlock(c.Send, me, 0)
	default: // scatter and alltoall: block d for rank d
		for dst := range p {
			fillBlock(c.Send[dst*m:(dst+1)*m], me, dst)
		}
	}
}

// check compares what arrived with what was sent.
func (d *collData) check() error {
	c, m, me, p, k := d.call, d.m, d.me, d.p, d.k
	what := "collective " + k.Op.String()
	reduced := func(got []byte, from int) error {
		for i := range len(got) / k.Type.Size() {
			if g, w := mpi.Element(got, k.Type, i), collExpected(p, from+i, k.Reduce); g != w {
				return fmt.Errorf("%s: %w: element %d of the %v %v is %v, want %v", what, ErrValidation, from+i, k.Type, k.Reduce, g, w)
			}
		}
		return nil
	}
	switch k.Op {
	case mpi.CollBcast:
		return checkBlock(c.Send, k.Root, 0, what)
	case mpi.CollReduce:
		if me != k.Root {
			return nil
		}
		return reduced(c.Recv, 0)
	case mpi.CollAllreduce:
		return reduced(c.Recv, 0)
	case mpi.CollReduceScatterBlock:
		return reduced(c.Recv, me*len(c.Recv)/k.Type.Size())
	case mpi.CollReduceScatter:
		from := 0
		for i := range me {
			from += c.Counts[i]
		}
		return reduced(c.Recv, from)
	case mpi.CollGather, mpi.CollGatherv, mpi.CollAllgather, mpi.CollAllgatherv:
		if (k.Op == mpi.CollGather || k.Op == mpi.CollGatherv) && me != k.Root {
			return nil
		}
		for s := range p {
			if err := checkBlock(c.Recv[s*m:(s+1)*m], s, 0, what); err != nil {
				return err
			}
		}
	case mpi.CollScatter, mpi.CollScatterv:
		return checkBlock(c.Recv, k.Root, me, what)
	case mpi.CollAlltoall, mpi.CollAlltoallv:
		for s := range p {
			if err := checkBlock(c.Recv[s*m:(s+1)*m], s, me, what); err != nil {
				return err
			}
		}
	}
	return nil
}

// collBatch is the batch of a collective's repetitions: the backend's
// kernel (mpi.CollKernels), else the calls through the Comm in Go.
func collBatch(c mpi.Comm, call mpi.CollCall, iters int) BatchRep {
	if ck, ok := c.(mpi.CollKernels); ok {
		return func(b mpi.Batch) error { return ck.CollBatch(b, call, iters) }
	}
	return SerialBatch(c, func() (float64, error) {
		t0 := c.Wtime()
		for range iters {
			if err := call.Do(c); err != nil {
				return 0, err
			}
		}
		return c.Wtime() - t0, nil
	})
}

// needFeatures reports the first feature c lacks for op.
func collNeeds(c mpi.Comm, op mpi.CollOp, nonBlocking bool) error {
	if op.Reduces() {
		if err := mpi.Supports(c, mpi.FeatureReducer); err != nil {
			return err
		}
	}
	if nonBlocking {
		return mpi.Supports(c, mpi.FeatureNonBlocking)
	}
	return nil
}

// Run measures the collective on every rank of c (collective).
func (k Collective) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := k.Check(p); err != nil {
		return Measurement{}, err
	}
	if err := collNeeds(c, k.Op, false); err != nil {
		return Measurement{}, err
	}
	d := newCollData(k, p, c.Rank())
	d.prepare()
	batch := collBatch(c, d.call, k.iters())
	if k.Validate {
		batch = checked(batch, d.prepare, d.check)
	}
	reps := k.Reps
	if k.OSU {
		reps = osuCollReps(k.Op, k.bytes(), reps)
	}
	reps.Reduction = ReduceMax
	m, err := MeasureBatch(c, reps, k.Validate, batch)
	if err != nil {
		return Measurement{}, err
	}
	return m.Scaled(1 / float64(k.iters())), nil
}

// typeParam and reductionParam are the record's type and reduction.
func (k Collective) typeParam() string {
	if k.Op.Reduces() {
		return k.Type.String()
	}
	return collTypeByte
}

func (k Collective) reductionParam() string {
	if k.Op.Reduces() {
		return k.Reduce.String()
	}
	return collNoReduction
}

// Params are the record parameters: every record has all six, with type
// "byte", reduction "none" and root 0 where they do not apply, so a run's
// records share one set of columns.
func (k Collective) Params(int) results.Params {
	root := 0
	if k.Op.Rooted() {
		root = k.Root
	}
	alg := k.Alg
	if alg == "" {
		alg = AlgDefault
	}
	return results.Params{"op": k.Op.String(), "bytes": k.bytes(), "type": k.typeParam(),
		"reduction": k.reductionParam(), "root": root, "iters": k.iters(), "alg": alg}
}

// AlgDefault is the "alg" of a collective record whose library chose its
// algorithm itself.
const AlgDefault = "default"

// ompiAlgorithms are Open MPI 4.1's coll/tuned algorithms per collective,
// by their MCA value (ompi_info --param coll tuned --level 9; 0 is
// "ignore", the library's own choice).
var ompiAlgorithms = map[mpi.CollOp][]string{
	mpi.CollAllreduce:          {"basic_linear", "nonoverlapping", "recursive_doubling", "ring", "segmented_ring", "rabenseifner"},
	mpi.CollAlltoall:           {"linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"},
	mpi.CollAllgather:          {"linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"},
	mpi.CollAllgatherv:         {"default", "bruck", "ring", "neighbor", "two_proc"},
	mpi.CollAlltoallv:          {"basic_linear", "pairwise"},
	mpi.CollBarrier:            {"linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"},
	mpi.CollBcast:              {"basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree", "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"},
	mpi.CollReduce:             {"linear", "chain", "pipeline", "binary", "binomial", "in-order_binary", "rabenseifner"},
	mpi.CollReduceScatter:      {"non-overlapping", "recursive_halving", "ring", "butterfly"},
	mpi.CollReduceScatterBlock: {"basic_linear", "recursive_doubling", "recursive_halving", "butterfly"},
	mpi.CollGather:             {"basic_linear", "binomial", "linear_sync"},
	mpi.CollScatter:            {"basic_linear", "binomial", "linear_nb"},
}

// OMPIAlgorithms lists Open MPI's coll/tuned algorithms of op in the order
// of their MCA values (1 first); none for a collective coll/tuned does not
// tune (gatherv, scatterv).
func OMPIAlgorithms(op mpi.CollOp) []string { return ompiAlgorithms[op] }

// ForcedAlgorithm is the algorithm the environment tells the MPI library
// to run for op, as getenv reads it: Open MPI's forced coll/tuned
// algorithm (mpirun --mca coll_tuned_use_dynamic_rules 1 --mca
// coll_tuned_<op>_algorithm N, which reach the ranks as OMPI_MCA_...
// variables; N or its name), named as ompi_info lists it, or MPICH's
// MPIR_CVAR_<OP>_INTRA_ALGORITHM; "" when neither forces one.
func ForcedAlgorithm(op mpi.CollOp, getenv func(string) string) string {
	name := op.String()
	if v := getenv("OMPI_MCA_coll_tuned_" + name + "_algorithm"); v != "" && getenv("OMPI_MCA_coll_tuned_use_dynamic_rules") == "1" {
		algs := ompiAlgorithms[op]
		if n, err := strconv.Atoi(v); err == nil {
			if n >= 1 && n <= len(algs) {
				return algs[n-1]
			}
			return "" // 0 ("ignore") or a value Open MPI refuses
		}
		if slices.Contains(algs, v) {
			return v
		}
	}
	if v := getenv("MPIR_CVAR_" + strings.ToUpper(name) + "_INTRA_ALGORITHM"); v != "" && v != "auto" && slices.Contains(mpichAlgorithms[op], v) {
		return v
	}
	return ""
}

// mpichAlgorithms are MPICH 4.0's intra-communicator algorithms per
// collective, by their MPIR_CVAR_<OP>_INTRA_ALGORITHM value (mpivars lists
// them). MPICH refuses another value at MPI_Init (earlier versions ran
// their own choice instead), so ForcedAlgorithm reads only these: a record
// names an algorithm the library ran.
var mpichAlgorithms = map[mpi.CollOp][]string{
	mpi.CollBarrier:            {"nb", "smp", "dissemination"},
	mpi.CollBcast:              {"binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"},
	mpi.CollGather:             {"binomial", "nb"},
	mpi.CollGatherv:            {"linear", "nb"},
	mpi.CollScatter:            {"binomial", "nb"},
	mpi.CollScatterv:           {"linear", "nb"},
	mpi.CollAllgather:          {"brucks", "nb", "recursive_doubling", "ring"},
	mpi.CollAllgatherv:         {"brucks", "nb", "recursive_doubling", "ring"},
	mpi.CollAlltoall:           {"brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"},
	mpi.CollAlltoallv:          {"nb", "pairwise_sendrecv_replace", "scattered"},
	mpi.CollReduce:             {"binomial", "nb", "smp", "reduce_scatter_gather"},
	mpi.CollAllreduce:          {"nb", "smp", "recursive_doubling", "reduce_scatter_allgather"},
	mpi.CollReduceScatter:      {"nb", "noncommutative", "pairwise", "recursive_doubling", "recursive_halving"},
	mpi.CollReduceScatterBlock: {"noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb"},
}

// CollAlgorithms are the "alg" values a record of op can have: AlgDefault
// and the algorithms Open MPI and MPICH can be forced to run
// (ForcedAlgorithm).
func CollAlgorithms(op mpi.CollOp) []string {
	out := append([]string{AlgDefault}, ompiAlgorithms[op]...)
	for _, a := range mpichAlgorithms[op] {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// collAlgNames are the "alg" values of every collective (CollAlgorithms
// of each), sorted: the values of the parameter's spec, which a predicted
// instance or a workload item is held to; a record is held to its op's.
func collAlgNames() []string {
	var out []string
	for _, o := range mpi.CollOps() {
		for _, a := range CollAlgorithms(o) {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Bench is the bench name of the records.
func (Collective) Bench() string { return BenchCollective }

// Record is the collective's record: commcost's figure as the summary,
// OSU's as derived values.
func (k Collective) Record(m Measurement, meta results.Meta) results.Record {
	rec := m.Record(BenchCollective, k.Params(m.CommSize), m.CommSize, meta)
	rec.Derived = osuDerived(m)
	return rec
}

// osuDerived are OSU's figure of a measurement.
func osuDerived(m Measurement) map[string]float64 {
	return map[string]float64{DerivedOSUAvg: m.RankMean.Avg, DerivedOSUMin: m.RankMean.Min, DerivedOSUMax: m.RankMean.Max}
}

// collBuffers are the bytes of the send and receive buffers of k on one
// rank of p, the most of any rank.
func collBuffers(op mpi.CollOp, m, p int) (send, recv int64) {
	m64, p64 := int64(m), int64(p)
	switch op {
	case mpi.CollBarrier:
		return 0, 0
	case mpi.CollBcast:
		return m64, 0
	case mpi.CollReduce, mpi.CollAllreduce, mpi.CollReduceScatter:
		return m64, m64
	case mpi.CollGather, mpi.CollGatherv, mpi.CollAllgather, mpi.CollAllgatherv:
		return m64, p64 * m64
	case mpi.CollScatter, mpi.CollScatterv, mpi.CollReduceScatterBlock:
		return p64 * m64, m64
	}
	return p64 * m64, p64 * m64 // alltoall
}

// Demand of a collective: its two buffers, and at least one message of
// the rank's data per call.
func (k Collective) Demand(p int) Demand {
	send, recv := collBuffers(k.Op, k.bytes(), p)
	iters := float64(k.iters())
	warm := 0.0
	if k.OSU {
		_, skip := OSUCollCounts(k.Op, k.bytes())
		warm = float64(skip)
	}
	return Demand{
		BufferBytes: send + recv, MemParam: "bytes", InFlightBytes: max(send, recv),
		RepMessages: iters, RepBytes: iters * float64(k.bytes()), RepParam: "--iters",
		WarmupMessages: warm, WarmupBytes: warm * float64(k.bytes()), WarmupParam: "--warmup",
	}
}

// CollectiveSweep is the sweep of 'commcost collective': MPI's blocking
// collectives through the library, op x size, each point measured as OSU
// 6.1's benchmark of it does and by commcost's harness.
type CollectiveSweep struct {
	RepFlags
	Iters
	RepWarmup
	Ops       []mpi.CollOp `flag:"ops" default:"barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv,alltoall,alltoallv,reduce_scatter_block,reduce_scatter" usage:"collectives: a list of barrier, bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, reduce_scatter_block, reduce_scatter"`
	Sizes     opts.Sizes   `flag:"sizes" default:"4:1M" param:"bytes" usage:"message sizes (OSU's size column: the vector of a reduction, each rank's block of the others; barrier has none): a list or LO:HI doubling; K = 1024"`
	Type      mpi.Datatype `flag:"type" default:"float" usage:"element type of the reductions: float (OSU's), double, int, long or char (a signed byte)"`
	Reduction mpi.Op       `flag:"reduction" default:"sum" usage:"operation of the reductions: sum (OSU's), min or max"`
	Root      int          `flag:"root" usage:"root rank of bcast, reduce, gather(v) and scatter(v)"`
	OSU       bool         `flag:"osu" usage:"OSU 6.1's repetition counts: 1000 timed calls after 100 untimed up to 8K (8K floats for the reductions), 100 after 10 above, instead of the stopping rule"`
	Set       opts.Given
}

func init() {
	Register(Def{Name: "collective", Summary: "MPI's blocking collectives (allreduce, bcast, ... reduce_scatter), OSU 6.1's figure and commcost's",
		New: func() Sweep { return new(CollectiveSweep) }, Defaults: map[string]string{"max-time": "1"},
		Usage: map[string]string{"iters": "calls back to back per timed repetition (default 1: a barrier before every call, as OSU)"}})
}

// collReads are the flags of 'commcost collective' and 'commcost
// nonblocking' that only some collectives read: given with none of them in
// --ops, they are refused. (--sizes is not among them: barrier runs once,
// at 0 bytes, as its help says, so a list of sizes shared by every op of
// a script's loop stays accepted.)
var collReads = OpReads[mpi.CollOp]{
	"Type":      mpi.CollOp.Reduces,
	"Reduction": mpi.CollOp.Reduces,
	"Root":      mpi.CollOp.Rooted,
}

// osuCollFixed are the fields OSU's counts fix.
var osuCollFixed = []string{"Iters", "Warmup", "MinReps", "MaxReps", "MaxTime", "RelCI"}

// checkOSUColl refuses a field OSU's counts fix, given beside them.
func checkOSUColl(osu bool, set opts.Given) error {
	if !osu {
		return nil
	}
	for _, f := range osuCollFixed {
		if set.Has(f) {
			return opts.Conflict(f, "OSU", "{OSU} fixes the calls per repetition and the repetitions as OSU 6.1 does; drop one of them")
		}
	}
	return nil
}

// Validate checks the sweep's settings.
func (s *CollectiveSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, func() error { return checkOSUColl(s.OSU, s.Set) },
		func() error { return CheckValues("Sizes", BenchCollective, "bytes", s.Sizes) },
		func() error { return collReads.Check(s.Set, "Ops", "ops", s.Ops, mpi.CollOps()) },
		func() error { return checkCollSweep(s.Ops, s.Sizes, s.Type, s.Root) })
}

// checkCollSweep checks the settings a blocking and a non-blocking
// collective sweep share: the root, and sizes that hold whole elements of
// the reductions' type.
func checkCollSweep(ops []mpi.CollOp, sizes opts.Sizes, typ mpi.Datatype, root int) error {
	if root < 0 {
		return opts.Field("Root", root, "must be a rank >= 0")
	}
	if !hasAny(ops, mpi.CollOp.Reduces) {
		return nil
	}
	es := typ.Size()
	for _, m := range sizes {
		if m%es != 0 {
			return opts.Item("Sizes", m, "the reductions move whole %d-byte %v elements; use multiples of %d (or --type)", es, typ, es)
		}
	}
	return nil
}

// planCollSweep checks a collective sweep's rank count: 2 or more, the
// root among them.
func planCollSweep(name string, p int, ops []mpi.CollOp, root int) error {
	if err := AtLeastRanks(name, 2, p, ""); err != nil {
		return err
	}
	if hasAny(ops, mpi.CollOp.Rooted) && root >= p {
		return opts.Field("Root", root, "more ranks asked for than exist (ranks are 0..%d)", p-1)
	}
	return nil
}

// collSizes are the sizes a sweep measures op at: barrier once, at 0.
func collSizes(op mpi.CollOp, sizes opts.Sizes) []int {
	if op == mpi.CollBarrier {
		return []int{0}
	}
	return []int(sizes)
}

// Plan lists the instances, op by op and size by size (barrier once); it
// needs 2 ranks and the root among them.
func (s *CollectiveSweep) Plan(p int) ([]Pattern, error) {
	if err := planCollSweep("collective", p, s.Ops, s.Root); err != nil {
		return nil, err
	}
	reps := s.RepWarmup.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, op := range s.Ops {
		for _, m := range collSizes(op, s.Sizes) {
			out = append(out, Collective{Op: op, Alg: ForcedAlgorithm(op, os.Getenv), Bytes: m, Type: s.Type, Reduce: s.Reduction, Root: s.Root,
				Iters: s.IterCount(), OSU: s.OSU, Validate: s.Verify, Reps: reps})
		}
	}
	return out, nil
}

// collOpNames are the collectives' names, for the parameter spec.
func collOpNames() []string {
	var out []string
	for _, o := range mpi.CollOps() {
		out = append(out, o.String())
	}
	return out
}

// collTypeNames are the type parameter's values.
func collTypeNames() []string {
	out := []string{collTypeByte}
	for _, t := range mpi.Datatypes {
		out = append(out, t.String())
	}
	return out
}
