// Package patterns holds commcost's communication patterns, one file each,
// written against mpi.Comm, and the repetition harness they share (this
// file). The patterns, by paper (../shared/papers):
//
//   - pingpong.go, bandwidth.go: OSU-style latency and bandwidth;
//   - kkaccess.go, kaccess.go (engine in access.go): the k-k-access
//     (Definition 2) and the k-access with receive hot spot and asynchrony
//     (section 5) of paper 000;
//   - roundtrip.go, alltoall.go, pairwise.go, rowcontention.go: the
//     measurement patterns of the hyperbolic model, paper 001 section 3;
//   - prtt.go: netgauge's parametrised round trips for LogGP;
//   - permutations.go: the random permutations of paper 002, Table 1;
//   - aggregate.go: the aggregate operations of paper 003, through MPI's
//     collectives and through the algorithms of its cost table.
//
// The harness applies the timing rules of MEASURE.md:
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
//     as min/avg/max across the ranks that take part.
//
// Patterns that also count their traffic report it per rank and repetition
// in Counts and reduce it over ranks with CountersOf; Result carries both
// next to the Measurement.
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

// Defaults returns r with every zero field replaced by its documented
// default (the values every measurement loop uses).
func (r Reps) Defaults() Reps { return r.withDefaults() }

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
// seconds (0 for ranks that do not take part). The duration is measured from
// the start of the call: with SyncWindow the rank's end on the synchronised
// clock is its start plus this duration, so work a Rep does after taking its
// time (validation, preparing the next repetition) is not counted. A pattern
// that times a batch and reports a per-operation time therefore returns the
// batch time and scales the Measurement afterwards (Measurement.Scaled).
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
		_, _, err := oneRep(c, clock, rep)
		if err := collectiveFailure(c, err); err != nil {
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
		mine, late, repErr := oneRep(c, clock, rep)
		if mine > 0 { // the repetitions this rank took part in
			own = append(own, mine)
		}
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
		failed := 0.0
		if repErr != nil {
			failed = 1
		}
		in := []float64{contrib, c.Wtime() - start, lateFlag, failed}
		out := make([]float64, len(in))
		if err := c.AllreduceFloat64s(in, out, mpi.OpMax); err != nil {
			return Measurement{}, errors.Join(repErr, err)
		}
		if repErr != nil {
			return Measurement{}, repErr
		}
		if out[3] > 0 {
			return Measurement{}, ErrPeerFailed
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
	// Ranks' spread: every rank's median own time over the repetitions it
	// took part in (Rep returned > 0). A rank that never took part has
	// median 0 and is left out, so idle ranks do not pull the minimum and
	// average to zero.
	med := []float64{median(own)}
	all := make([]float64, c.Size())
	if err := mpi.AllgatherFloat64s(c, med, all); err != nil {
		return Measurement{}, err
	}
	m.RankMin, m.RankMax = math.Inf(1), math.Inf(-1)
	taking := 0
	for _, v := range all {
		if v == 0 {
			continue
		}
		taking++
		m.RankMin = math.Min(m.RankMin, v)
		m.RankMax = math.Max(m.RankMax, v)
		m.RankAvg += v
	}
	if taking == 0 {
		m.RankMin, m.RankMax = 0, 0
	} else {
		m.RankAvg /= float64(taking)
	}
	return m, nil
}

// Scaled returns m with every time multiplied by f: the samples, their
// summary and the ranks' spread. Patterns that time a batch of n operations
// per repetition report Scaled(1/n), the time of one operation.
func (m Measurement) Scaled(f float64) Measurement {
	out := m
	out.Samples = make([]float64, len(m.Samples))
	for i, v := range m.Samples {
		out.Samples[i] = v * f
	}
	out.Summary = results.Summarize(out.Samples)
	out.RankMin, out.RankAvg, out.RankMax = m.RankMin*f, m.RankAvg*f, m.RankMax*f
	return out
}

// ErrPeerFailed is what Measure returns on the ranks whose repetition went
// well when another rank's failed (a validation error, say): the failure is
// made collective at the end of every repetition, so no rank is left
// waiting in a collective for one that has given up. The failing rank
// returns its own error. (A rank that fails in the middle of point-to-point
// traffic can still leave its peers blocked; only the launcher ends that.)
var ErrPeerFailed = errors.New("another rank failed in the same repetition")

// collectiveFailure tells every rank whether any rank's err is non-nil: the
// failing ranks get their own error back, the others ErrPeerFailed.
func collectiveFailure(c mpi.Comm, err error) error {
	in := []int64{0}
	if err != nil {
		in[0] = 1
	}
	out := []int64{0}
	if aerr := c.AllreduceInt64s(in, out, mpi.OpMax); aerr != nil {
		return errors.Join(err, aerr)
	}
	switch {
	case err != nil:
		return err
	case out[0] > 0:
		return ErrPeerFailed
	}
	return nil
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
	begin := clock.now()
	d, err := rep()
	end := math.Inf(-1) // a rank that does not take part ends nothing
	if d > 0 {
		end = begin + d
	}
	return d, repTimes{start: start, end: end, late: late}, err
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

// RepsPerBudget is how many repetitions a pattern with a default iteration
// count aims to fit into Reps.MaxTime: CapIters shortens its repetitions
// when they would be longer than MaxTime/RepsPerBudget, so that a loaded
// or slow machine still gets enough repetitions for a median and the
// per-point time stays near MaxTime.
const RepsPerBudget = 20

// CapIters returns the iterations per repetition, at most iters and at
// least 1, such that a repetition takes about reps.MaxTime/RepsPerBudget
// at perIter seconds per iteration (this rank's warm-up estimate; <= 0 when
// the rank has none). It is collective: all ranks get the smallest cap, so
// the two sides of an exchange agree.
func CapIters(c mpi.Comm, reps Reps, iters int, perIter float64) (int, error) {
	mine := int64(iters)
	if perIter > 0 {
		target := reps.withDefaults().MaxTime / RepsPerBudget
		mine = int64(max(1, min(float64(iters), math.Floor(target/perIter))))
	}
	out := []int64{0}
	if err := c.AllreduceInt64s([]int64{mine}, out, mpi.OpMin); err != nil {
		return 0, err
	}
	return int(out[0]), nil
}

// WarmupBudgetShare is the share of Reps.MaxTime that the untimed warm-up
// iterations of a batch-timing pattern may take (warmUp).
const WarmupBudgetShare = 0.1

// warmUp runs up to total untimed iterations of loop on the ranks where on
// is true, in doubling chunks (1, 2, 4, ...), and stops early once the
// warm-up has taken WarmupBudgetShare of reps.MaxTime on any rank; the
// ranks agree on every chunk (collective), so both sides of an exchange run
// the same iterations. It returns this rank's pace in the last chunk,
// seconds per iteration (0 when it ran none): the estimate CapIters needs,
// taken once the first, slower iterations are over.
func warmUp(c mpi.Comm, reps Reps, total int, on bool, loop func(k int) (float64, error)) (float64, error) {
	budget := reps.withDefaults().MaxTime * WarmupBudgetShare
	pace, spent := 0.0, 0.0
	for done, chunk := 0, 1; done < total; chunk *= 2 {
		k := min(chunk, total-done)
		var err error
		if on {
			var t float64
			if t, err = loop(k); err == nil {
				pace, spent = t/float64(k), spent+t
			}
		}
		if err := collectiveFailure(c, err); err != nil {
			return 0, err
		}
		done += k
		out := []float64{0}
		if err := c.AllreduceFloat64s([]float64{spent}, out, mpi.OpMax); err != nil {
			return 0, err
		}
		if out[0] >= budget {
			break
		}
	}
	return pace, nil
}

// Counts is one rank's traffic: messages and bytes it sent and received.
// Patterns accumulate it over every repetition (warm-up included) and
// divide by the number of repetitions (PerRep), so it is the traffic of one
// repetition, averaged where the pattern draws a fresh random instance per
// repetition.
type Counts struct {
	MsgsSent, MsgsRecv   float64
	BytesSent, BytesRecv float64
}

// Sent counts one message of n bytes sent.
func (c *Counts) Sent(n int) { c.MsgsSent++; c.BytesSent += float64(n) }

// Recv counts one message of n bytes received.
func (c *Counts) Recv(n int) { c.MsgsRecv++; c.BytesRecv += float64(n) }

// PerRep divides the counts by the number of repetitions that made them.
func (c Counts) PerRep(reps int) Counts {
	if reps <= 0 {
		return Counts{}
	}
	f := 1 / float64(reps)
	return Counts{c.MsgsSent * f, c.MsgsRecv * f, c.BytesSent * f, c.BytesRecv * f}
}

// Counter names written by CountersOf into results.Record.Counters; all are
// per repetition. The _max values are those of the busiest rank (the h of an
// h-relation), the _total values sums over ranks.
const (
	CounterMsgsSentMax  = "msgs_sent_max"
	CounterMsgsRecvMax  = "msgs_recv_max"
	CounterBytesSentMax = "bytes_sent_max"
	CounterBytesRecvMax = "bytes_recv_max"
	CounterMsgsTotal    = "msgs_total"
	CounterBytesTotal   = "bytes_total"
	// CounterIters is the iterations (round trips, exchanges) per
	// repetition of the patterns that time a batch.
	CounterIters = "iters"
)

// CountersOf reduces every rank's per-repetition Counts to the counters of a
// record (see the Counter* names). It is collective; every rank gets the
// same map.
func CountersOf(c mpi.Comm, mine Counts) (map[string]float64, error) {
	in := []float64{mine.MsgsSent, mine.MsgsRecv, mine.BytesSent, mine.BytesRecv}
	mx := make([]float64, len(in))
	if err := c.AllreduceFloat64s(in, mx, mpi.OpMax); err != nil {
		return nil, err
	}
	sum := make([]float64, len(in))
	if err := c.AllreduceFloat64s(in, sum, mpi.OpSum); err != nil {
		return nil, err
	}
	return map[string]float64{
		CounterMsgsSentMax:  mx[0],
		CounterMsgsRecvMax:  mx[1],
		CounterBytesSentMax: mx[2],
		CounterBytesRecvMax: mx[3],
		CounterMsgsTotal:    sum[0],
		CounterBytesTotal:   sum[2],
	}, nil
}

// Result is what a multi-rank pattern returns: the Measurement, this rank's
// traffic per repetition, and the counters reduced over ranks (with any
// pattern-specific entries) for the record.
type Result struct {
	Measurement
	Mine     Counts
	Counters map[string]float64
}

// Record is Measurement.Record with the counters attached.
func (r Result) Record(bench string, params results.Params, ranks int, meta results.Meta) results.Record {
	rec := r.Measurement.Record(bench, params, ranks, meta)
	if len(r.Counters) > 0 {
		rec.Counters = make(map[string]float64, len(r.Counters))
		for k, v := range r.Counters {
			rec.Counters[k] = v
		}
	}
	return rec
}

// finish builds a Result: counts accumulated over reps repetitions become
// per-repetition counts, reduced over ranks, with extra counters added.
func finish(c mpi.Comm, m Measurement, total Counts, reps int, extra map[string]float64) (Result, error) {
	mine := total.PerRep(reps)
	ctr, err := CountersOf(c, mine)
	if err != nil {
		return Result{}, err
	}
	for k, v := range extra {
		ctr[k] = v
	}
	return Result{Measurement: m, Mine: mine, Counters: ctr}, nil
}
