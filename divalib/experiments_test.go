package divalib_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func TestPerfectSquare(t *testing.T) {
	tests := []struct {
		n    int
		want bool
	}{
		{-4, false}, {0, true}, {1, true}, {2, false}, {63, false}, {64, true},
		{128, false}, {4096, true}, {4095, false}, {1 << 40, true}, {1<<40 + 1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			if got := divalib.PerfectSquare(tt.n); got != tt.want {
				t.Fatalf("PerfectSquare(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestHandFirst(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"no hand", []string{"tree-4", "fixed-home"}, []string{"tree-4", "fixed-home"}},
		{"hand first already", []string{"hand", "tree-4"}, []string{"hand", "tree-4"}},
		{"hand last", []string{"fixed-home", "tree-2", "hand"}, []string{"hand", "fixed-home", "tree-2"}},
		{"hand alone", []string{"hand"}, []string{"hand"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := divalib.HandFirst(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("HandFirst(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithStrategy(t *testing.T) {
	base := divalib.Config{Rows: 2, Cols: 2, Seed: 9, MemoryBytes: 4096, Barrier: divalib.BarrierCentral}
	tests := []struct {
		name    string
		want    string // Config.Name of the result
		wantErr bool
	}{
		{"fixed-home", "fixed-home", false},
		{"tree-4", "tree-4", false},
		{"tree-2-4", "tree-2-4", false},
		{"tree-3", "", true},
		{"hand", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := base.WithStrategy(tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.Name() != tt.want {
				t.Errorf("strategy %s, want %s", got.Name(), tt.want)
			}
			// Everything but the strategy is the base's.
			got.Strategy, got.Variant = base.Strategy, base.Variant
			if got != base {
				t.Errorf("config %+v, want %+v with the strategy set", got, base)
			}
		})
	}
}

// collect runs fn on np goroutine ranks and returns the records emitted
// per rank.
func collect(t *testing.T, np int, fn func(c mpi.Comm, emit func(results.Record) error) error) ([][]results.Record, []error) {
	t.Helper()
	var mu sync.Mutex
	recs := make([][]results.Record, np)
	errs := make([]error, np)
	_ = local.Run(np, func(c mpi.Comm) error {
		errs[c.Rank()] = fn(c, func(rec results.Record) error {
			mu.Lock()
			defer mu.Unlock()
			recs[c.Rank()] = append(recs[c.Rank()], rec)
			return nil
		})
		return nil
	})
	return recs, errs
}

// TestRunCheck: the suite runs every workload over every strategy and emits
// one record each on rank 0; a violation found on rank 0 is counted on
// every rank and reported once; a store the configuration cannot make is a
// StrategyError on every rank.
func TestRunCheck(t *testing.T) {
	injected := divalib.CheckWorkload{Name: "injected", Run: func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
		if err := s.Barrier(); err != nil || c.Rank() != 0 {
			return storecheck.Report{}, err
		}
		return storecheck.Report{Ops: 1, Mismatches: 1, Problems: []string{"injected mismatch"}}, nil
	}}
	ccfg := storecheck.CoherenceConfig{Ops: 400, Vars: 4, Slots: 2, WriteFraction: 0.3, Seed: 3}
	tests := []struct {
		name       string
		store      divalib.Config
		strategies []string
		extra      []divalib.CheckWorkload
		wantRecs   int
		wantFailed int
		wantStrErr bool
	}{
		{"clean", divalib.Config{Seed: 3}, []string{"fixed-home", "tree-4"}, nil, 10, 0, false},
		{"violation", divalib.Config{Seed: 3}, []string{"tree-2"}, []divalib.CheckWorkload{injected}, 6, 1, false},
		{"mesh does not fit", divalib.Config{Rows: 3, Cols: 3, Seed: 3}, []string{"fixed-home"}, nil, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := divalib.CheckConfig{Strategies: tt.strategies, Store: tt.store, Coherence: ccfg}
			if tt.extra != nil {
				cfg.Workloads = append(divalib.CheckWorkloads(ccfg, 3), tt.extra...)
			}
			var mu sync.Mutex
			var told []string
			cfg.Violation = func(strategy, workload string, err error) {
				mu.Lock()
				told = append(told, strategy+" "+workload)
				mu.Unlock()
			}
			failed := make([]int, 4)
			recs, errs := collect(t, 4, func(c mpi.Comm, emit func(results.Record) error) error {
				n, err := divalib.RunCheck(c, cfg, results.Meta{Backend: "local"}, emit)
				failed[c.Rank()] = n
				return err
			})
			for r, err := range errs {
				var se *divalib.StrategyError
				if tt.wantStrErr {
					if !errors.As(err, &se) || se.Strategy != "fixed-home" {
						t.Errorf("rank %d: %v, want a StrategyError of fixed-home", r, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				if failed[r] != tt.wantFailed {
					t.Errorf("rank %d: %d failed workloads, want %d", r, failed[r], tt.wantFailed)
				}
				if r > 0 && len(recs[r]) != 0 {
					t.Errorf("rank %d emitted %d records; the reports are rank 0's", r, len(recs[r]))
				}
			}
			if len(recs[0]) != tt.wantRecs {
				t.Fatalf("%d records on rank 0, want %d", len(recs[0]), tt.wantRecs)
			}
			for _, rec := range recs[0] {
				if rec.Bench != divalib.BenchCheck || rec.Params["mesh"] != "2x2" {
					t.Errorf("record %s %v", rec.Bench, rec.Params)
				}
			}
			if tt.wantFailed > 0 && !slices.Equal(told, []string{"tree-2 injected"}) {
				t.Errorf("violations told: %q, want the injected one once", told)
			}
		})
	}
}

// TestRunMatSquare: the hand version runs first at every block size
// whatever its position, the strategies' records carry ratios to it, and
// every result is verified.
func TestRunMatSquare(t *testing.T) {
	e := divalib.MatSquareExperiment{Strategies: []string{"tree-4", "hand", "fixed-home"}, Store: divalib.Config{Seed: 5},
		Blocks: []int{16, 64}, Kernel: divalib.KernelSum, Reps: 2, Verify: true}
	recs, errs := collect(t, 4, func(c mpi.Comm, emit func(results.Record) error) error {
		return divalib.RunMatSquare(c, e, results.Meta{Backend: "local"}, emit)
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	want := []struct {
		strategy string
		block    int
	}{{"hand", 16}, {"tree-4", 16}, {"fixed-home", 16}, {"hand", 64}, {"tree-4", 64}, {"fixed-home", 64}}
	if len(recs[0]) != len(want) {
		t.Fatalf("%d records, want %d", len(recs[0]), len(want))
	}
	for i, w := range want {
		rec := recs[0][i]
		if rec.Bench != divalib.BenchMatSquare || rec.Params["strategy"] != w.strategy || rec.Params["block_ints"] != w.block {
			t.Errorf("record %d: %s %v, want %s at m = %d", i, rec.Bench, rec.Params, w.strategy, w.block)
		}
		if rec.Counters["verified"] != 1 || len(rec.Samples) != 2 {
			t.Errorf("record %d %v: counters %v, %d samples", i, rec.Params, rec.Counters, len(rec.Samples))
		}
		// The access trees and the fixed home move more bytes over the
		// busiest link than the hand-optimised version (paper 004, Fig. 5).
		if w.strategy != "hand" && !(rec.Derived["congestion_ratio"] > 1) {
			t.Errorf("record %d %v: congestion ratio %v, want > 1", i, rec.Params, rec.Derived["congestion_ratio"])
		}
	}
	// Every rank hands over the same (global) records.
	for r := 1; r < 4; r++ {
		if len(recs[r]) != len(recs[0]) {
			t.Errorf("rank %d: %d records, rank 0 %d", r, len(recs[r]), len(recs[0]))
		}
	}
}

// TestRunOverhead: four records per strategy (cached read, cached write,
// the store's barrier, MPI's) and one per remote-read size, none on one
// rank (no remote rank to read from).
func TestRunOverhead(t *testing.T) {
	tests := []struct {
		name     string
		np       int
		sizes    []int
		wantRecs int
	}{
		{"two ranks two sizes", 2, []int{8, 4096}, 2 * (4 + 2)},
		{"one rank", 1, []int{8}, 2 * 4},
		{"no reads", 4, nil, 2 * 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := divalib.OverheadExperiment{Strategies: []string{"fixed-home", "tree-4"}, Store: divalib.Config{Seed: 2, Barrier: divalib.BarrierCentral},
				Iters: 50, Batches: 2, ReadSizes: tt.sizes, Reads: 20}
			recs, errs := collect(t, tt.np, func(c mpi.Comm, emit func(results.Record) error) error {
				return divalib.RunOverhead(c, e, results.Meta{Backend: "local"}, emit)
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if len(recs[0]) != tt.wantRecs {
				t.Fatalf("%d records, want %d", len(recs[0]), tt.wantRecs)
			}
			ops := map[string]int{}
			for _, rec := range recs[0] {
				ops[fmt.Sprint(rec.Params["op"])]++
				if rec.Summary.N == 0 || !(rec.Summary.Median > 0) {
					t.Errorf("%v: summary %+v", rec.Params, rec.Summary)
				}
			}
			if ops["barrier-central"] != 2 || ops["cached-read"] != 2 {
				t.Errorf("ops %v: want the central barrier and a cached read per strategy", ops)
			}
		})
	}
}

// TestCoherenceRankBytes: a home and a cached copy of every variable, the
// defaults where the configuration leaves them zero.
func TestCoherenceRankBytes(t *testing.T) {
	tests := []struct {
		name string
		cfg  storecheck.CoherenceConfig
		want float64
	}{
		{"given", storecheck.CoherenceConfig{Vars: 8, Slots: 2}, 2 * 8 * 2 * 16},
		{"defaults (16 variables of 4 slots)", storecheck.CoherenceConfig{}, 2 * 16 * 4 * 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.RankBytes(); got != tt.want {
				t.Fatalf("RankBytes() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRunCheckWatched: every workload of the suite runs as a point of the
// process's watchdog, named as its record: a rank that stops answering
// (here one that sleeps past the timeout before the workload's barrier)
// leaves the others' point idle, and the watchdog reports that point.
func TestRunCheckWatched(t *testing.T) {
	stalls := make(chan patterns.Stall, 1)
	wd := patterns.NewWatchdog(100*time.Millisecond, func(s patterns.Stall) { stalls <- s })
	patterns.Install(wd)
	defer func() { patterns.Install(nil); wd.Stop() }()
	slow := divalib.CheckWorkload{Name: "slow", Run: func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
		if c.Rank() == 1 {
			time.Sleep(time.Second)
		}
		return storecheck.Report{}, s.Barrier()
	}}
	cfg := divalib.CheckConfig{Strategies: []string{"tree-4"}, Store: divalib.Config{Seed: 1}, Workloads: []divalib.CheckWorkload{slow}}
	err := local.Run(2, func(c mpi.Comm) error {
		_, err := divalib.RunCheck(c, cfg, results.Meta{}, func(results.Record) error { return nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-stalls:
		if want := "dsm-check strategy=tree-4 workload=slow"; s.Point != want {
			t.Errorf("stalled point %q, want %q", s.Point, want)
		}
	default:
		t.Fatal("the watchdog saw no stalled point: the workload ran unwatched")
	}
}
