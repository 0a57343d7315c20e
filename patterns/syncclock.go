package patterns

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
)

// The synchronised window start of MEASURE.md ("Synchronisation"): every
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

// syncClock is rank-0-relative time: global = Wtime() - offset.
type syncClock struct {
	wtime  func() float64
	offset float64
	guard  float64 // seconds between agreeing on a start and the start
}

// Clock synchronisation parameters.
const (
	clockPingPongs = 20    // round trips per rank for the offset estimate
	minGuardSec    = 50e-6 // earliest start after the agreement
	maxGuardSec    = 50e-3 // cap of the adaptive guard
	bcastsToTime   = 5     // broadcasts timed to size the guard
	clockTag       = 32001 // tag of clock-sync messages
)

// newSyncClock estimates every rank's clock offset against rank 0 from the
// round trip with the smallest time (the least-delayed exchange bounds the
// offset error by half that round trip), as SKaMPI and ReproMPI do.
func newSyncClock(c mpi.Comm) (*syncClock, error) {
	sc := &syncClock{wtime: c.Wtime}
	buf := make([]float64, 1)
	for r := 1; r < c.Size(); r++ {
		switch c.Rank() {
		case 0:
			best, off := math.Inf(1), 0.0
			for i := 0; i < clockPingPongs; i++ {
				t0 := c.Wtime()
				if err := mpi.SendFloat64s(c, []float64{t0}, r, clockTag); err != nil {
					return nil, err
				}
				if _, err := mpi.RecvFloat64s(c, buf, r, clockTag); err != nil {
					return nil, err
				}
				t1 := c.Wtime()
				if rtt := t1 - t0; rtt < best {
					best, off = rtt, buf[0]-(t0+t1)/2
				}
			}
			if err := mpi.SendFloat64s(c, []float64{off}, r, clockTag); err != nil {
				return nil, err
			}
		case r:
			for i := 0; i < clockPingPongs; i++ {
				if _, err := mpi.RecvFloat64s(c, buf, 0, clockTag); err != nil {
					return nil, err
				}
				if err := mpi.SendFloat64s(c, []float64{c.Wtime()}, 0, clockTag); err != nil {
					return nil, err
				}
			}
			if _, err := mpi.RecvFloat64s(c, buf, 0, clockTag); err != nil {
				return nil, err
			}
			sc.offset = buf[0]
		}
	}
	// Size the guard from how long a broadcast of the start time takes.
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

func (sc *syncClock) now() float64 { return sc.wtime() - sc.offset }

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
