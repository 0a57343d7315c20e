package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// commcost optimize: the optimal split of paper 000, section 7, Figure 13
// (optsplit.Optimize runs it; this file is its flags and its report).

const (
	defaultOptCalK    = "1,2,4,8"
	defaultOptCalL    = "64,1K,16K"
	defaultOptCalR    = "0.5,1"
	defaultOptOp      = "read"
	defaultOptMaxTime = 1.0 // seconds per point, as kkaccess

)

func init() {
	register(command{Name: "optimize", Summary: "paper 000 sec. 7: optimal split k0, l0 of D bytes from the trilinear model, measured around it (Fig. 13)", Run: runOptimize})
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
	cal       calFlags
	dataBytes int
	fitFile   string
	grid      optsplit.Grid
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
	f.cal.register(fs, defaultOptCalK, defaultOptCalL, defaultOptCalR, 0)
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
	if f.set["k"] { // given empty: refused, not the default
		if f.ks, err = parsePackets("k", *ks); err != nil {
			return nil, err
		}
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return nil, err
		}
	}
	if f.fitFile != "" {
		// The file is read on rank 0 once the ranks are up (runOptimize).
		return &f, f.cal.refuseWith(f.set, "--fit "+f.fitFile)
	}
	if f.grid, err = f.cal.parse(); err != nil {
		return nil, err
	}
	return &f, nil
}

// calFlags are the flags of the calibration sweep of paper 000, section 7's
// experiment (optsplit.Grid), shared by optimize and emulate split so that
// both read them alike: --cal-k, --cal-l, --cal-r, each deduplicated, and
// the grid checked as the trilinear fit needs it.
type calFlags struct {
	k, l, r   *string
	positiveL bool // packets carry at least one byte (the emulated network)
}

var calFlagNames = []string{"cal-k", "cal-l", "cal-r"}

// register adds the three flags; minL is the smallest packet size accepted
// (0 or 1).
func (cf *calFlags) register(fs *flag.FlagSet, defK, defL, defR string, minL int) {
	cf.positiveL = minL > 0
	cf.k = fs.String("cal-k", defK, "calibration sweep: send hot spots k, a list or a power-of-two range (at least 2 levels)")
	cf.l = fs.String("cal-l", defL, "calibration sweep: packet sizes l in bytes, a list or a power-of-two range (at least 2 levels)")
	cf.r = fs.String("cal-r", defR, "calibration sweep: portions r of accessing ranks, each in (0, 1] (at least 2 levels)")
}

// parse reads the grid (a value listed twice is refused, as in every list
// flag), so that a grid the fit cannot use is refused here (exit 2) and
// not after the sweep (exit 1).
func (cf *calFlags) parse() (optsplit.Grid, error) {
	var g optsplit.Grid
	var err error
	if g.K, err = parsePackets("cal-k", *cf.k); err != nil {
		return g, err
	}
	if cf.positiveL {
		g.L, err = parseLengths("cal-l", *cf.l)
	} else {
		g.L, err = parseIntGrid("cal-l", *cf.l, 0)
	}
	if err != nil {
		return g, err
	}
	if g.R, err = parseFloatList("cal-r", *cf.r, portion, "(0, 1]"); err != nil {
		return g, err
	}
	if err := g.Check(); err != nil {
		return g, usagef("--cal-k %s --cal-l %s --cal-r %s: %v (e.g. --cal-k 1,2,4,8 --cal-l 64,1K,16K --cal-r 0.5,1)", *cf.k, *cf.l, *cf.r, err)
	}
	return g, nil
}

// refuseWith refuses calibration flags given together with a model source
// (--fit FILE): they would be silently ignored.
func (cf *calFlags) refuseWith(set map[string]bool, source string) error {
	for _, name := range calFlagNames {
		if set[name] {
			return usagef("--%s: the calibration sweep is not measured with %s; give one or the other", name, source)
		}
	}
	return nil
}

// parsePackets reads a grid of send hot spots: k >= 1, at most what a
// k-k-access sends.
func parsePackets(flagName, s string) ([]int, error) {
	ks, err := parseIntGrid(flagName, s, 1)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		if k > optsplit.MaxPackets {
			return nil, usagef("--%s %s: %d packets is above the most a k-k-access sends (%d)", flagName, s, k, optsplit.MaxPackets)
		}
	}
	return ks, nil
}

// fitOptimumFile reads the records of --fit for optsplit.FitOptimum. An
// unreadable file or one without kkaccess records of op is bad input
// (exit 2); a design that cannot determine the model is a finding about
// the records (exit 1), as for 'commcost fit'.
func fitOptimumFile(path string, op patterns.AccessOp, dataBytes int, stderr io.Writer) (*model.Trilinear, error) {
	recs, err := readRecordsFile("--fit", path, stderr)
	if err != nil {
		return nil, err
	}
	tr, err := optsplit.FitOptimum(recs, op, dataBytes)
	if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) {
		return nil, usagef("--fit %s: %v (measure them with: commcost kkaccess --op %s --out FILE)", path, err, op)
	}
	if err != nil {
		return nil, fmt.Errorf("--fit %s: %w", path, err)
	}
	return tr, nil
}

// modelVerdict turns optsplit's collective verdict (every rank returns a
// *optsplit.ModelError) into the CLI's: the reporting rank's error is
// printed once, the others stay quiet, and nobody aborts the job. Other
// errors are patternErr's.
func modelVerdict(err error, why func(error) error) error {
	var me *optsplit.ModelError
	if !errors.As(err, &me) {
		return patternErr(err)
	}
	if me.Reporter {
		return job.Reported(why(err))
	}
	return job.Quiet(err)
}

func runOptimize(args []string, stdout, stderr io.Writer) error {
	f, err := parseOptimize(args, stderr)
	if err != nil {
		return err
	}
	// Rank 0's model from --fit, fitted in rankCheck so that bad records
	// stop the run before any output is opened (the local backend's ranks
	// are goroutines of this process: only rank 0 touches it).
	var fitted *model.Trilinear
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
				if kept, _ := optsplit.Distinct(optsplit.Around(f.ks, 0, 0, f.dataBytes), p); len(kept) == 0 {
					return usagef("--k %s with --distinct: every k is above ranks-1 = %d (k distinct targets per rank with %d ranks)", optsplit.JoinInts(f.ks), p-1, p)
				}
				return nil
			})
		}
		if err := checkRanks(rules...)(c); err != nil {
			return err
		}
		if f.fitFile != "" && c.Rank() == 0 {
			var err error
			fitted, err = fitOptimumFile(f.fitFile, f.op, f.dataBytes, stderr)
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
		emit := func(rec results.Record) error {
			if f.format == results.FormatCSV && c.Rank() == 0 {
				all = append(all, rec)
			}
			return emitRecord(c, sinkEmit, rec)
		}
		res, err := optsplit.Optimize(c, optsplit.OptimizeConfig{
			DataBytes: f.dataBytes, Ks: f.ks, Distinct: f.distinct, Op: f.op,
			Seed: f.seed, Validate: f.validate, Reps: f.patternReps(),
			Grid: f.grid, Model: fitted, Meta: meta,
		}, emit)
		if err != nil {
			return modelVerdict(err, func(err error) error {
				return fmt.Errorf("optimize: calibration sweep: %w (its kkaccess records are in the output; refit them with 'commcost fit trilinear')", err)
			})
		}
		var perr error
		if c.Rank() == 0 {
			if len(res.Dropped) > 0 {
				fmt.Fprintf(stderr, "commcost: optimize: --distinct with %d ranks: k = %s dropped (a rank has %d distinct targets)\n", c.Size(), optsplit.JoinInts(res.Dropped), c.Size()-1)
			}
			source := "the calibration sweep"
			if !res.Calibrated {
				source = filepath.Base(f.fitFile) + " (--fit)"
			}
			perr = optsplit.WriteOptimizeReport(&report, res, source)
			if perr == nil && f.plot != "" {
				if perr = optsplit.PlotFigure13(f.plot, res); perr != nil {
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
	if err != nil {
		return err
	}
	return results.WriteReport(stdout, stderr, f.format, report.Bytes())
}
