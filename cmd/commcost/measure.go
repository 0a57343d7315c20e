package main

import (
	"errors"
	"flag"
	"io"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// measureFlags are the flags every measuring subcommand shares: repetitions,
// output and backend. Pattern subcommands embed them.
type measureFlags struct {
	iters    int
	warmup   int
	relCI    float64
	minReps  int
	maxReps  int
	maxTime  float64
	timeout  float64
	validate bool
	samples  bool
	format   results.Format
	out      string
	backend  string
	np       int
	quiet    bool
	set      map[string]bool   // flags given on the command line
	given    map[string]string // their values as given
	// points is the number of points (records) the sweep will write, for
	// the progress line's total and estimate; 0 when the subcommand does
	// not know it in advance (runMeasured counts plan's points then).
	points int
	// progress is where the progress line goes (the flag set's output:
	// stderr), and label what it says the sweep is.
	progress io.Writer
	label    string
	// plan lists the pattern instances a sweep measures on p ranks, in
	// order: runMeasured checks what they ask of the machine (memory per
	// rank, the time floor of a repetition) before it opens any output,
	// and measurePoints measures them. Nil for subcommands that measure
	// no patterns.
	plan func(p int) []patterns.Pattern
	// need is the memory per rank of a subcommand without a plan (dsm's
	// variables), nil if negligible.
	need func(p int) memNeed
}

func (m *measureFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&m.iters, "iters", 0, "iterations per timed repetition (default: OSU counts / 10: 1000 up to 8K, 100 above)")
	fs.IntVar(&m.warmup, "warmup", 0, "untimed warm-up iterations (default: OSU skip counts, 100 up to 8K, 10 above)")
	fs.Float64Var(&m.relCI, "rel-ci", patterns.DefaultRelCI, "repeat until the 95% CI of the median is within this fraction of the median")
	fs.IntVar(&m.minReps, "min-reps", patterns.DefaultMinReps, "minimum timed repetitions per point")
	fs.IntVar(&m.maxReps, "max-reps", patterns.DefaultMaxReps, "maximum timed repetitions per point")
	fs.Float64Var(&m.maxTime, "max-time", patterns.DefaultMaxTimeSec, "seconds of timed repetitions per point before stopping")
	fs.Float64Var(&m.timeout, "timeout", defaultTimeoutSec, "seconds a measurement point may go without progress (and beyond its --max-time budget) before the rank that waits ends the job: a hung or stopped peer")
	fs.BoolVar(&m.validate, "validate", false, "fill and check every buffer; a mismatch is an error")
	fs.BoolVar(&m.samples, "samples", false, "keep every repetition's time in the records")
	fs.Var(&m.format, "format", "output `format` on stdout: "+results.FormatNames)
	fs.StringVar(&m.out, "out", "", "append records to this JSON Lines `file`, flushed one record at a time")
	fs.StringVar(&m.backend, "backend", backendNative, "native (system MPI, under mpirun) or local (goroutine ranks; not a network measurement)")
	fs.IntVar(&m.np, "np", 2, "ranks for --backend local")
	fs.BoolVar(&m.quiet, "quiet", false, "no progress line on stderr (shown only when stderr is a terminal and the sweep takes more than a few seconds)")
	m.progress, m.label = fs.Output(), fs.Name()
}

// check validates the values after parsing; every message names the flag
// and the accepted form.
func (m *measureFlags) check(fs *flag.FlagSet) error {
	m.set, m.given = map[string]bool{}, map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		m.set[f.Name] = true
		m.given[f.Name] = f.Value.String()
	})
	if m.set["iters"] && m.iters < 1 {
		return mustBePositive("iters", m.iters)
	}
	if m.set["warmup"] && m.warmup < 0 {
		return mustNotBeNegative("warmup", m.warmup)
	}
	if !(m.relCI > 0 && m.relCI < 1) {
		return usagef("--rel-ci %v: the target must be a fraction in (0, 1), e.g. 0.03", m.relCI)
	}
	if m.minReps < 1 {
		return mustBePositive("min-reps", m.minReps)
	}
	if m.maxReps < m.minReps {
		return usagef("--max-reps %d: must be an integer >= --min-reps (%d)", m.maxReps, m.minReps)
	}
	if !(m.maxTime > 0) || math.IsInf(m.maxTime, 0) {
		return usagef("--max-time %v: must be a positive number of seconds", m.maxTime)
	}
	if err := checkTimeout(m.timeout); err != nil {
		return err
	}
	setTimeout(m.timeout)
	if m.backend != backendNative && m.backend != backendLocal {
		return usagef("--backend %q: accepted values are native and local", m.backend)
	}
	if m.np < 1 || m.np > 4096 {
		return usagef("--np %d: the local backend takes 1 to 4096 ranks", m.np)
	}
	return nil
}

// warmupIters is the untimed iteration count: an explicit --warmup 0 means
// none; unset means the OSU default.
func (m *measureFlags) warmupIters() int {
	if m.set["warmup"] && m.warmup == 0 {
		return -1
	}
	return m.warmup
}

func (m *measureFlags) reps() patterns.Reps {
	return patterns.Reps{MinReps: m.minReps, MaxReps: m.maxReps, MaxTime: m.maxTime, RelCI: m.relCI}
}

// sink is where rank 0 sends records: the --out file and stdout in the
// chosen format. Other ranks get a sink that drops everything.
type sink struct {
	writers []results.RecordWriter
	closers []func() error
	keep    bool // keep raw samples
	recs    []results.Record
}

// openSink opens the outputs on rank 0; the result on every rank is agreed,
// so a bad --out fails everywhere before anything is measured.
func openSink(c mpi.Comm, mf *measureFlags, stdout io.Writer) (*sink, error) {
	s := &sink{keep: mf.samples}
	var err error
	if c.Rank() == 0 {
		if mf.out != "" {
			var jw *results.JSONLWriter
			if jw, err = openOut(mf.out); err == nil {
				s.writers = append(s.writers, jw)
				s.closers = append(s.closers, jw.Close)
			}
		}
		if err == nil {
			w := mf.format.NewWriter(stdout, results.TableOptions{})
			s.writers = append(s.writers, w)
			s.closers = append(s.closers, w.Close)
		}
	}
	if err := agree(c, err); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// write hands one finished record to every output; each flushes it at once.
func (s *sink) write(rec results.Record) error {
	if !s.keep {
		rec.Samples = nil
	}
	s.recs = append(s.recs, rec)
	var errs []error
	for _, w := range s.writers {
		errs = append(errs, w.Write(rec))
	}
	return errors.Join(errs...)
}

func (s *sink) close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// needRanks refuses a world of the wrong size with a usage error (exit 2)
// that says how to start the program right.
func needRanks(c mpi.Comm, what string, ok func(n int) bool, want string) error {
	if ok(c.Size()) {
		return nil
	}
	hint := ""
	if c.Size() == 1 && c.Backend() == backendNative {
		hint = " (started without an MPI launcher? run: " + runLine(2, what) + ")"
	}
	return usagef("%s needs %s, got %d%s", what, want, c.Size(), hint)
}

// runMeasured is the skeleton of a measuring subcommand: check the rank
// count, open the outputs, fill the metadata, then call body with a function
// that writes one record; outputs are closed at the end on rank 0. Rank 0
// shows a progress line on a terminal stderr (meter), one step per record,
// out of mf.points when the subcommand set it (else the points of its plan).
func runMeasured(mf *measureFlags, stdout io.Writer, rankCheck func(c mpi.Comm) error,
	body func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error) error {
	return withWorld(mf.backend, mf.np, func(c mpi.Comm) error {
		if err := agree(c, rankCheck(c)); err != nil {
			return err
		}
		meta, err := newMeta(c)
		if err != nil {
			return err
		}
		if err := agree(c, checkDemand(c, mf, meta)); err != nil {
			return err
		}
		s, err := openSink(c, mf, stdout)
		if err != nil {
			return err
		}
		var m *meter
		if c.Rank() == 0 {
			if mf.points == 0 && mf.plan != nil {
				mf.points = len(mf.plan(c.Size())) // a record per point
			}
			m = newMeter(mf.progress, mf.quiet, mf.label, mf.points)
		}
		err = body(c, meta, func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			err := s.write(rec)
			m.step()
			return err
		})
		m.finish()
		if cerr := s.close(); err == nil {
			err = cerr
		}
		return err
	})
}

// measurePoints measures the instances of a sweep in order (measurePoint).
func measurePoints(c mpi.Comm, emit func(results.Record) error, pts []patterns.Pattern, meta results.Meta) error {
	for _, pat := range pts {
		if _, err := measurePoint(c, emit, pat, meta); err != nil {
			return err
		}
	}
	return nil
}

// measurePoint measures one pattern instance on every rank of c and writes
// the record the pattern builds for itself (emitRecord: the outcome is
// agreed). The measurement comes back for callers that derive the next
// point from it (prtt's auto delay).
func measurePoint(c mpi.Comm, emit func(results.Record) error, pat patterns.Pattern, meta results.Meta) (patterns.Measurement, error) {
	end := patterns.Installed().Begin(pointName(pat, c.Size()), 0)
	m, err := pat.Run(c)
	end()
	if err != nil {
		return m, patternErr(err)
	}
	return m, emitRecord(c, emit, pat.Record(m, meta))
}
