package dsmexp

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// panel is one graph of a figure: a value per record, one line per
// strategy.
type panel struct {
	yLabel string
	value  func(results.Record) (float64, bool)
	time   bool // a time: its label says when the backend is not a network
	noHand bool // ratios to hand: hand's own line (all 1) is left out
}

// figSpec is one figure of paper 004 drawn from records.
type figSpec struct {
	file, paperFig, what string
	bench                string
	// xParam is the parameter along the x axis; "" means the mesh (x =
	// processors).
	xParam, xLabel string
	// prefer is the slice the paper drew: the mesh for figures over a
	// parameter, the parameter value for figures over the mesh. Without
	// records there, the slice with the most points is drawn.
	prefer any
	// sliceOf, for a figure over the mesh, names a record's slice when it
	// is not a parameter (Fig. 11: the bodies per processor, N / P), and
	// sliceCaption formats it for the caption.
	sliceOf      func(results.Record) (string, bool)
	sliceCaption string
	match        func(results.Record) bool
	panels       []panel
}

func derivedValue(key string) func(results.Record) (float64, bool) {
	return func(r results.Record) (float64, bool) { v, ok := r.Derived[key]; return v, ok }
}

func counterValue(key string, scale float64) func(results.Record) (float64, bool) {
	return func(r results.Record) (float64, bool) { v, ok := r.Counters[key]; return v / scale, ok }
}

func medianValue(r results.Record) (float64, bool) { return r.Median, r.N > 0 }

func phaseIs(p string) func(results.Record) bool {
	return func(r results.Record) bool { return r.Params["phase"] == p }
}

var (
	congRatio = panel{yLabel: "congestion ratio (bytes / hand-optimised)", value: derivedValue(KeyCongestionRatio), noHand: true}
	timeRatio = panel{yLabel: "time ratio (median / hand-optimised)", value: derivedValue(KeyTimeRatio), time: true, noHand: true}
	congMsgs  = panel{yLabel: "congestion (1000 messages)", value: counterValue(KeyCongestionMessages, 1000)}
	medTime   = panel{yLabel: "time (s, median)", value: medianValue, time: true}
)

var figures = []figSpec{
	{file: "fig3_matsquare_blocks.png", paperFig: "Fig. 3", what: "matrix square, ratios to hand-optimised over the block size",
		bench: BenchMatSquare, xParam: "block_ints", xLabel: "block size m (4-byte integers)", prefer: "16x16", panels: []panel{congRatio, timeRatio}},
	{file: "fig4_matsquare_meshes.png", paperFig: "Fig. 4", what: "matrix square, ratios to hand-optimised over the mesh",
		bench: BenchMatSquare, xParam: "block_ints", prefer: 4096, panels: []panel{congRatio, timeRatio}},
	{file: "fig6_bitonic_keys.png", paperFig: "Fig. 6", what: "bitonic sorting, ratios to hand-optimised over the keys per processor",
		bench: BenchBitonic, xParam: "keys", xLabel: "keys per processor m", prefer: "16x16", panels: []panel{congRatio, timeRatio}},
	{file: "fig7_bitonic_meshes.png", paperFig: "Fig. 7", what: "bitonic sorting, ratios to hand-optimised over the mesh",
		bench: BenchBitonic, xParam: "keys", prefer: 4096, panels: []panel{congRatio, timeRatio}},
	{file: "fig8_barneshut_bodies.png", paperFig: "Fig. 8", what: "Barnes-Hut, measured steps, over the bodies",
		bench: BenchBarnesHut, xParam: "bodies", xLabel: "bodies N", prefer: "16x16", match: phaseIs(PhaseTotal), panels: []panel{congMsgs, medTime}},
	{file: "fig9_barneshut_treebuild.png", paperFig: "Fig. 9", what: "Barnes-Hut tree building (phase 1) over the bodies",
		bench: BenchBarnesHut, xParam: "bodies", xLabel: "bodies N", prefer: "16x16", match: phaseIs(PhaseLoad), panels: []panel{congMsgs, medTime}},
	{file: "fig10_barneshut_force.png", paperFig: "Fig. 10", what: "Barnes-Hut force computation (phase 4) over the bodies",
		bench: BenchBarnesHut, xParam: "bodies", xLabel: "bodies N", prefer: "16x16", match: phaseIs(PhaseForce),
		panels: []panel{congMsgs, medTime, {yLabel: "local computation (s, median)", value: derivedValue(KeyLocalComp), time: true}}},
	{file: "fig11_barneshut_procs.png", paperFig: "Fig. 11", what: "Barnes-Hut, measured steps, over the mesh",
		bench: BenchBarnesHut, match: phaseIs(PhaseTotal), sliceOf: bodiesPerRank, sliceCaption: "N = %s P", prefer: 200,
		panels: []panel{congMsgs, medTime}},
}

// WriteFigures draws every figure of paper 004 that recs hold at least two
// points of (one PNG per figure, into dir, created if missing) and returns
// the files written. The panels are the paper's: congestion and time
// ratios to the hand-optimised version (Figs. 3-4, 6-7) or absolute
// congestion in 1000 messages and time (Figs. 8-11); a figure's caption
// names the paper's figure, the mesh or parameter it was drawn at, and the
// backend (times of the local backend are not network measurements).
func WriteFigures(dir string, recs []results.Record) ([]string, error) {
	var written []string
	for _, f := range figures {
		series, slice, backend, ok := f.collect(recs)
		if !ok {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return written, err
		}
		path := filepath.Join(dir, f.file)
		if err := f.draw(path, series, slice, backend); err != nil {
			return written, fmt.Errorf("%s: %w", path, err)
		}
		written = append(written, path)
	}
	if len(written) == 0 {
		return nil, opts.Badf("--plot: no figure has two points in these records (figures run over the block size, keys or bodies on one mesh, or over at least two meshes)")
	}
	return written, nil
}

// point is one x value of one strategy.
type point struct {
	x   float64
	rec results.Record
}

// collect picks the records of the figure: the preferred slice or the one
// with the most x values. It reports false with fewer than two x values.
func (f figSpec) collect(recs []results.Record) (series map[string][]point, slice, backend string, ok bool) {
	bySlice := map[string]map[string][]point{} // slice -> strategy -> points
	xs := map[string]map[float64]bool{}
	for _, r := range recs {
		if r.Bench != f.bench || (f.match != nil && !f.match(r)) {
			continue
		}
		st, _ := r.Params["strategy"].(string)
		mesh, _ := r.Params["mesh"].(string)
		var key string
		var x float64
		if f.xLabel != "" { // over a parameter, one mesh per figure
			v, ok := toFloat(r.Params[f.xParam])
			if !ok {
				continue
			}
			key, x = mesh, v
		} else { // over the mesh: x is the processor count
			if f.sliceOf != nil {
				k, ok := f.sliceOf(r)
				if !ok {
					continue
				}
				key = k
			} else if f.xParam != "" {
				v, _ := toFloat(r.Params[f.xParam])
				key = strconv.FormatFloat(v, 'g', -1, 64)
			}
			x = float64(meshSize(mesh))
		}
		if bySlice[key] == nil {
			bySlice[key] = map[string][]point{}
			xs[key] = map[float64]bool{}
		}
		pts := bySlice[key][st]
		if i := slices.IndexFunc(pts, func(p point) bool { return p.x == x }); i >= 0 {
			pts[i].rec = r // a rerun replaces the point
		} else {
			pts = append(pts, point{x, r})
		}
		bySlice[key][st] = pts
		xs[key][x] = true
		backend = r.Meta.Backend
	}
	prefer := fmt.Sprint(f.prefer)
	if len(xs[prefer]) < 2 {
		prefer = ""
		for k, v := range xs {
			if len(v) > len(xs[prefer]) || len(v) == len(xs[prefer]) && k < prefer {
				prefer = k
			}
		}
	}
	if len(xs[prefer]) < 2 {
		return nil, "", "", false
	}
	for _, pts := range bySlice[prefer] {
		slices.SortFunc(pts, func(a, b point) int { return int(math.Copysign(1, a.x-b.x)) })
	}
	return bySlice[prefer], prefer, backend, true
}

func (f figSpec) draw(path string, series map[string][]point, slice, backend string) error {
	strategies := paperOrder(sortedKeys(series))
	var row []*plot.Plot
	for _, pn := range f.panels {
		p := plot.New()
		p.Y.Label.Text = pn.yLabel
		if pn.time && backend != "native" {
			p.Title.Text = "times on the " + backend + " backend are not network measurements"
		}
		p.X.Label.Text = f.xLabel
		var xvals []float64
		lines, ymax := 0, 0.0
		for _, st := range strategies {
			if pn.noHand && st == Hand {
				continue
			}
			i := slices.Index(canonical, st)
			if i < 0 {
				i = len(canonical) + slices.Index(strategies, st)
			}
			var pts plotter.XYs
			for _, pt := range series[st] {
				if v, ok := pn.value(pt.rec); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					pts = append(pts, plotter.XY{X: pt.x, Y: v})
					ymax = max(ymax, v)
					if !slices.Contains(xvals, pt.x) {
						xvals = append(xvals, pt.x)
					}
				}
			}
			if len(pts) == 0 {
				continue
			}
			ln, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			ln.Color = plotutil.Color(i)
			ln.Width = vg.Points(1.5)
			ln.Dashes = plotutil.Dashes(i / 7)
			sc.Color = plotutil.Color(i)
			sc.Shape = plotutil.Shape(i)
			p.Add(ln, sc)
			p.Legend.Add(st, ln, sc)
			lines++
		}
		if lines == 0 {
			continue
		}
		slices.Sort(xvals)
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = valueTicks{xs: xvals, mesh: f.xLabel == ""}
		if f.xLabel == "" {
			p.X.Label.Text = "mesh (processors P = rows x cols)"
		}
		// Headroom above the data for the legend (top left).
		p.Y.Min, p.Y.Max = 0, ymax*(1.08+0.075*float64(lines))
		p.Y.Tick.Marker = niceTicks{}
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
		row = append(row, p)
	}
	if len(row) == 0 {
		return errors.New("no values to draw")
	}
	on := "mesh " + slice
	if f.xLabel == "" {
		on = f.xParam + " = " + slice
		if f.sliceCaption != "" {
			on = fmt.Sprintf(f.sliceCaption, slice)
		}
	}
	caption := fmt.Sprintf("Paper 004, %s: %s (%s; %s backend)", f.paperFig, f.what, on, backend)
	const panelW, h, capH = 5 * vg.Inch, 4.5 * vg.Inch, 0.45 * vg.Inch
	img := vgimg.New(panelW*vg.Length(len(row)), h+capH)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 13), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	dc.FillText(sty, vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y - capH/2}, caption)
	body := draw.Crop(dc, 0, 0, 0, -capH)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(12), PadY: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadBottom: vg.Points(6)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, body)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	// Rendered in memory and written whole (report.WriteFile: temporary
	// file, rename), so a full disk or a killed run leaves no truncated
	// figure under the final name.
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return report.WriteFile(path, report.MarkPNG(buf.Bytes()))
}

// CheckFigureFiles refuses, before anything is measured or written, a
// figure's file name in dir taken by something other than a figure
// commcost drew (report.CheckOwnPlot): the user's file stays.
func CheckFigureFiles(dir string) error {
	for _, f := range figures {
		if err := report.CheckOwnPlot(filepath.Join(dir, f.file)); err != nil {
			return err
		}
	}
	return nil
}

// valueTicks puts a labelled tick at every x value of the data (block
// sizes, keys, bodies, or processor counts labelled as meshes).
type valueTicks struct {
	xs   []float64
	mesh bool
}

func (v valueTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, x := range v.xs {
		if x < lo || x > hi {
			continue
		}
		label := strconv.FormatFloat(x, 'g', -1, 64)
		if v.mesh {
			if s := int(math.Round(math.Sqrt(x))); s*s == int(x) {
				label = fmt.Sprintf("%dx%d", s, s)
			} else {
				label = "P=" + label
			}
		}
		out = append(out, plot.Tick{Value: x, Label: label})
	}
	return out
}

// paperOrder sorts strategy names as paper 004 lists them: hand, fixed
// home, then the access trees by degree; others after, by name. A
// strategy keeps its colour in every figure.
func paperOrder(names []string) []string {
	rank := func(n string) int {
		if i := slices.Index(canonical, n); i >= 0 {
			return i
		}
		return len(canonical)
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return out
}

// canonical is the order of the strategies in tables and legends: Hand,
// then the paper's (divalib.Evaluated).
var canonical = append([]string{Hand}, divalib.Evaluated()...)

// niceTicks labels about six ticks at multiples of 1, 2 or 5 times a
// power of ten (gonum's default labels only two on some ranges).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}}
	}
	// The 1-2-5 step whose label count is nearest six.
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	step, best := mag, math.Inf(1)
	for _, f := range []float64{1, 2, 5, 10} {
		if d := math.Abs((hi-lo)/(f*mag) - 6); d < best {
			step, best = f*mag, d
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
		// Four unlabelled minor ticks between labels.
		for k := 1; k < 5 && v+float64(k)*step/5 <= hi; k++ {
			out = append(out, plot.Tick{Value: v + float64(k)*step/5})
		}
	}
	return out
}

// bodiesPerRank is a Barnes-Hut record's N / P, the slice of paper 004's
// Fig. 11 (which holds it at 200 while P grows); records whose N is not a
// multiple of P belong to no such series.
func bodiesPerRank(r results.Record) (string, bool) {
	n, ok := toFloat(r.Params["bodies"])
	if !ok || r.Ranks < 1 || n != math.Trunc(n) || int(n)%r.Ranks != 0 {
		return "", false
	}
	return strconv.Itoa(int(n) / r.Ranks), true
}
