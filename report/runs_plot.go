package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/commcost/commcost/results"
)

// sizeKey is the parameter a bench's points run along: "bytes" or the
// packet size "l" when every point has it, else "".
func sizeKey(points []PointComparison) string {
	for _, k := range []string{"bytes", "l"} {
		all := len(points) > 0
		for _, p := range points {
			if _, ok := toFloat(p.Params[k]); !ok {
				all = false
				break
			}
		}
		if all {
			return k
		}
	}
	return ""
}

// PlotRatios draws a bench's ratios to the base, one series per later
// input and combination of the parameters other than the message size and
// the repetition counts:
// x is the message (or packet) size on a log axis when the points have
// one, else the point's row number in the table; y is the ratio of
// medians, with a dashed line at 1. Filled markers are significant
// differences (p <= Alpha), hollow ones are not; points one side lacks
// are not drawn. format is an image format of gonum/plot ("png", "svg",
// "pdf", ...).
func (rc *RunsComparison) PlotRatios(bc BenchComparison, format string) ([]byte, error) {
	xk := sizeKey(bc.Points)
	type series struct {
		label     string
		input     int
		sig, nsig plotter.XYs
	}
	var order []string
	by := map[string]*series{}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for row, p := range bc.Points {
		x := float64(row + 1)
		// One series per configuration: the repetition counts
		// (repetitionParams) of a point do not make it another curve.
		rest := results.Params{}
		for k, v := range p.Params {
			if k != xk && !repetitionParams[k] {
				rest[k] = v
			}
		}
		if xk != "" {
			x, _ = toFloat(p.Params[xk])
			if x <= 0 {
				continue // not on a log axis
			}
		}
		for i, d := range p.Deltas {
			if !d.Compared || math.IsNaN(d.Ratio) || math.IsInf(d.Ratio, 0) {
				continue
			}
			label := rc.Labels[i+1] + "/" + rc.Labels[0]
			if xk != "" {
				label = strings.Join(nonEmpty([]string{label, ParamList(rest), fmt.Sprintf("ranks=%d", p.Ranks)}), " ")
			}
			s, ok := by[label]
			if !ok {
				s = &series{label: label, input: i}
				by[label] = s
				order = append(order, label)
			}
			pt := plotter.XY{X: x, Y: d.Ratio}
			if d.Significant {
				s.sig = append(s.sig, pt)
			} else {
				s.nsig = append(s.nsig, pt)
			}
			minX, maxX = math.Min(minX, x), math.Max(maxX, x)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: no point of %s is in the base and another input", ErrNothingToPlot, bc.Bench)
	}
	sort.Strings(order)

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: median / %s's median (filled: significant, p <= %v)", bc.Bench, rc.Labels[0], rc.Alpha)
	p.Y.Label.Text = "ratio of medians"
	switch xk {
	case "bytes":
		p.X.Label.Text = "message size"
		setAxis(&p.X, unitBytes, spansDecade(minX, maxX))
	case "l":
		p.X.Label.Text = "packet size l"
		setAxis(&p.X, unitBytes, spansDecade(minX, maxX))
	default:
		p.X.Label.Text = "point (row of the table)"
	}
	// Ratios are multiplicative: on a log axis 1/2 and 2 are as far from
	// 1, when they span enough to matter.
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, s := range by {
		for _, pt := range append(append(plotter.XYs(nil), s.sig...), s.nsig...) {
			minY, maxY = math.Min(minY, pt.Y), math.Max(maxY, pt.Y)
		}
	}
	minY, maxY = math.Min(minY, 1), math.Max(maxY, 1)
	// The legend's room multiplies the span by up to its square
	// (legendRoom): a span whose square overflows (ratios of 1e-309 from
	// medians far apart) stays on a linear axis, where gonum's log scale
	// would panic on the overflowed bound.
	span := maxY / minY
	setAxis(&p.Y, unitPlain, minY > 0 && span > 3 && !math.IsInf(span*span, 0))
	one, err := plotter.NewLine(plotter.XYs{{X: minX, Y: 1}, {X: maxX, Y: 1}})
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	one.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.LineStyle.Color = color.Gray{Y: 120}
	p.Add(one)
	p.Legend.Top = true
	p.Legend.Left = true
	for i, label := range order {
		s := by[label]
		col := plotColor(i)
		var glyphs []plot.Thumbnailer
		var line *plotter.Line
		all := lineThrough(append(append(plotter.XYs(nil), s.sig...), s.nsig...))
		if len(all) > 1 {
			ln, err := plotter.NewLine(all)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			ln.LineStyle.Color = col
			ln.LineStyle.Width = vg.Points(0.8)
			// Colours repeat after twelve series; the line pattern then
			// tells them apart.
			ln.LineStyle.Dashes = dashPatterns[(i/len(palette))%len(dashPatterns)]
			p.Add(ln)
			line = ln
		}
		if line != nil {
			glyphs = append(glyphs, line)
		}
		for _, part := range []struct {
			pts   plotter.XYs
			shape draw.GlyphDrawer
		}{{s.sig, draw.CircleGlyph{}}, {s.nsig, draw.RingGlyph{}}} {
			if len(part.pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(part.pts)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			sc.GlyphStyle.Color = col
			sc.GlyphStyle.Shape = part.shape
			sc.GlyphStyle.Radius = vg.Points(3)
			p.Add(sc)
			glyphs = append(glyphs, sc)
		}
		if i < maxLegendSeries {
			p.Legend.Add(label, glyphs...)
		}
	}
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return render(p, format)
}

// RatioPlotName is the file name of a bench's ratio plot:
// compare-BENCH.EXT, with the unit added when the bench has tables in
// two units.
//
// Bench and unit come from the records, which are untrusted: the name is
// a Slug, one path element of safe characters, so "../x" cannot place the
// file outside the plot directory.
func (rc *RunsComparison) RatioPlotName(bc BenchComparison, ext string) string {
	name := "compare-" + bc.Bench
	if rc.unitsOf(bc.Bench) > 1 {
		name += "-" + strings.NewReplacer("/", "_per_", " ", "_").Replace(bc.Unit)
	}
	return Slug(name) + ext
}

// lineThrough is the line of a series' points: sorted by x, one vertex
// per x at the median of the points there (two points of one size, at
// different repetition counts, are both drawn but not joined by a
// vertical stroke).
func lineThrough(pts plotter.XYs) plotter.XYs {
	by := map[float64][]float64{}
	for _, p := range pts {
		by[p.X] = append(by[p.X], p.Y)
	}
	var out plotter.XYs
	for x, ys := range by {
		out = append(out, plotter.XY{X: x, Y: medianOf(ys)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].X < out[b].X })
	return out
}
