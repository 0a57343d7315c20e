package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// maxLegendSeries bounds the legend; more series are drawn unlabelled.
const maxLegendSeries = 12

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

type plotSeries struct {
	label string
	base  model.Instance // the series' instance with the x parameter to be set
	x, y  []float64
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
// extension, a missing directory, a directory in its place), before
// anything is measured or fitted; the error is the reason alone.
func CheckPlotPath(path string) error {
	if _, err := PlotFormat(path); err != nil {
		return errors.New("want a file name ending in .png, .svg, .pdf, .eps, .jpg or .tif")
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("directory %s does not exist", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
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
// (points) and the model's prediction along the message size (lines), one
// series per pattern and combination of the other parameters, and returns
// the image in format ("png", "svg", "pdf", "eps", "jpg" or "tif"). Axes
// are logarithmic where the values are positive and span more than a
// decade. Records of no pattern the model predicts along a size give an
// error wrapping ErrNothingToPlot.
func Plot(m model.Model, recs []results.Record, format, title string) ([]byte, error) {
	cmp := model.Compare(m, recs)
	by := map[string]*plotSeries{}
	var order []string
	for _, c := range cmp {
		xk := xParam(c.Instance)
		if xk == "" {
			continue
		}
		x, err := c.Instance.Num(xk)
		if err != nil {
			continue
		}
		rest := results.Params{}
		for k, v := range c.Instance.Params {
			if k != xk {
				rest[k] = v
			}
		}
		label := strings.TrimSpace(c.Instance.Pattern + " " + ParamList(rest))
		if c.Instance.Ranks > 0 {
			label += fmt.Sprintf(" ranks=%d", c.Instance.Ranks)
		}
		s, ok := by[label]
		if !ok {
			s = &plotSeries{label: label, base: model.Instance{Pattern: c.Instance.Pattern, Params: rest, Ranks: c.Instance.Ranks}}
			s.base.Params[xk] = 0.0
			by[label] = s
			order = append(order, label)
		}
		s.x = append(s.x, x)
		s.y = append(s.y, c.Measured)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: none of the %d records is a pattern %s predicts along a message size (%s)", ErrNothingToPlot, len(recs), m.Kind(), strings.Join(m.Patterns(), ", "))
	}
	sort.Strings(order)

	// Axis ranges over all series decide log or linear axes.
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range by {
		for i := range s.x {
			minX, maxX = math.Min(minX, s.x[i]), math.Max(maxX, s.x[i])
			minY, maxY = math.Min(minY, s.y[i]), math.Max(maxY, s.y[i])
		}
	}
	logX := maxX > 10*math.Max(minX, 0) && maxX > 0
	logY := minY > 0 && maxY > 10*minY

	p := plot.New()
	p.Title.Text = title
	unit := "time (s)"
	if _, ok := by[order[0]]; ok && by[order[0]].base.Pattern == "bandwidth" {
		unit = "bandwidth (B/s)"
	}
	p.Y.Label.Text = unit
	p.X.Label.Text = "message size (bytes)"
	if xParam(by[order[0]].base) == "l" {
		p.X.Label.Text = "packet size l (bytes)"
	}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = shortTicks{plot.LogTicks{Prec: -1}}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = shortTicks{plot.LogTicks{Prec: -1}}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	dropped := 0
	for i, label := range order {
		s := by[label]
		var pts plotter.XYs
		lo, hi := math.Inf(1), math.Inf(-1)
		for j := range s.x {
			if logX && s.x[j] <= 0 {
				dropped++
				continue
			}
			pts = append(pts, plotter.XY{X: s.x[j], Y: s.y[j]})
			lo, hi = math.Min(lo, s.x[j]), math.Max(hi, s.x[j])
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		// Colours repeat after 7 series; the glyph shape tells them apart.
		sc.GlyphStyle.Shape = plotutil.Shape(i / 7)
		sc.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(sc)
		curve := predictCurve(m, s, lo, hi, logX, logY)
		if len(curve) > 1 {
			ln, err := plotter.NewLine(curve)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			ln.LineStyle.Color = plotutil.Color(i)
			ln.LineStyle.Width = vg.Points(1.2)
			p.Add(ln)
			if i < maxLegendSeries {
				p.Legend.Add(label, sc, ln)
			}
		} else if i < maxLegendSeries {
			p.Legend.Add(label, sc)
		}
	}
	if dropped > 0 {
		p.Title.Text += fmt.Sprintf(" (%d zero-size points not on the log axis)", dropped)
	}
	return render(p, format)
}

// predictCurve evaluates the model along x in [lo, hi] (200 points,
// geometric on a log axis) for the series' other parameters. Points the
// model cannot predict or that are not positive on a log axis are skipped.
func predictCurve(m model.Model, s *plotSeries, lo, hi float64, logX, logY bool) plotter.XYs {
	const n = 200
	xk := xParam(s.base)
	var out plotter.XYs
	for i := 0; i <= n; i++ {
		f := float64(i) / n
		x := lo + f*(hi-lo)
		if logX {
			x = lo * math.Pow(hi/lo, f)
		}
		in := s.base
		in.Params = results.Params{}
		for k, v := range s.base.Params {
			in.Params[k] = v
		}
		in.Params[xk] = x
		y, err := m.Predict(in)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) || (logY && y <= 0) {
			continue
		}
		out = append(out, plotter.XY{X: x, Y: y})
	}
	return out
}

// shortTicks relabels ticks with three significant digits: decades such as
// 1e-05 computed as 9.999999999999999e-06 print as 1e-05.
type shortTicks struct{ plot.Ticker }

func (s shortTicks) Ticks(min, max float64) []plot.Tick {
	ts := s.Ticker.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 3, 64)
		}
	}
	return ts
}
