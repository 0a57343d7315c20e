package permsched

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The physical range of the experiments' record parameters, checked on
// every record written or read (results.RegisterParamCheck): `sched
// breakeven --in` and every other reader refuse a file whose exchange has
// -16 bytes, a density of -1 or 0 ranks instead of fitting it. The
// scheduler and the generator are the names the writers write: a
// scheduler of SchedulerNames (and, for an exchange, AlltoallvName), a
// generator of GenKinds or "trace" (a --matrix file). A record's matrix is
// one of 0 .. --matrices - 1, a count bounded by patterns.MaxCount.
var (
	specD       = patterns.ParamSpec{Key: "d", Kind: patterns.ParamInt, Min: 0, NoMax: true}
	specMsg     = patterns.ParamSpec{Key: "bytes", Kind: patterns.ParamInt, Min: 0, Max: maxMessageBytes, Unit: "bytes"}
	specMatrix  = patterns.ParamSpec{Key: "matrix", Kind: patterns.ParamInt, Min: 0, Max: patterns.MaxCount - 1}
	specSched   = patterns.ParamSpec{Key: "scheduler", Kind: patterns.ParamString, Values: SchedulerNames()}
	specMethod  = patterns.ParamSpec{Key: "scheduler", Kind: patterns.ParamString, Values: DefaultMethods()}
	specGen     = patterns.ParamSpec{Key: "gen", Kind: patterns.ParamString, Values: append(GenKinds(), GenTrace)}
	specN       = patterns.ParamSpec{Key: "n", Kind: patterns.ParamInt, Min: 1, Max: MaxRanks}
	specReuse   = patterns.ParamSpec{Key: "reuse", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: MaxReuse}
	schedParams = map[string][]patterns.ParamSpec{
		BenchComm:      {specD, specGen, specMatrix, specMsg, specMethod},
		BenchSchedule:  {specD, specGen, specMatrix, specSched},
		BenchPerm1:     {specMsg},
		"sched.perms":  {specN, specD, specGen, specSched},
		"sched.time":   {specN, specD, specGen, specSched},
		"sched.maxdeg": {specN, specD, specGen},
		"sched.slope":  {specSched, {Key: "x", Kind: patterns.ParamString, Values: []string{SlopeRegressor}}},
		BenchCostFit:   {specReuse},
		BenchBreak:     {specMsg, specReuse},
	}
)

// GenTrace is the generator name of the records of a --matrix file's
// matrix (a trace) instead of generated ones.
const GenTrace = "trace"

// schedCounters and schedDerived are the counter and derived keys each
// bench's writer writes (RunComm, CountCell.Records, SlopeRecords,
// CostModel.Records); a record with another key is of no run.
var (
	schedCounters = map[string][]string{
		BenchComm:     {"phases", "D", "messages", "total_bytes"},
		BenchSchedule: {"phases", "D", "messages"},
		"sched.perms": {"optimal", "matrices"},
		"sched.slope": {"cells"},
	}
	schedDerived = map[string][]string{
		BenchComm:     {"sched_s", "sched_over_comm"},
		"sched.perms": {"d_plus_log2d", "mean_D", "paper_perms", "rel_diff_paper"},
		"sched.slope": {"slope_s", "slope_se_s", "intercept_s", "r2", "rel_rse"},
		BenchCostFit: {"tau_s", "tau_se_s", "phi_s_per_B", "phi_se_s_per_B", "alpha_s", "alpha_se_s", "C1", "C1_se",
			"G_s", "G_se_s", "C2_s", "C2_se_s", "C3", "C3_se", "breakeven_small_d"},
		BenchBreak: {"eq6_d", "full_max_d"},
	}
)

func init() {
	for bench, specs := range schedParams {
		results.RegisterParamCheck(bench, func(p results.Params) error {
			if err := patterns.CheckSpecs(specs, p); err != nil {
				return err
			}
			return patterns.UnknownParams(bench, p, specs)
		})
		results.RegisterRecordCheck(bench, func(r *results.Record) error { return checkRecord(bench, r) })
	}
}

// schedUnits is the unit of each bench's records: the exchanges and
// scheduling times in seconds, schedule lengths and break-even densities
// counts, the fitted slope and C2 in UnitSlope.
var schedUnits = map[string]string{
	BenchComm: results.UnitSeconds, BenchSchedule: results.UnitSeconds, BenchPerm1: results.UnitSeconds,
	"sched.time": results.UnitSeconds, "sched.perms": results.UnitCount, "sched.maxdeg": results.UnitCount,
	"sched.slope": UnitSlope, BenchCostFit: UnitSlope, BenchBreak: results.UnitCount,
}

// checkRecord is the record check of the experiments' records, on every
// record written or read (`sched breakeven --in` fits them; report
// shows them): the unit the bench writes; counters (phases, D,
// messages, bytes, matrices, cells) not negative; an exchange's runtime
// scheduling cost sched_s a time of at least results.MinRecordSeconds
// (it is written only when positive) and sched_over_comm = sched_s /
// median; a schedule length's rel_diff_paper = mean / paper_perms - 1;
// sched.costfit's median its C2_s and sched.breakeven's its full_max_d.
// The matrix's size and density fit the ranks (checkDensity); a record
// has only the counter and derived keys its writer writes (checkKeys); a
// schedule's and an exchange's counters are those of the matrix its
// parameters name (checkExchangeCounters), as are the count experiment's
// schedule lengths and degrees (checkCounts). The fitted constants (C2_s,
// tau_s, a slope and its intercept) are left free: noise can make them
// negative.
func checkRecord(bench string, r *results.Record) error {
	if want := schedUnits[bench]; r.Unit != want {
		return fmt.Errorf("unit %q: %s records are in %q", r.Unit, bench, want)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Counters)) {
		if v := r.Counters[k]; v < 0 {
			return fmt.Errorf("counters %s = %v is negative: a %s record counts", k, v, bench)
		}
	}
	if err := checkDensity(r); err != nil {
		return err
	}
	if err := checkKeys(bench, r); err != nil {
		return err
	}
	switch bench {
	case BenchComm, BenchSchedule:
		if err := checkExchangeCounters(r); err != nil {
			return err
		}
	case "sched.perms", "sched.maxdeg":
		if err := checkCounts(bench, r); err != nil {
			return err
		}
	}
	d := r.Derived
	switch bench {
	case BenchComm:
		s, ok := d["sched_s"]
		if ok && !(s >= results.MinRecordSeconds) {
			return fmt.Errorf("derived sched_s = %v: the scheduling time is at least %g s", s, results.MinRecordSeconds)
		}
		if v, has := d["sched_over_comm"]; has {
			if !ok || !(r.Median > 0) {
				return fmt.Errorf("derived sched_over_comm = %v without a sched_s and a positive median to be their ratio", v)
			}
			if err := same("sched_over_comm", v, s/r.Median, "sched_s / median"); err != nil {
				return err
			}
		}
	case "sched.perms":
		// One schedule length per matrix, optimal among them; d + log2 d
		// is d's (the paper's eq. 4).
		if m, ok := r.Counters["matrices"]; ok && m != float64(r.N) {
			return fmt.Errorf("counters matrices = %v but n = %d: a schedule length per matrix", m, r.N)
		}
		if o, ok := r.Counters["optimal"]; ok && o > float64(r.N) {
			return fmt.Errorf("counters optimal = %v of n = %d matrices: at most one per matrix", o, r.N)
		}
		if v, ok := d["d_plus_log2d"]; ok {
			if dd, ok := paramInt(*r, "d"); ok {
				if err := same("d_plus_log2d", v, DPlusLog2D(dd), "d + log2 d"); err != nil {
					return err
				}
			}
		}
		if p, ok := d["paper_perms"]; ok {
			if !(p > 0) {
				return fmt.Errorf("derived paper_perms = %v: the paper's schedule length is positive", p)
			}
			if v, has := d["rel_diff_paper"]; has {
				return same("rel_diff_paper", v, r.Mean/p-1, "mean / paper_perms - 1")
			}
		}
	case "sched.slope":
		if err := checkSlope(r); err != nil {
			return err
		}
	case BenchCostFit:
		if v, ok := d["C2_s"]; ok {
			return same("C2_s", v, r.Median, "the median (the record's value is C2)")
		}
	case BenchBreak:
		if v, ok := d["full_max_d"]; ok {
			return same("full_max_d", v, r.Median, "the median (the record's value is the full model's break-even)")
		}
	}
	return nil
}

// checkDensity: a record's n is its rank count (a matrix of n x n for n
// ranks), and a generated matrix's density d, the messages per rank, is
// at most n-1, as the generators draw it (gen.go) and breakeven's fit
// requires; a traced matrix is a multigraph whose degree may be more.
func checkDensity(r *results.Record) error {
	if n, ok := paramInt(*r, "n"); ok && n != r.Ranks {
		return fmt.Errorf("n = %d on ranks = %d: a record's matrix has a row per rank", n, r.Ranks)
	}
	if d, ok := paramInt(*r, "d"); ok && paramString(*r, "gen") != GenTrace && d > r.Ranks-1 {
		return fmt.Errorf("d = %d at ranks = %d: want 0 <= d <= n-1 = %d (the density of a generated matrix)", d, r.Ranks, r.Ranks-1)
	}
	return nil
}

// checkKeys refuses a counter or derived key the bench's writer does not
// write (schedCounters, schedDerived).
func checkKeys(bench string, r *results.Record) error {
	for _, kind := range []struct {
		name string
		m    map[string]float64
		keys []string
	}{{"counters", r.Counters, schedCounters[bench]}, {"derived", r.Derived, schedDerived[bench]}} {
		for _, k := range slices.Sorted(maps.Keys(kind.m)) {
			if !slices.Contains(kind.keys, k) {
				has := "none"
				if len(kind.keys) > 0 {
					has = strings.Join(kind.keys, ", ")
				}
				return fmt.Errorf("%s %s = %v: a %s record has no such value (its writer writes %s)", kind.name, k, kind.m[k], bench, has)
			}
		}
	}
	return nil
}

// degreeRange is the range of the max degree D (the most messages a rank
// sends or receives) of a matrix of density d on n ranks from generator
// gen: Fig. 7's are d-regular (D = d); uniform and skewed ones send d
// messages per rank to distinct other ranks (d <= D <= n-1); a trace
// (the count experiment's d is its max out-degree) receives at most its
// n*d messages.
func degreeRange(gen string, n, d int) (lo, hi float64, why string) {
	switch gen {
	case GenFig7, GenFig7NoSelf:
		return float64(d), float64(d), "a " + gen + " matrix is d-regular"
	case GenTrace:
		return float64(d), float64(n) * float64(d), "a trace's max degree is at least its max out-degree d and at most its n x d messages"
	}
	return float64(d), float64(max(n-1, d)), "every rank sends d messages to distinct other ranks"
}

// maxPhases bounds a schedule's length on n ranks of max degree D: each
// phase of GM, CGM and EXACT carries a message, and there are at most
// n*D <= P*D; LP keeps its P-1 steps (P the smallest power of two >= n),
// one more for self-sends, once per copy of its most repeated pair (at
// most D).
func maxPhases(n int, deg float64) float64 {
	p := 1
	for p < n {
		p <<= 1
	}
	return max(1, deg) * float64(p)
}

// checkExchangeCounters ties the counters of a schedule (sched.schedule)
// or an exchange (sched.comm) of matrix d on the record's ranks to what
// RunComm writes: for a generated matrix messages = ranks x d and D in
// degreeRange; for a trace (whose d is its max degree) D = d and
// d <= messages <= ranks x d, and its one matrix is 0. The phases:
// Alltoallv's 0, AC's posting rounds the max out-degree (d for a generated
// matrix, from ceil(messages / ranks) to D for a trace), EXACT's D, the
// others' from D to maxPhases. An exchange's total_bytes is messages x
// bytes, or, for a weighted trace, bytes = floor(total_bytes / messages).
func checkExchangeCounters(r *results.Record) error {
	d, ok := paramInt(*r, "d")
	if !ok {
		return nil
	}
	gen, name, n, c := paramString(*r, "gen"), paramString(*r, "scheduler"), r.Ranks, r.Counters
	fd, fn := float64(d), float64(n)
	if k, ok := paramInt(*r, "matrix"); ok && gen == GenTrace && k != 0 {
		return fmt.Errorf("matrix = %d of gen trace: a run of a matrix file has the one matrix 0", k)
	}
	deg, hasD := c["D"]
	if hasD {
		lo, hi, why := degreeRange(gen, n, d)
		if gen == GenTrace {
			lo, hi, why = fd, fd, "a trace's d is its max degree D"
		}
		if deg < lo || deg > hi {
			return fmt.Errorf("counters D = %v with d = %d on ranks = %d: want %s (%s)", deg, d, n, rangeText(lo, hi), why)
		}
	}
	msgs, hasM := c["messages"]
	if hasM {
		lo, hi, why := fn*fd, fn*fd, "a generated matrix has d messages per rank"
		if gen == GenTrace {
			lo, why = fd, "a trace of max degree d has at least d and at most ranks x d messages"
		}
		if msgs < lo || msgs > hi {
			return fmt.Errorf("counters messages = %v with d = %d on ranks = %d: want %s (%s)", msgs, d, n, rangeText(lo, hi), why)
		}
	}
	if ph, ok := c["phases"]; ok && hasD && hasM {
		var lo, hi float64
		var why string
		switch {
		case name == AlltoallvName:
			lo, hi, why = 0, 0, "MPI_Alltoallv is one call, no phases"
		case name == "AC" && gen != GenTrace:
			lo, hi, why = fd, fd, "AC posts one round per message a rank sends, d"
		case name == "AC":
			lo, hi, why = math.Ceil(msgs/fn), deg, "AC posts one round per message of the rank that sends most"
		case name == "EXACT":
			lo, hi, why = deg, deg, "EXACT's schedule is optimal, D phases"
		default:
			lo, hi, why = deg, maxPhases(n, deg), "a phase is a permutation: a rank sends and receives at most one message in it"
		}
		if ph < lo || ph > hi {
			return fmt.Errorf("counters phases = %v of %s with D = %v on ranks = %d: want %s (%s)", ph, name, deg, n, rangeText(lo, hi), why)
		}
	}
	tb, ok := c["total_bytes"]
	b, okB := paramInt(*r, "bytes")
	if !ok || !okB || !hasM {
		return nil
	}
	fb := float64(b)
	if r.Params["weighted"] == true {
		if msgs > 0 && (tb < msgs*fb || tb >= msgs*(fb+1)) {
			return fmt.Errorf("counters total_bytes = %v disagrees with bytes = %d, the mean size of the trace's %v messages (total from %v to %v)", tb, b, msgs, msgs*fb, msgs*(fb+1)-1)
		}
		return nil
	}
	if tb != msgs*fb {
		return fmt.Errorf("counters total_bytes = %v disagrees with messages x bytes = %v x %d = %v", tb, msgs, b, msgs*fb)
	}
	return nil
}

// checkCounts ties the count experiment's records (CountCell.Records) to
// their cell of n ranks and density d: a sched.maxdeg record's samples
// (each matrix's D) and a sched.perms record's mean_D within
// degreeRange; a schedule length (sched.perms samples) at least d (every
// rank sends d messages, one per phase at most; AC's are exactly d, its
// rounds) and at most maxPhases; for a synchronous scheduler the mean at
// least mean_D, for EXACT equal to it with every matrix optimal.
func checkCounts(bench string, r *results.Record) error {
	d, ok := paramInt(*r, "d")
	if !ok {
		return nil
	}
	gen, n := paramString(*r, "gen"), r.Ranks
	lo, hi, why := degreeRange(gen, n, d)
	if bench == "sched.maxdeg" {
		if r.Min < lo || r.Max > hi {
			return fmt.Errorf("max degree from min = %v to max = %v with d = %d on ranks = %d: want D %s (%s)", r.Min, r.Max, d, n, rangeText(lo, hi), why)
		}
		return nil
	}
	name := paramString(*r, "scheduler")
	meanD, hasMeanD := r.Derived["mean_D"]
	if hasMeanD && !(meanD >= lo && meanD <= hi) {
		return fmt.Errorf("derived mean_D = %v with d = %d on ranks = %d: want %s (%s)", meanD, d, n, rangeText(lo, hi), why)
	}
	pLo, pHi, pWhy := float64(d), maxPhases(n, hi), "every rank sends d messages, at most one per phase"
	if name == "AC" {
		pHi, pWhy = float64(d), "AC posts one round per message a rank sends, d"
	}
	if r.Min < pLo || r.Max > pHi {
		return fmt.Errorf("schedule lengths from min = %v to max = %v of %s with d = %d on ranks = %d: want %s (%s)", r.Min, r.Max, name, d, n, rangeText(pLo, pHi), pWhy)
	}
	if !hasMeanD || name == "AC" {
		return nil
	}
	tol := 1e-9 * math.Max(1, meanD)
	switch {
	case name == "EXACT" && math.Abs(r.Mean-meanD) > tol:
		return fmt.Errorf("mean = %v of EXACT disagrees with derived mean_D = %v: EXACT's schedule of a matrix has D phases", r.Mean, meanD)
	case r.Mean < meanD-tol:
		return fmt.Errorf("mean = %v of %s is less than derived mean_D = %v: a schedule of a matrix has at least D phases", r.Mean, name, meanD)
	}
	if o, ok := r.Counters["optimal"]; ok && name == "EXACT" && o != float64(r.N) {
		return fmt.Errorf("counters optimal = %v of n = %d matrices of EXACT: every EXACT schedule is optimal", o, r.N)
	}
	return nil
}

// rangeText is "= lo" or "from lo to hi".
func rangeText(lo, hi float64) string {
	if lo == hi {
		return fmt.Sprintf("= %v", lo)
	}
	return fmt.Sprintf("from %v to %v", lo, hi)
}

// same refuses a derived value beyond a relative 1e-6 of want (how says
// what want is).
func same(key string, v, want float64, how string) error {
	if math.Abs(v-want) <= 1e-6*math.Max(math.Abs(v), math.Abs(want)) {
		return nil
	}
	return fmt.Errorf("derived %s = %v disagrees with %s, %.6g", key, v, how, want)
}

// SlopeRegressor is the regressor of the sched.slope fits (FitTimeSlopes):
// the scheduling time against d n ln d.
const SlopeRegressor = "d*n*ln(d)"

// maxSlopeCells is the most cells a slope fit can have: one per (n, d)
// with 2 <= d <= n-1 and n <= MaxRanks.
const maxSlopeCells = float64(MaxRanks-1) * float64(MaxRanks-2) / 2

// checkSlope ties a sched.slope record to its fit as SlopeRecords writes
// it: no ranks (the fit is of no one launch), the median is slope_s, the
// standard errors and rel_rse (a root of a mean square) are >= 0, r2 of a
// least-squares fit with an intercept is in [0, 1] (the residuals' sum of
// squares is at most the total's), and cells is a whole number from 3
// (the fewest FitTimeSlopes fits) to maxSlopeCells.
func checkSlope(r *results.Record) error {
	if r.Ranks != 0 {
		return fmt.Errorf("ranks = %d: a sched.slope record is a fit over cells of many rank counts, written with ranks 0", r.Ranks)
	}
	d := r.Derived
	if v, ok := d["slope_s"]; ok {
		if err := same("slope_s", v, r.Median, "the median (the record's value is the slope)"); err != nil {
			return err
		}
	}
	for _, k := range []string{"slope_se_s", "rel_rse"} {
		if v, ok := d[k]; ok && !(v >= 0) {
			return fmt.Errorf("derived %s = %v: a standard error is >= 0", k, v)
		}
	}
	if v, ok := d["r2"]; ok && !(v >= -1e-9 && v <= 1+1e-9) {
		return fmt.Errorf("derived r2 = %v: the R^2 of a least-squares fit with an intercept is in [0, 1]", v)
	}
	if c, ok := r.Counters["cells"]; ok && !(c >= 3 && c <= maxSlopeCells && c == math.Trunc(c)) {
		return fmt.Errorf("counters cells = %v: a slope is fitted on 3 to %s cells (d >= 2 below n <= %d), a whole number", c, results.FormatCount(maxSlopeCells), MaxRanks)
	}
	return nil
}
