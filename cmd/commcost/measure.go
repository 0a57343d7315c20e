package main

import (
	"flag"
	"io"
	"math"

	"github.com/commcost/commcost/job"
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

// openSink opens the outputs of mf on rank 0 (job.OpenSink).
func openSink(c mpi.Comm, mf *measureFlags, stdout io.Writer) (*job.Sink, error) {
	return job.OpenSink(c, mf.output(), stdout)
}

func (m *measureFlags) output() job.Output {
	return job.Output{Format: m.format, Out: m.out, Samples: m.samples, Quiet: m.quiet}
}

// demand is what the run asks of the machine (job.Demand).
func (m *measureFlags) demand() job.Demand {
	d := job.Demand{Plan: m.plan, MaxTime: m.maxTime, FlagText: func(param string) string {
		flag := memFlags[param]
		if flag == "" {
			flag = param
		}
		return flagText(m, flag)
	}}
	if m.need != nil {
		d.Need = func(p int) job.MemNeed { return m.need(p).job() }
	}
	return d
}

// memFlags maps the parameter a pattern's memory grows with to the flag
// that sets it.
var memFlags = map[string]string{"bytes": "sizes", "l": "l", "k": "k"}

// flagText is "--name value" for a flag as given on the command line, or
// "--name" when it was left at its default.
func flagText(mf *measureFlags, name string) string {
	if v, ok := mf.given[name]; ok {
		return "--" + name + " " + echo(v)
	}
	return "--" + name
}

// checkDemand checks the run's demand on this rank (job.Demand.Check).
func checkDemand(c mpi.Comm, mf *measureFlags, meta results.Meta) error {
	return mf.demand().Check(c, meta)
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

// runMeasured is the skeleton of a measuring subcommand (job.Measure).
func runMeasured(mf *measureFlags, stdout io.Writer, rankCheck func(c mpi.Comm) error,
	body func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error) error {
	m := job.Measure{Launch: job.Launch{Backend: mf.backend, NP: mf.np, Timeout: mf.timeout},
		Output: mf.output(), Ranks: rankCheck, Demand: mf.demand(), Points: mf.points,
		Progress: mf.progress, Label: mf.label}
	return m.Run(stdout, body)
}

// measurePoints measures the instances of a sweep in order.
func measurePoints(c mpi.Comm, emit func(results.Record) error, pts []patterns.Pattern, meta results.Meta) error {
	return job.MeasurePoints(c, emit, pts, meta)
}

// measurePoint measures one pattern instance (job.MeasurePoint).
func measurePoint(c mpi.Comm, emit func(results.Record) error, pat patterns.Pattern, meta results.Meta) (patterns.Measurement, error) {
	return job.MeasurePoint(c, emit, pat, meta)
}
