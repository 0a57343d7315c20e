package patterns

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestWatchdogRules: a point that stops making progress, or outlives its
// budget, is reported once with its name; one that keeps making progress
// within its budget is not.
func TestWatchdogRules(t *testing.T) {
	const timeout = 100 * time.Millisecond
	tests := []struct {
		name    string
		budget  time.Duration
		run     func(w *Watchdog) // drives the point for a while
		fires   bool
		overdue bool
		inPoint string
	}{
		{"progress keeps it alive", 0, func(w *Watchdog) {
			for i := 0; i < 20; i++ {
				time.Sleep(timeout / 4)
				w.Progress()
			}
		}, false, false, ""},
		{"no progress", 0, func(w *Watchdog) { time.Sleep(4 * timeout) }, true, false, "no progress"},
		{"over budget despite progress", 2 * timeout, func(w *Watchdog) {
			// Until the budget, the timeout and the slack the longest gap
			// earns (4 gaps: a loaded machine stretches the sleeps) are
			// spent, with a margin; at most 5 s.
			start := time.Now()
			for time.Since(start) < 5*time.Second {
				time.Sleep(timeout / 4)
				w.Progress()
				if time.Since(start) > 2*(2*timeout+timeout+4*time.Duration(w.maxGap.Load())) {
					break
				}
			}
		}, true, true, "budget"},
		{"idle between points", 0, func(w *Watchdog) {}, false, false, ""},
		{"overlapping measures each within budget", 2 * timeout, func(w *Watchdog) {
			// Goroutine ranks share the watchdog: one begins its next
			// Measure before another ends the last, so the point never
			// ends; each Measure's budget counts from its own begin.
			start, prev := time.Now(), func() {}
			for time.Since(start) < 12*timeout {
				next := w.Begin("pingpong bytes=8", 2*timeout)
				prev()
				prev = next
				for i := 0; i < 4; i++ {
					time.Sleep(timeout / 4)
					w.Progress()
				}
			}
			prev()
		}, false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fired := make(chan Stall, 2)
			w := NewWatchdog(timeout, func(s Stall) { fired <- s })
			defer w.Stop()
			if tc.name == "idle between points" {
				w.Begin("p", 0)() // begun and ended at once
				time.Sleep(4 * timeout)
			} else {
				end := w.Begin("pingpong bytes=8", tc.budget)
				tc.run(w)
				end()
			}
			time.Sleep(timeout / 2)
			select {
			case s := <-fired:
				if !tc.fires {
					t.Fatalf("fired: %v", s)
				}
				if s.Overdue != tc.overdue || !strings.Contains(s.String(), "pingpong bytes=8") || !strings.Contains(s.String(), tc.inPoint) {
					t.Errorf("stall %q (overdue %v), want overdue %v and %q", s, s.Overdue, tc.overdue, tc.inPoint)
				}
				select {
				case s := <-fired:
					t.Errorf("fired twice: %v", s)
				default:
				}
			default:
				if tc.fires {
					t.Fatal("did not fire")
				}
			}
		})
	}
}

// TestWatchdogStopsHungMeasure: a rank that stops answering in the middle
// of Measure's repetitions (its peer waits in a collective for it) is
// caught by the installed watchdog, which names the point its caller
// began; the warm-up and repetitions before it were progress.
func TestWatchdogStopsHungMeasure(t *testing.T) {
	const timeout = 300 * time.Millisecond
	fired := make(chan Stall, 1)
	release := make(chan struct{})
	w := NewWatchdog(timeout, func(s Stall) {
		fired <- s
		close(release) // the test's stand-in for MPI_Abort: let the ranks go
	})
	defer w.Stop()
	Install(w)
	defer Install(nil)
	var reps atomic.Int64
	err := local.Run(2, func(c mpi.Comm) error {
		end := Installed().Begin("hung bytes=8", 0)
		defer end()
		_, err := Measure(c, Reps{Warmup: 3, MinReps: 50, MaxReps: 50, MaxTime: 60}, func() (float64, error) {
			if c.Rank() == 1 && reps.Add(1) == 10 {
				<-release // stopped, as by SIGSTOP
			}
			return 1e-6, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-fired:
		if s.Overdue || !strings.Contains(s.String(), "hung bytes=8 made no progress") || s.Idle < timeout {
			t.Errorf("stall %q", s)
		}
	default:
		t.Fatal("the watchdog did not fire")
	}
}

// TestWarmupBoundedByMaxTime: --max-time bounds the warm-up too: a
// warm-up of a million repetitions stops once the time budget is spent,
// on every rank after the same repetition.
func TestWarmupBoundedByMaxTime(t *testing.T) {
	var warm [2]atomic.Int64
	start := time.Now()
	err := local.Run(2, func(c mpi.Comm) error {
		timed := false
		_, err := Measure(c, Reps{Warmup: 1_000_000, MinReps: 3, MaxReps: 3, MaxTime: 0.2}, func() (float64, error) {
			if !timed {
				warm[c.Rank()].Add(1)
			}
			time.Sleep(time.Millisecond)
			return 1e-3, nil
		})
		timed = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("warm-up took %v with --max-time 0.2 s", d)
	}
	if warm[0].Load() != warm[1].Load() {
		t.Errorf("ranks ran %d and %d repetitions", warm[0].Load(), warm[1].Load())
	}
}

// TestWatchdogSpan: a span's nested points bring it no budget (a sweep
// outlives any one point's), and a stall between them, where no point is
// begun, is caught under the span's name.
func TestWatchdogSpan(t *testing.T) {
	const timeout = 100 * time.Millisecond
	fired := make(chan Stall, 2)
	w := NewWatchdog(timeout, func(s Stall) { fired <- s })
	defer w.Stop()
	end := w.Span("the calibration")
	for i := 0; i < 3; i++ {
		inner := w.Begin("a measurement", timeout/2)
		for j := 0; j < 4; j++ { // twice its budget, with progress
			time.Sleep(timeout / 4)
			w.Progress()
		}
		inner()
	}
	select {
	case s := <-fired:
		t.Fatalf("fired with progress: %v", s)
	default:
	}
	time.Sleep(4 * timeout) // between points, stuck
	end()
	select {
	case s := <-fired:
		if s.Overdue || !strings.Contains(s.String(), "the calibration made no progress") {
			t.Errorf("stall %q, want the span's no-progress", s)
		}
	default:
		t.Fatal("a stall between the span's points did not fire")
	}
}

// TestWatchdogNamesNestedStep: a step begun without a budget inside a
// point (a serial oracle inside the checks) is named with it while it
// runs; Measure's budgeted Begin keeps the outer name.
func TestWatchdogNamesNestedStep(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		budget time.Duration
		want   string
	}{
		{"a step of its own", 0, "the checks; in it, the oracle made no progress"},
		{"a measurement", time.Hour, "the checks made no progress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fired := make(chan Stall, 2)
			w := NewWatchdog(timeout, func(s Stall) { fired <- s })
			defer w.Stop()
			end := w.Begin("the checks", 0)
			inner := w.Begin(map[bool]string{true: "the oracle", false: "a measurement"}[tc.budget == 0], tc.budget)
			time.Sleep(4 * timeout)
			inner()
			end()
			select {
			case s := <-fired:
				if !strings.Contains(s.String(), tc.want) {
					t.Errorf("stall %q, want %q", s, tc.want)
				}
			default:
				t.Fatal("did not fire")
			}
		})
	}
}
