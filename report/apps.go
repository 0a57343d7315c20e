package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
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

// Applications (docs/ARCHITECTURE.md, contract 5): every communication phase's workload
// (results.WorkItem) in an application record is predicted by every model
// given (model.PredictWorkload), the prediction and its error
// (T_pred - T_meas)/T_meas (paper 000, section 6.5: signed, so over- and
// under-prediction show) go into the record's derived values, and the
// tables (every phase; paper 000's Table 2) and the plot are made from
// records alone, so runs on different stores (one mpirun each) make one
// Table 2 afterwards.

// Derived keys of an annotated record, for predictor NAME.
const (
	derivedPredPrefix = "pred_"     // pred_NAME_s: the predicted time, seconds
	derivedErrPrefix  = "pred_err_" // pred_err_NAME: (T_pred - T_meas)/T_meas
)

// Predictor is one column of predictions: models of one kind, tried in
// order for every workload item, so that a trilinear model fitted on reads
// and one fitted on writes predict a phase that reads and writes
// together.
type Predictor struct {
	Name    string // the models' kind; kind-2, kind-3 for further predictors of one kind
	Models  []model.Model
	Sources []string // where each model came from, for the report
	// OpFallback, when set, predicts a k-k-access item whose op none of
	// the models describes as an item of this op. A run whose sweep
	// measured reads only (suite) predicts its programs' writes as reads:
	// a write of l bytes moves the same bytes as a read (a request of
	// 16 + l bytes and a 16-byte acknowledgement, against a 16-byte
	// request and l bytes back). AnnotateApps says how many items were.
	OpFallback string
	ops        []string
}

// benchKKAccess is the bench of the k-k-access records (patterns.
// BenchKKAccess), which paper 000's applications' workloads consist of.
const benchKKAccess = "kkaccess"

// ErrNoKKAccess is returned for a model that predicts no k-k-access, which
// paper 000's applications need.
var ErrNoKKAccess = errors.New("the model predicts no k-k-access (kkaccess), which the applications' workloads consist of")

// kkOps lists the k-k-access operations m predicts.
func kkOps(m model.Model) []string {
	var ops []string
	for _, op := range []string{"read", "write"} {
		probe := []results.WorkItem{{Count: 1, Bench: benchKKAccess, Params: results.Params{"k": 1, "l": 1024, "r": 1, "op": op}}}
		if _, err := model.PredictWorkload(m, probe); !errors.Is(err, model.ErrUnsupportedPattern) {
			ops = append(ops, op)
		}
	}
	return ops
}

// NewPredictors groups models into predictors: a model joins the first
// predictor of its kind whose models do not yet predict the k-k-access
// operation it predicts (so read and write models pair up); otherwise it
// starts a new one. sources names each model's origin. With needKK, a
// model that predicts no k-k-access at all is an error wrapping
// ErrNoKKAccess.
func NewPredictors(models []model.Model, sources []string, needKK bool) ([]Predictor, error) {
	var out []Predictor
	for x, m := range models {
		ops := kkOps(m)
		if needKK && len(ops) == 0 {
			return nil, fmt.Errorf("%s (%s): %w", sources[x], m.Kind(), ErrNoKKAccess)
		}
		join := -1
		for i, pr := range out {
			if pr.Models[0].Kind() == m.Kind() && len(ops) > 0 && !slices.ContainsFunc(ops, func(op string) bool { return slices.Contains(pr.ops, op) }) {
				join = i
				break
			}
		}
		if join < 0 {
			name, same := m.Kind(), 0
			for _, pr := range out {
				if pr.Models[0].Kind() == m.Kind() {
					same++
				}
			}
			if same > 0 {
				name = fmt.Sprintf("%s-%d", name, same+1)
			}
			out = append(out, Predictor{Name: name})
			join = len(out) - 1
		}
		pr := &out[join]
		pr.Models = append(pr.Models, m)
		pr.Sources = append(pr.Sources, sources[x])
		pr.ops = append(pr.ops, ops...)
	}
	return out, nil
}

// Predict sums the workload's prediction, each item by the first of the
// predictor's models that describes it (model.PredictWorkload), or as an
// item of OpFallback when none does; an item none describes either way is
// an error wrapping model.ErrUnsupportedPattern.
func (pr Predictor) Predict(items []results.WorkItem) (float64, error) {
	v, _, err := pr.predict(items)
	return v, err
}

// predict is Predict, also counting the items predicted as OpFallback. A
// workload stated in several views (results.WorkItem.View) is predicted
// from the first view whose every item some model describes, as
// model.PredictWorkloadView does for one model.
func (pr Predictor) predict(items []results.WorkItem) (sum float64, fellBack int, err error) {
	names, byView := results.WorkViews(items)
	var errs []error
	for _, v := range names {
		s, n, err := pr.predictView(byView[v])
		if err == nil {
			return s, n, nil
		}
		if !errors.Is(err, model.ErrUnsupportedPattern) {
			return 0, 0, err
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return 0, 0, nil
	}
	return 0, 0, errors.Join(errs...)
}

// predictView predicts one view's items.
func (pr Predictor) predictView(items []results.WorkItem) (sum float64, fellBack int, err error) {
	one := func(it results.WorkItem) (float64, error) {
		var err error
		for _, m := range pr.Models {
			var v float64
			v, err = model.PredictItem(m, it)
			if !errors.Is(err, model.ErrUnsupportedPattern) {
				return v, err
			}
		}
		return 0, err
	}
	for i, it := range items {
		v, err := one(it)
		if errors.Is(err, model.ErrUnsupportedPattern) && pr.OpFallback != "" && it.Bench == benchKKAccess && it.Params["op"] != pr.OpFallback {
			alt := it
			alt.Params = results.Params{}
			for k, x := range it.Params {
				alt.Params[k] = x
			}
			alt.Params["op"] = pr.OpFallback
			if v, err = one(alt); err == nil {
				fellBack++
			}
		}
		if errors.Is(err, model.ErrUnsupportedPattern) {
			return 0, 0, fmt.Errorf("workload item %d (%s {%s}): no model of %s describes it: %w", i+1, it.Bench, results.ParamList(it.Params), pr.Name, err)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("workload item %d (%s {%s}): %w", i+1, it.Bench, results.ParamList(it.Params), err)
		}
		sum += v
	}
	return sum, fellBack, nil
}

// AnnotateApps predicts every communication phase record (bench "app", kind
// comm, with a workload) with every predictor and stores the predicted time
// and the error in its Derived values. A phase a predictor cannot predict
// is left without that prediction and reported in the returned notes, as
// are the items a predictor predicted as its OpFallback.
func AnnotateApps(recs []results.Record, preds []Predictor) []string {
	var notes []string
	fellBack := make([]int, len(preds))
	for i := range recs {
		r := &recs[i]
		if r.Bench != results.BenchApp || r.Params["kind"] != results.PhaseKindComm || len(r.Workload) == 0 {
			continue
		}
		for j, pr := range preds {
			v, n, err := pr.predict(r.Workload)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %s: %v", appLabel(*r), pr.Name, err))
				continue
			}
			fellBack[j] += n
			if r.Derived == nil {
				r.Derived = map[string]float64{}
			}
			r.Derived[derivedPredPrefix+pr.Name+"_s"] = v
			if r.Median > 0 {
				r.Derived[derivedErrPrefix+pr.Name] = (v - r.Median) / r.Median
			}
		}
	}
	for j, n := range fellBack {
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d workload items of an op its models were not fitted for predicted as %s", preds[j].Name, n, preds[j].OpFallback))
		}
	}
	return notes
}

// appAveraged are the parameters paper 000's Table 2 averages its errors over
// ("mean values over different packet sizes, input sizes, and send hot
// spots"), with the record's own bookkeeping; every other parameter (the
// matrix multiplication's sync) makes its own column.
var appAveraged = map[string]bool{"app": true, "phase": true, "kind": true, "store": true,
	"n": true, "k": true, "l": true, "parts": true, "density": true}

// appColumn is a Table 2 column: an application's phase and its variant.
func appColumn(r results.Record) string {
	label := fmt.Sprintf("%v %v", r.Params["app"], r.Params["phase"])
	var variant []string
	for _, k := range sortedKeys(r.Params) {
		if !appAveraged[k] {
			variant = append(variant, fmt.Sprintf("%s=%v", k, r.Params[k]))
		}
	}
	if len(variant) > 0 {
		label += " (" + strings.Join(variant, ", ") + ")"
	}
	return label
}

// appConfig names a record's averaged parameters (n, k, l, ...).
func appConfig(r results.Record) string {
	var parts []string
	for _, k := range sortedKeys(r.Params) {
		if appAveraged[k] && k != "app" && k != "phase" && k != "kind" && k != "store" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, r.Params[k]))
		}
	}
	return strings.Join(parts, " ")
}

func appStore(r results.Record) string {
	if s, ok := r.Params["store"].(string); ok {
		return s
	}
	return "mpi"
}

func appLabel(r results.Record) string {
	return fmt.Sprintf("%s %s [%s]", appStore(r), appColumn(r), appConfig(r))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appPredictors lists the predictors whose errors the records carry, in
// order of first appearance.
func appPredictors(recs []results.Record) []string {
	var names []string
	for _, r := range recs {
		for _, k := range sortedKeys(r.Derived) {
			if name, ok := strings.CutPrefix(k, derivedErrPrefix); ok && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// appCommPhases keeps the annotated-or-not communication phase records.
func appCommPhases(recs []results.Record) []results.Record {
	var out []results.Record
	for _, r := range recs {
		if r.Bench == results.BenchApp && r.Params["kind"] == results.PhaseKindComm && len(r.Workload) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// PhaseError is one phase's prediction error by one predictor.
type PhaseError struct {
	Record    results.Record
	Predicted float64 // seconds
	Err       float64 // (T_pred - T_meas)/T_meas
}

// AppErrors returns the annotated communication phases' errors for predictor
// name.
func AppErrors(recs []results.Record, name string) []PhaseError {
	var out []PhaseError
	for _, r := range appCommPhases(recs) {
		e, ok := r.Derived[derivedErrPrefix+name]
		if !ok {
			continue
		}
		out = append(out, PhaseError{Record: r, Predicted: r.Derived[derivedPredPrefix+name+"_s"], Err: e})
	}
	return out
}

// Table2 is paper 000's Table 2 for one predictor: rows are stores
// (networks), columns application phases, a cell the mean error
// (T_pred - T_meas)/T_meas over the configurations measured (sizes, k, l).
type Table2 struct {
	Predictor string
	Stores    []string
	Columns   []string
	Mean      [][]float64 // [store][column]; NaN where nothing was measured
	N         [][]int     // configurations averaged
}

// BuildTable2 builds one Table2 per predictor the records carry.
func BuildTable2(recs []results.Record) []Table2 {
	var out []Table2
	phases := appCommPhases(recs)
	for _, name := range appPredictors(recs) {
		t := Table2{Predictor: name}
		for _, r := range phases {
			if _, ok := r.Derived[derivedErrPrefix+name]; !ok {
				continue
			}
			if s := appStore(r); !slices.Contains(t.Stores, s) {
				t.Stores = append(t.Stores, s)
			}
			if c := appColumn(r); !slices.Contains(t.Columns, c) {
				t.Columns = append(t.Columns, c)
			}
		}
		t.Mean = make([][]float64, len(t.Stores))
		t.N = make([][]int, len(t.Stores))
		for i := range t.Stores {
			t.Mean[i] = make([]float64, len(t.Columns))
			t.N[i] = make([]int, len(t.Columns))
		}
		for _, r := range phases {
			e, ok := r.Derived[derivedErrPrefix+name]
			if !ok {
				continue
			}
			i, j := slices.Index(t.Stores, appStore(r)), slices.Index(t.Columns, appColumn(r))
			t.Mean[i][j] += e
			t.N[i][j]++
		}
		for i := range t.Mean {
			for j := range t.Mean[i] {
				if t.N[i][j] == 0 {
					t.Mean[i][j] = math.NaN()
				} else {
					t.Mean[i][j] /= float64(t.N[i][j])
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// fmtPhaseTime shows seconds with three significant digits in ns, us, ms or s.
func fmtPhaseTime(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 1e-6:
		return strconv.FormatFloat(v*1e9, 'g', 3, 64) + " ns"
	case a < 1e-3:
		return strconv.FormatFloat(v*1e6, 'g', 3, 64) + " us"
	case a < 1:
		return strconv.FormatFloat(v*1e3, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " s"
}

func fmtErr(e float64) string {
	if math.IsNaN(e) {
		return "-"
	}
	return strconv.FormatFloat(100*e, 'f', 1, 64) + "%"
}

// WriteApps writes the per-phase table (every communication phase
// measured: median, 95% CI, every predictor's prediction and error) and
// Table 2 for every predictor; markdown selects markdown tables.
func WriteApps(w io.Writer, recs []results.Record, markdown bool) error {
	phases := appCommPhases(recs)
	if len(phases) == 0 {
		_, err := fmt.Fprintln(w, "no communication phase measured")
		return err
	}
	names := appPredictors(recs)
	header := []string{"store", "phase", "config", "measured", "95% CI"}
	for _, n := range names {
		header = append(header, n, "error")
	}
	var rows [][]string
	for _, r := range phases {
		row := []string{appStore(r), appColumn(r), appConfig(r), fmtPhaseTime(r.Median), "[" + fmtPhaseTime(r.CI95[0]) + ", " + fmtPhaseTime(r.CI95[1]) + "]"}
		for _, n := range names {
			e, ok := r.Derived[derivedErrPrefix+n]
			if !ok {
				row = append(row, "-", "-")
				continue
			}
			row = append(row, fmtPhaseTime(r.Derived[derivedPredPrefix+n+"_s"]), fmtErr(e))
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w, "Communication phases: measured (median over repetitions of the slowest rank) against predicted; error = (T_pred - T_meas)/T_meas")
	if err := results.RenderCells(w, header, rows, markdown); err != nil {
		return err
	}
	for _, t := range BuildTable2(recs) {
		fmt.Fprintf(w, "\nTable 2 (paper 000, section 6.5) for %s: mean error over the configurations measured (count in brackets)\n", t.Predictor)
		header := append([]string{"store"}, t.Columns...)
		var rows [][]string
		for i, s := range t.Stores {
			row := []string{s}
			for j := range t.Columns {
				cell := fmtErr(t.Mean[i][j])
				if t.N[i][j] > 0 {
					cell += fmt.Sprintf(" (%d)", t.N[i][j])
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		if err := results.RenderCells(w, header, rows, markdown); err != nil {
			return err
		}
	}
	return nil
}

// PlotApps draws measured against predicted time, one point per
// communication phase and configuration, one series per predictor, on log
// axes with the line of perfect prediction, and returns the image in format
// (as Plot).
func PlotApps(recs []results.Record, format string) ([]byte, error) {
	names := appPredictors(recs)
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no predicted application phase", ErrNothingToPlot)
	}
	series := make([]predSeries, len(names))
	for i, n := range names {
		series[i].name = n
		for _, e := range AppErrors(recs, n) {
			series[i].pts = append(series[i].pts, plotter.XY{X: e.Record.Median, Y: e.Predicted})
			series[i].xerr = append(series[i].xerr, ciErrors(e.Record.Median, e.Record.CI95))
		}
	}
	return predictedVsMeasured(predPlot{
		title: "Applications' communication phases: predicted against measured (median, 95% CI)\n" + machineLine(recs),
		diag:  "predicted = measured",
		width: 7 * vg.Inch, height: 6 * vg.Inch, dash: vg.Points(4), gap: vg.Points(3),
		empty: fmt.Errorf("%w: no positive measured and predicted times", ErrNothingToPlot),
	}, series, format)
}

// WriteAppsPlot renders PlotApps in the format of path's extension and
// writes it to path whole (WriteFile).
func WriteAppsPlot(path string, recs []results.Record) error {
	return writeDrawn(path, func(format string) ([]byte, error) { return PlotApps(recs, format) })
}

// writeDrawn draws an image in the format of path's extension
// (PlotFormat) and writes it whole (WriteFile).
func writeDrawn(path string, draw func(format string) ([]byte, error)) error {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	img, err := draw(format)
	if err != nil {
		return err
	}
	return WriteFile(path, img)
}

// WriteAppsReport writes what 'commcost app' and 'app table' print after
// the records: one "note: " line per note (what a predictor could not
// predict, AnnotateApps; a run whose phase records are not all there,
// MissingPhases, which names them from phases), then WriteApps.
func WriteAppsReport(w io.Writer, recs []results.Record, notes []string, markdown bool, phases PhaseList) error {
	for _, n := range append(notes, MissingPhases(recs, phases)...) {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return WriteApps(w, recs, markdown)
}

// Repredict replaces the predictions application records carry (every
// derived value "pred_...") by those of preds (AnnotateApps) and returns
// AnnotateApps' notes, then one for each communication phase without a
// workload, which no model predicts and the tables leave out: the record
// check admits one only where a run states none (a grid row of one rank
// moves nothing; Barnes-Hut states no workload). Other derived values
// stay.
func Repredict(recs []results.Record, preds []Predictor) []string {
	for i := range recs {
		for k := range recs[i].Derived {
			if strings.HasPrefix(k, derivedPredPrefix) {
				delete(recs[i].Derived, k)
			}
		}
	}
	notes := AnnotateApps(recs, preds)
	for _, r := range recs {
		if r.Bench == results.BenchApp && r.Params["kind"] == results.PhaseKindComm && len(r.Workload) == 0 {
			notes = append(notes, fmt.Sprintf("%s on %d ranks: no workload (the run states no communication for this phase), so no model predicts it and the tables leave it out", appLabel(r), r.Ranks))
		}
	}
	return notes
}

// predSeries is one model's points of a predicted-against-measured plot:
// X measured, Y predicted, seconds.
type predSeries struct {
	name string
	pts  plotter.XYs
	// xerr, when set, is each point's 95% CI of the measurement.
	xerr []struct{ Low, High float64 }
}

// predPlot is the look of a predicted-against-measured plot.
type predPlot struct {
	title, diag   string // the title; the legend of the line of perfect prediction
	width, height vg.Length
	dash, gap     vg.Length // the diagonal's dash pattern
	empty         error     // returned when no point is positive on both axes
}

// predictedVsMeasured draws every series' points that are positive on
// both axes on log-log axes, one colour and glyph per series (series
// without such a point are left out but keep their colour), with the
// dashed line of perfect prediction, the axes 1.5 times wider than the
// points, and returns the image in format (as Plot).
func predictedVsMeasured(look predPlot, series []predSeries, format string) ([]byte, error) {
	p := plot.New()
	// About twelve characters of the title per inch of width.
	var lines []string
	for _, l := range strings.Split(look.title, "\n") {
		lines = append(lines, wrapCaption(l, int(12*look.width/vg.Inch)))
	}
	p.Title.Text = strings.Join(lines, "\n")
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "measured time"
	p.Y.Label.Text = "predicted time"
	setAxis(&p.X, unitSeconds, true)
	setAxis(&p.Y, unitSeconds, true)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		var xy xErrPoints
		for j, pt := range s.pts {
			if pt.X > 0 && pt.Y > 0 {
				xy.XYs = append(xy.XYs, pt)
				e := struct{ Low, High float64 }{}
				if j < len(s.xerr) {
					e = s.xerr[j]
				}
				xy.XErrors = append(xy.XErrors, e)
				lo = math.Min(lo, math.Min(pt.X-e.Low, pt.Y))
				hi = math.Max(hi, math.Max(pt.X+e.High, pt.Y))
			}
		}
		if len(xy.XYs) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy.XYs)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotColor(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(3)
		if len(s.xerr) > 0 {
			bars, err := plotter.NewXErrorBars(xy)
			if err != nil {
				return nil, err
			}
			bars.LineStyle.Color = plotColor(i)
			bars.LineStyle.Width = vg.Points(0.8)
			p.Add(bars)
		}
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	if math.IsInf(lo, 0) {
		return nil, look.empty
	}
	lo, hi = lo/1.5, hi*1.5
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle.Dashes = []vg.Length{look.dash, look.gap}
	diag.LineStyle.Color = color.Gray{Y: 90}
	p.Add(diag, plotter.NewGrid())
	p.Legend.Add(look.diag, diag)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	return renderSized(p, look.width, look.height, format)
}

// xErrPoints are points with horizontal errors (plotter.XYer and
// plotter.XErrorer): a measured median and its 95% CI.
type xErrPoints struct {
	plotter.XYs
	plotter.XErrors
}

// PhaseList names the phases a run of program app with record params
// times (apps.PhasesOf); nil, or nil for a program, when not known.
type PhaseList func(app string, params results.Params) []string

// MissingPhases names the runs whose records hold fewer distinct phases
// than the run timed (results.DerivedRunPhases; records written before it
// existed are not checked): a table of such a run leaves the missing
// phases out of every total. The missing phases are named from known, the
// program's phase list, when it tells them. A run is its program, store,
// parameters other than the phase, and rank count; repeated runs of one
// configuration count each phase once.
func MissingPhases(recs []results.Record, known PhaseList) []string {
	type run struct {
		label     string
		want, low int
		phases    []string
		listed    []string // the program's phases, nil if not known
	}
	var order []string
	runs := map[string]*run{}
	for _, r := range recs {
		want, ok := r.Derived[results.DerivedRunPhases]
		if r.Bench != results.BenchApp || !ok {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(r.Params) {
			if k != "app" && k != "phase" && k != "kind" && k != "store" {
				parts = append(parts, fmt.Sprintf("%s=%v", k, r.Params[k]))
			}
		}
		label := fmt.Sprintf("%s %v [%s] on %d ranks", appStore(r), r.Params["app"], strings.Join(parts, " "), r.Ranks)
		g := runs[label]
		if g == nil {
			g = &run{label: label, low: int(want)}
			if known != nil {
				g.listed = known(fmt.Sprint(r.Params["app"]), r.Params)
			}
			runs[label] = g
			order = append(order, label)
		}
		g.want, g.low = max(g.want, int(want)), min(g.low, int(want))
		if ph := fmt.Sprint(r.Params["phase"]); !slices.Contains(g.phases, ph) {
			g.phases = append(g.phases, ph)
		}
	}
	var notes []string
	for _, label := range order {
		g := runs[label]
		if g.low != g.want {
			notes = append(notes, fmt.Sprintf("%s: its records disagree on the run's phase count (%d to %d); the records were edited or joined from runs of different programs",
				g.label, g.low, g.want))
		}
		missing := g.want - len(g.phases)
		if missing <= 0 {
			continue
		}
		var absent []string
		for _, ph := range g.listed {
			if !slices.Contains(g.phases, ph) {
				absent = append(absent, ph)
			}
		}
		have := fmt.Sprintf("%s: records of %d of the run's %d phases (%s)", g.label, len(g.phases), g.want, strings.Join(g.phases, ", "))
		them := plural(missing, "it", "them")
		switch {
		case len(absent) == missing:
			notes = append(notes, fmt.Sprintf("%s; %s %s missing (no record names %s), and every total of this run leaves %[4]s out",
				have, strings.Join(absent, ", "), plural(missing, "is", "are"), them))
		case len(absent) > missing:
			notes = append(notes, fmt.Sprintf("%s; %d of %s %s missing (the records do not say which), and every total of this run leaves %s out",
				have, missing, strings.Join(absent, ", "), plural(missing, "is", "are"), them))
		default:
			notes = append(notes, fmt.Sprintf("%s; %d %s missing (the records do not name %s), and every total of this run leaves %[4]s out",
				have, missing, plural(missing, "phase is", "phases are"), them))
		}
	}
	return notes
}
