package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
)

// fitReadFactor is fit's peak memory per byte of its records file: the
// records, and the selection's copies of those of the model's bench
// (model.selectRecords). Measured: 3.4 times the file for 100,000
// ping-pong records with the collector near its limit (GOGC=10), against
// 2.5 for the records alone.
const fitReadFactor = 4

func init() {
	cli.Register(cli.Command{Name: "fit", Summary: "fit a cost model to a JSON Lines file (fit -h lists the models)", Run: runFit})
}

const fitUsage = `usage: commcost fit MODEL FILE.jsonl [flags]

Reads the records of FILE.jsonl the model is fitted from (other benches are
ignored), fits on per-point medians with relative weights by QR least
squares, and prints parameters with standard errors and 95% confidence
intervals, the fit quality and held-out validation; --format json prints the
model in the form 'commcost predict' reads, with the records' backend
("backend": native or local; replay and export simgrid refuse local).
Records without the needed pattern, and records that cannot determine the
model (too few levels, ill-conditioned), exit with status 2 naming what is
missing, and so does a fit the readers of its model file would refuse (a
negative time per byte: the records do not follow the model), in either
format.
A flag the model does not read (say --op for hockney) is refused.

MODEL is one of:
`

// runFit is report.FitCommand on the positional MODEL and FILE.
func runFit(args []string, stdout, stderr io.Writer) error {
	var f report.FitCommand
	fs := cli.NewFlagSet("fit", stderr)
	b := cli.Bind(fs, &f)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), fitUsage)
		report.WriteKinds(fs.Output())
		fmt.Fprintln(fs.Output(), "\nflags:")
		cli.PrintDefaults(fs)
	}
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return opts.Badf("fit wants MODEL and FILE.jsonl, got %d argument(s); usage: commcost fit %s FILE.jsonl [flags]",
			len(pos), strings.Join(model.Kinds(), "|"))
	}
	f.Kind, f.Path = pos[0], pos[1]
	if err := b.Validate(); err != nil {
		return err
	}
	recs, err := readRecordsFileDemand("FILE", f.Path, fitReadFactor, stderr)
	if err != nil {
		return err
	}
	return b.Err(f.Run(recs, stdout, stderr))
}
