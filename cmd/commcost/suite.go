package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{name: "suite", summary: "the main job: calibration sweeps into a run directory with a report", run: runSuite})
}

// runSuite is the main job (make run): ping-pong and bandwidth sweeps over
// two ranks (the first two when there are more), written to a new run
// directory base/<host>-<date>/ as records.jsonl plus report.md, and printed.
func runSuite(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("suite", stderr)
	var f pt2ptFlags
	f.register(fs)
	sizes := fs.String("sizes", defaultBandwidthSizes, "message sizes for ping-pong and bandwidth: LO:HI or a list")
	rundir := fs.String("rundir", filepath.Join("results", "runs"), "base `directory` of run directories")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := f.check(fs); err != nil {
		return err
	}
	var err error
	if f.sizes, err = parseSizes("sizes", *sizes); err != nil {
		return err
	}
	f.window = patterns.OSUWindow
	if f.out != "" {
		return usagef("--out: suite writes records.jsonl into its run directory; use --rundir")
	}
	atLeastTwo := func(c mpi.Comm) error {
		return needRanks(c, "suite", func(n int) bool { return n >= 2 }, "at least 2 ranks")
	}
	return withWorld(f.backend, f.np, func(c mpi.Comm) error {
		if err := agree(c, atLeastTwo(c)); err != nil {
			return err
		}
		meta, err := newMeta(c)
		if err != nil {
			return err
		}
		var dir string
		if c.Rank() == 0 {
			dir, err = results.NewRunDir(*rundir, shortHost(meta.Hosts), time.Now())
			if err != nil {
				err = usagef("--rundir %s: %v", *rundir, err)
			}
			f.out = filepath.Join(dir, results.RecordsFile)
		}
		if err := agree(c, err); err != nil {
			return err
		}
		s, err := openSink(c, &f.measureFlags, stdout)
		if err != nil {
			return err
		}
		emit := func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			return s.write(rec)
		}
		// The two-party benchmarks run on ranks 0 and 1; others wait.
		color := mpi.Undefined
		if c.Rank() < 2 {
			color = 0
		}
		pair, err := c.Split(color, c.Rank())
		if err == nil && pair != nil {
			err = pingPongSweep(pair, &f, meta, emit)
			if err == nil {
				err = bandwidthSweep(pair, &f, meta, emit)
			}
			if ferr := pair.Free(); err == nil {
				err = ferr
			}
		}
		if err := agree(c, err); err != nil {
			s.close()
			return err
		}
		if err := s.close(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			return writeReport(dir, s.recs, stdout)
		}
		return nil
	})
}

// writeReport renders report.md from the records and says where the run is.
func writeReport(dir string, recs []results.Record, stdout io.Writer) error {
	path := filepath.Join(dir, results.ReportFile)
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(fh, "# commcost run %s\n\n", filepath.Base(dir))
	if len(recs) > 0 {
		m := recs[0].Meta
		fmt.Fprintf(fh, "MPI: %s. Hosts: %v, ranks per host %v. Backend %s. Commit %s. Date %s.\n\n",
			firstLine(m.MPILibrary), m.Hosts, m.RanksPerHost, m.Backend, m.Commit, m.Date)
	}
	if err := results.RenderTable(fh, recs, results.TableOptions{Markdown: true}); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nrun directory: %s (records.jsonl, report.md)\n", dir)
	return nil
}
