package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/commcost/commcost/internal/fskind"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// maxLegendSeries bounds the legend; more series are drawn unlabelled.
const maxLegendSeries = 16

// xParam is the parameter a pattern's curves run along: the message size
// (the packet size l for k-k-accesses).
func xParam(in model.Instance) string {
	if _, ok := in.Params["bytes"]; ok {
		return "bytes"
	}
	if _, ok := in.Params["l"]; ok {
		return "l"
	}
	return ""
}

// repetitionParams say how a point was repeated or timed, not what was
// measured: points that differ only in them belong to one series (a
// ping-pong sweep whose small sizes ran 1000 iterations per repetition
// and its large ones 100 is one curve).
var repetitionParams = map[string]bool{"iters": true, "warmup": true, "reps": true, "seed": true}

// plotPoint is one measured parameter point of a series.
type plotPoint struct {
	in        model.Instance // the point's own instance, every parameter
	x, y      float64        // x parameter; measured median
	ci        [2]float64     // 95% CI of the median (of its records)
	predicted float64
}

type plotSeries struct {
	key    results.Params // the parameters that name the series
	label  string
	points []plotPoint
}

// ErrNothingToPlot is returned when none of the records is a pattern the
// model predicts along a message or packet size.
var ErrNothingToPlot = errors.New("nothing to plot")

// plotFormats are the image formats gonum/plot writes, by file extension.
var plotFormats = map[string]string{
	".png": "png", ".svg": "svg", ".pdf": "pdf", ".eps": "eps",
	".jpg": "jpg", ".jpeg": "jpg", ".tif": "tif", ".tiff": "tif",
}

// PlotFormat returns the image format of a file name's extension, or an
// error listing the accepted ones.
func PlotFormat(path string) (string, error) {
	if f, ok := plotFormats[strings.ToLower(filepath.Ext(path))]; ok {
		return f, nil
	}
	return "", errors.New("plot: file name must end in .png, .svg, .pdf, .eps, .jpg or .tif")
}

// CheckPlotPath refuses a plot file SavePlot cannot write (an unknown
// extension, a missing directory or one of the kernel's filesystems, a
// directory, FIFO, device or link in its place), before
// anything is measured or fitted; the error is the reason alone.
func CheckPlotPath(path string) error {
	if _, err := PlotFormat(path); err != nil {
		return errors.New("want a file name ending in .png, .svg, .pdf, .eps, .jpg or .tif")
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("directory %s does not exist", dir)
	}
	if kfs := fskind.KernelPath(dir); kfs != "" {
		return fmt.Errorf("directory %s is on the kernel's %s filesystem, not a place for data", dir, kfs)
	}
	// The plot is renamed over path: a FIFO, device, socket or link
	// there would be replaced by a regular file, not written into.
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("is %s, not a regular file: commcost writes its plot as a new file there (move it away, or name another file)", fskind.Name(st.Mode()))
	}
	return nil
}

// SavePlot renders p (8 x 6 inches) in the format of path's extension and
// writes it with WriteFile, whole or not at all: plot.Plot.Save writes
// straight into path, so a full disk or a killed process leaves a
// truncated image under the final name. Every plot commcost writes goes
// through here, WritePlot or WriteRunDir.
func SavePlot(p *plot.Plot, path string) error {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	data, err := render(p, format)
	if err != nil {
		return err
	}
	return WriteFile(path, data)
}

// WritePlot renders Plot in the format of path's extension and writes it
// to path whole (a temporary file renamed over it).
func WritePlot(m model.Model, recs []results.Record, path, title string) error {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	data, err := Plot(m, recs, format, title)
	if err != nil {
		return err
	}
	return WriteFile(path, data)
}

// Plot draws the measured per-point medians of recs the model predicts
// with their 95% CIs (points and error bars) and the model's prediction
// along the message size (lines), one series per configuration: per
// pattern and combination of the parameters other than the size and the
// repetition counts (repetitionParams), a prediction delay (prtt's
// delay_s) told only as zero or not. Parameters every series shares are
// named once, in the title, under the machine the records were measured
// on; the legend sits beside the data. Axes are logarithmic where the
// values are positive and span more than a decade, labelled in sizes and
// times. The image is in format ("png", "svg", "pdf", "eps", "jpg" or
// "tif"). Records of no pattern the model predicts along a size give an
// error wrapping ErrNothingToPlot.
func Plot(m model.Model, recs []results.Record, format, title string) ([]byte, error) {
	ci := map[string][2]float64{}
	for _, r := range recs {
		k := instanceKey(model.InstanceOf(r))
		c, ok := ci[k]
		if !ok {
			c = r.CI95
		} else {
			c = [2]float64{math.Min(c[0], r.CI95[0]), math.Max(c[1], r.CI95[1])}
		}
		ci[k] = c
	}
	by := map[string]*plotSeries{}
	var order []string
	unit := ""
	for _, c := range model.Compare(m, recs) {
		xk := xParam(c.Instance)
		if xk == "" {
			continue
		}
		x, err := c.Instance.Num(xk)
		if err != nil {
			continue
		}
		key := seriesKey(c.Instance, xk)
		id := c.Instance.Pattern + " " + ParamList(key)
		s, ok := by[id]
		if !ok {
			s = &plotSeries{key: key}
			by[id] = s
			order = append(order, id)
		}
		s.points = append(s.points, plotPoint{in: c.Instance, x: x, y: c.Measured, ci: ci[instanceKey(c.Instance)], predicted: c.Predicted})
		if unit == "" {
			unit = unitOf(recs, c.Instance.Pattern)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: none of the %d records is a pattern %s predicts along a message size (%s)", ErrNothingToPlot, len(recs), m.Kind(), strings.Join(m.Patterns(), ", "))
	}
	series := make([]*plotSeries, len(order))
	for i, id := range order {
		series[i] = by[id]
	}
	sort.SliceStable(series, func(i, j int) bool { return lessParams(series[i].key, series[j].key) })
	common, within := splitParams(series)
	for _, s := range series {
		s.label = seriesLabel(s.key, within[s.pattern()])
		if len(within) > 1 {
			s.label = strings.TrimSpace(s.pattern() + " " + s.label)
		}
	}

	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.points {
			if pt.x > 0 {
				minX = math.Min(minX, pt.x)
			}
			maxX = math.Max(maxX, pt.x)
			minY, maxY = math.Min(minY, pt.y), math.Max(maxY, pt.y)
		}
	}
	logX, logY := spansDecade(minX, maxX), spansDecade(minY, maxY)

	p := plot.New()
	lines := []string{title, machineLine(recs)}
	if c := commonLine(common); c != "" {
		lines = append(lines, c)
	}
	p.Title.TextStyle.Font.Size = vg.Points(11)
	yUnit, yName := unitSeconds, "time (median, 95% CI)"
	if unit == results.UnitBytesPerSec {
		yUnit, yName = unitRate, "bandwidth (median, 95% CI; MB = 10^6 B)"
	}
	p.Y.Label.Text = yName
	p.X.Label.Text = "message size"
	if xParam(series[0].points[0].in) == "l" {
		p.X.Label.Text = "packet size l"
	}
	setAxis(&p.X, unitBytes, logX)
	setAxis(&p.Y, yUnit, logY)
	p.Add(plotter.NewGrid())
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	styles := seriesStyles(series, within)
	dropped := 0
	for i, s := range series {
		var pts errPoints
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, pt := range s.points {
			if (logX && pt.x <= 0) || (logY && pt.y <= 0) {
				dropped++
				continue
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: pt.x, Y: pt.y})
			pts.YErrors = append(pts.YErrors, ciErrors(pt.y, pt.ci))
			lo, hi = math.Min(lo, pt.x), math.Max(hi, pt.x)
		}
		if len(pts.XYs) == 0 {
			continue
		}
		st := styles[i]
		glyph := draw.GlyphStyle{Color: st.color, Shape: st.shape, Radius: vg.Points(3)}
		thumb, err := addMeasured(p, pts, glyph)
		if err != nil {
			return nil, err
		}
		thumbs := []plot.Thumbnailer{thumb}
		var line plot.Thumbnailer
		if curve := modelCurve(m, s, lo, hi, logX, logY); len(curve) > 1 {
			ln, err := plotter.NewLine(curve)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			ln.LineStyle.Color = st.color
			ln.LineStyle.Width = vg.Points(1.3)
			ln.LineStyle.Dashes = st.dashes
			p.Add(ln)
			thumbs = append(thumbs, ln)
			line = ln
		}
		switch {
		case len(series) == 1:
			p.Legend.Add("measured median, 95% CI", thumb)
			if line != nil {
				p.Legend.Add(m.Kind()+" model", line)
			}
		case i < maxLegendSeries:
			p.Legend.Add(s.label, thumbs...)
		}
	}
	if n := len(series) - maxLegendSeries; n > 0 {
		p.Legend.Add(fmt.Sprintf("(%d more series not named)", n))
	}
	if len(series) > 1 {
		p.Legend.Add("points: measured median, 95% CI")
		p.Legend.Add("lines: " + m.Kind() + " model")
	}
	if dropped > 0 {
		lines = append(lines, fmt.Sprintf("(%d points of size 0 are not on the log axis)", dropped))
	}
	p.Title.Text = strings.Join(nonEmpty(lines), "\n")
	return render(p, format)
}

// unitOf is the unit of the bench's records.
func unitOf(recs []results.Record, bench string) string {
	for _, r := range recs {
		if r.Bench == bench {
			return r.Unit
		}
	}
	return ""
}

// seriesKey is the parameters that name a point's series: the pattern's
// other than the x parameter and the repetition counts, a delay told as
// zero or not, and the rank count.
func seriesKey(in model.Instance, xk string) results.Params {
	key := results.Params{}
	for k, v := range in.Params {
		switch {
		case k == xk || repetitionParams[k]:
		case k == "delay_s":
			if f, ok := toFloat(v); ok && f == 0 {
				key["d"] = "0"
			} else {
				key["d"] = "PRTT(1,0,s)"
			}
		default:
			key[k] = v
		}
	}
	if in.Pattern != "" {
		key["pattern"] = in.Pattern
	}
	if in.Ranks > 0 {
		key["ranks"] = in.Ranks
	}
	return key
}

// pattern is the series' pattern.
func (s *plotSeries) pattern() string { return fmt.Sprint(s.key["pattern"]) }

// splitParams returns, per pattern, the parameters all its series share
// (with their value) and the names of those that tell them apart.
func splitParams(series []*plotSeries) (common map[string]results.Params, within map[string][]string) {
	common, within = map[string]results.Params{}, map[string][]string{}
	groups := map[string][]*plotSeries{}
	for _, s := range series {
		groups[s.pattern()] = append(groups[s.pattern()], s)
	}
	for pat, g := range groups {
		names := map[string]bool{}
		for _, s := range g {
			for k := range s.key {
				if k != "pattern" {
					names[k] = true
				}
			}
		}
		common[pat] = results.Params{}
		within[pat] = []string{}
		for _, k := range sortedKeys(names) {
			first, same := g[0].key[k], true
			for _, s := range g[1:] {
				if v, ok := s.key[k]; !ok || fmt.Sprint(v) != fmt.Sprint(first) {
					same = false
					break
				}
			}
			if _, ok := g[0].key[k]; same && ok {
				common[pat][k] = first
			} else {
				within[pat] = append(within[pat], k)
			}
		}
	}
	return common, within
}

// commonLine names what every point of a pattern shares: "every point:
// ranks=2; kkaccess: op=read" (the parameters all patterns share first).
func commonLine(common map[string]results.Params) string {
	pats := sortedKeys(common)
	shared := results.Params{}
	if len(pats) > 0 {
		for k, v := range common[pats[0]] {
			all := true
			for _, p := range pats[1:] {
				if w, ok := common[p][k]; !ok || fmt.Sprint(w) != fmt.Sprint(v) {
					all = false
				}
			}
			if all {
				shared[k] = v
			}
		}
	}
	var parts []string
	if len(shared) > 0 {
		parts = append(parts, seriesLabel(shared, sortedKeys(shared)))
	}
	for _, p := range pats {
		own := results.Params{}
		for k, v := range common[p] {
			if _, ok := shared[k]; !ok {
				own[k] = v
			}
		}
		if len(own) > 0 {
			parts = append(parts, p+": "+seriesLabel(own, sortedKeys(own)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "every point: " + strings.Join(parts, "; ")
}

// seriesLabel names a series by the parameters in names: the pattern by
// its name, sizes in bytes as 1 KiB, the others k=v.
func seriesLabel(key results.Params, names []string) string {
	var parts []string
	for _, k := range names {
		v, ok := key[k]
		if !ok {
			continue
		}
		switch f, num := toFloat(v); {
		case k == "pattern":
			parts = append(parts, fmt.Sprint(v))
		case num && (k == "l" || strings.HasSuffix(k, "bytes")):
			parts = append(parts, k+"="+humanBytes(f))
		default:
			parts = append(parts, k+"="+paramValue(k, v))
		}
	}
	return strings.Join(parts, " ")
}

// lessParams orders series by their parameters, numbers as numbers
// (k=2 before k=10).
func lessParams(a, b results.Params) bool {
	for _, k := range unionKeys(a, b) {
		av, aok := a[k]
		bv, bok := b[k]
		if aok != bok {
			return !aok
		}
		af, anum := toFloat(av)
		bf, bnum := toFloat(bv)
		if anum && bnum {
			if af != bf {
				return af < bf
			}
			continue
		}
		if as, bs := fmt.Sprint(av), fmt.Sprint(bv); as != bs {
			return as < bs
		}
	}
	return false
}

// seriesStyle is how one series is drawn.
type seriesStyle struct {
	color  color.Color
	shape  draw.GlyphDrawer
	dashes []vg.Length
}

// seriesStyles gives a series its colour by its pattern and the value of
// the first parameter that tells the pattern's series apart, and its line
// pattern and glyph by the others, so that the trilinear model's k x r
// curves read as a colour per k and a line pattern per r.
func seriesStyles(series []*plotSeries, within map[string][]string) []seriesStyle {
	out := make([]seriesStyle, len(series))
	colours, rests := map[string]int{}, map[string]int{}
	for i, s := range series {
		names := within[s.pattern()]
		ck, rk := s.pattern(), ""
		if len(names) > 0 {
			ck += " " + seriesLabel(s.key, names[:1])
			rk = seriesLabel(s.key, names[1:])
		}
		if _, ok := colours[ck]; !ok {
			colours[ck] = len(colours)
		}
		if _, ok := rests[rk]; !ok {
			rests[rk] = len(rests)
		}
		c, r := colours[ck], rests[rk]
		// Colours repeat after twelve; the glyph then tells them apart.
		out[i] = seriesStyle{plotColor(c), plotutil.Shape(r + c/len(palette)), dashPatterns[r%len(dashPatterns)]}
	}
	return out
}

// modelCurve is the model's line for a series: evaluated along x in [lo,
// hi] (200 points, geometric on a log axis) when its prediction does not
// depend on what the series merges (repetition counts), else the
// predictions at the measured points joined (prtt's delay, which differs
// from size to size).
func modelCurve(m model.Model, s *plotSeries, lo, hi float64, logX, logY bool) plotter.XYs {
	base := s.points[0].in
	xk := xParam(base)
	smooth := true
	for _, pt := range s.points {
		in := withParam(base, xk, pt.x)
		if y, err := m.Predict(in); err != nil || !(math.Abs(y-pt.predicted) <= 1e-9*math.Abs(pt.predicted)) {
			smooth = false
			break
		}
	}
	var out plotter.XYs
	keep := func(x, y float64) {
		if !math.IsNaN(y) && !math.IsInf(y, 0) && (!logY || y > 0) && (!logX || x > 0) {
			out = append(out, plotter.XY{X: x, Y: y})
		}
	}
	if !smooth {
		pts := slices.Clone(s.points)
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		for _, pt := range pts {
			keep(pt.x, pt.predicted)
		}
		return out
	}
	const n = 200
	for i := 0; i <= n; i++ {
		f := float64(i) / n
		x := lo + f*(hi-lo)
		if logX {
			x = lo * math.Pow(hi/lo, f)
		}
		if y, err := m.Predict(withParam(base, xk, x)); err == nil {
			keep(x, y)
		}
	}
	return out
}

// withParam is in with parameter k set to v (a copy).
func withParam(in model.Instance, k string, v float64) model.Instance {
	out := in
	out.Params = results.Params{}
	for key, val := range in.Params {
		out.Params[key] = val
	}
	out.Params[k] = v
	return out
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
