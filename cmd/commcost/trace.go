package main

import (
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/simgrid"
	"github.com/commcost/commcost/trace"
)

func init() {
	cli.Register(cli.Command{Name: "trace", Run: runTrace,
		Summary: "trace an unmodified MPI program, one file per rank: mpirun -np 4 commcost trace [--out DIR] -- PROGRAM ARGS..."})
	cli.Register(cli.Command{Name: "trace summary", Run: runTraceSummary,
		Summary: "a trace's time in MPI against compute per rank, calls by type, message sizes, the communication matrix"})
}

func runTrace(args []string, stdout, stderr io.Writer) error {
	var l trace.Launch
	fs := cli.NewFlagSet("trace", stderr)
	if err := cli.Bind(fs, &l).Check(args, true); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		l.Program, l.Args = fs.Arg(0), fs.Args()[1:]
	}
	l.Convert, l.CheckConvert = simgrid.WriteRankTIT, simgrid.CheckTITTargets
	l.Rank, l.Size = job.LauncherRank(), job.LauncherSize()
	return l.Run(stdout, stderr)
}

func runTraceSummary(args []string, stdout, stderr io.Writer) error {
	var c trace.SummaryConfig
	fs := cli.NewFlagSet("trace summary", stderr)
	b := cli.Bind(fs, &c)
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return opts.Badf("want one trace directory: commcost trace summary DIR [--heatmap FILE.png]")
	}
	if err := b.Validate(); err != nil {
		return err
	}
	c.Dir = pos[0]
	return c.Run(stdout)
}
