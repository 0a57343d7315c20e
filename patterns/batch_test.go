package patterns

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestBatchSize: the first batch runs up to MinReps (no rule stops
// earlier), later ones a quarter of what is done, never past MaxReps, and
// at the pace so far never past MaxTime, with at least 3 repetitions
// before time may stop the run (Measure's rule).
func TestBatchSize(t *testing.T) {
	r := Reps{MinReps: 10, MaxReps: 1000, MaxTime: 1}.withDefaults()
	tests := []struct {
		name    string
		r       Reps
		n       int
		elapsed float64
		pace    float64
		most    int
		want    int
	}{
		{"first batch: MinReps", r, 0, 0, 1e-6, 1000, 10},
		{"first batch, pace unknown: 3", r, 0, 0, 0, 1000, 3},
		{"up to MinReps", r, 4, 4e-6, 1e-6, 1000, 6},
		{"then a quarter more", r, 40, 4e-5, 1e-6, 1000, 10},
		{"at least one", r, 10, 1e-5, 1e-6, 1000, 2},
		{"not past MaxReps", r, 990, 1e-3, 1e-6, 1000, 10},
		{"not past MaxTime", r, 100, 0.5, 0.03125, 1000, 16},
		{"time is up: one more", r, 100, 1.2, 0.01, 1000, 1},
		{"slow: still 3 before time stops", r, 0, 0, 5, 1000, 3},
		{"per repetition", r, 0, 0, 1e-6, 1, 1},
		{"fixed count at once", Reps{MinReps: 1000, MaxReps: 1000, MaxTime: 60}.withDefaults(), 0, 0, 1e-6, 1000, 1000},
	}
	for _, tt := range tests {
		if got := tt.r.batchSize(tt.n, tt.elapsed, tt.pace, tt.most); got != tt.want {
			t.Errorf("%s: batchSize(%d, %g, %g, %d) = %d, want %d", tt.name, tt.n, tt.elapsed, tt.pace, tt.most, got, tt.want)
		}
	}
}

// fakeRep returns rank r's time of repetition i: a known value, so the
// harness's reductions can be checked exactly.
func fakeRep(c mpi.Comm) Rep {
	i := 0
	return func() (float64, error) {
		i++
		return float64((i*7+c.Rank()*3)%11+1) * 1e-6, nil
	}
}

// TestMeasureBatchIsMeasure: with a fixed number of repetitions, batches
// of the Go serial batch give the Measurement Measure gives: the same
// samples (max over ranks or rank 0's), summary, spread and stop.
func TestMeasureBatchIsMeasure(t *testing.T) {
	for _, red := range []Reduction{ReduceMax, ReduceRank0} {
		cfg := Reps{Warmup: 3, MinReps: 37, MaxReps: 37, MaxTime: 60, Reduction: red}
		var want, got []Measurement
		want = runRanks(t, 3, func(c mpi.Comm) (Measurement, error) { return Measure(c, cfg, fakeRep(c)) })
		got = runRanks(t, 3, func(c mpi.Comm) (Measurement, error) {
			return MeasureBatch(c, cfg, false, SerialBatch(c, fakeRep(c)))
		})
		for r := range got {
			g, w := got[r], want[r]
			if !slices.Equal(g.Samples, w.Samples) || g.Summary != w.Summary || g.Stop != w.Stop || g.Reduction != w.Reduction ||
				g.RankMin != w.RankMin || g.RankAvg != w.RankAvg || g.RankMax != w.RankMax || g.CommSize != w.CommSize {
				t.Errorf("reduction %d rank %d: MeasureBatch %+v, Measure %+v", red, r, g, w)
			}
		}
		if got[0].Stop != results.StopMaxReps || len(got[0].Samples) != 37 {
			t.Errorf("reduction %d: stop %q after %d", red, got[0].Stop, len(got[0].Samples))
		}
	}
}

// TestMeasureBatchSizes: the batches the backend sees (warm-up, then up
// to MinReps, then growing), one repetition each when validating, and the
// synchronised-window start one unsynchronised repetition at a time.
func TestMeasureBatchSizes(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Reps
		perRep bool
		want   []int
	}{
		// The warm-up's first repetition alone gives the pace.
		{"batches", Reps{Warmup: 2, MinReps: 10, MaxReps: 20, MaxTime: 60, RelCI: 1e-9}, false, []int{1, 1, 10, 2, 3, 3, 2}},
		{"warm-up in batches of at most MaxReps after the first", Reps{Warmup: 9, MinReps: 3, MaxReps: 3, MaxTime: 60}, false, []int{1, 3, 3, 2, 3}},
		{"per repetition", Reps{Warmup: 1, MinReps: 3, MaxReps: 3, MaxTime: 60}, true, []int{1, 1, 1, 1}},
		{"window", Reps{Warmup: 1, MinReps: 3, MaxReps: 3, MaxTime: 60, Sync: SyncWindow}, false, []int{1, 1, 1, 1}},
	}
	for _, tt := range tests {
		sizes := make([][]int, 2)
		syncs := make([]bool, 2)
		runRanks(t, 2, func(c mpi.Comm) (Measurement, error) {
			serial := SerialBatch(c, fakeRep(c))
			return MeasureBatch(c, tt.cfg, tt.perRep, func(b mpi.Batch) error {
				sizes[c.Rank()] = append(sizes[c.Rank()], b.Reps())
				syncs[c.Rank()] = b.Sync
				return serial(b)
			})
		})
		got := sizes
		if tt.cfg.Sync == SyncWindow {
			// A window start some rank missed is redone (Measure): more
			// batches, every one of them a single repetition.
			for r := range got {
				if len(got[r]) >= len(tt.want) && !slices.ContainsFunc(got[r], func(n int) bool { return n != 1 }) {
					got[r] = got[r][:len(tt.want)]
				}
			}
		}
		if !slices.Equal(got[0], tt.want) || !slices.Equal(got[1], tt.want) {
			t.Errorf("%s: batches %v, want %v", tt.name, sizes, tt.want)
		}
		if syncs[0] != (tt.cfg.Sync == SyncBarrier) {
			t.Errorf("%s: Sync %v", tt.name, syncs[0])
		}
	}
}

// TestMeasureBatchFailureIsCollective: a repetition failing on one rank,
// inside the batch (warm-up or timed) or in the Go work after it
// (validation), ends MeasureBatch on every rank: the failing rank gets its
// error, the others ErrPeerFailed.
func TestMeasureBatchFailureIsCollective(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name          string
		failAt        int
		afterTheBatch bool
	}{
		{"warm-up", 1, false},
		{"timed", 4, false},
		{"timed, after the batch", 4, true},
	}
	for _, tt := range tests {
		errs := make([]error, 3)
		err := local.RunWith(local.Options{Timeout: time.Minute}, 3, func(c mpi.Comm) error {
			calls := 0
			serial := SerialBatch(c, func() (float64, error) {
				calls++
				if !tt.afterTheBatch && c.Rank() == 1 && calls == tt.failAt {
					return 0, boom
				}
				return 1e-6, nil
			})
			_, errs[c.Rank()] = MeasureBatch(c, Reps{Warmup: 2, MinReps: 10, MaxReps: 10}, false, func(b mpi.Batch) error {
				if err := serial(b); err != nil {
					return err
				}
				if tt.afterTheBatch && c.Rank() == 1 && calls >= tt.failAt {
					return boom
				}
				return nil
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(errs[1], boom) || !errors.Is(errs[0], ErrPeerFailed) || !errors.Is(errs[2], ErrPeerFailed) {
			t.Errorf("%s: errors %v", tt.name, errs)
		}
	}
}

// TestMeasureBatchStopsOnTime: slow repetitions stop on MaxTime after at
// least 3, without running a whole MinReps batch past it.
func TestMeasureBatchStopsOnTime(t *testing.T) {
	rs := runRanks(t, 2, func(c mpi.Comm) (Measurement, error) {
		return MeasureBatch(c, Reps{Warmup: 1, MinReps: 50, MaxReps: 100, MaxTime: 0.1}, false, SerialBatch(c, func() (float64, error) {
			time.Sleep(20 * time.Millisecond)
			return 0.02, nil
		}))
	})
	if n := len(rs[0].Samples); rs[0].Stop != results.StopMaxTime || n < 3 || n > 8 {
		t.Errorf("stop %q after %d repetitions of 20 ms with 0.1 s allowed", rs[0].Stop, n)
	}
}

// TestMeasureBatchReportsProgress: a healthy batched measurement never
// looks stuck to the watchdog. 200 repetitions of 5 ms (one second, five
// times the watchdog's timeout) asked for at once were one batch without
// progress, and the watchdog ended the job (seen with `pingpong --timeout
// 5 --min-reps 20000`); batches now stop at a quarter of the timeout at
// the warm-up's pace and report progress.
func TestMeasureBatchReportsProgress(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var fired atomic.Bool
	w := NewWatchdog(timeout, func(s Stall) { fired.Store(true); t.Errorf("the watchdog fired: %s", s) })
	defer w.Stop()
	Install(w)
	defer Install(nil)
	rs := runRanks(t, 2, func(c mpi.Comm) (Measurement, error) {
		defer Installed().Begin("slow bytes=8", 0)() // the pattern's point, as Run begins it
		return MeasureBatch(c, Reps{Warmup: 20, MinReps: 200, MaxReps: 200, MaxTime: 60}, false, SerialBatch(c, func() (float64, error) {
			time.Sleep(5 * time.Millisecond)
			return 0.005, nil
		}))
	})
	if n := len(rs[0].Samples); n != 200 || fired.Load() {
		t.Errorf("%d repetitions (want 200), watchdog fired: %v", n, fired.Load())
	}
}

// TestMeasureBatchWarmupBoundedByMaxTime: --max-time bounds the batched
// warm-up too (Measure's rule, TestWarmupBoundedByMaxTime): a warm-up of a
// million 1 ms repetitions stops once 0.2 s are spent, on every rank after
// the same repetition, and the timed repetitions follow.
func TestMeasureBatchWarmupBoundedByMaxTime(t *testing.T) {
	var warm [2]atomic.Int64
	start := time.Now()
	rs := runRanks(t, 2, func(c mpi.Comm) (Measurement, error) {
		timed := false
		m, err := MeasureBatch(c, Reps{Warmup: 1_000_000, MinReps: 3, MaxReps: 3, MaxTime: 0.2}, false, SerialBatch(c, func() (float64, error) {
			if !timed {
				warm[c.Rank()].Add(1)
			}
			time.Sleep(time.Millisecond)
			return 1e-3, nil
		}))
		timed = true
		return m, err
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("warm-up took %v with --max-time 0.2 s", d)
	}
	if a, b := warm[0].Load(), warm[1].Load(); a != b || a > 1000 {
		t.Errorf("ranks ran %d and %d warm-up repetitions of 1 ms with 0.2 s allowed", a, b)
	}
	if n := len(rs[0].Samples); n != 3 {
		t.Errorf("%d timed repetitions, want 3", n)
	}
}
