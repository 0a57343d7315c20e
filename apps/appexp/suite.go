package appexp

import (
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The suite's instances of paper 000's programs: on the direct store,
// packets of SuiteAppL bytes, SuiteAppK in flight, inside the suite's
// k-k-access grid (k = 1..8, l = 64..16K), so that the trilinear fit of
// the run's own k-k-access records predicts their phases; report.md tables
// them against it (paper 000's Table 2).
const (
	SuiteAppK       = 4
	SuiteAppL       = 1024
	SuiteAppMaxTime = 2.0 // seconds of repetitions per program at most
)

// SuiteStorePrograms returns the suite's configurations of paper 000's
// programs that run on p ranks (matrix multiplication needs p to divide
// n, connected components and bitonic sort a power of two), and the
// others, each with why it does not run.
func SuiteStorePrograms(p int) (run []apps.App, skipped []string) {
	acc := apps.Access{K: SuiteAppK, L: SuiteAppL}
	n := roundUp(128, max(p, 1)) // the matrix order: 128, or the next multiple of p
	for _, a := range []apps.App{
		apps.MatMul{N: n, Access: acc, Sync: false},
		apps.MatMul{N: n, Access: acc, Sync: true},
		apps.ConnComp{N: 1024, Access: acc},
		apps.BitonicSort{N: 4096, Access: acc},
		apps.SampleSort{N: 4096, Access: acc},
	} {
		if err := a.Check(p); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", a.Name(), err))
			continue
		}
		run = append(run, a)
	}
	return run, skipped
}

// SuiteStoreSweep measures SuiteStorePrograms(c.Size()) on every rank of c
// over one direct store (collective), with reps capped at SuiteAppMaxTime
// seconds per program. Every phase record (store "direct") goes to emit on
// every rank (the caller writes rank 0's and agrees on the outcome); done
// is called after each program.
func SuiteStoreSweep(c mpi.Comm, reps patterns.Reps, seed int64, meta results.Meta, emit func(results.Record) error, done func()) error {
	run, _ := SuiteStorePrograms(c.Size())
	s, err := directstore.New(c, directstore.Config{})
	if err != nil {
		return err
	}
	reps.MaxTime = min(reps.MaxTime, SuiteAppMaxTime)
	meta.Seed = seed
	for _, a := range run {
		recs, err := apps.Measure(apps.Env{Comm: c, Store: s, Seed: seed}, a, reps, meta)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			rec.Params["store"] = directstore.Strategy{}.Name()
			if err := emit(rec); err != nil {
				return err
			}
		}
		done()
	}
	return s.Close()
}

// SuiteMPPrograms are the suite's instances of the message-passing
// programs on p ranks: Cannon when p is a square, the checkerboard
// algorithm on the most nearly square grid, Gaussian elimination (both of
// order 128 or the next multiple of p and the grid's sides), and
// multigrid's async and sync variants on 63 x 63 planes.
func SuiteMPPrograms(p int) []apps.App {
	grid := apps.NearSquareGrid(p)
	n := roundUp(128, lcm(lcm(p, grid.Rows), grid.Cols))
	progs := []apps.App{
		apps.Checkerboard{N: n, Grid: grid},
		&apps.Gauss{N: n},
		&apps.Multigrid{N: 63, Iters: 8},
		&apps.Multigrid{N: 63, Iters: 8, Sync: true},
	}
	if _, ok := apps.SquareGrid(p); ok {
		progs = append([]apps.App{apps.Cannon{N: n}}, progs...)
	}
	return progs
}

// SuiteMP is the suite's part for the message-passing programs
// (SuiteMPPrograms(c.Size())): a calibration of the patterns their
// workloads name (at most 0.5 s and 5 repetitions a point), every model
// kind fitted to it (apps.Fit; a kind the records cannot support is left
// out, and report.md says why), and each program's phase records
// annotated with every model's prediction (at most 2 s of repetitions a
// program), so that report.md's ranking tables come from records.jsonl
// alone (report.AppRankings). validate checks every buffer of the
// calibration (the suite's --validate). Collective; emit is called on
// rank 0.
func SuiteMP(c mpi.Comm, reps patterns.Reps, seed int64, validate bool, meta results.Meta, emit func(results.Record) error) error {
	p := c.Size()
	progs := SuiteMPPrograms(p)
	for _, prog := range progs {
		if err := prog.Check(p); err != nil {
			return fmt.Errorf("suite: %s: %w", prog.Name(), err)
		}
	}
	emit0 := func(rec results.Record) error {
		if c.Rank() != 0 {
			return nil
		}
		return emit(rec)
	}
	calReps := reps
	calReps.MaxTime, calReps.MinReps = min(reps.MaxTime, 0.5), min(max(reps.MinReps, 1), 5)
	cal, err := apps.Calibration{Reps: calReps, Validate: validate}.Run(c, Workloads(progs, p), meta, emit0)
	if err != nil {
		return fmt.Errorf("suite: application calibration: %w", err)
	}
	var models []apps.NamedModel
	if c.Rank() == 0 {
		models, _ = apps.Fit(cal, nil) // report.md says why a kind is missing
	}
	appReps := reps
	appReps.MaxTime = min(reps.MaxTime, 2)
	for _, prog := range progs {
		if g, ok := prog.(*apps.Gauss); ok {
			if err := g.Input(seed); err != nil {
				return err
			}
		}
		recs, err := apps.Measure(apps.Env{Comm: c, Seed: seed}, prog, appReps, meta)
		if err != nil {
			return fmt.Errorf("suite: %s: %w", prog.Name(), err)
		}
		if c.Rank() != 0 {
			continue
		}
		if len(models) > 0 {
			if _, err := apps.RankAnnotated(recs, models, apps.StatMedian); err != nil {
				return err
			}
		}
		for _, r := range recs {
			if err := emit0(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundUp is x rounded up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }
