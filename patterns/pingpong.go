package patterns

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// OSU Micro-Benchmarks iteration counts (osu_pt2pt.h): small messages get
// more iterations, large ones fewer.
const (
	OSULargeMessage  = 8192 // bytes; above this the "large" counts apply
	OSUItersSmall    = 10000
	OSUItersLarge    = 1000
	OSUSkipSmall     = 100
	OSUSkipLarge     = 10
	OSUWindow        = 64 // bandwidth window
	OSUBwItersSmall  = 100
	OSUBwItersLarge  = 20
	OSUBwSkipSmall   = 10
	OSUBwSkipLarge   = 2
	repsPerOSURun    = 10 // a repetition is 1/repsPerOSURun of an OSU run
	pingPongTag      = 1
	bandwidthTag     = 2
	bandwidthAckSize = 4
)

// osuCounts are an OSU benchmark's timed and untimed iteration counts for
// messages up to OSULargeMessage (small) and above it (large).
type osuCounts struct{ itersSmall, itersLarge, skipSmall, skipLarge int }

var (
	osuLatency   = osuCounts{OSUItersSmall, OSUItersLarge, OSUSkipSmall, OSUSkipLarge}
	osuBandwidth = osuCounts{OSUBwItersSmall, OSUBwItersLarge, OSUBwSkipSmall, OSUBwSkipLarge}
)

// resolve returns the per-repetition iteration count and the untimed
// warm-up count for a message of the given size when the user set none
// (iters/warmup 0): the OSU counts spread over repsPerOSURun repetitions, so
// MinReps repetitions time as many iterations as one OSU run. A negative
// warmup means none.
func (o osuCounts) resolve(bytes, iters, warmup int) (int, int) {
	large := bytes > OSULargeMessage
	if iters <= 0 {
		iters = o.itersSmall / repsPerOSURun
		if large {
			iters = o.itersLarge / repsPerOSURun
		}
	}
	switch {
	case warmup < 0:
		warmup = 0
	case warmup == 0:
		warmup = o.skipSmall
		if large {
			warmup = o.skipLarge
		}
	}
	return iters, warmup
}

// Iterations resolves ping-pong round-trip counts (osu_latency: 10000/100
// up to 8K, 1000/10 above).
func Iterations(bytes, iters, warmup int) (int, int) {
	return osuLatency.resolve(bytes, iters, warmup)
}

// BandwidthIterations resolves bandwidth window counts (osu_bw: 100/10 up
// to 8K, 20/2 above).
func BandwidthIterations(bytes, iters, warmup int) (int, int) {
	return osuBandwidth.resolve(bytes, iters, warmup)
}

// OSU returns p configured as osu_latency measures (OSU 5.3,
// osu_latency.c): one repetition of the full loop, 10000 round trips up to
// OSULargeMessage and 1000 above, after 100 (10) untimed ones, with no
// warm-up repetition; its sample is the mean half round trip over the
// loop, the figure osu_latency prints. The default configuration instead
// spreads the loop over repetitions and reports their median, which is
// robust to the interruptions a single pass averages in (README, "Trusting
// the numbers").
func (p PingPong) OSU() PingPong {
	return PingPong{Bytes: p.Bytes, Iters: osuLatency.full(p.Bytes), Warmup: osuLatency.skip(p.Bytes), Validate: p.Validate, Reps: osuReps}
}

// osuReps is the single pass of an OSU benchmark: no warm-up repetition
// (the skip iterations are the warm-up), exactly one timed repetition.
var osuReps = Reps{Warmup: -1, MinReps: 1, MaxReps: 1, MaxTime: math.MaxFloat64}

// full is an OSU benchmark's timed iteration count for a message size.
func (o osuCounts) full(bytes int) int {
	if bytes > OSULargeMessage {
		return o.itersLarge
	}
	return o.itersSmall
}

// skip is an OSU benchmark's untimed iteration count for a message size.
func (o osuCounts) skip(bytes int) int {
	if bytes > OSULargeMessage {
		return o.skipLarge
	}
	return o.skipSmall
}

// BenchPingPong is the bench name of ping-pong records: params bytes and
// iters (round trips per repetition), the latency (half a round trip) per
// repetition, derived round_trip_s.
const BenchPingPong = "pingpong"

// PingPong configures the OSU-style latency benchmark between ranks 0 and 1.
type PingPong struct {
	Bytes    int
	Iters    int  // round trips per timed repetition; 0 = OSU-derived default
	Warmup   int  // untimed round trips before timing; 0 = OSU default
	Validate bool // fill and check buffers around every repetition
	Reps     Reps
}

// Run measures one-way latency = half the round-trip time of a blocking
// ping-pong (OSU osu_latency). Each sample is one repetition's elapsed time
// on rank 0 divided by 2*Iters. The inner loop runs in the backend's
// language when it implements mpi.Kernels (no cgo crossing per message).
// It is collective over exactly two ranks.
func (p PingPong) Run(c mpi.Comm) (Measurement, error) {
	if c.Size() != 2 {
		return Measurement{}, fmt.Errorf("pingpong needs exactly 2 ranks, got %d", c.Size())
	}
	iters, warmup := Iterations(p.Bytes, p.Iters, p.Warmup)
	send, recv := make([]byte, p.Bytes), make([]byte, p.Bytes)
	touch(send)
	touch(recv)
	me, peer := c.Rank(), 1-c.Rank()
	initiator := me == 0
	loop := func(n int) (float64, error) {
		return pingPongLoop(c, send, recv, peer, pingPongTag, n, initiator)
	}
	if err := c.Barrier(); err != nil {
		return Measurement{}, err
	}
	if _, err := loop(warmup); err != nil {
		return Measurement{}, err
	}
	if p.Validate {
		if err := validateExchange(c, p.Bytes, peer); err != nil {
			return Measurement{}, err
		}
	}
	reps := p.Reps
	reps.Reduction = ReduceRank0
	batch := SerialBatch(c, func() (float64, error) { return loop(iters) })
	if bk, ok := c.(mpi.BatchKernels); ok {
		batch = func(b mpi.Batch) error {
			return bk.PingPongBatch(b, send, recv, peer, pingPongTag, iters, initiator)
		}
	}
	if p.Validate {
		// Each side must have received the other's bytes, in every
		// repetition (MeasureBatch runs one per batch when validating).
		batch = checked(batch, func() {
			prepareCheck(send, true, p.Bytes)
			prepareCheck(recv, false, p.Bytes)
		}, func() error { return checkPattern(recv, p.Bytes, "pingpong") })
	}
	m, err := MeasureBatch(c, reps, p.Validate, batch)
	if err != nil {
		return Measurement{}, err
	}
	return m.Scaled(1 / float64(2*iters)), nil
}

// checked wraps a batch with validation: before prepares the buffers and
// after checks what arrived, around every batch.
func checked(batch BatchRep, before func(), after func() error) BatchRep {
	return func(b mpi.Batch) error {
		before()
		if err := batch(b); err != nil {
			return err
		}
		return after()
	}
}

// Params are the record parameters: the message size and the round trips
// per repetition that Run uses (the OSU-derived count when Iters is 0).
func (p PingPong) Params(int) results.Params {
	iters, _ := Iterations(p.Bytes, p.Iters, p.Warmup)
	return results.Params{"bytes": p.Bytes, "iters": iters}
}

// Bench is the bench name of the records.
func (PingPong) Bench() string { return BenchPingPong }

// Record is the ping-pong record of m: one-way latencies, rank 0's time
// (results.ReductionRank0), with the round trip as derived round_trip_s.
func (p PingPong) Record(m Measurement, meta results.Meta) results.Record {
	rec := m.Record(BenchPingPong, p.Params(m.CommSize), m.CommSize, meta)
	rec.Derived = map[string]float64{"round_trip_s": 2 * m.Summary.Median}
	return rec
}

// pingPongLoop runs iters blocking round trips, sending from send and
// receiving into recv: in the backend's language when it implements
// mpi.Kernels, else as a Go loop (mpi/local). It returns the elapsed seconds
// on this rank.
func pingPongLoop(c mpi.Comm, send, recv []byte, peer, tag, iters int, initiator bool) (float64, error) {
	if k, ok := c.(mpi.Kernels); ok {
		return k.PingPong(send, recv, peer, tag, iters, initiator)
	}
	t0 := c.Wtime()
	for i := 0; i < iters; i++ {
		if initiator {
			if err := c.Send(send, peer, tag); err != nil {
				return 0, err
			}
			if _, err := c.Recv(recv, peer, tag); err != nil {
				return 0, err
			}
		} else {
			if _, err := c.Recv(recv, peer, tag); err != nil {
				return 0, err
			}
			if err := c.Send(send, peer, tag); err != nil {
				return 0, err
			}
		}
	}
	return c.Wtime() - t0, nil
}

// touch writes every page of buf so the first timed message does not pay
// for page faults (OSU touches its buffers too).
func touch(buf []byte) {
	for i := range buf {
		buf[i] = byte(i)
	}
}

// pattern is the byte expected at index i of a validated n-byte message.
func pattern(i, n int) byte { return byte(i*7 + n*13 + 1) }

// prepareCheck fills the sender's buffer with the pattern and clears the
// receiver's, so a message that never arrived cannot pass the check.
func prepareCheck(buf []byte, sender bool, n int) {
	for i := range buf {
		if sender {
			buf[i] = pattern(i, n)
		} else {
			buf[i] = 0
		}
	}
}

// ErrValidation is returned when received bytes differ from the sent ones.
var ErrValidation = errors.New("validation failed")

func checkPattern(buf []byte, n int, what string) error {
	for i := range buf {
		if buf[i] != pattern(i, n) {
			return fmt.Errorf("%s: %w: %d-byte message, byte %d is %#x, want %#x",
				what, ErrValidation, n, i, buf[i], pattern(i, n))
		}
	}
	return nil
}

// validateExchange sends a pattern each way between rank 0 and peer, outside
// any timed region, and checks it on arrival.
func validateExchange(c mpi.Comm, n, peer int) error {
	want := make([]byte, n)
	for i := range want {
		want[i] = pattern(i, n)
	}
	got := make([]byte, n)
	if c.Rank() == 0 {
		if err := c.Send(want, peer, pingPongTag); err != nil {
			return err
		}
		if _, err := c.Recv(got, peer, pingPongTag); err != nil {
			return err
		}
	} else {
		if _, err := c.Recv(got, 0, pingPongTag); err != nil {
			return err
		}
		if err := c.Send(want, 0, pingPongTag); err != nil {
			return err
		}
	}
	if !bytes.Equal(got, want) {
		return checkPattern(got, n, "validation exchange")
	}
	return nil
}

// PingPongSweep is the sweep of 'commcost pingpong': one ping-pong per
// message size between ranks 0 and 1 of exactly two.
type PingPongSweep struct {
	RepFlags
	Loop
	Sizes opts.Sizes `flag:"sizes" default:"0:4M" param:"bytes" usage:"message sizes: LO:HI doubling (1:4M) or a list (8,1K,1M); K = 1024"`
	OSU   bool       `flag:"osu" usage:"OSU 5.3's methodology, for a figure to put next to osu_latency's: one pass of its loop (10000 round trips up to 8K, 1000 above, after 100 (10) untimed; the mean half round trip) per size instead of repetitions and their median"`
	Set   opts.Given
}

func init() {
	Register(Def{Name: "pingpong", Summary: "OSU-style latency: half round trip of a blocking ping-pong (2 ranks)",
		New: func() Sweep { return new(PingPongSweep) }})
}

// osuFixed are the fields OSU's methodology fixes itself: its loop and
// skip counts, one repetition, its window.
var osuFixed = []string{"Iters", "Warmup", "MinReps", "MaxReps", "MaxTime", "RelCI", "Window"}

// checkOSU refuses a field OSU's methodology fixes, given beside it.
func checkOSU(osu bool, set opts.Given) error { return checkOSUAs(osu, set, "OSU 5.3") }

// checkOSUAs is checkOSU for the methodology of OSU version.
func checkOSUAs(osu bool, set opts.Given, version string) error {
	if !osu {
		return nil
	}
	for _, f := range osuFixed {
		if set.Has(f) {
			return opts.Conflict(f, "OSU", "{OSU} fixes the iterations, repetitions and window as %s does; drop one of them", version)
		}
	}
	return nil
}

// Validate checks the sweep's settings.
func (s *PingPongSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check, func() error { return checkOSU(s.OSU, s.Set) },
		func() error { return CheckValues("Sizes", BenchPingPong, "bytes", s.Sizes) })
}

// Plan lists one ping-pong per size; it needs exactly two ranks.
func (s *PingPongSweep) Plan(p int) ([]Pattern, error) {
	if p != 2 {
		return nil, opts.Badf("pingpong needs exactly 2 ranks, got %d", p)
	}
	return s.Points(), nil
}

// Points are the ping-pongs of the sweep, one per size.
func (s *PingPongSweep) Points() []Pattern {
	var out []Pattern
	for _, n := range s.Sizes {
		pp := PingPong{Bytes: n, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: s.Reps()}
		if s.OSU {
			pp = pp.OSU()
		}
		out = append(out, pp)
	}
	return out
}
