package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/commcost/commcost/results"
)

// The message-passing applications' records (results.BenchApp, package
// apps: multigrid, cannon, checkerboard, gauss) carry every model's
// prediction of their communication phase in Derived, as commcost app
// annotates them (apps.Ranking.Annotate):
//
//	pred_NAME_s     the prediction by model NAME, seconds
//	pred_err_NAME   (T_pred - T_meas)/T_meas
//	measured_s      T_meas, the statistic the errors are against (the
//	                median, the fastest repetition or the envelope,
//	                results.DerivedEnvelope)
//	measured_STAT_s the same value under the statistic's name (STAT is
//	                median, fastest or envelope; apps.MeasuredStatKey),
//	                as the value alone cannot tell an envelope that is
//	                the fastest repetition from that repetition; records
//	                written before it are told by their values
//
// so the model-ranking tables below are rebuilt from records alone.
const (
	derivedMeasured = "measured_s"
	// AppTotal is the column of the summed communication phases.
	AppTotal = "total"
)

// namedStat is the statistic an annotated record names (measured_STAT_s),
// or "" when it names none.
func namedStat(derived map[string]float64) string {
	for _, stat := range []string{"median", "fastest", "envelope"} {
		if _, ok := derived["measured_"+stat+"_s"]; ok {
			return stat
		}
	}
	return ""
}

// messagePassing reports whether an application record is a phase of a
// program over mpi.Comm (its workload names no k-k-access; paper 000's
// programs over global variables consist of k-k-accesses, and
// writeRunApps reports those).
func messagePassing(r results.Record) bool {
	for _, it := range r.Workload {
		if it.Bench == benchKKAccess {
			return false
		}
	}
	return r.Params["kind"] != results.PhaseKindComm || len(r.Workload) > 0
}

// AppRanking is one application run's model ranking: which cost model
// predicts this program's communication on this machine, and by how much.
type AppRanking struct {
	App    string
	Params results.Params // the run's parameters (app, phase and kind left out)
	Ranks  int
	// Stat is "median", "fastest" (the fastest repetition) or "envelope"
	// (each entry into a phase at its fastest repetition, summed).
	Stat string
	// Columns are the communication phases, then AppTotal.
	Columns  []string
	Measured []float64
	Models   []string
	// Pred[i][j] is model i's prediction of column j, NaN when it has
	// none (the model does not describe that phase).
	Pred [][]float64
	// Best[j] is the model with the smallest |error| in column j, or -1.
	Best []int
	// machine is where the run was measured (machineLine), for the plot.
	machine string
}

// AppRankings builds the ranking of every application run among recs (a
// run is the application's parameters and rank count), in the order the
// runs first appear. Runs without predictions are left out.
func AppRankings(recs []results.Record) []AppRanking {
	type run struct {
		r     *AppRanking
		preds map[string]map[string]float64 // model -> phase -> seconds
	}
	var runs []*run
	byKey := map[string]*run{}
	for _, rec := range recs {
		// A phase with an empty workload moves nothing (a grid row of one
		// rank): there is nothing to predict.
		if rec.Bench != results.BenchApp || rec.Params["kind"] != results.PhaseKindComm || len(rec.Workload) == 0 || !messagePassing(rec) {
			continue
		}
		params := results.Params{}
		for k, v := range rec.Params {
			if k != "app" && k != "phase" && k != "kind" {
				params[k] = v
			}
		}
		key := fmt.Sprintf("%v %s ranks=%d", rec.Params["app"], ParamList(params), rec.Ranks)
		ru := byKey[key]
		if ru == nil {
			app, _ := rec.Params["app"].(string)
			ru = &run{r: &AppRanking{App: app, Params: params, Ranks: rec.Ranks, Stat: "median", machine: "\n" + machineLine([]results.Record{rec})}, preds: map[string]map[string]float64{}}
			byKey[key] = ru
			runs = append(runs, ru)
		}
		phase, _ := rec.Params["phase"].(string)
		meas, ok := rec.Derived[derivedMeasured]
		if !ok {
			meas = rec.Median
		} else if stat := namedStat(rec.Derived); stat != "" {
			ru.r.Stat = stat
		} else if e, ok := rec.Derived[results.DerivedEnvelope]; ok && meas == e && e != rec.Min {
			ru.r.Stat = "envelope"
		} else if meas == rec.Min && rec.Min != rec.Median {
			ru.r.Stat = "fastest"
		}
		ru.r.Columns = append(ru.r.Columns, phase)
		ru.r.Measured = append(ru.r.Measured, meas)
		for k, v := range rec.Derived {
			name, ok := strings.CutPrefix(k, derivedPredPrefix)
			if !ok || !strings.HasSuffix(name, "_s") || strings.HasPrefix(name, "err_") {
				continue
			}
			name = strings.TrimSuffix(name, "_s")
			if ru.preds[name] == nil {
				ru.preds[name] = map[string]float64{}
			}
			ru.preds[name][phase] = v
		}
	}
	var out []AppRanking
	for _, ru := range runs {
		r := ru.r
		if len(ru.preds) == 0 {
			continue
		}
		var total float64
		for _, m := range r.Measured {
			total += m
		}
		phases := r.Columns
		r.Columns = append(r.Columns, AppTotal)
		r.Measured = append(r.Measured, total)
		for name := range ru.preds {
			r.Models = append(r.Models, name)
		}
		sort.Strings(r.Models)
		for _, name := range r.Models {
			row := make([]float64, len(r.Columns))
			sum := 0.0
			for j, ph := range phases {
				v, ok := ru.preds[name][ph]
				if !ok {
					v = math.NaN()
				}
				row[j] = v
				sum += v
			}
			row[len(row)-1] = sum
			r.Pred = append(r.Pred, row)
		}
		r.Best = make([]int, len(r.Columns))
		for j := range r.Columns {
			r.Best[j] = -1
			for i := range r.Models {
				v := r.Pred[i][j]
				if math.IsNaN(v) || r.Measured[j] <= 0 {
					continue
				}
				if r.Best[j] < 0 || math.Abs(RelErr(v, r.Measured[j])) < math.Abs(RelErr(r.Pred[r.Best[j]][j], r.Measured[j])) {
					r.Best[j] = i
				}
			}
		}
		out = append(out, *r)
	}
	return out
}

// Title names the run.
func (a AppRanking) Title() string {
	return fmt.Sprintf("%s %s on %d ranks", a.App, ParamList(a.Params), a.Ranks)
}

// Write prints the ranking: one row per model, one column per
// communication phase and the total, a cell the predicted time and its
// error against the measurement, "*" marking the best model of each
// column, "unsupported" where a model does not describe the phase.
func (a AppRanking) Write(w io.Writer, markdown bool) error {
	header := append([]string{"model"}, a.Columns...)
	rows := [][]string{append([]string{"measured (" + a.Stat + ")"}, mapCells(a.Measured, results.FormatSeconds)...)}
	for i, name := range a.Models {
		row := []string{name}
		for j, v := range a.Pred[i] {
			if math.IsNaN(v) {
				row = append(row, "unsupported")
				continue
			}
			cell := fmt.Sprintf("%s (%+.1f%%)", results.FormatSeconds(v), 100*(v-a.Measured[j])/a.Measured[j])
			if a.Best[j] == i {
				cell = "*" + cell
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "%s: communication per phase, predicted (error vs measured %s); * best per column\n", a.Title(), a.Stat)
	return results.RenderCells(w, header, rows, markdown)
}

// Plot draws measured (x) against predicted (y) time, one series per
// model, one point per communication phase and the total, with the line
// of perfect prediction, log-log; format as for Plot.
func (a AppRanking) Plot(format string) ([]byte, error) {
	series := make([]predSeries, len(a.Models))
	for i, name := range a.Models {
		series[i].name = name
		for j, v := range a.Pred[i] {
			series[i].pts = append(series[i].pts, plotter.XY{X: a.Measured[j], Y: v})
		}
	}
	return predictedVsMeasured(predPlot{
		title: a.Title() + ": communication predicted against measured (" + a.Stat + ")" + a.machine,
		diag:  "measured = predicted",
		width: 6 * vg.Inch, height: 5 * vg.Inch, dash: vg.Points(3), gap: vg.Points(3),
		empty: ErrNothingToPlot,
	}, series, format)
}

// WriteAppPlot renders the ranking's plot in the format of path's
// extension and writes it whole.
func (a AppRanking) WriteAppPlot(path string) error { return writeDrawn(path, a.Plot) }

// writeAppRankings is report.md's application section: every run's
// ranking and its plot (plots/app-N.png).
func writeAppRankings(w io.Writer, recs []results.Record, run *Run) error {
	ranks := AppRankings(recs)
	if len(ranks) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\n## Message-passing applications: which model predicts each program")
	fmt.Fprintln(w, "\nEvery communication phase of each application run, predicted by every model the run was given or fitted (the predictions stored in its records), against the measurement; the total is the sum of the phases.")
	for i, a := range ranks {
		fmt.Fprint(w, "\n```\n")
		if err := a.Write(w, false); err != nil {
			return err
		}
		fmt.Fprintln(w, "```")
		img, err := a.Plot("png")
		if errors.Is(err, ErrNothingToPlot) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s plot: %w", a.Title(), err)
		}
		name := Slug(fmt.Sprintf("app-%d-%s", i+1, a.App)) + ".png"
		run.Plots = append(run.Plots, PlotFile{Name: name, Data: img})
		fmt.Fprintf(w, "\n![%s](%s/%s)\n", a.Title(), results.PlotsDir, name)
	}
	return nil
}

func mapCells(v []float64, f func(float64) string) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}
