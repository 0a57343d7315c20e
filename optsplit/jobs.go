package optsplit

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// The two experiments as configurations (package opts: tagged fields are
// their flags, Validate checks them in field terms): OptimizeJob,
// 'commcost optimize' (Figure 13 on plain ranks), and SplitJob, 'commcost
// emulate split' (Figure 14 on the emulated network). Both take the model
// from a calibration sweep, the field Cal (flags --cal-k, --cal-l,
// --cal-r), or from the records of the file Fit, read on rank 0 by Load
// once the ranks are up and before any output is opened.

// OptimizeSummary is the summary of 'commcost optimize'.
const OptimizeSummary = "paper 000 sec. 7: optimal split k0, l0 of D bytes from the trilinear model, measured around it (Fig. 13)"

// OptimizeUsage is the head of 'commcost optimize -h', before the flags.
const OptimizeUsage = `usage: commcost optimize --D BYTES [flags]   (under mpirun, or --backend local --np N)

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

// dForm is the accepted form of D, for messages.
const dForm = "a positive data volume in bytes such as 40000 (the paper's 10000 integers), 40K or 1M"

// OptimizeJob is the Figure 13 experiment (Optimize) with its model's
// source, its report and its plot.
type OptimizeJob struct {
	patterns.RepFlags
	patterns.RepWarmup
	patterns.SyncFlags
	patterns.SeedFlag
	D        opts.Bytes        `flag:"D" value:"bytes" usage:"data volume D in bytes each rank accesses (required): 40000, 40K or 1M; K = 1024. The paper's D = 10000 integers is 40000 bytes"`
	Fit      string            `flag:"fit" value:"file" usage:"JSON Lines file of kkaccess records (e.g. from 'commcost kkaccess --out') to fit the model to, instead of a calibration sweep"`
	Cal      patterns.KKGrid   `flags:"cal-"`
	K        opts.Ints         `flag:"k" usage:"send hot spots to measure, a list or a power-of-two range (default: 1, the whole-packet optimum and round(max(k0, 1) * 2^i), i = -3..3); clipped to [1, D]"`
	Op       patterns.AccessOp `flag:"op" default:"read" usage:"access kind of the model and the measurement: read or write"`
	Distinct bool              `flag:"distinct" usage:"the measured accesses go to k distinct ranks (paper 000, section 7: distinct memory modules); k above ranks-1 is dropped. The calibration sweep uses random permutations either way"`
	Plot     string            `flag:"plot" value:"file" usage:"draw Figure 13 (measured medians with 95% CI, model T(k, D/k, 1), log2 k axis) to this file (.png, .svg, .pdf)"`
	Given    opts.Given

	fitted *model.Trilinear // Load's, on rank 0
}

// FlagDefaults: a point's budget is kkaccess's.
func (*OptimizeJob) FlagDefaults() map[string]string { return map[string]string{"max-time": "1"} }

// Validate checks the settings, the calibration grid as the trilinear fit
// needs it (CheckGrid) so that an unusable grid is refused before the
// sweep, and that only one model source is given.
func (j *OptimizeJob) Validate() error {
	return patterns.Checks(j.RepFlags.Check, j.RepWarmup.Check, j.SyncFlags.Check, j.SeedFlag.Check,
		func() error {
			switch {
			case j.D == 0 && !j.Given.Has("D"):
				return opts.Badf("{D} is required: %s", dForm)
			case j.D < 1:
				return opts.Field("D", int(j.D), "want %s", dForm)
			}
			return nil
		},
		func() error { return patterns.CheckPackets("K", j.K) },
		func() error { return checkPlot("Plot", j.Plot) },
		func() error { return checkSource(j.Fit, j.Given, j.Cal, 0) })
}

// Ranks refuses a world of fewer than 2 ranks, or one on which Distinct
// leaves none of K.
func (j *OptimizeJob) Ranks(p int) error {
	if p < 2 {
		return opts.Badf("optimize needs at least 2 ranks, got %d (a rank does not access itself)", p)
	}
	if j.Distinct && len(j.K) > 0 {
		if kept, _ := Distinct(Around(j.K, 0, 0, int(j.D)), p); len(kept) == 0 {
			return opts.Badf("{K} %s with {Distinct}: every k is above ranks-1 = %d (k distinct targets per rank with %d ranks)", JoinInts(j.K), p-1, p)
		}
	}
	return nil
}

// Load fits the model of Fit on rank 0 (FitOptimum), warning on warn of a
// torn last line. A file that cannot be read, holds no kkaccess records
// of Op, or too few or too alike to determine the model (as `commcost
// fit`), is bad input naming Fit; a model without an optimum is a finding
// about the records, returned as FitOptimum's error, and so is a
// model that predicts no time at a point it plans (PlanSplit): both before
// any output is opened.
func (j *OptimizeJob) Load(c mpi.Comm, warn io.Writer) error {
	if j.Fit == "" || c.Rank() != 0 {
		return nil
	}
	recs, err := readRecords("Fit", j.Fit, warn)
	if err != nil {
		return err
	}
	j.fitted, err = FitOptimum(recs, j.Op, int(j.D))
	if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) || errors.Is(err, model.ErrIllConditioned) {
		return opts.Field("Fit", j.Fit, "%v (measure them with: commcost kkaccess --op %s --out FILE)", err, j.Op)
	}
	if err != nil {
		return err
	}
	_, _, _, err = PlanSplit(j.fitted, int(j.D), j.K, j.Distinct, c.Size())
	return err
}

// Run measures the experiment on the ranks of c (Optimize): emit writes a
// record, agreed; on rank 0 the report goes to w, a note on k that
// Distinct dropped to log, and the figure to Plot. A model without a usable
// split is a verdict every rank reaches (ModelVerdict).
func (j *OptimizeJob) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, w, log io.Writer) error {
	meta.Seed = j.Seed
	grid, source := j.Cal, "the calibration sweep"
	if j.Fit != "" {
		grid, source = patterns.KKGrid{}, filepath.Base(j.Fit)+" (--fit)"
	}
	var fitted *model.Trilinear
	if c.Rank() == 0 {
		fitted = j.fitted
	}
	res, err := Optimize(c, OptimizeConfig{
		DataBytes: int(j.D), Ks: j.K, Distinct: j.Distinct, Op: j.Op, Seed: j.Seed, Validate: j.Verify,
		Reps: j.SyncFlags.Reps(j.RepWarmup.Reps(j.RepFlags.Reps())), Grid: grid, Model: fitted, Meta: meta,
	}, func(rec results.Record) error { return job.EmitRecord(c, emit, rec) })
	if err != nil {
		return ModelVerdict(err, func(err error) error {
			return fmt.Errorf("optimize: calibration sweep: %w (its kkaccess records are in the output; refit them with 'commcost fit trilinear')", err)
		})
	}
	var perr error
	if c.Rank() == 0 {
		if len(res.Dropped) > 0 {
			fmt.Fprintf(log, "commcost: optimize: --distinct with %d ranks: k = %s dropped (a rank has %d distinct targets)\n", c.Size(), JoinInts(res.Dropped), c.Size()-1)
		}
		perr = WriteOptimizeReport(w, res, source)
		if perr == nil && j.Plot != "" {
			if perr = PlotFigure13(j.Plot, res); perr != nil {
				perr = fmt.Errorf("plot %s: %w", j.Plot, perr)
			}
		}
	}
	return job.Agree(c, perr)
}

// SplitJob is the Figure 14 experiment on an emulated network (Versions):
// 'commcost emulate split'.
type SplitJob struct {
	emulate.Measuring
	Ints      opts.Ints              `flag:"ints" default:"16,64,256,1K,4K,16K,64K" usage:"variable sizes in integers of 4 bytes (Fig. 14: 16 ... 64K)"`
	Versions  []emulate.SplitVersion `flag:"versions" default:"1,2,3" usage:"splitting versions: 1 one packet, 2 fixed --packet bytes, 3 k0, l0 from the fitted model"`
	Packet    opts.Bytes             `flag:"packet" default:"4K" usage:"packet length of version 2 in bytes"`
	MinPacket opts.Bytes             `flag:"min-packet" default:"64" usage:"smallest packet version 3 may choose, in bytes"`
	Fit       string                 `flag:"fit" value:"file" usage:"JSON Lines file of kkaccess records of this network to fit the model of version 3 (default: measure a calibration sweep first)"`
	Cal       patterns.KKGrid        `flags:"cal-"`

	fitted *model.Trilinear // Load's, on rank 0
}

// Summary is the subcommand's summary.
func (*SplitJob) Summary() string {
	return "packet splitting, versions 1, 2, 3 (paper 000, section 7, Fig. 14): version 3's k0, l0 from the trilinear model of a calibration sweep or --fit FILE"
}

// FlagDefaults are the emulation's defaults and the calibration's packet
// lengths.
func (j *SplitJob) FlagDefaults() map[string]string {
	d := j.Measuring.FlagDefaults()
	d["cal-l"] = "64,1K,8K,64K"
	return d
}

// Validate checks the settings: every variable fits a module, and the
// model's source is given once and only for version 3.
func (j *SplitJob) Validate() error {
	return patterns.Checks(j.Measuring.Check,
		func() error {
			for _, n := range j.Ints {
				if n < 1 {
					return &opts.FieldError{Field: "Ints", Reason: fmt.Sprintf("%d is not positive; a variable has at least 1 integer", n)}
				}
			}
			return nil
		},
		func() error {
			if j.Packet < 1 {
				return opts.Field("Packet", int(j.Packet), "packet length must be a size >= 1 byte, e.g. 4K")
			}
			if j.MinPacket < 1 {
				return opts.Field("MinPacket", int(j.MinPacket), "must be a size >= 1 byte, e.g. 64")
			}
			return nil
		},
		func() error { return j.CheckFits("Ints", maxOf(j.Ints)*emulate.IntBytes) },
		func() error {
			if j.modelled() {
				return checkSource(j.Fit, j.Given, j.Cal, 1)
			}
			if j.Fit != "" {
				return opts.Badf("{Fit} %s: only version 3 uses a model, and {Versions} %s leaves it out", j.Fit, j.versions())
			}
			return refuseCal(j.Given, "{Versions} "+j.versions()+" (only version 3 uses the model)")
		},
		func() error {
			return j.CheckFits("Cal.L", maxOf(j.calibration().L))
		})
}

// modelled reports whether version 3, which needs the model, is measured.
func (j *SplitJob) modelled() bool { return slices.Contains(j.Versions, emulate.SplitModel) }

// versions is the list of versions as --versions takes it.
func (j *SplitJob) versions() string {
	vs := make([]int, len(j.Versions))
	for i, v := range j.Versions {
		vs[i] = int(v)
	}
	return JoinInts(vs)
}

// calibration is the grid measured: Cal for version 3 without Fit, none
// otherwise.
func (j *SplitJob) calibration() patterns.KKGrid {
	if !j.modelled() || j.Fit != "" {
		return patterns.KKGrid{}
	}
	return j.Cal
}

// Points is the number of records.
func (j *SplitJob) Points() int { return j.calibration().Cells() + len(j.Ints)*len(j.Versions) }

// Load fits version 3's model to the records of Fit on rank 0
// (FitNetwork); records of another network, or that cannot determine the
// model, are bad input naming Fit.
func (j *SplitJob) Load(c mpi.Comm, warn io.Writer) error {
	if j.Fit == "" || !j.modelled() || c.Rank() != 0 {
		return nil
	}
	recs, err := readRecords("Fit", j.Fit, warn)
	if err != nil {
		return err
	}
	name := j.Network().Name()
	j.fitted, err = FitNetwork(recs, name)
	if errors.Is(err, ErrNoNetworkRecords) {
		return opts.Field("Fit", j.Fit, "no kkaccess records with network %q (measure them with: commcost emulate kk --net '%s' --out %s)", name, name, j.Fit)
	}
	if err != nil {
		return opts.Field("Fit", j.Fit, "trilinear fit for %s: %v", name, err)
	}
	return nil
}

// Run measures the experiment on the ranks of c, which must be the
// network's (RunAgreed); emit is called on the application ranks, rank
// 0's records complete, and rank 0 writes the speedups of Figure 14 to
// log.
func (j *SplitJob) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, log io.Writer) error {
	cfg := j.Config(j.Seed)
	cfg.PacketBytes = int(j.Packet)
	bc, grid := j.Bench(meta), j.calibration()
	var fitted *model.Trilinear
	if c.Rank() == 0 {
		fitted = j.fitted
	}
	return RunAgreed(c, cfg, "emulate split", func(s *emulate.Store) error {
		res, err := Versions(s, VersionsConfig{Ints: j.Ints, Versions: j.Versions, MinPacket: int(j.MinPacket),
			Grid: grid, Model: fitted, Bench: bc}, emit)
		if me := (*ModelError)(nil); errors.As(err, &me) && me.Reporter && grid.Cells() > 0 {
			// The sweep's records are written: say so, so the run is not lost.
			return &ModelError{Err: fmt.Errorf("%w (the calibration's kkaccess records are in the output; 'commcost emulate split --fit FILE' refits them)", me.Err), Reporter: true}
		}
		if err != nil || s.Rank() != 0 {
			return err
		}
		// Rank 0's records are in; a failure to print is its own.
		return WriteVersionsReport(log, s.Topology().Name(), res)
	})
}

// RunAgreed is RunEmulated with its verdict agreed over world: a
// *ModelError, which the application ranks reach together, ends every
// world rank alike, the reporting one with the message (prefixed with
// what) and the others quiet, none aborting the job. Other errors are
// RunEmulated's.
func RunAgreed(world mpi.Comm, cfg emulate.Config, what string, body func(s *emulate.Store) error) error {
	err := RunEmulated(world, cfg, body)
	var me *ModelError
	if err != nil && !errors.As(err, &me) {
		return err
	}
	var mine error
	if me != nil && me.Reporter {
		mine = fmt.Errorf("%s: %w", what, err)
	}
	return job.Agree(world, mine)
}

// ModelVerdict turns the collective verdict of Run (a *ModelError on every
// rank) into the job's: the reporting rank's error, as why words it, is
// printed once, the other ranks stay quiet, and nobody aborts the job.
// Other errors are job.PatternErr's.
func ModelVerdict(err error, why func(error) error) error {
	var me *ModelError
	if !errors.As(err, &me) {
		return job.PatternErr(err)
	}
	return job.Verdict(why(err), me.Reporter)
}

// checkSource checks the model's source: with a Fit file no calibration
// field may be given, else the calibration grid Cal must be usable, its
// packets at least minL bytes.
func checkSource(fit string, given opts.Given, cal patterns.KKGrid, minL int) error {
	if fit != "" {
		return refuseCal(given, "{Fit} "+fit)
	}
	return patterns.Checks(
		func() error { return opts.Prefix("Cal", cal.Validate()) },
		func() error {
			if minL > 0 {
				return opts.Prefix("Cal", emulate.CheckLengths("L", cal.L))
			}
			return nil
		},
		func() error { return opts.Prefix("Cal", CheckGrid(cal)) })
}

// refuseCal refuses a calibration field given together with what excludes
// the sweep: it would be silently ignored.
func refuseCal(given opts.Given, with string) error {
	for _, f := range []string{"Cal.K", "Cal.L", "Cal.R"} {
		if given.Has(f) {
			return opts.Badf("{%s}: the calibration sweep is not measured with %s; give one or the other", f, with)
		}
	}
	return nil
}

// checkPlot refuses a plot file that cannot be written (report.CheckPlotPath).
func checkPlot(field, path string) error {
	if path == "" {
		return nil
	}
	if err := report.CheckPlotPath(path); err != nil {
		return opts.Field(field, path, "%v", err)
	}
	return nil
}

// readRecords reads the records file of field through the shared reader
// (results.ReadRecordsFile): a torn last line costs that record only and
// is said once on warn; anything else wrong is bad input naming field.
func readRecords(field, path string, warn io.Writer) ([]results.Record, error) {
	recs, torn, err := results.ReadRecordsFile(path)
	if err != nil {
		return nil, opts.Field(field, path, "%v (want a JSON Lines file of commcost records)", err)
	}
	if torn != nil && warn != nil {
		fmt.Fprintln(warn, "commcost: warning:", cli.Printable(fmt.Sprintf("%v; using the %d complete records before it", torn, len(recs))))
	}
	return recs, nil
}

// maxOf is the largest of xs, 0 for none.
func maxOf(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// Mixed reports whether the records are of two benches (kkaccess from
// the calibration): a CSV of them needs the union of their columns.
func (j *OptimizeJob) Mixed() bool { return j.Fit == "" }

// Mixed reports whether the records are of two benches (kkaccess from
// the calibration, packetsplit).
func (j *SplitJob) Mixed() bool { return j.calibration().Cells() > 0 }
