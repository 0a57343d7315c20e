package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/apps/appexp"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// commcost app: the applications (DESIGN.md contract 5), measured phase by
// phase and predicted by fitted models, in the layout of paper 000's
// Table 2. The experiment lives in package apps/appexp (StoreRun: stores,
// calibration, measurement, predictions) and the tables and plot in
// package report (WriteAppsReport, WriteAppsPlot); this file is the
// subcommand and its flags, and every application adds itself as a table
// entry (registerApp) from its own file.

func init() {
	register(command{Name: "app", Summary: "applications measured phase by phase against models' predictions (paper 000's four, Table 2; papers 001 and 003's message-passing programs, models ranked)", More: appMore})
	register(command{Name: "app list", Summary: "the applications, what they run over, their own flags", Run: runAppList})
	register(command{Name: "app table", Summary: "the per-phase table and Table 2 from application records (of several runs), optionally re-predicted with --model", Run: runAppTable})
}

const appMore = `Every application (app NAME) runs every configuration (its size flags, and
the lists of its other flags) on every store of --store, measured phase by
phase (a phase's time is the slowest rank's; repetitions until the 95% CI of
every phase's median is within --rel-ci), its result checked against an
independent oracle. Every communication phase states its communication as
pattern instances (record field "workload"), which every model of --model
predicts; without --model a calibration sweep of the pattern is measured on
the same store first and fitted (paper 000's applications: k-k-accesses,
the trilinear model, one fit for reads and one for writes).

Output: the records (calibration, then one per application phase; the
communication phases carry derived pred_MODEL_s and pred_err_MODEL =
(T_pred - T_meas)/T_meas) on stdout in --format and appended to --out, then
a table of every phase measured against predicted and Table 2 (rows: stores;
columns: phases; cells: the mean error over the configurations), on stdout
for --format table or markdown, else on stderr. --plot draws predicted
against measured. 'app table' rebuilds the tables from records, e.g. of
several runs on different stores.

The message-passing programs of papers 001 and 003 (multigrid, cannon,
checkerboard, gauss) run over MPI ranks, not a store, with flags of their
own (commcost app NAME --help): without --model they measure the patterns
their workload names and fit every model kind, and print one table per run,
models against phases, the best model per column marked.

Stores (--store, a comma list): direct (the plain direct store: every access
to the variable's home rank, the k-k-access kernel's protocol), fixed-home,
tree-2, tree-4, tree-16, tree-2-4, tree-4-16 (divalib, paper 004), and
emulate:NET (paper 000's service network: NET = BF(d), SE(d), CCC(d), HC(d),
mesh(RxC), torus(RxC); needs the network's ranks, e.g. 16 for BF(2), and must
be the only store).

Examples:
  mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 commcost app matmul --store direct,fixed-home,tree-4
  mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 commcost app bitonic --store 'emulate:BF(2)'
  commcost app samplesort --backend local --np 4 --model tri-read.json --model tri-write.json
`

// appEntry is one application of 'commcost app', added by its file with
// registerApp. flags registers the application's own flags and returns
// the function that builds the configurations once they are parsed (its
// errors are usage errors naming the flag).
type appEntry struct {
	name    string
	summary string
	paper   string // e.g. "000 sec. 6.1"
	// overStore is true for applications written against globalvar.Store
	// (run once per --store); false for those over mpi.Comm.
	overStore bool
	flags     func(fs *flag.FlagSet) func() ([]apps.App, error)
	// run, when set, runs the application with its own flags and output
	// instead of runAppEntry (the message-passing programs of papers 001
	// and 003, appmp.go: models ranked per run); flags is then unused.
	run      func(args []string, stdout, stderr io.Writer) error
	ownFlags []string // the flags of a run entry, for app list
}

var appTable = map[string]appEntry{}

// registerApp adds an application to 'commcost app' (from an init
// function): its entry, and its subcommand app NAME.
func registerApp(e appEntry) {
	if _, dup := appTable[e.name]; dup {
		panic("commcost: application registered twice: " + e.name)
	}
	appTable[e.name] = e
	run := e.run
	if run == nil {
		run = func(args []string, stdout, stderr io.Writer) error { return runAppEntry(e, args, stdout, stderr) }
	}
	register(command{Name: "app " + e.name, Summary: fmt.Sprintf("%s (paper %s)", e.summary, e.paper), Run: run})
}

func appNames() []string {
	names := make([]string, 0, len(appTable))
	for n := range appTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func runAppList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("app list", stderr)
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	return writeAppList(stdout)
}

func writeAppList(w io.Writer) error {
	var rows [][]string
	for _, n := range appNames() {
		e := appTable[n]
		over := "mpi.Comm"
		if e.overStore {
			over = "global variables (--store)"
		}
		var own []string
		if e.flags != nil {
			fs := flag.NewFlagSet(n, flag.ContinueOnError)
			e.flags(fs)
			fs.VisitAll(func(f *flag.Flag) { own = append(own, "--"+f.Name) })
		} else {
			own = e.ownFlags
		}
		rows = append(rows, []string{n, "paper " + e.paper, over, e.summary, strings.Join(own, " ")})
	}
	return report.Table(w, []string{"application", "source", "runs over", "what", "own flags"}, rows)
}

// appFlags are the flags of 'commcost app NAME'.
type appFlags struct {
	patternFlags
	stores  []appexp.Store
	models  []model.Model
	sources []string
	plot    string
	calK    []int
	calL    []int
	calR    []float64
	calTime float64
	calA    int
	calBlk  bool
	calArgs struct{ k, l, r string }
}

// parseStores reads --store (appexp.ParseStore for each item).
func parseStores(s string, seed int64) ([]appexp.Store, error) {
	var out []appexp.Store
	items, err := listItems("store", s, appexp.StoreForms)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		st, err := appexp.ParseStore(f, seed)
		if err != nil {
			return nil, usagef("--store %s: %v; accepted: %s", s, err, appexp.StoreForms)
		}
		out = append(out, st)
	}
	if err := distinct("store", s, out, func(a appexp.Store) string { return a.Name }); err != nil {
		return nil, err
	}
	for _, st := range out {
		if st.Kind == appexp.StoreEmulate && len(out) > 1 {
			return nil, usagef("--store %s: an emulated network needs a world of its own size, so emulate:NET must be the only store", s)
		}
	}
	return out, nil
}

// loadModel reads one --model file.
func loadModel(path string) (model.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--model %s: %v (want the JSON of 'commcost fit MODEL FILE --format json')", path, err)
	}
	m, _, err := model.Unmarshal(data)
	if err != nil {
		return nil, usagef("--model %s: %v (want the JSON of 'commcost fit MODEL FILE --format json')", path, err)
	}
	return m, nil
}

// modelList is the repeatable --model flag.
type modelList []string

func (m *modelList) String() string     { return strings.Join(*m, ",") }
func (m *modelList) Set(s string) error { *m = append(*m, s); return nil }

const (
	defaultAppMaxTime = 10.0 // seconds of repetitions per configuration
	defaultCalMaxTime = 0.5  // seconds per calibration point
	maxCalA           = 64   // --cal-a at most: a repetition is a accesses
)

func parseAppFlags(e appEntry, args []string, stderr io.Writer) (*appFlags, func() ([]apps.App, error), error) {
	fs := newFlagSet("app "+e.name, stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: commcost app %s [flags]   (%s; paper %s)\n\nflags:\n", e.name, e.summary, e.paper)
		fs.PrintDefaults()
	}
	var f appFlags
	f.registerPattern(fs, patternSpec{name: "app " + e.name, seed: true, warmupReps: true, maxTime: defaultAppMaxTime})
	configs := e.flags(fs)
	store := "direct"
	if e.overStore {
		fs.StringVar(&store, "store", "direct", "stores to run on: a comma list of direct, fixed-home, tree-2, tree-4, tree-16, tree-2-4, tree-4-16, or one emulate:NET (e.g. 'emulate:BF(2)')")
	}
	var models modelList
	fs.Var(&models, "model", "a fitted model (`FILE.json` from 'commcost fit MODEL FILE --format json') to predict the phases with; repeatable (models of one kind pair up, e.g. a read and a write trilinear fit). Without it a calibration sweep is measured and fitted first")
	fs.StringVar(&f.plot, "plot", "", "draw predicted against measured phase times to this `file` (.png, .svg, .pdf)")
	fs.StringVar(&f.calArgs.k, "cal-k", "1,2,4,8", "calibration sweep (without --model): send hot spots k; the application's --k values are added")
	fs.StringVar(&f.calArgs.l, "cal-l", "64,256,1K,4K", "calibration sweep: packet sizes l in bytes; the application's --l values are added")
	fs.StringVar(&f.calArgs.r, "cal-r", "0.25,0.5,1", "calibration sweep: portions r of accessing ranks, each in (0, 1]")
	fs.Float64Var(&f.calTime, "cal-max-time", defaultCalMaxTime, "calibration sweep: seconds of repetitions per point at most")
	fs.BoolVar(&f.calBlk, "cal-block", false, "calibration sweep: each rank sends all k packets of an access to one rank (kkaccess --block), as the applications access a block on its home; not on emulate:NET stores")
	fs.IntVar(&f.calA, "cal-a", 1, "calibration sweep: k-k-accesses back to back per repetition (kkaccess --a; direct store only): 1 is paper 000's single access after a barrier, more the state a program's successive accesses meet")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, nil, err
	}
	var err error
	if e.overStore {
		if f.stores, err = parseStores(store, f.seed); err != nil {
			return nil, nil, err
		}
		if st := f.stores[0]; st.Kind == appexp.StoreEmulate && f.backend == backendLocal && !f.set["np"] {
			f.np = st.Net.Ranks()
		}
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return nil, nil, err
		}
	}
	if !(f.calTime > 0) {
		return nil, nil, usagef("--cal-max-time %v: must be a positive number of seconds", f.calTime)
	}
	if f.calA < 1 || f.calA > maxCalA {
		return nil, nil, usagef("--cal-a %d: want a whole number of accesses in 1..%d", f.calA, maxCalA)
	}
	if f.calA > 1 {
		for _, st := range f.stores {
			if st.Kind != appexp.StoreDirect {
				return nil, nil, usagef("--cal-a %d: accesses back to back are calibrated on --store direct only, not %s", f.calA, st.Name)
			}
		}
	}
	if f.calBlk {
		for _, st := range f.stores {
			if st.Kind == appexp.StoreEmulate {
				return nil, nil, usagef("--cal-block: an emulated network's calibration draws the paper's spread accesses, not blocks; drop --cal-block for --store %s", st.Name)
			}
		}
	}
	for _, path := range models {
		m, err := loadModel(path)
		if err != nil {
			return nil, nil, err
		}
		f.models = append(f.models, m)
		f.sources = append(f.sources, filepath.Base(path))
	}
	if len(models) > 0 {
		if _, err := report.NewPredictors(f.models, f.sources, e.overStore); err != nil {
			return nil, nil, usagef("--model %v", err)
		}
		for _, name := range []string{"cal-k", "cal-l", "cal-r", "cal-max-time", "cal-a", "cal-block"} {
			if f.set[name] {
				return nil, nil, usagef("--%s: the calibration sweep is not measured with --model; give one or the other", name)
			}
		}
	} else {
		if f.calK, err = parseIntGrid("cal-k", f.calArgs.k, 1); err != nil {
			return nil, nil, err
		}
		if f.calL, err = parseIntGrid("cal-l", f.calArgs.l, 1); err != nil {
			return nil, nil, err
		}
		if f.calR, err = parseFloatList("cal-r", f.calArgs.r, portion, "(0, 1]"); err != nil {
			return nil, nil, err
		}
	}
	return &f, configs, nil
}

func runAppEntry(e appEntry, args []string, stdout, stderr io.Writer) error {
	f, build, err := parseAppFlags(e, args, stderr)
	if err != nil {
		return err
	}
	configs, err := build()
	if err != nil {
		return err
	}
	reps := f.patternReps()
	calReps := reps
	calReps.MaxTime = f.calTime
	xp := appexp.StoreRun{
		Configs: configs, Stores: f.stores, Reps: reps, Seed: f.seed,
		Models: f.models, Sources: f.sources, Agree: agree,
		Calibration: apps.KKCalibration{K: f.calK, L: f.calL, R: f.calR, A: f.calA, Block: f.calBlk, Reps: calReps, Seed: f.seed, Validate: f.validate},
	}
	rankCheck := func(c mpi.Comm) error {
		if len(f.stores) == 1 && f.stores[0].Kind == appexp.StoreEmulate {
			t := f.stores[0].Net
			if err := t.CheckRanks(c.Size()); err != nil {
				hint := ""
				if c.Backend() == backendNative {
					hint = fmt.Sprintf(" (run: mpirun -np %d --oversubscribe --mca mpi_yield_when_idle 1 commcost app %s --store 'emulate:%s')", t.Ranks(), e.name, t.Name())
				}
				return usagef("--store emulate:%s: %v%s", t.Name(), err, hint)
			}
		}
		p := xp.AppRanks(c.Size())
		for _, a := range configs {
			if err := a.Check(p); err != nil {
				return usagef("app %s on %d ranks: %v", e.name, p, err)
			}
		}
		if len(f.models) == 0 && p < appexp.MinCalibrationRanks {
			return usagef("app %s on %d rank(s): the calibration sweep needs at least %d ranks; give --model FILE.json instead", e.name, p, appexp.MinCalibrationRanks)
		}
		return nil
	}
	var res appexp.StoreResult
	err = runMeasured(&f.measureFlags, stdout, rankCheck, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		r, err := xp.Run(c, meta, emit)
		// Only application rank 0 has the result, and the ranks may be
		// goroutines of one process.
		if len(r.Records) > 0 {
			res = r
		}
		if !job.Collective(err) {
			err = patternErr(err) // a rank whose peer failed stays quiet
		}
		return err
	})
	if err != nil || len(res.Records) == 0 {
		return err
	}
	var rep bytes.Buffer
	if err := report.WriteAppsReport(&rep, res.Records, res.Notes, f.format == results.FormatMarkdown); err != nil {
		return err
	}
	if f.plot != "" {
		if err := report.WriteAppsPlot(f.plot, res.Records); err != nil {
			return fmt.Errorf("--plot %s: %w", f.plot, err)
		}
	}
	return results.WriteReport(stdout, stderr, f.format, rep.Bytes())
}

// runAppTable rebuilds the tables from application records.
func runAppTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("app table", stderr)
	var models modelList
	fs.Var(&models, "model", "predict the records' phases with this fitted model (`FILE.json`), replacing the predictions they carry; repeatable")
	format := fs.String("format", "table", "table or markdown")
	plot := fs.String("plot", "", "draw predicted against measured to this `file`")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *format != "table" && *format != "markdown" {
		return usagef("--format %s: want table or markdown", *format)
	}
	if len(pos) == 0 {
		return usagef("app table needs one or more FILE.jsonl of application records (from 'commcost app NAME --out FILE')")
	}
	if *plot != "" {
		if err := checkPlotPath(*plot); err != nil {
			return err
		}
	}
	var ms []model.Model
	var srcs []string
	for _, p := range models {
		m, err := loadModel(p)
		if err != nil {
			return err
		}
		ms, srcs = append(ms, m), append(srcs, filepath.Base(p))
	}
	var preds []report.Predictor
	if len(ms) > 0 {
		if preds, err = report.NewPredictors(ms, srcs, false); err != nil {
			return usagef("--model %v", err)
		}
	}
	var recs []results.Record
	for _, p := range pos {
		rs, err := readRecordsFile("FILE", p, stderr)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.Bench == apps.Bench {
				recs = append(recs, r)
			}
		}
	}
	if len(recs) == 0 {
		return usagef("FILE %s: no application records (bench %q)", strings.Join(pos, ", "), apps.Bench)
	}
	var notes []string
	if len(preds) > 0 {
		notes = report.Repredict(recs, preds)
	}
	var out bytes.Buffer
	if err := report.WriteAppsReport(&out, recs, notes, *format == "markdown"); err != nil {
		return err
	}
	if *plot != "" {
		if err := report.WriteAppsPlot(*plot, recs); err != nil {
			return fmt.Errorf("--plot %s: %w", *plot, err)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}
