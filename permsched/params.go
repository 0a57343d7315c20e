package permsched

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The physical range of the experiments' record parameters, checked on
// every record written or read (results.RegisterParamCheck): `sched
// breakeven --in` and every other reader refuse a file whose exchange has
// -16 bytes, a density of -1 or 0 ranks instead of fitting it.
var (
	specD       = patterns.ParamSpec{Key: "d", Kind: patterns.ParamInt, Min: 0, NoMax: true}
	specMsg     = patterns.ParamSpec{Key: "bytes", Kind: patterns.ParamInt, Min: 0, Max: maxMessageBytes, Unit: "bytes"}
	specMatrix  = patterns.ParamSpec{Key: "matrix", Kind: patterns.ParamInt, Min: 0, NoMax: true}
	specSched   = patterns.ParamSpec{Key: "scheduler", Kind: patterns.ParamString}
	specN       = patterns.ParamSpec{Key: "n", Kind: patterns.ParamInt, Min: 1, Max: MaxRanks}
	specReuse   = patterns.ParamSpec{Key: "reuse", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: MaxReuse}
	schedParams = map[string][]patterns.ParamSpec{
		BenchComm:      {specD, specMatrix, specMsg, specSched},
		BenchSchedule:  {specD, specMatrix, specSched},
		BenchPerm1:     {specMsg},
		"sched.perms":  {specN, specD, specSched},
		"sched.time":   {specN, specD, specSched},
		"sched.maxdeg": {specN, specD},
		"sched.slope":  {specSched},
		BenchCostFit:   {specReuse},
		BenchBreak:     {specMsg, specReuse},
	}
)

func init() {
	for bench, specs := range schedParams {
		results.RegisterParamCheck(bench, func(p results.Params) error { return patterns.CheckSpecs(specs, p) })
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
// The matrix's size and density fit the ranks (checkDensity). The fitted
// constants (C2_s, tau_s, a slope and its intercept) are left free: noise
// can make them negative.
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
	if d, ok := paramInt(*r, "d"); ok && paramString(*r, "gen") != "trace" && d > r.Ranks-1 {
		return fmt.Errorf("d = %d at ranks = %d: want 0 <= d <= n-1 = %d (the density of a generated matrix)", d, r.Ranks, r.Ranks-1)
	}
	return nil
}

// same refuses a derived value beyond a relative 1e-6 of want (how says
// what want is).
func same(key string, v, want float64, how string) error {
	if math.Abs(v-want) <= 1e-6*math.Max(math.Abs(v), math.Abs(want)) {
		return nil
	}
	return fmt.Errorf("derived %s = %v disagrees with %s, %.6g", key, v, how, want)
}
