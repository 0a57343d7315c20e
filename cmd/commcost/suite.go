package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{name: "suite", summary: "the main job: calibration sweeps into a run directory with a report", run: runSuite})
}

// runSuite is the main job (make run): ping-pong and bandwidth sweeps over
// two ranks (the first two when there are more) and a k-k-access sweep over
// all ranks, written to a new run directory base/<host>-<date>/ as
// records.jsonl; then the Hockney, piecewise Hockney, trilinear and
// piecewise trilinear models are fitted and validated on held-out points,
// and report.md (tables, fits) and plots/*.png are rendered from the
// records.
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
		// The k-k-access sweep runs on every rank (paper 000, Def. 2): the
		// calibration data of the trilinear model.
		if err := suiteKKAccess(c, &f, meta, emit); err != nil {
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

func suiteKKAccess(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error) error {
	p := c.Size()
	var rs []float64
	for j := 1; j <= p; j++ {
		if p <= 4 || j*4%p == 0 { // at most four levels: p/4, p/2, 3p/4, p
			rs = append(rs, float64(j)/float64(p))
		}
	}
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

// suiteFits are the models the report fits, each to the records of its
// pattern, with held-out validation on every fourth point.
var suiteFits = []struct{ kind, bench string }{
	{"hockney", "pingpong"},
	{"piecewise", "pingpong"},
	{"trilinear", "kkaccess"},
	{"trilinear-piecewise", "kkaccess"},
}

// writeFits fits the suite's models and renders each fit (coefficients with
// CIs, fit quality, held-out error) into w and a plot into plotDir. A model
// that cannot be fitted is reported in w, not fatal: the records stay.
func writeFits(w io.Writer, recs []results.Record, plotDir string) {
	hold, _ := model.ParseHoldout("every:4")
	for _, sf := range suiteFits {
		var sel []results.Record
		for _, r := range recs {
			if r.Bench == sf.bench {
				sel = append(sel, r)
			}
		}
		fmt.Fprintf(w, "\n## %s model (%s records)\n\n```\n", sf.kind, sf.bench)
		m, err := model.Fit(sf.kind, sel, model.Options{})
		if err != nil {
			fmt.Fprintf(w, "not fitted: %v\n```\n", err)
			continue
		}
		val, verr := model.CrossValidate(sf.kind, sel, model.Options{}, hold)
		note := ""
		if verr != nil {
			val, note = nil, "cross-validation skipped: "+verr.Error()
		}
		if err := writeFitTable(w, sf.kind, results.RecordsFile, m, val, note, nil, sel, 0); err != nil {
			fmt.Fprintf(w, "table: %v\n", err)
		}
		fmt.Fprintln(w, "```")
		png := filepath.Join(plotDir, sf.kind+".png")
		if err := model.Plot(m, sel, png, "commcost suite: "+sf.kind+" fit, measured (points) vs model (lines)"); err == nil {
			fmt.Fprintf(w, "\n![%s](%s/%s.png)\n", sf.kind, results.PlotsDir, sf.kind)
		}
	}
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
	var fits bytes.Buffer
	writeFits(&fits, recs, filepath.Join(dir, results.PlotsDir))
	fh.Write(fits.Bytes())
	if err := fh.Close(); err != nil {
		return err
	}
	stdout.Write(fits.Bytes())
	fmt.Fprintf(stdout, "\nrun directory: %s (records.jsonl, report.md, plots/)\n", dir)
	return nil
}
