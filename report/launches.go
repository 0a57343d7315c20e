package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/montanaflynn/stats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/commcost/commcost/results"
)

// LaunchSpread is one point measured in several launches: the spread of
// its medians between launches next to the spread within one launch.
//
// One mpirun launch is one sample of the machine's state (process
// placement, memory layout, which core the OS picks): ReproMPI's first
// lesson (Hunold and Carpen-Amarie, "Reproducible MPI benchmarking is
// still not as easy as you think", TPDS 2016, section 4) is that the
// repetitions of one launch vary less than launches do, so the CI of one
// record understates how well the point is known.
type LaunchSpread struct {
	Bench, Unit string
	Params      results.Params
	Ranks       int
	// Launches are the launch ids, in order (numeric when all are), and
	// Medians each launch's median (its records' repetitions pooled).
	Launches []string
	Medians  []float64
	// Median is the median of the launch medians.
	Median float64
	// Between is the half-range of the launch medians relative to Median,
	// (max - min) / 2 / Median: on the scale of Within.
	Between float64
	// Within is the median over launches of the relative half-width of
	// the launch's 95% CI of its median (results.RelCIHalfWidth): what one
	// record claims. NaN when no launch has n >= 6.
	Within float64
	// P is the Kruskal-Wallis test of "every launch draws from the same
	// distribution" on the raw repetitions (NaN when some launch kept none
	// or all values are equal): a small P says the launches differ by
	// more than their repetitions do.
	P float64
}

// LaunchSpreads returns the spread of every point that records of two
// launches or more hold (Meta.Launch), by bench in order of first
// appearance and by parameters; nil when the records come from fewer than
// two launches.
func LaunchSpreads(recs []results.Record) []LaunchSpread {
	ids := map[string]bool{}
	for _, r := range recs {
		if r.Meta.Launch != "" {
			ids[r.Meta.Launch] = true
		}
	}
	if len(ids) < 2 {
		return nil
	}
	var out []LaunchSpread
	for _, bench := range benchOrder(recs) {
		var sel []results.Record
		for _, r := range recs {
			if r.Bench == bench && r.Meta.Launch != "" {
				sel = append(sel, r)
			}
		}
		// Group by point, then by launch.
		type point struct {
			rec      results.Record
			byLaunch map[string][]results.Record
		}
		var order []string
		points := map[string]*point{}
		for _, r := range sel {
			k := r.Unit + " " + pointKey(r)
			p, ok := points[k]
			if !ok {
				p = &point{rec: r, byLaunch: map[string][]results.Record{}}
				points[k] = p
				order = append(order, k)
			}
			p.byLaunch[r.Meta.Launch] = append(p.byLaunch[r.Meta.Launch], r)
		}
		var spreads []LaunchSpread
		for _, k := range order {
			p := points[k]
			if len(p.byLaunch) < 2 {
				continue
			}
			spreads = append(spreads, launchSpread(p.rec, p.byLaunch))
		}
		sort.SliceStable(spreads, func(i, j int) bool {
			a, b := spreads[i], spreads[j]
			for _, k := range unionKeys(a.Params, b.Params) {
				if c := compareParam(a.Params[k], b.Params[k]); c != 0 {
					return c < 0
				}
			}
			return a.Ranks < b.Ranks
		})
		out = append(out, spreads...)
	}
	return out
}

func launchSpread(r results.Record, byLaunch map[string][]results.Record) LaunchSpread {
	ls := LaunchSpread{Bench: r.Bench, Unit: r.Unit, Params: r.Params, Ranks: r.Ranks, Within: math.NaN(), P: math.NaN()}
	for id := range byLaunch {
		ls.Launches = append(ls.Launches, id)
	}
	sortLaunchIDs(ls.Launches)
	var within []float64
	var groups [][]float64
	allSamples := true
	for _, id := range ls.Launches {
		c := poolCell(byLaunch[id])
		ls.Medians = append(ls.Medians, c.Median)
		if c.HasCI && c.N >= results.MinCISamples {
			w := results.RelCIHalfWidth(results.Summary{N: c.N, Median: c.Median, CI95: c.CI95})
			if !math.IsInf(w, 0) {
				within = append(within, w)
			}
		}
		if c.Samples == nil {
			allSamples = false
		}
		groups = append(groups, c.Samples)
	}
	ls.Median, _ = stats.Median(ls.Medians)
	lo, hi := slices.Min(ls.Medians), slices.Max(ls.Medians)
	ls.Between = math.NaN()
	if ls.Median != 0 {
		ls.Between = (hi - lo) / 2 / math.Abs(ls.Median)
	}
	if len(within) > 0 {
		ls.Within, _ = stats.Median(within)
	}
	if allSamples {
		ls.P = KruskalWallis(groups)
	}
	return ls
}

// sortLaunchIDs orders ids numerically when all are integers, else as
// text.
func sortLaunchIDs(ids []string) {
	numeric := true
	for _, v := range ids {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			numeric = false
			break
		}
	}
	sort.SliceStable(ids, func(i, j int) bool {
		if numeric {
			a, _ := strconv.ParseInt(ids[i], 10, 64)
			b, _ := strconv.ParseInt(ids[j], 10, 64)
			return a < b
		}
		return ids[i] < ids[j]
	})
}

// KruskalWallis is the p-value of the Kruskal-Wallis H test that the
// groups come from one distribution (Kruskal and Wallis, "Use of ranks in
// one-criterion variance analysis", JASA 1952, eq. 1.1 and the tie
// correction of section 1.3):
//
//	H = 12 / (N (N+1)) sum_i R_i^2 / n_i - 3 (N+1),  divided by
//	C = 1 - sum_t (t^3 - t) / (N^3 - N)
//
// with R_i the rank sum of group i among all N values (ties given their
// mean rank) and t the sizes of the tie groups; p = P(chi^2_{k-1} > H).
// The chi-square approximation wants about 5 values per group. NaN for
// fewer than two non-empty groups or when every value is equal.
func KruskalWallis(groups [][]float64) float64 {
	type obs struct {
		v float64
		g int
	}
	var all []obs
	k := 0
	for i, g := range groups {
		if len(g) > 0 {
			k++
		}
		for _, v := range g {
			all = append(all, obs{v, i})
		}
	}
	n := len(all)
	if k < 2 {
		return math.NaN()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	rankSum := make([]float64, len(groups))
	ties := 0.0
	for i := 0; i < n; {
		j := i
		for j < n && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+1+j) / 2 // mean of ranks i+1..j
		for m := i; m < j; m++ {
			rankSum[all[m].g] += rank
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	fn := float64(n)
	c := 1 - ties/(fn*fn*fn-fn)
	if c <= 0 {
		return math.NaN()
	}
	h := 0.0
	for i, g := range groups {
		if len(g) > 0 {
			h += rankSum[i] * rankSum[i] / float64(len(g))
		}
	}
	h = (12/(fn*(fn+1))*h - 3*(fn+1)) / c
	return 1 - distuv.ChiSquared{K: float64(k - 1)}.CDF(h)
}

// WriteLaunchSpreads writes one table per bench: the point, the number of
// launches, the median of the launch medians, their range, the spread
// between launches and within one, their ratio, and the Kruskal-Wallis
// p-value.
func WriteLaunchSpreads(w io.Writer, spreads []LaunchSpread, markdown bool) error {
	for len(spreads) > 0 {
		n := 1
		for n < len(spreads) && spreads[n].Bench == spreads[0].Bench && spreads[n].Unit == spreads[0].Unit {
			n++
		}
		group := spreads[:n]
		spreads = spreads[n:]
		var pts []results.Params
		for _, s := range group {
			pts = append(pts, s.Params)
		}
		keys := unionKeys(pts...)
		_, unit := Value(1, group[0].Unit)
		header := append(append([]string(nil), keys...), "ranks", "launches", "median "+unit, "launch medians "+unit, "between ±", "within ±", "between/within", "p (launches)")
		var rows [][]string
		for _, s := range group {
			var row []string
			for _, k := range keys {
				row = append(row, paramValue(k, s.Params[k]))
			}
			med, _ := Value(s.Median, s.Unit)
			lo, _ := Value(slices.Min(s.Medians), s.Unit)
			hi, _ := Value(slices.Max(s.Medians), s.Unit)
			ratio := "-"
			if s.Within > 0 && !math.IsNaN(s.Between) {
				ratio = strconv.FormatFloat(s.Between/s.Within, 'f', 1, 64)
			}
			p := "-"
			switch {
			case s.P < 0.001:
				p = "<0.001"
			case !math.IsNaN(s.P):
				p = fmt.Sprintf("%.3f", s.P)
			}
			row = append(row, strconv.Itoa(s.Ranks), strconv.Itoa(len(s.Launches)), med, lo+" .. "+hi,
				pctOrDash(s.Between), pctOrDash(s.Within), ratio, p)
			rows = append(rows, row)
		}
		if err := TitledTable(w, group[0].Bench+": spread between launches and within one", header, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	note := "between ±: half the range of the launches' medians over their median; within ±: the median over launches of one launch's 95% CI half-width over its median (the ci95 of a record: repetitions of one launch). between/within well above 1 means one launch does not sample the machine: compare runs of several launches (ReproMPI, Hunold and Carpen-Amarie 2016). p (launches): Kruskal-Wallis test that all launches draw from one distribution."
	return writeNotes(w, []string{note}, markdown)
}

func pctOrDash(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return Pct(x)
}
