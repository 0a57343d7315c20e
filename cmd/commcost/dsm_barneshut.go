package main

import (
	"io"
	"math"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// bhMinMemory is the largest variable of Barnes-Hut, a body (96 bytes): a
// smaller --memory cannot hold one.
const bhMinMemory = 96

func runDSMBarnesHut(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm barneshut", stderr)
	var d dsmFlags
	d.register(fs, allDSMStrategies, 16)
	var sw dsmSweep
	sw.register(fs, true)
	bodies := fs.String("bodies", "2000", "bodies N: a list (10000,20000,40000) or a power-of-two range")
	perRank := fs.Int("bodies-per-rank", 0, "N = this many bodies times the ranks of each world, in place of --bodies (paper Fig. 11: 200)")
	theta := fs.Float64("theta", 1, "opening criterion theta in (0, 2]: a cell of side s at distance d is used whole when s < theta d")
	steps := fs.Int("steps", 7, "time steps simulated")
	measured := fs.Int("measured", 5, "the last this many steps are measured (paper: 5 of 7)")
	dt := fs.Float64("dt", 0.025, "time step (model units; SPLASH-2 default)")
	eps := fs.Float64("eps", 0.05, "softening length (model units; SPLASH-2 default)")
	cells := fs.Float64("cells-per-body", 2, "cell variables per body in each rank's pool (raise if a run says the pool is used up)")
	sample := fs.Int("sample", 64, "bodies whose tree forces are checked against direct summation")
	reps := fs.Int("reps", 1, "measured repetitions per strategy and point (each simulates anew)")
	fs.BoolVar(&d.mf.samples, "samples", false, "keep every repetition's time in the records")
	if err := d.parseSweep(fs, args, &sw, false); err != nil {
		return err
	}
	set := flagsSet(fs)
	var ns []int
	switch {
	case set["bodies-per-rank"] && set["bodies"]:
		return usagef("--bodies-per-rank %d: give either --bodies or --bodies-per-rank, not both", *perRank)
	case set["bodies-per-rank"]:
		if *perRank < 1 {
			return mustBePositive("bodies-per-rank", *perRank)
		}
	default:
		var err error
		if ns, err = parseIntGrid("bodies", *bodies, 1); err != nil {
			return err
		}
	}
	switch {
	case !(*theta > 0 && *theta <= 2):
		return usagef("--theta %v: must be in (0, 2], e.g. 1 (SPLASH-2's default) or 0.5", *theta)
	case *steps < 1:
		return mustBePositive("steps", *steps)
	case *measured < 1 || *measured > *steps:
		return usagef("--measured %d: must be an integer in 1..--steps (%d)", *measured, *steps)
	case !(*dt > 0) || math.IsInf(*dt, 0):
		return usagef("--dt %v: must be a positive number", *dt)
	case !(*eps >= 0) || math.IsInf(*eps, 0):
		return usagef("--eps %v: must be a number >= 0", *eps)
	case !(*cells > 0) || math.IsInf(*cells, 0):
		return usagef("--cells-per-body %v: must be a positive number, e.g. 2", *cells)
	case *sample < 0:
		return mustNotBeNegative("sample", *sample)
	case *reps < 1:
		return mustBePositive("reps", *reps)
	case d.memBytes > 0 && d.memBytes < bhMinMemory:
		return usagef("--memory %s: smaller than one body variable (%d bytes); give at least %d", d.memory, bhMinMemory, bhMinMemory)
	}
	cfg := apps.BarnesHutConfig{Theta: *theta, Steps: *steps, Measured: *measured, Dt: *dt, Eps: *eps, CellsPerBody: *cells, Sample: *sample}
	pts := dsmexp.BarnesHutPoints{Bodies: ns, PerRank: *perRank}
	meshCheck := func(m divalib.Mesh) error {
		if err := pts.Check(cfg, m.Size()); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	warm := sw.warmupRuns(d.mf.backend)
	return runDSMSweep(&d, &sw, stdout, stderr, meshCheck, func(c mpi.Comm, w dsmexp.World, meta results.Meta, emit func(results.Record) error) error {
		setup := dsmexp.Setup{Strategies: d.list, Store: d.store(w.Mesh), Reps: *reps, Warmup: warm, Seed: d.seed}
		return dsmexp.RunBarnesHut(c, setup, cfg, pts, meta, emit)
	})
}
