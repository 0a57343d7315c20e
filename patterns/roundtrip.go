package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchRoundTrip is the bench name of round-trip records: param bytes, the
// full RTT per repetition, ranks 2.
const BenchRoundTrip = "roundtrip"

// RoundTrip configures the first pattern of paper 001 (Stoica, Sultan,
// Keyes, file 001_f25f9102f0478dfd.txt), section 3.1: the round-trip time
// RTT(x) of an x-byte message between two nodes, from which eq. 3 gives
// the end-to-end block of the hyperbolic model,
//
//	a = RTT(0)/2 = 2 a_w + a_c,   b = lim RTT(x)/(2x) = max{b_w, b_c}.
//
// Rank 0 and Peer run blocking round trips (a ping-pong); each sample is
// one repetition's elapsed time on rank 0 divided by the round trips in it:
// the full RTT(x), not half of it (that is pingpong). Other ranks wait.
type RoundTrip struct {
	Bytes int
	// Peer is the rank that answers rank 0; 0 means the last rank, which
	// with the usual by-slot placement is on another host when there are
	// several.
	Peer     int
	Iters    int // round trips per repetition; 0 = OSU-derived (Iterations), capped by CapIters
	Warmup   int // untimed round trips; 0 = OSU default, negative = none
	Validate bool
	Reps     Reps
}

// Tags of the ping-pong based patterns of this file.
const roundTripTag = 310

// peer returns the answering rank on p ranks.
func (rt RoundTrip) peer(p int) int {
	if rt.Peer == 0 {
		return p - 1
	}
	return rt.Peer
}

// Check reports a configuration that cannot run on p ranks.
func (rt RoundTrip) Check(p int) error {
	if p < 2 {
		return fmt.Errorf("roundtrip needs at least 2 ranks, got %d", p)
	}
	if q := rt.peer(p); q < 1 || q >= p {
		return fmt.Errorf("%w: peer rank %d, but ranks are 0..%d (and the peer is not rank 0)", ErrTooManyTargets, q, p-1)
	}
	if rt.Bytes < 0 {
		return fmt.Errorf("bytes = %d: must be >= 0", rt.Bytes)
	}
	return rt.Reps.Validate()
}

// Run measures RTT(Bytes) (collective over c).
func (rt RoundTrip) Run(c mpi.Comm) (Measurement, error) {
	if err := rt.Check(c.Size()); err != nil {
		return Measurement{}, err
	}
	q := rt.peer(c.Size())
	pair := func(r int) (int, bool, bool) {
		switch r {
		case 0:
			return q, true, true
		case q:
			return 0, false, true
		}
		return 0, false, false
	}
	iters, warmup := Iterations(rt.Bytes, rt.Iters, rt.Warmup)
	res, iters, err := pingPongPairs(c, rt.Bytes, iters, warmup, rt.Iters <= 0, pair, rt.Validate, rt.Reps, ReduceRank0)
	if err != nil {
		return Measurement{}, err
	}
	res = res.Scaled(1 / float64(iters))
	return res, nil
}

// Params are the record parameters: the message size x.
func (rt RoundTrip) Params(int) results.Params { return results.Params{"bytes": rt.Bytes} }

// Bench is the bench name of the records.
func (RoundTrip) Bench() string { return BenchRoundTrip }

// Record is the round-trip record of m: RTT(x) on rank 0, two ranks.
func (rt RoundTrip) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchRoundTrip, rt.Params(m.CommSize), 2, meta)
}

// pairFunc tells rank r its partner, whether it sends first, and whether it
// takes part at all.
type pairFunc func(r int) (peer int, initiator, ok bool)

// pingPongPairs runs, on every pair pair() defines, iters blocking round
// trips of n bytes per repetition, all pairs at the same time; a rank's time
// is its elapsed time for the round trips (not yet divided). The warm-up
// is bounded in time (warmUp); with capped (the caller chose no iteration
// count) the warm-up's pace caps iters (CapIters). It returns the round trips per repetition it used. The inner
// loop runs in the backend's language when it implements mpi.Kernels.
func pingPongPairs(c mpi.Comm, n, iters, warmup int, capped bool, pair pairFunc, validate bool, reps Reps, red Reduction) (Measurement, int, error) {
	peer, initiator, on := pair(c.Rank())
	send, recv := make([]byte, n), make([]byte, n)
	touch(send)
	touch(recv)
	loop := func(k int) (float64, error) {
		return pingPongLoop(c, send, recv, peer, roundTripTag, k, initiator)
	}
	if err := c.Barrier(); err != nil {
		return Measurement{}, 0, err
	}
	perIter, err := warmUp(c, reps, warmup, on, loop)
	if err != nil {
		return Measurement{}, 0, err
	}
	if capped {
		if iters, err = CapIters(c, reps, iters, perIter); err != nil {
			return Measurement{}, 0, err
		}
	}
	var counts Counts
	calls := 0
	cfg := reps
	cfg.Reduction = red
	batch := SerialBatch(c, func() (float64, error) {
		if !on {
			return 0, nil
		}
		return loop(iters)
	})
	if bk, ok := c.(mpi.BatchKernels); ok {
		kpeer := peer
		if !on {
			kpeer = mpi.NoPeer
		}
		batch = func(b mpi.Batch) error {
			return bk.PingPongBatch(b, send, recv, kpeer, roundTripTag, iters, initiator)
		}
	}
	if validate {
		// Each side received the other's pattern.
		batch = checked(batch, func() {
			prepareCheck(send, true, n)
			prepareCheck(recv, false, n)
		}, func() error {
			if !on {
				return nil
			}
			return checkPattern(recv, n, fmt.Sprintf("round trip %d<->%d", c.Rank(), peer))
		})
	}
	m, err := MeasureBatch(c, cfg, validate, func(b mpi.Batch) error {
		if err := batch(b); err != nil {
			return err
		}
		if on {
			calls += b.Reps()
			counts.add(iters*b.Reps(), n, iters*b.Reps(), n)
		}
		return nil
	})
	if err != nil {
		return Measurement{}, 0, err
	}
	res, err := finish(c, m, counts, max(calls, 1), map[string]float64{CounterIters: float64(iters)})
	return res, iters, err
}

// RoundTripSweep is the sweep of 'commcost roundtrip': RTT(x) between rank
// 0 and a peer, per size (paper 001, section 3.1).
type RoundTripSweep struct {
	RepFlags
	Loop
	Sizes opts.Sizes `flag:"sizes" default:"0:1M" param:"bytes" usage:"message sizes x: LO:HI doubling (0:1M) or a list (0,1K,1M); K = 1024"`
	Peer  int        `flag:"peer" usage:"rank that answers rank 0 (default: the last rank, on another host under by-slot placement)"`
	Set   opts.Given
}

func init() {
	Register(Def{Name: "roundtrip", Summary: "paper 001 sec. 3.1: full round-trip time RTT(x) between rank 0 and a peer",
		New: func() Sweep { return new(RoundTripSweep) }, Defaults: map[string]string{"max-time": "1"},
		Usage: map[string]string{"iters": "round trips per timed repetition (default: OSU counts / 10: 1000 up to 8K, 100 above)"}})
}

// Validate checks the sweep's settings.
func (s *RoundTripSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check,
		func() error { return CheckValues("Sizes", BenchRoundTrip, "bytes", s.Sizes) },
		func() error {
			if s.Set.Has("Peer") && s.Peer < 1 {
				return opts.Field("Peer", s.Peer, "the peer must be a rank >= 1 (rank 0 starts the round trips)")
			}
			return nil
		})
}

// Plan lists one round trip per size.
func (s *RoundTripSweep) Plan(p int) ([]Pattern, error) {
	if p < 2 {
		return nil, opts.Badf("roundtrip needs at least 2 ranks, got %d", p)
	}
	if s.Peer >= p {
		return nil, opts.Field("Peer", s.Peer, "more ranks asked for than exist (ranks are 0..%d)", p-1)
	}
	var out []Pattern
	for _, x := range s.Sizes {
		out = append(out, RoundTrip{Bytes: x, Peer: s.Peer, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: s.Reps()})
	}
	return out, nil
}
