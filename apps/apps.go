// Package apps holds commcost's parallel applications (docs/ARCHITECTURE.md,
// contract 5): programs from the papers, each written once against the interface its
// paper uses (globalvar.Store for papers 000 and 004, mpi.Comm for papers
// 001 and 003), each checking its own result against an independent oracle,
// timing every phase its paper names, and stating each communication phase
// as pattern instances with counts (results.WorkItem), so that every fitted
// model predicts it through model.PredictWorkload and no application
// computes a prediction by hand.
//
// This file is the contract every application follows and the measurement
// driver they share:
//
//   - App.Run executes the program once on every rank of Env.Comm and returns
//     this rank's Outcome: the seconds it spent in each phase (Phases.Time
//     accumulates them) and the workload of each communication phase.
//   - Measure repeats Run (after untimed warm-up runs) as patterns.Measure
//     repeats a pattern: a repetition's time of a phase is the maximum over
//     ranks of the ranks' times in that phase; repetitions stop when every
//     phase's median has a 95% CI within RelCI of it, or at MaxReps or
//     MaxTime. It returns one record per phase (bench "app"), carrying the
//     phase's workload.
//
// The message-passing programs of papers 001 and 003 (multigrid.go,
// cannon.go, checkerboard.go, gauss.go) run textbook collectives of their
// own (collectives.go) so that each phase names "aggregate" points
// exactly, state every phase at several levels (results.WorkItem.View),
// and come with what comparing models on them needs: a calibration of
// exactly the patterns a workload names (calibrate.go), the ranking of
// models on a run and paper 003's closed forms (compare.go,
// closedforms.go).
//
// Units: seconds and bytes.
package apps

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Bench is the bench name of application records; params "app" and
// "phase" say which application and phase a record measured
// (results.BenchApp, which package report reads).
const Bench = results.BenchApp

// Phase kinds (record param "kind"). Only Comm phases carry a workload and
// are predicted; Comp is local computation; Sync is time spent waiting in
// barriers or locks that the paper's formulas do not count.
const (
	KindComm = results.PhaseKindComm
	KindComp = results.PhaseKindComp
	KindSync = results.PhaseKindSync
)

// Env is what an application runs on. Store is nil for message-passing
// applications; for global-variable applications it is the strategy under
// test (direct, divalib, emulated network), created over Comm's ranks.
type Env struct {
	Comm  mpi.Comm
	Store globalvar.Store
	// Seed makes inputs reproducible: an application draws its input from
	// it, identically in every repetition, so every repetition runs the same
	// program on the same data and declares the same workload.
	Seed int64
	// State is this rank's result of the application's Setup (Setupper),
	// shared by every Run of one measurement; nil for applications without
	// Setup, and when Run is called without Measure (Run then sets itself
	// up).
	State any
}

// Setupper is implemented by applications whose runs share state created
// once per measurement, such as global variables: globalvar.Store has no
// Free, so a program that created its variables in every Run would grow
// the homes' memory with every repetition. Measure calls Setup on every
// rank (collectively, untimed) before the first run and passes the result
// to every Run in Env.State.
type Setupper interface {
	Setup(env Env) (any, error)
}

// MinRunner is an App that knows a lower bound on one run's time on p
// ranks, the first run's serial oracle included, in seconds. A run is
// never cut short (its phases are the record), so one whose bound
// exceeds the timed runs' budget plus --timeout is refused before
// anything runs rather than run for hours past both.
type MinRunner interface {
	MinRunSec(p int) float64
}

// App is one configured application.
type App interface {
	// Name is the application's name, e.g. "matmul" (record param "app").
	Name() string
	// Params are the configuration's record parameters (sizes, k, l, store,
	// variant, ...); Measure adds "app", "phase" and "kind".
	Params() results.Params
	// Check reports a configuration that cannot run on p ranks, as an error
	// naming the parameter and the accepted form (a usage error).
	Check(p int) error
	// Run executes the program once on every rank of env.Comm, verifies the
	// result against an independent oracle (a failed verification is an
	// error on every rank; see AgreeErr), and returns this rank's Outcome.
	Run(env Env) (Outcome, error)
}

// Outcome is one rank's account of one run.
type Outcome struct {
	Phases Phases
	// Workload maps each Comm phase to its communication as pattern
	// instances with counts. It must be the same on every rank and in every
	// repetition of one configuration.
	Workload map[string][]results.WorkItem
	// Counters are per-run values every rank agrees on (e.g. the measured
	// expansion factor of sample sort); Measure records rank 0's, from the
	// last repetition.
	Counters map[string]float64
}

// Phases accumulates one rank's time per named phase. The zero value is
// ready to use; Wtime is taken from the communicator given to Time.
type Phases struct {
	order []string
	kind  map[string]string
	sec   map[string]float64
	// inst holds each entry's seconds in order (one per Add), for the
	// lower envelope Measure forms (EnvelopeKey).
	inst map[string][]float64
}

// Time runs fn and adds its wall time on c's clock to the phase name of the
// given kind. A phase entered several times accumulates.
func (p *Phases) Time(c mpi.Comm, name, kind string, fn func() error) error {
	t0 := c.Wtime()
	err := fn()
	p.Add(name, kind, c.Wtime()-t0)
	return err
}

// pointName names an application run for the watchdog's message: "app",
// the application and its parameters, as its records do.
func pointName(app App) string {
	ps := app.Params()
	keys := slices.Sorted(maps.Keys(ps))
	var b strings.Builder
	b.WriteString("app " + app.Name())
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, ps[k])
	}
	return b.String()
}

// Add adds sec seconds to the phase name. The first call fixes the kind;
// a later call with another kind is a programming error and panics.
// An ended phase is progress for the watchdog (patterns.Watchdog): a long
// application is not stuck while its ranks keep ending phases.
func (p *Phases) Add(name, kind string, sec float64) {
	patterns.Installed().Progress()
	if p.kind == nil {
		p.kind = map[string]string{}
		p.sec = map[string]float64{}
		p.inst = map[string][]float64{}
	}
	if k, ok := p.kind[name]; ok {
		if k != kind {
			panic(fmt.Sprintf("apps: phase %q timed as %s and as %s", name, k, kind))
		}
	} else {
		p.kind[name] = kind
		p.order = append(p.order, name)
	}
	p.sec[name] += sec
	p.inst[name] = append(p.inst[name], sec)
}

// Instances returns this rank's seconds of each entry into the phase, in
// order (their sum is Sec).
func (p Phases) Instances(name string) []float64 { return p.inst[name] }

// Names lists the phases in the order they were first timed.
func (p Phases) Names() []string { return append([]string(nil), p.order...) }

// Kind returns the phase's kind ("" if never timed).
func (p Phases) Kind(name string) string { return p.kind[name] }

// Sec returns this rank's accumulated seconds in the phase.
func (p Phases) Sec(name string) float64 { return p.sec[name] }

// AgreeErr makes a local error collective: every rank learns whether any
// rank failed. It returns err on the ranks that had one and an error naming
// the lowest failing rank on the others, or nil everywhere. Applications
// call it after verifying, so a failed check ends every rank the same way.
func AgreeErr(c mpi.Comm, err error) error {
	mine := int64(math.MaxInt64)
	if err != nil {
		mine = int64(c.Rank())
	}
	out := []int64{0}
	if rerr := c.AllreduceInt64s([]int64{mine}, out, mpi.OpMin); rerr != nil {
		return errors.Join(err, rerr)
	}
	if out[0] == math.MaxInt64 {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("rank %d failed", out[0])
}

// Measure runs warm-up and timed repetitions of app on every rank of
// env.Comm (collective) and returns one record per phase, in the order the
// phases were first timed. reps configures the repetitions as for
// patterns.Measure; its Sync and Reduction are not used: each repetition
// starts after a barrier and a phase's time is the maximum over ranks. Every
// stopping decision is taken on values all ranks hold, so all ranks return
// the same records. meta is stamped on every record.
func Measure(env Env, app App, reps patterns.Reps, meta results.Meta) ([]results.Record, error) {
	c := env.Comm
	if err := app.Check(c.Size()); err != nil {
		return nil, err
	}
	reps = reps.Defaults()
	if su, ok := app.(Setupper); ok && env.State == nil {
		st, err := su.Setup(env)
		if err != nil {
			return nil, err
		}
		env.State = st
	}
	// Under the process's watchdog (patterns.Watchdog):
	// the application is one measurement point, with no budget of its own
	// (a run's length is the application's), whose progress is every
	// phase a rank ends (Phases.Add) and every run; a peer that stops
	// answering leaves the point idle past --timeout and ends the job.
	wd := patterns.Installed()
	defer wd.Begin(pointName(app), 0)()
	// The warm-up is bounded by MaxTime as the timed repetitions are
	// (patterns.Measure's rule), decided on the maximum over ranks.
	warmStart := c.Wtime()
	for i := 0; i < reps.Warmup; i++ {
		if err := c.Barrier(); err != nil {
			return nil, err
		}
		if _, err := app.Run(env); err != nil {
			return nil, err
		}
		wd.Progress()
		spent := []float64{c.Wtime() - warmStart}
		if err := c.AllreduceFloat64s(spent, spent, mpi.OpMax); err != nil {
			return nil, err
		}
		if spent[0] >= reps.MaxTime {
			break
		}
	}
	var (
		names    []string
		kinds    map[string]string
		workload map[string][]results.WorkItem
		counters map[string]float64
		samples  [][]float64 // per phase, max over ranks per repetition
		mine     [][]float64 // per phase, this rank's own time per repetition
		envs     []envelope  // per phase, each entry's fastest time
		elapsed  float64
		stop     string
	)
	for rep := 0; ; rep++ {
		if err := c.Barrier(); err != nil {
			return nil, err
		}
		t0 := c.Wtime()
		out, err := app.Run(env)
		if err != nil {
			return nil, err
		}
		total := c.Wtime() - t0
		wd.Progress()
		got := out.Phases.Names()
		if rep == 0 {
			names = got
			kinds = map[string]string{}
			for _, n := range names {
				kinds[n] = out.Phases.Kind(n)
			}
			workload = out.Workload
			samples = make([][]float64, len(names))
			mine = make([][]float64, len(names))
			envs = make([]envelope, len(names))
		} else if err := samePhases(names, got, workload, out.Workload); err != nil {
			return nil, fmt.Errorf("%s: repetition %d: %w", app.Name(), rep+1, err)
		}
		counters = out.Counters
		// One reduction: the phase count (so ranks that timed different
		// phases are caught), every phase's time and the whole run's time.
		vec := make([]float64, len(names)+2)
		vec[0] = float64(len(got))
		for i, n := range names {
			vec[i+1] = out.Phases.Sec(n)
			mine[i] = append(mine[i], out.Phases.Sec(n))
		}
		vec[len(vec)-1] = total
		mx := make([]float64, len(vec))
		if err := c.AllreduceFloat64s(vec, mx, mpi.OpMax); err != nil {
			return nil, err
		}
		mn := make([]float64, 1)
		if err := c.AllreduceFloat64s(vec[:1], mn, mpi.OpMin); err != nil {
			return nil, err
		}
		if mn[0] != mx[0] {
			return nil, fmt.Errorf("%s: ranks timed %v to %v phases; every rank must time every phase", app.Name(), mn[0], mx[0])
		}
		for i := range names {
			samples[i] = append(samples[i], mx[i+1])
		}
		if err := addEntries(c, envs, names, &out.Phases); err != nil {
			return nil, err
		}
		elapsed += mx[len(mx)-1]
		n := rep + 1
		if n >= reps.MinReps {
			if n >= reps.MaxReps {
				stop = results.StopMaxReps
			} else if elapsed >= reps.MaxTime && n >= 3 {
				stop = results.StopMaxTime
			} else if converged(samples, reps.RelCI) {
				stop = results.StopRelCI
			}
		}
		if stop != "" {
			break
		}
	}
	recs := make([]results.Record, 0, len(names))
	for i, n := range names {
		lo, avg, hi, err := rankSpread(c, mine[i])
		if err != nil {
			return nil, err
		}
		params := results.Params{}
		for k, v := range app.Params() {
			params[k] = v
		}
		params["app"] = app.Name()
		params["phase"] = n
		params["kind"] = kinds[n]
		rec := results.Record{
			Schema:    results.SchemaVersion,
			Bench:     Bench,
			Params:    params,
			Ranks:     c.Size(),
			Unit:      results.UnitSeconds,
			Summary:   results.Summarize(samples[i]),
			RankMin:   lo,
			RankAvg:   avg,
			RankMax:   hi,
			Reduction: results.ReductionMaxOverRanks,
			Stop:      stop,
			Workload:  workload[n],
			Samples:   append([]float64(nil), samples[i]...),
			Derived:   map[string]float64{EnvelopeKey: envs[i].sum(samples[i]), results.DerivedRunPhases: float64(len(names))},
			Meta:      meta,
		}
		if len(counters) > 0 {
			rec.Counters = map[string]float64{}
			for k, v := range counters {
				rec.Counters[k] = v
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// EnvelopeKey is the derived value of an application phase record that
// holds the phase's lower envelope in seconds: each entry into the phase
// (each Phases.Time or Add, the j-th of every rank together) timed as the
// maximum over ranks, at its fastest repetition, summed over the entries.
// A phase entered once per run has the fastest repetition as its
// envelope. For a program whose ranks take their steps together (an
// exchange, a broadcast, a barrier-separated access) the envelope is at
// most the fastest repetition; where ranks do not (a rank delayed in step
// 1, another in step 2), the per-step maxima can sum to more than any
// repetition's maximum of sums. Where the ranks do not enter a phase
// equally often (a merge only some ranks take part in), or the entry
// count changes between repetitions, the envelope is the fastest
// repetition.
//
// It is the phase as the network alone would time it where the noise is
// per entry, as on ranks that share cores: a rank descheduled for a time
// slice (4 ms at HZ = 250) in one of a multigrid's ten exchanges spoils
// that repetition's sum, not that exchange's fastest time over the
// repetitions. Every entry's time is one repetition's maximum over ranks,
// so each term happened as measured; taking each rank's own fastest
// instead would combine repetitions in which different ranks got the
// larger share of a shared link, a time no repetition had. It is the
// statistic models are judged on where the truth is a link rate
// (scripts/testcluster.sh; --stat envelope), never a substitute for the
// median a user's own run reports.
const EnvelopeKey = results.DerivedEnvelope

// envelope keeps each entry's fastest time (maximum over ranks) into one
// phase over the repetitions so far.
type envelope struct {
	fastest []float64 // per entry
	ragged  bool      // entry counts differed between ranks or repetitions
}

// sum is the envelope; samples are the phase's repetitions (maximum over
// ranks), whose fastest is the envelope of a ragged phase.
func (e *envelope) sum(samples []float64) float64 {
	if e.ragged || len(e.fastest) == 0 {
		return results.Summarize(samples).Min
	}
	var s float64
	for _, v := range e.fastest {
		s += v
	}
	return s
}

// addEntries folds one repetition's entries of every phase into envs
// (collective: two reductions of the entry counts, one of the entries of
// the phases every rank entered equally often).
func addEntries(c mpi.Comm, envs []envelope, names []string, ph *Phases) error {
	n := len(names)
	counts := make([]float64, n)
	for i, name := range names {
		counts[i] = float64(len(ph.Instances(name)))
	}
	lo, hi := make([]float64, n), make([]float64, n)
	if err := c.AllreduceFloat64s(counts, lo, mpi.OpMin); err != nil {
		return err
	}
	if err := c.AllreduceFloat64s(counts, hi, mpi.OpMax); err != nil {
		return err
	}
	var flat []float64
	for i, name := range names {
		if lo[i] == hi[i] && !envs[i].ragged {
			flat = append(flat, ph.Instances(name)...)
		}
	}
	mx := make([]float64, len(flat))
	if len(flat) > 0 {
		if err := c.AllreduceFloat64s(flat, mx, mpi.OpMax); err != nil {
			return err
		}
	}
	off := 0
	for i := range names {
		e := &envs[i]
		if lo[i] != hi[i] || e.ragged {
			e.ragged = true
			continue
		}
		m := int(lo[i])
		got := mx[off : off+m]
		off += m
		switch {
		case e.fastest == nil:
			e.fastest = append(make([]float64, 0, m), got...)
		case len(e.fastest) != m:
			e.ragged = true
		default:
			for j, v := range got {
				e.fastest[j] = min(e.fastest[j], v)
			}
		}
	}
	return nil
}

// converged reports whether every phase with a positive median has its
// median's 95% CI within rel of the median.
func converged(samples [][]float64, rel float64) bool {
	if rel <= 0 {
		return false
	}
	for _, s := range samples {
		sum := results.Summarize(s)
		if sum.Median > 0 && results.RelCIHalfWidth(sum) > rel {
			return false
		}
	}
	return true
}

// samePhases checks that a repetition timed the same phases and declared the
// same workload as the first.
func samePhases(names, got []string, w0, w map[string][]results.WorkItem) error {
	a, b := append([]string(nil), names...), append([]string(nil), got...)
	sort.Strings(a)
	sort.Strings(b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Errorf("timed phases %v, the first repetition %v", got, names)
	}
	if fmt.Sprint(w0) != fmt.Sprint(w) {
		return errors.New("declared a different workload than the first repetition (the input must be the same in every repetition)")
	}
	return nil
}

// rankSpread returns min, mean and max over ranks of each rank's median.
func rankSpread(c mpi.Comm, own []float64) (lo, avg, hi float64, err error) {
	m := results.Summarize(own).Median
	out := []float64{0}
	if err = c.AllreduceFloat64s([]float64{m}, out, mpi.OpMin); err != nil {
		return
	}
	lo = out[0]
	if err = c.AllreduceFloat64s([]float64{m}, out, mpi.OpMax); err != nil {
		return
	}
	hi = out[0]
	if err = c.AllreduceFloat64s([]float64{m}, out, mpi.OpSum); err != nil {
		return
	}
	avg = out[0] / float64(c.Size())
	return
}
