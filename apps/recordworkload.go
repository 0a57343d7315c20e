package apps

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/results"
)

// storeWorkloads are the programs over global variables whose runs count
// the accesses that cross the network (so their workload is no function
// of the parameters alone) and state every communication phase by at
// least one k-k-access item, of a count of 0 where none crosses
// (Access.items, kkItem).
var storeWorkloads = map[string]bool{"matmul": true, "samplesort": true, "bitonic": true, "concomp": true}

// checkWorkload ties an application record's workload to what a run of
// its parameters on its ranks writes (Measure records the Outcome's
// workload of the record's phase, nothing for any other):
//
//   - a program that states its workload before running (Workloader:
//     cannon, checkerboard, gauss, multigrid, bitonic-ms) writes exactly
//     its Workload(ranks) of the phase, item by item: a count, a size or a
//     rank count other than those, or an empty workload where the phase
//     moves data, contradicts the parameters;
//   - a program over global variables (storeWorkloads) writes at least one
//     item for each communication phase, each on the record's ranks, every
//     count a whole number; one whose accesses the parameters fix
//     (accessBounder: matmul, bitonic) writes the items of its phase with
//     counts between those of its fewest and its most crossing accesses;
//   - Barnes-Hut and every phase that is not a communication phase write
//     none.
//
// A table reads only communication phases with a workload, so a record
// that contradicts its parameters here would be printed or dropped.
func checkWorkload(r *results.Record) error {
	name, _ := r.Params["app"].(string)
	phase, _ := r.Params["phase"].(string)
	kind, _ := r.Params["kind"].(string)
	app := appRecords[name].build(r.Params) // checkAppParams accepted name and the params
	if wl, ok := app.(Workloader); ok {
		if err := checkWorkloadSize(app, r.Ranks); err != nil {
			return err
		}
		return sameWorkload(name, phase, r.Ranks, r.Workload, wl.Workload(r.Ranks)[phase])
	}
	switch {
	case kind != KindComm || !storeWorkloads[name]:
		if len(r.Workload) > 0 {
			return fmt.Errorf("%s: phase %s has a workload of %d items, but a run writes one only for a communication phase of a program over global variables (%s) or of a program that states its workload", name, phase, len(r.Workload), strings.Join(slices.Sorted(maps.Keys(storeWorkloads)), ", "))
		}
	case len(r.Workload) == 0:
		return fmt.Errorf("%s: communication phase %s has no workload: a run states every communication phase of %s by its k-k-accesses, so no model could predict this record", name, phase, name)
	default:
		for i, it := range r.Workload {
			if it.Ranks != r.Ranks {
				return fmt.Errorf("%s: workload item %d (%s) has ranks = %d, but a run on %d ranks states its accesses on %d ranks", name, i+1, it.Bench, it.Ranks, r.Ranks, r.Ranks)
			}
			if it.Count != math.Trunc(it.Count) {
				return fmt.Errorf("%s: phase %s: workload item %d (%s {%s}) has count %v, but a run counts whole k-k-accesses", name, phase, i+1, it.Bench, results.ParamList(it.Params), it.Count)
			}
		}
		if b, ok := app.(accessBounder); ok {
			lo, hi := b.accessBounds(r.Ranks)
			return boundedWorkload(name, phase, r.Ranks, r.Workload, lo[phase], hi[phase])
		}
	}
	return nil
}

// accessBounder is a program over global variables whose parameters fix
// its accesses, so that only the store decides which of them cross the
// network: accessBounds is the workload of a run on p ranks where the
// fewest cross (lo) and where all do (hi), item by item of one shape.
type accessBounder interface {
	accessBounds(p int) (lo, hi map[string][]results.WorkItem)
}

// boundedWorkload reports the first item of got that is not of the shape
// of hi's item at its place, or whose count is outside lo's to hi's.
func boundedWorkload(name, phase string, p int, got, lo, hi []results.WorkItem) error {
	if len(got) != len(hi) {
		return sameWorkload(name, phase, p, got, hi)
	}
	for i, g := range got {
		shape := g
		shape.Count = hi[i].Count // the counts are checked below
		if err := sameWorkload(name, phase, p, []results.WorkItem{shape}, hi[i:i+1]); err != nil {
			return fmt.Errorf("%s: phase %s: workload item %d is %s {%s} on %d ranks, but a run of these parameters on %d ranks states %s {%s} on %d ranks there",
				name, phase, i+1, g.Bench, results.ParamList(g.Params), g.Ranks, p, hi[i].Bench, results.ParamList(hi[i].Params), hi[i].Ranks)
		}
		if g.Count < lo[i].Count || g.Count > hi[i].Count {
			return fmt.Errorf("%s: phase %s: workload item %d (%s {%s}) has count %v, but a run of these parameters on %d ranks counts %v to %v k-k-accesses there",
				name, phase, i+1, g.Bench, results.ParamList(g.Params), g.Count, p, lo[i].Count, hi[i].Count)
		}
	}
	return nil
}

// checkWorkloadSize refuses a gauss whose workload no record could hold
// before it is built: a run states a scatter and an allgather of each
// piece size, and the pieces of the n-1 steps take about (n-1)/p sizes.
func checkWorkloadSize(app App, p int) error {
	g, ok := app.(*Gauss)
	if !ok || p < 2 {
		return nil
	}
	if items := 2 * ((g.N - 1) / p); items > results.MaxRecordElements {
		return fmt.Errorf("gauss: n = %d on %d ranks: a run states about %d workload items, more than the %d a record holds", g.N, p, items, results.MaxRecordElements)
	}
	return nil
}

// sameWorkload reports the first item of got (a record's workload) that
// is not the item of want (what a run writes) at its place.
func sameWorkload(name, phase string, p int, got, want []results.WorkItem) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: phase %s has a workload of %d items, but a run of these parameters on %d ranks states %d", name, phase, len(got), p, len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		same := g.Bench == w.Bench && g.View == w.View && g.Ranks == w.Ranks && len(g.Params) == len(w.Params)
		for _, k := range slices.Sorted(maps.Keys(w.Params)) {
			v, ok := g.Params[k]
			same = same && ok && sameParam(v, w.Params[k])
		}
		if !same {
			return fmt.Errorf("%s: phase %s: workload item %d is %s {%s} on %d ranks (view %q), but a run of these parameters on %d ranks states %s {%s} on %d ranks (view %q) there",
				name, phase, i+1, g.Bench, results.ParamList(g.Params), g.Ranks, g.View, p, w.Bench, results.ParamList(w.Params), w.Ranks, w.View)
		}
		if !sameValue(g.Count, w.Count) {
			return fmt.Errorf("%s: phase %s: workload item %d (%s {%s}) has count %v, but a run of these parameters on %d ranks counts %v", name, phase, i+1, w.Bench, results.ParamList(w.Params), g.Count, p, w.Count)
		}
	}
	return nil
}
