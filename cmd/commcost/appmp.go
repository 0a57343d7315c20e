package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/apps/appexp"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The message-passing applications of papers 001 and 003 (package apps):
// `commcost app multigrid|cannon|checkerboard|gauss`. Each run measures the
// program (verified against its oracle), predicts every communication
// phase with every model (--model files, or models fitted to a calibration
// of exactly the patterns the program's workload names), and prints one
// table per run: rows are models, columns the phases and their total,
// cells the predicted time and its error against the measured median, the
// best model per column marked. The experiment is appexp.MPRun; this file
// is the flags and the printing.

var appMPSummaries = map[string]string{
	"multigrid":    "paper 001's time-parallel multigrid (heat equation, one time plane per rank, whole planes between neighbouring time levels every iteration), async and sync; the hyperbolic model reduces its exchange with Table 1",
	"cannon":       "Cannon's matrix multiplication on a q x q grid (alignment, q-1 shifts of A and B), the classic alternative to paper 003's checkerboard algorithm",
	"checkerboard": "paper 003's dense matrix multiplication: all-to-all broadcasts of A's blocks along grid rows and B's along columns, then local products",
	"gauss":        "paper 003's Gaussian elimination: row-wise, the pivot row by the two-step broadcast (scatter, all-to-all broadcast), back-substitution; ||Ax-b|| checked",
}

// appMPPapers are the sources app list names.
var appMPPapers = map[string]string{"multigrid": "001 sec. 4", "cannon": "003 (Cannon 1969)", "checkerboard": "003", "gauss": "003"}

// appMPFlagNames are the flags app list shows for each application.
var appMPFlagNames = map[string][]string{
	"multigrid":    {"--n", "--iterations", "--variant", "--cycles"},
	"cannon":       {"--n", "--variant"},
	"checkerboard": {"--n", "--grid", "--variant"},
	"gauss":        {"--n", "--matrix"},
}

func init() {
	for _, name := range appexp.MPNames {
		name := name
		registerApp(appEntry{name: name, paper: appMPPapers[name], summary: appMPSummaries[name],
			ownFlags: append(append([]string(nil), appMPFlagNames[name]...), "--model", "--kinds", "--calibration", "--stat", "--plot", "--markdown"),
			run:      func(args []string, stdout, stderr io.Writer) error { return runAppMP(name, args, stdout, stderr) }})
	}
}

type appMPFlags struct {
	patternFlags
	name      string
	programs  appexp.ProgramConfig
	grid      string
	models    modelList
	kinds     []string
	plot      string
	calibTime float64
	markdown  bool
	stat      string
	calibFile string
	calibRecs []results.Record // --calibration records, read on every rank

	loaded []apps.NamedModel // --model files, read on every rank
}

// Defaults: sizes that finish in seconds on shared memory with blocks and
// planes of 32 KiB and more.
const (
	defaultAppN         = 128
	defaultMGN          = 127
	defaultMGIterations = 10
	defaultCalibMaxTime = 0.5 // seconds per calibration point
)

func parseAppMP(name string, args []string, stderr io.Writer) (*appMPFlags, error) {
	fs := newFlagSet("app "+name, stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: commcost app %s [flags]   (paper %s, over MPI ranks)\n\n%s\n\nflags:\n", name, appMPPapers[name], appMPSummaries[name])
		fs.PrintDefaults()
	}
	f := &appMPFlags{name: name}
	f.registerPattern(fs, patternSpec{name: "app " + name, seed: true, warmupReps: true, maxTime: defaultAppMaxTime})
	fs.Lookup("warmup").Usage = "untimed runs of the program before the timed ones (default 2)"
	fs.Lookup("min-reps").Usage = "minimum timed runs"
	fs.Lookup("max-reps").Usage = "maximum timed runs"
	fs.Lookup("max-time").Usage = "seconds of timed runs before stopping"
	nDef := defaultAppN
	if name == "multigrid" {
		nDef = defaultMGN
	}
	switch name {
	case "multigrid":
		fs.IntVar(&f.programs.N, "n", nDef, "interior grid points per side of a time plane, 2^k - 1 (a plane message is 8 n^2 bytes)")
		fs.IntVar(&f.programs.Iterations, "iterations", defaultMGIterations, "block-Jacobi iterations in time (each moves every plane to the next time level)")
		fs.IntVar(&f.programs.Cycles, "cycles", 1, "V-cycles per iteration")
	case "gauss":
		fs.IntVar(&f.programs.N, "n", nDef, "matrix order (a multiple of the rank count)")
		fs.StringVar(&f.programs.Matrix, "matrix", "dd", "input: dd (diagonally dominant), random, hilbert (near-singular), singular, zeropivot (needs pivoting: fails during the run)")
	case "checkerboard":
		fs.IntVar(&f.programs.N, "n", nDef, "matrix order (a multiple of the grid's rows and columns)")
		fs.StringVar(&f.grid, "grid", "", "process grid ROWSxCOLS with ROWS*COLS = ranks (default: the most nearly square)")
	default:
		fs.IntVar(&f.programs.N, "n", nDef, "matrix order (a multiple of q on a q x q grid)")
	}
	variant := "async"
	if name == "multigrid" || name == "cannon" || name == "checkerboard" {
		fs.StringVar(&variant, "variant", "async", "async (as the program runs), sync (a barrier before every exchange), or async,sync")
	}
	fs.Var(&f.models, "model", "fitted model `FILE.json` ('commcost fit KIND FILE --format json'); repeat for several; without it, the patterns the program needs are measured and every kind fitted first")
	kinds := fs.String("kinds", strings.Join(apps.FitKinds(), ","), "model kinds to fit to the calibration (without --model)")
	fs.StringVar(&f.plot, "plot", "", "write measured against predicted per model to this `file` (.png, .svg, .pdf)")
	fs.Float64Var(&f.calibTime, "calib-max-time", defaultCalibMaxTime, "seconds of repetitions per calibration point")
	fs.StringVar(&f.calibFile, "calibration", "", "fit the models to the pattern records of this JSON Lines `file` (an earlier run's --out) instead of measuring a calibration")
	fs.BoolVar(&f.markdown, "markdown", false, "print the tables as markdown")
	stat := fs.String("stat", "median", "measured statistic the models are fitted to and judged against: median; fastest (the fastest repetition: the wire time of a shaped link when the machine is busy); or envelope (each entry into a phase at its fastest repetition, summed: the network's time when ranks share cores)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	if f.set["format"] {
		return nil, usagef("--format: app prints its tables (--markdown for markdown); records go to --out as JSON Lines")
	}
	if !slices.Contains(apps.Stats, *stat) {
		return nil, usagef("--stat %s: accepted values are %s", *stat, strings.Join(apps.Stats, ", "))
	}
	f.stat = *stat
	if f.programs.N < 1 {
		return nil, usagef("--n %d: must be a positive integer", f.programs.N)
	}
	if name == "multigrid" {
		if f.programs.Iterations < 1 {
			return nil, mustBePositive("iterations", f.programs.Iterations)
		}
		if f.programs.Cycles < 1 {
			return nil, mustBePositive("cycles", f.programs.Cycles)
		}
	}
	if name == "multigrid" || name == "cannon" || name == "checkerboard" {
		var err error
		if f.programs.Variants, err = parseListOf("variant", variant, "async, sync or async,sync", func(v string) (string, error) {
			if v != "async" && v != "sync" {
				return "", fmt.Errorf("%q is not async or sync", v)
			}
			return v, nil
		}); err != nil {
			return nil, err
		}
	}
	if f.grid != "" {
		var err error
		if f.programs.Grid, err = apps.ParseGrid(f.grid); err != nil {
			return nil, usagef("--grid %s: accepted form ROWSxCOLS with positive integers, e.g. 2x3", f.grid)
		}
	}
	if !(f.calibTime > 0) || math.IsInf(f.calibTime, 0) {
		return nil, usagef("--calib-max-time %v: must be a positive number of seconds", f.calibTime)
	}
	var err error
	if f.kinds, err = parseListOf("kinds", *kinds, "a list of "+strings.Join(model.Kinds(), ", "), func(v string) (string, error) {
		if !slices.Contains(model.Kinds(), v) {
			return "", fmt.Errorf("%q is not a model kind", v)
		}
		return v, nil
	}); err != nil {
		return nil, err
	}
	if f.set["kinds"] && len(f.models) > 0 {
		return nil, usagef("--kinds chooses what to fit to a calibration; with --model nothing is fitted")
	}
	if f.calibFile != "" {
		if len(f.models) > 0 {
			return nil, usagef("--calibration and --model: give fitted models or the records to fit them to, not both")
		}
		recs, err := readRecordsFile("--calibration", f.calibFile, stderr)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.Bench != apps.Bench {
				f.calibRecs = append(f.calibRecs, r)
			}
		}
		if len(f.calibRecs) == 0 {
			return nil, usagef("--calibration %s: no pattern records (only application records or none)", f.calibFile)
		}
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return nil, err
		}
	}
	var ms []model.Model
	for _, path := range f.models {
		m, err := loadModel(path)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	f.loaded = appexp.NameModels(ms, f.models)
	return f, nil
}

func runAppMP(name string, args []string, stdout, stderr io.Writer) error {
	f, err := parseAppMP(name, args, stderr)
	if err != nil {
		return err
	}
	xp := f.run(appexp.Programs(name, f.programs))
	return withWorld(f.backend, f.np, func(c mpi.Comm) error {
		p := c.Size()
		// Bad input first, agreed by every rank: the rank count, the sizes,
		// the input matrix, and whether the given models predict anything.
		err := func() error {
			if p < 2 {
				hint := ""
				if c.Backend() == backendNative {
					hint = " (run under mpirun -np 4, or --backend local --np 4)"
				}
				return usagef("app %s needs at least 2 ranks to communicate, got %d%s", name, p, hint)
			}
			if err := xp.Check(p); err != nil {
				return usagef("%v", err)
			}
			if len(f.loaded) > 0 {
				if err := xp.CheckModels(p, f.loaded); err != nil {
					return usagef("--model: %v", err)
				}
			}
			return nil
		}()
		if err := agree(c, err); err != nil {
			return err
		}
		meta, err := newMeta(c)
		if err != nil {
			return err
		}
		meta.Seed = f.seed
		// Records go to --out only; stdout gets the tables.
		mf := f.measureFlags
		mf.format, _ = results.ParseFormat("jsonl")
		s, err := openSink(c, &mf, io.Discard)
		if err != nil {
			return err
		}
		err = xp.Run(c, meta, s.Write, func(note string) { fmt.Fprintln(stdout, "calibration:", note) }, f.printer(len(xp.Programs) > 1, stdout))
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		var ce *apps.CollectiveError
		if errors.As(err, &ce) {
			// Every rank has this verdict: rank 0 prints it, nobody aborts.
			if c.Rank() == 0 {
				return job.Reported(err)
			}
			return job.Quiet(err)
		}
		return err
	})
}

// run is the experiment the flags configure.
func (f *appMPFlags) run(progs []apps.App) appexp.MPRun {
	reps := f.patternReps()
	calReps := reps
	calReps.MaxTime, calReps.MinReps, calReps.Warmup = f.calibTime, min(reps.MinReps, 5), 1
	return appexp.MPRun{Programs: progs, Models: f.loaded, Calibration: f.calibRecs, CalibrationReps: calReps,
		Kinds: f.kinds, Reps: reps, Stat: f.stat, Seed: f.seed, Agree: agree, Validate: f.validate}
}

// printer prints each program's result on rank 0 as it is measured, and
// draws its plot (--plot; with several variants one file per variant, the
// variant appended to the name).
func (f *appMPFlags) printer(several bool, stdout io.Writer) func(appexp.MPResult) error {
	first := true
	return func(res appexp.MPResult) error {
		if !first {
			fmt.Fprintln(stdout)
		}
		first = false
		if err := res.Write(stdout, f.markdown); err != nil {
			return err
		}
		if f.plot == "" {
			return nil
		}
		path := f.plot
		if several {
			ext := filepath.Ext(path)
			path = strings.TrimSuffix(path, ext) + "-" + res.Program.Params()["variant"].(string) + ext
		}
		if err := res.Table.WriteAppPlot(path); err != nil {
			return fmt.Errorf("--plot %s: %w", path, err)
		}
		return nil
	}
}
