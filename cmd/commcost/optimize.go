package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// commcost optimize: the optimal split of paper 000, section 7. An access
// to D bytes is cut into k packets of l = D/k bytes; with r = 1 the
// trilinear model reduces to T(k, l, 1) = a3 kl + a2 l + a1 k + a0, whose
// minimum along kl = D is at
//
//	k0 = sqrt(a2/a1 * D),  l0 = sqrt(a1/a2 * D)
//
// (model.OptimalSplit). Without an interior optimum (a1 <= 0 or a2 <= 0,
// as on shared memory, where the per-byte cost does not depend on the
// split) the best whole-packet split is an end of the k range
// (model.BestSplit), reported as such. The subcommand fits the model,
// measures the k-k-access at r = 1 for k around the optimum and sets
// measured against predicted, the curve of the paper's Figure 13.

const (
	defaultOptCalK    = "1,2,4,8"
	defaultOptCalL    = "64,1K,16K"
	defaultOptCalR    = "0.5,1"
	defaultOptOp      = "read"
	defaultOptMaxTime = 1.0 // seconds per point, as kkaccess

	// optSpan: the sweep measures round(max(k0, 1) * 2^i) for i = -optSpan..optSpan,
	// a factor of 8 either side of the optimum, where Figure 13's curve has
	// clearly risen on both sides.
	optSpan = 3
	// maxPackets is the largest send hot spot patterns.KKAccess accepts:
	// its sequence numbers carry the packet index in 16 bits.
	maxPackets = 1<<16 - 1
	// paperIntBytes: the paper's D is counted in integers; 4 bytes each.
	paperIntBytes = 4

	benchOptimize  = "optimize"
	counterVolume  = "volume_bytes" // k l: the bytes actually accessed
	derivedPred    = "predicted_s"
	derivedPredErr = "pred_error"
)

func init() {
	register(command{name: "optimize", summary: "paper 000 sec. 7: optimal split k0, l0 of D bytes from the trilinear model, measured around it (Fig. 13)", run: runOptimize})
}

const optimizeUsage = `usage: commcost optimize --D BYTES [flags]   (under mpirun, or --backend local --np N)

The optimal split of paper 000, section 7 (Figure 13): an access to D bytes
sent as k packets of l = D/k bytes by every rank (r = 1) costs, by the
trilinear k-k-access model, T(k, l, 1) = a3 kl + a2 l + a1 k + a0, which
is least at

  k0 = sqrt(a2/a1 * D),  l0 = sqrt(a1/a2 * D).

optimize gets the model from --fit FILE (kkaccess records) or else measures
a calibration sweep first (--cal-k x --cal-l x --cal-r, written as ordinary
kkaccess records, which 'optimize --fit' and 'fit trilinear' read back),
prints k0 and l0 with standard errors, then measures k packets of
round(D/k) bytes at r = 1 for k = 1, the whole-packet optimum and
round(max(k0, 1) * 2^i), i = -3..3 (or --k), and compares measured with
predicted. A model with a1 <= 0 or a2 <= 0 has no interior optimum: T is
then monotone in k and the best split is k = 1 (or the largest k), which
the report says and the sweep tests.

Records: kkaccess (the calibration) and optimize (one per k; params k, l,
r, op, d_bytes; counter volume_bytes = k l; derived predicted_s and
pred_error = predicted/measured - 1). With --format table or markdown the
report follows the tables on stdout; with jsonl, csv or gobench it goes to
stderr so stdout stays machine-readable.

flags:
`

type optFlags struct {
	patternFlags
	dataBytes int
	fitFile   string
	calK      []int
	calL      []int
	calR      []float64
	ks        []int // --k; nil: around k0
	op        patterns.AccessOp
	distinct  bool
	plot      string
}

func parseOptimize(args []string, stderr io.Writer) (*optFlags, error) {
	fs := newFlagSet("optimize", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), optimizeUsage)
		fs.PrintDefaults()
	}
	var f optFlags
	f.registerPattern(fs, patternSpec{name: "optimize", sync: true, seed: true, warmupReps: true, maxTime: defaultOptMaxTime})
	d := fs.String("D", "", "data volume D in `bytes` each rank accesses (required): 40000, 40K or 1M; K = 1024. The paper's D = 10000 integers is 40000 bytes")
	fs.StringVar(&f.fitFile, "fit", "", "JSON Lines `file` of kkaccess records (e.g. from 'commcost kkaccess --out') to fit the model to, instead of a calibration sweep")
	calK := fs.String("cal-k", defaultOptCalK, "calibration sweep: send hot spots k, a list or a power-of-two range (at least 2 levels)")
	calL := fs.String("cal-l", defaultOptCalL, "calibration sweep: packet sizes l in bytes, a list or a power-of-two range (at least 2 levels)")
	calR := fs.String("cal-r", defaultOptCalR, "calibration sweep: portions r of accessing ranks, each in (0, 1] (at least 2 levels)")
	ks := fs.String("k", "", "send hot spots to measure, a list or a power-of-two range (default: 1, the whole-packet optimum and round(max(k0, 1) * 2^i), i = -3..3); clipped to [1, D]")
	op := fs.String("op", defaultOptOp, "access kind of the model and the measurement: read or write")
	fs.BoolVar(&f.distinct, "distinct", false, "the measured accesses go to k distinct ranks (paper 000, section 7: distinct memory modules); k above ranks-1 is dropped. The calibration sweep uses random permutations either way")
	fs.StringVar(&f.plot, "plot", "", "draw Figure 13 (measured medians with 95% CI, model T(k, D/k, 1), log2 k axis) to this `file` (.png, .svg, .pdf)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	const dForm = "a positive data volume in bytes such as 40000 (the paper's 10000 integers), 40K or 1M"
	if !f.set["D"] {
		return nil, usagef("--D is required: %s", dForm)
	}
	n, err := parseSize(*d)
	if err != nil {
		return nil, usagef("--D %s: %v; want %s", *d, err, dForm)
	}
	if n < 1 {
		return nil, usagef("--D %s: want %s", *d, dForm)
	}
	f.dataBytes = n
	if f.op, err = patterns.ParseAccessOp(*op); err != nil {
		return nil, usagef("--op %s: accepted values are read and write (one of them)", *op)
	}
	if *ks != "" {
		if f.ks, err = parseIntGrid("k", *ks, 1); err != nil {
			return nil, err
		}
		for _, k := range f.ks {
			if k > maxPackets {
				return nil, usagef("--k %s: %d packets is above the most a k-k-access sends (%d)", *ks, k, maxPackets)
			}
		}
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return nil, err
		}
	}
	if f.fitFile != "" {
		// The file is read on rank 0 once the ranks are up (runOptimize);
		// calibration flags given with it would be silently ignored.
		for _, name := range []string{"cal-k", "cal-l", "cal-r"} {
			if f.set[name] {
				return nil, usagef("--%s: the calibration sweep is not measured with --fit %s; give one or the other", name, f.fitFile)
			}
		}
		return &f, nil
	}
	if f.calK, err = parseIntGrid("cal-k", *calK, 1); err != nil {
		return nil, err
	}
	if f.calL, err = parseIntGrid("cal-l", *calL, 0); err != nil {
		return nil, err
	}
	if f.calR, err = parseFloatList("cal-r", *calR, portion, "(0, 1]"); err != nil {
		return nil, err
	}
	for _, k := range f.calK {
		if k > maxPackets {
			return nil, usagef("--cal-k %s: %d packets is above the most a k-k-access sends (%d)", *calK, k, maxPackets)
		}
	}
	if levels := len(slices.Compact(slices.Sorted(slices.Values(f.calR)))); len(f.calK) < 2 || len(f.calL) < 2 || levels < 2 || len(f.calK)*len(f.calL)*levels <= 8 {
		return nil, usagef("--cal-k/--cal-l/--cal-r: the trilinear fit needs at least 2 levels of each and more than 8 cells; have %d x %d x %d (e.g. --cal-k 1,2,4,8 --cal-l 64,1K,16K --cal-r 0.5,1)",
			len(f.calK), len(f.calL), levels)
	}
	return &f, nil
}

// optModel is rank 0's model and optimum; the other ranks get k0 and the
// whole-packet k by broadcast (bcastOptimum).
type optModel struct {
	tr     *model.Trilinear
	split  *model.Split
	source string // where the model came from, for the report
}

// fitOptimum fits the trilinear model to recs (kkaccess of op) and finds
// the optimal split of dataBytes. A failure of either is returned as is:
// the caller decides whether it is bad input.
func fitOptimum(recs []results.Record, op patterns.AccessOp, dataBytes int) (*model.Trilinear, *model.Split, error) {
	tr, err := model.FitTrilinear(recs, model.Options{Op: op.String()})
	if err != nil {
		return nil, nil, fmt.Errorf("trilinear fit: %w", err)
	}
	s, err := model.BestSplit(tr, float64(dataBytes), maxPackets)
	if err != nil {
		return tr, nil, err
	}
	return tr, s, nil
}

// fitOptimumFile is fitOptimum on the records of --fit. An unreadable file
// or one without kkaccess records of op is bad input (exit 2); a design
// that cannot determine the model is a finding about the records (exit 1),
// as for 'commcost fit'.
func fitOptimumFile(path string, op patterns.AccessOp, dataBytes int) (*optModel, error) {
	recs, err := results.ReadJSONLFile(path)
	if err != nil && !(errors.Is(err, results.ErrTruncated) && len(recs) > 0) {
		return nil, usagef("--fit %s: %v (want a JSON Lines file of kkaccess records, e.g. from 'commcost kkaccess --out FILE')", path, err)
	}
	tr, s, err := fitOptimum(recs, op, dataBytes)
	if err != nil {
		if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) {
			return nil, usagef("--fit %s: %v (measure them with: commcost kkaccess --op %s --out FILE)", path, err, op)
		}
		return nil, fmt.Errorf("--fit %s: %w", path, err)
	}
	return &optModel{tr: tr, split: s, source: filepath.Base(path) + " (--fit)"}, nil
}

// bcastOptimum sends k0 and the whole-packet k from rank 0, whose m must be
// set, to every rank (collective). It is the plain-communicator analogue of
// emulate.BcastSplit: the ranks need only what decides which k-k-accesses
// they run.
func bcastOptimum(c mpi.Comm, m *optModel) (k0 float64, kInt int, err error) {
	v := make([]float64, 2)
	if c.Rank() == 0 {
		v[0], v[1] = m.split.K0, float64(m.split.KInt)
	}
	if err := mpi.BcastFloat64s(c, v, 0); err != nil {
		return 0, 0, err
	}
	return v[0], int(v[1]), nil
}

// splitKs is the set of send hot spots the sweep measures: asked when given,
// else {1, kInt} and round(max(k0, 1) * 2^i) for i = -optSpan..optSpan; clipped to
// [1, min(D, maxPackets)], without repeats, increasing.
func splitKs(asked []int, k0 float64, kInt, dataBytes int) []int {
	ks := slices.Clone(asked)
	if len(ks) == 0 {
		ks = append(ks, 1, kInt)
		// Centred on k0, but at least on 1: with k0 below one packet the
		// curve still shows how more packets cost.
		for i := -optSpan; i <= optSpan; i++ {
			ks = append(ks, int(math.Round(math.Ldexp(max(k0, 1), i))))
		}
	}
	hi := min(dataBytes, maxPackets)
	for i, k := range ks {
		ks[i] = min(max(k, 1), hi)
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// splitDistinct keeps the k a rank can send to k distinct other ranks
// (k <= p-1) and returns the others separately.
func splitDistinct(ks []int, p int) (kept, dropped []int) {
	for _, k := range ks {
		if k <= p-1 {
			kept = append(kept, k)
		} else {
			dropped = append(dropped, k)
		}
	}
	return kept, dropped
}

// packetBytes is l = round(D/k), at least 1 byte.
func packetBytes(dataBytes, k int) int {
	return max(1, int(math.Round(float64(dataBytes)/float64(k))))
}

// optPoint is one measured split.
type optPoint struct {
	k, l      int
	sum       results.Summary
	predicted float64 // seconds; T(k, l, 1)
}

func runOptimize(args []string, stdout, stderr io.Writer) error {
	f, err := parseOptimize(args, stderr)
	if err != nil {
		return err
	}
	// Rank 0's state, filled in rankCheck (--fit) or after the calibration
	// sweep; only rank 0 touches it (the local backend's ranks are
	// goroutines of this process). The report is printed after runMeasured.
	var m *optModel
	var report bytes.Buffer
	rankCheck := func(c mpi.Comm) error {
		rules := []rankRule{func(p int) error {
			if p < 2 {
				return usagef("optimize needs at least 2 ranks, got %d (a rank does not access itself)", p)
			}
			return nil
		}}
		if f.distinct && len(f.ks) > 0 {
			rules = append(rules, func(p int) error {
				if kept, _ := splitDistinct(splitKs(f.ks, 0, 0, f.dataBytes), p); len(kept) == 0 {
					return usagef("--k %s with --distinct: every k is above ranks-1 = %d (k distinct targets per rank with %d ranks)", joinInts(f.ks), p-1, p)
				}
				return nil
			})
		}
		if err := checkRanks(rules...)(c); err != nil {
			return err
		}
		// With --fit the model is known before anything is written: bad
		// records or no optimum stop the run with nothing measured.
		if f.fitFile != "" && c.Rank() == 0 {
			var err error
			m, err = fitOptimumFile(f.fitFile, f.op, f.dataBytes)
			return err
		}
		return nil
	}
	// CSV streams commit to the columns of their first record, and the
	// calibration's kkaccess records lack the optimize records' d_bytes and
	// derived columns; so CSV on stdout is written at the end with the union
	// of the columns (results.WriteCSV), as the tables are. --out streams
	// JSON Lines as usual.
	mf, sinkOut := f.measureFlags, stdout
	var all []results.Record // rank 0's records, for CSV
	if f.format == results.FormatCSV {
		mf.format, sinkOut = results.FormatJSONL, io.Discard
	}
	err = runMeasured(&mf, sinkOut, rankCheck, func(c mpi.Comm, meta results.Meta, sinkEmit func(results.Record) error) error {
		meta.Seed = f.seed
		emit := sinkEmit
		if f.format == results.FormatCSV && c.Rank() == 0 {
			emit = func(rec results.Record) error {
				all = append(all, rec)
				return sinkEmit(rec)
			}
		}
		if f.fitFile == "" {
			recs, err := f.calibrate(c, meta, emit)
			if err != nil {
				return err
			}
			var ferr error
			if c.Rank() == 0 {
				tr, s, err := fitOptimum(recs, f.op, f.dataBytes)
				m = &optModel{tr: tr, split: s, source: "the calibration sweep"}
				if err != nil {
					// The calibration records are written; say so, so the
					// run is not lost.
					ferr = fmt.Errorf("optimize: calibration sweep: %w (its kkaccess records are in the output; refit them with 'commcost fit trilinear')", err)
				}
			}
			if err := agree(c, ferr); err != nil {
				return err
			}
		}
		var mine *optModel
		if c.Rank() == 0 {
			mine = m
		}
		k0, kInt, err := bcastOptimum(c, mine)
		if err != nil {
			return err
		}
		ks := splitKs(f.ks, k0, kInt, f.dataBytes)
		var dropped []int
		if f.distinct {
			ks, dropped = splitDistinct(ks, c.Size())
			if len(dropped) > 0 && c.Rank() == 0 {
				fmt.Fprintf(stderr, "commcost: optimize: --distinct with %d ranks: k = %s dropped (a rank has %d distinct targets)\n", c.Size(), joinInts(dropped), c.Size()-1)
			}
		}
		points, err := f.sweep(c, meta, emit, ks, mine)
		if err != nil {
			return err
		}
		var perr error
		if c.Rank() == 0 {
			perr = writeOptimizeReport(&report, f, mine, points, dropped, c.Size())
			if perr == nil && f.plot != "" {
				if perr = plotOptimize(f.plot, mine, f.dataBytes, points); perr != nil {
					perr = fmt.Errorf("--plot %s: %w", f.plot, perr)
				}
			}
		}
		return agree(c, perr)
	})
	if len(all) > 0 {
		// Also after a failure, as the tables show what was measured.
		if cerr := results.WriteCSV(stdout, all); err == nil {
			err = cerr
		}
	}
	if err != nil || report.Len() == 0 {
		return err
	}
	w := stdout
	if f.format != results.FormatTable && f.format != results.FormatMarkdown {
		w = stderr
	} else {
		fmt.Fprintln(w)
	}
	_, err = w.Write(report.Bytes())
	return err
}

// calibrate measures the calibration sweep as commcost kkaccess does (same
// records: params k, l, realised r, op; counter r_asked) and returns the
// records (on every rank; only rank 0 fits them).
func (f *optFlags) calibrate(c mpi.Comm, meta results.Meta, emit func(results.Record) error) ([]results.Record, error) {
	var recs []results.Record
	for _, k := range f.calK {
		for _, l := range f.calL {
			for _, r := range f.calR {
				kk := patterns.KKAccess{K: k, L: l, R: r, Op: f.op, Seed: f.seed, Validate: f.validate, Reps: f.patternReps()}
				m, err := kk.Run(c)
				if err != nil {
					return nil, patternErr(err)
				}
				rec := kk.Record(m, meta)
				if err := emitRecord(c, emit, rec); err != nil {
					return nil, err
				}
				recs = append(recs, rec)
			}
		}
	}
	return recs, nil
}

// sweep measures a k-k-access of k packets of round(D/k) bytes at r = 1
// for every k and emits one optimize record each; rank 0, the only one
// with m, adds the prediction.
func (f *optFlags) sweep(c mpi.Comm, meta results.Meta, emit func(results.Record) error, ks []int, m *optModel) ([]optPoint, error) {
	var points []optPoint
	for _, k := range ks {
		l := packetBytes(f.dataBytes, k)
		kk := patterns.KKAccess{K: k, L: l, R: 1, Op: f.op, Distinct: f.distinct,
			Seed: f.seed, Validate: f.validate, Reps: f.patternReps()}
		res, err := kk.Run(c)
		if err != nil {
			return nil, patternErr(err)
		}
		params := kk.Params(c.Size())
		params["d_bytes"] = f.dataBytes
		res.Counters[counterVolume] = float64(k * l)
		rec := res.Record(benchOptimize, params, c.Size(), meta)
		pt := optPoint{k: k, l: l, sum: rec.Summary}
		if m != nil && m.tr != nil {
			pt.predicted = m.tr.Time(float64(k), float64(l), 1)
			rec.Derived = map[string]float64{derivedPred: pt.predicted}
			if rec.Median > 0 {
				rec.Derived[derivedPredErr] = pt.predicted/rec.Median - 1
			}
		}
		if err := emitRecord(c, emit, rec); err != nil {
			return nil, err
		}
		points = append(points, pt)
	}
	return points, nil
}

// writeOptimizeReport prints the model, the optimum, the table of measured
// against predicted splits and the verdict.
func writeOptimizeReport(w io.Writer, f *optFlags, m *optModel, points []optPoint, dropped []int, ranks int) error {
	tr, s := m.tr, m.split
	d := f.dataBytes
	ints := ""
	if d%paperIntBytes == 0 {
		ints = fmt.Sprintf(" (%d integers of %d bytes)", d/paperIntBytes, paperIntBytes)
	}
	us := func(sec float64) string { v, _ := fmtValue(sec, "s"); return v + " us" }
	nsB := func(secPerB float64) string { v, _ := fmtValue(secPerB, "s/B"); return v + " ns/B" }
	fmt.Fprintf(w, "optimal split of D = %d bytes%s at r = 1, op %s, %d ranks (paper 000, section 7)\n", d, ints, f.op, ranks)
	fmt.Fprintf(w, "model: trilinear fit of %s, %d (k, l, r) points, RSE %s\n", m.source, tr.Fit.N, pct(tr.Fit.RSE))
	fmt.Fprintf(w, "  T(k, l, 1) = a3 kl + a2 l + a1 k + a0: a3 = %s, a2 = %s, a1 = %s, a0 = %s\n", nsB(s.A3), nsB(s.A2), us(s.A1), us(s.A0))
	if s.Boundary {
		fmt.Fprintf(w, "  no interior optimum (k0 = sqrt(a2/a1 D) needs a1 > 0 and a2 > 0): T(D/l, l, 1) is monotone in k,\n")
		fmt.Fprintf(w, "  so the best split is an end of k in [1, %d]: k = %d, l = %s bytes, predicted T = %s\n", min(d, maxPackets), s.KInt, fmtNum(s.LInt), us(s.PredictedIntSec))
	} else {
		fmt.Fprintf(w, "  k0 = sqrt(a2/a1 D) = %s ± %.2g\n", fmtNum(s.K0), s.K0SE)
		fmt.Fprintf(w, "  l0 = sqrt(a1/a2 D) = %s ± %.2g bytes\n", fmtNum(s.L0), s.L0SE)
		fmt.Fprintf(w, "  predicted T(k0, l0, 1) = %s; whole packets k = %d, l = %s bytes: T = %s\n", us(s.PredictedSec), s.KInt, fmtNum(s.LInt), us(s.PredictedIntSec))
	}
	if len(dropped) > 0 {
		fmt.Fprintf(w, "  --distinct: k = %s not measured (at most ranks-1 = %d distinct targets)\n", joinInts(dropped), ranks-1)
	}
	best := bestPoint(points)
	var rows [][]string
	for i, p := range points {
		num := func(sec float64) string { v, _ := fmtValue(sec, "s"); return v }
		errPct := "-"
		if p.sum.Median > 0 {
			errPct = fmt.Sprintf("%+.1f%%", 100*(p.predicted/p.sum.Median-1))
		}
		var marks []string
		if p.k == s.KInt {
			marks = append(marks, "predicted optimum")
		}
		if i == best {
			marks = append(marks, "measured best")
		}
		rows = append(rows, []string{strconv.Itoa(p.k), strconv.Itoa(p.l), num(p.sum.Median),
			"[" + num(p.sum.CI95[0]) + ", " + num(p.sum.CI95[1]) + "]", num(p.predicted), errPct, strings.Join(marks, ", ")})
	}
	fmt.Fprintf(w, "k packets of l = round(D/k) bytes at r = 1 (Figure 13); times in us, error = predicted/measured - 1:\n")
	if err := renderRightAligned(w, []string{"k", "l bytes", "measured", "95% CI", "predicted", "error", "mark"}, rows, 6); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, optimizeVerdict(points, s.KInt))
	return err
}

// bestPoint is the index of the least measured median (the first of
// equals), or -1 without points.
func bestPoint(points []optPoint) int {
	best := -1
	for i, p := range points {
		if best < 0 || p.sum.Median < points[best].sum.Median {
			best = i
		}
	}
	return best
}

// optimizeVerdict compares the measured time at the predicted whole-packet
// optimum kInt with the best measured split, saying whether their 95% CIs
// overlap (then the difference is within the measurement's resolution).
func optimizeVerdict(points []optPoint, kInt int) string {
	b := bestPoint(points)
	if b < 0 {
		return "no split measured"
	}
	best := points[b]
	at := slices.IndexFunc(points, func(p optPoint) bool { return p.k == kInt })
	if at < 0 {
		return fmt.Sprintf("predicted optimum k=%d was not measured; the best measured split is k=%d (l=%d bytes)", kInt, best.k, best.l)
	}
	if at == b {
		return fmt.Sprintf("predicted optimum k=%d (l=%d bytes) is the measured best", kInt, points[at].l)
	}
	p := points[at]
	above := 100 * (p.sum.Median/best.sum.Median - 1)
	overlap := "do not overlap"
	if p.sum.CI95[0] <= best.sum.CI95[1] && best.sum.CI95[0] <= p.sum.CI95[1] {
		overlap = "overlap"
	}
	return fmt.Sprintf("predicted optimum k=%d (l=%d bytes) measures %.1f%% above the best measured split k=%d (l=%d bytes); their 95%% CIs %s",
		kInt, p.l, above, best.k, best.l, overlap)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// plotOptimize draws Figure 13: the measured medians with their 95% CIs
// and the model curve T(k, D/k, 1) against k on a log2 axis, with the
// optimum k0 marked.
func plotOptimize(path string, m *optModel, dataBytes int, points []optPoint) error {
	if len(points) == 0 {
		return errors.New("no measured points to draw")
	}
	D := float64(dataBytes)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("commcost optimize: D = %d bytes, r = 1; k0 = %.3g, l0 = %s bytes", dataBytes, m.split.K0, fmtNum(m.split.L0))
	p.X.Label.Text = "send hot spot k (packets of D/k bytes)"
	p.Y.Label.Text = "time of the k-k-access (us)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = log2Ticks{}
	p.Legend.Top = true

	// Packets are whole, k >= 1: a k0 below 1 is in the title, not on the
	// axis.
	k0 := m.split.K0
	kLo, kHi := float64(points[0].k), float64(points[len(points)-1].k)
	if k0 >= 1 {
		kLo, kHi = math.Min(kLo, k0), math.Max(kHi, k0)
	}
	lo, hi := kLo/1.5, kHi*1.5
	p.X.Min, p.X.Max = lo, hi

	var meas errPoints
	for _, pt := range points {
		meas.XYs = append(meas.XYs, plotter.XY{X: float64(pt.k), Y: pt.sum.Median / 1e-6})
		meas.YErrors = append(meas.YErrors, struct{ Low, High float64 }{(pt.sum.Median - pt.sum.CI95[0]) / 1e-6, (pt.sum.CI95[1] - pt.sum.Median) / 1e-6})
	}
	sc, err := plotter.NewScatter(meas.XYs)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = plotutil.Color(0)
	sc.GlyphStyle.Radius = vg.Points(3)
	bars, err := plotter.NewYErrorBars(meas)
	if err != nil {
		return err
	}
	bars.LineStyle.Color = plotutil.Color(0)

	const n = 200
	var curve plotter.XYs
	for i := 0; i <= n; i++ {
		k := lo * math.Pow(hi/lo, float64(i)/n)
		if k < 1 || k > D {
			continue
		}
		curve = append(curve, plotter.XY{X: k, Y: m.tr.Time(k, D/k, 1) / 1e-6})
	}
	ln, err := plotter.NewLine(curve)
	if err != nil {
		return err
	}
	ln.LineStyle.Color = plotutil.Color(1)
	ln.LineStyle.Width = vg.Points(1.2)

	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, xy := range append(slices.Clone(curve), meas.XYs...) {
		ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
	}
	p.Add(plotter.NewGrid(), ln, bars, sc)
	p.Legend.Add("measured median, 95% CI", sc)
	p.Legend.Add("model T(k, D/k, 1)", ln)
	if k0 >= 1 {
		opt, err := plotter.NewLine(plotter.XYs{{X: k0, Y: ymin}, {X: k0, Y: ymax}})
		if err != nil {
			return err
		}
		opt.LineStyle.Color = plotutil.Color(2)
		opt.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(opt)
		p.Legend.Add(fmt.Sprintf("k0 = %.3g", k0), opt)
	}
	// Headroom for the legend in the top corner.
	p.Y.Max += 0.15 * (p.Y.Max - p.Y.Min)
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}

// errPoints are points with asymmetric vertical errors (plotter.XYer and
// plotter.YErrorer).
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// log2Ticks labels the powers of two in range (major) with the integers
// between them as minor ticks where there are few.
type log2Ticks struct{}

func (log2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log2(lo)); e <= math.Ceil(math.Log2(hi)); e++ {
		v := math.Exp2(e)
		if v >= lo && v <= hi {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		}
	}
	if len(ts) < 2 {
		// Less than an octave: label both ends.
		ts = append(ts, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}, plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)})
	}
	return ts
}
