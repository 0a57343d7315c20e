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

// commcost optimize: the optimal split of paper 000, section 7, Figure 13
// (optsplit.OptimizeJob).
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
	// records stop the run before any output is opened; records that
	// cannot determine the model are a finding (exit 1) naming the file.
	ranks := func(c mpi.Comm) error {
		if err := job.CheckRanks(func(p int) error { return b.Err(j.Ranks(p)) })(c); err != nil {
			return err
		}
		if err := j.Load(c, stderr); err != nil && !opts.IsBadInput(err) {
			return fmt.Errorf("%s: %w", b.Binding(0).FlagText("Fit"), err)
		} else if err != nil {
			return b.Err(err)
		}
		return nil
	}
	var report bytes.Buffer
	csv := newMixedCSV(&out, stdout, &j)
	err := job.Measure{Launch: launch, Output: out, Ranks: ranks, Progress: stderr, Label: fs.Name()}.Run(csv.stdout,
		func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
			return j.Run(c, meta, csv.emit(c, emit), &report, stderr)
		})
	if err = csv.flush(stdout, err); err != nil {
		return err
	}
	return results.WriteReport(stdout, stderr, out.Format, report.Bytes())
}

// mixedCSV prints the CSV of a run whose records are of several benches
// (cfg.Mixed) at the end, with the union of their columns
// (results.WriteCSV): a CSV stream commits to the columns of its first
// record. The --out file streams JSON Lines as usual.
type mixedCSV struct {
	on     bool
	stdout io.Writer // what the run's sink writes to
	all    []results.Record
}

func newMixedCSV(out *job.Output, stdout io.Writer, cfg any) *mixedCSV {
	m, ok := cfg.(interface{ Mixed() bool })
	c := &mixedCSV{on: ok && m.Mixed() && out.Format == results.FormatCSV, stdout: stdout}
	if c.on {
		out.Format, c.stdout = results.FormatJSONL, io.Discard
	}
	return c
}

// emit keeps rank 0's records for the end.
func (m *mixedCSV) emit(c mpi.Comm, emit func(results.Record) error) func(results.Record) error {
	return func(rec results.Record) error {
		if m.on && c.Rank() == 0 {
			m.all = append(m.all, rec)
		}
		return emit(rec)
	}
}

// flush writes the CSV, also after a failure (err), as the tables show
// what was measured.
func (m *mixedCSV) flush(stdout io.Writer, err error) error {
	if len(m.all) > 0 {
		if cerr := results.WriteCSV(stdout, m.all); err == nil {
			err = cerr
		}
	}
	return err
}
