package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{
		name:    "fit",
		summary: "fit a cost model to a JSON Lines file (fit -h lists the models)",
		run:     runFit,
	})
}

const fitUsage = `usage: commcost fit MODEL FILE.jsonl [flags]

MODEL is one of: %s.
Reads the records of FILE.jsonl the model is fitted from (other benches are
ignored), fits on per-point medians with relative weights by QR least
squares, and prints parameters with standard errors and 95%% confidence
intervals, the fit quality and held-out validation; --format json prints the
model in the form 'commcost predict' reads. Records without the needed
pattern exit with status 2; a design that cannot determine the model (too
few levels, ill-conditioned) exits with status 1 and names what is missing.

flags:
`

// fitFlags are the options of commcost fit.
type fitFlags struct {
	format      string
	plot        string
	holdout     string
	weighting   string
	trim        float64
	minBytes    string
	maxBytes    string
	op          string
	network     string
	impl        string
	packetBytes string
	maxSegments int
	split       string
	hopSec      float64
}

func (f *fitFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "table", "output: table or json")
	fs.StringVar(&f.plot, "plot", "", "write measured points and fitted curves to this image (.png, .svg, .pdf)")
	fs.StringVar(&f.holdout, "holdout", "every:4", "cross-validation: none, loo (leave one out) or every:N (hold out one point in N)")
	fs.StringVar(&f.weighting, "weighting", "relative", "least-squares weights: relative (1/y), none, or ci (1/sigma from the records' CI95)")
	fs.Float64Var(&f.trim, "trim", 5, "drop points more than this many robust SDs above the fit (one-sided, counted); 0 disables")
	fs.StringVar(&f.minBytes, "min-bytes", "", "fit only message sizes >= this (e.g. 64K)")
	fs.StringVar(&f.maxBytes, "max-bytes", "", "fit only message sizes <= this (e.g. 4M)")
	fs.StringVar(&f.op, "op", "", "trilinear: k-k-access op, read or write (default: the only one present)")
	fs.StringVar(&f.network, "network", "", "trilinear: emulated network of the k-k-access records, e.g. 'BF(2)' (default: the only one present)")
	fs.StringVar(&f.impl, "impl", "", "twolevel: aggregate implementation, mpi or textbook (default: the only one present)")
	fs.StringVar(&f.packetBytes, "packet-bytes", "", "logp, postal: LogP packet size (default: the smallest PRTT size)")
	fs.IntVar(&f.maxSegments, "max-segments", 4, "piecewise: most segments to consider")
	fs.StringVar(&f.split, "split", "", "trilinear: data volumes D (bytes, comma list) for the optimal split k0, l0 (paper 000, section 7)")
	fs.Float64Var(&f.hopSec, "hop-s", 0, "twolevel: per-hop time t_h in seconds for the aggregate cost table")
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (commcost fit hockney run.jsonl --plot x.png),
// which the flag package alone stops at. After "--" everything is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, true); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// options turns the flags into model options, naming the flag on error.
func (f *fitFlags) options() (model.Options, model.Holdout, error) {
	var o model.Options
	var h model.Holdout
	if f.format != "table" && f.format != "json" {
		return o, h, usagef("--format %s: want table or json", f.format)
	}
	w, err := model.ParseWeighting(f.weighting)
	if err != nil {
		return o, h, usagef("--weighting %s: want relative, none or ci", f.weighting)
	}
	o.Weighting = w
	if h, err = model.ParseHoldout(f.holdout); err != nil {
		return o, h, usagef("--holdout %s: want none, loo or every:N with N >= 2", f.holdout)
	}
	switch {
	case math.IsNaN(f.trim) || f.trim < 0:
		return o, h, usagef("--trim %g: want a number of standard deviations >= 0 (0 disables trimming)", f.trim)
	case f.trim == 0:
		o.TrimSigma = -1
	default:
		o.TrimSigma = f.trim
	}
	size := func(name, s string) (float64, error) {
		if s == "" {
			return 0, nil
		}
		n, err := parseSize(s)
		if err != nil {
			return 0, usagef("--%s %s: %v", name, s, err)
		}
		return float64(n), nil
	}
	if o.MinBytes, err = size("min-bytes", f.minBytes); err != nil {
		return o, h, err
	}
	if o.MaxBytes, err = size("max-bytes", f.maxBytes); err != nil {
		return o, h, err
	}
	if o.MaxBytes > 0 && o.MaxBytes < o.MinBytes {
		return o, h, usagef("--max-bytes %s is below --min-bytes %s", f.maxBytes, f.minBytes)
	}
	if o.PacketBytes, err = size("packet-bytes", f.packetBytes); err != nil {
		return o, h, err
	}
	switch f.op {
	case "", "read", "write":
		o.Op = f.op
	default:
		return o, h, usagef("--op %s: want read or write", f.op)
	}
	o.Network = f.network
	switch f.impl {
	case "", "mpi", "textbook":
		o.Impl = f.impl
	default:
		return o, h, usagef("--impl %s: want mpi or textbook", f.impl)
	}
	if f.maxSegments < 1 || f.maxSegments > 10 {
		return o, h, usagef("--max-segments %d: want 1 to 10", f.maxSegments)
	}
	o.MaxSegments = f.maxSegments
	if math.IsNaN(f.hopSec) || math.IsInf(f.hopSec, 0) || f.hopSec < 0 {
		return o, h, usagef("--hop-s %g: want a time in seconds >= 0", f.hopSec)
	}
	return o, h, nil
}

// splitVolumes parses --split.
func (f *fitFlags) splitVolumes(kind string) ([]float64, error) {
	if f.split == "" {
		return nil, nil
	}
	if kind != "trilinear" {
		return nil, usagef("--split applies to the trilinear model, not %s", kind)
	}
	var out []float64
	for _, s := range strings.Split(f.split, ",") {
		n, err := parseSize(s)
		if err != nil || n == 0 {
			return nil, usagef("--split %s: want positive data volumes in bytes, e.g. 10000 or 4K,64K", f.split)
		}
		out = append(out, float64(n))
	}
	return out, nil
}

// readRecords reads a JSON Lines file named by a positional argument; a
// file cut off mid-line (an interrupted run) is accepted with a warning.
func readRecords(path string, stderr io.Writer) ([]results.Record, error) {
	recs, err := results.ReadJSONLFile(path)
	if err != nil {
		if errors.Is(err, results.ErrTruncated) && len(recs) > 0 {
			fmt.Fprintf(stderr, "commcost: warning: %v; using the %d complete records\n", err, len(recs))
			return recs, nil
		}
		return nil, usagef("FILE %s: %v (want a JSON Lines file of commcost records)", path, err)
	}
	return recs, nil
}

func runFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fit", stderr)
	var f fitFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), fitUsage, strings.Join(model.Kinds(), ", "))
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("fit wants MODEL and FILE.jsonl, got %d argument(s); usage: commcost fit %s FILE.jsonl [flags]",
			len(pos), strings.Join(model.Kinds(), "|"))
	}
	kind, path := pos[0], pos[1]
	if !isKind(kind) {
		return usagef("MODEL %q: want one of %s", kind, strings.Join(model.Kinds(), ", "))
	}
	opt, hold, err := f.options()
	if err != nil {
		return err
	}
	volumes, err := f.splitVolumes(kind)
	if err != nil {
		return err
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return err
		}
	}
	recs, err := readRecords(path, stderr)
	if err != nil {
		return err
	}
	m, err := model.Fit(kind, recs, opt)
	if err != nil {
		if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) {
			return usagef("FILE %s: %v", path, err)
		}
		return fmt.Errorf("fit %s: %w", kind, err)
	}
	var val *model.Validation
	var valNote string
	if hold != (model.Holdout{}) {
		val, err = model.CrossValidate(kind, recs, opt, hold)
		if err != nil {
			explicit := false
			fs.Visit(func(fl *flag.Flag) { explicit = explicit || fl.Name == "holdout" })
			if explicit {
				return fmt.Errorf("--holdout %s: %w", f.holdout, err)
			}
			val, valNote = nil, "cross-validation skipped: "+err.Error()
		}
	}
	var splits []*model.Split
	if len(volumes) > 0 {
		// A fit without an interior optimum is a finding about the
		// machine, not a failure of the fit: report it next to the table.
		tr := m.(*model.Trilinear)
		for _, d := range volumes {
			s, err := model.OptimalSplit(tr, d)
			if err != nil {
				fmt.Fprintf(stderr, "commcost: --split %g: %v\n", d, err)
				continue
			}
			splits = append(splits, s)
		}
	}
	// Everything is computed before anything is written, so a failure
	// leaves neither a partial table nor a plot behind.
	var out bytes.Buffer
	switch f.format {
	case "json":
		if err := writeFitJSON(&out, m, val, splits); err != nil {
			return err
		}
	default:
		if err := writeFitTable(&out, kind, path, m, val, valNote, splits, recs, f.hopSec); err != nil {
			return err
		}
	}
	if f.plot != "" {
		title := fmt.Sprintf("commcost fit %s %s: measured (points), model (lines)", kind, filepath.Base(path))
		if err := model.Plot(m, recs, f.plot, title); err != nil {
			return fmt.Errorf("--plot %s: %w", f.plot, err)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}

func isKind(k string) bool {
	for _, x := range model.Kinds() {
		if x == k {
			return true
		}
	}
	return false
}

// checkPlotPath refuses a plot file the plotter cannot write, before
// anything is fitted.
func checkPlotPath(p string) error {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".svg", ".pdf", ".eps", ".jpg", ".jpeg", ".tif", ".tiff":
	default:
		return usagef("--plot %s: want a file name ending in .png, .svg, .pdf, .eps, .jpg or .tif", p)
	}
	dir := filepath.Dir(p)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usagef("--plot %s: directory %s does not exist", p, dir)
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return usagef("--plot %s: is a directory", p)
	}
	return nil
}

// writeFitJSON prints model.Marshal's form, with the optimal splits added
// under "splits" (model.Unmarshal ignores the extra key).
func writeFitJSON(w io.Writer, m model.Model, val *model.Validation, splits []*model.Split) error {
	data, err := model.Marshal(m, val)
	if err != nil {
		return err
	}
	if len(splits) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		sp, err := json.Marshal(splits)
		if err != nil {
			return err
		}
		obj["splits"] = sp
		if data, err = json.MarshalIndent(obj, "", "  "); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// fmtValue formats a parameter value in a unit people read: seconds as µs,
// seconds per byte as ns/B, others with four significant digits.
func fmtValue(v float64, unit string) (string, string) {
	switch unit {
	case "s":
		return fmtNum(v * 1e6), "us"
	case "s/B":
		return fmtNum(v * 1e9), "ns/B"
	}
	return fmtNum(v), unit
}

// fmtNum prints four significant digits, without an exponent for values
// people read as plain numbers (74580, not 7.458e+04).
func fmtNum(v float64) string {
	if a := math.Abs(v); a >= 1e4 && a < 1e12 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// renderTable draws one table with tablewriter, headers as given.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	return renderRightAligned(w, header, rows, 0)
}

// renderRightAligned is renderTable with the first numeric columns
// right-aligned, as results' record tables align numbers.
func renderRightAligned(w io.Writer, header []string, rows [][]string, numeric int) error {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i < numeric {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

func paramRows(ps []model.Param) [][]string {
	var rows [][]string
	for _, p := range ps {
		v, u := fmtValue(p.Value, p.Unit)
		se, _ := fmtValue(p.SE, p.Unit)
		lo, _ := fmtValue(p.CI95[0], p.Unit)
		hi, _ := fmtValue(p.CI95[1], p.Unit)
		ci := "[" + lo + ", " + hi + "]"
		if p.Fixed {
			se, ci = "-", "(fixed)"
		}
		rows = append(rows, []string{p.Name, v, se, ci, u})
	}
	return rows
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" }

func writeQuality(w io.Writer, q model.Quality) {
	rse := strconv.FormatFloat(q.RSE, 'g', 3, 64) + " " + q.RSEUnit
	if q.RSEUnit == "relative" {
		rse = pct(q.RSE) + " (relative)"
	}
	fmt.Fprintf(w, "fit: %d points, %d dof, RSE %s, adj R^2 %.6f, cond %.3g, weighting %s, trimmed %d\n",
		q.N, q.DoF, rse, q.AdjR2, q.Cond, q.Weighting, q.Trimmed)
	if q.Trimmed > 0 {
		fmt.Fprintf(w, "trimmed (one-sided outliers): %s\n", strings.Join(q.TrimmedPoints, "; "))
	}
}

// writeFitTable prints the parameter table, the model's own tables, the
// fit quality, the validation and the notes.
func writeFitTable(w io.Writer, kind, path string, m model.Model, val *model.Validation, valNote string,
	splits []*model.Split, recs []results.Record, hopSec float64) error {
	fmt.Fprintf(w, "%s fit of %s\n", kind, filepath.Base(path))
	switch m.(type) {
	case *model.Trilinear, *model.PiecewiseTrilinear: // Table 1 layout below instead
	default:
		if err := renderTable(w, []string{"parameter", "value", "SE", "95% CI", "unit"}, paramRows(m.Params())); err != nil {
			return err
		}
	}
	switch t := m.(type) {
	case *model.Piecewise:
		var rows [][]string
		for i, s := range t.Segments {
			ts, _ := fmtValue(s.Ts.Value, "s")
			tw, _ := fmtValue(s.Tw.Value, "s/B")
			rows = append(rows, []string{strconv.Itoa(i + 1), results.FormatBytes(s.FromBytes), results.FormatBytes(s.ToBytes), ts, tw,
				strconv.Itoa(s.Fit.N), pct(s.Fit.RSE)})
		}
		fmt.Fprintln(w, "segments (breakpoints chosen by penalised BIC):")
		if err := renderTable(w, []string{"segment", "from", "to", "t_s us", "t_w ns/B", "points", "RSE"}, rows); err != nil {
			return err
		}
	case *model.Trilinear:
		label := "kkaccess"
		if t.Op != "" {
			label += " " + t.Op
		}
		fmt.Fprintln(w, "coefficients in the layout of paper 000, Table 1 (us; c7, c5, c4, c2 per byte):")
		h, rows := model.TrilinearTable([]string{label}, []*model.Trilinear{t})
		if err := renderTable(w, h, rows); err != nil {
			return err
		}
		fmt.Fprintf(w, "levels: k = %s; l = %s; r = %s\n", joinF(t.KLevels), joinF(t.LLevels), joinF(t.RLevels))
		if len(splits) > 0 {
			var rows [][]string
			for _, s := range splits {
				p, _ := fmtValue(s.PredictedSec, "s")
				pi, _ := fmtValue(s.PredictedIntSec, "s")
				rows = append(rows, []string{results.FormatBytes(s.DataBytes),
					fmt.Sprintf("%.4g ± %.2g", s.K0, s.K0SE), fmt.Sprintf("%.4g ± %.2g", s.L0, s.L0SE), p,
					strconv.Itoa(s.KInt), strconv.FormatFloat(s.LInt, 'g', 6, 64), pi})
			}
			fmt.Fprintln(w, "optimal split at r = 1 (paper 000, section 7: k0 = sqrt(a2/a1 D), l0 = sqrt(a1/a2 D)):")
			if err := renderTable(w, []string{"D bytes", "k0", "l0 bytes", "T us", "k (whole)", "l bytes", "T us (whole)"}, rows); err != nil {
				return err
			}
		}
	case *model.PiecewiseTrilinear:
		var labels []string
		var fits []*model.Trilinear
		for _, s := range t.Segments {
			labels = append(labels, "l "+results.FormatBytes(s.FromBytes)+".."+results.FormatBytes(s.ToBytes))
			fits = append(fits, s.Model)
		}
		fmt.Fprintf(w, "%s: one trilinear fit per packet-size regime (breakpoints chosen by penalised BIC); coefficients in the layout of paper 000, Table 1 (us; c7, c5, c4, c2 per byte):\n",
			strings.TrimSpace("kkaccess "+t.Op))
		h, rows := model.TrilinearTable(labels, fits)
		if err := renderTable(w, h, rows); err != nil {
			return err
		}
		var srows [][]string
		for i, s := range t.Segments {
			q := s.Model.Fit
			srows = append(srows, []string{strconv.Itoa(i + 1), results.FormatBytes(s.FromBytes), results.FormatBytes(s.ToBytes),
				"k = " + joinF(s.Model.KLevels) + "; r = " + joinF(s.Model.RLevels), strconv.Itoa(q.N), pct(q.RSE), fmt.Sprintf("%.3g", q.Cond)})
		}
		if err := renderTable(w, []string{"segment", "l from", "l to", "levels", "cells", "RSE", "cond"}, srows); err != nil {
			return err
		}
	case *model.Hyperbolic:
		if len(t.Curves) > 0 {
			var rows [][]string
			for _, c := range t.Curves {
				a, _ := fmtValue(c.A.Value, "s")
				b, _ := fmtValue(c.B.Value, "s/B")
				rows = append(rows, []string{c.Pattern, strconv.Itoa(c.N), a, b, pct(c.Fit.RSE)})
			}
			fmt.Fprintf(w, "per-n fits T(x; a(n), b(n)) of %s (paper 001, rule 4):\n", t.Source)
			if err := renderTable(w, []string{"pattern", "n", "a(n) us", "b(n) ns/B", "RSE"}, rows); err != nil {
				return err
			}
			al, _ := fmtValue(t.AcLimit, "s")
			fmt.Fprintf(w, "a_c: paper's limit quotient at the largest n %s us; change over the last node %s (converged: %v)\n",
				al, pct(t.AcChange), t.AcConverged)
		}
	case *model.TwoLevel:
		if err := writeAggregateComparison(w, t, recs, hopSec); err != nil {
			return err
		}
	}
	writeQuality(w, m.Quality())
	if val != nil {
		fmt.Fprintf(w, "held-out (%s): %d points predicted from %d, median relative error %s, p95 %s, max %s\n",
			val.Scheme, val.NTest, val.NTrain, pct(val.MedianRelErr), pct(val.P95RelErr), pct(val.MaxRelErr))
		if val.Failed > 0 {
			fmt.Fprintf(w, "held-out: %d refits failed: %s\n", val.Failed, val.FailReason)
		}
	}
	if valNote != "" {
		fmt.Fprintln(w, valNote)
	}
	for _, n := range m.Quality().Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// writeAggregateComparison prints the measured aggregate operations beside
// the two-level prediction and paper 003's cost table on three topologies.
func writeAggregateComparison(w io.Writer, t *model.TwoLevel, recs []results.Record, hopSec float64) error {
	models := []model.Model{t}
	heads := []string{"two-level"}
	for _, topo := range model.Topologies {
		tab, err := model.TableFromTwoLevel(t, topo, hopSec)
		if err != nil {
			return err
		}
		models = append(models, tab)
		heads = append(heads, topo)
	}
	var sel []results.Record
	for _, r := range recs {
		if s, _ := r.Params["impl"].(string); r.Bench == "aggregate" && s == t.Impl {
			sel = append(sel, r)
		}
	}
	cmp := model.Compare(t, sel)
	var rows [][]string
	for _, c := range cmp {
		mv, _ := fmtValue(c.Measured, "s")
		row := []string{c.Instance.Str("op"), strconv.Itoa(c.Instance.Ranks), fmtParamBytes(c.Instance), mv}
		for _, m := range models {
			v, err := m.Predict(c.Instance)
			if err != nil {
				row = append(row, "-")
				continue
			}
			s, _ := fmtValue(v, "s")
			row = append(row, s)
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "aggregate operations (impl %s), measured vs predicted, us; t_s, t_w from this fit, t_h = %g s (paper 003 cost table):\n", t.Impl, hopSec)
	return renderTable(w, append([]string{"op", "p", "bytes", "measured"}, heads...), rows)
}

func fmtParamBytes(in model.Instance) string {
	b, err := in.Num("bytes")
	if err != nil {
		return "-"
	}
	return results.FormatBytes(b)
}

func joinF(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ", ")
}
