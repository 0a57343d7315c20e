package permsched

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// Experiment 3 (paper Section 5.1): when does CGM beat LP? The paper models
//
//	T_LP  = n tau + C1 d M phi
//	T_CGM = C2 d n ln d + C3 d (tau + M phi)
//
// (scheduling included, schedule used once) and derives CGM <= LP when
// d ln d <= tau / C2 for small messages (eq. 5) and when
// ln d <= (C1 - C3)/C2 * M phi / n for large ones (eq. 6). Breakeven fits
// the constants to experiment 2's records and solves both the simplified
// conditions and the full inequality.
//
// Two departures, both because the measurements ask for them:
//   - LP's fixed cost is fitted as A (alpha) instead of assumed to be n tau:
//     an LP that skips empty steps (ours, like Fig. 3, exchanges only where
//     COM says so) need not pay tau per step; the per-step cost
//     tau_LP = A / n takes tau's place in eq. 5.
//   - Runtime scheduling is fitted as G + C2 d n ln d: G is the
//     concatenation of the rows (an Allgatherv), which on a real machine
//     costs as much as the masking itself; the paper folds it into O(dn).
//     With a single measured d, G cannot be told apart and is taken as 0.

// CostModel holds the fitted constants, with standard errors.
type CostModel struct {
	N              int     // ranks the measurements used
	Tau, Phi       float64 // one permutation: tau + M phi (Table 1), s and s/B
	TauSE, PhiSE   float64
	Alpha, AlphaSE float64 // LP fixed cost (the paper's n tau), s
	C1, C1SE       float64 // LP: per byte of d M phi
	G, GSE         float64 // CGM scheduling: concatenation (Allgatherv), s
	C2, C2SE       float64 // CGM scheduling: s per unit of d n ln d
	C3, C3SE       float64 // CGM communication: per d (tau + M phi)
	Reuse          float64 // times a schedule is used (divides C2's term); 1 in the paper
	Fits           map[string]*Fit
}

// FitCostModel fits the model to records of experiment 2 (BenchPerm1 for
// tau and phi, BenchComm of LP and CGM, BenchSchedule of CGM). reuse >= 1
// is the number of times a schedule is used. As for `commcost fit`, an
// input without the records one of the fits needs is an error that is
// model.ErrNoRecords; records too few or too alike to determine a fit
// (fewer than three permutation sizes) are model.ErrIllConditioned.
func FitCostModel(recs []results.Record, reuse float64) (*CostModel, error) {
	if reuse < 1 {
		reuse = 1
	}
	cm := &CostModel{Reuse: reuse, Fits: map[string]*Fit{}}
	var pRows, lRows, cRows, sRows [][]float64
	var pY, lY, cY, sY []float64
	var err error
	if cm.N, err = checkFitRecords(recs); err != nil {
		return nil, err
	}
	n := float64(cm.N)
	for _, r := range recs {
		b, _ := paramInt(r, "bytes")
		if r.Bench == BenchPerm1 && r.Median > 0 {
			pRows = append(pRows, []float64{1, float64(b)})
			pY = append(pY, r.Median)
		}
	}
	// Two coefficients need a third size for their standard errors.
	const perm1Need = "permsched: break-even: need sched.perm1 records at three or more message sizes (run `commcost sched comm` without --no-perm1)"
	if len(pRows) == 0 {
		return nil, missingRecords(perm1Need)
	}
	if len(pRows) < 3 {
		return nil, tooFewRecords(fmt.Sprintf("%s; the input has %d", perm1Need, len(pRows)))
	}
	f, err := fitRelative([]string{"tau_s", "phi_s_per_B"}, pRows, pY)
	if err != nil {
		return nil, fmt.Errorf("break-even: tau and phi: %w", err)
	}
	cm.Fits["perm1"] = f
	cm.Tau, cm.Phi, cm.TauSE, cm.PhiSE = f.Coef[0], f.Coef[1], f.SE[0], f.SE[1]
	if err := fittedPositive("the "+BenchPerm1+" records", f, "tau", "phi"); err != nil {
		return nil, err
	}
	for _, r := range recs {
		d, _ := paramInt(r, "d")
		b, _ := paramInt(r, "bytes")
		name := paramString(r, "scheduler")
		if r.Median <= 0 || d < 1 {
			continue
		}
		fd, fb := float64(d), float64(b)
		switch {
		case r.Bench == BenchComm && name == "LP":
			lRows = append(lRows, []float64{1, fd * fb * cm.Phi})
			lY = append(lY, r.Median)
		case r.Bench == BenchComm && name == "CGM":
			cRows = append(cRows, []float64{fd * (cm.Tau + fb*cm.Phi)})
			cY = append(cY, r.Median)
		case r.Bench == BenchSchedule && name == "CGM" && d >= 2:
			sRows = append(sRows, []float64{1, fd * n * math.Log(fd)})
			sY = append(sY, r.Median)
		}
	}
	if len(lRows) == 0 {
		return nil, missingRecords("break-even: LP: the input has no sched.comm records of LP at d >= 1 with a positive time")
	}
	if len(cRows) == 0 {
		return nil, missingRecords("break-even: CGM communication: the input has no sched.comm records of CGM at d >= 1 with a positive time")
	}
	if len(sRows) == 0 {
		return nil, missingRecords("break-even: CGM scheduling: the input has no sched.schedule records of CGM at d >= 2 with a positive time")
	}
	if f, err = fitRelative([]string{"alpha_s", "C1"}, lRows, lY); err != nil {
		return nil, fmt.Errorf("break-even: LP (sched.comm records of LP at several d and sizes): %w", err)
	}
	cm.Fits["LP"] = f
	cm.Alpha, cm.C1, cm.AlphaSE, cm.C1SE = f.Coef[0], f.Coef[1], f.SE[0], f.SE[1]
	if err := fittedPositive("the "+BenchComm+" records of LP", f, "A", "C1"); err != nil {
		return nil, err
	}
	if f, err = fitRelative([]string{"C3"}, cRows, cY); err != nil {
		return nil, fmt.Errorf("break-even: CGM communication (sched.comm records of CGM): %w", err)
	}
	cm.Fits["CGM"] = f
	cm.C3, cm.C3SE = f.Coef[0], f.SE[0]
	if err := fittedPositive("the "+BenchComm+" records of CGM", f, "C3"); err != nil {
		return nil, err
	}
	if f, err = fitRelative([]string{"G_s", "C2_s"}, sRows, sY); err == nil {
		cm.G, cm.GSE, cm.C2, cm.C2SE = f.Coef[0], f.SE[0], f.Coef[1], f.SE[1]
	} else {
		// One density only: the paper's form, C2 d n ln d alone.
		for i := range sRows {
			sRows[i] = sRows[i][1:]
		}
		if f, err = fitRelative([]string{"C2_s"}, sRows, sY); err != nil {
			return nil, fmt.Errorf("break-even: CGM scheduling (sched.schedule records of CGM with d >= 2): %w", err)
		}
		cm.C2, cm.C2SE = f.Coef[0], f.SE[0]
	}
	cm.Fits["CGM sched"] = f
	return cm, nil
}

// NotPositiveError is a constant of the cost model that its records fit
// at 0 or below: tau (s), phi (s/B, the inverse of a bandwidth), A (s), C1
// and C3 are each the cost of an operation the records time, or the factor
// of one, so a fit of one <= 0 (a negative bandwidth, a time that falls as
// the bytes grow) describes no machine, and eq. 5, eq. 6 and the full
// inequality built from it would be printed as if it did. G and C2 are
// left out: at few ranks the scheduling cost hides in the noise of the
// concatenation, and WriteBreakeven notes an unresolved C2 instead.
type NotPositiveError struct {
	Name    string  // tau, phi, A, C1 or C3
	Records string  // the records fitted, e.g. "the sched.perm1 records"
	Value   float64 // as fitted
	SE      float64
}

func (e *NotPositiveError) Error() string {
	unit := map[string]string{"tau": " s", "phi": " s/B", "A": " s"}[e.Name]
	bw := ""
	if e.Name == "phi" && e.Value != 0 {
		bw = fmt.Sprintf(" (a bandwidth of %.3g B/s)", 1/e.Value)
	}
	return fmt.Sprintf("break-even: %s fit %s = %.4g%s ± %.2g%s, which is not positive: these records do not determine a cost model (tau, phi, A, C1 and C3 are costs of what the records time, each above 0)",
		e.Records, e.Name, e.Value, unit, e.SE, bw)
}

// fittedPositive refuses the first of f's coefficients, named names in order,
// that is not above 0 (NotPositiveError).
func fittedPositive(records string, f *Fit, names ...string) error {
	for i, name := range names {
		if !(f.Coef[i] > 0) {
			return &NotPositiveError{Name: name, Records: records, Value: f.Coef[i], SE: f.SE[i]}
		}
	}
	return nil
}

// FitRecordError is a record the fit cannot use: the Index-th of the
// records given, what is wrong with it and, when it disagrees with an
// earlier record, that record's index as Ref (else -1) and rank count.
type FitRecordError struct {
	Index, Ref, RefRanks int
	Msg                  string
}

func (e *FitRecordError) Error() string {
	if e.Ref < 0 {
		return fmt.Sprintf("record %d: %s", e.Index+1, e.Msg)
	}
	return fmt.Sprintf("record %d: %s (record %d has ranks = %d)", e.Index+1, e.Msg, e.Ref+1, e.RefRanks)
}

// fitBench reports whether the fit reads records of bench: experiment 2's.
func fitBench(bench string) bool {
	return bench == BenchComm || bench == BenchSchedule || bench == BenchPerm1
}

// checkFitRecords returns the rank count of experiment 2's records among
// recs, refusing what no run of it writes: fewer than 2 or more than
// MaxRanks ranks, records of several rank counts (the model has one n);
// a density beyond its record's n-1 the read refused (checkDensity). The
// model's scans over d are linear in n, so n must be bounded before they
// run.
func checkFitRecords(recs []results.Record) (int, error) {
	n, ref := 0, -1
	for i, r := range recs {
		if !fitBench(r.Bench) {
			continue
		}
		if r.Ranks < 2 || r.Ranks > MaxRanks {
			return 0, &FitRecordError{i, -1, 0, fmt.Sprintf("%s has ranks = %d; want 2..%d (experiment 2 needs two ranks, a schedule indexes at most %d)", r.Bench, r.Ranks, MaxRanks, MaxRanks)}
		}
		if ref < 0 {
			n, ref = r.Ranks, i
		} else if r.Ranks != n {
			return 0, &FitRecordError{i, ref, n, fmt.Sprintf("%s has ranks = %d; want ranks = %d: the fit models one rank count, so its records must come from runs of one size", r.Bench, r.Ranks, n)}
		}
	}
	return n, nil
}

// LP is the modelled LP time at density d and message size m bytes.
func (cm *CostModel) LP(d, m float64) float64 { return cm.Alpha + cm.C1*d*m*cm.Phi }

// CGM is the modelled CGM time, scheduling (concatenation G included,
// divided by Reuse) included.
func (cm *CostModel) CGM(d, m float64) float64 {
	lnd := 0.0
	if d > 1 {
		lnd = math.Log(d)
	}
	return (cm.G+cm.C2*d*float64(cm.N)*lnd)/cm.Reuse + cm.C3*d*(cm.Tau+m*cm.Phi)
}

// BreakevenSmall solves eq. 5 with tau_LP = Alpha/n: the largest real d
// with d ln d <= tau_LP * Reuse / C2 (0 if none, +Inf if C2 <= 0).
func (cm *CostModel) BreakevenSmall() float64 {
	if cm.C2 <= 0 {
		return math.Inf(1)
	}
	rhs := cm.Alpha / float64(cm.N) * cm.Reuse / cm.C2
	return solveIncreasing(func(d float64) float64 { return d * math.Log(d) }, rhs)
}

// BreakevenLarge solves eq. 6 at message size m: the largest d with
// ln d <= (C1 - C3)/C2 * Reuse * M phi / n, i.e. exp of the right side;
// 0 when C1 <= C3 (CGM's per-byte cost is not lower than LP's).
func (cm *CostModel) BreakevenLarge(m float64) float64 {
	if cm.C1 <= cm.C3 {
		return 0
	}
	if cm.C2 <= 0 {
		return math.Inf(1)
	}
	return math.Exp((cm.C1 - cm.C3) / cm.C2 * cm.Reuse * m * cm.Phi / float64(cm.N))
}

// BreakevenFull returns the densities 1 <= d <= n-1 where the full model
// says CGM (scheduling included) is at least as fast as LP at size m, as
// ranges [lo, hi].
func (cm *CostModel) BreakevenFull(m float64) [][2]int {
	var out [][2]int
	for d := 1; d < max(2, cm.N); d++ {
		if cm.CGM(float64(d), m) <= cm.LP(float64(d), m) {
			if len(out) > 0 && out[len(out)-1][1] == d-1 {
				out[len(out)-1][1] = d
			} else {
				out = append(out, [2]int{d, d})
			}
		}
	}
	return out
}

// solveIncreasing returns the largest x >= 1 with f(x) <= y for f
// increasing on [1, inf) (bisection).
func solveIncreasing(f func(float64) float64, y float64) float64 {
	if f(1) > y {
		return 0
	}
	lo, hi := 1.0, 2.0
	for f(hi) <= y && hi < 1e12 {
		lo, hi = hi, hi*2
	}
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if f(mid) <= y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// WriteBreakeven prints the fitted constants, the break-even densities by
// message size (eq. 5, eq. 6 and the full inequality) and, for every
// measured (d, size), which of LP and CGM was faster with scheduling
// included.
func WriteBreakeven(w io.Writer, cm *CostModel, recs []results.Record, markdown bool) error {
	fmt.Fprintf(w, "Break-even LP vs CGM (paper Section 5.1), %d ranks, schedule used %g time(s)\n", cm.N, cm.Reuse)
	fmt.Fprintf(w, "  one permutation: tau = %s us (± %.2g), phi = %.4g ns/B (± %.2g)  [%.0f MB/s]\n",
		fmtUs(cm.Tau), cm.TauSE*1e6, cm.Phi*1e9, cm.PhiSE*1e9, 1e-6/cm.Phi)
	fmt.Fprintf(w, "  LP:  T = A + C1 d M phi, A = %s us (± %.2g; the paper's n tau = %s us), C1 = %.3g (± %.2g)\n",
		fmtUs(cm.Alpha), cm.AlphaSE*1e6, fmtUs(float64(cm.N)*cm.Tau), cm.C1, cm.C1SE)
	fmt.Fprintf(w, "  CGM: T = G + C2 d n ln d + C3 d (tau + M phi), G = %s us (± %.2g; concatenation), C2 = %.3g ns (± %.2g), C3 = %.3g (± %.2g)\n",
		fmtUs(cm.G), cm.GSE*1e6, cm.C2*1e9, cm.C2SE*1e9, cm.C3, cm.C3SE)
	for _, name := range []string{"perm1", "LP", "CGM", "CGM sched"} {
		if f := cm.Fits[name]; f != nil {
			fmt.Fprintf(w, "    fit %-9s %d points, relative RSE %.1f%%, R^2 %.3f\n", name, f.N, 100*f.RSE, f.R2)
		}
	}
	if cm.C2 <= 0 || cm.C2 < 2*cm.C2SE {
		fmt.Fprintf(w, "  note: C2 is not resolved (%.3g ± %.2g ns): at n = %d the masking cost hides in the noise of the concatenation G, so eq. 5 and eq. 6 have no finite bound; measure more ranks or densities\n",
			cm.C2*1e9, cm.C2SE*1e9, cm.N)
	}
	small := cm.BreakevenSmall()
	fmt.Fprintf(w, "  small messages (eq. 5, d ln d <= tau_LP/C2; the paper's simplification, without G): CGM wins for d <= %.3g\n\n", small)

	var sizes []int
	for _, r := range recs {
		if r.Bench == BenchComm {
			if b, ok := paramInt(r, "bytes"); ok && !slices.Contains(sizes, b) {
				sizes = append(sizes, b)
			}
		}
	}
	slices.Sort(sizes)
	header := []string{"bytes", "eq. 6: d <=", "full model: CGM wins for d in"}
	var rows [][]string
	for _, b := range sizes {
		rng := cm.BreakevenFull(float64(b))
		s := "none"
		if len(rng) > 0 {
			s = ""
			for i, r := range rng {
				if i > 0 {
					s += ", "
				}
				s += fmt.Sprintf("[%d, %d]", r[0], r[1])
			}
		}
		eq6 := cm.BreakevenLarge(float64(b))
		e6 := fmt.Sprintf("%.3g", eq6)
		if eq6 >= float64(cm.N-1) {
			e6 = fmt.Sprintf("all (%s >= n-1)", e6)
		}
		rows = append(rows, []string{results.FormatBytes(float64(b)), e6, s})
	}
	if err := writeTable(w, header, rows, markdown); err != nil {
		return err
	}
	fmt.Fprintln(w)

	// Measured: LP comm vs CGM comm + scheduling.
	type key struct{ d, b int }
	lp, cg := map[key][]float64{}, map[key][]float64{}
	var ds []int
	for _, r := range recs {
		if r.Bench != BenchComm {
			continue
		}
		d, _ := paramInt(r, "d")
		b, _ := paramInt(r, "bytes")
		switch paramString(r, "scheduler") {
		case "LP":
			lp[key{d, b}] = append(lp[key{d, b}], r.Median)
		case "CGM":
			cg[key{d, b}] = append(cg[key{d, b}], r.Median+r.Derived["sched_s"]/cm.Reuse)
		}
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	fmt.Fprintln(w, "Measured: LP communication vs CGM communication + scheduling (ms); model predictions in brackets")
	header = []string{"d", "bytes", "LP", "CGM+sched", "faster"}
	rows = rows[:0]
	for _, d := range ds {
		for _, b := range sizes {
			l, c := lp[key{d, b}], cg[key{d, b}]
			if len(l) == 0 || len(c) == 0 {
				continue
			}
			win := "LP"
			if mean(c) <= mean(l) {
				win = "CGM"
			}
			rows = append(rows, []string{fmt.Sprint(d), results.FormatBytes(float64(b)),
				fmt.Sprintf("%s [%s]", fmtMs(mean(l)), fmtMs(cm.LP(float64(d), float64(b)))),
				fmt.Sprintf("%s [%s]", fmtMs(mean(c)), fmtMs(cm.CGM(float64(d), float64(b)))), win})
		}
	}
	return writeTable(w, header, rows, markdown)
}

func fmtUs(sec float64) string { return fmt.Sprintf("%.3g", sec*1e6) }

// Records turns the model into records: one BenchCostFit record with every
// constant in Derived, and one BenchBreak record per message size.
func (cm *CostModel) Records(sizes []int, meta results.Meta) []results.Record {
	one := func(v float64) results.Summary {
		return results.Summary{N: 1, Min: v, Median: v, Mean: v, Max: v, P90: v, P99: v, CI95: [2]float64{v, v}}
	}
	out := []results.Record{{
		Schema: results.SchemaVersion, Bench: BenchCostFit, Params: results.Params{"reuse": cm.Reuse},
		Ranks: cm.N, Unit: UnitSlope, Summary: one(cm.C2), Stop: results.StopFixed, Meta: meta,
		Derived: map[string]float64{
			"tau_s": cm.Tau, "tau_se_s": cm.TauSE, "phi_s_per_B": cm.Phi, "phi_se_s_per_B": cm.PhiSE,
			"alpha_s": cm.Alpha, "alpha_se_s": cm.AlphaSE, "C1": cm.C1, "C1_se": cm.C1SE,
			"G_s": cm.G, "G_se_s": cm.GSE, "C2_s": cm.C2, "C2_se_s": cm.C2SE, "C3": cm.C3, "C3_se": cm.C3SE,
			"breakeven_small_d": finite(cm.BreakevenSmall()),
		},
	}}
	for _, b := range sizes {
		full := 0.0
		if r := cm.BreakevenFull(float64(b)); len(r) > 0 {
			full = float64(r[len(r)-1][1])
		}
		out = append(out, results.Record{
			Schema: results.SchemaVersion, Bench: BenchBreak, Params: results.Params{"bytes": b, "reuse": cm.Reuse},
			Ranks: cm.N, Unit: results.UnitCount, Summary: one(full), Stop: results.StopFixed, Meta: meta,
			Derived: map[string]float64{"eq6_d": finite(cm.BreakevenLarge(float64(b))), "full_max_d": full},
		})
	}
	return out
}

// finite maps +Inf (no bound) to the largest float so records stay valid
// JSON.
func finite(v float64) float64 {
	if math.IsInf(v, 1) {
		return math.MaxFloat64
	}
	return v
}

// BreakevenRecords are cm's records (CostModel.Records) for the message
// sizes of the experiment-2 exchanges among recs (BenchComm), in the order
// they first appear: what 'sched breakeven' writes next to its tables.
func BreakevenRecords(cm *CostModel, recs []results.Record, meta results.Meta) []results.Record {
	var sizes []int
	for _, r := range recs {
		if r.Bench != BenchComm {
			continue
		}
		if b, ok := paramInt(r, "bytes"); ok && !slices.Contains(sizes, b) {
			sizes = append(sizes, b)
		}
	}
	return cm.Records(sizes, meta)
}

// Breakeven configures experiment 3 ('commcost sched breakeven'): the fit
// of experiment 2's records read from In or, without In, of a measurement
// run now with the embedded configuration, whose Methods default to LP and
// CGM, the two the fit compares. Its tagged fields are the subcommand's
// flags.
type Breakeven struct {
	CommConfig
	In    opts.Strings `flag:"in" value:"files" usage:"fit records of 'sched comm' from these JSON Lines files (comma list) instead of measuring now"`
	Reuse float64      `flag:"reuse" default:"1" usage:"times a schedule is used (scheduling cost is shared among uses; the paper assumes 1)"`
}

// breakevenMethods are the methods experiment 3 measures by default.
var breakevenMethods = []string{"LP", "CGM"}

// Texts are experiment 2's, with the methods the fit compares as the
// default of --methods.
func (b Breakeven) Texts() Texts {
	t := b.CommConfig.Texts()
	t.Defaults["methods"] = strings.Join(breakevenMethods, ",")
	return t
}

// MaxReuse bounds Reuse: a schedule used more often than this shares its
// cost among so many uses that the break-even it gives is the fit's
// rounding, and a value like 1e308 would overflow the records.
const MaxReuse = 1e9

// Validate checks Reuse and, without In, the measurement: experiment 2's
// configuration, with LP, CGM and the single-permutation times the fit
// needs. With In, the measurement's fields are not read.
func (b *Breakeven) Validate() error {
	if err := seconds("Reuse", b.Reuse, 1, "must be a number >= 1"); err != nil {
		return err
	}
	if b.Reuse > MaxReuse {
		return opts.Field("Reuse", b.Reuse, "must be at most %g uses of one schedule (beyond it the scheduling cost is nothing next to the rounding of the fit)", MaxReuse)
	}
	if len(b.In) > 0 {
		return nil
	}
	if err := b.CommConfig.Validate(); err != nil {
		return err
	}
	for _, m := range breakevenMethods {
		if len(b.Methods) > 0 && !slices.Contains(b.Methods, m) {
			return &opts.FieldError{Field: "Methods", Reason: "breakeven compares LP and CGM, so the list must include both"}
		}
	}
	if b.NoPerm1 {
		return opts.Badf("{NoPerm1}: breakeven needs the single-permutation times for tau and phi")
	}
	// The fits' needs (FitCostModel), refused before anything is
	// measured: tau and phi from single-permutation times at three or
	// more sizes, CGM's scheduling cost d n ln d from two or more
	// schedules of a density d >= 2 (schedulesAbove1).
	sizes := b.Sizes
	if len(sizes) == 0 {
		sizes = PaperCommSizes
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(sizes)))); distinct < 3 {
		return opts.Field("Sizes", &b.Sizes, "breakeven fits tau and phi to one permutation's times at three or more message sizes, and this is %d; accepted: three or more sizes, a list (16,1K,64K) or LO:HI spanning them (16:64K)", distinct)
	}
	if b.MatrixFile != "" || b.Matrix != nil {
		return opts.Badf("{MatrixFile}: breakeven fits CGM's scheduling cost, d n ln d, to two or more schedules of a density d >= 2, and a matrix file is one schedule; accepted: generated matrices ({Densities}, {Matrices})")
	}
	if len(b.Densities) > 0 {
		if k := b.schedulesAbove1(b.Densities); k < 2 {
			return opts.Field("Densities", &b.Densities, "breakeven fits CGM's scheduling cost, d n ln d, to two or more schedules of a density d >= 2, and these are %d (%d matrices per d); accepted: two or more d >= 2 (e.g. 2,3), or one with {Matrices} 2 or more", k, b.Matrices)
		}
	}
	return nil
}

// schedulesAbove1 is the number of CGM schedules of a density d >= 2 a
// measurement of densities ds times: one per matrix (Matrices per d).
func (b Breakeven) schedulesAbove1(ds []int) int {
	n := 0
	for _, d := range slices.Compact(slices.Sorted(slices.Values(ds))) {
		if d >= 2 {
			n++
		}
	}
	return n * max(b.Matrices, 1)
}

// CheckRanks refuses a world of n ranks the configuration does not fit
// (CommConfig.CheckRanks), and one whose default densities (no --d) give
// fewer than the two schedules of a d >= 2 the fit of CGM's scheduling
// cost needs: 2 ranks, and 3 with one matrix per d.
func (b Breakeven) CheckRanks(n int) error {
	if err := b.CommConfig.CheckRanks(n); err != nil {
		return err
	}
	if len(b.Densities) > 0 || b.Matrix != nil || n < 2 {
		return nil
	}
	if ds := DefaultCommDensities(n); b.schedulesAbove1(ds) < 2 {
		return opts.Badf("breakeven on %d ranks: the densities of %d ranks, d = %v, give %d schedules of a d >= 2 ({Matrices} %d), and the fit of CGM's scheduling cost, d n ln d, needs two or more; run it on 4 or more ranks, or on 3 with {Matrices} 2", n, n, ds, b.schedulesAbove1(ds), b.Matrices)
	}
	return nil
}

// Fit reads the records of In and fits the cost model to them (with
// Reuse). A torn final line costs that record only: warn is told, with the
// number of records kept. A file that cannot be read and records the fit
// cannot use are bad input naming In.
func (b *Breakeven) Fit(warn func(string)) (*CostModel, []results.Record, error) {
	var recs []results.Record
	var files []string            // files[i] is the file of recs[i]
	var first []int               // first[i] is the index of files[i]'s first record
	set := results.NewRecordSet() // a record read twice would be counted again
	for _, p := range b.In {
		r, lines, torn, err := results.ReadRecordsFileLines(p, results.ReadFactor)
		if err != nil {
			return nil, nil, opts.Item("In", p, "%v (want a JSON Lines file of commcost records)", err)
		}
		if torn != nil && warn != nil {
			warn(fmt.Sprintf("%v; using the %d complete records before it", torn, len(r)))
		}
		if err := set.Add(p, r, lines); err != nil {
			return nil, nil, opts.Item("In", p, "%v", err)
		}
		for range r {
			files, first = append(files, p), append(first, len(recs))
		}
		recs = append(recs, r...)
	}
	// The CGM column adds each exchange's scheduling time, derived from a
	// sched.schedule record: check it against that record, across files.
	if i, err := CheckSchedTimes(recs, true); err != nil {
		return nil, nil, opts.Item("In", files[i], "line %d: %v", recordLine(files[i], i-first[i]), err)
	}
	cm, err := FitCostModel(recs, b.Reuse)
	var fe *FitRecordError
	if errors.As(err, &fe) {
		line := func(i int) int { return recordLine(files[i], i-first[i]) }
		p := files[fe.Index]
		if fe.Ref < 0 {
			return nil, nil, opts.Item("In", p, "line %d: %s", line(fe.Index), fe.Msg)
		}
		other := ""
		if files[fe.Ref] != p {
			other = " of " + files[fe.Ref]
		}
		return nil, nil, opts.Item("In", p, "line %d: %s (line %d%s has ranks = %d)", line(fe.Index), fe.Msg, line(fe.Ref), other, fe.RefRanks)
	}
	if errors.Is(err, model.ErrNoRecords) {
		return nil, nil, &opts.FieldError{Field: "In", Reason: err.Error()}
	}
	// A constant the records fit at 0 or below is theirs, not the
	// machine's: bad input naming the files.
	var np *NotPositiveError
	if errors.As(err, &np) {
		return nil, nil, opts.Field("In", strings.Join(b.In, ","), "%v", err)
	}
	if errors.Is(err, model.ErrIllConditioned) {
		// The records are there but too few or too alike to determine the
		// constants: the files', as `commcost fit` reports it.
		return nil, nil, opts.Field("In", strings.Join(b.In, ","), "%v", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--in %s: %w", strings.Join(b.In, ","), err)
	}
	return cm, recs, nil
}

// missingRecords is a break-even fit's error for an input without the
// records of one of its fits: it is model.ErrNoRecords, as an input of
// `commcost fit` without its pattern's records.
type missingRecords string

func (m missingRecords) Error() string { return string(m) }

// Is reports model.ErrNoRecords.
func (missingRecords) Is(target error) bool { return target == model.ErrNoRecords }

// tooFewRecords is a break-even fit's error for an input with the records
// of a fit but too few of them to determine it: it is
// model.ErrIllConditioned, as `commcost fit` on one message size.
type tooFewRecords string

func (m tooFewRecords) Error() string { return string(m) }

// Is reports model.ErrIllConditioned.
func (tooFewRecords) Is(target error) bool { return target == model.ErrIllConditioned }

// recordLine is the 1-based line of the k-th record of the records file
// at path: the k-th line that is not blank, as results.ReadJSONL counts
// them. It reads the file again, so it is for messages only; 0 when the
// file no longer has that record.
func recordLine(path string, k int) int {
	f, err := results.OpenRegular(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		text, err := br.ReadSlice('\n')
		blank := len(bytes.TrimSpace(text)) == 0
		for err == bufio.ErrBufferFull {
			// A long line: its rest decides nothing but where it ends.
			blank = false
			text, err = br.ReadSlice('\n')
		}
		if !blank {
			if k == 0 {
				return line
			}
			k--
		}
		if err != nil {
			return 0
		}
	}
}

// Run measures experiment 2 with the embedded configuration on every rank
// of c (CommConfig.Run: rank 0's records to emit, the tables on w),
// then on rank 0 fits the model to those records and reports it
// (CostModel.Report). Collective.
func (b *Breakeven) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, w io.Writer, markdown bool) error {
	cfg := b.CommConfig
	if len(cfg.Methods) == 0 {
		cfg.Methods = breakevenMethods
	}
	recs, err := cfg.run(c, meta, emit)
	if err != nil || c.Rank() != 0 {
		return err
	}
	if err := WriteCommTables(w, recs, markdown); err != nil {
		return err
	}
	cm, err := FitCostModel(recs, b.Reuse)
	if err != nil {
		return err
	}
	meta.Seed = int64(cfg.Seed)
	return cm.Report(w, recs, meta, emit, markdown)
}

// Report writes the model's records for the exchanges of recs
// (BreakevenRecords) to emit, nil for none, and prints the fit
// (WriteBreakeven) on w.
func (cm *CostModel) Report(w io.Writer, recs []results.Record, meta results.Meta, emit func(results.Record) error, markdown bool) error {
	var errs []error
	if emit != nil {
		for _, r := range BreakevenRecords(cm, recs, meta) {
			errs = append(errs, emit(r))
		}
	}
	errs = append(errs, WriteBreakeven(w, cm, recs, markdown))
	return errors.Join(errs...)
}
