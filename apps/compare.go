package apps

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// NamedModel is a fitted model under the name a ranking shows (its kind,
// or the file it came from).
type NamedModel struct {
	Name  string
	Model model.Model
}

// Workloader is implemented by applications that can state their phases'
// communication before running (every application of this file's
// authors), so that a caller can refuse a model that predicts none of
// them before measuring anything.
type Workloader interface {
	Workload(p int) map[string][]results.WorkItem
}

// Prediction is one model's prediction of one column of a ranking.
type Prediction struct {
	Sec  float64
	View string // the workload view it predicted from
	// Err is why the model has no prediction (wrapping
	// model.ErrUnsupportedPattern when it does not describe the phase).
	Err error
}

// RelErr is (predicted - measured) / measured.
func (p Prediction) RelErr(measured float64) float64 { return (p.Sec - measured) / measured }

// Ranking compares every model's prediction of an application run's
// communication phases, and of their total, with the measured medians:
// which cost model is right for this program on this machine, and by how
// much.
type Ranking struct {
	App    string
	Params results.Params // the application's parameters (no phase or kind)
	Ranks  int
	// Columns are the communication phases in the order measured, then
	// "total" (the sum of their medians: the program's communication time).
	Columns  []string
	Measured []float64 // median per column
	CI       [][2]float64
	Models   []string
	// Pred[i][j] is model i's prediction of column j.
	Pred [][]Prediction
	// Best[j] is the model with the smallest |relative error| in column j,
	// -1 when no model predicts it.
	Best []int
	// Stat names the measured statistic for the table ("" = median; the
	// caller sets "fastest" for records that went through Fastest).
	Stat string
}

// TotalColumn names the sum of the communication phases.
const TotalColumn = "total"

// Fastest returns copies of recs whose median is replaced by the fastest
// repetition (Min; the CI collapses to it), for fitting and ranking on
// the fastest repetition instead of the median. On a link shaped to a
// fixed rate the fastest repetition is the closest to the wire time: a
// busy machine only ever adds time (the ground-truth checks of
// scripts/testcluster.sh use it the same way). Records without a sample
// count are kept as they are.
func Fastest(recs []results.Record) []results.Record {
	out := make([]results.Record, len(recs))
	for i, r := range recs {
		if r.N > 0 {
			r.Median = r.Min
			r.CI95 = [2]float64{r.Min, r.Min}
		}
		out[i] = r
	}
	return out
}

// Rank builds the ranking of models on the phase records of one
// application run (bench "app", as Measure returns them). Records of
// other benches are ignored; records of more than one run are an error.
func Rank(recs []results.Record, models []NamedModel) (*Ranking, error) {
	r := &Ranking{}
	var phases []results.Record
	for _, rec := range recs {
		if rec.Bench != Bench {
			continue
		}
		run := runKey(rec)
		if r.App == "" {
			r.App, _ = rec.Params["app"].(string)
			r.Params = runParams(rec.Params)
			r.Ranks = rec.Ranks
		} else if run != runKey(phases[0]) {
			return nil, fmt.Errorf("records of two application runs (%s and %s): rank one at a time", runKey(phases[0]), run)
		}
		phases = append(phases, rec)
	}
	if len(phases) == 0 {
		return nil, errors.New("no application records (bench \"app\")")
	}
	var work [][]results.WorkItem
	var total float64
	var lo, hi float64
	for _, rec := range phases {
		if rec.Params["kind"] != KindComm {
			continue
		}
		name, _ := rec.Params["phase"].(string)
		r.Columns = append(r.Columns, name)
		r.Measured = append(r.Measured, rec.Median)
		r.CI = append(r.CI, rec.CI95)
		work = append(work, rec.Workload)
		total += rec.Median
		lo += rec.CI95[0]
		hi += rec.CI95[1]
	}
	if len(r.Columns) == 0 {
		return nil, fmt.Errorf("%s: no communication phase among the records", r.App)
	}
	r.Columns = append(r.Columns, TotalColumn)
	r.Measured = append(r.Measured, total)
	r.CI = append(r.CI, [2]float64{lo, hi})
	for _, nm := range models {
		row := make([]Prediction, len(r.Columns))
		var sum float64
		var sumErr error
		for j, w := range work {
			v, view, err := model.PredictWorkloadView(nm.Model, w)
			row[j] = Prediction{Sec: v, View: view, Err: err}
			if err != nil && sumErr == nil {
				sumErr = fmt.Errorf("phase %s: %w", r.Columns[j], err)
			}
			sum += v
		}
		row[len(row)-1] = Prediction{Sec: sum, Err: sumErr, View: commonView(row[:len(row)-1])}
		r.Models = append(r.Models, nm.Name)
		r.Pred = append(r.Pred, row)
	}
	r.Best = make([]int, len(r.Columns))
	for j := range r.Columns {
		r.Best[j] = -1
		best := math.Inf(1)
		for i := range r.Models {
			p := r.Pred[i][j]
			if p.Err != nil || r.Measured[j] <= 0 {
				continue
			}
			if e := math.Abs(p.RelErr(r.Measured[j])); e < best {
				best, r.Best[j] = e, i
			}
		}
	}
	return r, nil
}

// commonView is the view every phase was predicted from, or "mixed".
func commonView(ps []Prediction) string {
	v := ""
	for i, p := range ps {
		if i == 0 {
			v = p.View
		} else if p.View != v {
			return "mixed"
		}
	}
	return v
}

// runKey identifies an application run: its parameters without the phase.
func runKey(rec results.Record) string {
	return fmt.Sprintf("%v ranks=%d", runParams(rec.Params), rec.Ranks)
}

func runParams(p results.Params) results.Params {
	out := results.Params{}
	for k, v := range p {
		if k != "phase" && k != "kind" {
			out[k] = v
		}
	}
	return out
}

// Annotate stores every model's prediction of each communication phase in
// that phase's record (Derived "pred_NAME_s", seconds, and "pred_err_NAME",
// (T_pred - T_meas)/T_meas with T_meas the statistic the ranking was built
// on, the median unless the records went through Fastest; NAME is the model's name with characters other
// than letters, digits, '-' and '_' replaced by '_'), so the records alone
// carry what the table shows. recs are the records Rank was built from.
func (r *Ranking) Annotate(recs []results.Record) {
	for k := range recs {
		rec := &recs[k]
		if rec.Bench != Bench || rec.Params["kind"] != KindComm {
			continue
		}
		j := slices.Index(r.Columns, rec.Params["phase"].(string))
		if j < 0 || j == len(r.Columns)-1 {
			continue
		}
		for i, name := range r.Models {
			pr := r.Pred[i][j]
			if pr.Err != nil {
				continue
			}
			if rec.Derived == nil {
				rec.Derived = map[string]float64{}
			}
			key := derivedName(name)
			rec.Derived["pred_"+key+"_s"] = pr.Sec
			if r.Measured[j] > 0 {
				rec.Derived["pred_err_"+key] = pr.RelErr(r.Measured[j])
			}
		}
	}
}

func derivedName(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, s)
}

// Predictable reports an error unless at least one model predicts at
// least one of the workload's phases; the error lists why each failed.
// Callers use it to refuse a model set before running anything.
func Predictable(work map[string][]results.WorkItem, models []NamedModel) error {
	var why []string
	names := make([]string, 0, len(work))
	for n := range work {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, nm := range models {
		for _, n := range names {
			if len(work[n]) == 0 {
				continue
			}
			if _, err := model.PredictWorkload(nm.Model, work[n]); err == nil {
				return nil
			} else {
				why = append(why, fmt.Sprintf("%s, phase %s: %v", nm.Name, n, err))
			}
		}
	}
	if len(why) == 0 {
		return errors.New("no model given, or no communication phase to predict")
	}
	return fmt.Errorf("no model predicts any communication phase: %s", strings.Join(why, "; "))
}

// Write prints the ranking: one row per model, one column per
// communication phase and the total; a cell is the predicted time and its
// error against the measured median, "*" marking the best model of the
// column; a model that does not describe a phase says so. The first row is
// the measurement. Views used are listed under the table.
func (r *Ranking) Write(w io.Writer, markdown bool) error {
	stat := "median"
	if r.Stat != "" {
		stat = r.Stat
	}
	header := append([]string{"model"}, r.Columns...)
	rows := [][]string{append([]string{"measured (" + stat + ")"}, mapF(r.Measured, results.FormatSeconds)...)}
	if r.Stat == "" {
		ci := []string{"95% CI"}
		for _, c := range r.CI {
			ci = append(ci, "["+results.FormatSeconds(c[0])+", "+results.FormatSeconds(c[1])+"]")
		}
		rows = append(rows, ci)
	}
	views := map[string]bool{}
	var notes []string
	for i, name := range r.Models {
		row := []string{name}
		for j, p := range r.Pred[i] {
			if p.Err != nil {
				if errors.Is(p.Err, model.ErrUnsupportedPattern) {
					row = append(row, "unsupported")
				} else {
					row = append(row, "invalid")
				}
				continue
			}
			cell := fmt.Sprintf("%s (%+.1f%%)", results.FormatSeconds(p.Sec), 100*p.RelErr(r.Measured[j]))
			if r.Best[j] == i {
				cell = "*" + cell
			}
			row = append(row, cell)
			if p.View != "" && p.View != "mixed" {
				views[name+": "+p.View] = true
			}
		}
		rows = append(rows, row)
		for j, p := range r.Pred[i] {
			if p.Err != nil && j < len(r.Pred[i])-1 {
				notes = append(notes, fmt.Sprintf("%s cannot predict %s: %v", name, r.Columns[j], firstLine(p.Err)))
			}
		}
	}
	fmt.Fprintf(w, "%s %s on %d ranks: communication per phase, predicted (error vs measured %s); * best per column\n",
		r.App, paramList(r.Params), r.Ranks, stat)
	if err := results.RenderCells(w, header, rows, markdown); err != nil {
		return err
	}
	var vs []string
	for v := range views {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	byModel := map[string][]string{}
	var order []string
	for _, v := range vs {
		m, view, _ := strings.Cut(v, ": ")
		if _, ok := byModel[m]; !ok {
			order = append(order, m)
		}
		byModel[m] = append(byModel[m], view)
	}
	if len(order) > 0 {
		var parts []string
		for _, m := range order {
			parts = append(parts, m+" "+strings.Join(byModel[m], "+"))
		}
		fmt.Fprintf(w, "workload view used: %s (aggregate = paper 003's operations, p2p = their rounds of single messages, contention = paper 001's patterns)\n", strings.Join(parts, ", "))
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}

// WriteClosedForms prints paper 003's closed forms of the application's
// total communication, evaluated with ts and tw (taken from the model
// named source), against the measured total.
func (r *Ranking) WriteClosedForms(w io.Writer, forms []ClosedForm, source string, markdown bool) error {
	meas := r.Measured[len(r.Measured)-1]
	var rows [][]string
	for _, f := range forms {
		name := f.Model
		if f.Derived {
			name += " (derived)"
		}
		rows = append(rows, []string{name, f.Topology, f.Formula, results.FormatSeconds(f.Sec), fmt.Sprintf("%+.1f%%", 100*(f.Sec-meas)/meas)})
	}
	fmt.Fprintf(w, "paper 003's closed forms of the total communication (t_s, t_w from %s; measured total %s)\n", source, results.FormatSeconds(meas))
	return results.RenderCells(w, []string{"model", "topology", "formula", "predicted", "error"}, rows, markdown)
}

// Plot draws measured (x) against predicted (y) time, one series per
// model, one point per communication phase and the total, with the line
// y = x; log-log. The format follows the file extension.
func (r *Ranking) Plot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s %s, %d ranks: predicted vs measured", r.App, paramList(r.Params), r.Ranks)
	p.X.Label.Text = "measured (s)"
	p.Y.Label.Text = "predicted (s)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range r.Measured {
		if m > 0 {
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
	}
	n := 0
	for i, name := range r.Models {
		var pts plotter.XYs
		for j, pr := range r.Pred[i] {
			if pr.Err == nil && pr.Sec > 0 && r.Measured[j] > 0 {
				pts = append(pts, plotter.XY{X: r.Measured[j], Y: pr.Sec})
				lo, hi = math.Min(lo, pr.Sec), math.Max(hi, pr.Sec)
			}
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = plotutil.Color(n)
		s.GlyphStyle.Shape = plotutil.Shape(n)
		s.GlyphStyle.Radius = vg.Points(3)
		p.Add(s)
		p.Legend.Add(name, s)
		n++
	}
	if math.IsInf(lo, 0) {
		return errors.New("nothing to plot: no positive measured time with a prediction")
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: lo / 1.5, Y: lo / 1.5}, {X: hi * 1.5, Y: hi * 1.5}})
	if err != nil {
		return err
	}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("measured = predicted", diag)
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(6*vg.Inch, 5*vg.Inch, path)
}

func mapF(v []float64, f func(float64) string) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

func paramList(p results.Params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		if k != "app" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
