package apps

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// hangingToy is toy whose rank 1 stops answering (as after a SIGSTOP)
// before the allreduce of its stopAt-th run, until release is closed.
type hangingToy struct {
	toy
	stopAt  int64
	runs    *atomic.Int64
	release chan struct{}
}

func (h hangingToy) Run(env Env) (Outcome, error) {
	if env.Comm.Rank() == 1 && h.runs.Add(1) == h.stopAt {
		<-h.release
	}
	return h.toy.Run(env)
}

// TestMeasureUnderWatchdog: an application measured by
// Measure is a point under the process's watchdog. Runs that keep ending
// phases are progress, however many; a peer that stops answering in the
// middle of the repetitions leaves the point idle, and the watchdog fires
// once, naming the application and its parameters.
func TestMeasureUnderWatchdog(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name   string
		stopAt int64 // 0: never
		fires  bool
	}{
		{"healthy runs are progress", 0, false},
		{"peer stops in a repetition", 8, true},
		{"peer stops in the warm-up", 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fired := make(chan patterns.Stall, 2)
			release := make(chan struct{}, 1)
			w := patterns.NewWatchdog(timeout, func(s patterns.Stall) {
				fired <- s
				release <- struct{}{} // the test's stand-in for MPI_Abort: let the stopped rank go
			})
			defer w.Stop()
			patterns.Install(w)
			defer patterns.Install(nil)
			app := hangingToy{toy: toy{n: 4, failRank: -1}, stopAt: tc.stopAt, runs: new(atomic.Int64), release: release}
			err := local.Run(2, func(c mpi.Comm) error {
				// Each run ends well within the timeout; 20 of them take
				// longer than it in all.
				_, err := Measure(Env{Comm: c, Seed: 1}, slowToy{app}, patterns.Reps{Warmup: 3, MinReps: 20, MaxReps: 20, MaxTime: 60}, results.Meta{})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case s := <-fired:
				if !tc.fires {
					t.Fatalf("fired on a healthy application: %v", s)
				}
				if !strings.Contains(s.String(), "app toy n=4 made no progress") || s.Idle < timeout {
					t.Errorf("stall %q", s)
				}
			default:
				if tc.fires {
					t.Fatal("the watchdog did not fire")
				}
			}
		})
	}
}

// slowToy makes every run of its application take 50 ms, so that a
// healthy measurement outlasts the watchdog's timeout.
type slowToy struct{ hangingToy }

func (s slowToy) Run(env Env) (Outcome, error) {
	time.Sleep(50 * time.Millisecond)
	return s.hangingToy.Run(env)
}

// TestMultigridCyclesAreProgress: a plane iterated with many V-cycles
// takes several timeouts, in the run and in the serial oracle, and is
// not taken for a stopped rank: every V-cycle is progress.
func TestMultigridCyclesAreProgress(t *testing.T) {
	const timeout = 100 * time.Millisecond
	fired := make(chan patterns.Stall, 2)
	w := patterns.NewWatchdog(timeout, func(s patterns.Stall) { fired <- s })
	defer w.Stop()
	patterns.Install(w)
	defer patterns.Install(nil)
	start := time.Now()
	err := local.Run(2, func(c mpi.Comm) error {
		_, err := Measure(Env{Comm: c, Seed: 1}, &Multigrid{N: 31, Iters: 1, Cycles: 9000}, patterns.Reps{Warmup: -1, MinReps: 1, MaxReps: 1, MaxTime: 60}, results.Meta{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 3*timeout {
		t.Fatalf("the run took %v, under the 3 timeouts it must last to test the rule", el)
	}
	select {
	case s := <-fired:
		t.Fatalf("fired on a healthy multigrid: %v", s)
	default:
	}
}
