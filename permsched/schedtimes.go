package permsched

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/results"
)

func init() {
	results.RegisterFileCheck(func(recs []results.Record) (int, error) { return CheckSchedTimes(recs, false) })
}

// CheckSchedTimes ties every exchange record's scheduling time (derived
// sched_s of sched.comm) to what `sched comm` derives it from: the median
// of the sched.schedule record of the same matrix, d and scheduler on
// the same ranks, written beside it. Joined runs hold one such record per
// run, and one of them must be the exchange's own. It returns the index
// of the first record refused and why, or -1 and nil. A file of
// exchanges without their schedule records passes unless need is set:
// `sched breakeven` adds sched_s to the CGM exchange it compares, so it
// needs the measurement behind every one.
func CheckSchedTimes(recs []results.Record, need bool) (int, error) {
	for i := range recs {
		r := &recs[i]
		s, ok := r.Derived["sched_s"]
		if r.Bench != BenchComm || !ok {
			continue
		}
		var found, agrees bool
		var seen float64
		for j := range recs {
			sr := &recs[j]
			if sr.Bench != BenchSchedule || sr.Ranks != r.Ranks || !sameSchedParams(sr.Params, r.Params) {
				continue
			}
			if !found {
				seen = sr.Median
			}
			found = true
			agrees = agrees || math.Abs(s-sr.Median) <= 1e-9*sr.Median
		}
		switch {
		case found && !agrees:
			return i, fmt.Errorf("record %s %s: derived sched_s = %v disagrees with the median %v of the %s record of its matrix, d and scheduler, which it is the scheduling time of",
				r.Bench, results.ParamList(r.Params), s, seen, BenchSchedule)
		case !found && need:
			return i, fmt.Errorf("record %s %s: derived sched_s = %v has no %s record of its matrix, d and scheduler on %d ranks to be the median of; give the file `sched comm` wrote whole",
				r.Bench, results.ParamList(r.Params), s, BenchSchedule, r.Ranks)
		}
	}
	return -1, nil
}

// sameSchedParams reports whether a schedule record's parameters (d, gen,
// matrix, scheduler) are the exchange's, which adds its message size.
func sameSchedParams(sched, comm results.Params) bool {
	for k, v := range sched {
		if w, ok := comm[k]; !ok || fmt.Sprint(w) != fmt.Sprint(v) {
			return false
		}
	}
	return len(sched) > 0
}
