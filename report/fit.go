package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// Fit is everything the report of one fitted model shows.
type Fit struct {
	// Source names what was fitted (a file name) in the heading.
	Source string
	Model  model.Model
	// Validation is the held-out validation, or nil; ValidationNote
	// says why there is none when it was attempted.
	Validation     *model.Validation
	ValidationNote string
	// Records are the records the model was fitted to; tables comparing
	// the model with measurements read them.
	Records []results.Record
	// Splits are optimal packet splits of a trilinear fit to print
	// (paper 000, section 7); see TableSplits.
	Splits []*model.Split
	// HopSec is the per-hop time t_h of paper 003's cost tables printed
	// beside a two-level fit; see TableHop.
	HopSec float64
}

// TableOption names an input of a kind's own tables beyond the model, so
// that callers can refuse it for kinds whose tables do not read it.
type TableOption string

// The table inputs.
const (
	TableSplits TableOption = "split" // Fit.Splits
	TableHop    TableOption = "hop-s" // Fit.HopSec
)

// kindTables are the tables a model kind adds to its fit report.
type kindTables struct {
	// write prints the tables.
	write func(w io.Writer, f *Fit) error
	// replacesParams says the tables show the parameters in a layout of
	// their own, so the generic parameter table is left out.
	replacesParams bool
	reads          []TableOption
}

var tablesByKind = map[string]kindTables{}

// registerTables adds a model kind's own tables to its fit report; each
// kind's tables live in the file named after the model's, as in package
// model. A kind without registered tables gets the generic report only.
func registerTables(kind string, t kindTables) {
	if _, dup := tablesByKind[kind]; dup {
		panic("report: tables registered twice for " + kind)
	}
	tablesByKind[kind] = t
}

// KindsReading lists the model kinds whose tables read the option, sorted.
func KindsReading(o TableOption) []string {
	var out []string
	for k, t := range tablesByKind {
		for _, x := range t.reads {
			if x == o {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// WriteFit prints a fit's report: the heading, the parameter table (with
// standard errors and 95% confidence intervals), the kind's own tables,
// the fit quality, the held-out validation with a table of the held-out
// points, and the fit's notes.
func WriteFit(w io.Writer, f *Fit) error {
	kind := f.Model.Kind()
	fmt.Fprintf(w, "%s fit of %s\n", kind, results.Printable(f.Source))
	kt, ok := tablesByKind[kind]
	if !ok || !kt.replacesParams {
		if err := Table(w, []string{"parameter", "value", "SE", "95% CI", "unit"}, paramRows(f.Model.Params())); err != nil {
			return err
		}
	}
	if ok {
		if err := kt.write(w, f); err != nil {
			return err
		}
	}
	writeQuality(w, f.Model.Quality())
	if v := f.Validation; v != nil {
		fmt.Fprintf(w, "held-out (%s): %d points predicted from %d, median relative error %s, p95 %s, max %s\n",
			v.Scheme, v.NTest, v.NTrain, Pct(v.MedianRelErr), Pct(v.P95RelErr), Pct(v.MaxRelErr))
		if v.Failed > 0 {
			fmt.Fprintf(w, "held-out: %d refits failed: %s\n", v.Failed, v.FailReason)
		}
		if err := heldOutTable(w, f.Model, v); err != nil {
			return err
		}
	}
	if f.ValidationNote != "" {
		fmt.Fprintln(w, f.ValidationNote)
	}
	for _, n := range f.Model.Quality().Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// heldOutTable lists the held-out points, measured against predicted by
// the model refitted without them.
func heldOutTable(w io.Writer, m model.Model, v *model.Validation) error {
	// Every bench a model is fitted from measures seconds (model's record
	// check refuses other units).
	c := Comparison{PointColumns: []string{"held-out point"}, Unit: "s", Models: []string{m.Kind()}}
	for _, p := range v.Points {
		c.Add([]string{p.Point}, p.Measured, []float64{p.Predicted})
	}
	fmt.Fprintln(w, "held-out points, measured vs predicted by the fit without them:")
	return c.Write(w)
}

func paramRows(ps []model.Param) [][]string {
	var rows [][]string
	for _, p := range ps {
		v, u := Value(p.Value, p.Unit)
		se, _ := Value(p.SE, p.Unit)
		lo, _ := Value(p.CI95[0], p.Unit)
		hi, _ := Value(p.CI95[1], p.Unit)
		ci := "[" + lo + ", " + hi + "]"
		if p.Fixed {
			se, ci = "-", "(fixed)"
		}
		rows = append(rows, []string{p.Name, v, se, ci, u})
	}
	return rows
}

func writeQuality(w io.Writer, q model.Quality) {
	rse := strconv.FormatFloat(q.RSE, 'g', 3, 64) + " " + q.RSEUnit
	if q.RSEUnit == "relative" {
		rse = Pct(q.RSE) + " (relative)"
	}
	fmt.Fprintf(w, "fit: %d points, %d dof, RSE %s, adj R^2 %.6f, cond %.3g, weighting %s, trimmed %d\n",
		q.N, q.DoF, rse, q.AdjR2, q.Cond, q.Weighting, q.Trimmed)
	if q.Trimmed > 0 {
		fmt.Fprintf(w, "trimmed (one-sided outliers): %s\n", strings.Join(q.TrimmedPoints, "; "))
	}
}

// fmtMicro formats seconds as microseconds with 4 significant digits, as
// Table 1 of paper 000 prints them.
func fmtMicro(s float64) string { return strconv.FormatFloat(s*1e6, 'g', 4, 64) }

// instanceBytes formats an instance's "bytes" parameter, or "-".
func instanceBytes(in model.Instance) string {
	b, err := in.Num("bytes")
	if err != nil || math.IsNaN(b) {
		return "-"
	}
	return results.FormatBytes(b)
}
