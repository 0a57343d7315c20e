package patterns

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/commcost/commcost/mpi"
)

// The synchronised window start of docs/MEASURE.md ("Synchronisation"): every
// rank's clock offset against rank 0 is estimated from the minimum round
// trip, and every repetition starts at an agreed time on that clock, for
// patterns whose result depends on simultaneous start.

// Sync selects how ranks start a timed repetition.
type Sync int

const (
	// SyncBarrier starts each repetition after an MPI barrier (default). The
	// barrier's own exit skew is part of the measured time.
	SyncBarrier Sync = iota
	// SyncWindow starts every rank at an agreed time on a clock synchronised
	// to rank 0 (offsets estimated from the minimum round trip), as
	// SKaMPI/ReproMPI do, for patterns whose result depends on simultaneous
	// start.
	SyncWindow
)

func (s Sync) String() string {
	if s == SyncWindow {
		return "window"
	}
	return "barrier"
}

// ParseSync parses "barrier" or "window".
func ParseSync(s string) (Sync, error) {
	switch s {
	case "barrier", "":
		return SyncBarrier, nil
	case "window":
		return SyncWindow, nil
	}
	return 0, fmt.Errorf("sync %q: accepted values are barrier and window", s)
}

// repTimes is one repetition on the synchronised clock (window mode only).
type repTimes struct {
	start, end float64 // synchronised clock
	late       bool    // this rank reached the agreed start after it had passed
}

// syncClock is rank-0-relative time. Every clock drifts: quartz runs a few
// parts per million fast or slow, so an offset measured once is off by
// drift x elapsed later (10 ppm: 100 us after 10 s, more than the start
// guard). The clock therefore models the offset as a line in local time,
//
//	offset(t) = a + b (t - t0),  global = t - offset(t)
//
// fitted by least squares to every offset measurement so far (ReproMPI's
// linear clock model: Hunold and Carpen-Amarie, "Reproducible MPI
// benchmarking is still not as easy as you think", TPDS 2016, section 5,
// the HCA and JK synchronisations), and Measure measures a new offset
// every Reps.ResyncSec, so the slope b comes from a baseline as long as
// the measurement. With one measurement b is 0: the offset-only clock.
type syncClock struct {
	wtime func() float64
	// points are the offsets measured so far against this rank's local
	// time (rank 0: none; its offset is 0 by definition).
	points     []offsetPoint
	t0, a, b   float64 // the fitted line: offset(t) = a + b (t - t0)
	guard      float64 // seconds between agreeing on a start and the start
	driftModel bool    // fit a slope (false: the latest offset only)
}

// offsetPoint is one offset measurement: this rank's clock minus rank 0's
// at local time t.
type offsetPoint struct{ t, off float64 }

// Clock synchronisation parameters.
const (
	clockPingPongs = 20    // round trips per rank for each offset estimate
	minGuardSec    = 50e-6 // earliest start after the agreement
	maxGuardSec    = 50e-3 // cap of the adaptive guard
	bcastsToTime   = 5     // broadcasts timed to size the guard
	clockTag       = 32001 // tag of clock-sync messages
)

// newSyncClock measures every rank's clock offset against rank 0
// (measureOffset) and sizes the start guard from the time a broadcast
// takes. driftModel fits a slope to later re-synchronisations (resync);
// without it each resync replaces the offset.
func newSyncClock(c mpi.Comm, driftModel bool) (*syncClock, error) {
	sc := &syncClock{wtime: c.Wtime, driftModel: driftModel}
	if err := sc.resync(c); err != nil {
		return nil, err
	}
	// Size the guard from how long a broadcast of the start time takes.
	buf := make([]float64, 1)
	t0 := c.Wtime()
	for i := 0; i < bcastsToTime; i++ {
		if err := mpi.BcastFloat64s(c, buf, 0); err != nil {
			return nil, err
		}
	}
	per := []float64{(c.Wtime() - t0) / bcastsToTime}
	worst := []float64{0}
	if err := c.AllreduceFloat64s(per, worst, mpi.OpMax); err != nil {
		return nil, err
	}
	sc.guard = math.Min(math.Max(minGuardSec, 4*worst[0]), maxGuardSec)
	return sc, nil
}

// resync measures every rank's offset once more (collective) and refits
// the clock: the line through all offsets with driftModel, else the new
// offset alone.
func (sc *syncClock) resync(c mpi.Comm) error {
	p, ok, err := measureOffset(c)
	if err != nil || !ok {
		return err
	}
	if !sc.driftModel {
		sc.points = sc.points[:0]
	}
	sc.points = append(sc.points, p)
	sc.fit()
	return nil
}

// fit sets the line: the least-squares line through the offset points
// (gonum's stat.LinearRegression), or the one offset with b = 0. Times are
// taken relative to the first point, so that a + b (t - t0) does not lose
// digits when Wtime counts from the epoch.
func (sc *syncClock) fit() {
	n := len(sc.points)
	switch n {
	case 0:
		sc.t0, sc.a, sc.b = 0, 0, 0
		return
	case 1:
		sc.t0, sc.a, sc.b = sc.points[0].t, sc.points[0].off, 0
		return
	}
	sc.t0 = sc.points[0].t
	x, y := make([]float64, n), make([]float64, n)
	for i, p := range sc.points {
		x[i], y[i] = p.t-sc.t0, p.off
	}
	sc.a, sc.b = stat.LinearRegression(x, y, nil, false)
}

// measureOffset estimates this rank's clock offset against rank 0 from the
// round trip with the smallest time (the least-delayed exchange bounds the
// offset error by half that round trip), as SKaMPI and ReproMPI do: rank 0
// sends its time t0, the rank answers with its own time tr, rank 0 reads
// t1, and the offset is tr - (t0 + t1)/2 at the rank's time tr. Rank 0
// goes through the ranks one after the other; ok is false on rank 0.
func measureOffset(c mpi.Comm) (offsetPoint, bool, error) {
	buf := make([]float64, 1)
	var mine offsetPoint
	for r := 1; r < c.Size(); r++ {
		switch c.Rank() {
		case 0:
			best, res := math.Inf(1), []float64{0, 0}
			for i := 0; i < clockPingPongs; i++ {
				t0 := c.Wtime()
				if err := mpi.SendFloat64s(c, []float64{t0}, r, clockTag); err != nil {
					return mine, false, err
				}
				if _, err := mpi.RecvFloat64s(c, buf, r, clockTag); err != nil {
					return mine, false, err
				}
				t1 := c.Wtime()
				if rtt := t1 - t0; rtt < best {
					best, res = rtt, []float64{buf[0] - (t0+t1)/2, buf[0]}
				}
			}
			if err := mpi.SendFloat64s(c, res, r, clockTag); err != nil {
				return mine, false, err
			}
		case r:
			for i := 0; i < clockPingPongs; i++ {
				if _, err := mpi.RecvFloat64s(c, buf, 0, clockTag); err != nil {
					return mine, false, err
				}
				if err := mpi.SendFloat64s(c, []float64{c.Wtime()}, 0, clockTag); err != nil {
					return mine, false, err
				}
			}
			res := make([]float64, 2)
			if _, err := mpi.RecvFloat64s(c, res, 0, clockTag); err != nil {
				return mine, false, err
			}
			mine = offsetPoint{t: res[1], off: res[0]}
		}
	}
	return mine, c.Rank() != 0, nil
}

// offset is the modelled offset at local time t.
func (sc *syncClock) offset(t float64) float64 { return sc.a + sc.b*(t-sc.t0) }

func (sc *syncClock) now() float64 {
	t := sc.wtime()
	return t - sc.offset(t)
}

// widen doubles the guard after a late start, up to maxGuardSec.
func (sc *syncClock) widen() { sc.guard = math.Min(2*sc.guard, maxGuardSec) }

// agreeStart: rank 0 picks a start time guard seconds ahead and broadcasts it.
func (sc *syncClock) agreeStart(c mpi.Comm) (float64, error) {
	v := []float64{sc.now() + sc.guard}
	if err := mpi.BcastFloat64s(c, v, 0); err != nil {
		return 0, err
	}
	return v[0], nil
}

// waitUntil spins until the synchronised clock reaches start; it reports
// whether the start had already passed (a late rank).
func (sc *syncClock) waitUntil(start float64) bool {
	if sc.now() > start {
		return true
	}
	for sc.now() < start {
	}
	return false
}
