package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{Name: "dsm", Summary: "DIVA global variables (paper 004)", More: dsmMore})
	register(command{Name: "dsm check", Summary: "the coherence suite on every strategy: randomized reads and writes with versioned values (stale, torn and unknown reads), racing partial writes, a lock-protected counter, the error contract; exit 1 on any violation", Run: runDSMCheck})
	register(command{Name: "dsm matsquare", Summary: "the matrix square A := A*A of paper 004, section 3.1, over each strategy and the hand-optimised message passing: congestion under dimension-order routing on the virtual mesh, and time", Run: runDSMMatSquare})
	register(command{Name: "dsm overhead", Summary: "the library's own cost per access: cached read, cached write, the store's barrier against MPI's (on idle ranks)", Run: runDSMOverhead})
}

const dsmMore = `Strategies: fixed-home, tree-2, tree-4, tree-16, tree-2-4, tree-4-16 (any
tree-L-K with L in {2,4}, K >= L); matsquare and bitonic also take hand.
Examples:
  commcost dsm check --backend local --np 64
  mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 commcost dsm check
  commcost dsm matsquare --backend local --np 1024 --blocks 4096 --kernel sum
  commcost dsm bitonic --backend local --meshes 4x4,8x8,16x16,32x32 --plot figs
  commcost dsm plot a.jsonl b.jsonl --plot figs
`

// allDSMStrategies is every strategy and variant the paper evaluates.
const allDSMStrategies = "fixed-home,tree-2,tree-4,tree-16,tree-2-4,tree-4-16"

// dsmFlags are the flags both dsm subcommands share.
type dsmFlags struct {
	mf         measureFlags
	strategies string
	mesh       string
	memory     string
	barrier    string
	seed       int64

	rows, cols int
	memBytes   int
	barKind    divalib.BarrierKind
	list       []string // strategy names, in order
}

func (d *dsmFlags) register(fs *flag.FlagSet, defStrategies string, defNP int) {
	fs.StringVar(&d.strategies, "strategies", defStrategies, "comma `list` of strategies")
	fs.StringVar(&d.mesh, "mesh", "", "virtual mesh `RxC` (default: the most nearly square shape of the rank count)")
	fs.StringVar(&d.memory, "memory", "0", "bound on the copy `bytes` one rank holds (K, M, G = 2^10, 2^20, 2^30; 0 = unbounded)")
	fs.StringVar(&d.barrier, "barrier", "tree", "barrier `algorithm`: tree (access tree), central (flat), dissemination (log2 P rounds of one message) or mpi (MPI_Ibarrier, if the binding has it)")
	fs.Int64Var(&d.seed, "seed", 1, "seed of the random embeddings, homes and workloads")
	fs.Var(&d.mf.format, "format", "output `format` on stdout: "+results.FormatNames)
	fs.StringVar(&d.mf.out, "out", "", "append records to this JSON Lines `file`, flushed one record at a time")
	fs.StringVar(&d.mf.backend, "backend", backendNative, "native (system MPI, under mpirun) or local (goroutine ranks; times are not network measurements)")
	fs.IntVar(&d.mf.np, "np", defNP, "ranks for --backend local")
	// The dsm experiments run under the watchdog too (apps.Measure, the
	// store's checks): --timeout as every measuring subcommand has it.
	fs.Float64Var(&d.mf.timeout, "timeout", defaultTimeoutSec, "seconds a run may go without progress (an ended phase or repetition) before the rank that waits ends the job: a hung or stopped peer")
}

// check validates the shared flags: every message names the flag and the
// accepted form.
func (d *dsmFlags) check(allowHand bool) error {
	if err := checkTimeout(d.mf.timeout); err != nil {
		return err
	}
	setTimeout(d.mf.timeout)
	if d.mf.backend != backendNative && d.mf.backend != backendLocal {
		return usagef("--backend %q: accepted values are native and local", d.mf.backend)
	}
	if d.mf.np < 1 || d.mf.np > 4096 {
		return usagef("--np %d: the local backend takes 1 to 4096 ranks", d.mf.np)
	}
	var err error
	if d.rows, d.cols, err = divalib.ParseMesh(d.mesh); err != nil {
		return usagef("--mesh %s: %v", d.mesh, err)
	}
	if d.memBytes, err = parseSize(d.memory); err != nil {
		return usagef("--memory %s: %v", d.memory, err)
	}
	if d.barKind, err = divalib.ParseBarrier(d.barrier); err != nil {
		return usagef("--barrier %s: %v", d.barrier, err)
	}
	d.list, err = parseListOf("strategies", d.strategies, "a comma list of strategies", func(s string) (string, error) {
		if s == "hand" && allowHand {
			return s, nil
		}
		if _, _, err := divalib.ParseStrategy(s); err != nil {
			if allowHand {
				return "", fmt.Errorf("%v or hand", err)
			}
			return "", err
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	if d.mf.backend == backendLocal && d.rows > 0 && d.rows*d.cols != d.mf.np {
		return usagef("--mesh %s has %d processors but --np is %d: the mesh must hold exactly one rank per processor", d.mesh, d.rows*d.cols, d.mf.np)
	}
	return nil
}

// rankCheck refuses a world the mesh does not fit (under mpirun the rank
// count is only known inside the world).
func (d *dsmFlags) rankCheck(c mpi.Comm) error {
	if d.rows > 0 && d.rows*d.cols != c.Size() {
		return usagef("--mesh %s has %d processors but there are %d ranks: the mesh must hold exactly one rank per processor", d.mesh, d.rows*d.cols, c.Size())
	}
	if _, ok := c.(divalib.Ibarrierer); d.barKind == divalib.BarrierMPI && !ok {
		return usagef("--barrier mpi needs MPI_Ibarrier, which the %s backend's binding does not offer; accepted here: tree, central", c.Backend())
	}
	return nil
}

// store is the store configuration of the flags on mesh m (as asked: 0x0
// is the most nearly square shape); the strategy is set per name.
func (d *dsmFlags) store(m divalib.Mesh) divalib.Config {
	return divalib.Config{Rows: m.Rows, Cols: m.Cols, Seed: d.seed, MemoryBytes: d.memBytes, Barrier: d.barKind}
}

// asked is the mesh of --mesh (0x0 when not given).
func (d *dsmFlags) asked() divalib.Mesh { return divalib.Mesh{Rows: d.rows, Cols: d.cols} }

// parseSweep parses the flags of a sweeping dsm subcommand and checks the
// shared and the sweep flags.
func (d *dsmFlags) parseSweep(fs *flag.FlagSet, args []string, sw *dsmSweep, allowHand bool) error {
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := d.check(allowHand); err != nil {
		return err
	}
	return sw.check(d)
}

func runDSMCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm check", stderr)
	var d dsmFlags
	d.register(fs, allDSMStrategies, 64)
	ops := fs.Int("ops", 100000, "coherence operations over all ranks, per strategy")
	vars := fs.Int("vars", 16, "variables of the coherence workload (few: ranks collide)")
	slots := fs.Int("slots", 4, "16-byte slots per variable")
	wf := fs.Float64("write-fraction", 0.3, "share of writes among the coherence operations, in (0, 1)")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := d.check(false); err != nil {
		return err
	}
	switch {
	case *ops < 1:
		return mustBePositive("ops", *ops)
	case *vars < 1:
		return mustBePositive("vars", *vars)
	case *slots < 1:
		return mustBePositive("slots", *slots)
	case !(*wf > 0 && *wf < 1):
		return usagef("--write-fraction %v: must be a fraction in (0, 1), e.g. 0.3", *wf)
	case d.memBytes > 0 && d.memBytes < divalib.CheckMinMemory:
		return usagef("--memory %s: smaller than one variable of the suite (%d bytes); give at least %d", d.memory, divalib.CheckMinMemory, divalib.CheckMinMemory)
	case d.memBytes > 0 && d.memBytes < *slots*16:
		return usagef("--memory %s: smaller than one coherence variable (%d bytes = --slots x 16)", d.memory, *slots*16)
	}
	ccfg := storecheck.CoherenceConfig{Ops: *ops, Vars: *vars, Slots: *slots, WriteFraction: *wf, Seed: d.seed}
	d.mf.need = func(int) memNeed {
		return memNeed{perRank: ccfg.RankBytes(), flag: fmt.Sprintf("--slots %d", *slots),
			what: fmt.Sprintf("dsm check's %d variables of %d 16-byte slots (a home and a cached copy)", *vars, *slots)}
	}
	cfg := divalib.CheckConfig{Strategies: d.list, Store: d.store(d.asked()), Workloads: dsmCheckWorkloads(ccfg, d.seed)}
	return runMeasured(&d.mf, stdout, d.rankCheck, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = d.seed
		return dsmCheckWorld(c, cfg, stderr, meta, emit)
	})
}

// dsmCheckWorkloads are the workloads dsm check runs over every strategy
// (a variable so that a test can add one that finds violations).
var dsmCheckWorkloads = divalib.CheckWorkloads

// dsmCheckWorld runs the suite on the ranks of c (divalib.RunCheck), prints
// each violation once, and returns the verdict on every rank: exit 1 on
// all alike, the message printed once, and nobody aborts the job.
func dsmCheckWorld(c mpi.Comm, cfg divalib.CheckConfig, stderr io.Writer, meta results.Meta, emit func(results.Record) error) error {
	cfg.Violation = func(strategy, workload string, err error) {
		fmt.Fprintf(stderr, "commcost: dsm check %s %s: %v\n", strategy, workload, err)
	}
	failed, err := divalib.RunCheck(c, cfg, meta, emit)
	var se *divalib.StrategyError
	switch {
	case errors.As(err, &se):
		return agree(c, usagef("%v", se))
	case err != nil:
		return err
	case failed > 0:
		return agree(c, fmt.Errorf("dsm check: %d workload(s) with violations", failed))
	}
	return nil
}

func runDSMMatSquare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm matsquare", stderr)
	var d dsmFlags
	d.register(fs, "hand,fixed-home,tree-2,tree-4,tree-16,tree-2-4", 16)
	blocks := fs.String("blocks", "4096", "block sizes in 4-byte `ints` (perfect squares), a list (64,256,1024,4096) or range (64:4096)")
	kernel := fs.String("kernel", "mul", "local computation: mul (the real product) or sum (elementwise sum: same communication, O(m) work)")
	reps := fs.Int("reps", 3, "measured repetitions (each squares again)")
	verify := fs.Bool("verify", true, "compare the result with the serial computation on rank 0")
	var sw dsmSweep
	sw.register(fs, false)
	if err := d.parseSweep(fs, args, &sw, true); err != nil {
		return err
	}
	bl, err := parseIntGrid("blocks", *blocks, 1)
	if err != nil {
		return err
	}
	for _, m := range bl {
		if !divalib.PerfectSquare(m) {
			return usagef("--blocks %s: %d is not a perfect square; accepted are squares such as 64, 256, 1024, 4096", *blocks, m)
		}
		if d.memBytes > 0 && d.memBytes < 4*m {
			return usagef("--memory %s: smaller than one block variable (%d bytes for %d ints)", d.memory, 4*m, m)
		}
	}
	if *kernel != string(divalib.KernelMul) && *kernel != string(divalib.KernelSum) {
		return usagef("--kernel %s: accepted values are mul and sum", *kernel)
	}
	if *reps < 1 {
		return mustBePositive("reps", *reps)
	}
	return runDSMSweep(&d, &sw, stdout, stderr, func(m divalib.Mesh) error {
		if m.Rows != m.Cols {
			return usagef("matsquare needs a square mesh (sqrt(P) x sqrt(P) ranks, e.g. 4, 16, 64, 256, 1024); %d ranks give %v", m.Size(), m)
		}
		return nil
	}, func(c mpi.Comm, w dsmexp.World, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = d.seed
		e := divalib.MatSquareExperiment{Strategies: d.list, Store: d.store(w.Mesh), Blocks: bl,
			Kernel: divalib.Kernel(*kernel), Reps: *reps, Verify: *verify}
		return divalib.RunMatSquare(c, e, meta, emit)
	})
}

func runDSMOverhead(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm overhead", stderr)
	var d dsmFlags
	d.register(fs, "fixed-home,tree-4", 4)
	iters := fs.Int("iters", 1000000, "cached accesses per timed batch")
	batches := fs.Int("batches", 7, "timed batches (repetitions)")
	sizes := fs.String("sizes", "8,4K,64K", "`bytes` of the uncached remote reads (the k-k-access C kernel's l at k = 1, r = 1); \"\" for none")
	reads := fs.Int("reads", 1000, "timed uncached remote reads per size and rank")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	var readSizes []int
	if *sizes != "" {
		var err error
		if readSizes, err = parseSizes("sizes", *sizes); err != nil {
			return err
		}
		for _, l := range readSizes {
			if l < 1 {
				return usagef("--sizes %s: a remote read needs at least 1 byte", *sizes)
			}
		}
	}
	if *reads < 1 {
		return usagef("--reads %d: must be an integer >= 1", *reads)
	}
	if err := d.check(false); err != nil {
		return err
	}
	if *iters < 1 {
		return mustBePositive("iters", *iters)
	}
	if *batches < 1 {
		return mustBePositive("batches", *batches)
	}
	e := divalib.OverheadExperiment{Strategies: d.list, Store: d.store(d.asked()), Iters: *iters, Batches: *batches, ReadSizes: readSizes, Reads: *reads}
	return runMeasured(&d.mf, stdout, d.rankCheck, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = d.seed
		return divalib.RunOverhead(c, e, meta, emit)
	})
}
