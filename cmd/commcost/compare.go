package main

import (
	"fmt"
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/report"
)

func init() {
	cli.Register(cli.Command{
		Name:    "compare",
		Summary: "compare runs (medians, ratios, Mann-Whitney verdicts) or models against records",
		Run:     runCompare,
	})
}

const compareUsage = `usage: commcost compare [flags] A B [C ...]
       commcost compare --by KEY [flags] INPUT [INPUT ...]
       commcost compare --models [flags] MODEL.json [MODEL.json ...] RECORDS

Each input is a run directory (its records.jsonl), a JSON Lines file of
records, or either as name=path to label it. One table per bench, one row
per parameter point any input holds (a point an input lacks is shown as
missing): each input's median with its 95% CI, and for every input after
the first its ratio to the first with the verdict of a two-sided
Mann-Whitney U test on the raw repetitions, as benchstat decides it
(significant when p <= --alpha, "~" otherwise; a note when there are too
few repetitions to ever be significant), then the geometric mean of the
ratios. Benches only one input holds are listed, not compared.

--by KEY pools the inputs and compares the records grouped by a metadata
field: mpi_library, hosts, commit or launch (e.g. one file holding Open MPI
and MPICH runs). --by launch also prints (in the table and markdown formats) the spread
of each point between launches next to the spread within one launch.

--models compares fitted models (the JSON of 'commcost fit --format json')
on the records of RECORDS: each model's prediction and relative error per
point and bench, the closest marked.

Bad input (inputs with no bench in common, a file that is not JSON Lines
records, records of different schema versions, one file given twice under
any name, a label used twice, an unknown --by key) exits with status 2 and
writes nothing.

flags:
`

func runCompare(args []string, stdout, stderr io.Writer) error {
	var c report.CompareCommand
	fs := cli.NewFlagSet("compare", stderr)
	b := cli.Bind(fs, &c)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), compareUsage)
		cli.PrintDefaults(fs)
	}
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	c.Inputs = pos
	if err := b.Validate(); err != nil {
		return err
	}
	return b.Err(c.Run(stdout, stderr))
}
