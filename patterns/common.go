// Package patterns holds commcost's communication patterns, one file each,
// written against mpi.Comm, and the repetition harness they share (this
// file), which applies the timing rules of MEASURE.md:
//
//   - untimed warm-up repetitions first;
//   - adaptive repetitions: repeat until the nonparametric 95% confidence
//     interval of the median is within RelCI of the median, or a cap on
//     repetitions or time is hit; the record says which stopped it;
//   - a repetition's time is the maximum over ranks of the per-rank time
//     (AggMax), or the initiator's time for two-party patterns measured from
//     one side as OSU does (AggRoot), or, with the synchronised window start,
//     the latest end minus the common start on a synchronised clock;
//   - every repetition's time is kept; ranks' per-rank medians are reported
//     as min/avg/max across ranks.
//
// Units: seconds and bytes.
package patterns

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

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

// Aggregate selects how one repetition's time is formed from ranks' times.
type Aggregate int

const (
	AggMax  Aggregate = iota // maximum over ranks of each rank's time
	AggRoot                  // rank 0's time (the initiator of a two-party pattern)
)

// Reps configures repetitions. The zero value means the defaults below.
type Reps struct {
	Warmup  int     // untimed repetitions before timing; default 2, negative for none
	MinReps int     // at least this many timed repetitions; default 10
	MaxReps int     // at most this many; default 1000
	MaxTime float64 // stop after this many seconds of timed repetitions (once 3 are done); default 10
	// RelCI is the target half-width of the median's 95% CI relative to the
	// median; default 0.03. Zero after defaults means never stop early.
	RelCI     float64
	Sync      Sync
	Aggregate Aggregate
}

// Defaults for Reps.
const (
	DefaultWarmupReps = 2
	DefaultMinReps    = 10
	DefaultMaxReps    = 1000
	DefaultMaxTimeSec = 10.0
	DefaultRelCI      = 0.03
)

func (r Reps) withDefaults() Reps {
	if r.Warmup == 0 {
		r.Warmup = DefaultWarmupReps
	}
	if r.Warmup < 0 {
		r.Warmup = 0
	}
	if r.MinReps <= 0 {
		r.MinReps = DefaultMinReps
	}
	if r.MaxReps <= 0 {
		r.MaxReps = DefaultMaxReps
	}
	if r.MaxReps < r.MinReps {
		r.MaxReps = r.MinReps
	}
	if r.MaxTime <= 0 {
		r.MaxTime = DefaultMaxTimeSec
	}
	if r.RelCI == 0 {
		r.RelCI = DefaultRelCI
	}
	return r
}

// Validate reports a configuration no run could satisfy.
func (r Reps) Validate() error {
	if r.MinReps < 0 || r.MaxReps < 0 {
		return errors.New("repetition counts must be >= 1")
	}
	if r.MaxTime < 0 || math.IsNaN(r.MaxTime) {
		return errors.New("max time must be > 0")
	}
	if r.RelCI < 0 || r.RelCI >= 1 || math.IsNaN(r.RelCI) {
		return errors.New("relative CI target must be in (0, 1)")
	}
	return nil
}

// Stop reasons recorded in results.Record.Stop.
const (
	StopRelCI   = "rel-ci"
	StopMaxReps = "max-reps"
	StopMaxTime = "max-time"
)

// Measurement is the outcome of Measure on every rank (identical on all).
type Measurement struct {
	Samples   []float64 // one per timed repetition, seconds, aggregated over ranks
	Summary   results.Summary
	RankMin   float64 // min over ranks of each rank's median own time
	RankAvg   float64
	RankMax   float64
	Stop      string
	Aggregate string // "max-over-ranks", "rank0", "window-latest-end"
	Late      int    // window sync: repetitions in which some rank started late
}

// Rep is one repetition on this rank; it returns this rank's duration in
// seconds (0 for ranks that do not take part).
type Rep func() (float64, error)

// Measure runs warm-up and timed repetitions of rep on every rank of c and
// summarises them. It is collective: every rank calls it with the same cfg,
// and all ranks return the same Measurement (the stopping rule is applied to
// values every rank has, so no rank decides alone).
func Measure(c mpi.Comm, cfg Reps, rep Rep) (Measurement, error) {
	cfg = cfg.withDefaults()
	var clock *syncClock
	if cfg.Sync == SyncWindow {
		var err error
		if clock, err = newSyncClock(c); err != nil {
			return Measurement{}, err
		}
	}
	for i := 0; i < cfg.Warmup; i++ {
		if _, _, err := oneRep(c, clock, rep); err != nil {
			return Measurement{}, err
		}
	}
	m := Measurement{Aggregate: "max-over-ranks"}
	switch {
	case clock != nil:
		m.Aggregate = "window-latest-end"
	case cfg.Aggregate == AggRoot:
		m.Aggregate = "rank0"
	}
	var own []float64
	start := c.Wtime()
	for {
		mine, late, err := oneRep(c, clock, rep)
		if err != nil {
			return Measurement{}, err
		}
		own = append(own, mine)
		contrib := mine
		if clock != nil {
			contrib = late.end
		} else if cfg.Aggregate == AggRoot && c.Rank() != 0 {
			contrib = math.Inf(-1)
		}
		lateFlag := 0.0
		if late.late {
			lateFlag = 1
		}
		in := []float64{contrib, c.Wtime() - start, lateFlag}
		out := make([]float64, 3)
		if err := c.AllreduceFloat64s(in, out, mpi.OpMax); err != nil {
			return Measurement{}, err
		}
		t := out[0]
		if clock != nil {
			t = out[0] - late.start
			if out[2] > 0 {
				m.Late++
				clock.widen()
			}
		}
		m.Samples = append(m.Samples, t)
		n := len(m.Samples)
		if n >= cfg.MinReps {
			if results.RelCIHalfWidth(results.Summarize(m.Samples)) <= cfg.RelCI {
				m.Stop = StopRelCI
				break
			}
		}
		if n >= cfg.MaxReps {
			m.Stop = StopMaxReps
			break
		}
		if out[1] >= cfg.MaxTime && n >= 3 {
			m.Stop = StopMaxTime
			break
		}
	}
	m.Summary = results.Summarize(m.Samples)
	// Ranks' spread: every rank's median own time.
	med := []float64{median(own)}
	all := make([]float64, c.Size())
	if err := mpi.AllgatherFloat64s(c, med, all); err != nil {
		return Measurement{}, err
	}
	m.RankMin, m.RankMax = math.Inf(1), math.Inf(-1)
	for _, v := range all {
		m.RankMin = math.Min(m.RankMin, v)
		m.RankMax = math.Max(m.RankMax, v)
		m.RankAvg += v / float64(len(all))
	}
	return m, nil
}

type repTimes struct {
	start, end float64 // synchronised clock, window mode only
	late       bool
}

// oneRep synchronises and runs one repetition.
func oneRep(c mpi.Comm, clock *syncClock, rep Rep) (float64, repTimes, error) {
	if clock == nil {
		if err := c.Barrier(); err != nil {
			return 0, repTimes{}, err
		}
		d, err := rep()
		return d, repTimes{}, err
	}
	start, err := clock.agreeStart(c)
	if err != nil {
		return 0, repTimes{}, err
	}
	late := clock.waitUntil(start)
	d, err := rep()
	return d, repTimes{start: start, end: clock.now(), late: late}, err
}

// Record turns a measurement into a record. Rank 0 normally writes it.
func (m Measurement) Record(bench string, params results.Params, ranks int, meta results.Meta) results.Record {
	return results.Record{
		Schema:    results.SchemaVersion,
		Bench:     bench,
		Params:    params,
		Ranks:     ranks,
		Unit:      "s",
		Summary:   m.Summary,
		RankMin:   m.RankMin,
		RankAvg:   m.RankAvg,
		RankMax:   m.RankMax,
		Aggregate: m.Aggregate,
		Stop:      m.Stop,
		Samples:   append([]float64(nil), m.Samples...),
		Meta:      meta,
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
