package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// The summary that opens report.md: where and how the run was launched,
// the figures a reader wants first (latency at 8 B, bandwidth at 1 MiB, the
// best model of each pattern family with its held-out error, the best
// model of each application with its error), and what the records say
// about whether those figures can be trusted. Everything in it is computed
// from the records and the fits of the report below it.

// summaryFamilies groups the benches a model is fitted from into the
// families a reader names; a bench not listed is a family of its own.
var summaryFamilies = []struct {
	name    string
	benches []string
}{
	{"point-to-point (ping-pong, round trip)", []string{"pingpong", "roundtrip"}},
	{"LogGP round trips (prtt)", []string{"prtt"}},
	{"k-k-access (paper 000)", []string{"kkaccess", "kaccess"}},
	{"contention (paper 001: all-to-all, pairwise, row)", []string{"alltoall", "pairwise", "rowcontention"}},
	{"aggregate operations (paper 003)", []string{"aggregate"}},
	{"process-grid steps", []string{"gridshift"}},
}

func familyOf(bench string) string {
	for _, f := range summaryFamilies {
		if slices.Contains(f.benches, bench) {
			return f.name
		}
	}
	return bench
}

// familyError is one model's held-out error on one pattern family.
type familyError struct {
	model  string
	median float64 // median |error| of the held-out points
	n      int     // held-out points
}

// heldOutByFamily is, per family, every fitted model's median held-out
// error over the family's points (the fit's own cross-validation: the
// model refitted without them predicts them).
func heldOutByFamily(fitted []fittedModel) (map[string][]familyError, []string) {
	by := map[string][]familyError{}
	var order []string
	for _, f := range fitted {
		if f.validation == nil {
			continue
		}
		errs := map[string][]float64{}
		for _, p := range f.validation.Points {
			bench, _, _ := strings.Cut(p.Point, " ")
			fam := familyOf(bench)
			if !math.IsNaN(p.RelErr) && !math.IsInf(p.RelErr, 0) {
				errs[fam] = append(errs[fam], p.RelErr)
			}
		}
		for fam, es := range errs {
			if _, ok := by[fam]; !ok {
				order = append(order, fam)
			}
			by[fam] = append(by[fam], familyError{model: f.kind.Name, median: medianOf(es), n: len(es)})
		}
	}
	for _, es := range by {
		sort.SliceStable(es, func(i, j int) bool { return es[i].median < es[j].median })
	}
	rank := func(fam string) int {
		for i, f := range summaryFamilies {
			if f.name == fam {
				return i
			}
		}
		return len(summaryFamilies)
	}
	sort.SliceStable(order, func(i, j int) bool { return rank(order[i]) < rank(order[j]) })
	return by, order
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pickRecord is the record of bench at parameter key = value that the
// summary quotes: of those whose repetitions reached the CI target, the
// one with the most repetitions; else the first.
func pickRecord(recs []results.Record, bench, key string, value float64) (results.Record, bool) {
	var best results.Record
	found := false
	for _, r := range recs {
		if r.Bench != bench {
			continue
		}
		if v, ok := toFloat(r.Params[key]); !ok || v != value {
			continue
		}
		switch {
		case !found:
			best, found = r, true
		case best.Stop != results.StopRelCI && r.Stop == results.StopRelCI:
			best = r
		case (best.Stop == results.StopRelCI) == (r.Stop == results.StopRelCI) && r.N > best.N:
			best = r
		}
	}
	return best, found
}

// writeSummary writes report.md's opening section.
func writeSummary(w io.Writer, recs []results.Record, fitted []fittedModel, annotated []results.Record) error {
	fmt.Fprintf(w, "## Summary\n\n")
	writeLaunch(w, recs)

	// Headline figures.
	var rows [][]string
	if r, ok := pickRecord(recs, "pingpong", "bytes", 8); ok {
		rows = append(rows, []string{"latency at 8 B (half round trip)", humanTime(r.Median), ciCell(r, humanTime), repsCell(r)})
	}
	if r, ok := pickRecord(recs, "bandwidth", "bytes", 1<<20); ok {
		rows = append(rows, []string{"bandwidth at 1 MiB (window of 64 sends; MB = 10^6 B)", humanRate(r.Median), ciCell(r, humanRate), repsCell(r)})
	}
	if len(rows) > 0 {
		fmt.Fprintln(w)
		if err := results.RenderCells(w, []string{"figure", "median", "95% CI", "repetitions"}, rows, true); err != nil {
			return err
		}
	}

	// Best model per pattern family.
	by, order := heldOutByFamily(fitted)
	if len(order) > 0 {
		fmt.Fprintf(w, "\nBest model per pattern family, by the median error of the points each fit held out (one point in four, predicted by the model refitted without them):\n\n")
		rows = nil
		for _, fam := range order {
			es := by[fam]
			var others []string
			for _, e := range es[1:min(len(es), 4)] {
				others = append(others, fmt.Sprintf("%s %s", e.model, pct(e.median)))
			}
			rows = append(rows, []string{fam, es[0].model, pct(es[0].median), strconv.Itoa(es[0].n), orDash(strings.Join(others, ", "))})
		}
		if err := results.RenderCells(w, []string{"pattern family", "best model", "held-out error", "points", "next best"}, rows, true); err != nil {
			return err
		}
	}

	// Best model per application.
	rows = appSummaryRows(annotated, recs)
	if len(rows) > 0 {
		fmt.Fprintf(w, "\nBest model per application: its error on the communication the program measured, (T_pred - T_meas)/T_meas (details below):\n\n")
		if err := results.RenderCells(w, []string{"application", "configuration", "measured", "best model", "error", "next best"}, rows, true); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\n**Can these figures be trusted?**\n\n")
	for _, c := range trustChecks(recs) {
		fmt.Fprintf(w, "- %s\n", c)
	}
	fmt.Fprintln(w)
	return nil
}

// writeLaunch says where the ranks ran and how they were started.
func writeLaunch(w io.Writer, recs []results.Record) {
	m := recs[0].Meta
	first, last := dateRange(recs)
	ranks := 0
	for _, r := range recs {
		ranks = max(ranks, r.Ranks)
	}
	hosts := strings.Join(m.Hosts, ", ")
	md := func(s string) string { return results.EscapeMarkdown(orUnknown(s)) }
	fmt.Fprintf(w, "Measured on %s: %s, %d ranks (ranks per host %v), %s backend", md(hosts), md(shortLibrary(m.MPILibrary)), ranks, m.RanksPerHost, md(m.Backend))
	if m.CPU != "" {
		fmt.Fprintf(w, ", CPU %s", md(m.CPU))
	}
	fmt.Fprintf(w, "; rank 0's binding %s, GOMAXPROCS %d. Commit %s; %s to %s.", md(m.Binding), m.GOMAXPROCS, md(m.Commit), md(first), md(last))
	if len(m.Command) > 0 {
		fmt.Fprintf(w, " Command: %s.", results.MarkdownCode(strings.Join(m.Command, " ")))
	}
	fmt.Fprintln(w)
}

func dateRange(recs []results.Record) (first, last string) {
	for _, r := range recs {
		if d := r.Meta.Date; d != "" && (first == "" || d < first) {
			first = d
		}
		if d := r.Meta.Date; d > last {
			last = d
		}
	}
	return first, last
}

func ciCell(r results.Record, f func(float64) string) string {
	if r.N < results.MinCISamples {
		return fmt.Sprintf("none (%d repetitions; a 95%% CI needs %d)", r.N, results.MinCISamples)
	}
	return fmt.Sprintf("[%s, %s]", f(r.CI95[0]), f(r.CI95[1]))
}

func repsCell(r results.Record) string {
	s := fmt.Sprintf("%d", r.N)
	if r.Stop != "" {
		s += ", stopped by " + r.Stop
	}
	return s
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

func signedPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// appSummaryRows is one row per application run: the message-passing
// programs' rankings on their total communication (the predictions their
// records carry), and paper 000's programs per store with the predictor
// whose median |error| over the phases is the smallest.
func appSummaryRows(annotated, recs []results.Record) [][]string {
	var rows [][]string
	for _, a := range AppRankings(recs) {
		j := len(a.Columns) - 1
		if j < 0 || a.Best[j] < 0 {
			continue
		}
		type me struct {
			name string
			err  float64
		}
		var ms []me
		for i, name := range a.Models {
			if v := a.Pred[i][j]; !math.IsNaN(v) && a.Measured[j] > 0 {
				ms = append(ms, me{name, (v - a.Measured[j]) / a.Measured[j]})
			}
		}
		sort.SliceStable(ms, func(x, y int) bool { return math.Abs(ms[x].err) < math.Abs(ms[y].err) })
		if len(ms) == 0 {
			continue
		}
		var next []string
		for _, m := range ms[1:min(len(ms), 3)] {
			next = append(next, m.name+" "+signedPct(m.err))
		}
		rows = append(rows, []string{a.App, fmt.Sprintf("%s, %d ranks (%s)", ParamList(a.Params), a.Ranks, a.Stat),
			humanTime(a.Measured[j]), ms[0].name, signedPct(ms[0].err), orDash(strings.Join(next, ", "))})
	}
	// Paper 000's programs: per application and store, the predictor with
	// the smallest median |error| over the communication phases.
	type key struct{ app, store string }
	errs := map[key]map[string][]float64{}
	meas := map[key][]float64{}
	var keys []key
	for _, name := range appPredictors(annotated) {
		for _, e := range AppErrors(annotated, name) {
			app, _ := e.Record.Params["app"].(string)
			k := key{app, appStore(e.Record)}
			if errs[k] == nil {
				errs[k] = map[string][]float64{}
				keys = append(keys, k)
			}
			errs[k][name] = append(errs[k][name], e.Err)
		}
	}
	for _, r := range appCommPhases(annotated) {
		app, _ := r.Params["app"].(string)
		meas[key{app, appStore(r)}] = append(meas[key{app, appStore(r)}], r.Median)
	}
	for _, k := range keys {
		type me struct {
			name   string
			med    float64
			lo, hi float64
			n      int
		}
		var ms []me
		for name, es := range errs[k] {
			abs := make([]float64, len(es))
			for i, e := range es {
				abs[i] = math.Abs(e)
			}
			ms = append(ms, me{name, medianOf(abs), slices.Min(es), slices.Max(es), len(es)})
		}
		sort.SliceStable(ms, func(x, y int) bool {
			if ms[x].med != ms[y].med {
				return ms[x].med < ms[y].med
			}
			return ms[x].name < ms[y].name
		})
		var next []string
		for _, m := range ms[1:min(len(ms), 3)] {
			next = append(next, fmt.Sprintf("%s %s", m.name, pct(m.med)))
		}
		best := ms[0]
		total := 0.0
		for _, v := range meas[k] {
			total += v
		}
		rows = append(rows, []string{k.app, fmt.Sprintf("store %s, %d communication %s", k.store, best.n, plural(best.n, "phase", "phases")),
			humanTime(total) + " in all", best.name,
			fmt.Sprintf("median |error| %s (%s to %s)", pct(best.med), signedPct(best.lo), signedPct(best.hi)), orDash(strings.Join(next, ", "))})
	}
	return rows
}

// trustChecks says, figure by figure, what the records tell about whether
// the run can be trusted: ranks sharing cores, a loaded machine (what the
// records can show of it), and repetitions that stopped before their CI
// reached its target.
func trustChecks(recs []results.Record) []string {
	var out []string
	m := recs[0].Meta
	rpn := 0
	for _, n := range m.RanksPerHost {
		rpn = max(rpn, n)
	}
	cpus := cpuCount(m.Binding)
	switch {
	case m.Backend != "local" && m.Cores > 0 && rpn > m.Cores:
		out = append(out, fmt.Sprintf("**Oversubscribed**: %d ranks ran on a host of %d cores. Ranks took turns on the cores, so every time here includes waits for a core; none is a figure of the network alone.", rpn, m.Cores))
	case m.Backend != "local" && m.Cores > 0:
		out = append(out, fmt.Sprintf("Ranks per host (%d) do not exceed the host's %d cores: every rank could have a core of its own.", rpn, m.Cores))
	case m.Backend == "local":
		out = append(out, "The records come from the local backend (goroutine ranks in one process): no time in them is a network measurement.")
	case cpus > 1 && rpn > cpus:
		out = append(out, fmt.Sprintf("**Oversubscribed**: %d ranks ran on a host where rank 0 could use %d CPUs (%s). Ranks took turns on the cores, so every time here includes waits for a core; none is a figure of the network.", rpn, cpus, m.Binding))
	case cpus > 1 && rpn <= cpus:
		out = append(out, fmt.Sprintf("Ranks per host (%d) do not exceed the CPUs rank 0 could use (%d): no sign of oversubscription.", rpn, cpus))
	case cpus == 1:
		out = append(out, fmt.Sprintf("Oversubscription: rank 0 was bound to one CPU (%s) and its host ran %d ranks; the records do not carry the host's core count, so this report cannot tell whether every rank had a core of its own.", m.Binding, rpn))
	default:
		out = append(out, fmt.Sprintf("Oversubscription: the records carry neither rank 0's CPUs nor the host's core count (its host ran %d ranks), so this report cannot tell whether every rank had a core of its own.", rpn))
	}
	switch {
	case m.Cores > 0 && m.Load1 > 0 && m.Load1 > float64(m.Cores):
		out = append(out, fmt.Sprintf("**Loaded machine**: the one-minute load average was %.1f on %d cores when the run started: other work shared the machine, and the times here include waits for it (rerun on a quiet machine for figures of the network).", m.Load1, m.Cores))
	case m.Cores > 0 && m.Load1 > 0:
		out = append(out, fmt.Sprintf("Load: the one-minute load average was %.1f on %d cores when the run started (no sign of other work then; the load during the run shows only in the spread of the repetitions, the ±%% column).", m.Load1, m.Cores))
	default:
		out = append(out, "Load: the records carry no load average, so this report cannot tell whether other work shared the machine; the spread of the repetitions (the ±% column) is the only sign of it.")
	}

	stops := map[string]int{}
	small := 0
	for _, r := range recs {
		if r.Stop != "" {
			stops[r.Stop]++
		}
		if r.N < results.MinCISamples && r.Stop != results.StopFixed {
			small++
		}
	}
	short := stops[results.StopMaxTime] + stops[results.StopMaxReps]
	switch {
	case short > 0:
		out = append(out, fmt.Sprintf("Repetitions: %d of %d records stopped on their time or repetition cap (max-time %d, max-reps %d: %s) before the 95%% CI of the median reached its target width; their CI is wider than the rule asks (the stop column of each table says which).", short, len(recs), stops[results.StopMaxTime], stops[results.StopMaxReps], shortByBench(recs)))
	case stops[results.StopRelCI] > 0:
		out = append(out, fmt.Sprintf("Repetitions: every adaptively repeated record (%d) reached its CI target.", stops[results.StopRelCI]))
	default:
		out = append(out, "Repetitions: the records do not say why their repetitions stopped, so this report cannot tell whether their CIs reached a target.")
	}
	if small > 0 {
		out = append(out, fmt.Sprintf("%d %s fewer than %d repetitions, too few for a 95%% CI of the median.", small, plural(small, "record has", "records have"), results.MinCISamples))
	}
	for _, h := range []struct {
		bench, what string
		v           float64
	}{{"pingpong", "latency at 8 B", 8}, {"bandwidth", "bandwidth at 1 MiB", 1 << 20}} {
		if r, ok := pickRecord(recs, h.bench, "bytes", h.v); ok && r.Stop != "" && r.Stop != results.StopRelCI {
			out = append(out, fmt.Sprintf("The %s stopped by %s after %d repetitions, not by its CI target.", h.what, r.Stop, r.N))
		}
	}
	return out
}

// shortByBench counts the records of each bench that stopped on a cap:
// "kkaccess 3, app 2".
func shortByBench(recs []results.Record) string {
	n := map[string]int{}
	for _, r := range recs {
		if r.Stop == results.StopMaxTime || r.Stop == results.StopMaxReps {
			n[r.Bench]++
		}
	}
	var parts []string
	for _, b := range benchOrder(recs) {
		if n[b] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", b, n[b]))
		}
	}
	return strings.Join(parts, ", ")
}

// cpuCount is the number of CPUs in a binding's cpus= list ("0-3,6"), or
// 0 when it has none.
func cpuCount(binding string) int {
	for _, f := range strings.Fields(binding) {
		list, ok := strings.CutPrefix(f, "cpus=")
		if !ok {
			continue
		}
		n := 0
		for _, part := range strings.Split(list, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			if !isRange {
				if err1 == nil {
					n++
				}
				continue
			}
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && b >= a {
				n += b - a + 1
			}
		}
		return n
	}
	return 0
}

// writePt2ptPlots draws the ping-pong latency and the bandwidth against
// the message size (plots/latency.png, plots/bandwidth.png: medians with
// their 95% CIs, every record of the bench one curve, whatever its
// repetition counts) and links them from the summary.
func writePt2ptPlots(w io.Writer, run *Run, recs []results.Record) error {
	machine := machineLine(recs)
	for _, p := range []struct {
		bench, file, caption, yLabel string
		rate                         bool
	}{
		{"pingpong", "latency.png", "Ping-pong latency (half the round trip): median and 95% CI per message size", "latency", false},
		{"bandwidth", "bandwidth.png", "Bandwidth (windows of 64 non-blocking sends): median and 95% CI per message size", "bandwidth (MB = 10^6 B)", true},
	} {
		c := newCurves()
		for _, r := range recs {
			if b, ok := toFloat(r.Params["bytes"]); ok && r.Bench == p.bench && b > 0 {
				c.addRec(p.bench, b, r)
			}
		}
		if len(c.order) == 0 {
			continue
		}
		f := &figure{file: p.file, caption: p.caption, machine: machine, xLabel: "message size", yLabel: p.yLabel,
			xBytes: true, yTime: !p.rate, yRate: p.rate, series: c.series()}
		f.series[0].label = ""
		img, err := f.render()
		if err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
		run.Plots = append(run.Plots, PlotFile{Name: p.file, Data: img})
		fmt.Fprintf(w, "![%s](%s/%s)\n\n", p.caption, results.PlotsDir, p.file)
	}
	return nil
}
