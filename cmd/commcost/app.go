package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/apps/appexp"
	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// init registers commcost app: the applications measured phase by phase
// and predicted by fitted models. Every registered program
// (apps.RegisterProgram) is a subcommand app NAME: its own configuration,
// and the settings of its experiment (appexp.StoreApp for programs over
// global variables, MPApp for the message-passing ones).
func init() {
	cli.Register(cli.Command{Name: "app", Summary: "applications measured phase by phase against models' predictions (paper 000's four, Table 2; papers 001 and 003's message-passing programs, models ranked)", More: appMore()})
	cli.Register(cli.Command{Name: "app list", Summary: "the applications, what they run over, their own flags", Run: runAppList})
	cli.Register(cli.Command{Name: "app table", Summary: "the per-phase table and Table 2 from application records (of several runs), optionally re-predicted with --model", Run: runAppTable})
	for _, p := range apps.Programs() {
		run := func(args []string, stdout, stderr io.Writer) error { return runMPApp(p, args, stdout, stderr) }
		if p.OverStore {
			run = func(args []string, stdout, stderr io.Writer) error { return runStoreApp(p, args, stdout, stderr) }
		}
		cli.Register(cli.Command{Name: "app " + p.Name, Summary: fmt.Sprintf("%s (paper %s)", p.Summary, p.Paper), Run: run})
	}
}

func appMore() string {
	return `Every application (app NAME) runs every configuration (its size flags, and
the lists of its other flags), measured phase by phase, its result checked
against an independent oracle, every communication phase predicted by the
models of --model or, without it, by models fitted to a calibration of the
patterns its workload names, measured first. 'app list' lists the
programs and their own flags; 'app table' rebuilds the tables from records.

Stores (--store, a comma list, for paper 000's programs): ` + strings.Join(globalvar.Forms(), ", ") + `.

Examples:
  mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 commcost app matmul --store direct,fixed-home,tree-4
  mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 commcost app bitonic --store 'emulate:BF(2)'
  mpirun -np 4 commcost app cannon --variant async,sync --out cannon.jsonl
`
}

func runAppList(args []string, stdout, stderr io.Writer) error {
	if err := cli.Parse(cli.NewFlagSet("app list", stderr), args, false); err != nil {
		return err
	}
	var rows [][]string
	for _, p := range apps.Programs() {
		over := "mpi.Comm"
		if p.OverStore {
			over = "global variables (--store)"
		}
		fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
		opts.Bind(fs, p.New())
		var own []string
		fs.VisitAll(func(f *flag.Flag) { own = append(own, "--"+f.Name) })
		rows = append(rows, []string{p.Name, "paper " + p.Paper, over, p.Summary, strings.Join(own, " ")})
	}
	return report.Table(stdout, []string{"application", "source", "runs over", "what", "own flags"}, rows)
}

// appFlags binds program p's configuration, the experiment's settings xp,
// the launch and the output.
func appFlags(p apps.Program, xp any, stderr io.Writer) (*cli.Bound, apps.Config, *job.Launch, *job.Output) {
	fs := cli.NewFlagSet("app "+p.Name, stderr)
	cfg := p.New()
	var launch job.Launch
	var out job.Output
	return cli.Bind(fs, cfg, xp, &launch, &out), cfg, &launch, &out
}

// runStoreApp runs paper 000's program p over every store (appexp.StoreRun).
func runStoreApp(p apps.Program, args []string, stdout, stderr io.Writer) error {
	var xp appexp.StoreApp
	b, cfg, launch, out := appFlags(p, &xp, stderr)
	cli.Default(b.FS, "max-time", "10")
	if err := b.Check(args, false); err != nil {
		return err
	}
	configs, err := cfg.Apps()
	if err != nil {
		return b.Err(err)
	}
	if err := b.Err(xp.Prepare()); err != nil {
		return err
	}
	if st := xp.Stores(); len(st) == 1 && st[0].WorldSize() > 0 && launch.Backend == job.Local && !cli.Given(b.FS)["np"] {
		launch.NP = st[0].WorldSize()
	}
	run := xp.Run(configs)
	run.Agree = job.Agree
	if err := b.Err(xp.CheckGrid(run)); err != nil {
		return err
	}
	var res appexp.StoreResult
	// What the programs, the stores' copies of their variables and the
	// calibration hold per rank, checked after the rank count and before
	// anything is allocated.
	demand := job.Demand{Need: func(world int) job.MemNeed {
		need := run.Demand(run.AppRanks(world))
		flag := b.Binding(0).FlagText("N")
		if need.Field == "l" {
			flag = b.Binding(0).FlagText("L") + " / " + b.Binding(1).FlagText("Cal.L")
		}
		return job.MemNeedOf(flag, need)
	}}
	m := job.Measure{Launch: *launch, Output: *out, Progress: stderr, Label: b.FS.Name(), Demand: demand,
		Ranks: func(c mpi.Comm) error {
			err := b.Err(divideErr(xp.CheckRanks(p.Name, c.Size(), job.RanksText(c), configs), b, c))
			// The launch line of the store's own world, unless the
			// program refuses that world too (a hint never names a
			// command that is refused in turn).
			if err != nil && c.Backend() == job.Native && len(xp.Stores()) == 1 && xp.Stores()[0].WorldSize() > 0 &&
				xp.CheckRanks(p.Name, xp.Stores()[0].WorldSize(), "", configs) == nil {
				st := xp.Stores()[0]
				err = fmt.Errorf("%w (run: %s)", err, job.RunLine(st.WorldSize(), "app", p.Name, "--store", "emulate:"+st.Name()))
				err = opts.Badf("%v", err)
			}
			return err
		}}
	err = m.Run(stdout, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		r, err := run.Run(c, meta, emit)
		if len(r.Records) > 0 { // application rank 0 only; ranks may share the process
			res = r
		}
		if !job.Collective(err) {
			err = job.PatternErr(err) // a rank whose peer failed stays quiet
		}
		return err
	})
	if err != nil || len(res.Records) == 0 {
		return err
	}
	var rep bytes.Buffer
	if err := report.WriteAppsReport(&rep, res.Records, res.Notes, out.Format == results.FormatMarkdown, apps.PhasesOf); err != nil {
		return err
	}
	if xp.Plot != "" {
		if err := report.WriteAppsPlot(xp.Plot, res.Records); err != nil {
			return fmt.Errorf("--plot %s: %w", xp.Plot, err)
		}
	}
	return results.WriteReport(stdout, stderr, out.Format, rep.Bytes())
}

// runMPApp runs the message-passing program p (appexp.MPRun): records go
// to --out, the ranking tables to stdout in --format table or markdown.
func runMPApp(p apps.Program, args []string, stdout, stderr io.Writer) error {
	var xp appexp.MPApp
	b, cfg, launch, out := appFlags(p, &xp, stderr)
	cli.Default(b.FS, "max-time", "10")
	cli.Alias(b.FS, "calib-max-time", "cal-max-time", "")
	cli.Alias(b.FS, "markdown", "format", "markdown")
	if err := b.Check(args, false); err != nil {
		return err
	}
	if out.Format != results.FormatTable && out.Format != results.FormatMarkdown {
		return opts.Badf("--format %s: app %s prints its tables as table or markdown; records go to --out as JSON Lines", out.Format, p.Name)
	}
	progs, err := cfg.Apps()
	if err != nil {
		return b.Err(err)
	}
	warnings, err := xp.Prepare()
	for _, w := range warnings {
		fmt.Fprintln(stderr, "commcost: warning:", cli.Printable(w))
	}
	if err := b.Err(err); err != nil {
		return err
	}
	run := xp.Run(progs)
	run.Agree = job.Agree
	return launch.World(func(c mpi.Comm) error {
		endChecks := sync.OnceFunc(job.WatchChecks())
		defer endChecks()
		meta, err := job.NewMeta(c)
		if err != nil {
			return err
		}
		// What the programs hold (gauss's oracle included), before any
		// of it is allocated; then the rank count and the sizes.
		// The programs' own need first: the calibration's states their
		// workloads, which takes long at an n whose oracle cannot fit.
		for _, need := range []func(int) sysmem.Need{run.ProgramDemand, run.Demand} {
			if need := need(c.Size()); need.Bytes > 0 {
				if err := job.Agree(c, job.CheckMemory(c, meta, job.MemNeedOf(b.Binding(0).FlagText("N"), need))); err != nil {
					return err
				}
			}
		}
		err = b.Err(divideErr(xp.CheckRanks(p.Name, c.Size(), job.RanksText(c), progs), b, c))
		if err != nil && c.Size() < 2 && c.Backend() == job.Native {
			err = opts.Badf("%v (run under mpirun -np 4, or --backend local --np 4)", err)
		}
		if err := job.Agree(c, err); err != nil {
			return err
		}
		given, names := runLengthFlags(b)
		if err := job.Agree(c, xp.CheckRunTime(c.Size(), progs, launch.Timeout, given, names)); err != nil {
			return err
		}
		if err := job.Agree(c, run.CheckCalibration(c.Size())); err != nil {
			return err
		}
		endChecks()
		meta.Seed = xp.Seed
		records := *out
		records.Format = results.FormatJSONL
		sink, err := job.OpenSink(c, records, nil) // records to --out only
		if err != nil {
			return err
		}
		sink.StopOnSignal(c, job.StopNote{Label: b.FS.Name(), Stderr: stderr})
		first := true
		err = run.Run(c, meta, sink.Write, func(note string) { fmt.Fprintln(stdout, "calibration:", note) }, func(res appexp.MPResult) error {
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			if err := res.Write(stdout, out.Format == results.FormatMarkdown); err != nil {
				return err
			}
			return plotMP(xp.Plot, len(run.Programs) > 1, res)
		})
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
		var ce *apps.CollectiveError
		if errors.As(err, &ce) {
			// Every rank has this verdict: rank 0 prints it, nobody aborts.
			return job.Verdict(err, c.Rank() == 0)
		}
		return err
	})
}

// runLengthFlags are the program's flags that set one run's length, among
// --n, --iterations and --cycles: with their values as given ("--n 63
// --cycles 1000000") and by name ("--cycles, --iterations or --n").
func runLengthFlags(b *cli.Bound) (given, names string) {
	var parts, flags []string
	for _, f := range []string{"cycles", "iterations", "n"} {
		if fl := b.FS.Lookup(f); fl != nil {
			parts = append(parts, "--"+f+" "+fl.Value.String())
			flags = append(flags, "--"+f)
		}
	}
	if len(flags) > 1 {
		flags[len(flags)-2] += " or " + flags[len(flags)-1]
		flags = flags[:len(flags)-1]
	}
	return strings.Join(parts, " "), strings.Join(flags, ", ")
}

// plotMP draws a program's plot (--plot; with several variants one file
// per variant, the variant appended to the name).
func plotMP(path string, several bool, res appexp.MPResult) error {
	if path == "" {
		return nil
	}
	if several {
		ext := filepath.Ext(path)
		path = strings.TrimSuffix(path, ext) + "-" + res.Program.Params()["variant"].(string) + ext
	}
	if err := res.Table.WriteAppPlot(path); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}

// runAppTable rebuilds the tables from application records.
func runAppTable(args []string, stdout, stderr io.Writer) error {
	var models opts.Files
	fs := cli.NewFlagSet("app table", stderr)
	fs.Var(&models, "model", "predict the records' phases with this fitted model (`FILE.json`), replacing the predictions they carry; repeatable")
	format := fs.String("format", "table", "table or markdown")
	plot := fs.String("plot", "", "draw predicted against measured to this `file`")
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *format != "table" && *format != "markdown" {
		return opts.Badf("--format %s: want table or markdown", *format)
	}
	if len(pos) == 0 {
		return opts.Badf("app table needs one or more FILE.jsonl of application records (from 'commcost app NAME --out FILE')")
	}
	if *plot != "" {
		if err := report.CheckPlotPath(*plot); err != nil {
			return opts.Badf("--plot %s: %v", *plot, err)
		}
	}
	// One model file twice would be two columns that agree.
	if a, b, dup := results.SameFileTwice(models); dup {
		why := "is given twice"
		if a != b {
			why = "is the same file as " + opts.Echo(a)
		}
		return opts.Badf("--model %s: %s; give each model once", opts.Echo(b), why)
	}
	var ms []model.Model
	var srcs []string
	for _, path := range models {
		m, _, err := model.ReadFile(path)
		if err != nil {
			return opts.Badf("--model %s: %v", path, err)
		}
		ms, srcs = append(ms, m), append(srcs, filepath.Base(path))
	}
	var preds []report.Predictor
	if len(ms) > 0 {
		if preds, err = report.NewPredictors(ms, srcs, false); err != nil {
			return opts.Badf("--model %v", err)
		}
	}
	if err := results.DistinctFiles(pos); err != nil {
		return opts.Badf("FILE: %v", err)
	}
	all, err := readRecordsFiles("FILE", pos, stderr)
	if err != nil {
		return err
	}
	var recs []results.Record
	for _, r := range all {
		if r.Bench == apps.Bench {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return opts.Badf("FILE %s: no application records (bench %q)", strings.Join(pos, ", "), apps.Bench)
	}
	// A native and a local run of one configuration would be two rows
	// under one label and one mean error of both: they time different
	// transports, so a table of both describes neither.
	if mix := results.BackendMix(recs); mix != "" {
		return opts.Badf("FILE %s: the records mix %s: they time different transports; give app table the records of one backend", strings.Join(pos, ", "), mix)
	}
	var notes []string
	if len(preds) > 0 {
		notes = report.Repredict(recs, preds)
	}
	var buf bytes.Buffer
	if err := report.WriteAppsReport(&buf, recs, notes, *format == "markdown", apps.PhasesOf); err != nil {
		return err
	}
	if *plot != "" {
		if err := report.WriteAppsPlot(*plot, recs); err != nil {
			return fmt.Errorf("--plot %s: %w", *plot, err)
		}
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// divideErr is a program's refusal of its order --n for the rank count,
// as bad input: it names --n when the user gave it, else what set the
// rank count, which is all the user gave (--np N, or the launcher's -np).
func divideErr(err error, b *cli.Bound, c mpi.Comm) error {
	de := (*apps.DivideError)(nil)
	if !errors.As(err, &de) {
		return err
	}
	if b.Binding(0).Given("N") {
		return opts.Badf("%v", de)
	}
	return opts.Badf("%s", de.Default(job.RanksText(c)))
}
