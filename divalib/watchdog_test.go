package divalib_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestExperimentsUnderWatchdog: dsm check, matsquare and overhead run
// their points under the process's watchdog. Healthy runs make progress
// and never trip it; a rank that stops answering after its first record
// (as under SIGSTOP) leaves the next point idle, and the watchdog fires
// once, naming the experiment's point (goroutine ranks share one
// watchdog, so the point is the one the first rank to begin named).
func TestExperimentsUnderWatchdog(t *testing.T) {
	const timeout = time.Second
	ccfg := storecheck.CoherenceConfig{Ops: 200, Vars: 4, Slots: 2, WriteFraction: 0.3, Seed: 3}
	type run func(c mpi.Comm, emit func(results.Record) error) error
	check := func(c mpi.Comm, emit func(results.Record) error) error {
		_, err := divalib.RunCheck(c, divalib.CheckConfig{Strategies: []string{"fixed-home", "tree-4"}, Store: divalib.Config{Seed: 3}, Coherence: ccfg}, results.Meta{}, emit)
		return err
	}
	matsquare := func(c mpi.Comm, emit func(results.Record) error) error {
		return divalib.RunMatSquare(c, divalib.MatSquareExperiment{Strategies: []string{"hand", "tree-4"}, Store: divalib.Config{Seed: 5},
			Blocks: []int{16}, Kernel: divalib.KernelSum, Reps: 3}, results.Meta{}, emit)
	}
	overhead := func(c mpi.Comm, emit func(results.Record) error) error {
		return divalib.RunOverhead(c, divalib.OverheadExperiment{Strategies: []string{"fixed-home", "tree-4"},
			Store: divalib.Config{Seed: 2, Barrier: divalib.BarrierCentral}, Iters: 20, Batches: 2, ReadSizes: []int{8}, Reads: 10}, results.Meta{}, emit)
	}
	tests := []struct {
		name     string
		run      run
		stopRank int // -1: healthy
		point    string
	}{
		{"check healthy", check, -1, ""},
		{"check, rank 0 stops", check, 0, "dsm-check strategy="},
		{"matsquare healthy", matsquare, -1, ""},
		{"matsquare, rank 1 stops", matsquare, 1, "dsm-matsquare block_ints="},
		{"overhead healthy", overhead, -1, ""},
		{"overhead, rank 1 stops", overhead, 1, "dsm-overhead strategy="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fired := make(chan patterns.Stall, 2)
			release := make(chan struct{})
			var once sync.Once
			w := patterns.NewWatchdog(timeout, func(s patterns.Stall) {
				fired <- s
				once.Do(func() { close(release) }) // the test's MPI_Abort: let the stopped rank go
			})
			defer w.Stop()
			patterns.Install(w)
			defer patterns.Install(nil)
			var stopOnce sync.Once
			err := local.Run(4, func(c mpi.Comm) error {
				return tc.run(c, func(results.Record) error {
					if c.Rank() == tc.stopRank {
						stopOnce.Do(func() { <-release })
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case s := <-fired:
				if tc.point == "" {
					t.Fatalf("fired on a healthy run: %v", s)
				}
				if !strings.Contains(s.String(), tc.point) || !strings.Contains(s.String(), "made no progress") {
					t.Errorf("stall %q, want it to name %q", s, tc.point)
				}
			default:
				if tc.point != "" {
					t.Fatal("the watchdog did not fire")
				}
			}
		})
	}
}

// TestLongBlockProductsMakeProgress: a matrix square of large blocks
// (order 384 on 4 ranks, a serial oracle of order 768) computes for
// longer than the timeout between repetitions; its products tell the
// watchdog they move on, so a healthy run is not taken for a hung one.
func TestLongBlockProductsMakeProgress(t *testing.T) {
	w := patterns.NewWatchdog(200*time.Millisecond, func(s patterns.Stall) { t.Errorf("fired on a healthy run: %v", s) })
	defer w.Stop()
	patterns.Install(w)
	defer patterns.Install(nil)
	err := local.Run(4, func(c mpi.Comm) error {
		return divalib.RunMatSquare(c, divalib.MatSquareExperiment{Strategies: []string{"hand"}, Store: divalib.Config{Seed: 5},
			Blocks: []int{384 * 384}, Kernel: divalib.KernelMul, Reps: 1}, results.Meta{}, func(results.Record) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
}
