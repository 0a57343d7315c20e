package patterns

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchMultiBandwidth is the bench name of multi-pair bandwidth and
// message rate records: params bytes, window, pairs and iters, unit B/s.
const BenchMultiBandwidth = "mbwmr"

// Derived values of multi-pair records: OSU's figures (rank 0's mean
// time, as OSU times rank 0 alone) and the message rate.
const (
	DerivedRate    = "msg_rate"       // messages per second at the median repetition
	DerivedOSUBw   = "osu_bw_B_per_s" // OSU's bandwidth: the volume over rank 0's mean repetition
	DerivedOSURate = "osu_msg_rate"   // OSU's message rate, messages per second: the messages over rank 0's mean repetition
	mbwTag         = 4
)

// MultiBandwidth configures OSU's multi-pair bandwidth and message rate
// benchmark (osu_mbw_mr.c): rank i < Pairs sends to rank i + Pairs, each
// pair as osu_bw (a window of Window non-blocking sends of Bytes, then a
// 4-byte ack), all pairs at once; the other ranks wait. A repetition is a
// barrier and Iters windows per pair (1 by default: OSU's barrier before
// every window). The sample is the maximum over the ranks' times, and the
// repetition's aggregate bandwidth Bytes Window Pairs Iters / time; OSU's
// figures, from rank 0's mean time, are derived.
type MultiBandwidth struct {
	Bytes    int
	Window   int // 0 = OSUWindow (64)
	Pairs    int // 0 = ranks/2
	Iters    int // windows per repetition; 0 means 1
	OSU      bool
	Validate bool
	Reps     Reps
}

func (mb MultiBandwidth) window() int {
	if mb.Window <= 0 {
		return OSUWindow
	}
	return mb.Window
}

func (mb MultiBandwidth) pairs(p int) int {
	if mb.Pairs <= 0 {
		return p / 2
	}
	return mb.Pairs
}

func (mb MultiBandwidth) iters() int { return max(mb.Iters, 1) }

// osuBwReps are osu_mbw_mr's repetitions at bytes: its skip windows
// untimed, then exactly its windows, one per repetition.
func osuBwReps(bytes int, r Reps) Reps {
	r.Warmup, r.MinReps, r.MaxReps, r.MaxTime = osuBandwidth.skip(bytes), osuBandwidth.full(bytes), osuBandwidth.full(bytes), math.MaxFloat64
	return r
}

// Messages is the messages one repetition sends over all pairs.
func (mb MultiBandwidth) Messages(p int) float64 {
	return float64(mb.window()) * float64(mb.pairs(p)) * float64(mb.iters())
}

// checkOSUPairs refuses a pair count the ranks cannot hold.
func checkOSUPairs(what string, pairs, p int) error {
	if p < 2 || pairs < 1 || pairs > p/2 {
		return fmt.Errorf("%s: %d pairs on %d ranks: need 1 <= pairs <= ranks/2", what, pairs, p)
	}
	return nil
}

// pairOf is rank me's partner and side among pairs pairs (i with i +
// pairs), mpi.NoPeer for a rank outside them.
func pairOf(me, pairs int) (peer int, first bool) {
	switch {
	case me < pairs:
		return me + pairs, true
	case me < 2*pairs:
		return me - pairs, false
	}
	return mpi.NoPeer, false
}

// Run measures the pairs' bandwidth (collective).
func (mb MultiBandwidth) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	pairs := mb.pairs(p)
	if err := checkOSUPairs("mbwmr", pairs, p); err != nil {
		return Measurement{}, err
	}
	window, iters := mb.window(), mb.iters()
	buf := make([]byte, mb.Bytes)
	touch(buf)
	peer, sender := pairOf(c.Rank(), pairs)
	batch := SerialBatch(c, func() (float64, error) {
		if peer == mpi.NoPeer {
			return 0, nil
		}
		return goBandwidth(c, buf, peer, window, iters, sender)
	})
	if bk, ok := c.(mpi.BatchKernels); ok {
		batch = func(b mpi.Batch) error { return bk.BandwidthBatch(b, buf, peer, mbwTag, window, iters, sender) }
	}
	if mb.Validate {
		batch = checked(batch, func() { prepareCheck(buf, sender, mb.Bytes) }, func() error {
			if sender || peer == mpi.NoPeer {
				return nil
			}
			return checkPattern(buf, mb.Bytes, "mbwmr")
		})
	}
	reps := mb.Reps
	if mb.OSU {
		reps = osuBwReps(mb.Bytes, reps)
	}
	reps.Reduction = ReduceMax
	return MeasureBatch(c, reps, mb.Validate, batch)
}

// Params are the record parameters.
func (mb MultiBandwidth) Params(p int) results.Params {
	return results.Params{"bytes": mb.Bytes, "window": mb.window(), "pairs": mb.pairs(p), "iters": mb.iters()}
}

// Bench is the bench name of the records.
func (MultiBandwidth) Bench() string { return BenchMultiBandwidth }

// Record is the aggregate bandwidth of every repetition in B/s, with the
// message rate at the median and OSU's figures derived.
func (mb MultiBandwidth) Record(m Measurement, meta results.Meta) results.Record {
	p := m.CommSize
	msgs := mb.Messages(p)
	volume := msgs * float64(mb.Bytes)
	rec := bandwidthRecord(m, BenchMultiBandwidth, mb.Params(p), volume, meta)
	// The ranks' spread in B/s: the volume over each rank's median time
	// (the slowest rank is the minimum).
	if m.RankMin > 0 {
		rec.RankMin, rec.RankAvg, rec.RankMax = volume/m.RankMax, volume/m.RankAvg, volume/m.RankMin
	}
	rec.Derived[DerivedRate] = msgs / m.Summary.Median
	if len(m.OwnMeans) > 0 && m.OwnMeans[0] > 0 {
		rec.Derived[DerivedOSUBw] = msgs * float64(mb.Bytes) / m.OwnMeans[0]
		rec.Derived[DerivedOSURate] = msgs / m.OwnMeans[0]
	}
	return rec
}

// Demand of the multi-pair test: one buffer, a window in flight, iters
// windows per repetition.
func (mb MultiBandwidth) Demand(int) Demand {
	w, n, it := float64(mb.window()), float64(mb.Bytes), float64(mb.iters())
	d := Demand{
		BufferBytes: int64(mb.Bytes), MemParam: "bytes", InFlightBytes: int64(mb.window()) * int64(mb.Bytes),
		RepMessages: it * (w + 1), RepBytes: it * w * n, RepParam: "--iters or --window",
	}
	if mb.Validate {
		d.BufferBytes *= 2
	}
	return d
}

// MultiBandwidthSweep is the sweep of 'commcost mbwmr'.
type MultiBandwidthSweep struct {
	RepFlags
	Iters
	RepWarmup
	Sizes  opts.Sizes `flag:"sizes" default:"1:4M" param:"bytes" usage:"message sizes: LO:HI doubling (1:4M) or a list (8,1K,1M); K = 1024"`
	Window int        `flag:"window" default:"64" usage:"messages in flight per window"`
	Pairs  int        `flag:"pairs" usage:"pairs of ranks, rank i sending to i+pairs (default ranks/2)"`
	OSU    bool       `flag:"osu" usage:"OSU 6.1's repetition counts: 100 windows after 10 untimed up to 8K, 20 after 2 above, one per repetition"`
	Set    opts.Given
}

func init() {
	Register(Def{Name: "mbwmr", Summary: "OSU-style multi-pair bandwidth and message rate: rank i -> i+pairs, windows of 64",
		New:   func() Sweep { return new(MultiBandwidthSweep) },
		Usage: map[string]string{"iters": "windows per pair back to back per timed repetition (default 1: a barrier before every window, as OSU)"}})
}

// Validate checks the sweep's settings.
func (s *MultiBandwidthSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, func() error { return checkOSUColl(s.OSU, s.Set) },
		func() error { return CheckValues("Window", BenchMultiBandwidth, "window", []int{s.Window}) },
		func() error { return CheckValues("Sizes", BenchMultiBandwidth, "bytes", s.Sizes) },
		func() error {
			if s.Set.Has("Pairs") && s.Pairs < 1 {
				return opts.Field("Pairs", s.Pairs, "must be positive (an integer >= 1)")
			}
			return nil
		})
}

// Plan lists one test per size; the pairs must fit the ranks.
func (s *MultiBandwidthSweep) Plan(p int) ([]Pattern, error) {
	if err := AtLeastRanks("mbwmr", 2, p, ""); err != nil {
		return nil, err
	}
	if s.Pairs > p/2 {
		return nil, opts.Field("Pairs", s.Pairs, "more pairs than ranks/2 = %d", p/2)
	}
	reps := s.RepWarmup.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, n := range s.Sizes {
		out = append(out, MultiBandwidth{Bytes: n, Window: s.Window, Pairs: s.Pairs, Iters: s.IterCount(), OSU: s.OSU, Validate: s.Verify, Reps: reps})
	}
	return out, nil
}
