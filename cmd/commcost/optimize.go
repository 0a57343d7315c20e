package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/results"
)

// init registers commcost optimize: the optimal split of paper 000,
// section 7, Figure 13 (optsplit.OptimizeJob).
func init() {
	cli.Register(cli.Command{Name: "optimize", Summary: optsplit.OptimizeSummary, Run: runOptimize})
}

func runOptimize(args []string, stdout, stderr io.Writer) error {
	var j optsplit.OptimizeJob
	var launch job.Launch
	var out job.Output
	fs := cli.NewFlagSet("optimize", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), optsplit.OptimizeUsage)
		cli.PrintDefaults(fs)
	}
	b := cli.Bind(fs, &j, &launch, &out)
	tuneFlags(fs, &j)
	fs.Lookup("D").DefValue = "" // required: no default to show
	if err := b.Check(args, false); err != nil {
		return err
	}
	// Rank 0's model from --fit is fitted with the rank check, so that bad
	// records stop the run before any output is opened; a model without
	// an optimum, or one predicting no time, is a finding (exit 1) naming
	// the file.
	ranks := func(c mpi.Comm) error {
		if err := job.CheckRanks(func(p int) error { return b.Err(j.Ranks(p)) })(c); err != nil {
			return err
		}
		err := j.Load(c, stderr)
		if err != nil && !opts.IsBadInput(err) {
			return fmt.Errorf("%s: %w", b.Binding(0).FlagText("Fit"), err)
		}
		return b.Err(err)
	}
	var report bytes.Buffer
	out.Mixed = j.Mixed()
	err := job.Measure{Launch: launch, Output: out, Ranks: ranks, Progress: stderr, Label: fs.Name()}.Run(stdout,
		func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
			return j.Run(c, meta, emit, &report, stderr)
		})
	if err != nil {
		return err
	}
	return results.WriteReport(stdout, stderr, out.Format, report.Bytes())
}
