package dsmexp

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Bench names of the experiments' records. dsm-matsquare records are
// written by cmd/commcost (divalib.MatSquareStore/Hand) with the same
// counters and derived values.
const (
	BenchMatSquare = divalib.BenchMatSquare
	BenchBitonic   = "dsm-bitonic"
	BenchBarnesHut = "dsm-barneshut"
)

// Counter and derived keys of the records (results.Record.Counters,
// Derived), shared with the plots and tables that read them back.
const (
	KeyCongestionBytes    = "congestion_bytes"    // max over directed links of the bytes
	KeyCongestionMessages = "congestion_messages" // max over directed links of the messages
	KeyLoadBytes          = "load_bytes"          // sum over links of the bytes
	KeyLoadMessages       = "load_messages"       // sum over links of the messages (message-hops)
	KeyStartups           = "startups"            // messages sent between different ranks
	KeyMaxStartups        = "max_startups_per_rank"
	KeyBytesSent          = "bytes_sent"
	KeyVerified           = "verified" // 1: the result passed the application's check
	KeyReads              = "reads"
	KeyReadHits           = "read_hits"
	KeyWrites             = "writes"
	KeyLocks              = "locks"
	KeyCongestionRatio    = "congestion_ratio" // congestion bytes / the hand-optimised version's
	KeyTimeRatio          = "time_ratio"       // median time / the hand-optimised version's
	KeyHitRatio           = "read_hit_ratio"   // reads served by the rank's own copy / reads
	KeyEnergyDrift        = "energy_drift"     // Barnes-Hut: |E_last - E_first| / |E_first|
	KeyLocalComp          = "local_comp_s"     // Barnes-Hut force phase: seconds of local computation (median)
)

// Barnes-Hut record phases (param "phase"): PhaseTotal is the whole
// measured part; the others are the application's phases.
const (
	PhaseTotal = "total"
	PhaseLoad  = "load"
	PhaseForce = "force"
)

// Record turns the result into a record of bench whose time is
// sec (per repetition, max over ranks) and whose counts are those of the
// section; the ratios refer to hand's (nil: none). extra parameters are
// added to the result's.
func (r Result) record(bench string, ranks int, meta results.Meta, sec []float64, s Section, hand *Result, handSec []float64, handS Section, extra results.Params) results.Record {
	params := results.Params{"strategy": r.Strategy, "mesh": r.Mesh.String()}
	for k, v := range r.Params {
		params[k] = v
	}
	for k, v := range extra {
		params[k] = v
	}
	rec := results.Record{
		Schema: results.SchemaVersion, Bench: bench, Params: params, Ranks: ranks,
		Unit: results.UnitSeconds, Summary: results.Summarize(sec), Samples: append([]float64(nil), sec...),
		Reduction: results.ReductionMaxOverRanks, Stop: cmp.Or(r.Stop, results.StopFixed),
		Counters: s.Congestion.Counters(), Derived: map[string]float64{}, Meta: meta,
	}
	if r.Verified {
		rec.Counters[KeyVerified] = 1
	}
	if s.Reads > 0 || s.Writes > 0 {
		rec.Counters[KeyReads] = float64(s.Reads)
		rec.Counters[KeyReadHits] = float64(s.ReadHits)
		rec.Counters[KeyWrites] = float64(s.Writes)
		rec.Derived[KeyHitRatio] = s.HitRatio()
	}
	if s.Locks > 0 {
		rec.Counters[KeyLocks] = float64(s.Locks)
	}
	if hand != nil {
		if handS.Congestion.MaxLinkBytes > 0 {
			rec.Derived[KeyCongestionRatio] = float64(s.Congestion.MaxLinkBytes) / float64(handS.Congestion.MaxLinkBytes)
		}
		if hs := results.Summarize(handSec); hs.Median > 0 {
			rec.Derived[KeyTimeRatio] = rec.Median / hs.Median
		}
	}
	return rec
}

// BitonicRecord is the record of a bitonic result: the execution time of
// the sort, the congestion of the measured section, the ratios against
// hand, and each phase's median time as derived "<phase>_s".
func BitonicRecord(r Result, ranks int, meta results.Meta, hand *Result) results.Record {
	s, _ := r.Section("sort")
	var hs Section
	var hsec []float64
	if hand != nil {
		hs, _ = hand.Section("sort")
		hsec = hand.TimeSec
	}
	rec := r.record(BenchBitonic, ranks, meta, r.TimeSec, s, hand, hsec, hs, nil)
	for _, ph := range r.Phases {
		rec.Derived[ph.Name+"_s"] = results.Summarize(ph.Sec).Median
	}
	return rec
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The physical range of the experiments' record parameters (checked on
// every record written or read, results.RegisterParamCheck, with the mesh
// as divalib checks it): dsm plot and compare refuse a file whose bitonic
// record has 0 keys or whose Barnes-Hut record has theta 5.
//
// The sizes are bounded as the writers bound them, so that a record of a
// run no writer accepts (keys = 1e300, 2^40 bodies) is refused rather
// than plotted: keys up to MaxKeys (BitonicSweep.Validate), bodies up to
// MaxBodies, steps up to patterns.MaxCount (BarnesHutSweep.Validate).
var dsmexpParams = map[string][]patterns.ParamSpec{
	BenchBitonic: {{Key: "strategy", Kind: patterns.ParamString}, {Key: "mesh", Kind: patterns.ParamString},
		{Key: "keys", Kind: patterns.ParamInt, Min: 1, Max: MaxKeys}},
	BenchBarnesHut: {{Key: "strategy", Kind: patterns.ParamString}, {Key: "mesh", Kind: patterns.ParamString},
		{Key: "phase", Kind: patterns.ParamString, Values: bhRecordPhases},
		{Key: "bodies", Kind: patterns.ParamInt, Min: 1, Max: float64(MaxBodies)},
		{Key: "theta", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: 2, Optional: true},
		{Key: "steps", Kind: patterns.ParamInt, Min: 1, Max: patterns.MaxCount, Optional: true},
		{Key: "measured_steps", Kind: patterns.ParamInt, Min: 0, Max: patterns.MaxCount, Optional: true},
		{Key: "dt", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: apps.MaxDt, Optional: true},
		{Key: "eps", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: apps.MaxEps, Optional: true}},
}

// MaxKeys is the most keys per rank a bitonic run takes
// (apps.BitonicMaxKeys).
const MaxKeys = apps.BitonicMaxKeys

// MaxBodies is the most bodies any Barnes-Hut run takes: the cell
// references (int32) address the bodies and every rank's pool, which on
// one rank with the smallest cells per body is still 17 cells
// (apps.BarnesHutConfig.MaxBodies).
var MaxBodies = apps.BarnesHutConfig{CellsPerBody: math.SmallestNonzeroFloat64}.MaxBodies(1)

func init() {
	for bench, specs := range dsmexpParams {
		results.RegisterParamCheck(bench, func(p results.Params) error { return divalib.CheckRecordParams(bench, specs, p) })
		results.RegisterRecordCheck(bench, checkRecord)
	}
	results.RegisterFileCheck(CheckRatios)
}

// checkRecord is divalib's check of an experiment's record, the derived
// values against the record's own time and counters (checkDerived) and,
// for a Barnes-Hut record that names its run (bodies, theta, steps and
// measured steps), the run's own check on the record's ranks: no measured
// steps beyond the steps, no N the cell references cannot address.
func checkRecord(r *results.Record) error {
	if err := divalib.CheckExperimentRecord(r); err != nil {
		return err
	}
	if err := checkDerived(r); err != nil {
		return err
	}
	if r.Bench != BenchBarnesHut {
		return nil
	}
	for _, s := range apps.BarnesHutSpecs {
		if _, ok := r.Params[s.Key]; !ok && !s.Optional {
			return nil
		}
	}
	if err := patterns.CheckSpecs(apps.BarnesHutSpecs, r.Params); err != nil {
		return err
	}
	if err := apps.BarnesHutOf(r.Params).Check(r.Ranks); err != nil {
		return fmt.Errorf("on ranks = %d no run has these parameters; its own check says: %w", r.Ranks, err)
	}
	return nil
}

// checkDerived ties a record's derived values and application counters to
// what the writers compute them from:
//   - a bitonic phase's time "<phase>_s" is the median over repetitions of
//     the phase's maximum over ranks, and every rank's phase is part of
//     its execution, whose maximum is the record's sample: so it is at
//     most the record's median (order statistics keep the order);
//   - a Barnes-Hut force record's local_comp_s is the median of the
//     interactions' part of the force phase's samples, at most its median;
//   - energy_drift is |energy_last - energy_first| / |energy_first|;
//   - the last tree's cells: the most one rank made (cells_max_per_rank)
//     fit its pool (cell_pool_per_rank), and the total (cells) is at least
//     that and at most ranks x cells_max_per_rank plus the root;
//   - interactions_per_measured_step is at most bodies x the tree's nodes;
//   - force_err_median <= force_err_max, both not negative, and
//     force_err_global <= force_err_max.
func checkDerived(r *results.Record) error {
	const tol = 1e-9
	d, c := r.Derived, r.Counters
	if r.Bench == BenchBitonic {
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if strings.HasSuffix(k, "_s") && d[k] > r.Median*(1+tol) {
				return fmt.Errorf("derived %s = %v is more than the median %v: a phase is part of the sort", k, d[k], r.Median)
			}
		}
	}
	if r.Bench != BenchBarnesHut {
		return nil
	}
	if v, ok := d[KeyLocalComp]; ok && v > r.Median*(1+tol) {
		return fmt.Errorf("derived %s = %v is more than the median %v: the interactions are part of the force phase", KeyLocalComp, v, r.Median)
	}
	if v, ok := d[KeyEnergyDrift]; ok {
		e0, ok0 := c["energy_first"]
		e1, ok1 := c["energy_last"]
		if !ok0 || !ok1 {
			return fmt.Errorf("derived %s = %v without the counters energy_first and energy_last it is computed from", KeyEnergyDrift, v)
		}
		want := math.Abs(e1-e0) / math.Abs(e0)
		if !(math.Abs(v-want) <= tol*math.Max(math.Abs(v), math.Abs(want))) {
			return fmt.Errorf("derived %s = %v disagrees with |energy_last - energy_first| / |energy_first| = %v", KeyEnergyDrift, v, want)
		}
	}
	cells, okC := c["cells"]
	most, okM := c["cells_max_per_rank"]
	pool, okP := c["cell_pool_per_rank"]
	if (okC || okM || okP) && !(okC && okM && okP) {
		return fmt.Errorf("counters cells, cells_max_per_rank and cell_pool_per_rank come together (the last tree's cells); this record has %s", presentKeys(c, "cells", "cells_max_per_rank", "cell_pool_per_rank"))
	}
	if okC {
		switch {
		case most > pool:
			return fmt.Errorf("counters cells_max_per_rank = %v is more than cell_pool_per_rank = %v: a rank makes its cells from its pool", most, pool)
		case cells < most:
			return fmt.Errorf("counters cells = %v is less than cells_max_per_rank = %v: the total includes the rank that made the most", cells, most)
		case cells > float64(r.Ranks)*most+1:
			return fmt.Errorf("counters cells = %v is more than ranks x cells_max_per_rank + 1 = %d x %v + 1 (the root)", cells, r.Ranks, most)
		}
	}
	// Each body's interaction list holds at most every other body and
	// every cell of the tree (at most ranks x the pool, and the root);
	// the count is summed over bodies and averaged over measured steps.
	if v, ok := c["interactions_per_measured_step"]; ok && okP {
		if n, ok := r.Params["bodies"].(int); ok {
			nodes := float64(n) - 1 + float64(r.Ranks)*pool + 1
			if bound := float64(n) * nodes; v > bound*(1+tol) {
				return fmt.Errorf("counters interactions_per_measured_step = %v is more than bodies x (bodies - 1 + ranks x cell_pool_per_rank + 1) = %d x %v = %v: a body interacts at most once with every other body and cell", v, n, nodes, bound)
			}
		}
	}
	if m, ok := c["force_err_median"]; ok {
		if x, ok := c["force_err_max"]; ok && !(m >= 0 && m <= x) {
			return fmt.Errorf("counters force_err_median = %v, force_err_max = %v: want 0 <= median <= max (relative errors)", m, x)
		}
	}
	// The sample's error sqrt(sum |e|^2 / sum |a|^2) is a weighted mean
	// of the bodies' relative errors |e| / |a|, at most the largest.
	if g, ok := c["force_err_global"]; ok {
		if x, ok := c["force_err_max"]; ok && g > x*(1+tol) {
			return fmt.Errorf("counters force_err_global = %v is more than force_err_max = %v: the sample's error is a mean of the bodies' relative errors", g, x)
		}
	}
	return nil
}

// checkRatioBounds refuses a ratio to hand-optimised that no hand record
// could give, seen from the record alone (the hand record may be in
// another file, or missing): congestion_ratio is the record's congestion
// bytes over the hand version's, a whole number of at least one byte, and
// time_ratio its median over the hand version's, a time a record holds
// (results.MinRecordSeconds to MaxRecordSeconds).
func checkRatioBounds(r *results.Record) error {
	if v, ok := r.Derived[KeyCongestionRatio]; ok && v > 0 {
		cb, has := r.Counters[KeyCongestionBytes]
		if !has {
			return fmt.Errorf("derived %s = %v without the counter %s it is the ratio of", KeyCongestionRatio, v, KeyCongestionBytes)
		}
		if h := cb / v; !(h >= 1-1e-9) || math.Abs(h-math.Round(h)) > 1e-6*h {
			return fmt.Errorf("derived %s = %v with %s = %v: the hand-optimised version's congestion would be %.6g bytes; want %s / a whole number of bytes >= 1, at most %v",
				KeyCongestionRatio, v, KeyCongestionBytes, cb, h, KeyCongestionBytes, cb)
		}
	}
	if v, ok := r.Derived[KeyTimeRatio]; ok && v > 0 {
		if h := r.Median / v; !(h >= results.MinRecordSeconds && h <= results.MaxRecordSeconds) {
			return fmt.Errorf("derived %s = %v with the median %v: the hand-optimised version's median would be %.6g s; want one from %g to %g s", KeyTimeRatio, v, r.Median, h, results.MinRecordSeconds, results.MaxRecordSeconds)
		}
	}
	return nil
}

// presentKeys lists which of keys m has ("none" for none).
func presentKeys(m map[string]float64, keys ...string) string {
	var have []string
	for _, k := range keys {
		if _, ok := m[k]; ok {
			have = append(have, k)
		}
	}
	if len(have) == 0 {
		return "none"
	}
	return strings.Join(have, ", ")
}

// CheckRatios is the check of the ratios to hand-optimised that the
// records of one file store (KeyTimeRatio, KeyCongestionRatio): each is
// positive and one a hand record could give (checkRatioBounds), and where the file holds the hand record of the same point
// (bench, ranks and parameters but the strategy), it is the ratio of the
// two records' medians, or congestion bytes, as the writer computed it.
// A stored ratio the medians on screen contradict is refused rather than
// plotted. It returns the index of the first record refused.
func CheckRatios(recs []results.Record) (int, error) { return checkRatios(recs, false) }

// CheckMergedRatios is CheckRatios of the records of several files, which
// also refuses a ratio whose hand record none of them holds: `dsm plot`
// shows the ratios, and one with nothing to be the ratio to would be
// shown on trust.
func CheckMergedRatios(recs []results.Record) (int, error) { return checkRatios(recs, true) }

func checkRatios(recs []results.Record, need bool) (int, error) {
	var hands map[string][]*results.Record
	for i := range recs {
		r := &recs[i]
		if !isDSMBench(r.Bench) {
			continue
		}
		if err := checkRatioBounds(r); err != nil {
			return i, fmt.Errorf("record %s strategy=%v: %w", r.Bench, r.Params["strategy"], err)
		}
		for _, key := range []string{KeyTimeRatio, KeyCongestionRatio} {
			v, ok := r.Derived[key]
			if !ok {
				continue
			}
			if !(v > 0) {
				return i, fmt.Errorf("record %s: derived %s = %v is not positive", r.Bench, key, v)
			}
			if hands == nil {
				hands = handRecords(recs)
			}
			hs := hands[pointKey(r)]
			if len(hs) == 0 && need {
				return i, fmt.Errorf("record %s strategy=%v: derived %s = %v, but no input holds the hand-optimised record of its point to be the ratio to; give the file its run wrote whole", r.Bench, r.Params["strategy"], key, v)
			}
			if len(hs) == 0 {
				continue
			}
			// Joined files hold a hand record per run that went into them:
			// one of them is the record's own.
			agrees := slices.ContainsFunc(hs, func(h *results.Record) bool {
				want := ratioTo(key, r, h)
				return want > 0 && math.Abs(v-want) <= 1e-9*want
			})
			if !agrees {
				return i, fmt.Errorf("record %s strategy=%v: derived %s = %v disagrees with the hand-optimised record of the same point (%v from their %s)",
					r.Bench, r.Params["strategy"], key, v, ratioTo(key, r, hs[0]), map[string]string{KeyTimeRatio: "medians", KeyCongestionRatio: "congestion bytes"}[key])
			}
		}
	}
	return -1, nil
}

func isDSMBench(b string) bool {
	return b == BenchMatSquare || b == BenchBitonic || b == BenchBarnesHut
}

// ratioTo is the ratio key of r to the hand record h (0 when h has none).
func ratioTo(key string, r, h *results.Record) float64 {
	if key == KeyTimeRatio {
		if h.Median > 0 {
			return r.Median / h.Median
		}
		return 0
	}
	if hb := h.Counters[KeyCongestionBytes]; hb > 0 {
		return r.Counters[KeyCongestionBytes] / hb
	}
	return 0
}

// handRecords are the hand-optimised records of recs by point (pointKey).
func handRecords(recs []results.Record) map[string][]*results.Record {
	out := map[string][]*results.Record{}
	for i := range recs {
		if r := &recs[i]; isDSMBench(r.Bench) && r.Params["strategy"] == Hand {
			out[pointKey(r)] = append(out[pointKey(r)], r)
		}
	}
	return out
}

// pointKey names the point of a record: its bench, ranks and every
// parameter but the strategy.
func pointKey(r *results.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d", r.Bench, r.Ranks)
	for _, k := range sortedKeys(r.Params) {
		if k != "strategy" {
			fmt.Fprintf(&b, "|%s=%v", k, r.Params[k])
		}
	}
	return b.String()
}
