package dsmexp

import (
	"errors"
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Hand is the strategy name of a hand-optimised message-passing version
// (the matrix square's in divalib too).
const Hand = divalib.Hand

// Setup is what every experiment shares. The zero value of Store is the
// default store configuration (most nearly square mesh, unbounded memory,
// tree barrier).
type Setup struct {
	// Strategies to run: Hand (where the application has a hand-optimised
	// version) and divalib strategy names (divalib.ParseStrategy). Hand
	// runs first at every point, whatever its position, since the others'
	// ratios refer to it.
	Strategies []string
	// Store is the store configuration; Strategy and Variant are set from
	// each strategy name.
	Store divalib.Config
	// Reps measured repetitions (default 1) after Warmup untimed runs.
	Reps, Warmup int
	// MaxTime bounds each strategy's repetitions at each point, seconds
	// of wall time (0: none): once patterns.TimeBoundStopsAfter of them are done no more
	// start past it, and the warm-up runs stop after it too.
	MaxTime float64
	// Seed of the application's input.
	Seed int64
}

// Check validates the setup for p ranks; errors name the field and the
// accepted form.
func (s Setup) Check(p int, hand bool) error {
	if len(s.Strategies) == 0 {
		return errors.New("no strategy given")
	}
	for _, name := range s.Strategies {
		if name == Hand {
			if !hand {
				return errors.New("strategy hand: this application has no hand-optimised version (paper 004 has none for Barnes-Hut)")
			}
			continue
		}
		if _, _, err := divalib.ParseStrategy(name); err != nil {
			return err
		}
	}
	if s.Reps < 0 || s.Warmup < 0 || !(s.MaxTime >= 0) {
		return fmt.Errorf("repetitions %d, warm-up runs %d and the time bound %v s must not be negative", s.Reps, s.Warmup, s.MaxTime)
	}
	_, err := s.mesh(p)
	return err
}

func (s Setup) mesh(p int) (divalib.Mesh, error) {
	return divalib.NewMesh(s.Store.Rows, s.Store.Cols, p)
}

// ordered returns the strategies with Hand first.
func (s Setup) ordered() []string { return divalib.HandFirst(s.Strategies) }

// Phase is one timed phase of an application: per measured repetition the
// maximum over ranks of the rank's seconds in it.
type Phase struct {
	Name, Kind string
	Sec        []float64
}

// Result is one strategy's outcome at one configuration; every rank
// returns the same.
type Result struct {
	App      string         // the application's name
	Strategy string         // Hand or a divalib strategy name
	Mesh     divalib.Mesh   // the virtual mesh
	Params   results.Params // the configuration (keys; bodies, theta, ...)
	// Sections are the counts of the first measured repetition, one per
	// section the application entered, in order.
	Sections []Section
	// TimeSec is per measured repetition the maximum over ranks of the
	// rank's measured execution (the sum of its phases).
	TimeSec []float64
	Phases  []Phase
	// Counters are the application's own figures (rank 0, last
	// repetition), e.g. energy drift.
	Counters map[string]float64
	// Verified: every run's result passed the application's check (a
	// failed check is an error, so a returned Result is verified).
	Verified bool
	// Stop is why the repetitions stopped: results.StopFixed (all Reps
	// ran) or results.StopMaxTime (Setup.MaxTime).
	Stop string
}

// Section returns the counts of the named section.
func (r Result) Section(name string) (Section, bool) {
	for _, s := range r.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// maker builds the application for one strategy: probe is the counter to
// pass as its apps.Probe; links is non-nil for Hand (its apps.Charger).
type maker func(probe apps.Probe, links apps.Charger) apps.App

// runStrategy runs one strategy at one configuration (collective), as
// one point of the process's watchdog (patterns.Watchdog) named point:
// every phase an application ends (apps.Phases.Add) and every run is its
// progress, so a peer that stops answering ends the job after the
// watchdog's timeout instead of leaving it waiting in MPI.
func runStrategy(c mpi.Comm, s Setup, name, point string, mk maker) (Result, error) {
	wd := patterns.Installed()
	defer wd.Begin(point, 0)()
	mesh, err := s.mesh(c.Size())
	if err != nil {
		return Result{}, err
	}
	res := Result{Strategy: name, Mesh: mesh}
	env := apps.Env{Comm: c, Seed: s.Seed}
	var (
		app      apps.App
		switchOn func(bool)
		sections func(mpi.Comm) ([]Section, error)
		store    *divalib.Store
	)
	if name == Hand {
		hc := newHandCounter(mesh)
		app = mk(hc, hc)
		switchOn = func(on bool) { hc.on = on }
		sections = hc.sections
	} else {
		cfg, err := s.Store.WithStrategy(name)
		if err != nil {
			return res, err
		}
		cfg.Rows, cfg.Cols = mesh.Rows, mesh.Cols
		if store, err = divalib.New(c, cfg); err != nil {
			return res, err
		}
		ctr := newCounter(c, store)
		app = mk(ctr, nil)
		switchOn = func(on bool) { ctr.on = on }
		sections = ctr.sections
		env.Store = store
		res.Mesh = store.Mesh()
	}
	res.App = app.Name()
	res.Params = app.Params()
	if err := app.Check(c.Size()); err != nil {
		return res, err
	}
	if su, ok := app.(apps.Setupper); ok {
		// Variables are created once and used by every run (as
		// apps.Measure does).
		if env.State, err = su.Setup(env); err != nil {
			return res, err
		}
	}
	reps := max(s.Reps, 1)
	warmStart := c.Wtime()
	for i := 0; i < s.Warmup; i++ {
		if _, err := app.Run(env); err != nil {
			return res, err
		}
		wd.Progress()
		if s.MaxTime > 0 {
			spent := []float64{c.Wtime() - warmStart}
			if err := c.AllreduceFloat64s(spent, spent, mpi.OpMax); err != nil {
				return res, err
			}
			if patterns.PastTimeBound(i+1, 1, spent[0], s.MaxTime) {
				break
			}
		}
	}
	res.Stop = results.StopFixed
	spent := 0.0 // wall seconds of the measured runs, max over ranks
	for rep := 0; rep < reps; rep++ {
		if patterns.PastTimeBound(rep, reps, spent, s.MaxTime) {
			res.Stop = results.StopMaxTime
			break
		}
		t0 := c.Wtime()
		// Counts come from the first measured repetition only: the
		// applications start every run from the same state (inputs
		// rewritten by their owners), so the others repeat them.
		switchOn(rep == 0)
		out, err := app.Run(env)
		switchOn(false)
		if err != nil {
			return res, err
		}
		wd.Progress()
		names := out.Phases.Names()
		if rep == 0 {
			for _, n := range names {
				res.Phases = append(res.Phases, Phase{Name: n, Kind: out.Phases.Kind(n)})
			}
		} else if len(names) != len(res.Phases) {
			return res, fmt.Errorf("%s: repetition %d timed phases %v, the first %d phases", res.App, rep+1, names, len(res.Phases))
		}
		// One reduction: the execution, each phase, and the run's wall
		// time, which the time bound counts.
		vec := make([]float64, len(res.Phases)+2)
		for i, ph := range res.Phases {
			vec[i+1] = out.Phases.Sec(ph.Name)
			vec[0] += vec[i+1]
		}
		vec[len(vec)-1] = c.Wtime() - t0
		mx := make([]float64, len(vec))
		if err := c.AllreduceFloat64s(vec, mx, mpi.OpMax); err != nil {
			return res, err
		}
		spent += mx[len(mx)-1]
		res.TimeSec = append(res.TimeSec, mx[0])
		for i := range res.Phases {
			res.Phases[i].Sec = append(res.Phases[i].Sec, mx[i+1])
		}
		res.Counters = out.Counters
	}
	res.Verified = true
	if res.Sections, err = sections(c); err != nil {
		return res, err
	}
	// Counters agree on every rank by the apps.Outcome contract, but
	// rank 0's are the ones reported.
	if err := bcastCounters(c, res.Counters); err != nil {
		return res, err
	}
	if store != nil {
		if err := store.Close(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// pointName names a point for the watchdog as its record: bench and the
// parameters ("dsm-bitonic keys=4096 strategy=tree-4").
func pointName(bench string, params results.Params) string {
	return bench + " " + results.ParamList(params)
}

// bcastCounters makes rank 0's values of the counters every rank has
// (same keys by contract) everyone's.
func bcastCounters(c mpi.Comm, m map[string]float64) error {
	if len(m) == 0 {
		return nil
	}
	keys := sortedKeys(m)
	v := make([]float64, len(keys))
	for i, k := range keys {
		v[i] = m[k]
	}
	if err := mpi.BcastFloat64s(c, v, 0); err != nil {
		return err
	}
	for i, k := range keys {
		m[k] = v[i]
	}
	return nil
}
