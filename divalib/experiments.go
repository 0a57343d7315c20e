package divalib

import (
	"slices"

	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The experiments of `commcost dsm check`, `matsquare` and `overhead` over
// a list of strategies (paper 004,
// section 3): each runs collectively on the ranks of one world and hands
// its records to emit. emit is called on every rank with the same record
// for the matrix square and the overhead (their figures are global) and on
// rank 0 only for the coherence suite (storecheck's reports are rank 0's);
// callers write rank 0's records (as job.Measure does).

// Hand is the strategy name of the hand-optimised message-passing version
// of the matrix square (MatSquareHand); apps/dsmexp uses the same name.
const Hand = "hand"

// WithStrategy returns c with Strategy and Variant set from a strategy
// name (ParseStrategy: "fixed-home", "tree-4", "tree-2-4", ...).
func (c Config) WithStrategy(name string) (Config, error) {
	st, v, err := ParseStrategy(name)
	if err != nil {
		return c, err
	}
	c.Strategy, c.Variant = st, v
	return c, nil
}

// StrategyError is the error of a strategy whose store could not be made
// from the configuration (New, WithStrategy): the same on every rank, so a
// caller may treat it as bad input.
type StrategyError struct {
	Strategy string
	Err      error
}

func (e *StrategyError) Error() string { return e.Strategy + ": " + e.Err.Error() }
func (e *StrategyError) Unwrap() error { return e.Err }

// newStore makes the store of one named strategy (collective).
func newStore(c mpi.Comm, base Config, name string) (*Store, Config, error) {
	cfg, err := base.WithStrategy(name)
	if err == nil {
		var s *Store
		if s, err = New(c, cfg); err == nil {
			return s, cfg, nil
		}
	}
	return nil, cfg, &StrategyError{Strategy: name, Err: err}
}

// PerfectSquare reports whether n >= 0 is the square of an integer (the
// block sizes of the matrix square: m = (n/sqrt(P))^2 entries).
func PerfectSquare(n int) bool {
	if n < 0 {
		return false
	}
	r := isqrt(n)
	return r*r == n
}

// CheckWorkload is one workload of the coherence suite: run on every rank
// over a fresh store; rank 0 returns the verdict (package storecheck).
type CheckWorkload struct {
	Name string
	Run  func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error)
}

// CheckWorkloads are the workloads of the suite: the randomized coherence
// workload of ccfg (stale, torn and unknown reads), torn reads of a
// 32-slot variable, racing partial writes, a lock-protected counter and
// the error contract. seed drives the randomized ones.
func CheckWorkloads(ccfg storecheck.CoherenceConfig, seed int64) []CheckWorkload {
	return []CheckWorkload{
		{"coherence", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.Coherence(c, s, ccfg)
		}},
		{"torn-reads", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.TornReads(c, s, 200, 32, seed)
		}},
		{"disjoint-writes", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.DisjointWrites(c, s, 20)
		}},
		{"lock-counter", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.LockCounter(c, s, 30, 3, seed)
		}},
		{"errors", storecheck.Errors},
	}
}

// CheckMinMemory is the smallest copy bound (Config.MemoryBytes) the suite
// runs under: the torn-read workload's variable, 32 slots of 16 bytes.
const CheckMinMemory = 32 * 16

// CheckConfig configures RunCheck.
type CheckConfig struct {
	// Strategies are the strategy names to check, in order.
	Strategies []string
	// Store is the store configuration; Strategy and Variant are set from
	// each name, Seed also seeds the workloads.
	Store Config
	// Workloads to run over every strategy; nil runs
	// CheckWorkloads(Coherence, Store.Seed).
	Workloads []CheckWorkload
	// Coherence configures the default coherence workload.
	Coherence storecheck.CoherenceConfig
	// Violation, if set, is told on rank 0 of every workload with
	// violations as soon as it has run (the report's error).
	Violation func(strategy, workload string, err error)
}

// RunCheck runs every workload over every strategy (collective), each over
// a fresh store, and emits on rank 0 one record per workload and strategy
// (CheckRecord: the wall-clock time and the checker's counts). It returns
// on every rank the number of workloads that found violations: the reports
// are rank 0's, and the count is broadcast so that every rank reaches the
// same verdict. A store the configuration cannot make is a *StrategyError.
func RunCheck(c mpi.Comm, cfg CheckConfig, meta results.Meta, emit func(results.Record) error) (int, error) {
	workloads := cfg.Workloads
	if workloads == nil {
		workloads = CheckWorkloads(cfg.Coherence, cfg.Store.Seed)
	}
	for _, w := range workloads {
		if !slices.Contains(CheckWorkloadNames(), w.Name) {
			runWorkloads.Store(w.Name, struct{}{})
		}
	}
	failed := 0
	for _, name := range cfg.Strategies {
		for _, w := range workloads {
			end := watchPoint(BenchCheck, results.Params{"strategy": name, "workload": w.Name})
			rec, rep, err := checkOne(c, cfg.Store, name, w, meta)
			end()
			if err != nil {
				end()
				return 0, err
			}
			if c.Rank() != 0 {
				continue
			}
			if verr := rep.Err(); verr != nil {
				failed++
				if cfg.Violation != nil {
					cfg.Violation(name, w.Name, verr)
				}
			}
			if err := emit(rec); err != nil {
				return 0, err
			}
		}
	}
	n := []int64{int64(failed)}
	defer watchPoint(BenchCheck, results.Params{"step": "verdict"})()
	if err := mpi.BcastInt64s(c, n, 0); err != nil {
		return 0, err
	}
	return int(n[0]), nil
}

// MatSquareExperiment configures RunMatSquare: the matrix square of paper
// 004, section 3.1, over strategies and block sizes.
type MatSquareExperiment struct {
	// Strategies: Hand and strategy names. Hand runs first at every block
	// size, whatever its position, since the others' ratios refer to it.
	Strategies []string
	// Store is the store configuration (its mesh is the hand version's
	// too); Seed also seeds the matrix.
	Store Config
	// Blocks are the block sizes m in ints (perfect squares), in order.
	Blocks []int
	Kernel Kernel
	Reps   int  // measured repetitions (each squares again)
	Verify bool // compare with the serial computation on rank 0
	// MaxTime bounds the repetitions of each strategy and block size
	// (MatSquareConfig.MaxTime).
	MaxTime float64
}

// HandFirst returns the strategies with Hand (if present) moved to the
// front, the others in their order: the ratios of an experiment refer to
// the hand version, so it runs first at every point.
func HandFirst(strategies []string) []string {
	var out []string
	for _, s := range strategies {
		if s == Hand {
			out = append([]string{Hand}, out...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// checkOne runs workload w over a fresh store of strategy name
// (collective) and returns its record and report (rank 0's are the
// verdict).
func checkOne(c mpi.Comm, base Config, name string, w CheckWorkload, meta results.Meta) (results.Record, storecheck.Report, error) {
	s, scfg, err := newStore(c, base, name)
	if err != nil {
		return results.Record{}, storecheck.Report{}, err
	}
	t0 := c.Wtime()
	rep, err := w.Run(c, s)
	if err != nil {
		return results.Record{}, rep, err
	}
	if err := s.Close(); err != nil {
		return results.Record{}, rep, err
	}
	el := c.Wtime() - t0
	return CheckRecord(name, w.Name, s.Mesh(), scfg.MemoryBytes, rep, el, meta), rep, nil
}

// RunMatSquare squares the matrix for every block size and strategy
// (collective; MatSquareHand, MatSquareStore) and emits one record each
// (MatSquareResult.Record), with the congestion and time ratios to the
// hand version when it is among the strategies.
func RunMatSquare(c mpi.Comm, e MatSquareExperiment, meta results.Meta, emit func(results.Record) error) error {
	order := HandFirst(e.Strategies)
	for _, m := range e.Blocks {
		mcfg := MatSquareConfig{BlockInts: m, Kernel: e.Kernel, Reps: e.Reps, MaxTime: e.MaxTime, Verify: e.Verify, Seed: e.Store.Seed}
		var hand *MatSquareResult
		for _, name := range order {
			end := watchPoint(BenchMatSquare, results.Params{"strategy": name, "block_ints": m})
			res, err := matSquareOne(c, e, mcfg, name)
			end()
			if err != nil {
				return err
			}
			if name == Hand {
				r := res
				hand = &r
			}
			if err := emit(res.Record(mcfg, hand, meta)); err != nil {
				return err
			}
		}
	}
	return nil
}

// matSquareOne squares the matrix under one strategy or Hand
// (collective).
func matSquareOne(c mpi.Comm, e MatSquareExperiment, mcfg MatSquareConfig, name string) (MatSquareResult, error) {
	if name == Hand {
		mesh, err := NewMesh(e.Store.Rows, e.Store.Cols, c.Size())
		if err != nil {
			return MatSquareResult{}, err
		}
		return MatSquareHand(c, mesh, mcfg)
	}
	s, _, err := newStore(c, e.Store, name)
	if err != nil {
		return MatSquareResult{}, err
	}
	res, err := MatSquareStore(c, s, mcfg)
	if err != nil {
		return res, err
	}
	return res, s.Close()
}

// OverheadExperiment configures RunOverhead.
type OverheadExperiment struct {
	// Strategies are the strategy names, in order.
	Strategies []string
	// Store is the store configuration (its Barrier is the one timed);
	// Seed also seeds the remote reads' targets.
	Store Config
	// Iters cached accesses per timed batch, Batches timed batches
	// (MeasureOverhead).
	Iters, Batches int
	// ReadSizes are the bytes of the uncached remote reads
	// (MeasureRemoteRead), Reads the timed reads per size and rank; none
	// on one rank (no remote rank).
	ReadSizes []int
	Reads     int
}

// RunOverhead measures the library's own cost per access for every
// strategy (collective): cached read and write, the store's barrier
// against MPI's, and uncached remote reads of each size; it emits the
// records of Overhead.Records and RemoteReadRecord, strategy by strategy.
func RunOverhead(c mpi.Comm, e OverheadExperiment, meta results.Meta, emit func(results.Record) error) error {
	for _, name := range e.Strategies {
		end := watchPoint(BenchOverhead, results.Params{"strategy": name})
		recs, err := overheadOne(c, e, name, meta)
		end()
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// overheadOne measures one strategy's overhead (collective) and returns
// its records.
func overheadOne(c mpi.Comm, e OverheadExperiment, name string, meta results.Meta) ([]results.Record, error) {
	s, cfg, err := newStore(c, e.Store, name)
	if err != nil {
		return nil, err
	}
	o, err := MeasureOverhead(c, s, e.Iters, e.Batches)
	if err != nil {
		return nil, err
	}
	remote := make([][]float64, len(e.ReadSizes))
	writes := make([][2]int64, len(e.ReadSizes))
	for i, l := range e.ReadSizes {
		if c.Size() < 2 {
			break
		}
		before := s.Stats()
		if remote[i], err = MeasureRemoteRead(c, s, RemoteReadConfig{Bytes: l, Reps: e.Reads, Seed: cfg.Seed}); err != nil {
			return nil, err
		}
		// This rank's writes, which invalidate the copies between
		// batches (untimed), and how many reused the value's buffer.
		after := s.Stats()
		writes[i] = [2]int64{after.Writes - before.Writes, after.WritesInPlace - before.WritesInPlace}
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	recs := o.Records(name, cfg.Barrier, s.Mesh(), meta)
	for i, l := range e.ReadSizes {
		if remote[i] != nil {
			recs = append(recs, RemoteReadRecord(name, l, s.Mesh(), remote[i], writes[i], meta))
		}
	}
	return recs, nil
}
