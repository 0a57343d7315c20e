package patterns

import (
	"errors"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestWindowEndIsOwnSpan: with SyncWindow a rank's end is its start plus
// the duration it reports, so work after taking the time (validation,
// drawing the next instance) is not in the sample.
func TestWindowEndIsOwnSpan(t *testing.T) {
	const busy, after = 2 * time.Millisecond, 40 * time.Millisecond
	rs := runRanks(t, 2, func(c mpi.Comm) (Measurement, error) {
		m, err := Measure(c, Reps{Warmup: -1, MinReps: 3, MaxReps: 3, Sync: SyncWindow}, func() (float64, error) {
			t0 := c.Wtime()
			for c.Wtime()-t0 < busy.Seconds() {
			}
			d := c.Wtime() - t0
			time.Sleep(after) // not part of the repetition's time
			return d, nil
		})
		return m, err
	})
	med := rs[0].Summary.Median
	if med < busy.Seconds() || med > (busy+after).Seconds()*0.75 {
		t.Errorf("median %v, want about %v (the sleep after the span must not count)", med, busy)
	}
	if rs[0].Reduction != results.ReductionWindowLatestEnd {
		t.Errorf("reduction %q, want %q", rs[0].Reduction, results.ReductionWindowLatestEnd)
	}
}

// TestRankSpreadSkipsIdleRanks: ranks that return 0 do not take part and
// are left out of min/avg/max across ranks.
func TestRankSpreadSkipsIdleRanks(t *testing.T) {
	rs := runRanks(t, 4, func(c mpi.Comm) (Measurement, error) {
		m, err := Measure(c, Reps{Warmup: -1, MinReps: 3, MaxReps: 3}, func() (float64, error) {
			if c.Rank() >= 2 {
				return 0, nil
			}
			return float64(c.Rank()+1) * 1e-3, nil
		})
		return m, err
	})
	m := rs[0]
	if !near(m.RankMin, 1e-3) || !near(m.RankMax, 2e-3) || !near(m.RankAvg, 1.5e-3) {
		t.Errorf("rank spread %v/%v/%v, want 1ms/1.5ms/2ms", m.RankMin, m.RankAvg, m.RankMax)
	}
	s := m.Scaled(0.5)
	if !near(s.Summary.Median, 1e-3) || !near(s.RankMax, 1e-3) || !near(s.Samples[0], 1e-3) || !near(m.Samples[0], 2e-3) {
		t.Errorf("Scaled(0.5): %+v (original %+v)", s, m)
	}
}

func TestCountsPerRep(t *testing.T) {
	var c Counts
	for i := 0; i < 4; i++ {
		c.Sent(10)
		c.Recv(3)
	}
	got := c.PerRep(2)
	if got != (Counts{MsgsSent: 2, MsgsRecv: 2, BytesSent: 20, BytesRecv: 6}) {
		t.Errorf("PerRep(2) = %+v", got)
	}
	if (Counts{MsgsSent: 1}).PerRep(0) != (Counts{}) {
		t.Error("PerRep(0) must be zero")
	}
}

// TestFailureIsCollective: a repetition that fails on one rank ends Measure
// on every rank (the others get ErrPeerFailed) instead of leaving them
// waiting, in warm-up and in timed repetitions.
func TestFailureIsCollective(t *testing.T) {
	boom := errors.New("boom")
	for _, failAt := range []int{1, 4} { // a warm-up, a timed repetition
		errs := make([]error, 3)
		err := local.RunWith(local.Options{Timeout: time.Minute}, 3, func(c mpi.Comm) error {
			calls := 0
			_, errs[c.Rank()] = Measure(c, Reps{Warmup: 2, MinReps: 10, MaxReps: 10}, func() (float64, error) {
				calls++
				if c.Rank() == 1 && calls == failAt {
					return 0, boom
				}
				return 1e-6, nil
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(errs[1], boom) || !errors.Is(errs[0], ErrPeerFailed) || !errors.Is(errs[2], ErrPeerFailed) {
			t.Errorf("fail at call %d: errors %v", failAt, errs)
		}
	}
}

// TestCapIters: a repetition is cut to about MaxTime/RepsPerBudget at the
// slowest rank's pace, never below 1 or above the default, and every rank
// gets the same count.
func TestCapIters(t *testing.T) {
	tests := []struct {
		name  string
		per   []float64 // seconds per iteration on each rank (0: no estimate)
		iters int
		want  int
	}{
		{"slowest rank decides", []float64{1e-3, 0, 1e-4}, 1000, 50},
		{"fast machine keeps the default", []float64{1e-7, 1e-7, 0}, 1000, 1000},
		{"very slow: at least one", []float64{10, 1e-6, 1e-6}, 100, 1},
		{"no estimates", []float64{0, 0, 0}, 30, 30},
	}
	for _, tt := range tests {
		got := make([]int, len(tt.per))
		err := local.Run(len(tt.per), func(c mpi.Comm) error {
			n, err := CapIters(c, Reps{MaxTime: 1}, tt.iters, tt.per[c.Rank()])
			got[c.Rank()] = n
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for r, n := range got {
			if n != tt.want {
				t.Errorf("%s: rank %d got %d, want %d", tt.name, r, n, tt.want)
			}
		}
	}
}

// TestWarmUpBudget: the warm-up runs the asked iterations when they are
// quick, stops early on a slow machine, and every rank runs as many.
func TestWarmUpBudget(t *testing.T) {
	tests := []struct {
		name  string
		sleep time.Duration
		total int
		want  int
	}{
		{"quick: all", 0, 100, 100},
		{"slow: stops after 1+2+4+8 (0.15 s) passes 0.1 s of 1 s", 10 * time.Millisecond, 100, 15},
	}
	for _, tt := range tests {
		ran := make([]int, 3)
		err := local.Run(3, func(c mpi.Comm) error {
			_, err := warmUp(c, Reps{MaxTime: 1}, tt.total, c.Rank() < 2, func(k int) (float64, error) {
				ran[c.Rank()] += k
				time.Sleep(time.Duration(k) * tt.sleep)
				return float64(k) * tt.sleep.Seconds(), nil
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if ran[0] != tt.want || ran[1] != tt.want || ran[2] != 0 {
			t.Errorf("%s: ranks ran %v, want %d on the two active ranks", tt.name, ran, tt.want)
		}
	}
}
