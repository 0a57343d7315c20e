package patterns

import (
	"errors"
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The repetition harness (docs/MEASURE.md "Repetitions and statistics"): Reps
// configures it, Measure runs it, Measurement is what it returns.

// Reduction selects how one repetition's time is formed from the ranks'
// times under SyncBarrier: the rank reduction a record names in its
// "aggregate" field (results.Reduction*).
type Reduction int

const (
	ReduceMax   Reduction = iota // maximum over ranks of each rank's time (results.ReductionMaxOverRanks)
	ReduceRank0                  // rank 0's time, the initiator of a two-party pattern (results.ReductionRank0)
)

// Reps configures repetitions. The zero value means the defaults below.
type Reps struct {
	Warmup  int     // untimed repetitions before timing; default 2, negative for none
	MinReps int     // at least this many timed repetitions; default 10
	MaxReps int     // at most this many; default 1000
	MaxTime float64 // stop after this many seconds of timed repetitions (once 3 are done); default 10
	// RelCI is the target half-width of the median's 95% CI relative to the
	// median; default 0.03. Zero after defaults means never stop early.
	RelCI float64
	Sync  Sync
	// Reduction is the rank reduction of a repetition under SyncBarrier
	// (SyncWindow always takes the latest end on the synchronised clock).
	Reduction Reduction
	// ResyncSec is, under SyncWindow, the time between re-measurements of
	// the clock offsets; the synchronised clock fits a linear drift to
	// them (syncClock). Default 1 s; negative for the offset measured once
	// at the start and never again (no drift model).
	ResyncSec float64
}

// Defaults for Reps.
const (
	DefaultWarmupReps = 2
	DefaultMinReps    = 10
	DefaultMaxReps    = 1000
	DefaultMaxTimeSec = 10.0
	DefaultRelCI      = 0.03
	DefaultResyncSec  = 1.0
	// MaxLateFactor bounds the repetitions redone after a late window
	// start: more than MaxLateFactor x MaxReps (at least maxLateMin) ends
	// the measurement with ErrLateStarts.
	MaxLateFactor = 1
	maxLateMin    = 100
)

// CounterLateRedone is the record counter of the repetitions redone after
// a late window start (Measurement.Late).
const CounterLateRedone = "late_redone"

// ErrLateStarts is returned by Measure under SyncWindow when repetitions
// keep starting late on some rank (a clock that cannot be kept in step, a
// rank descheduled for longer than the start guard every time).
var ErrLateStarts = errors.New("window mode: too many repetitions started late on some rank")

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
	if r.ResyncSec == 0 {
		r.ResyncSec = DefaultResyncSec
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
	if math.IsNaN(r.ResyncSec) || math.IsInf(r.ResyncSec, 1) {
		return errors.New("resync interval must be a number of seconds (negative: never)")
	}
	return nil
}

// Measurement is what Measure and every pattern's Run return on every rank:
// the repetitions' times (reduced over ranks), their summary, the ranks'
// spread and how the repetitions went, and, for the patterns that count
// their traffic, that traffic. Everything but Mine is identical on all
// ranks. A pattern's Record method turns it into the pattern's record.
type Measurement struct {
	Samples []float64 // one per timed repetition, seconds, reduced over ranks
	Summary results.Summary
	RankMin float64 // min over ranks of each rank's median own time
	RankAvg float64
	RankMax float64
	// RankMean is the same spread of each rank's mean own time over the
	// timed repetitions: OSU's figure for a collective, the average over
	// ranks of each rank's mean latency, with its minimum and maximum.
	RankMean Spread
	// OwnMeans are every rank's mean own time, by rank (0 for a rank that
	// took no part): rank 0's is OSU's figure of a pattern OSU times on
	// rank 0 alone (osu_mbw_mr, osu_multi_lat).
	OwnMeans  []float64
	Stop      string // why repetitions stopped: a results.Stop* value
	Reduction string // how ranks' times became a sample: a results.Reduction* value
	// Late counts, under SyncWindow, the repetitions redone because some
	// rank reached the agreed start after it had passed (its sample would
	// include waiting for that rank, not the pattern); they are not in
	// Samples. Window-mode records carry it as the counter "late_redone".
	Late int
	// Resyncs counts the re-measurements of the clock offsets under
	// SyncWindow after the first.
	Resyncs  int
	CommSize int // ranks of the communicator measured on (c.Size())
	// Mine is this rank's traffic per repetition, and Counters the traffic
	// reduced over ranks (CountersOf) plus the pattern's own counters, for
	// the record; both are zero for patterns that do not count (pingpong,
	// bandwidth, plain Measure).
	Mine     Counts
	Counters map[string]float64
	// Extra are values a pattern's Run computed beside the samples (the
	// overlap of a non-blocking collective, from a second measurement),
	// for its Record's derived values; nil for most patterns.
	Extra map[string]float64
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
		if clock, err = newSyncClock(c, cfg.ResyncSec > 0); err != nil {
			return Measurement{}, err
		}
	}
	// Under the process's watchdog (watchdog.go): a point already begun
	// by the caller keeps its name; each repetition is progress.
	wd := Installed()
	defer wd.Begin("a measurement", measureBudget(cfg))()
	// The warm-up is bounded by MaxTime as the timed repetitions are, so
	// --max-time bounds every loop. Whether to go on is decided on the
	// maximum over ranks of the elapsed time, so that all ranks stop
	// after the same repetition.
	warmStart := c.Wtime()
	for i := 0; i < cfg.Warmup; i++ {
		_, _, err := oneRep(c, clock, rep)
		elapsed, err := collectiveFailureElapsed(c, err, c.Wtime()-warmStart)
		if err != nil {
			return Measurement{}, err
		}
		wd.Progress()
		if elapsed >= cfg.MaxTime {
			break
		}
	}
	m := Measurement{Reduction: results.ReductionMaxOverRanks, CommSize: c.Size()}
	switch {
	case clock != nil:
		m.Reduction = results.ReductionWindowLatestEnd
	case cfg.Reduction == ReduceRank0:
		m.Reduction = results.ReductionRank0
	}
	var own []float64
	start := c.Wtime()
	lastSync := 0.0 // seconds after start of the last clock measurement
	maxLate := max(MaxLateFactor*cfg.MaxReps, maxLateMin)
	for {
		mine, late, repErr := oneRep(c, clock, rep)
		contrib := mine
		if clock != nil {
			contrib = late.end
		} else if cfg.Reduction == ReduceRank0 && c.Rank() != 0 {
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
		wd.Progress()
		t := out[0]
		if clock != nil {
			// Re-measure the offsets every ResyncSec (decided on the
			// reduced elapsed time, the same on every rank, so the
			// collective resync is entered by all).
			if cfg.ResyncSec > 0 && out[1]-lastSync >= cfg.ResyncSec {
				if err := clock.resync(c); err != nil {
					return Measurement{}, err
				}
				lastSync = out[1]
				m.Resyncs++
			}
			t = out[0] - late.start
			if out[2] > 0 {
				// A late start is redone, not kept: the latest end would
				// include the late rank's delay. Widen the guard so the
				// next start leaves more room.
				m.Late++
				clock.widen()
				if m.Late > maxLate {
					return Measurement{}, fmt.Errorf("%w: %d redone, %d kept", ErrLateStarts, m.Late, len(m.Samples))
				}
				continue
			}
		}
		if mine > 0 { // the repetitions this rank took part in
			own = append(own, mine)
		}
		m.Samples = append(m.Samples, t)
		if m.Stop = cfg.stop(m.Samples, out[1]); m.Stop != "" {
			break
		}
	}
	m.Summary = results.Summarize(m.Samples)
	if err := m.rankSpread(c, own); err != nil {
		return Measurement{}, err
	}
	return m, nil
}

// Spread is the minimum, average and maximum of one value over the ranks
// that take part.
type Spread struct{ Min, Avg, Max float64 }

// spreadOf is the spread of vals over the ranks whose value is not 0.
func spreadOf(vals []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	taking := 0
	for _, v := range vals {
		if v == 0 {
			continue
		}
		taking++
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
		s.Avg += v
	}
	if taking == 0 {
		return Spread{}
	}
	s.Avg /= float64(taking)
	return s
}

// rankSpread sets the ranks' spreads: every rank's median and mean own
// time over the repetitions it took part in (own holds those, the times >
// 0). A rank that never took part has median 0 and is left out, so idle
// ranks do not pull the minimum and average to zero. It is collective.
func (m *Measurement) rankSpread(c mpi.Comm, own []float64) error {
	mine := []float64{0, 0} // a rank that never took part
	if len(own) > 0 {
		mine[0] = results.Median(own)
		for _, v := range own {
			mine[1] += v
		}
		mine[1] /= float64(len(own))
	}
	all := make([]float64, 2*c.Size())
	if err := mpi.AllgatherFloat64s(c, mine, all); err != nil {
		return err
	}
	med, mean := make([]float64, c.Size()), make([]float64, c.Size())
	for r := range med {
		med[r], mean[r] = all[2*r], all[2*r+1]
	}
	s := spreadOf(med)
	m.RankMin, m.RankAvg, m.RankMax = s.Min, s.Avg, s.Max
	m.RankMean, m.OwnMeans = spreadOf(mean), mean
	return nil
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
	out.RankMean = Spread{m.RankMean.Min * f, m.RankMean.Avg * f, m.RankMean.Max * f}
	out.OwnMeans = make([]float64, len(m.OwnMeans))
	for i, v := range m.OwnMeans {
		out.OwnMeans[i] = v * f
	}
	return out
}

// ErrPeerFailed is what Measure returns on the ranks whose repetition went
// well when another rank's failed (a validation error, say): the failure is
// made collective at the end of every repetition, so no rank is left
// waiting in a collective for one that has given up. The failing rank
// returns its own error. (A rank that fails in the middle of point-to-point
// traffic can still leave its peers blocked; only the launcher ends that.)
// It is mpi.ErrPeerFailed, which batch kernels return in the same case.
var ErrPeerFailed = mpi.ErrPeerFailed

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

// collectiveFailureElapsed is collectiveFailure that also returns the
// maximum over ranks of elapsed, in the same reduction.
func collectiveFailureElapsed(c mpi.Comm, err error, elapsed float64) (float64, error) {
	in := []float64{0, elapsed}
	if err != nil {
		in[0] = 1
	}
	out := []float64{0, 0}
	if aerr := c.AllreduceFloat64s(in, out, mpi.OpMax); aerr != nil {
		return 0, errors.Join(err, aerr)
	}
	switch {
	case err != nil:
		return 0, err
	case out[0] > 0:
		return 0, ErrPeerFailed
	}
	return out[1], nil
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

// Record turns a measurement into a record of bench at the point params on
// ranks ranks, with the counters attached. It is the generic form: the
// patterns' own Record methods call it with their bench and parameters, and
// measurements that are not a pattern of this package (emulate, permsched)
// name theirs. Rank 0 normally writes the record.
func (m Measurement) Record(bench string, params results.Params, ranks int, meta results.Meta) results.Record {
	rec := results.Record{
		Schema:    results.SchemaVersion,
		Bench:     bench,
		Params:    params,
		Ranks:     ranks,
		Unit:      results.UnitSeconds,
		Summary:   m.Summary,
		RankMin:   m.RankMin,
		RankAvg:   m.RankAvg,
		RankMax:   m.RankMax,
		Reduction: m.Reduction,
		Stop:      m.Stop,
		Samples:   append([]float64(nil), m.Samples...),
		Meta:      meta,
	}
	// Window-mode records always say how many starts were redone (0
	// included), so their columns do not depend on the machine's luck.
	window := m.Reduction == results.ReductionWindowLatestEnd
	if len(m.Counters) > 0 || window || m.Late > 0 {
		rec.Counters = make(map[string]float64, len(m.Counters)+1)
		for k, v := range m.Counters {
			rec.Counters[k] = v
		}
		if window || m.Late > 0 {
			rec.Counters[CounterLateRedone] = float64(m.Late)
		}
	}
	return rec
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

// TimeBoundStopsAfter is the number of repetitions (or all that were
// asked, if fewer) a time bound lets finish before it stops a loop whose
// count is fixed (the DSM experiments' runs): a median and its spread
// need a few.
const TimeBoundStopsAfter = 3

// PastTimeBound reports whether a loop that has done done of want
// repetitions in spent seconds (the maximum over ranks, so that every
// rank decides alike) stops under the bound maxTime (0: none).
func PastTimeBound(done, want int, spent, maxTime float64) bool {
	return maxTime > 0 && done >= min(TimeBoundStopsAfter, want) && spent >= maxTime
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

// stop is the stopping rule applied after every repetition (Measure) or
// batch (MeasureBatch), given the samples so far and the timed seconds
// elapsed: the reason to stop (a results.Stop* value), or "" to go on. The
// CI target counts only from MinReps on; MaxTime needs 3 samples, the
// fewest a median and its spread can be read from.
func (r Reps) stop(samples []float64, elapsed float64) string {
	n := len(samples)
	switch {
	case n >= r.MinReps && results.RelCIHalfWidth(results.Summarize(samples)) <= r.RelCI:
		return results.StopRelCI
	case n >= r.MaxReps:
		return results.StopMaxReps
	case elapsed >= r.MaxTime && n >= 3:
		return results.StopMaxTime
	}
	return ""
}
