package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

func init() {
	registerTables("trilinear", kindTables{write: trilinearTables, replacesParams: true, reads: []TableOption{TableSplits}})
	registerTables("trilinear-piecewise", kindTables{write: trilinearPiecewiseTables, replacesParams: true})
}

// trilinearNames are the coefficients in the column order of paper 000's
// Table 1.
var trilinearNames = []string{"c7", "c6", "c5", "c4", "c3", "c2", "c1", "c0"}

// TrilinearTable lays fits out like Table 1 of paper 000: one row per fit
// (the label in the first column, the paper's "network"), the coefficients
// c7..c0 in microseconds (per byte for c7, c5, c4, c2), and under each row
// a row of standard errors and a row of 95% confidence intervals.
func TrilinearTable(labels []string, fits []*model.Trilinear) (header []string, rows [][]string) {
	header = append([]string{"fit"}, trilinearNames...)
	for i, t := range fits {
		v := []string{labels[i]}
		se := []string{"  SE"}
		ci := []string{"  95% CI"}
		for j := range trilinearNames {
			p := t.C[j]
			v = append(v, fmtMicro(p.Value))
			se = append(se, fmtMicro(p.SE))
			ci = append(ci, "["+fmtMicro(p.CI95[0])+", "+fmtMicro(p.CI95[1])+"]")
		}
		rows = append(rows, v, se, ci)
	}
	return header, rows
}

// trilinearTables prints the coefficients in Table 1's layout, the levels
// fitted and the optimal splits asked for.
func trilinearTables(w io.Writer, f *Fit) error {
	t := f.Model.(*model.Trilinear)
	label := strings.TrimSpace("kkaccess " + t.Op)
	fmt.Fprintln(w, "coefficients in the layout of paper 000, Table 1 (us; c7, c5, c4, c2 per byte):")
	h, rows := TrilinearTable([]string{label}, []*model.Trilinear{t})
	if err := Table(w, h, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "levels: k = %s; l = %s; r = %s\n", Floats(t.KLevels), Floats(t.LLevels), Floats(t.RLevels))
	if len(f.Splits) == 0 {
		return nil
	}
	var srows [][]string
	for _, s := range f.Splits {
		p, _ := Value(s.PredictedSec, "s")
		pi, _ := Value(s.PredictedIntSec, "s")
		srows = append(srows, []string{results.FormatBytes(s.DataBytes),
			fmt.Sprintf("%.4g ± %.2g", s.K0, s.K0SE), fmt.Sprintf("%.4g ± %.2g", s.L0, s.L0SE), p,
			strconv.Itoa(s.KInt), strconv.FormatFloat(s.LInt, 'g', 6, 64), pi})
	}
	fmt.Fprintln(w, "optimal split at r = 1 (paper 000, section 7: k0 = sqrt(a2/a1 D), l0 = sqrt(a1/a2 D)):")
	return Table(w, []string{"D bytes", "k0", "l0 bytes", "T us", "k (whole)", "l bytes", "T us (whole)"}, srows)
}

// trilinearPiecewiseTables prints one Table 1 row per packet-size regime
// and the regimes' extent and fit.
func trilinearPiecewiseTables(w io.Writer, f *Fit) error {
	t := f.Model.(*model.PiecewiseTrilinear)
	var labels []string
	var fits []*model.Trilinear
	for _, s := range t.Segments {
		labels = append(labels, "l "+results.FormatBytes(s.FromBytes)+".."+results.FormatBytes(s.ToBytes))
		fits = append(fits, s.Model)
	}
	fmt.Fprintf(w, "%s: one trilinear fit per packet-size regime (breakpoints chosen by penalised BIC); coefficients in the layout of paper 000, Table 1 (us; c7, c5, c4, c2 per byte):\n",
		strings.TrimSpace("kkaccess "+t.Op))
	h, rows := TrilinearTable(labels, fits)
	if err := Table(w, h, rows); err != nil {
		return err
	}
	var srows [][]string
	for i, s := range t.Segments {
		q := s.Model.Fit
		srows = append(srows, []string{strconv.Itoa(i + 1), results.FormatBytes(s.FromBytes), results.FormatBytes(s.ToBytes),
			"k = " + Floats(s.Model.KLevels) + "; r = " + Floats(s.Model.RLevels), strconv.Itoa(q.N), Pct(q.RSE), fmt.Sprintf("%.3g", q.Cond)})
	}
	return Table(w, []string{"segment", "l from", "l to", "levels", "cells", "RSE", "cond"}, srows)
}
