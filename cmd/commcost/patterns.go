package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// init makes every registered pattern sweep (patterns.Register) a
// subcommand: its configuration's flags, the shared launch and output
// flags, and one driver that checks the ranks and the demand and measures
// the plan.
func init() {
	for _, d := range patterns.Defs() {
		cli.Register(cli.Command{Name: d.Name, Summary: d.Summary, Run: func(args []string, stdout, stderr io.Writer) error {
			return runSweep(d, args, stdout, stderr)
		}, Check: func(args []string, stderr io.Writer) error {
			_, err := parseSweep(d, args, stderr)
			return err
		}})
	}
}

// bindSweep binds a new configuration of d, the launch and the output to
// fs, with d's own defaults and help of the shared flags.
func bindSweep(d patterns.Def, fs *cli.Bound) {
	for name, v := range d.Defaults {
		cli.Default(fs.FS, name, v)
	}
	for name, u := range d.Usage {
		cli.Usage(fs.FS, name, u)
	}
}

// parsedSweep is a sweep's subcommand with its flags parsed and checked.
type parsedSweep struct {
	sw     patterns.Sweep
	launch job.Launch
	out    job.Output
	fs     *flag.FlagSet
	b      *cli.Bound
}

// parseSweep parses and checks the flags of sweep d's subcommand: all a
// run checks before it starts the world (the check-only mode's Check).
func parseSweep(d patterns.Def, args []string, stderr io.Writer) (*parsedSweep, error) {
	p := &parsedSweep{sw: d.New()}
	p.fs = cli.NewFlagSet(d.Name, stderr)
	p.b = cli.Bind(p.fs, p.sw, &p.launch, &p.out)
	bindSweep(d, p.b)
	if err := p.b.Check(args, false); err != nil {
		return nil, err
	}
	return p, nil
}

// runSweep runs the subcommand of sweep d.
func runSweep(d patterns.Def, args []string, stdout, stderr io.Writer) error {
	p, err := parseSweep(d, args, stderr)
	if err != nil {
		return err
	}
	sw, launch, out, fs, b := p.sw, p.launch, p.out, p.fs, p.b
	plan := func(p int) []patterns.Pattern {
		pts, _ := sw.Plan(p) // refused before (Ranks) when it errs
		return pts
	}
	m := job.Measure{Launch: launch, Output: out, Progress: stderr, Label: fs.Name(),
		Ranks: func(c mpi.Comm) error {
			if _, err := sw.Plan(c.Size()); err != nil {
				return job.Hinted(c, b.Err(err), ranksFor(sw), d.Name)
			}
			wc, ok := sw.(patterns.WorldChecker)
			if !ok {
				return nil
			}
			note, err := wc.CheckWorld(c)
			if err == nil && note != "" && c.Rank() == 0 {
				fmt.Fprintf(stderr, "commcost %s: %s\n", d.Name, note)
			}
			return b.Err(err)
		},
		Demand: job.Demand{Plan: plan, FlagText: b.Binding(0).FlagTextOfParam},
	}
	if bg, ok := sw.(interface{ Budget() float64 }); ok {
		m.Demand.MaxTime = bg.Budget()
	}
	r, isRunner := sw.(patterns.Runner)
	if isRunner {
		m.Points = r.Points(0)
	}
	return m.Run(stdout, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		if s, ok := sw.(interface{ SeedOf() int64 }); ok {
			meta.Seed = s.SeedOf()
		}
		if isRunner {
			return r.Run(c, meta, func(p patterns.Pattern, write bool) (patterns.Measurement, error) {
				if !write {
					return job.MeasurePoint(c, func(results.Record) error { return nil }, p, meta)
				}
				return job.MeasurePoint(c, emit, p, meta)
			})
		}
		return job.MeasurePoints(c, emit, plan(c.Size()), meta)
	})
}

// ranksFor is a rank count the sweep plans on, for the hint of a world it
// refuses: the usual 4, else the fewest that work.
func ranksFor(sw patterns.Sweep) int {
	for _, p := range []int{4, 2, 3, 6, 8, 16} {
		if _, err := sw.Plan(p); err == nil {
			return p
		}
	}
	return 4
}
