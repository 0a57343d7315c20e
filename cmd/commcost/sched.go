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

// The sched subcommands bind permsched's experiment configurations; the
// library validates them, reads their files and runs them.
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

// schedAliases are the spellings of sched's flags before the one
// vocabulary, each defined where its target is and its own name is free.
var schedAliases = [][3]string{{"markdown", "format", "markdown"}, {"keep-samples", "samples", "true"}, {"samples", "matrices", ""}, {"min-samples", "min-matrices", ""}}

// bindSched binds cfg and the shared configurations to a new flag set,
// with the defaults and help that permsched's lists own and the old
// spellings.
func bindSched(name string, stderr io.Writer, cfg interface{ Texts() permsched.Texts }, more ...any) *cli.Bound {
	b := cli.Bind(cli.NewFlagSet(name, stderr), append([]any{cfg}, more...)...)
	for k, v := range cfg.Texts().Defaults {
		cli.Default(b.FS, k, v)
	}
	for k, u := range cfg.Texts().Usage {
		cli.Usage(b.FS, k, u)
	}
	for _, a := range schedAliases {
		if b.FS.Lookup(a[1]) != nil && b.FS.Lookup(a[0]) == nil {
			cli.Alias(b.FS, a[0], a[1], a[2])
		}
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
	if what, bytes := cfg.Need(); bytes > 0 {
		if err := job.CheckInProcess(b.Binding(0).FlagText("Ns"), what, bytes); err != nil {
			return err
		}
	}
	if !out.Quiet {
		cfg.Progress = stderr
	}
	return writeOut(out.Out, func(emit func(results.Record) error) error {
		return cfg.Report(stdout, out.Markdown(), results.NewMeta("none"), emit) // scheduling in this process: no MPI
	})
}

func runSchedComm(args []string, stdout, stderr io.Writer) error {
	var cfg permsched.CommConfig
	var launch job.Launch
	var out tables
	b := bindSched("sched comm", stderr, &cfg, &launch, &out)
	if err := b.Check(args, false); err != nil {
		return err
	}
	return measure(b, &cfg, launch, out, stderr, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return cfg.RunTables(c, meta, emit, stdout, out.Format == results.FormatMarkdown)
	})
}

func runSchedBreakeven(args []string, stdout, stderr io.Writer) error {
	var be permsched.Breakeven
	var launch job.Launch
	var out tables
	b := bindSched("sched breakeven", stderr, &be, &launch, &out)
	if err := b.Check(args, false); err != nil {
		return err
	}
	markdown := out.Format == results.FormatMarkdown
	if len(be.In) == 0 {
		return measure(b, &be.CommConfig, launch, out, stderr, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
			return be.Run(c, meta, emit, stdout, markdown)
		})
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
		return cm.Report(stdout, recs, results.NewMeta("none"), emit, markdown)
	})
}

func runSchedGen(args []string, stdout, stderr io.Writer) error {
	var g permsched.GenConfig
	if err := bindSched("sched gen", stderr, &g).Check(args, false); err != nil {
		return err
	}
	m, err := g.Matrix()
	if err != nil {
		return err
	}
	return permsched.WriteMatrix(stdout, m)
}

// measure runs body on the launch's ranks once every rank found the
// world's size fits cfg, with --out open and cfg's records keeping their
// samples with --samples, the progress lines on stderr without --quiet.
func measure(b *cli.Bound, cfg *permsched.CommConfig, launch job.Launch, out tables, stderr io.Writer, body func(mpi.Comm, results.Meta, func(results.Record) error) error) error {
	cfg.KeepSamples = out.Samples
	if !out.Quiet {
		cfg.Progress = stderr
	}
	ranks := job.CheckRanks(func(p int) error { return b.Err(cfg.CheckRanks(p)) })
	return job.Measure{Launch: launch, Output: out.Output, Ranks: ranks}.Run(nil, body)
}

// writeOut opens --out once the input is checked, runs write with the
// function that appends a record to it (nil without --out) and closes it.
func writeOut(path string, write func(emit func(results.Record) error) error) error {
	jw, err := job.OpenOut(path)
	if err != nil {
		return err
	}
	if jw == nil {
		return write(nil)
	}
	return errors.Join(write(jw.Write), jw.Close())
}
