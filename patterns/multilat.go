package patterns

import (
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchMultiLatency is the bench name of multi-pair latency records:
// params bytes, pairs and iters, unit s.
const BenchMultiLatency = "multilat"

// DerivedOSULatSec is OSU's latency of a multi-pair record: rank 0's mean
// half round trip.
const DerivedOSULatSec = "osu_latency_s"

const multiLatTag = 5

// MultiLatency configures OSU's multi-pair latency benchmark
// (osu_multi_lat.c): each rank i below p/2 ping-pongs, blocking, with
// rank i + p/2, all pairs at once (an odd last rank waits). A repetition is a
// barrier and Iters round trips (1 by default: OSU's barrier before every
// round trip); the sample is the maximum over ranks of the time, halved
// per round trip. OSU's latency, rank 0's mean half round trip, is
// derived.
type MultiLatency struct {
	Bytes    int
	Iters    int // round trips per repetition; 0 means 1
	OSU      bool
	Validate bool
	Reps     Reps
}

func (ml MultiLatency) iters() int { return max(ml.Iters, 1) }

// osuLatReps are osu_multi_lat's repetitions at bytes: its skip round trips
// untimed, then exactly its iterations, one per repetition.
func osuLatReps(bytes int, r Reps) Reps {
	r.Warmup, r.MinReps, r.MaxReps, r.MaxTime = osuLatency.skip(bytes), osuLatency.full(bytes), osuLatency.full(bytes), math.MaxFloat64
	return r
}

// Run measures the pairs' latency (collective).
func (ml MultiLatency) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := checkOSUPairs("multilat", p/2, p); err != nil {
		return Measurement{}, err
	}
	iters := ml.iters()
	send, recv := make([]byte, ml.Bytes), make([]byte, ml.Bytes)
	touch(send)
	touch(recv)
	peer, initiator := pairOf(c.Rank(), p/2)
	batch := SerialBatch(c, func() (float64, error) {
		if peer == mpi.NoPeer {
			return 0, nil
		}
		return pingPongLoop(c, send, recv, peer, multiLatTag, iters, initiator)
	})
	if bk, ok := c.(mpi.BatchKernels); ok {
		batch = func(b mpi.Batch) error {
			return bk.PingPongBatch(b, send, recv, peer, multiLatTag, iters, initiator)
		}
	}
	if ml.Validate {
		batch = checked(batch, func() {
			prepareCheck(send, true, ml.Bytes)
			prepareCheck(recv, false, ml.Bytes)
		}, func() error {
			if peer == mpi.NoPeer {
				return nil
			}
			return checkPattern(recv, ml.Bytes, "multilat")
		})
	}
	reps := ml.Reps
	if ml.OSU {
		reps = osuLatReps(ml.Bytes, reps)
	}
	reps.Reduction = ReduceMax
	m, err := MeasureBatch(c, reps, ml.Validate, batch)
	if err != nil {
		return Measurement{}, err
	}
	return m.Scaled(1 / float64(2*iters)), nil
}

// Params are the record parameters.
func (ml MultiLatency) Params(p int) results.Params {
	return results.Params{"bytes": ml.Bytes, "pairs": p / 2, "iters": ml.iters()}
}

// Bench is the bench name of the records.
func (MultiLatency) Bench() string { return BenchMultiLatency }

// Record is the latency record: half round trips, OSU's derived.
func (ml MultiLatency) Record(m Measurement, meta results.Meta) results.Record {
	rec := m.Record(BenchMultiLatency, ml.Params(m.CommSize), m.CommSize, meta)
	rec.Derived = map[string]float64{}
	if len(m.OwnMeans) > 0 {
		rec.Derived[DerivedOSULatSec] = m.OwnMeans[0]
	}
	return rec
}

// Demand of the multi-pair latency: as the ping-pong.
func (ml MultiLatency) Demand(int) Demand {
	d := twoSided(ml.Bytes, ml.iters(), 0, 2, ml.Validate)
	if ml.OSU {
		skip := float64(osuLatency.skip(ml.Bytes))
		d.WarmupMessages, d.WarmupBytes = 2*skip, 2*skip*float64(ml.Bytes)
	}
	return d
}

// MultiLatencySweep is the sweep of 'commcost multilat'.
type MultiLatencySweep struct {
	RepFlags
	Iters
	RepWarmup
	Sizes opts.Sizes `flag:"sizes" default:"0:4M" param:"bytes" usage:"message sizes: LO:HI doubling (0:4M, 0 first) or a list (8,1K,1M); K = 1024"`
	OSU   bool       `flag:"osu" usage:"OSU 6.1's repetition counts: 10000 round trips after 100 untimed up to 8K, 1000 after 10 above, one per repetition"`
	Set   opts.Given
}

func init() {
	Register(Def{Name: "multilat", Summary: "OSU-style multi-pair latency: rank i <-> i+p/2 ping-pongs at once",
		New:   func() Sweep { return new(MultiLatencySweep) },
		Usage: map[string]string{"iters": "round trips back to back per timed repetition (default 1: a barrier before every round trip, as OSU)"}})
}

// Validate checks the sweep's settings.
func (s *MultiLatencySweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, func() error { return checkOSUColl(s.OSU, s.Set) },
		func() error { return CheckValues("Sizes", BenchMultiLatency, "bytes", s.Sizes) })
}

// Plan lists one test per size; it needs a pair.
func (s *MultiLatencySweep) Plan(p int) ([]Pattern, error) {
	if err := AtLeastRanks("multilat", 2, p, ""); err != nil {
		return nil, err
	}
	reps := s.RepWarmup.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, n := range s.Sizes {
		out = append(out, MultiLatency{Bytes: n, Iters: s.IterCount(), OSU: s.OSU, Validate: s.Verify, Reps: reps})
	}
	return out, nil
}
