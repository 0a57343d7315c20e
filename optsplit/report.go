package optsplit

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// WriteOptimizeReport prints an Optimize result as rank 0 has it: the model
// (fitted to source) with its r = 1 coefficients, the optimum k0, l0 with
// standard errors or the boundary split, the measured splits against the
// prediction T(k, l, 1) (Figure 13 as a table), and the Verdict.
func WriteOptimizeReport(w io.Writer, res *OptimizeResult, source string) error {
	tr, s := res.Model, res.Split
	d := int(s.DataBytes)
	ints := ""
	if d%emulate.IntBytes == 0 {
		ints = fmt.Sprintf(" (%d integers of %d bytes)", d/emulate.IntBytes, emulate.IntBytes)
	}
	num := func(sec float64) string { v, _ := report.Value(sec, "s"); return v }
	us := func(sec float64) string { return num(sec) + " us" }
	nsB := func(secPerB float64) string { v, _ := report.Value(secPerB, "s/B"); return v + " ns/B" }
	fmt.Fprintf(w, "optimal split of D = %d bytes%s at r = 1, op %s, %d ranks (paper 000, section 7)\n", d, ints, res.Op, res.Ranks)
	fmt.Fprintf(w, "model: trilinear fit of %s, %d (k, l, r) points, RSE %s\n", results.Printable(source), tr.Fit.N, report.Pct(tr.Fit.RSE))
	fmt.Fprintf(w, "  T(k, l, 1) = a3 kl + a2 l + a1 k + a0: a3 = %s, a2 = %s, a1 = %s, a0 = %s\n", nsB(s.A3), nsB(s.A2), us(s.A1), us(s.A0))
	if s.Boundary {
		fmt.Fprintf(w, "  no interior optimum (k0 = sqrt(a2/a1 D) needs a1 > 0 and a2 > 0): T(D/l, l, 1) is monotone in k,\n")
		fmt.Fprintf(w, "  so the best split is an end of k in [1, %d]: k = %d, l = %s bytes, predicted T = %s\n", min(d, MaxPackets), s.KInt, report.Num(s.LInt), us(s.PredictedIntSec))
	} else {
		fmt.Fprintf(w, "  k0 = sqrt(a2/a1 D) = %s ± %.2g\n", report.Num(s.K0), s.K0SE)
		fmt.Fprintf(w, "  l0 = sqrt(a1/a2 D) = %s ± %.2g bytes\n", report.Num(s.L0), s.L0SE)
		fmt.Fprintf(w, "  predicted T(k0, l0, 1) = %s; whole packets k = %d, l = %s bytes: T = %s\n", us(s.PredictedSec), s.KInt, report.Num(s.LInt), us(s.PredictedIntSec))
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "  --distinct: k = %s not measured (at most ranks-1 = %d distinct targets)\n", JoinInts(res.Dropped), res.Ranks-1)
	}
	best := BestPoint(res.Points)
	var rows [][]string
	for i, p := range res.Points {
		errPct := "-"
		if p.Summary.Median > 0 {
			errPct = fmt.Sprintf("%+.1f%%", 100*(p.PredictedSec/p.Summary.Median-1))
		}
		var marks []string
		if p.K == s.KInt {
			marks = append(marks, "predicted optimum")
		}
		if i == best {
			marks = append(marks, "measured best")
		}
		rows = append(rows, []string{strconv.Itoa(p.K), strconv.Itoa(p.L), num(p.Summary.Median),
			"[" + num(p.Summary.CI95[0]) + ", " + num(p.Summary.CI95[1]) + "]", num(p.PredictedSec), errPct, strings.Join(marks, ", ")})
	}
	fmt.Fprintf(w, "k packets of l = round(D/k) bytes at r = 1 (Figure 13); times in us, error = predicted/measured - 1:\n")
	if err := report.TableAligned(w, []string{"k", "l bytes", "measured", "95% CI", "predicted", "error", "mark"}, rows, 6); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, Verdict(res.Points, s.KInt))
	return err
}

// WriteVersionsReport prints version 3's model of a Versions result (rank
// 0's) and the k0, l0 it chose for each variable size, measured against
// predicted; nothing when no version needed a model.
func WriteVersionsReport(w io.Writer, network string, res *Result) error {
	tr := res.Model
	if tr == nil {
		return nil
	}
	fmt.Fprintf(w, "trilinear model of %s (s, s/B):", network)
	for i := trilinearCoefs - 1; i >= 0; i-- {
		fmt.Fprintf(w, " c%d=%.4g", i, tr.Coef(i))
	}
	fmt.Fprintf(w, "; fit RSE %s\n", report.Pct(tr.Fit.RSE))
	if _, err := model.OptimalSplit(tr, 1); err != nil {
		fmt.Fprintf(w, "  %v: version 3 sends one packet\n", err)
	}
	for _, p := range res.Points {
		if emulate.SplitVersion(p.Version) != emulate.SplitModel {
			continue
		}
		if _, err := fmt.Fprintf(w, "  version 3: %d integers (%d B) as k0=%d packets of l0=%d B: measured %s us, predicted T(k0, l0, 1) = %s us\n",
			p.DataBytes/emulate.IntBytes, p.DataBytes, p.K, p.L, report.Num(p.Summary.Median*1e6), report.Num(p.PredictedSec*1e6)); err != nil {
			return err
		}
	}
	return nil
}

// JoinInts lists ks as 1,2,4.
func JoinInts(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, ",")
}
