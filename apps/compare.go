package apps

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

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
	// Stat is the statistic Measured holds (one of Stats; RankAnnotated
	// sets it, Rank leaves it empty for the median).
	Stat string
}

// TotalColumn names the sum of the communication phases.
const TotalColumn = "total"

// The statistics an application and its calibration are judged on
// (ByStat): the median of the repetitions, the fastest repetition, or the
// lower envelope (EnvelopeKey).
const (
	StatMedian   = "median"
	StatFastest  = "fastest"
	StatEnvelope = "envelope"
)

// Stats lists the accepted statistics, for usage messages.
var Stats = []string{StatMedian, StatFastest, StatEnvelope}

// MeasuredStatKey is the Derived key under which Ranking.Annotate stores
// the measured time judged on statistic stat ("" is the median):
// "measured_median_s", "measured_fastest_s" or "measured_envelope_s".
func MeasuredStatKey(stat string) string {
	if stat == "" {
		stat = StatMedian
	}
	return "measured_" + stat + "_s"
}

// ByStat returns recs with their median replaced by statistic stat (one
// of Stats; StatMedian returns recs unchanged): StatFastest as Fastest;
// StatEnvelope replaces an application phase's median by its lower
// envelope (Derived EnvelopeKey) and a pattern record's by its fastest
// repetition, which is one entry of the pattern, so the envelope of a
// calibration point is its fastest repetition. An application record
// without an envelope (written before it existed) keeps its fastest
// repetition.
func ByStat(recs []results.Record, stat string) ([]results.Record, error) {
	switch stat {
	case StatMedian, "":
		return recs, nil
	case StatFastest:
		return Fastest(recs), nil
	case StatEnvelope:
		out := Fastest(recs)
		for i := range out {
			r := &out[i]
			if e, ok := r.Derived[EnvelopeKey]; ok && r.Bench == Bench && r.N > 0 {
				r.Median, r.CI95 = e, [2]float64{e, e}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("statistic %q: accepted values are %s", stat, strings.Join(Stats, ", "))
}

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
		// A communication phase with an empty workload moves nothing on
		// this grid (a row of one rank): there is nothing to predict.
		if rec.Params["kind"] != KindComm || len(rec.Workload) == 0 {
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

// RankAnnotated ranks models on an application run's records, judged on
// statistic stat (see ByStat), and stores every prediction in the records
// (Annotate), so that they carry what the ranking shows.
func RankAnnotated(recs []results.Record, models []NamedModel, stat string) (*Ranking, error) {
	ranked, err := ByStat(recs, stat)
	if err != nil {
		return nil, err
	}
	r, err := Rank(ranked, models)
	if err != nil {
		return nil, err
	}
	r.Stat = stat
	r.Annotate(recs)
	return r, nil
}

// Annotate stores every model's prediction of each communication phase in
// that phase's record (Derived "measured_s", the statistic the ranking
// was built on, again under "measured_STAT_s" with STAT its name (r.Stat,
// median when empty), as the value alone cannot say it when the envelope
// is the fastest repetition, "pred_NAME_s", seconds, and "pred_err_NAME",
// (T_pred - T_meas)/T_meas with T_meas the statistic the ranking was built
// on, the median unless the records went through ByStat; NAME is the model's name with characters other
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
			rec.Derived["measured_s"] = r.Measured[j]
			rec.Derived[MeasuredStatKey(r.Stat)] = r.Measured[j]
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
// least one of the workload's phases (the error lists why each failed),
// or when a model predicts a time no record can hold (beyond
// results.MaxRecordSeconds). Callers use it to refuse a model set before
// running anything.
func Predictable(work map[string][]results.WorkItem, models []NamedModel) error {
	var why []string
	some := false
	for _, nm := range models {
		for _, n := range slices.Sorted(maps.Keys(work)) {
			if len(work[n]) == 0 {
				continue
			}
			v, err := model.PredictWorkload(nm.Model, work[n])
			switch {
			case err != nil:
				why = append(why, fmt.Sprintf("%s, phase %s: %v", nm.Name, n, err))
			case !(v >= 0 && v <= results.MaxRecordSeconds):
				// No record could hold it: the models were fitted to
				// records of no machine (a hand-edited calibration).
				return fmt.Errorf("%s predicts %.3g s for phase %s, beyond %g s (about 32 years): the records it was fitted to measure no machine", nm.Name, v, n, results.MaxRecordSeconds)
			default:
				some = true
			}
		}
	}
	if some {
		return nil
	}
	if len(why) == 0 {
		return errors.New("no model given, or no communication phase to predict")
	}
	return fmt.Errorf("no model predicts any communication phase: %s", strings.Join(why, "; "))
}

// WriteNotes prints what the table cannot show: the workload view each
// model predicted from, and why a model has no prediction of a phase.
func (r *Ranking) WriteNotes(w io.Writer) {
	byModel := map[string][]string{}
	var order []string
	var why []string
	for i, name := range r.Models {
		for j, p := range r.Pred[i] {
			last := j == len(r.Pred[i])-1
			switch {
			case p.Err != nil && !last:
				why = append(why, fmt.Sprintf("%s cannot predict %s: %v", name, r.Columns[j], firstLine(p.Err)))
			case p.Err == nil && !last && p.View != "" && !slices.Contains(byModel[name], p.View):
				if byModel[name] == nil {
					order = append(order, name)
				}
				byModel[name] = append(byModel[name], p.View)
			}
		}
	}
	if len(order) > 0 {
		var parts []string
		for _, m := range order {
			parts = append(parts, m+" "+strings.Join(byModel[m], "+"))
		}
		fmt.Fprintf(w, "workload view used: %s (aggregate = paper 003's operations, p2p = their rounds of single messages, contention = paper 001's patterns)\n", strings.Join(parts, ", "))
	}
	for _, s := range why {
		fmt.Fprintln(w, s)
	}
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

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
