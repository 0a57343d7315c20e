package optsplit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/commcost/commcost/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotFigure13 draws the paper's Figure 13 from an Optimize result on rank
// 0: the measured medians with their 95% CIs and the model curve
// T(k, D/k, 1) against k on a log2 axis, with the optimum k0 marked. The
// file type follows path's extension (.png, .svg, .pdf, ...).
func PlotFigure13(path string, res *OptimizeResult) error {
	points := res.Points
	if len(points) == 0 || res.Model == nil || res.Split == nil {
		return errors.New("no measured points to draw")
	}
	D := res.Split.DataBytes
	p := plot.New()
	p.Title.Text = fmt.Sprintf("commcost optimize: D = %.0f bytes, r = 1; k0 = %.3g, l0 = %.1f bytes", D, res.Split.K0, res.Split.L0)
	p.X.Label.Text = "send hot spot k (packets of D/k bytes)"
	p.Y.Label.Text = "time of the k-k-access (us)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = log2Ticks{}
	p.Legend.Top = true

	// Packets are whole, k >= 1: a k0 below 1 is in the title, not on the
	// axis.
	k0 := res.Split.K0
	kLo, kHi := float64(points[0].K), float64(points[len(points)-1].K)
	if k0 >= 1 {
		kLo, kHi = math.Min(kLo, k0), math.Max(kHi, k0)
	}
	lo, hi := kLo/1.5, kHi*1.5
	p.X.Min, p.X.Max = lo, hi

	const us = 1e-6
	var meas errPoints
	for _, pt := range points {
		s := pt.Summary
		meas.XYs = append(meas.XYs, plotter.XY{X: float64(pt.K), Y: s.Median / us})
		meas.YErrors = append(meas.YErrors, struct{ Low, High float64 }{(s.Median - s.CI95[0]) / us, (s.CI95[1] - s.Median) / us})
	}
	sc, err := plotter.NewScatter(meas.XYs)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = plotutil.Color(0)
	sc.GlyphStyle.Radius = vg.Points(3)
	bars, err := plotter.NewYErrorBars(meas)
	if err != nil {
		return err
	}
	bars.LineStyle.Color = plotutil.Color(0)

	const n = 200
	var curve plotter.XYs
	for i := 0; i <= n; i++ {
		k := lo * math.Pow(hi/lo, float64(i)/n)
		if k < 1 || k > D {
			continue
		}
		curve = append(curve, plotter.XY{X: k, Y: res.Model.Time(k, D/k, 1) / us})
	}
	ln, err := plotter.NewLine(curve)
	if err != nil {
		return err
	}
	ln.LineStyle.Color = plotutil.Color(1)
	ln.LineStyle.Width = vg.Points(1.2)

	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, xy := range append(slices.Clone(curve), meas.XYs...) {
		ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
	}
	p.Add(plotter.NewGrid(), ln, bars, sc)
	p.Legend.Add("measured median, 95% CI", sc)
	p.Legend.Add("model T(k, D/k, 1)", ln)
	if k0 >= 1 {
		opt, err := plotter.NewLine(plotter.XYs{{X: k0, Y: ymin}, {X: k0, Y: ymax}})
		if err != nil {
			return err
		}
		opt.LineStyle.Color = plotutil.Color(2)
		opt.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(opt)
		p.Legend.Add(fmt.Sprintf("k0 = %.3g", k0), opt)
	}
	// Headroom for the legend in the top corner.
	p.Y.Max += 0.15 * (p.Y.Max - p.Y.Min)
	return report.SavePlot(p, path)
}

// errPoints are points with asymmetric vertical errors (plotter.XYer and
// plotter.YErrorer).
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// log2Ticks labels the powers of two in range (major) with the integers
// between them as minor ticks where there are few.
type log2Ticks struct{}

func (log2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log2(lo)); e <= math.Ceil(math.Log2(hi)); e++ {
		v := math.Exp2(e)
		if v >= lo && v <= hi {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		}
	}
	if len(ts) < 2 {
		// Less than an octave: label both ends.
		ts = append(ts, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}, plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)})
	}
	return ts
}
