package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/montanaflynn/stats"
	"gonum.org/v1/plot/plotter"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// The papers' figures, drawn from records alone (`commcost report DIR`):
// each function looks for the records its figure needs and returns no
// figure when they are not there. Captions name the paper figure
// (README.md, "The papers") and say what is plotted here, on this machine.

// paperFigure builds the figures of one paper figure from the records and
// the models the report fitted.
type paperFigure func(recs []results.Record, models []NamedModel) []*figure

// paperFigures lists them in report order.
var paperFigures = []paperFigure{
	fig000KKAgainstL, fig000KKAgainstR, fig000KKAgainstK, fig000KKR1AgainstRMin,
	fig000KAgainstH, fig000KAmortisedAgainstH, fig000KAgainstA,
	fig000Split, fig000SplitSpeedups,
	fig001MeasuredPredicted,
	fig002Histogram, fig002CommCost, fig002SchedOverhead, fig002SchedTime,
	fig004MatSquareBlocks, fig004MatSquareMeshes,
}

// Figures draws every paper figure the records hold data for and returns
// them as PNG files with their captions.
func Figures(recs []results.Record, models []NamedModel) ([]FigureFile, error) {
	var out []FigureFile
	machine := machineLine(recs)
	for _, pf := range paperFigures {
		for _, f := range pf(recs, models) {
			f.machine = machine
			img, err := f.render()
			if errors.Is(err, ErrNothingToPlot) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.file, err)
			}
			out = append(out, FigureFile{PlotFile: PlotFile{Name: f.file, Data: img}, Caption: f.caption})
		}
	}
	return out, nil
}

// FigureFile is a paper figure's PNG and its caption.
type FigureFile struct {
	PlotFile
	Caption string
}

// --- record helpers ---

func benchRecs(recs []results.Record, bench string) []results.Record {
	var out []results.Record
	for _, r := range recs {
		if r.Bench == bench {
			out = append(out, r)
		}
	}
	return out
}

// pnum is a numeric parameter of a record.
func pnum(r results.Record, k string) (float64, bool) {
	return toFloat(r.Params[k])
}

func pstr(r results.Record, k string) string {
	if v, ok := r.Params[k]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

// levels are the distinct values of a numeric parameter, sorted.
func levels(recs []results.Record, k string) []float64 {
	set := map[float64]bool{}
	for _, r := range recs {
		if v, ok := pnum(r, k); ok {
			set[v] = true
		}
	}
	out := make([]float64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Float64s(out)
	return out
}

// nearest is the level closest to target on a log scale (targets are
// sizes): the paper's value when it was measured, the closest otherwise.
func nearest(lv []float64, target float64) float64 {
	best, bd := math.NaN(), math.Inf(1)
	for _, v := range lv {
		d := math.Abs(v - target)
		if v > 0 && target > 0 {
			d = math.Abs(math.Log(v / target))
		}
		if d < bd {
			best, bd = v, d
		}
	}
	return best
}

// thin keeps at most n levels, evenly spread, so a legend stays legible.
func thin(lv []float64, n int) []float64 {
	if len(lv) <= n {
		return lv
	}
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, lv[i*(len(lv)-1)/(n-1)])
	}
	return out
}

// recCtx names what a figure's records may differ in besides the plotted
// parameters (the emulated network, the number of ranks, the operation),
// for labels when there are several.
func recCtx(r results.Record, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if k == "ranks" {
			parts = append(parts, fmt.Sprintf("p=%d", r.Ranks))
			continue
		}
		if v := pstr(r, k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// curves collects medians into series: per series label, per x, the
// median of the values added.
type curves struct {
	order []string
	by    map[string]map[float64][]float64
	ci    map[string]map[float64][][2]float64
	style map[string]figSeries
}

func newCurves() *curves {
	return &curves{by: map[string]map[float64][]float64{}, ci: map[string]map[float64][][2]float64{}, style: map[string]figSeries{}}
}

// addRec adds a record's median at x, with its 95% CI.
func (c *curves) addRec(label string, x float64, r results.Record) {
	if math.IsNaN(x) || math.IsNaN(r.Median) || math.IsInf(r.Median, 0) {
		return
	}
	c.add(label, x, r.Median)
	if c.ci[label] == nil {
		c.ci[label] = map[float64][][2]float64{}
	}
	c.ci[label][x] = append(c.ci[label][x], r.CI95)
}

func (c *curves) add(label string, x, y float64) {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) {
		return
	}
	m, ok := c.by[label]
	if !ok {
		m = map[float64][]float64{}
		c.by[label] = m
		c.order = append(c.order, label)
	}
	m[x] = append(m[x], y)
}

// series returns the curves in label order (sorted naturally), each
// coloured by position unless styled.
func (c *curves) series() []figSeries {
	labels := append([]string(nil), c.order...)
	sort.SliceStable(labels, func(i, j int) bool { return naturalLess(labels[i], labels[j]) })
	var out []figSeries
	for i, l := range labels {
		s, styled := c.style[l]
		if !styled {
			s = figSeries{colour: i}
		}
		s.label = l
		for x, ys := range c.by[l] {
			y, _ := stats.Median(ys)
			s.pts = append(s.pts, plotter.XY{X: x, Y: y})
			// A point of one record shows its CI; the median of several
			// has none of its own.
			if cis := c.ci[l][x]; len(cis) == 1 && len(ys) == 1 {
				if s.ci == nil {
					s.ci = map[float64][2]float64{}
				}
				s.ci[x] = cis[0]
			}
		}
		out = append(out, s)
	}
	return out
}

// naturalLess orders labels with numbers by value: "k=2" before "k=10",
// "l=64" before "l=1K" (sizes with K and M suffixes read as 2^10, 2^20).
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		va, na := leadingNumber(a)
		vb, nb := leadingNumber(b)
		if na > 0 && nb > 0 {
			if va != vb {
				return va < vb
			}
			a, b = a[na:], b[nb:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// leadingNumber reads a number at the start of s (digits, an optional
// fraction, an optional K or M size suffix) and how many bytes it took.
func leadingNumber(s string) (float64, int) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' && i > 0) {
		i++
	}
	if i == 0 {
		return 0, 0
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, 0
	}
	if i < len(s) {
		switch s[i] {
		case 'K':
			return v * 1024, i + 1
		case 'M':
			return v * 1024 * 1024, i + 1
		}
	}
	return v, i
}

// distinct reports how many different context strings the records have.
func distinct(recs []results.Record, f func(results.Record) string) int {
	set := map[string]bool{}
	for _, r := range recs {
		set[f(r)] = true
	}
	return len(set)
}

// withCtx prefixes a label with the record's context when contexts vary.
func withCtx(many bool, r results.Record, label string, keys ...string) string {
	if !many {
		return label
	}
	return strings.TrimSpace(recCtx(r, keys...) + " " + label)
}

// --- paper 000: k-k-access and k-access (Figs. 5-11), split (13, 14) ---

// kkReads are the k-k-access records of one operation (reads when there
// are any: the paper's accesses are reads).
func kkReads(recs []results.Record, bench string) []results.Record {
	all := benchRecs(recs, bench)
	op := "read"
	if !slices.ContainsFunc(all, func(r results.Record) bool { return pstr(r, "op") == op }) && len(all) > 0 {
		op = pstr(all[0], "op")
	}
	var out []results.Record
	for _, r := range all {
		if pstr(r, "op") == op {
			out = append(out, r)
		}
	}
	return out
}

// kkCtx separates k-k-access records of different networks, rank counts
// and target draws (block accesses apart from spread ones).
var kkCtx = []string{"network", "ranks", "block"}

func kkMany(recs []results.Record) bool {
	return distinct(recs, func(r results.Record) string { return recCtx(r, kkCtx...) }) > 1
}

// rMax is each context's largest portion r (r = 1 when all ranks can).
func atMaxR(recs []results.Record) []results.Record {
	maxR := map[string]float64{}
	for _, r := range recs {
		if v, ok := pnum(r, "r"); ok {
			c := recCtx(r, kkCtx...)
			maxR[c] = math.Max(maxR[c], v)
		}
	}
	var out []results.Record
	for _, r := range recs {
		if v, ok := pnum(r, "r"); ok && v == maxR[recCtx(r, kkCtx...)] {
			out = append(out, r)
		}
	}
	return out
}

func fig000KKAgainstL(recs []results.Record, _ []NamedModel) []*figure {
	kk := atMaxR(kkReads(recs, "kkaccess"))
	if len(levels(kk, "l")) < 2 {
		return nil
	}
	many := kkMany(kk)
	c := newCurves()
	for _, r := range kk {
		k, _ := pnum(r, "k")
		l, _ := pnum(r, "l")
		c.addRec(withCtx(many, r, fmt.Sprintf("k=%g", k), kkCtx...), l, r)
	}
	return []*figure{{
		file:    "paper000-fig05-kk-l.png",
		caption: "Paper 000, Fig. 5 (dependency on the packet size l): time of a k-k-access against l, one curve per send hot spot k, at the largest portion r measured (r = 1 when every rank accesses); medians of the records",
		xLabel:  "packet size l", yLabel: "k-k-access time", yTime: true, xBytes: true,
		series: c.series(),
	}}
}

func fig000KKAgainstR(recs []results.Record, _ []NamedModel) []*figure {
	kk := kkReads(recs, "kkaccess")
	if len(levels(kk, "r")) < 2 {
		return nil
	}
	l := nearest(levels(kk, "l"), 1024)
	var sel []results.Record
	for _, r := range kk {
		if v, _ := pnum(r, "l"); v == l {
			sel = append(sel, r)
		}
	}
	many := kkMany(sel)
	c := newCurves()
	for _, r := range sel {
		k, _ := pnum(r, "k")
		x, _ := pnum(r, "r")
		c.addRec(withCtx(many, r, fmt.Sprintf("k=%g", k), kkCtx...), x, r)
	}
	return []*figure{{
		file:    "paper000-fig06-kk-r.png",
		caption: fmt.Sprintf("Paper 000, Fig. 6 (dependency on the portion r of accessing processors): time of a k-k-access against r at l = %s bytes, one curve per send hot spot k", results.FormatBytes(l)),
		xLabel:  "portion r of accessing ranks", yLabel: "k-k-access time", yTime: true, linX: true,
		series: c.series(),
	}}
}

func fig000KKAgainstK(recs []results.Record, _ []NamedModel) []*figure {
	kk := atMaxR(kkReads(recs, "kkaccess"))
	if len(levels(kk, "k")) < 2 {
		return nil
	}
	ls := thin(levels(kk, "l"), 6)
	many := kkMany(kk)
	c := newCurves()
	for _, r := range kk {
		l, _ := pnum(r, "l")
		if !slices.Contains(ls, l) {
			continue
		}
		k, _ := pnum(r, "k")
		c.addRec(withCtx(many, r, "l="+results.FormatBytes(l), kkCtx...), k, r)
	}
	return []*figure{{
		file:    "paper000-fig07-kk-k.png",
		caption: "Paper 000, Fig. 7 (dependency on the send hot spot k): time of a k-k-access against k, one curve per packet size l, at the largest portion r measured",
		xLabel:  "send hot spot k (packets per rank)", yLabel: "k-k-access time", yTime: true,
		series: c.series(),
	}}
}

func fig000KKR1AgainstRMin(recs []results.Record, _ []NamedModel) []*figure {
	kk := kkReads(recs, "kkaccess")
	rs := levels(kk, "r")
	if len(rs) < 2 || len(levels(kk, "k")) < 2 {
		return nil
	}
	l := nearest(levels(kk, "l"), 1024)
	lo, hi := rs[0], rs[len(rs)-1]
	many := kkMany(kk)
	c := newCurves()
	i := 0
	for _, r := range kk {
		lv, _ := pnum(r, "l")
		rv, _ := pnum(r, "r")
		if lv != l || (rv != lo && rv != hi) {
			continue
		}
		k, _ := pnum(r, "k")
		label := withCtx(many, r, fmt.Sprintf("r=%g", rv), kkCtx...)
		if _, ok := c.style[label]; !ok {
			c.style[label] = figSeries{colour: i / 2, dash: b2i(rv == lo)}
			i++
		}
		c.addRec(label, k, r)
	}
	return []*figure{{
		file:    "paper000-fig08-kk-r1-rmin.png",
		caption: fmt.Sprintf("Paper 000, Fig. 8 (r = 1 against r = 1/8): time against the send hot spot k with every rank accessing (r = %g, solid) and the fewest ranks measured (r = %g, dashed), l = %s bytes", hi, lo, results.FormatBytes(l)),
		xLabel:  "send hot spot k (packets per rank)", yLabel: "access time", yTime: true,
		series: c.series(),
	}}
}

var kaCtx = []string{"network", "ranks", "op"}

func kaMany(recs []results.Record) bool {
	return distinct(recs, func(r results.Record) string { return recCtx(r, kaCtx...) }) > 1
}

func fig000KAgainstH(recs []results.Record, _ []NamedModel) []*figure {
	ka := benchRecs(recs, "kaccess")
	as := levels(ka, "a")
	if len(levels(ka, "h")) < 2 || len(as) == 0 {
		return nil
	}
	var sel []results.Record
	for _, r := range ka {
		if a, _ := pnum(r, "a"); a == as[0] && pstr(r, "es") != "true" {
			sel = append(sel, r)
		}
	}
	many := kaMany(sel)
	c := newCurves()
	for _, r := range sel {
		k, _ := pnum(r, "k")
		l, _ := pnum(r, "l")
		h, _ := pnum(r, "h")
		c.addRec(withCtx(many, r, fmt.Sprintf("k=%g l=%s", k, results.FormatBytes(l)), kaCtx...), h, r)
	}
	return []*figure{{
		file:    "paper000-fig09-ka-h.png",
		caption: fmt.Sprintf("Paper 000, Fig. 9 (dependency on the receive hot spot h): time of a k-access against h with a synchronisation after every k-access (a = %g), one curve per send hot spot k", as[0]),
		xLabel:  "receive hot spot h (share of ranks sending to one module)", yLabel: "k-access time", yTime: true,
		series: c.series(),
	}}
}

func fig000KAmortisedAgainstH(recs []results.Record, _ []NamedModel) []*figure {
	ka := benchRecs(recs, "kaccess")
	ks := levels(ka, "k")
	if len(levels(ka, "h")) < 2 || len(levels(ka, "a")) < 2 {
		return nil
	}
	k := ks[0]
	var sel []results.Record
	for _, r := range ka {
		if v, _ := pnum(r, "k"); v == k {
			sel = append(sel, r)
		}
	}
	many := kaMany(sel)
	c := newCurves()
	for _, r := range sel {
		a, _ := pnum(r, "a")
		h, _ := pnum(r, "h")
		label := fmt.Sprintf("a=%g", a)
		if pstr(r, "es") == "true" {
			label += " es"
		}
		c.addRec(withCtx(many, r, label, kaCtx...), h, r)
	}
	return []*figure{{
		file:    "paper000-fig10-ka-amortised-h.png",
		caption: fmt.Sprintf("Paper 000, Fig. 10 (asynchrony a against the receive hot spot h): amortised time T/a of a k-access against h, k = %g, one curve per number a of k-accesses between synchronisations (es: the same hot spots in all a)", k),
		xLabel:  "receive hot spot h (share of ranks sending to one module)", yLabel: "amortised k-access time T/a", yTime: true,
		series: c.series(),
	}}
}

func fig000KAgainstA(recs []results.Record, _ []NamedModel) []*figure {
	ka := benchRecs(recs, "kaccess")
	hs := levels(ka, "h")
	if len(levels(ka, "a")) < 2 || len(hs) == 0 {
		return nil
	}
	lo, hi := hs[0], hs[len(hs)-1]
	var sel []results.Record
	for _, r := range ka {
		h, _ := pnum(r, "h")
		if (h == lo || h == hi) && pstr(r, "es") != "true" {
			sel = append(sel, r)
		}
	}
	many := kaMany(sel)
	c := newCurves()
	for _, r := range sel {
		k, _ := pnum(r, "k")
		h, _ := pnum(r, "h")
		a, _ := pnum(r, "a")
		c.addRec(withCtx(many, r, fmt.Sprintf("h=%.3g k=%g", h, k), kaCtx...), a, r)
	}
	return []*figure{{
		file:    "paper000-fig11-ka-a.png",
		caption: fmt.Sprintf("Paper 000, Fig. 11 (dependency on the asynchrony a): amortised time T/a of a k-access against a, without hot spot (h = %.3g, a k-k-access) and with the largest hot spot measured (h = %.3g)", lo, hi),
		xLabel:  "k-accesses a between synchronisations", yLabel: "amortised k-access time T/a", yTime: true,
		series: c.series(),
	}}
}

func fig000Split(recs []results.Record, _ []NamedModel) []*figure {
	opt := benchRecs(recs, "optimize")
	if len(levels(opt, "k")) < 2 {
		return nil
	}
	many := distinct(opt, func(r results.Record) string { return recCtx(r, "d_bytes", "ranks") }) > 1
	c := newCurves()
	i := 0
	for _, r := range opt {
		k, _ := pnum(r, "k")
		base := recCtx(r, "d_bytes", "ranks")
		meas, pred := "measured", "trilinear prediction"
		if many {
			meas, pred = base+" measured", base+" predicted"
		}
		if _, ok := c.style[meas]; !ok {
			c.style[meas] = figSeries{colour: i, pointsOnly: true}
			c.style[pred] = figSeries{colour: i, lineOnly: true}
			i++
		}
		c.addRec(meas, k, r)
		if p, ok := r.Derived["predicted_s"]; ok {
			c.add(pred, k, p)
		}
	}
	return []*figure{{
		file:    "paper000-fig13-split.png",
		caption: "Paper 000, Fig. 13 (the split curve): time to access D bytes as k packets of D/k bytes with every rank accessing (r = 1), measured (points) and predicted by the fitted trilinear model (line), against k",
		xLabel:  "packets k (each D/k bytes)", yLabel: "access time", yTime: true,
		series: c.series(),
	}}
}

func fig000SplitSpeedups(recs []results.Record, _ []NamedModel) []*figure {
	sp := benchRecs(recs, "packetsplit")
	if len(sp) == 0 {
		return nil
	}
	// Medians per (context, ints, version).
	type key struct {
		ctx  string
		ints float64
	}
	med := map[key]map[string][]float64{}
	for _, r := range sp {
		n, ok := pnum(r, "ints")
		if !ok {
			continue
		}
		k := key{recCtx(r, "network", "ranks", "op"), n}
		if med[k] == nil {
			med[k] = map[string][]float64{}
		}
		v := pstr(r, "version")
		med[k][v] = append(med[k][v], r.Median)
	}
	many := distinct(sp, func(r results.Record) string { return recCtx(r, "network", "ranks", "op") }) > 1
	c := newCurves()
	for k, byV := range med {
		m := func(v string) float64 {
			x, err := stats.Median(byV[v])
			if err != nil || x <= 0 {
				return math.NaN()
			}
			return x
		}
		label := func(s string) string {
			if many {
				return k.ctx + " " + s
			}
			return s
		}
		c.add(label("version 2 (4 KiB packets) over version 1"), k.ints, m("1")/m("2"))
		c.add(label("version 3 (k0, l0 from the model) over version 2"), k.ints, m("2")/m("3"))
		c.add(label("total: version 3 over version 1"), k.ints, m("1")/m("3"))
	}
	one := 1.0
	return []*figure{{
		file:    "paper000-fig14-split-speedups.png",
		caption: "Paper 000, Fig. 14 (speedups of splitting accesses): ratio of median access times against the variable size: version 2 (packets of 4 KiB) over one access, version 3 (k0 packets of l0 from the fitted model) over version 2, and the total",
		xLabel:  "variable size (integers of 4 bytes)", yLabel: "speedup (ratio of median times)", linY: true,
		series: c.series(), refY: &one,
	}}
}

// --- paper 001: predicted against measured (Fig. 7 style) ---

func fig001MeasuredPredicted(recs []results.Record, models []NamedModel) []*figure {
	var figs []*figure
	// Application phases with their communication as pattern instances,
	// one series per program, phase and variant (paper 001 draws the
	// synchronous and the asynchronous curve apart). A record commcost app
	// annotated (apps.Ranking.Annotate) is drawn as its run judged it: the
	// statistic it was judged on (measured_s) against every model fitted
	// to that run's own calibration (pred_NAME_s), which is what the run's
	// table printed; any other record by its median against the models
	// fitted to this directory's records.
	var apps []results.Record
	for _, r := range benchRecs(recs, "app") {
		if len(r.Workload) > 0 {
			apps = append(apps, r)
		}
	}
	if len(levels(withRanksParam(apps), "ranks")) >= 2 {
		c := newCurves()
		i := 0
		for _, r := range apps {
			name := strings.Join(strings.Fields(pstr(r, "app")+" "+pstr(r, "phase")+" "+pstr(r, "variant")), " ")
			y, own := r.Derived[derivedMeasured]
			measured := "measured"
			if own {
				if st := namedStat(r.Derived); st != "" {
					measured += " (" + st + ")"
				}
			} else {
				y = r.Median
			}
			meas := name + " " + measured
			if _, ok := c.style[meas]; !ok {
				c.style[meas] = figSeries{colour: i, pointsOnly: true}
				i++
			}
			c.add(meas, float64(r.Ranks), y)
			preds := map[string]float64{}
			if own {
				for k, v := range r.Derived {
					if m, ok := strings.CutPrefix(k, "pred_"); ok && !strings.HasPrefix(m, "err_") && strings.HasSuffix(m, "_s") {
						preds[strings.TrimSuffix(m, "_s")] = v
					}
				}
			} else {
				for _, m := range models {
					if v, err := model.PredictWorkload(m.Model, r.Workload); err == nil {
						preds[m.Label] = v
					}
				}
			}
			for j, label := range slices.Sorted(maps.Keys(preds)) {
				series := name + " " + label
				if _, ok := c.style[series]; !ok {
					c.style[series] = figSeries{colour: c.style[meas].colour, lineOnly: true, dash: j % 4}
				}
				c.add(series, float64(r.Ranks), preds[label])
			}
		}
		figs = append(figs, &figure{
			file:    "paper001-fig07-apps.png",
			caption: "Paper 001, Fig. 7 style: predicted (lines, one per fitted model) against measured (points) communication time of each application phase against the number of processes",
			xLabel:  "processes p", yLabel: "communication time", yTime: true, linX: true,
			series: c.series(),
		})
	}
	// The contention patterns of the hyperbolic model against its
	// prediction, at the largest message size measured.
	var hyp []NamedModel
	for _, m := range models {
		if m.Model.Kind() == "hyperbolic" {
			hyp = append(hyp, m)
		}
	}
	if len(hyp) == 0 {
		return figs
	}
	c := newCurves()
	i := 0
	for _, bench := range []string{"alltoall", "pairwise", "rowcontention"} {
		bs := benchRecs(recs, bench)
		if len(levels(withRanksParam(bs), "ranks")) < 2 {
			continue
		}
		x := levels(bs, "bytes")
		big := x[len(x)-1]
		meas, pred := fmt.Sprintf("%s %s B measured", bench, results.FormatBytes(big)), fmt.Sprintf("%s %s B hyperbolic", bench, results.FormatBytes(big))
		c.style[meas] = figSeries{colour: i, pointsOnly: true}
		c.style[pred] = figSeries{colour: i, lineOnly: true}
		i++
		for _, r := range bs {
			if b, _ := pnum(r, "bytes"); b != big {
				continue
			}
			c.addRec(meas, float64(r.Ranks), r)
			if p, err := hyp[0].Model.Predict(model.InstanceOf(r)); err == nil {
				c.add(pred, float64(r.Ranks), p)
			}
		}
	}
	if len(c.order) > 0 {
		figs = append(figs, &figure{
			file:    "paper001-fig07-patterns.png",
			caption: "Paper 001, Fig. 7 style: the hyperbolic model's prediction (lines) against the measured time (points) of its contention patterns against the number of processes, at the largest message size measured",
			xLabel:  "processes (all-to-all: n; pairwise and row contention: 2n)", yLabel: "time", yTime: true, linX: true,
			series: c.series(),
		})
	}
	return figs
}

// withRanksParam copies records with their rank count as a parameter, for
// levels.
func withRanksParam(recs []results.Record) []results.Record {
	out := make([]results.Record, len(recs))
	for i, r := range recs {
		p := results.Params{"ranks": r.Ranks}
		r.Params = p
		out[i] = r
	}
	return out
}

// --- paper 002: permutations and schedulers (Figs. 1, 8-10) ---

func fig002Histogram(recs []results.Record, _ []NamedModel) []*figure {
	var figs []*figure
	for _, r := range benchRecs(recs, "permutations") {
		if len(r.Samples) < 20 || len(figs) >= 4 {
			continue
		}
		mean, _ := stats.Mean(r.Samples)
		within := 0
		for _, v := range r.Samples {
			if math.Abs(v-mean) <= 0.05*mean {
				within++
			}
		}
		b, _ := pnum(r, "bytes")
		figs = append(figs, &figure{
			file: fmt.Sprintf("paper002-fig01-hist-%s-p%d.png", results.FormatBytes(b), r.Ranks),
			caption: fmt.Sprintf("Paper 002, Fig. 1 (distribution of the cost of random permutations): %d permutations of %s-byte messages on %d ranks; %.1f%% within 5%% of the mean %.4g us (the CM-5: 99.5%%)",
				len(r.Samples), results.FormatBytes(b), r.Ranks, 100*float64(within)/float64(len(r.Samples)), mean*1e6),
			xLabel: "time of one permutation", yLabel: "permutations",
			hist: r.Samples,
		})
	}
	return figs
}

func schedComm(recs []results.Record) []results.Record {
	var out []results.Record
	for _, r := range benchRecs(recs, "sched.comm") {
		if _, ok := pnum(r, "bytes"); ok {
			out = append(out, r)
		}
	}
	return out
}

// schedulers lists the records' schedulers, sorted.
func schedulers(recs []results.Record) []string {
	set := map[string]bool{}
	for _, r := range recs {
		set[pstr(r, "scheduler")] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// styleSched colours a curve by its scheduler and patterns its line by
// the density d.
func styleSched(c *curves, label string, scheds []string, sched string, di int) {
	if _, ok := c.style[label]; !ok {
		c.style[label] = figSeries{colour: slices.Index(scheds, sched), dash: di}
	}
}

func fig002CommCost(recs []results.Record, _ []NamedModel) []*figure {
	sc := schedComm(recs)
	if len(levels(sc, "bytes")) < 2 {
		return nil
	}
	ds := thin(levels(sc, "d"), 3)
	scheds := schedulers(sc)
	c := newCurves()
	for _, r := range sc {
		d, _ := pnum(r, "d")
		if !slices.Contains(ds, d) {
			continue
		}
		b, _ := pnum(r, "bytes")
		label := fmt.Sprintf("%s d=%g", pstr(r, "scheduler"), d)
		styleSched(c, label, scheds, pstr(r, "scheduler"), slices.Index(ds, d))
		c.addRec(label, b, r)
	}
	return []*figure{{
		file:    "paper002-fig08-comm-cost.png",
		caption: "Paper 002, Fig. 8 (communication cost for different message sizes): time of one all-to-many exchange against the message size, one colour per scheduler, one line pattern per density d (solid the smallest); medians over the communication matrices",
		xLabel:  "message size", yLabel: "communication time", yTime: true, xBytes: true,
		series: c.series(),
	}}
}

func fig002SchedOverhead(recs []results.Record, _ []NamedModel) []*figure {
	sc := schedComm(recs)
	c := newCurves()
	ds := thin(levels(sc, "d"), 3)
	scheds := schedulers(sc)
	for _, r := range sc {
		v, ok := r.Derived["sched_over_comm"]
		d, _ := pnum(r, "d")
		if !ok || !slices.Contains(ds, d) {
			continue
		}
		b, _ := pnum(r, "bytes")
		label := fmt.Sprintf("%s d=%g", pstr(r, "scheduler"), d)
		styleSched(c, label, scheds, pstr(r, "scheduler"), slices.Index(ds, d))
		c.add(label, b, v)
	}
	if len(c.order) == 0 {
		return nil
	}
	return []*figure{{
		file:    "paper002-fig09-sched-overhead.png",
		caption: "Paper 002, Fig. 9 (scheduling overhead): scheduling time over communication time of one exchange against the message size, one colour per scheduler, one line pattern per density d (solid the smallest)",
		xLabel:  "message size", yLabel: "scheduling cost / communication cost", xBytes: true,
		series: c.series(),
	}}
}

func fig002SchedTime(recs []results.Record, _ []NamedModel) []*figure {
	c := newCurves()
	for _, r := range benchRecs(recs, "sched.time") {
		if pstr(r, "scheduler") != "CGM" {
			continue
		}
		d, ok1 := pnum(r, "d")
		n, ok2 := pnum(r, "n")
		if !ok1 || !ok2 || d < 2 || n <= 0 {
			continue
		}
		x := d * math.Log(d)
		if x > 150 {
			continue // the paper's range
		}
		c.add(fmt.Sprintf("n=%g", n), x, r.Median/n)
	}
	if len(c.order) == 0 {
		return nil
	}
	series := c.series()
	for i := range series {
		series[i].pointsOnly = true
	}
	return []*figure{{
		file:    "paper002-fig10-cgm-sched-time.png",
		caption: "Paper 002, Fig. 10 (CGM scheduling cost): CGM scheduling time divided by the number of nodes n against d ln d (d ln d < 150), one series per n; eq. 5 predicts a line through the origin",
		xLabel:  "d ln d", yLabel: "scheduling time / n", yTime: true, linX: true, linY: true,
		series: series,
	}}
}

// --- paper 004: matrix square ratios (Figs. 3, 4) ---

// matSquareRatios are the congestion (solid) and time (dashed) ratios
// to the hand-optimised run of each strategy, against x(r), for the
// records keep selects.
func matSquareRatios(ms []results.Record, keep func(results.Record) bool, x func(results.Record) (float64, bool)) []figSeries {
	c := newCurves()
	i := 0
	for _, r := range ms {
		xv, ok := x(r)
		if !keep(r) || !ok {
			continue
		}
		s := pstr(r, "strategy")
		cong, tim := s+" congestion", s+" time"
		if _, ok := c.style[cong]; !ok {
			c.style[cong] = figSeries{colour: i}
			c.style[tim] = figSeries{colour: i, dash: 1}
			i++
		}
		if v, ok := r.Derived["congestion_ratio"]; ok {
			c.add(cong, xv, v)
		}
		if v, ok := r.Derived["time_ratio"]; ok {
			c.add(tim, xv, v)
		}
	}
	if len(c.order) == 0 {
		return nil
	}
	return c.series()
}

// meshSide is the side sqrt(R C) of a record's RxC mesh.
func meshSide(r results.Record) (float64, bool) {
	var w, h int
	if _, err := fmt.Sscanf(pstr(r, "mesh"), "%dx%d", &w, &h); err != nil {
		return 0, false
	}
	return math.Sqrt(float64(w * h)), true
}

func fig004MatSquareBlocks(recs []results.Record, _ []NamedModel) []*figure {
	ms := benchRecs(recs, "dsm-matsquare")
	// The mesh with the most block sizes (the paper: 16x16).
	count := map[string]map[float64]bool{}
	for _, r := range ms {
		b, ok := pnum(r, "block_ints")
		if !ok {
			continue
		}
		if count[pstr(r, "mesh")] == nil {
			count[pstr(r, "mesh")] = map[float64]bool{}
		}
		count[pstr(r, "mesh")][b] = true
	}
	mesh, best := "", 1
	for m, bs := range count {
		if len(bs) > best || len(bs) == best && m > mesh {
			mesh, best = m, len(bs)
		}
	}
	if mesh == "" {
		return nil
	}
	series := matSquareRatios(ms, func(r results.Record) bool { return pstr(r, "mesh") == mesh },
		func(r results.Record) (float64, bool) { return pnum(r, "block_ints") })
	if series == nil {
		return nil
	}
	one := 1.0
	return []*figure{{
		file:    "paper004-fig03-matsquare-blocks.png",
		caption: fmt.Sprintf("Paper 004, Fig. 3 (matrix square on a %s mesh): congestion (solid) and communication time (dashed) of each strategy as a ratio to the hand-optimised message passing, against the block size", mesh),
		xLabel:  "block size (integers)", yLabel: "ratio to hand-optimised",
		series: series, refY: &one,
	}}
}

func fig004MatSquareMeshes(recs []results.Record, _ []NamedModel) []*figure {
	ms := benchRecs(recs, "dsm-matsquare")
	// The block size measured on the most meshes (the paper: 4096).
	meshes := map[float64]map[string]bool{}
	for _, r := range ms {
		b, ok := pnum(r, "block_ints")
		if !ok {
			continue
		}
		if meshes[b] == nil {
			meshes[b] = map[string]bool{}
		}
		meshes[b][pstr(r, "mesh")] = true
	}
	block, best := 0.0, 1
	for b, m := range meshes {
		if len(m) > best || len(m) == best && b > block {
			block, best = b, len(m)
		}
	}
	if block == 0 {
		return nil
	}
	series := matSquareRatios(ms, func(r results.Record) bool { b, _ := pnum(r, "block_ints"); return b == block }, meshSide)
	if series == nil {
		return nil
	}
	one := 1.0
	return []*figure{{
		file:    "paper004-fig04-matsquare-meshes.png",
		caption: fmt.Sprintf("Paper 004, Fig. 4 (matrix square, scaling the mesh): congestion (solid) and communication time (dashed) of each strategy as a ratio to the hand-optimised message passing, block size %g integers, against the mesh side", block),
		xLabel:  "mesh side sqrt(P)", yLabel: "ratio to hand-optimised", linX: true,
		series: series, refY: &one,
	}}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
