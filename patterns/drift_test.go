package patterns

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// virtualTime is the true time of a simulated machine: the process's
// monotonic clock plus jumps the test adds, so a long sweep can pass in a
// moment.
type virtualTime struct {
	start time.Time
	mu    sync.Mutex
	jump  float64
}

func newVirtualTime() *virtualTime { return &virtualTime{start: time.Now()} }

func (v *virtualTime) now() float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return time.Since(v.start).Seconds() + v.jump
}

func (v *virtualTime) advance(sec float64) {
	v.mu.Lock()
	v.jump += sec
	v.mu.Unlock()
}

// driftComm is a rank whose Wtime drifts: local = true (1 + drift) +
// offset, as a quartz clock off by drift (parts per million) and started
// at another time. Everything else is the local backend's.
type driftComm struct {
	mpi.Comm
	vt            *virtualTime
	drift, offset float64
}

func (d driftComm) Wtime() float64 { return d.vt.now()*(1+d.drift) + d.offset }

// Rank r's clock: rank 0 is the reference (no drift); the others run 10 to
// 30 ppm fast and started up to 3 s apart.
func drifting(c mpi.Comm, vt *virtualTime) driftComm {
	r := float64(c.Rank())
	if r == 0 {
		return driftComm{Comm: c, vt: vt}
	}
	return driftComm{Comm: c, vt: vt, drift: 1e-5 * r, offset: 1.5 * r}
}

// TestSyncClockDrift: over a simulated sweep of 20 minutes on clocks 10-30
// ppm fast, the synchronised clock's error (its global time minus rank 0's
// true time, read at the same instant) grows linearly with the offset
// measured once (offset-only: drift x elapsed, 18 ms after 600 s at 30
// ppm) but stays bounded when the offset is re-measured and a linear drift
// fitted (the error is read just before each re-measurement, so it is the
// model's extrapolation over 120 s, not a fresh offset).
func TestSyncClockDrift(t *testing.T) {
	const (
		checkpoints = 10
		step        = 120.0 // seconds of simulated sweep between resyncs
		boundSec    = 1e-3  // the drift model's error bound
	)
	type curve [checkpoints]float64 // worst |error| over ranks per checkpoint
	run := func(driftModel bool) curve {
		vt := newVirtualTime()
		var mu sync.Mutex
		var worst curve
		err := local.RunWith(local.Options{Timeout: 2 * time.Minute}, 4, func(c mpi.Comm) error {
			dc := drifting(c, vt)
			sc, err := newSyncClock(dc, driftModel)
			if err != nil {
				return err
			}
			for i := 0; i < checkpoints; i++ {
				if err := dc.Barrier(); err != nil {
					return err
				}
				if c.Rank() == 0 {
					vt.advance(step)
				}
				if err := dc.Barrier(); err != nil {
					return err
				}
				// Rank 0's true clock is the virtual time itself; both
				// are read together, so messaging does not enter.
				e := math.Abs(sc.now() - vt.now())
				mu.Lock()
				worst[i] = math.Max(worst[i], e)
				mu.Unlock()
				if driftModel {
					if err := sc.resync(dc); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return worst
	}
	offsetOnly, withDrift := run(false), run(true)
	t.Logf("worst clock error per %v s, offset only: %.3g", step, offsetOnly)
	t.Logf("worst clock error per %v s, drift model: %.3g", step, withDrift)
	// Offset only: 30 ppm x elapsed, growing at every checkpoint.
	for i := 1; i < checkpoints; i++ {
		if !(offsetOnly[i] > offsetOnly[i-1]) {
			t.Errorf("offset-only error does not grow: %.3g then %.3g", offsetOnly[i-1], offsetOnly[i])
		}
	}
	if want := 3e-5 * step * checkpoints; math.Abs(offsetOnly[checkpoints-1]-want) > 0.2*want {
		t.Errorf("offset-only error after %v s: %.3g s, want about %.3g (30 ppm)", step*checkpoints, offsetOnly[checkpoints-1], want)
	}
	// Drift model: the first checkpoint extrapolates from one offset (as
	// offset only); from the third on the slope is known.
	for i := 2; i < checkpoints; i++ {
		if withDrift[i] > boundSec {
			t.Errorf("drift model: error %.3g s at checkpoint %d, want at most %g", withDrift[i], i, boundSec)
		}
	}
}

// TestWindowRedoesLateStarts: on clocks 1000 ppm apart, with repetitions
// that each let 50 s of simulated time pass, the offset-only clock drifts
// past the start guard (at most 50 ms) within a few repetitions: the late
// repetitions are redone rather than kept, and Measure gives up with
// ErrLateStarts. With the drift model (re-synchronised every second of
// the sweep) the same measurement completes, every sample kept being a
// repetition that started on time.
func TestWindowRedoesLateStarts(t *testing.T) {
	const reps, per = 12, 50.0
	measure := func(resync float64) ([]Measurement, []error) {
		vt := newVirtualTime()
		ms := make([]Measurement, 3)
		errs := make([]error, 3)
		err := local.RunWith(local.Options{Timeout: 2 * time.Minute}, 3, func(c mpi.Comm) error {
			dc := driftComm{Comm: c, vt: vt, drift: 1e-3 * float64(c.Rank())}
			ms[c.Rank()], errs[c.Rank()] = Measure(dc, Reps{Warmup: -1, MinReps: reps, MaxReps: reps, MaxTime: 1e9, Sync: SyncWindow, ResyncSec: resync},
				func() (float64, error) {
					// Time passes once every rank has started, as in a
					// long repetition (not before a rank reached the
					// start, which would make it late whatever its clock).
					if err := c.Barrier(); err != nil {
						return 0, err
					}
					if c.Rank() == 0 {
						vt.advance(per)
					}
					return 1e-4, c.Barrier()
				})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ms, errs
	}
	_, errs := measure(-1)
	for r, err := range errs {
		if !errors.Is(err, ErrLateStarts) {
			t.Errorf("offset only, rank %d: %v, want ErrLateStarts", r, err)
		}
	}
	ms, errs := measure(1)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("drift model, rank %d: %v", r, err)
		}
	}
	m := ms[0]
	if len(m.Samples) != reps {
		t.Errorf("%d samples kept, want %d", len(m.Samples), reps)
	}
	if m.Resyncs < reps-1 {
		t.Errorf("%d re-synchronisations over %d repetitions of %v s", m.Resyncs, reps, per)
	}
	// A rank descheduled past the guard (a loaded machine) still starts
	// late now and then, whatever its clock; the guard doubles each time,
	// so that stops well before ErrLateStarts. The kept samples are the
	// repetition's 0.1 ms plus the spin's overshoot (and, on a loaded
	// machine, a preemption now and then), far below the 100 ms per
	// repetition a drifting rank would add: their median shows it.
	t.Logf("drift model: %d late starts redone, %d resyncs, samples %.3g", m.Late, m.Resyncs, m.Samples)
	if med := results.Median(m.Samples); med > maxGuardSec {
		t.Errorf("median kept sample %.3g s: the starts are not in step", med)
	}
	if rec := (Measurement{Late: 3}).Record("test", nil, 3, results.Meta{}); rec.Counters[CounterLateRedone] != 3 {
		t.Errorf("record counters %v lack %s = 3", rec.Counters, CounterLateRedone)
	}
}
