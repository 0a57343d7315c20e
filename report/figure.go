package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figSeries is one curve of a figure.
type figSeries struct {
	label string
	pts   plotter.XYs
	// style: points joined by a line (default), points only, or a line
	// only (a model's curve).
	pointsOnly, lineOnly bool
	// dash is the line pattern: 0 solid, 1 dashed, 2 dotted, 3 dash-dot.
	dash int
	// colour is the index of the series' colour; series that belong
	// together (measured and predicted of one case) share it.
	colour int
	// ci is the 95% CI of the point at x, drawn as an error bar, where
	// the point is one record's median.
	ci map[float64][2]float64
}

// figure is a plot from records: a caption naming the paper figure it
// reproduces, axes with units, and its curves.
type figure struct {
	// file is the PNG's name in plots/.
	file    string
	caption string
	// machine says where the records were measured (machineLine), a
	// line of the title under the caption.
	machine string
	xLabel  string
	yLabel  string
	// yTime labels the y axis as times (seconds: 100 ns, 1 us, 2 ms),
	// yRate as bandwidths (bytes per second: 500 MB/s, 10 GB/s).
	yTime, yRate bool
	// logX, logY force log axes; otherwise an axis is logarithmic when its
	// positive values span more than a decade.
	logX, logY, linX, linY bool
	// xBytes labels the x axis in sizes (8 B, 1 KiB) at powers of two.
	xBytes bool
	series []figSeries
	// refY draws a dashed horizontal line at this y (a ratio of 1), when
	// set.
	refY *float64
	// hist, when set, makes the figure a histogram of these times (s),
	// with the mean and mean ± 5% marked; series are then ignored.
	hist []float64
}

// dashPatterns are the line patterns of figSeries.dash.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// timeUnit picks the unit in which times up to max seconds read best.
func timeUnit(max float64) (float64, string) {
	switch {
	case max >= 1:
		return 1, "s"
	case max >= 1e-3:
		return 1e3, "ms"
	}
	return 1e6, "us"
}

// render draws the figure as a PNG: the caption as the title (wrapped in
// lines), axes with units, the legend in a corner (at most
// maxLegendSeries entries).
func (f *figure) render() ([]byte, error) {
	if f.hist != nil {
		return f.renderHist()
	}
	if len(f.series) == 0 {
		return nil, ErrNothingToPlot
	}
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range f.series {
		for _, p := range s.pts {
			minX, maxX = math.Min(minX, p.X), math.Max(maxX, p.X)
			minY, maxY = math.Min(minY, p.Y), math.Max(maxY, p.Y)
		}
	}
	if math.IsInf(minX, 0) {
		return nil, ErrNothingToPlot
	}
	logX := f.logX || (!f.linX && spansDecade(minX, maxX))
	logY := f.logY || (!f.linY && spansDecade(minY, maxY))

	p := plot.New()
	p.Title.Text = f.title()
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = f.xLabel
	p.Y.Label.Text = f.yLabel
	xUnit, yUnit := unitPlain, unitPlain
	if f.xBytes {
		xUnit = unitBytes
	}
	if f.yTime {
		yUnit = unitSeconds
	}
	if f.yRate {
		yUnit = unitRate
	}
	setAxis(&p.X, xUnit, logX)
	setAxis(&p.Y, yUnit, logY)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	if f.refY != nil {
		ln, err := plotter.NewLine(plotter.XYs{{X: minX, Y: *f.refY}, {X: maxX, Y: *f.refY}})
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		ln.LineStyle.Color = color.Gray{Y: 140}
		ln.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ln)
	}
	legend := 0
	for i, s := range f.series {
		var pts plotter.XYs
		for _, pt := range s.pts {
			y := pt.Y
			if (logX && pt.X <= 0) || (logY && y <= 0) || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: pt.X, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		col := plotColor(s.colour)
		var thumbs []plot.Thumbnailer
		if !s.pointsOnly && len(pts) > 1 {
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			ln.LineStyle.Color = col
			ln.LineStyle.Width = vg.Points(1.2)
			ln.LineStyle.Dashes = dashPatterns[s.dash%len(dashPatterns)]
			p.Add(ln)
			thumbs = append(thumbs, ln)
		}
		if !s.lineOnly {
			if len(s.ci) > 0 {
				var ep errPoints
				for _, pt := range pts {
					ep.XYs = append(ep.XYs, pt)
					ci, ok := s.ci[pt.X]
					if !ok {
						ci = [2]float64{pt.Y, pt.Y}
					}
					ep.YErrors = append(ep.YErrors, ciErrors(pt.Y, ci))
				}
				bars, err := plotter.NewYErrorBars(ep)
				if err != nil {
					return nil, fmt.Errorf("plot: %w", err)
				}
				bars.LineStyle.Color = col
				bars.LineStyle.Width = vg.Points(0.8)
				bars.CapWidth = vg.Points(4)
				p.Add(bars)
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			sc.GlyphStyle.Color = col
			sc.GlyphStyle.Shape = plotutil.Shape(s.colour % len(palette))
			if s.dash > 0 {
				sc.GlyphStyle.Shape = draw.RingGlyph{}
			}
			sc.GlyphStyle.Radius = vg.Points(2.5)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if i < maxLegendSeries && s.label != "" {
			p.Legend.Add(s.label, thumbs...)
			legend++
		}
	}
	return pngOf(p)
}

// pngOf renders a plot as an 8 x 6 inch PNG.
func pngOf(p *plot.Plot) ([]byte, error) { return render(p, "png") }

// histBins is the number of histogram bins: Sturges' rule with at least
// 10 and at most 60.
func histBins(n int) int {
	b := int(math.Ceil(math.Log2(float64(n)))) + 1
	return min(max(b*2, 10), 60)
}

// renderHist draws a histogram of f.hist (seconds, shown in the unit that
// suits them) over the bulk of the values (the count of values outside is
// in the legend), with vertical lines at the mean and at mean ± 5%.
func (f *figure) renderHist() ([]byte, error) {
	if len(f.hist) == 0 {
		return nil, ErrNothingToPlot
	}
	sorted := append([]float64(nil), f.hist...)
	sort.Float64s(sorted)
	// The range shown: the 0.5th to 99.5th percentile, and at most three
	// medians, so a few interrupted repetitions do not squeeze the bulk
	// into one bin (how many are left out is in the legend).
	lo := sorted[int(0.005*float64(len(sorted)-1))]
	hi := sorted[int(math.Ceil(0.995*float64(len(sorted)-1)))]
	hi = math.Min(hi, 3*sorted[len(sorted)/2])
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(len(sorted))
	scale, unit := timeUnit(hi)
	var vals plotter.Values
	outside := 0
	for _, v := range sorted {
		if v < lo || v > hi {
			outside++
			continue
		}
		vals = append(vals, v*scale)
	}
	p := plot.New()
	p.Title.Text = f.title()
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = f.xLabel + " (" + unit + ")"
	p.Y.Label.Text = f.yLabel
	h, err := plotter.NewHist(vals, histBins(len(vals)))
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	h.FillColor = plotColor(1)
	p.Add(h)
	p.Y.Tick.Marker = relabel{plot.DefaultTicks{}}
	maxY := 0.0
	for _, b := range h.Bins {
		maxY = math.Max(maxY, b.Weight)
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	for i, x := range []float64{mean, 0.95 * mean, 1.05 * mean} {
		ln, err := plotter.NewLine(plotter.XYs{{X: x * scale, Y: 0}, {X: x * scale, Y: maxY}})
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		ln.LineStyle.Width = vg.Points(1.2)
		if i == 0 {
			ln.LineStyle.Color = color.Black
			p.Legend.Add("mean", ln)
		} else {
			ln.LineStyle.Color = color.Gray{Y: 100}
			ln.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			if i == 1 {
				p.Legend.Add("mean ± 5%", ln)
			}
		}
		p.Add(ln)
	}
	if outside > 0 {
		p.Legend.Add(fmt.Sprintf("%d of %d values outside the range shown", outside, len(sorted)))
	}
	return pngOf(p)
}

// title is the caption wrapped, then the machine.
func (f *figure) title() string {
	t := wrapCaption(f.caption, 95)
	if f.machine != "" {
		t += "\n" + f.machine
	}
	return t
}

// wrapCaption breaks a caption into lines of at most width characters at
// spaces, for a plot title.
func wrapCaption(s string, width int) string {
	var out, line []byte
	for _, word := range bytes.Fields([]byte(s)) {
		if len(line) > 0 && len(line)+1+len(word) > width {
			out = append(append(out, line...), '\n')
			line = line[:0]
		}
		if len(line) > 0 {
			line = append(line, ' ')
		}
		line = append(line, word...)
	}
	return string(append(out, line...))
}

// numLabel prints a parameter value for a legend: sizes as 8, 1K; other
// numbers shortest.
func numLabel(k string, v float64) string {
	return paramValue(k, v)
}

// fmtFloat prints a number in its shortest form.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// logTicks labels a log axis: every decade when it spans more than three,
// else 1, 2 and 5 times each power of ten (a log axis over one or two
// decades would otherwise show one or two labels), with unlabelled minor
// ticks at the other integer multiples.
type logTicks struct {
	// bytes labels ticks as sizes (1K, 64K, 1M) at powers of two.
	bytes bool
}

func (lt logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	if lt.bytes {
		return bytesTicks(min, max)
	}
	mults := []float64{1, 2, 5}
	if max/min > 1e3 {
		mults = []float64{1}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		p := math.Pow(10, e)
		for m := 1.0; m <= 9; m++ {
			v := m * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(mults, m) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// relabel prints tick labels in their shortest form (250, not 250.00).
type relabel struct{ plot.Ticker }

func (r relabel) Ticks(min, max float64) []plot.Tick {
	ts := r.Ticker.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 4, 64)
		}
	}
	return ts
}

// bytesTicks puts ticks at powers of two, labelled as sizes (8 B, 1 KiB,
// 1 MiB), every second or fourth one labelled when there are many.
func bytesTicks(min, max float64) []plot.Tick {
	lo, hi := int(math.Floor(math.Log2(min))), int(math.Ceil(math.Log2(max)))
	step := 1
	for (hi-lo)/step > 8 {
		step *= 2
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		v := math.Ldexp(1, e)
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		t := plot.Tick{Value: v}
		if e%step == 0 {
			t.Label = humanBytes(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// tickLabel prints a tick value: whole numbers up to 10^5 in full (1000,
// not 1e+03), others with three significant digits.
func tickLabel(v float64) string {
	if v >= 1 && v < 1e5 && v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
