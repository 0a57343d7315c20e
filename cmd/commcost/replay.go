package main

import (
	"fmt"
	"io"
	"os"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/replay"
	"github.com/commcost/commcost/results"
)

func init() {
	cli.Register(cli.Command{Name: "replay", Run: runReplay,
		Summary: "a trace's time in MPI and wall time predicted by every fitted model (--model, --calibration), against the measured; --scale bandwidth=2 for another network"})
	cli.Register(cli.Command{Name: "replay assess", Run: runReplayAssess,
		Summary: "replay several traced programs and judge the best model against the measured and against SimGrid"})
}

func runReplayAssess(args []string, stdout, stderr io.Writer) error {
	var c replay.AssessConfig
	fs := cli.NewFlagSet("replay assess", stderr)
	if err := cli.Bind(fs, &c).Check(args, false); err != nil {
		return err
	}
	return c.Run(stdout)
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	var c replay.Config
	fs := cli.NewFlagSet("replay", stderr)
	b := cli.Bind(fs, &c)
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return opts.Badf("want one trace directory: commcost replay DIR --model FILE")
	}
	if err := b.Validate(); err != nil {
		return err
	}
	c.Dir = pos[0]
	o, err := c.Run()
	if err != nil {
		return b.Err(err) // a field's error names its flag (--scale)
	}
	for _, why := range o.Skipped {
		fmt.Fprintf(stderr, "commcost: replay: --calibration %s: left out %s\n", c.Calibration, results.Printable(why))
	}
	// The records are checked before anything is printed or opened: a
	// trace of impossible calls (1e18 bytes, 1e18 ns) prices to times no
	// record holds, and is bad input, not a failure half-way through.
	recs := o.Records(os.Args)
	for _, r := range recs {
		if err := r.CheckValues(); err != nil {
			return opts.Badf("DIR %s: priced by the models, the trace gives %v: the trace's sizes or times, or a model's parameters, are no run's", c.Dir, err)
		}
	}
	jw, err := job.OpenOut(c.Out)
	if err != nil {
		return err
	}
	if err := o.Write(stdout); err != nil {
		return err
	}
	if jw == nil {
		return nil
	}
	for _, r := range recs {
		if err := jw.Write(r); err != nil {
			return err
		}
	}
	return jw.Close()
}
