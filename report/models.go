package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// NamedModel is a model under a label: its file name, or the name of a
// name=path argument, or its kind in a run report.
type NamedModel struct {
	Label string
	Model model.Model
}

// BenchModels is the comparison of several models on one bench's
// records.
type BenchModels struct {
	Bench string
	// Points are the instances of the rows of Comparison, in order
	// (model.Compare's: by parameters).
	Points []model.Instance
	// Comparison's models are those that predict at least one point, in
	// the order given.
	Comparison Comparison
}

// ModelsOnBench tables every model that predicts some of the bench's
// records against them: one row per point (the median of its records'
// medians, model.Compare), each model's prediction and relative error,
// "-" where a model does not predict the point. ok is false when no model
// predicts any point of the bench.
func ModelsOnBench(bench string, recs []results.Record, models []NamedModel) (bm BenchModels, ok bool) {
	var sel []results.Record
	unit := ""
	for _, r := range recs {
		if r.Bench == bench {
			sel = append(sel, r)
			unit = r.Unit
		}
	}
	type column struct {
		name string
		cmp  map[string]model.Comparison
	}
	var cols []column
	var order []model.Instance
	seen := map[string]bool{}
	for _, nm := range models {
		if !slices.Contains(nm.Model.Patterns(), bench) {
			continue
		}
		cmp := model.Compare(nm.Model, sel)
		if len(cmp) == 0 {
			continue
		}
		col := column{name: nm.Label, cmp: map[string]model.Comparison{}}
		for _, c := range cmp {
			key := instanceKey(c.Instance)
			col.cmp[key] = c
			if !seen[key] {
				seen[key] = true
				order = append(order, c.Instance)
			}
		}
		cols = append(cols, col)
	}
	if len(cols) == 0 {
		return BenchModels{}, false
	}
	keys := paramKeys(order)
	bm = BenchModels{Bench: bench, Points: order,
		Comparison: Comparison{PointColumns: append(append([]string(nil), keys...), "ranks"), Unit: unit}}
	for _, col := range cols {
		bm.Comparison.Models = append(bm.Comparison.Models, col.name)
	}
	for _, in := range order {
		key := instanceKey(in)
		point := make([]string, 0, len(keys)+1)
		for _, k := range keys {
			point = append(point, paramCell(in, k))
		}
		point = append(point, strconv.Itoa(in.Ranks))
		measured := math.NaN()
		pred := make([]float64, len(cols))
		for j, col := range cols {
			pred[j] = math.NaN()
			if cm, ok := col.cmp[key]; ok {
				measured, pred[j] = cm.Measured, cm.Predicted
			}
		}
		bm.Comparison.Add(point, measured, pred)
	}
	return bm, true
}

// ModelsComparison is every model against every bench of some records
// that one of them predicts.
type ModelsComparison struct {
	Labels  []string
	Benches []BenchModels
	// Unpredicted are the benches of the records no model predicts.
	Unpredicted []string
}

// CompareModels compares models on recs bench by bench (ModelsOnBench):
// each model's prediction error per point and, in each table's summary
// rows and in Summary, per bench, with the closest model marked. It is
// the table the run report prints for the models it fits, for models
// fitted anywhere (`commcost compare --models`).
func CompareModels(models []NamedModel, recs []results.Record) (*ModelsComparison, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("no models to compare")
	}
	seen := map[string]bool{}
	mc := &ModelsComparison{}
	for _, m := range models {
		if seen[m.Label] {
			return nil, fmt.Errorf("label %q used twice; give each model its own name=path", m.Label)
		}
		seen[m.Label] = true
		mc.Labels = append(mc.Labels, m.Label)
	}
	for _, b := range benchOrder(recs) {
		bm, ok := ModelsOnBench(b, recs, models)
		if !ok {
			mc.Unpredicted = append(mc.Unpredicted, b)
			continue
		}
		mc.Benches = append(mc.Benches, bm)
	}
	if len(mc.Benches) == 0 {
		var pats []string
		for _, m := range models {
			pats = append(pats, fmt.Sprintf("%s predicts %v", m.Label, m.Model.Patterns()))
		}
		return nil, fmt.Errorf("no model predicts any of the records' benches (%v): %v", benchOrder(recs), pats)
	}
	return mc, nil
}

// summaryCells is the per-bench table: each model's median relative
// error over the points of the bench it predicts (and on how many it is
// the closest), the model with the smallest median marked "*".
func (mc *ModelsComparison) summaryCells() ([]string, [][]string) {
	header := []string{"bench", "points"}
	for _, l := range mc.Labels {
		header = append(header, l+" median err", "closest")
	}
	var rows [][]string
	for _, b := range mc.Benches {
		row := []string{b.Bench, strconv.Itoa(len(b.Points))}
		sums := b.Comparison.Summaries()
		best, bestErr := "", math.Inf(1)
		for _, s := range sums {
			if s.N > 0 && s.MedianRelErr < bestErr {
				best, bestErr = s.Model, s.MedianRelErr
			}
		}
		for _, l := range mc.Labels {
			i := slices.Index(b.Comparison.Models, l)
			if i < 0 || sums[i].N == 0 {
				row = append(row, "-", "-")
				continue
			}
			cell := Pct(sums[i].MedianRelErr)
			if l == best && len(b.Comparison.Models) > 1 {
				cell += " *"
			}
			row = append(row, cell, fmt.Sprintf("%d of %d", sums[i].Best, len(b.Points)))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// Write writes the comparison: per bench the table of points, then the
// per-bench summary, in a terminal or markdown table, or as CSV or JSON
// Lines rows (one per point: bench, parameters, ranks, measured, and per
// model the prediction and relative error, values in the records' unit).
func (mc *ModelsComparison) Write(w io.Writer, f OutputFormat) error {
	switch f {
	case OutputCSV:
		return mc.writeCSV(w)
	case OutputJSONL:
		return mc.writeJSONL(w)
	}
	md := f == OutputMarkdown
	for _, b := range mc.Benches {
		header, rows := b.Comparison.Cells()
		if err := TitledTable(w, "Models on "+b.Bench+" records", header, rows, md); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	header, rows := mc.summaryCells()
	title := "Per bench: median relative error |predicted - measured| / measured; * the smallest; closest = points on which the model is the closest"
	if err := TitledTable(w, title, header, rows, md); err != nil {
		return err
	}
	var notes []string
	for _, b := range mc.Unpredicted {
		notes = append(notes, fmt.Sprintf("%s: no model predicts it.", b))
	}
	notes = append(notes, "measured: the median over the point's records of their medians. Units: times in us, bandwidths in MB/s (MB = 10^6 bytes); sizes K = 2^10, M = 2^20 bytes.")
	fmt.Fprintln(w)
	return writeNotes(w, notes, md)
}

func (mc *ModelsComparison) paramKeys() []string {
	var all []model.Instance
	for _, b := range mc.Benches {
		all = append(all, b.Points...)
	}
	return paramKeys(all)
}

// writeCSV: bench, unit, param_<name>..., ranks, measured, then per model
// <label>_predicted, <label>_rel_err, then best (the closest model).
func (mc *ModelsComparison) writeCSV(w io.Writer) error {
	keys := mc.paramKeys()
	header := []string{"bench", "unit"}
	for _, k := range keys {
		header = append(header, "param_"+k)
	}
	header = append(header, "ranks", "measured")
	for _, l := range mc.Labels {
		header = append(header, l+"_predicted", l+"_rel_err")
	}
	header = append(header, "best")
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, b := range mc.Benches {
		for i, in := range b.Points {
			r := b.Comparison.Rows[i]
			row := []string{b.Bench, b.Comparison.Unit}
			for _, k := range keys {
				v, ok := in.Params[k]
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, fmt.Sprint(v))
			}
			row = append(row, strconv.Itoa(in.Ranks), formatRaw(r.Measured))
			for _, l := range mc.Labels {
				j := slices.Index(b.Comparison.Models, l)
				if j < 0 {
					row = append(row, "", "")
					continue
				}
				row = append(row, formatRaw(r.Predicted[j]), formatRaw(RelErr(r.Predicted[j], r.Measured)))
			}
			best := ""
			if j := r.best(); j >= 0 {
				best = b.Comparison.Models[j]
			}
			row = append(row, best)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

type jsonPrediction struct {
	Model     string  `json:"model"`
	Predicted jsonNum `json:"predicted"`
	RelErr    jsonNum `json:"rel_err"`
}

type jsonModelRow struct {
	Bench       string           `json:"bench"`
	Unit        string           `json:"unit"`
	Params      results.Params   `json:"params"`
	Ranks       int              `json:"ranks,omitempty"`
	Measured    jsonNum          `json:"measured"`
	Predictions []jsonPrediction `json:"predictions"`
	Best        string           `json:"best,omitempty"`
}

func (mc *ModelsComparison) writeJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, b := range mc.Benches {
		for i, in := range b.Points {
			r := b.Comparison.Rows[i]
			row := jsonModelRow{Bench: b.Bench, Unit: b.Comparison.Unit, Params: in.Params, Ranks: in.Ranks, Measured: jsonNum(r.Measured)}
			for j, m := range b.Comparison.Models {
				row.Predictions = append(row.Predictions, jsonPrediction{Model: m, Predicted: jsonNum(r.Predicted[j]), RelErr: jsonNum(RelErr(r.Predicted[j], r.Measured))})
			}
			if j := r.best(); j >= 0 {
				row.Best = b.Comparison.Models[j]
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
	}
	return nil
}
