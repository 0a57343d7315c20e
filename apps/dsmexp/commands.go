package dsmexp

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The experiments of `commcost dsm` as configurations: each is a struct
// whose tagged fields are its flags (package opts), Validate checks what
// needs no world, and Run runs it on the ranks its job.Launch starts,
// writing its records, tables and figures. Defs lists them; the command
// line binds each and calls Run.

// Experiment is the configuration of one dsm subcommand.
type Experiment interface {
	opts.Validator
	Run(io IO) error
}

// Def is a dsm subcommand.
type Def struct {
	Name    string // "check": the subcommand is "dsm check"
	Summary string
	// New returns a zero configuration, whose defaults binding it to
	// flags sets (the tags', then Defaults); Config returns one with them.
	New func() Experiment
	// Defaults overrides the default of a shared flag ("np", "strategies").
	Defaults map[string]string
	// Usage overrides the help of a shared flag.
	Usage map[string]string
	// Args: the subcommand takes arguments (SetArgs) besides flags.
	Args bool
}

// ArgsSetter is an Experiment that takes arguments (dsm plot's files).
type ArgsSetter interface{ SetArgs(args []string) }

// Config returns a configuration of d with the defaults the command line
// has: the tags', with d's Defaults over them.
func (d Def) Config() Experiment {
	cfg := d.New()
	fs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
	opts.Bind(fs, cfg)
	for name, v := range d.Defaults {
		if err := fs.Lookup(name).Value.Set(v); err != nil {
			panic(fmt.Sprintf("dsmexp: default %q of --%s: %v", v, name, err))
		}
	}
	return cfg
}

// StrategiesHelp says which strategies the subcommands take.
func StrategiesHelp() string {
	return "Strategies: " + divalib.StrategyForms() + "; matsquare and bitonic also take " + Hand + "."
}

// Examples are command lines of the subcommands, for the group's help.
const Examples = `Examples:
  commcost dsm check --backend local --np 64
  mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 commcost dsm check
  commcost dsm matsquare --backend local --np 1024 --blocks 4096 --kernel sum
  commcost dsm bitonic --backend local --meshes 4x4,8x8,16x16,32x32 --plot figs
  commcost dsm plot a.jsonl b.jsonl --plot figs
`

// timeoutUsage is --timeout's help: a dsm run has no --max-time budget.
const timeoutUsage = "seconds (5 to 1e9) a run, or its start-up, may go without progress (an ended phase or repetition) before the rank that waits ends the job: a hung or stopped peer"

// names joins strategy names for a default.
func names(extra ...string) string { return strings.Join(append(extra, divalib.Evaluated()...), ",") }

// Defs lists the subcommands in the order the group's help lists them.
func Defs() []Def {
	usage := map[string]string{"timeout": timeoutUsage}
	return []Def{
		{Name: "check", Summary: "the coherence suite on every strategy: randomized reads and writes with versioned values (stale, torn and unknown reads), racing partial writes, a lock-protected counter, the error contract; exit 1 on any violation",
			New: func() Experiment { return &Check{} }, Defaults: map[string]string{"np": "64", "strategies": names()}, Usage: usage},
		{Name: "matsquare", Summary: "the matrix square A := A*A of paper 004, section 3.1, over each strategy and the hand-optimised message passing: congestion under dimension-order routing on the virtual mesh, and time",
			New: func() Experiment { return &MatSquareSweep{} }, Defaults: map[string]string{"np": "16", "strategies": names(Hand)}, Usage: usage},
		{Name: "overhead", Summary: "the library's own cost per access: cached read, cached write, the store's barrier against MPI's (on idle ranks)",
			New:      func() Experiment { return &Overhead{} },
			Defaults: map[string]string{"np": "4", "strategies": divalib.FixedHomeName + "," + divalib.TreeName(divalib.Tree4)}, Usage: usage},
		{Name: "bitonic", Summary: "bitonic sorting with merge&split (paper 004, section 3.2, Figs. 6-7) over each strategy and the hand-optimised message passing: congestion and execution time, ratios to hand",
			New: func() Experiment { return &BitonicSweep{} }, Defaults: map[string]string{"np": "16", "strategies": names(Hand)}, Usage: usage},
		{Name: "barneshut", Summary: "the Barnes-Hut N-body simulation (paper 004, section 3.3, Figs. 8-11) over each strategy: congestion and time of the six phases, cache hit ratio, forces checked against direct summation, energy drift",
			New: func() Experiment { return &BarnesHutSweep{} }, Defaults: map[string]string{"np": "16", "strategies": names()}, Usage: usage},
		{Name: "plot", Summary: "the ratio tables and the figures of matsquare, bitonic and barneshut again, from their records (JSON Lines files)",
			New: func() Experiment { return &Plot{} }, Args: true},
	}
}

// Check is `dsm check`: the coherence suite of divalib.RunCheck over
// every strategy.
type Check struct {
	job.Launch
	CheckOutput
	StoreFlags
	Ops           int     `flag:"ops" default:"100000" usage:"coherence operations over all ranks, per strategy"`
	Vars          int     `flag:"vars" default:"16" usage:"variables of the coherence workload (few: ranks collide)"`
	Slots         int     `flag:"slots" default:"4" usage:"16-byte slots per variable"`
	WriteFraction float64 `flag:"write-fraction" default:"0.3" usage:"share of writes among the coherence operations, in (0, 1)"`
	// Workloads makes the workloads (nil: divalib.CheckWorkloads); a test
	// adds one that finds violations.
	Workloads func(ccfg storecheck.CoherenceConfig, seed int64) []divalib.CheckWorkload
}

func (k *Check) Validate() error {
	if err := k.StoreFlags.check(k.Launch, false); err != nil {
		return err
	}
	if err := k.checkNP(k.Launch); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"Ops", k.Ops}, {"Vars", k.Vars}, {"Slots", k.Slots}} {
		if err := atLeastOne(f.field, f.v); err != nil {
			return err
		}
	}
	if !(k.WriteFraction > 0 && k.WriteFraction < 1) {
		return opts.Field("WriteFraction", k.WriteFraction, "must be a fraction in (0, 1), e.g. 0.3")
	}
	if err := k.minMemory(divalib.CheckMinMemory, "one variable of the suite (%d bytes); give at least %d", divalib.CheckMinMemory, divalib.CheckMinMemory); err != nil {
		return err
	}
	return k.minMemory(k.Slots*16, "one coherence variable (%d bytes = {Slots} x 16)", k.Slots*16)
}

// The defaults of --vars and --slots, which the demand's message weighs.
const (
	defaultVars  = 16
	defaultSlots = 4
)

func (k *Check) coherence() storecheck.CoherenceConfig {
	return storecheck.CoherenceConfig{Ops: k.Ops, Vars: k.Vars, Slots: k.Slots, WriteFraction: k.WriteFraction, Seed: k.Seed}
}

func (k *Check) workloads() []divalib.CheckWorkload {
	mk := k.Workloads
	if mk == nil {
		mk = divalib.CheckWorkloads
	}
	return mk(k.coherence(), k.Seed)
}

// Run runs the suite on the launch's ranks; a violation fails the run
// (exit status 1) on every rank alike.
func (k *Check) Run(io IO) error {
	io = io.withDefaults()
	ccfg := k.coherence()
	need := func(int) job.MemNeed {
		if ccfg.LogBytes() > ccfg.RankBytes() {
			return job.MemNeed{PerRank: ccfg.RankBytes() + ccfg.LogBytes(), Flag: io.FlagText("Ops"),
				What: fmt.Sprintf("dsm check's log of %d operations (gathered and checked on rank 0) and its variables", k.Ops)}
		}
		// The variables grow with --vars and --slots alike: name the one
		// further above its default.
		flag := io.FlagText("Vars")
		if float64(k.Slots)/defaultSlots > float64(k.Vars)/defaultVars {
			flag = io.FlagText("Slots")
		}
		return job.MemNeed{PerRank: ccfg.RankBytes() + ccfg.LogBytes(), Flag: flag,
			What: fmt.Sprintf("dsm check's %d variables of %d 16-byte slots (a home and a cached copy) and its log", k.Vars, k.Slots)}
	}
	m := job.Measure{Launch: k.Launch, Output: job.Output{Format: k.Format, Out: k.Out, Quiet: k.Quiet},
		Ranks:  func(c mpi.Comm) error { return io.Tell(k.checkWorld(c)) },
		Demand: job.Demand{Need: need}, Points: len(k.Strategies) * len(k.workloads()),
		Progress: io.Stderr, Label: "dsm check"}
	return m.Run(io.Stdout, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = k.Seed
		return k.World(c, io, meta, emit)
	})
}

// World runs the suite on the ranks of c (divalib.RunCheck), prints each
// violation once on io.Stderr, and returns the verdict on every rank:
// with violations, exit 1 on all alike, the message printed once, and
// nobody aborts the job.
func (k *Check) World(c mpi.Comm, io IO, meta results.Meta, emit func(results.Record) error) error {
	io = io.withDefaults()
	cfg := divalib.CheckConfig{Strategies: k.Strategies, Store: k.store(k.asked()), Workloads: k.workloads(),
		Violation: func(strategy, workload string, err error) {
			fmt.Fprintf(io.Stderr, "commcost: dsm check %s %s: %v\n", strategy, workload, err)
		}}
	failed, err := divalib.RunCheck(c, cfg, meta, emit)
	var se *divalib.StrategyError
	switch {
	case errors.As(err, &se):
		return job.Agree(c, opts.Badf("%v", se))
	case err != nil:
		return err
	case failed > 0:
		return job.Agree(c, fmt.Errorf("dsm check: %d workload(s) with violations", failed))
	}
	return nil
}

// MatSquareSweep is `dsm matsquare`: the matrix square of paper 004, section
// 3.1 (divalib.RunMatSquare), over the strategies and a sweep of meshes.
type MatSquareSweep struct {
	job.Launch
	job.Output
	StoreFlags
	SweepFlags
	MaxTimeFlag
	Blocks opts.Ints `flag:"blocks" default:"4096" value:"ints" usage:"block sizes in 4-byte ints, perfect squares: a list (64,256,1024,4096); a LO:HI range doubles, so only a list holds more than one square"`
	Kernel string    `flag:"kernel" default:"mul" usage:"local computation: mul (the real product) or sum (elementwise sum: same communication, O(m) work)"`
	Reps   int       `flag:"reps" default:"3" usage:"measured repetitions (each squares again)"`
	Verify bool      `flag:"verify" default:"true" usage:"compare the result with the serial computation on rank 0"`
}

func (e *MatSquareSweep) Validate() error {
	if err := e.StoreFlags.check(e.Launch, true); err != nil {
		return err
	}
	if err := e.SweepFlags.check(e.Launch, e.StoreFlags); err != nil {
		return err
	}
	if err := e.MaxTimeFlag.check(); err != nil {
		return err
	}
	if err := positive("Blocks", e.Blocks); err != nil {
		return err
	}
	for _, m := range e.Blocks {
		if !divalib.PerfectSquare(m) {
			return opts.Field("Blocks", "", "%d is not a perfect square; accepted are squares in a list such as 64,256,1024,4096 (a LO:HI range doubles, and every other value is no square)", m)
		}
		if m > divalib.MaxBlockInts {
			return opts.Field("Blocks", "", "a block of %d ints does not fit one message (at most %d)", m, divalib.MaxBlockInts)
		}
		if err := e.minMemory(4*m, "one block variable (%d bytes for %d ints)", 4*m, m); err != nil {
			return err
		}
	}
	if k := divalib.Kernel(e.Kernel); k != divalib.KernelMul && k != divalib.KernelSum {
		return opts.Field("Kernel", "", "accepted values are %s and %s", divalib.KernelMul, divalib.KernelSum)
	}
	if err := patterns.CheckCount("Reps", e.Reps, 1, "repetitions"); err != nil {
		return err
	}
	return e.SweepFlags.checkFigurePoints("Blocks", len(e.Blocks))
}

// Run squares the matrix on every world of the sweep.
func (e *MatSquareSweep) Run(io IO) error {
	io = io.withDefaults()
	r := &sweepRun{label: "dsm matsquare", launch: e.Launch, out: e.Output, store: e.StoreFlags, sweep: e.SweepFlags, io: io,
		mesh: func(m divalib.Mesh) error {
			if _, ok := apps.SquareGrid(m.Size()); !ok {
				// No mesh of these ranks is square: the rank count is wrong.
				return &apps.RanksError{What: "matsquare", Want: "a square number of ranks for its sqrt(P) x sqrt(P) mesh", Hint: "e.g. 4, 16, 64, 256, 1024", Ranks: m.Size()}
			}
			if m.Rows != m.Cols {
				return opts.Badf("matsquare needs a square mesh (sqrt(P) x sqrt(P) ranks, e.g. 4, 16, 64, 256, 1024); %d ranks give %v", m.Size(), m)
			}
			return nil
		},
		points: func(int) int { return len(e.Strategies) * len(e.Blocks) },
		need: func(p int) job.MemNeed {
			x := divalib.MatSquareExperiment{Strategies: e.Strategies, Blocks: e.Blocks, Kernel: divalib.Kernel(e.Kernel), Reps: e.Reps, Verify: e.Verify}
			return needOf(io, x.Demand(p))
		},
		body: func(c mpi.Comm, w World, meta results.Meta, emit func(results.Record) error) error {
			x := divalib.MatSquareExperiment{Strategies: e.Strategies, Store: e.store(w.Mesh), Blocks: e.Blocks,
				Kernel: divalib.Kernel(e.Kernel), Reps: e.Reps, MaxTime: e.MaxTime, Verify: e.Verify}
			return divalib.RunMatSquare(c, x, meta, emit)
		}}
	return r.run()
}

// Overhead is `dsm overhead`: the library's own cost per access
// (divalib.RunOverhead).
type Overhead struct {
	job.Launch
	job.Output
	StoreFlags
	Iters   int       `flag:"iters" default:"1000000" usage:"cached accesses per timed batch"`
	Batches int       `flag:"batches" default:"7" usage:"timed batches (repetitions)"`
	Sizes   ReadSizes `flag:"sizes" default:"8,4K,64K" value:"bytes" usage:"bytes of the uncached remote reads (the k-k-access C kernel's l at k = 1, r = 1); \"\" for none"`
	Reads   int       `flag:"reads" default:"1000" usage:"timed uncached remote reads per size and rank"`
}

func (e *Overhead) Validate() error {
	if err := e.StoreFlags.check(e.Launch, false); err != nil {
		return err
	}
	if err := e.checkNP(e.Launch); err != nil {
		return err
	}
	for _, l := range e.Sizes {
		if l < 1 {
			return opts.Field("Sizes", "", "a remote read needs at least 1 byte")
		}
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"Reads", e.Reads}, {"Iters", e.Iters}} {
		if err := atLeastOne(f.field, f.v); err != nil {
			return err
		}
	}
	if err := patterns.CheckCount("Batches", e.Batches, 1, "batches"); err != nil {
		return err
	}
	// A batch reports no progress until it ends: one that cannot end
	// within --timeout, at the fastest a cached access runs, would be
	// taken for a hung peer.
	if t := float64(e.Iters) * minCachedAccessSec; e.Timeout > 0 && t > e.Timeout {
		return opts.Field("Iters", e.Iters, "a batch of that many cached accesses takes at least %.3g s (%g ns each), more than --timeout %g s without progress; lower --iters", t, minCachedAccessSec*1e9, e.Timeout)
	}
	return nil
}

// minCachedAccessSec is a lower bound on one cached access of the store:
// a map lookup and a copy of a few bytes take longer than 5 ns.
const minCachedAccessSec = 5e-9

// Run measures the overhead of every strategy on the launch's ranks.
func (e *Overhead) Run(io IO) error {
	io = io.withDefaults()
	x := divalib.OverheadExperiment{Strategies: e.Strategies, Store: e.store(e.asked()), Iters: e.Iters, Batches: e.Batches, ReadSizes: e.Sizes, Reads: e.Reads}
	m := job.Measure{Launch: e.Launch, Output: e.Output,
		Ranks:    func(c mpi.Comm) error { return io.Tell(e.checkWorld(c)) },
		Points:   len(e.Strategies) * (4 + len(e.Sizes)), // one record per op and remote-read size
		Demand:   job.Demand{Need: func(int) job.MemNeed { return needOf(io, x.Demand()) }},
		Progress: io.Stderr, Label: "dsm overhead"}
	return m.Run(io.Stdout, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = e.Seed
		return divalib.RunOverhead(c, x, meta, emit)
	})
}

// BitonicSweep is `dsm bitonic`: bitonic sorting with merge&split (paper 004,
// section 3.2; RunBitonic) over the strategies and a sweep of meshes.
type BitonicSweep struct {
	job.Launch
	job.Output
	StoreFlags
	SweepFlags
	WarmupFlag
	MaxTimeFlag
	Keys opts.Ints `flag:"keys" default:"4096" usage:"keys per rank m (4-byte integers): a list (256,1024,4096) or a power-of-two range (64:4096)"`
	Reps int       `flag:"reps" default:"3" usage:"measured repetitions per strategy and point (each sorts anew)"`
}

func (e *BitonicSweep) Validate() error {
	if err := e.StoreFlags.check(e.Launch, true); err != nil {
		return err
	}
	if err := e.SweepFlags.check(e.Launch, e.StoreFlags); err != nil {
		return err
	}
	if err := e.WarmupFlag.check(); err != nil {
		return err
	}
	if err := e.MaxTimeFlag.check(); err != nil {
		return err
	}
	if err := positive("Keys", e.Keys); err != nil {
		return err
	}
	for _, m := range e.Keys {
		if m > MaxKeys {
			return opts.Field("Keys", "", "%d keys do not fit one message (at most %d)", m, MaxKeys)
		}
		if err := e.minMemory(4*m, "one key block (%d bytes for %d keys); give at least %s", 4*m, m, results.FormatBytes(float64(4*m))); err != nil {
			return err
		}
	}
	if err := patterns.CheckCount("Reps", e.Reps, 1, "repetitions"); err != nil {
		return err
	}
	return e.SweepFlags.checkFigurePoints("Keys", len(e.Keys))
}

// Run sorts on every world of the sweep.
func (e *BitonicSweep) Run(io IO) error {
	io = io.withDefaults()
	mmax := slices.Max(e.Keys)
	warm := e.runs(e.Backend)
	r := &sweepRun{label: "dsm bitonic", launch: e.Launch, out: e.Output, store: e.StoreFlags, sweep: e.SweepFlags, io: io,
		mesh: func(m divalib.Mesh) error {
			return CheckBitonicMesh(m) // a *apps.RanksError, which the host names the ranks of
		},
		need: func(int) job.MemNeed {
			return job.MemNeed{PerRank: BitonicRankBytes(mmax), Flag: io.FlagText("Keys"), What: fmt.Sprintf("bitonic's blocks of %d keys", mmax)}
		},
		points: func(int) int { return len(e.Strategies) * len(e.Keys) },
		body: func(c mpi.Comm, w World, meta results.Meta, emit func(results.Record) error) error {
			setup := Setup{Strategies: e.Strategies, Store: e.store(w.Mesh), Reps: e.Reps, Warmup: warm, MaxTime: e.MaxTime, Seed: e.Seed}
			return RunBitonic(c, setup, e.Keys, meta, emit)
		}}
	return r.run()
}

// bhMinMemory is the largest variable of Barnes-Hut, a body (96 bytes): a
// smaller copy bound cannot hold one.
const bhMinMemory = 96

// BarnesHutSweep is `dsm barneshut`: the Barnes-Hut simulation (paper 004,
// section 3.3; RunBarnesHut) over the strategies and a sweep of meshes.
type BarnesHutSweep struct {
	job.Launch
	job.Output
	StoreFlags
	SweepFlags
	WarmupFlag
	MaxTimeFlag
	Bodies       opts.Ints `flag:"bodies" default:"2000" usage:"bodies N: a list (10000,20000,40000) or a power-of-two range"`
	PerRank      int       `flag:"bodies-per-rank" usage:"N = this many bodies times the ranks of each world, in place of --bodies (paper Fig. 11: 200)"`
	Theta        float64   `flag:"theta" default:"1" usage:"opening criterion theta in (0, 2]: a cell of side s at distance d is used whole when s < theta d"`
	Steps        int       `flag:"steps" default:"7" usage:"time steps simulated"`
	Measured     int       `flag:"measured" default:"5" usage:"the last this many steps are measured (paper: 5 of 7; all of fewer --steps)"`
	Dt           float64   `flag:"dt" default:"0.025" usage:"time step in (0, 1] (model units; SPLASH-2 default)"`
	Eps          float64   `flag:"eps" default:"0.05" usage:"softening length in (0, 1] (model units; SPLASH-2 default)"`
	CellsPerBody float64   `flag:"cells-per-body" default:"2" usage:"cell variables per body in each rank's pool, in (0, 1024] (raise if a run says the pool is used up)"`
	Sample       int       `flag:"sample" default:"64" usage:"bodies whose tree forces are checked against direct summation"`
	Reps         int       `flag:"reps" default:"1" usage:"measured repetitions per strategy and point (each simulates anew)"`
	Given        opts.Given
}

func (e *BarnesHutSweep) Validate() error {
	if err := e.StoreFlags.check(e.Launch, false); err != nil {
		return err
	}
	if err := e.SweepFlags.check(e.Launch, e.StoreFlags); err != nil {
		return err
	}
	if err := e.WarmupFlag.check(); err != nil {
		return err
	}
	if err := e.MaxTimeFlag.check(); err != nil {
		return err
	}
	switch {
	case e.Given.Has("PerRank") && e.Given.Has("Bodies"):
		return opts.Conflict("PerRank", "Bodies", "give either {Bodies} or {PerRank}, not both")
	case e.Given.Has("PerRank") || e.PerRank != 0:
		if err := atLeastOne("PerRank", e.PerRank); err != nil {
			return err
		}
	default:
		if err := positive("Bodies", e.Bodies); err != nil {
			return err
		}
	}
	switch {
	case !(e.Theta > 0 && e.Theta <= 2):
		return opts.Field("Theta", e.Theta, "must be in (0, 2], e.g. 1 (SPLASH-2's default) or 0.5")
	case e.Steps < 1 || e.Steps > patterns.MaxCount:
		return patterns.CheckCount("Steps", e.Steps, 1, "time steps")
	case e.Measured < 1 || e.Measured > e.Steps && e.Given.Has("Measured"):
		return opts.Field("Measured", e.Measured, "must be an integer in 1..{Steps} (%d)", e.Steps)
	case !(e.Dt > 0 && e.Dt <= apps.MaxDt):
		return opts.Field("Dt", e.Dt, "must be in (0, %g] model time units (a dynamical time is about 2.4), e.g. 0.025 (SPLASH-2's)", apps.MaxDt)
	case !(e.Eps > 0 && e.Eps <= apps.MaxEps):
		return opts.Field("Eps", e.Eps, "must be in (0, %g] model length units (the Plummer scale radius is about 1.77), e.g. 0.05 (SPLASH-2's)", apps.MaxEps)
	case !(e.CellsPerBody > 0 && e.CellsPerBody <= apps.MaxCellsPerBody):
		return opts.Field("CellsPerBody", e.CellsPerBody, "must be a number in (0, %d], e.g. 2", apps.MaxCellsPerBody)
	case e.Sample < 0:
		return opts.Field("Sample", e.Sample, "must not be negative (an integer >= 0)")
	}
	if err := patterns.CheckCount("Reps", e.Reps, 1, "repetitions"); err != nil {
		return err
	}
	if err := e.minMemory(bhMinMemory, "one body variable (%d bytes); give at least %d", bhMinMemory, bhMinMemory); err != nil {
		return err
	}
	return e.SweepFlags.checkFigurePoints("Bodies", len(e.Bodies))
}

func (e *BarnesHutSweep) config() apps.BarnesHutConfig {
	return apps.BarnesHutConfig{Theta: e.Theta, Steps: e.Steps, Measured: min(e.Measured, e.Steps), Dt: e.Dt, Eps: e.Eps, CellsPerBody: e.CellsPerBody, Sample: e.Sample}
}

// points are the body counts: Bodies, or PerRank bodies per rank.
func (e *BarnesHutSweep) points() BarnesHutPoints {
	if e.PerRank > 0 {
		return BarnesHutPoints{PerRank: e.PerRank}
	}
	return BarnesHutPoints{Bodies: e.Bodies}
}

// Run simulates on every world of the sweep.
func (e *BarnesHutSweep) Run(io IO) error {
	io = io.withDefaults()
	cfg, pts, warm := e.config(), e.points(), e.runs(e.Backend)
	pts.CellsFlag = io.FlagText("CellsPerBody")
	r := &sweepRun{label: "dsm barneshut", launch: e.Launch, out: e.Output, store: e.StoreFlags, sweep: e.SweepFlags, io: io,
		mesh: func(m divalib.Mesh) error {
			if err := pts.Check(cfg, m.Size()); err != nil {
				return opts.Badf("%v", err)
			}
			return nil
		},
		points: func(p int) int { return len(e.Strategies) * len(pts.For(p)) * len(bhRecordPhases) },
		need: func(p int) job.MemNeed {
			var needs []sysmem.Need
			for _, n := range pts.For(p) {
				c := cfg
				c.Bodies = n
				if e.Backend == job.Local {
					needs = append(needs, c.Demand(p))
				} else {
					needs = append(needs, c.ProcessDemand(p))
				}
			}
			need := sysmem.Largest(needs...)
			if need.Field == "bodies" && e.PerRank > 0 {
				// N comes from --bodies-per-rank, which replaces
				// --bodies: name the flag the user gave.
				need.Field = "PerRank"
			}
			if need.Field == "cells" {
				need.Field = "CellsPerBody"
			}
			return needOf(io, need)
		},
		body: func(c mpi.Comm, w World, meta results.Meta, emit func(results.Record) error) error {
			setup := Setup{Strategies: e.Strategies, Store: e.store(w.Mesh), Reps: e.Reps, Warmup: warm, MaxTime: e.MaxTime, Seed: e.Seed}
			return RunBarnesHut(c, setup, cfg, pts, meta, emit)
		}}
	return r.run()
}

// Plot is `dsm plot`: the ratio tables and the figures of matsquare,
// bitonic and barneshut again, from their records.
type Plot struct {
	Format results.Format `flag:"format" value:"format" usage:"output format of the ratio tables on stdout: table or markdown"`
	Dir    string         `flag:"plot" value:"DIR" usage:"draw the figures as PNG files into DIR (created if missing)"`
	// Files are the JSON Lines files of records (several --out files of
	// runs on different meshes).
	Files []string
}

// SetArgs takes the files.
func (p *Plot) SetArgs(args []string) { p.Files = args }

func (p *Plot) Validate() error {
	if len(p.Files) == 0 {
		return opts.Badf("dsm plot needs one or more JSON Lines files of dsm matsquare, bitonic or barneshut records")
	}
	if p.Format != results.FormatTable && p.Format != results.FormatMarkdown {
		return opts.Field("Format", "", "dsm plot prints tables: accepted are table and markdown")
	}
	// One file twice would count its runs twice in every ratio.
	if err := results.DistinctFiles(p.Files); err != nil {
		return opts.Badf("dsm plot: %v", err)
	}
	return checkPlotDir("Dir", p.Dir)
}

// Run reads the files and writes the tables and figures.
func (p *Plot) Run(io IO) error {
	io = io.withDefaults()
	var recs []results.Record
	var from []string             // from[i] is the file of recs[i]
	var at []int                  // at[i] is its line
	set := results.NewRecordSet() // a record read twice would be counted again
	for _, f := range p.Files {
		rs, lines, torn, err := results.ReadRecordsFileLines(f, results.ReadFactor)
		if err != nil {
			return opts.Badf("dsm plot %s: %v (want a JSON Lines file of commcost records)", opts.Echo(f), err)
		}
		if torn != nil {
			fmt.Fprintf(io.Stderr, "commcost: warning: %s; using the %d complete records before it\n", opts.Echo(torn.Error()), len(rs))
		}
		if err := set.Add(f, rs, lines); err != nil {
			return opts.Badf("dsm plot: %s", opts.Echo(err.Error()))
		}
		recs = append(recs, rs...)
		for k := range rs {
			from, at = append(from, f), append(at, lines[k])
		}
	}
	if !slices.ContainsFunc(recs, func(r results.Record) bool { return isDSMBench(r.Bench) }) {
		return opts.Badf("dsm plot %s: no %s, %s or %s records; dsm plot plots those (the --out files of dsm matsquare, bitonic and barneshut)",
			opts.Echo(strings.Join(p.Files, ", ")), BenchMatSquare, BenchBitonic, BenchBarnesHut)
	}
	// A ratio to hand-optimised is checked against the hand record
	// wherever it is among the files, and refused without one.
	if i, err := CheckMergedRatios(recs); err != nil {
		return opts.Badf("dsm plot %s: line %d: %s", opts.Echo(from[i]), at[i], results.Printable(err.Error()))
	}
	// The tables are printed once the figures are drawn: records that
	// draw none are bad input, refused with nothing on stdout.
	var tables bytes.Buffer
	paths, err := Redraw(&tables, recs, p.Format == results.FormatMarkdown, p.Dir)
	if err != nil && opts.IsBadInput(err) {
		return err
	}
	if _, werr := io.Stdout.Write(tables.Bytes()); werr != nil && err == nil {
		err = werr
	}
	for _, path := range paths {
		fmt.Fprintln(io.Stderr, "commcost: wrote", path)
	}
	return err
}

// needOf is a library's per-rank need as the sweep's, its flag (the
// need's Field, a flag name) with its value as given.
func needOf(io IO, n sysmem.Need) job.MemNeed {
	flag := n.Field
	if flag != "" {
		flag = io.FlagText(strings.ToUpper(flag[:1]) + flag[1:])
	}
	return job.MemNeedOf(flag, n)
}
