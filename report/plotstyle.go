package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/commcost/commcost/results"
)

// The look every plot of package report shares: axes in the units people
// read (8 B, 1 KiB, 1 MiB; ns, us, ms; MB/s), log axes where the data span
// decades, the legend in a column beside the data, and a title that says
// what was measured on which machine.

// axisUnit is what an axis's values are, which decides its tick labels.
type axisUnit int

const (
	unitPlain   axisUnit = iota // a number (a count, a ratio)
	unitBytes                   // a size in bytes, labelled 8 B, 1 KiB, 1 MiB
	unitSeconds                 // a time in seconds, labelled 100 ns, 1 us, 2 ms
	unitRate                    // bytes per second, labelled 500 MB/s, 10 GB/s
)

// setAxis gives ax the scale and the tick labels of unit; log makes it
// logarithmic.
func setAxis(ax *plot.Axis, unit axisUnit, log bool) {
	if log {
		ax.Scale = plot.LogScale{}
	}
	ax.Tick.Marker = unitTicks{unit: unit, log: log}
}

// spansDecade reports whether positive values from lo to hi deserve a log
// axis: they span more than a factor of ten.
func spansDecade(lo, hi float64) bool { return lo > 0 && hi > 10*lo }

// humanBytes prints a size: 8 B, 512 B, 1 KiB, 1.5 KiB, 64 KiB, 1 MiB.
func humanBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + units[i]
}

// timeScale is the unit a time of magnitude v reads best in.
func timeScale(v float64) (float64, string) {
	v = math.Abs(v)
	switch {
	case v == 0 || v >= 1:
		return 1, "s"
	case v >= 1e-3:
		return 1e3, "ms"
	case v >= 1e-6:
		return 1e6, "us"
	}
	return 1e9, "ns"
}

// humanTime prints a time in seconds in the unit that suits it: 250 ns,
// 1.5 us, 20 ms, 2 s.
func humanTime(v float64) string {
	s, u := timeScale(v)
	return strconv.FormatFloat(v*s, 'g', 3, 64) + " " + u
}

// rateScale is the decimal unit a bandwidth of magnitude v (B/s) reads
// best in, as bandwidth tables print it (MB = 10^6 bytes).
func rateScale(v float64) (float64, string) {
	v = math.Abs(v)
	switch {
	case v >= 1e9:
		return 1e-9, "GB/s"
	case v >= 1e6:
		return 1e-6, "MB/s"
	case v >= 1e3:
		return 1e-3, "kB/s"
	}
	return 1, "B/s"
}

// humanRate prints a bandwidth in bytes per second: 512 MB/s, 10 GB/s.
func humanRate(v float64) string {
	s, u := rateScale(v)
	return strconv.FormatFloat(v*s, 'g', 3, 64) + " " + u
}

// unitTicks places and labels the ticks of an axis of one unit. On a log
// axis sizes tick at powers of two, other units at 1, 2 and 5 times the
// powers of ten (every decade only when the axis spans more than three);
// on a linear axis sizes tick at multiples of a power of two and others
// where gonum puts them, labelled in one unit for the whole axis.
type unitTicks struct {
	unit axisUnit
	log  bool
}

func (t unitTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	switch {
	case t.unit == unitBytes && t.log && min > 0:
		return bytesTicks(min, max)
	case t.unit == unitBytes:
		return linearBytesTicks(min, max)
	case t.log && min > 0 && max > min:
		ts = logTicks{}.Ticks(min, max)
	default:
		ts = plot.DefaultTicks{}.Ticks(min, max)
	}
	// A linear axis reads in one unit, the one of its largest value.
	scale := math.Max(math.Abs(min), math.Abs(max))
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		v := ts[i].Value
		if math.Abs(v) < 1e-12*scale {
			v = 0
		}
		ref := v
		if !t.log {
			ref = scale
		}
		ts[i].Label = unitLabel(t.unit, v, ref)
	}
	return ts
}

// unitLabel prints v in unit, scaled as a value of magnitude ref would be.
func unitLabel(unit axisUnit, v, ref float64) string {
	switch unit {
	case unitSeconds:
		if v == 0 {
			return "0"
		}
		s, u := timeScale(ref)
		return strconv.FormatFloat(v*s, 'g', 3, 64) + " " + u
	case unitRate:
		if v == 0 {
			return "0"
		}
		s, u := rateScale(ref)
		return strconv.FormatFloat(v*s, 'g', 3, 64) + " " + u
	case unitBytes:
		return humanBytes(v)
	}
	return tickLabel(v)
}

// linearBytesTicks ticks a linear size axis at multiples of the power of
// two that gives three to eight labels (32 KiB, 64 KiB, 96 KiB, ...).
func linearBytesTicks(min, max float64) []plot.Tick {
	if !(max > min) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	step := math.Exp2(math.Floor(math.Log2((max - min) / 4)))
	for (max-min)/step > 8 {
		step *= 2
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max*(1+1e-9); v += step {
		ts = append(ts, plot.Tick{Value: v, Label: humanBytes(v)})
		if mid := v + step/2; mid <= max {
			ts = append(ts, plot.Tick{Value: mid})
		}
	}
	return ts
}

// render draws a plot at 8 x 6 inches of plot area in an image format of
// gonum/plot (PlotFormat), with its legend, if it has one, in a column to
// the right of the plot, never on the data.
func render(p *plot.Plot, format string) ([]byte, error) {
	return renderSized(p, 8*vg.Inch, 6*vg.Inch, format)
}

// renderSized draws a plot whose plot area is width x height, the legend
// (the plot's own entries, moved) beside it; the image is as much wider
// as the legend needs.
func renderSized(p *plot.Plot, width, height vg.Length, format string) ([]byte, error) {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	leg.Top, leg.Left = true, true
	legW := vg.Length(0)
	pad := vg.Points(10)
	if r := leg.Rectangle(draw.Canvas{}); r.Max.X > r.Min.X {
		legW = r.Max.X - r.Min.X + 2*pad
	}
	c, err := draw.NewFormattedCanvas(width+legW, height, format)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legW, 0, 0))
	if legW > 0 {
		// Level with the top of the data: below the title.
		top := vg.Length(0)
		if p.Title.Text != "" {
			top = p.Title.TextStyle.Rectangle(p.Title.Text).Max.Y - p.Title.TextStyle.Rectangle(p.Title.Text).Min.Y + p.Title.Padding + pad
		}
		leg.Draw(draw.Crop(dc, width+pad, -pad, 0, -top))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	if format == "png" {
		return MarkPNG(buf.Bytes()), nil
	}
	return buf.Bytes(), nil
}

// machineLine says where records were measured, for a plot's title:
// "vm: Open MPI v4.1.4, 2 ranks on 1 host, YYYY-MM-DD" (the hosts, MPI
// library, largest rank count and first date of the records; "local
// backend" when they are goroutine ranks, which time nothing real).
func machineLine(recs []results.Record) string {
	if len(recs) == 0 {
		return ""
	}
	m := recs[0].Meta
	ranks, date := 0, m.Date
	for _, r := range recs {
		ranks = max(ranks, r.Ranks)
		if d := r.Meta.Date; d != "" && (date == "" || d < date) {
			date = d
		}
	}
	host := "unknown host"
	if len(m.Hosts) > 0 {
		host = strings.SplitN(m.Hosts[0], ".", 2)[0]
		if len(m.Hosts) > 1 {
			host += fmt.Sprintf(" and %d more", len(m.Hosts)-1)
		}
	}
	var parts []string
	if lib := shortLibrary(m.MPILibrary); lib != "" {
		parts = append(parts, lib)
	}
	hosts := max(len(m.Hosts), 1)
	parts = append(parts, fmt.Sprintf("%d ranks on %d %s", ranks, hosts, plural(hosts, "host", "hosts")))
	if m.Backend == "local" {
		parts = append(parts, "local backend (goroutine ranks)")
	}
	if len(date) >= 10 {
		parts = append(parts, date[:10])
	}
	return host + ": " + strings.Join(parts, ", ")
}

// shortLibrary is the MPI library's name and version: "Open MPI v4.1.4"
// of "Open MPI v4.1.4, package: Debian OpenMPI, ...", "MPICH 4.0.2" of a
// multi-line MPICH version string.
func shortLibrary(lib string) string {
	lib = firstLine(lib)
	if i := strings.IndexByte(lib, ','); i >= 0 {
		lib = lib[:i]
	}
	lib = strings.TrimSpace(lib)
	if f := strings.Fields(lib); len(f) >= 3 && f[0] == "MPICH" && f[1] == "Version:" {
		lib = "MPICH " + f[2]
	}
	return lib
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// errPoints are points with asymmetric vertical errors (plotter.XYer and
// plotter.YErrorer): a median and its 95% CI.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addMeasured draws points with their 95% CI as error bars (caps in the
// points' colour) and returns what the legend shows for them.
func addMeasured(p *plot.Plot, pts errPoints, style draw.GlyphStyle) (plot.Thumbnailer, error) {
	sc, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	sc.GlyphStyle = style
	if slices.ContainsFunc(pts.YErrors, func(e struct{ Low, High float64 }) bool { return e.Low > 0 || e.High > 0 }) {
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		bars.LineStyle.Color = style.Color
		bars.LineStyle.Width = vg.Points(0.8)
		bars.CapWidth = vg.Points(4)
		p.Add(bars)
	}
	p.Add(sc)
	return sc, nil
}

// ciErrors is the distance of a record's 95% CI from its median, below
// and above (zero where the CI is missing or does not hold the median;
// below, also where it reaches zero, which a log axis cannot show).
func ciErrors(median float64, ci [2]float64) struct{ Low, High float64 } {
	lo, hi := median-ci[0], ci[1]-median
	if !(ci[0] > 0) || !(lo >= 0) || math.IsInf(lo, 0) {
		lo = 0
	}
	if !(hi >= 0) || math.IsInf(hi, 0) {
		hi = 0
	}
	return struct{ Low, High float64 }{lo, hi}
}

// palette is the colours of series, told apart in print and by most
// colour-blind readers (Tableau's ten, then two darker ones).
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255},  // blue
	color.RGBA{255, 127, 14, 255},  // orange
	color.RGBA{44, 160, 44, 255},   // green
	color.RGBA{214, 39, 40, 255},   // red
	color.RGBA{148, 103, 189, 255}, // purple
	color.RGBA{140, 86, 75, 255},   // brown
	color.RGBA{227, 119, 194, 255}, // pink
	color.RGBA{127, 127, 127, 255}, // grey
	color.RGBA{188, 189, 34, 255},  // olive
	color.RGBA{23, 190, 207, 255},  // cyan
	color.RGBA{0, 0, 0, 255},       // black
	color.RGBA{0, 80, 0, 255},      // dark green
}

// plotColor is the i-th series colour; colours repeat after twelve.
func plotColor(i int) color.Color { return palette[((i%len(palette))+len(palette))%len(palette)] }
