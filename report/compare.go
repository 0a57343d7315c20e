package report

import (
	"fmt"
	"io"
	"math"

	"github.com/montanaflynn/stats"
)

// Comparison is the table of measured points against the predictions of
// one or more models: one row per point (its describing columns, the
// measured value, then each model's prediction and relative error
// |predicted - measured| / measured). With two models or more the closest
// prediction of each row is marked with "*" and summary rows follow: each
// model's median and largest relative error over the rows it predicts and
// the number of rows it is closest on.
//
// The fit report uses it for held-out points and for the aggregate
// operations against the cost tables, the run report for every model
// fitted to a bench; application phases (measured against
// model.PredictWorkload) are meant to use it the same way.
type Comparison struct {
	// PointColumns are the headers of the columns that describe a point.
	PointColumns []string
	// Unit is the unit of Measured and Predicted ("s", "B/s", ...); the
	// table scales it as Value does and names the scaled unit.
	Unit string
	// Models name the prediction columns.
	Models []string
	Rows   []ComparisonRow
}

// ComparisonRow is one point. Predicted holds one value per model; NaN
// means the model does not predict the point (shown as "-").
type ComparisonRow struct {
	Point     []string
	Measured  float64
	Predicted []float64
}

// Add appends a row. It panics (programmer misuse) when point or
// predicted do not match the columns.
func (c *Comparison) Add(point []string, measured float64, predicted []float64) {
	if len(point) != len(c.PointColumns) || len(predicted) != len(c.Models) {
		panic(fmt.Sprintf("report: comparison row with %d point cells and %d predictions for %d columns and %d models",
			len(point), len(predicted), len(c.PointColumns), len(c.Models)))
	}
	c.Rows = append(c.Rows, ComparisonRow{Point: point, Measured: measured, Predicted: predicted})
}

// RelErr is |predicted - measured| / |measured|: NaN when either is not
// finite or measured is 0.
func RelErr(predicted, measured float64) float64 {
	if math.IsNaN(predicted) || math.IsInf(predicted, 0) || math.IsNaN(measured) || math.IsInf(measured, 0) || measured == 0 {
		return math.NaN()
	}
	return math.Abs(predicted-measured) / math.Abs(measured)
}

// best returns the index of the model closest to the measurement in row
// r, or -1 when none predicts it. Ties go to the first model.
func (r ComparisonRow) best() int {
	b, be := -1, math.Inf(1)
	for j, p := range r.Predicted {
		if e := RelErr(p, r.Measured); e < be {
			b, be = j, e
		}
	}
	return b
}

// ModelSummary is one model's accuracy over a comparison's rows.
type ModelSummary struct {
	Model string
	// N counts the rows the model predicts.
	N int
	// MedianRelErr and MaxRelErr summarise its relative errors there (NaN
	// when N is 0).
	MedianRelErr, MaxRelErr float64
	// Best counts the rows on which it is the closest model.
	Best int
}

// Summaries returns one summary per model, in the order of Models.
func (c *Comparison) Summaries() []ModelSummary {
	out := make([]ModelSummary, len(c.Models))
	for j, name := range c.Models {
		var errs []float64
		for _, r := range c.Rows {
			if e := RelErr(r.Predicted[j], r.Measured); !math.IsNaN(e) {
				errs = append(errs, e)
			}
		}
		s := ModelSummary{Model: name, N: len(errs), MedianRelErr: math.NaN(), MaxRelErr: math.NaN()}
		if len(errs) > 0 {
			s.MedianRelErr, _ = stats.Median(errs)
			s.MaxRelErr, _ = stats.Max(errs)
		}
		out[j] = s
	}
	for _, r := range c.Rows {
		if b := r.best(); b >= 0 {
			out[b].Best++
		}
	}
	return out
}

// Write draws the table.
func (c *Comparison) Write(w io.Writer) error {
	header, rows := c.Cells()
	return Table(w, header, rows)
}

// Cells are the table's header and rows: the point columns, the measured
// value and each model's prediction and relative error (the closest
// marked "*" when there are two models or more), then the summary rows.
func (c *Comparison) Cells() ([]string, [][]string) {
	_, unit := Value(0, c.Unit)
	suffix := ""
	if unit != "" {
		suffix = " " + unit
	}
	header := append([]string(nil), c.PointColumns...)
	header = append(header, "measured"+suffix)
	for _, m := range c.Models {
		header = append(header, m+suffix, "err")
	}
	mark := len(c.Models) > 1
	rows := make([][]string, 0, len(c.Rows)+3)
	for _, r := range c.Rows {
		row := append([]string(nil), r.Point...)
		mv, _ := Value(r.Measured, c.Unit)
		row = append(row, mv)
		b := r.best()
		for j, p := range r.Predicted {
			e := RelErr(p, r.Measured)
			if math.IsNaN(p) || math.IsNaN(e) {
				row = append(row, "-", "-")
				continue
			}
			pv, _ := Value(p, c.Unit)
			if mark && j == b {
				pv += " *"
			}
			row = append(row, pv, Pct(e))
		}
		rows = append(rows, row)
	}
	if mark {
		sums := c.Summaries()
		line := func(label string, cell func(ModelSummary) string) {
			row := make([]string, len(header))
			row[0] = label
			for j, s := range sums {
				row[len(c.PointColumns)+2+2*j] = cell(s)
			}
			rows = append(rows, row)
		}
		pctOrDash := func(x float64) string {
			if math.IsNaN(x) {
				return "-"
			}
			return Pct(x)
		}
		line("median err", func(s ModelSummary) string { return pctOrDash(s.MedianRelErr) })
		line("max err", func(s ModelSummary) string { return pctOrDash(s.MaxRelErr) })
		line("closest (*)", func(s ModelSummary) string { return fmt.Sprintf("%d of %d", s.Best, len(c.Rows)) })
	}
	return header, rows
}
