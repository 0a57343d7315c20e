package apps

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// phaseKinds is the kind each program gives each of its phases (the kind
// argument of its Phases.Time and Add calls): a record's kind is its
// phase's, so a communication phase marked sync (and left out of every
// ranking) is refused.
var phaseKinds = map[string]map[string]string{
	"gauss":        {"pivotbcast": KindComm, "eliminate": KindComp, "xbcast": KindComm, "backsolve": KindComp, "barrier": KindSync},
	"cannon":       {"align": KindComm, "multiply": KindComp, "shift": KindComm, "barrier": KindSync},
	"checkerboard": {"rowbcast": KindComm, "colbcast": KindComm, "multiply": KindComp, "barrier": KindSync},
	"multigrid":    {"exchange": KindComm, "vcycle": KindComp, "barrier": KindSync},
	"matmul":       {PhaseMM: KindComm, PhaseCompute: KindComp, PhaseSync: KindSync},
	"samplesort": {PhaseSplitter: KindComm, PhaseDistribution: KindComm, PhaseLocalSort: KindComm,
		PhaseCompute: KindComp, PhaseSync: KindSync},
	"bitonic":   {PhaseBitonic: KindComm, PhaseCompute: KindComp, PhaseSync: KindSync},
	"concomp":   {PhaseBFS: KindComm, PhaseCompute: KindComp, PhaseMerge: KindComm, PhaseSync: KindSync},
	BitonicName: {BitonicLocalSort: KindComp, BitonicExchange: KindComm, BitonicMerge: KindComp},
	"barneshut": {BHLoad: KindComm, BHCofm: KindComm, BHPartition: KindComm, BHForce: KindComm,
		BHForceComp: KindComp, BHAdvance: KindComm, BHSize: KindComm},
}

// programCounters are the counters each program's Outcome carries
// (Measure copies them into every phase record): multigrid's residual
// norms, sample sort's expansion and sample size; the other programs
// write none.
var programCounters = map[string][]string{
	"multigrid":  {"residual_first", "residual_last"},
	"samplesort": {CounterExpansion, CounterSample},
}

// storeNames caches the verdict on each store name a record gives that a
// store family parses (direct, the divalib strategies).
var storeNames sync.Map // string -> bool

// checkStoreName refuses a store param that names no store a run of r
// had: the writers record a strategy's Name (globalvar.Strategy), which
// is its --store spelling for direct and the divalib strategies and, for
// an emulated network, the network without the "emulate:" of its
// spelling, checked as the emulated records' network is
// (patterns.CheckStoreNetwork: from its family and sizes, of r's ranks)
// without building it.
func checkStoreName(s string, r *results.Record) error {
	if ok, known := storeNames.Load(s); known && ok.(bool) {
		return nil
	}
	if st, err := globalvar.ParseStrategy(s, 0); err == nil {
		// Another spelling of a store ("emulate:bf2", "tree-04") would
		// parse, but the tables group records by the name as written.
		if st.Name() != s {
			return fmt.Errorf("store = %q: a run on this store writes it %q", s, st.Name())
		}
		storeNames.Store(s, true)
		return nil
	}
	if err := patterns.CheckStoreNetwork(s, r); err != nil {
		return fmt.Errorf("store = %q names no store a run on these ranks had: accepted are %s (an emulated network as NET); as a network: %v", s, strings.Join(globalvar.Forms(), ", "), err)
	}
	return nil
}

// checkAppValues ties an application record's kind, store, counters and
// derived values to what Measure and Annotate write: the kind is the
// phase's (phaseKinds); the store parses as a store; run_phases is the
// number of phases a run of the record's params times (appPhases); the
// envelope, a sum over entries of the fastest maximum over ranks, is at
// most ranks x the fastest repetition (each entry's maximum is at most
// the sum of every rank's time in it); measured_median_s is the median,
// measured_fastest_s the fastest repetition, measured_envelope_s the
// envelope (the fastest repetition without one) and measured_s the one
// of them it names; the counters are the program's, sample sort's
// expansion (the largest bucket over n) is in [1, 2] and its sample is
// n/64 keys, and a multigrid of one iteration has one residual.
func checkAppValues(r *results.Record) error {
	name, _ := r.Params["app"].(string)
	phase, _ := r.Params["phase"].(string)
	if kind, ok := r.Params["kind"].(string); ok {
		if want, ok := phaseKinds[name][phase]; ok && kind != want {
			return fmt.Errorf("%s: kind = %q, but phase %s is a %s phase", name, kind, phase, want)
		}
	}
	if s, ok := r.Params["store"].(string); ok {
		if err := checkStoreName(s, r); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if v, ok := r.Derived[results.DerivedRunPhases]; ok {
		if ph := appPhases(name, r.Params); ph != nil && v != float64(len(ph)) {
			return fmt.Errorf("derived %s = %v, but a run of these parameters times %d phases (%s)", results.DerivedRunPhases, v, len(ph), strings.Join(ph, ", "))
		}
	}
	env, hasEnv := r.Derived[EnvelopeKey]
	if hasEnv && r.N > 0 && r.Ranks > 0 {
		if bound := float64(r.Ranks) * r.Min; env > bound*(1+1e-9) {
			return fmt.Errorf("derived %s = %v is more than ranks x the fastest repetition = %d x %v = %v: each entry's maximum over ranks is at most the ranks' sum", EnvelopeKey, env, r.Ranks, r.Min, bound)
		}
	}
	if err := checkMeasured(r, env, hasEnv); err != nil {
		return err
	}
	return checkProgramCounters(name, r)
}

// sameValue is a derived value equal to the one it is recomputed as, up
// to float rounding.
func sameValue(v, want float64) bool {
	return math.Abs(v-want) <= 1e-9*math.Max(math.Abs(v), math.Abs(want))
}

// checkMeasured checks the measured_STAT_s values against the statistics
// they are (apps.ByStat) and measured_s against the one named.
func checkMeasured(r *results.Record, env float64, hasEnv bool) error {
	if r.N == 0 {
		return nil
	}
	if !hasEnv {
		env = r.Min
	}
	stats := []struct {
		stat, how string
		v         float64
	}{{StatMedian, "the median", r.Median}, {StatFastest, "the fastest repetition (min)", r.Min}, {StatEnvelope, "the envelope", env}}
	named := ""
	for _, s := range stats {
		k := MeasuredStatKey(s.stat)
		v, ok := r.Derived[k]
		if !ok {
			continue
		}
		if !sameValue(v, s.v) {
			return fmt.Errorf("derived %s = %v disagrees with %s = %v", k, v, s.how, s.v)
		}
		named = k
	}
	if m, ok := r.Derived["measured_s"]; ok && named != "" && !sameValue(m, r.Derived[named]) {
		return fmt.Errorf("derived measured_s = %v disagrees with %s = %v, the statistic it names", m, named, r.Derived[named])
	}
	return nil
}

// checkProgramCounters checks the counters a program writes
// (programCounters) and refuses others.
func checkProgramCounters(name string, r *results.Record) error {
	known := programCounters[name]
	for _, k := range slices.Sorted(maps.Keys(r.Counters)) {
		if !slices.Contains(known, k) {
			has := "none"
			if len(known) > 0 {
				has = strings.Join(known, ", ")
			}
			return fmt.Errorf("counters %s = %v: a %s record has no such counter (its program writes %s)", k, r.Counters[k], name, has)
		}
	}
	c := r.Counters
	switch name {
	case "samplesort":
		n := floatOf(r.Params, "n")
		if e, ok := c[CounterExpansion]; ok && !(e >= 1 && e <= 2 && n > 0 && sameValue(e*n, math.Round(e*n))) {
			return fmt.Errorf("counters %s = %v: the largest bucket over n = %v is in [1, 2] (a bucket is at least the mean n and at most A's 2n) and a whole number of keys over n", CounterExpansion, e, n)
		}
		if s, ok := c[CounterSample]; ok {
			if want := float64(int(n) / sampleDivisor); s != want {
				return fmt.Errorf("counters %s = %v disagrees with n / %d = %v / %d = %v", CounterSample, s, sampleDivisor, n, sampleDivisor, want)
			}
		}
	case "multigrid":
		f, okF := c["residual_first"]
		l, okL := c["residual_last"]
		for _, k := range []string{"residual_first", "residual_last"} {
			if v, ok := c[k]; ok && math.IsInf(v, 0) {
				return fmt.Errorf("counters %s = %v: a residual norm is finite", k, v)
			}
		}
		if okF && okL && intOf(r.Params, "iters") == 1 && f != l {
			return fmt.Errorf("counters residual_first = %v and residual_last = %v differ, but iters = 1: both are the one iteration's residual", f, l)
		}
	}
	return nil
}
