package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

func init() {
	cli.Register(cli.Command{
		Name:    "report",
		Summary: "regenerate a run directory's report.md and plots/ from its records.jsonl",
		Run:     runReport,
	})
}

const reportUsage = `usage: commcost report DIR

Rebuilds DIR/report.md and DIR/plots/ from DIR/records.jsonl alone (a run
directory of 'commcost suite'): the record tables, every model kind the
records feed, fitted and validated on held-out points, plots of measured
points against the fits, and the models compared per bench. Each file is
written whole (a temporary file renamed into place); a failure to write
exits with status 1 and names the file. A records.jsonl whose last line
was cut off (an interrupted run) is used without that line, with a warning.
`

func runReport(args []string, stdout, stderr io.Writer) error {
	fset := cli.NewFlagSet("report", stderr)
	fset.Usage = func() { fmt.Fprint(fset.Output(), reportUsage) }
	if err := cli.Parse(fset, args, true); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return opts.Badf("report wants one run directory DIR, got %d argument(s); usage: commcost report DIR", fset.NArg())
	}
	dir := fset.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return opts.Badf("DIR %s: not a directory (want a run directory holding %s)", dir, results.RecordsFile)
	}
	recs, truncated, err := report.ReadReportDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return opts.Badf("DIR %s: no %s (want a run directory of commcost suite)", dir, results.RecordsFile)
		}
		return opts.Badf("DIR %s: %v", dir, err)
	}
	run, err := report.BuildRun(recs, truncated)
	if err != nil {
		return err
	}
	if err := report.WriteRunDir(dir, run); err != nil {
		return err
	}
	if truncated {
		fmt.Fprintf(stderr, "commcost: warning: the last line of %s is an incomplete record; the report leaves it out\n",
			filepath.Join(dir, results.RecordsFile))
	}
	_, err = fmt.Fprintf(stdout, "%s, %s/ (%d plots) from %d records of %s\n",
		filepath.Join(dir, results.ReportFile), filepath.Join(dir, results.PlotsDir), len(run.Plots), len(recs),
		filepath.Join(dir, results.RecordsFile))
	return err
}
