package main

import (
	"errors"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// init registers the sched subcommands, which bind permsched's experiment
// configurations; the library validates them, reads their files and runs
// them.
func init() {
	cli.Register(cli.Command{Name: "sched", Summary: "all-to-many scheduling (paper 002)", More: schedMore})
	cli.Register(cli.Command{Name: "sched count", Summary: "experiment 1, no MPI needed: number of permutations and scheduling time of " + strings.Join(permsched.SchedulerNames(), ", ") + " over sampled matrices (paper Table 4 and Fig. 10)", Run: runSchedCount})
	cli.Register(cli.Command{Name: "sched comm", Summary: "experiment 2, under mpirun: communication time of every schedule and of MPI_Alltoallv by message size and density, the runtime scheduling cost and their ratio (Tables 1-3, Figs. 8, 9)", Run: runSchedComm})
	cli.Register(cli.Command{Name: "sched breakeven", Summary: "experiment 3: fit the Section 5.1 constants C1, C2, C3 and print the LP/CGM break-even densities, from --in records of 'sched comm' or from a measurement run now", Run: runSchedBreakeven})
	cli.Register(cli.Command{Name: "sched gen", Summary: "write a matrix file for --matrix (" + strings.Join(permsched.MatrixKinds(), ", ") + ")", Run: runSchedGen})
}

const schedMore = `Examples:
  commcost sched count --matrices 300 --out runs/sched.jsonl
  mpirun -np 8 --oversubscribe --mca mpi_yield_when_idle 1 commcost sched comm --out runs/sched.jsonl
  commcost sched comm --backend local --np 32      (goroutine ranks: not network times)
  commcost sched breakeven --in runs/sched.jsonl
`

// bindSched binds cfg and the shared configurations to a new flag set,
// with the defaults, help and old spellings that permsched's lists own.
func bindSched(name string, stderr io.Writer, cfg interface{ Texts() permsched.Texts }, more ...any) *cli.Bound {
	b, t := cli.Bind(cli.NewFlagSet(name, stderr), append([]any{cfg}, more...)...), cfg.Texts()
	for k, v := range t.Defaults {
		cli.Default(b.FS, k, v)
	}
	for k, u := range t.Usage {
		cli.Usage(b.FS, k, u)
	}
	for _, a := range t.Aliases {
		cli.Alias(b.FS, a[0], a[1], a[2])
	}
	return b
}

// tables is the output of the measuring experiments, which print tables.
type tables struct{ job.Output }

func (t *tables) Validate() error { return permsched.CheckFormat(t.Format) }

func runSchedCount(args []string, stdout, stderr io.Writer) error {
	var cfg permsched.CountConfig
	var out permsched.Tables
	b := bindSched("sched count", stderr, &cfg, &out)
	if err := b.Check(args, false); err != nil {
		return err
	}
	if n := cfg.Demand(); n.Bytes > 0 {
		if err := job.CheckNeed(flagText(b, n.Field), n); err != nil {
			return err
		}
	}
	return writeOut(out.Out, func(emit func(results.Record) error) error { return cfg.Report(out, stdout, stderr, emit) })
}

func runSchedComm(args []string, stdout, stderr io.Writer) error {
	var cfg permsched.CommConfig
	var launch job.Launch
	var out tables
	b := bindSched("sched comm", stderr, &cfg, &launch, &out)
	if err := b.Check(args, false); err != nil {
		return err
	}
	return measure(b, &cfg, cfg.CheckRanks, launch, out, stdout, stderr, cfg.Run)
}

func runSchedBreakeven(args []string, stdout, stderr io.Writer) error {
	var be permsched.Breakeven
	var launch job.Launch
	var out tables
	b := bindSched("sched breakeven", stderr, &be, &launch, &out)
	if err := b.Check(args, false); err != nil {
		return err
	}
	if len(be.In) == 0 {
		return measure(b, &be.CommConfig, be.CheckRanks, launch, out, stdout, stderr, be.Run)
	}
	for _, name := range slices.Sorted(maps.Keys(cli.Given(b.FS))) {
		if !slices.Contains([]string{"in", "reuse", "out", "format", "markdown"}, name) {
			return opts.Badf("--in and --%s exclude each other: with --in the fit reads records and measures nothing", name)
		}
	}
	cm, recs, err := be.Fit(func(msg string) { cli.Warn(stderr, msg) })
	if err != nil {
		return b.Err(err)
	}
	return writeOut(out.Out, func(emit func(results.Record) error) error {
		return cm.Report(stdout, recs, results.NewMeta("none"), emit, out.Format == results.FormatMarkdown)
	})
}

func runSchedGen(args []string, stdout, stderr io.Writer) error {
	var g permsched.GenConfig
	b := bindSched("sched gen", stderr, &g)
	if err := b.Check(args, false); err != nil {
		return err
	}
	n := permsched.GenDemand(g.Gen, g.N, g.D, g.Keys)
	if err := job.CheckNeed(flagText(b, n.Field), n); err != nil {
		return err
	}
	return g.Write(stdout)
}

// measure runs an experiment on the launch's ranks once every rank found
// the world's size fits cfg (checkRanks), with --out open, cfg's records keeping their
// samples with --samples and its progress lines on stderr without --quiet.
func measure(b *cli.Bound, cfg *permsched.CommConfig, checkRanks func(int) error, launch job.Launch, out tables, stdout, stderr io.Writer,
	run func(mpi.Comm, results.Meta, func(results.Record) error, io.Writer, bool) error) error {
	cfg.KeepSamples = out.Samples
	if !out.Quiet {
		cfg.Progress = stderr
	}
	ranks := job.CheckRanks(func(p int) error { return b.Err(checkRanks(p)) })
	need := func(p int) job.MemNeed {
		n := permsched.CommDemand(p, *cfg)
		return job.MemNeedOf(flagText(b, n.Field), n)
	}
	return job.Measure{Launch: launch, Output: out.Output, Ranks: ranks, Demand: job.Demand{Need: need}, Label: b.FS.Name()}.Run(nil, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return run(c, meta, emit, stdout, out.Format == results.FormatMarkdown)
	})
}

// writeOut opens --out once the input is checked, runs write with the
// function that appends a record to it (nil without --out) and closes it.
func writeOut(path string, write func(emit func(results.Record) error) error) error {
	// The records' metadata carries the launch identifier.
	if err := results.CheckLaunchEnv(); err != nil {
		return opts.Badf("%v", err)
	}
	jw, err := job.OpenOut(path)
	if err != nil {
		return err
	}
	if jw == nil {
		return write(nil)
	}
	return errors.Join(write(jw.Write), jw.Close())
}

// flagText is "--name value" of flag name as given or by default, for the
// message of a demand the machine cannot meet.
func flagText(b *cli.Bound, name string) string {
	if t := b.FlagText(name); t != "" {
		return t // as given: --sizes 1G, not its 1073741824 bytes
	}
	if f := b.FS.Lookup(name); f != nil && f.Value.String() != "" {
		return "--" + name + " " + opts.Echo(f.Value.String())
	}
	return "--" + name
}
