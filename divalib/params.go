package divalib

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The physical range of the dsm records' parameters, checked on every
// record written or read (results.RegisterParamCheck): a records file
// with a mesh of 0x4 or a block of -16 ints is refused on read by every
// command (dsm plot, compare, report) instead of drawn.
var (
	specStrategy = patterns.ParamSpec{Key: "strategy", Kind: patterns.ParamString}
	specMesh     = patterns.ParamSpec{Key: "mesh", Kind: patterns.ParamString}
	dsmParams    = map[string][]patterns.ParamSpec{
		BenchCheck: {specStrategy, specMesh, {Key: "workload", Kind: patterns.ParamString},
			{Key: "ops", Kind: patterns.ParamInt, Min: 0, NoMax: true},
			{Key: "memory_bytes", Kind: patterns.ParamInt, Min: 1, NoMax: true, Unit: "bytes", Optional: true}},
		BenchMatSquare: {specStrategy, specMesh, {Key: "block_ints", Kind: patterns.ParamInt, Min: 1, Max: MaxBlockInts},
			{Key: "kernel", Kind: patterns.ParamString, Values: []string{string(KernelMul), string(KernelSum)}, Optional: true}},
		BenchOverhead: {specStrategy, specMesh, {Key: "op", Kind: patterns.ParamString, Values: OverheadOps()},
			{Key: "bytes", Kind: patterns.ParamInt, Min: 0, Max: float64(MaxVarBytes), Unit: "bytes"}},
	}
)

// OverheadOps are the ops of the dsm-overhead records (Overhead.Records,
// RemoteReadRecord): the cached read and write, the store's barrier of
// each kind, MPI's barrier and the remote read.
func OverheadOps() []string {
	ops := []string{"cached-read", "cached-write"}
	for _, b := range []BarrierKind{BarrierTree, BarrierCentral, BarrierDissemination, BarrierMPI} {
		ops = append(ops, "barrier-"+b.String())
	}
	return append(ops, "mpi-barrier", "remote-read")
}

// MaxBlockInts is the largest matsquare block in 4-byte ints: one block
// is one message, with room for the store's header (the bound of `dsm
// matsquare --blocks`, as of bitonic's --keys). A block is also a perfect
// square (a k x k submatrix), which the record check requires too.
const MaxBlockInts = (mpi.MaxCount - 64) / 4

// MaxVarBytes is the largest variable a store holds: one MPI message less
// the store's header.
const MaxVarBytes = 1<<31 - 1 - headerBytes

func init() {
	for bench, specs := range dsmParams {
		check := func(p results.Params) error { return CheckRecordParams(bench, specs, p) }
		if bench == BenchCheck {
			check = func(p results.Params) error {
				if err := checkWorkloadName(p); err != nil {
					return err
				}
				return CheckRecordParams(bench, specs, p)
			}
		}
		if bench == BenchMatSquare {
			check = func(p results.Params) error {
				if err := checkSquareBlock(p); err != nil {
					return err
				}
				return CheckRecordParams(bench, specs, p)
			}
		}
		results.RegisterParamCheck(bench, check)
	}
}

// checkSquareBlock refuses a matsquare record whose block_ints is a whole
// number but no perfect square: the writer squares blocks of k x k ints
// (MatSquareConfig) and runs no other size. It is checked before the
// range, so that 2^31 is named for what it is not; past 2^53 (where the
// integer square root could overflow) the range alone refuses it.
func checkSquareBlock(p results.Params) error {
	m, ok := p["block_ints"].(int)
	if ok && m >= 1 && m < 1<<53 && !PerfectSquare(m) {
		return fmt.Errorf("block_ints = %d: must be a perfect square (a block is k x k ints: 64, 256, 1024, 4096, ...)", m)
	}
	return nil
}

// CheckRecordParams checks a dsm record's parameters against specs, with
// no parameter specs do not name (patterns.UnknownParams), and its mesh
// (ROWSxCOLS with both at least 1) for the benches of this package and
// apps/dsmexp's.
func CheckRecordParams(bench string, specs []patterns.ParamSpec, p results.Params) error {
	if err := patterns.CheckSpecs(specs, p); err != nil {
		return err
	}
	if err := patterns.UnknownParams(bench, p, specs); err != nil {
		return err
	}
	if s, ok := p["mesh"].(string); ok {
		r, c, err := ParseMesh(s)
		if err != nil {
			return fmt.Errorf("mesh = %q: %s", s, strings.TrimPrefix(err.Error(), fmt.Sprintf("mesh %q: ", s)))
		}
		if r < 1 || c < 1 {
			return fmt.Errorf("mesh = %q: must be ROWSxCOLS with ROWS, COLS >= 1", s)
		}
		// The writers spell a mesh as Mesh.String does: another spelling
		// of the same mesh would be taken for another by the tables.
		if want := (Mesh{Rows: r, Cols: c}).String(); s != want {
			return fmt.Errorf("mesh = %q: the writers spell this mesh %q", s, want)
		}
	}
	return nil
}

// CheckExperimentRecord is the record check of the dsm records (check,
// overhead, and the paper-004 experiments matsquare, bitonic,
// Barnes-Hut): the unit is s, the strategy is one the commands take
// (Hand or a ParseStrategy name), the mesh holds exactly the record's
// ranks, one rank per processor, a verified counter is 1, no derived
// time ("..._s") is negative and the counters keep the bounds their
// definitions imply (checkCounters).
func CheckExperimentRecord(r *results.Record) error {
	if r.Unit != results.UnitSeconds {
		return fmt.Errorf("unit %q: a dsm record is a time in %q", r.Unit, results.UnitSeconds)
	}
	if s, ok := r.Params["strategy"].(string); ok && s != Hand {
		if _, _, err := ParseStrategy(s); err != nil {
			return fmt.Errorf("strategy = %q: accepted are %s and %s", s, StrategyForms(), Hand)
		}
	}
	if s, ok := r.Params["mesh"].(string); ok {
		rows, cols, err := ParseMesh(s)
		if err != nil {
			return err
		}
		if rows > r.Ranks || cols > r.Ranks || rows*cols != r.Ranks { // a side beyond the ranks first: the product may wrap around
			return fmt.Errorf("mesh = %q has %s processors but ranks = %d: the mesh holds one rank per processor", s, results.FormatCount(float64(rows)*float64(cols)), r.Ranks)
		}
	}
	// A run whose result failed its check ends in an error and writes
	// no record, so a record says verified = 1 or nothing.
	if v, ok := r.Counters["verified"]; ok && v != 1 {
		return fmt.Errorf("counters verified = %v: an experiment's record is of a result that passed its check (1)", v)
	}
	// The derived times (a phase's seconds, "exchange_s") are durations.
	for _, k := range slices.Sorted(maps.Keys(r.Derived)) {
		if strings.HasSuffix(k, "_s") && r.Derived[k] < 0 {
			return fmt.Errorf("derived %s = %v: a time is not negative", k, r.Derived[k])
		}
	}
	if err := checkOverheadWrites(r); err != nil {
		return err
	}
	if err := checkRunsAndAggregate(r); err != nil {
		return err
	}
	if r.Bench == BenchCheck {
		w, _ := r.Params["workload"].(string)
		ops, ok := r.Params["ops"].(int)
		if ok {
			if err := checkCheckCounters(r.Ranks, w, float64(ops), r.Counters); err != nil {
				return err
			}
		}
	}
	return checkCounters(r)
}

// counterBounds are pairs of counters of one record where the first is at
// most the second, by their definitions (Congestion, Stats, Section): a
// link's most bytes or messages are part of the sum over links; every
// message between two ranks, and each of its bytes, crosses at least one
// link; one rank's messages are part of all ranks'; a read hit is a read;
// a write made in place is a write.
var counterBounds = []struct{ lo, hi, why string }{
	{"congestion_bytes", "load_bytes", "the most bytes on one link are part of the sum over links"},
	{"congestion_messages", "load_messages", "the most messages on one link are part of the sum over links"},
	{"bytes_sent", "load_bytes", "every byte sent between two ranks crosses at least one link"},
	{"startups", "load_messages", "every message between two ranks crosses at least one link"},
	{"max_startups_per_rank", "startups", "one rank's messages are part of all ranks'"},
	{"read_hits", "reads", "a read hit is one of the reads"},
	{"writes_in_place", "writes", "a write made in place is one of the writes"},
}

// checkCounters refuses counters that contradict each other
// (counterBounds, each where the record has both), startups beyond ranks x
// max_startups_per_rank, and a read_hit_ratio other than read_hits /
// reads (0 without reads), as the writers compute it, or without them.
func checkCounters(r *results.Record) error {
	c := r.Counters
	for _, b := range counterBounds {
		lo, okLo := c[b.lo]
		hi, okHi := c[b.hi]
		if okLo && okHi && lo > hi {
			return fmt.Errorf("counters %s = %v is more than %s = %v: %s", b.lo, lo, b.hi, hi, b.why)
		}
	}
	if s, ok := c["startups"]; ok {
		if m, ok := c["max_startups_per_rank"]; ok && s > float64(r.Ranks)*m {
			return fmt.Errorf("counters startups = %v is more than ranks x max_startups_per_rank = %d x %v: no rank sends more than the most", s, r.Ranks, m)
		}
	}
	if err := checkLoadBound(r); err != nil {
		return err
	}
	if v, ok := r.Derived["read_hit_ratio"]; ok {
		_, okR := c["reads"]
		_, okH := c["read_hits"]
		if !okR || !okH {
			return fmt.Errorf("derived read_hit_ratio = %v without the counters reads and read_hits it is the ratio of", v)
		}
		want := 0.0
		if reads := c["reads"]; reads > 0 {
			want = c["read_hits"] / reads
		}
		if math.Abs(v-want) > 1e-9*math.Max(math.Abs(v), math.Abs(want)) {
			return fmt.Errorf("derived read_hit_ratio = %v disagrees with read_hits / reads = %v / %v = %v", v, c["read_hits"], c["reads"], want)
		}
	}
	return nil
}

func init() {
	for _, bench := range []string{BenchCheck, BenchMatSquare, BenchOverhead} {
		results.RegisterRecordCheck(bench, CheckExperimentRecord)
	}
}

// checkRunsAndAggregate: a dsm-check record times one run of its
// workload (CheckRecord: n = 1); a dsm-overhead record's cached accesses
// are rank 0's own (results.ReductionRank0), its barriers and remote
// reads the maximum over ranks (Overhead.Records, RemoteReadRecord). An
// aggregate left out passes.
func checkRunsAndAggregate(r *results.Record) error {
	switch r.Bench {
	case BenchCheck:
		if r.N != 1 {
			return fmt.Errorf("n = %d: a %s record times one run of its workload (n = 1)", r.N, BenchCheck)
		}
	case BenchOverhead:
		op, _ := r.Params["op"].(string)
		want := results.ReductionMaxOverRanks
		if op == "cached-read" || op == "cached-write" {
			want = results.ReductionRank0
		}
		if r.Reduction != "" && r.Reduction != want {
			return fmt.Errorf("aggregate %q on op %s: its samples are %s (rank 0's own cached accesses; the maximum over ranks of the barriers and remote reads)", r.Reduction, op, want)
		}
	}
	return nil
}

// checkOverheadWrites: of the dsm-overhead ops only the cached write and
// the remote read (whose home writes invalidate the copies) count writes
// (Overhead.Records, RemoteReadRecord); the other ops' records have 0.
func checkOverheadWrites(r *results.Record) error {
	if r.Bench != BenchOverhead {
		return nil
	}
	op, _ := r.Params["op"].(string)
	if op == "cached-write" || op == "remote-read" {
		return nil
	}
	for _, k := range []string{"writes", "writes_in_place"} {
		if v, ok := r.Counters[k]; ok && v != 0 {
			return fmt.Errorf("counters %s = %v on op %s: only cached-write and remote-read records count writes (the others write 0)", k, v, op)
		}
	}
	return nil
}

// checkLoadBound: a message between two ranks takes the dimension-order
// path, a shortest one, so it crosses at most the mesh's diameter
// (rows-1 + cols-1) links; the load over links (load_bytes,
// load_messages) is then at most the diameter times what was sent
// (bytes_sent, startups).
func checkLoadBound(r *results.Record) error {
	s, ok := r.Params["mesh"].(string)
	if !ok {
		return nil
	}
	rows, cols, err := ParseMesh(s)
	if err != nil {
		return nil // refused by the mesh checks
	}
	diam := float64(rows-1) + float64(cols-1)
	for _, p := range [][2]string{{"load_bytes", "bytes_sent"}, {"load_messages", "startups"}} {
		load, okL := r.Counters[p[0]]
		sent, okS := r.Counters[p[1]]
		if okL && okS && load > diam*sent*(1+1e-12) {
			return fmt.Errorf("counters %s = %v is more than the mesh's diameter x %s = %v x %v = %v: a message crosses at most %v links on mesh %s", p[0], load, p[1], diam, sent, diam*sent, diam, s)
		}
	}
	return nil
}
