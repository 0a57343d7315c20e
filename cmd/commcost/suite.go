package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/commcost/commcost/apps/appexp"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{Name: "suite", Summary: "the main job: calibration sweeps into a run directory with a report", Run: runSuite})
}

// runSuite is the main job (make run): ping-pong and bandwidth sweeps over
// two ranks (the first two when there are more), a k-k-access sweep over
// all ranks, a small instance of paper 000's four programs on the direct
// store, and small instances of the message-passing applications with the
// calibration their models need (suiteAppsMP), written to a new run
// directory base/<host>-<date>/ as
// records.jsonl; then report.md (tables, the fit of every model kind the
// records feed, validated on held-out points, models compared, the
// programs' phases against the fits) and plots/*.png are rendered from
// that file (package report).
func runSuite(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("suite", stderr)
	var f pt2ptFlags
	f.register(fs)
	sizes := fs.String("sizes", defaultBandwidthSizes, "message sizes for ping-pong and bandwidth: LO:HI or a list")
	rundir := fs.String("rundir", filepath.Join("results", "runs"), "base `directory` of run directories")
	withMP := fs.Bool("mp-apps", true, "also run small instances of the message-passing applications (commcost app multigrid, cannon, checkerboard, gauss) with the calibration they need, and rank the models on them")
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
	f.plan = func(p int) []patterns.Pattern { return append(f.pingPongPoints(2), f.bandwidthPoints(2)...) }
	if f.out != "" {
		return usagef("--out: suite writes records.jsonl into its run directory; use --rundir")
	}
	// A run directory is the archive later runs are compared with
	// (commcost compare tests the raw repetitions), so it keeps them.
	f.samples = true
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
		// What the sweeps need, before the run directory is made.
		if err := agree(c, checkDemand(c, &f.measureFlags, meta)); err != nil {
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
		var m *job.Meter
		if c.Rank() == 0 {
			programs, _ := appexp.SuiteStorePrograms(c.Size())
			total := 2*len(f.sizes) + len(suiteKKK)*len(suiteKKL)*len(suiteRs(c.Size())) + len(programs)
			m = job.NewMeter(f.progress, f.quiet, f.label, total)
		}
		defer m.Finish()
		emit := func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			err := s.Write(rec)
			m.Step()
			return err
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
			s.Close()
			return err
		}
		// The k-k-access sweep runs on every rank (paper 000, Def. 2): the
		// calibration data of the trilinear model.
		if err := suiteKKAccess(c, &f, meta, emit); err != nil {
			s.Close()
			return err
		}
		// Paper 000's four programs on the direct store, which the
		// trilinear fit of that sweep predicts (report.md, Applications);
		// the meter counts programs, not their phase records.
		appEmit := func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			return s.Write(rec)
		}
		if err := suiteAppSweep(c, &f, meta, appEmit, func() { m.Step() }, stderr); err != nil {
			s.Close()
			return err
		}
		// The message-passing programs of papers 001 and 003, with the
		// calibration of the patterns they name.
		if *withMP {
			if err := suiteAppsMP(c, f.reps(), f.validate, meta, emit); err != nil {
				s.Close()
				return err
			}
		}
		m.Finish() // the progress line ends before the report prints
		if err := s.Close(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			return writeReport(dir, stdout)
		}
		return nil
	})
}

// The suite's k-k-access grid: every k and l level the trilinear model
// needs, and every realisable portion r = j/p of up to four levels. Every
// power of two in l, so each protocol regime of the piecewise trilinear
// model (eager up to 2 KiB, rendezvous from 4 KiB on shared memory) holds
// the three sizes a segment needs.
var (
	suiteKKK = []int{1, 2, 4, 8}
	suiteKKL = []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// suiteKKSeed fixes the k-k-access permutations so runs are comparable.
const suiteKKSeed = 1

// suiteRs are the portions r = j/p of the suite's k-k-access sweep.
func suiteRs(p int) []float64 {
	var rs []float64
	for j := 1; j <= p; j++ {
		if p <= 4 || j*4%p == 0 { // at most four levels: p/4, p/2, 3p/4, p
			rs = append(rs, float64(j)/float64(p))
		}
	}
	return rs
}

func suiteKKAccess(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error) error {
	p := c.Size()
	rs := suiteRs(p)
	meta.Seed = suiteKKSeed
	reps := f.reps()
	for _, k := range suiteKKK {
		for _, l := range suiteKKL {
			for _, r := range rs {
				kk := patterns.KKAccess{K: k, L: l, R: r, Op: patterns.AccessRead, Seed: suiteKKSeed, Validate: f.validate, Reps: reps}
				if _, err := measurePoint(c, emit, kk, meta); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeReport renders report.md and plots/ from the run directory's
// records.jsonl as written (the same call as `commcost report DIR`, so
// the report can always be regenerated byte for byte), prints the model
// part and says where the run is.
func writeReport(dir string, stdout io.Writer) error {
	run, err := report.RegenerateRunDir(dir)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(run.Fits); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "\nrun directory: %s (records.jsonl, report.md, plots/)\n", dir)
	return err
}
