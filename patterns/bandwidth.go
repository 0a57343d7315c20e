package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchBandwidth is the bench name of bandwidth records: params bytes,
// window and iters (windows per repetition), unit B/s.
const BenchBandwidth = "bandwidth"

// Bandwidth configures the OSU-style streaming bandwidth benchmark (osu_bw)
// from rank 0 to rank 1.
type Bandwidth struct {
	Bytes    int
	Window   int // messages in flight per window; 0 = OSUWindow (64)
	Iters    int // windows per timed repetition; 0 = OSU-derived default
	Warmup   int // untimed windows; 0 = OSU default
	Validate bool
	Reps     Reps
}

// Run measures bandwidth: rank 0 posts Window non-blocking sends of Bytes,
// waits for all, and receives a 4-byte acknowledgement; rank 1 posts the
// matching receives and sends the acknowledgement. A repetition is Iters
// windows; its sample is rank 0's elapsed time, and the bandwidth of the
// repetition is Bytes*Window*Iters / time (Volume). Collective over exactly
// two ranks.
func (b Bandwidth) Run(c mpi.Comm) (Measurement, error) {
	if c.Size() != 2 {
		return Measurement{}, fmt.Errorf("bandwidth needs exactly 2 ranks, got %d", c.Size())
	}
	window := b.window()
	iters, warmup := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	buf := make([]byte, b.Bytes)
	touch(buf)
	sender := c.Rank() == 0
	peer := 1 - c.Rank()
	loop := func(n int) (float64, error) {
		if k, ok := c.(mpi.Kernels); ok {
			return k.Bandwidth(buf, peer, bandwidthTag, window, n, sender)
		}
		return goBandwidth(c, buf, peer, window, n, sender)
	}
	if err := c.Barrier(); err != nil {
		return Measurement{}, err
	}
	if _, err := loop(warmup); err != nil {
		return Measurement{}, err
	}
	if b.Validate {
		if err := validateExchange(c, b.Bytes, peer); err != nil {
			return Measurement{}, err
		}
	}
	reps := b.Reps
	reps.Reduction = ReduceRank0
	batch := SerialBatch(c, func() (float64, error) { return loop(iters) })
	if bk, ok := c.(mpi.BatchKernels); ok {
		batch = func(bt mpi.Batch) error {
			return bk.BandwidthBatch(bt, buf, peer, bandwidthTag, window, iters, sender)
		}
	}
	if b.Validate {
		batch = checked(batch, func() { prepareCheck(buf, sender, b.Bytes) }, func() error {
			if sender {
				return nil
			}
			return checkPattern(buf, b.Bytes, "bandwidth")
		})
	}
	return MeasureBatch(c, reps, b.Validate, batch)
}

// OSU returns b configured as osu_bw measures (OSU 5.3, osu_bw.c): one
// repetition of the full loop, 100 windows of 64 messages up to
// OSULargeMessage and 20 above, after 10 (2) untimed windows, with no
// warm-up repetition; its bandwidth is the figure osu_bw prints. See
// PingPong.OSU.
func (b Bandwidth) OSU() Bandwidth {
	return Bandwidth{Bytes: b.Bytes, Window: OSUWindow, Iters: osuBandwidth.full(b.Bytes), Warmup: osuBandwidth.skip(b.Bytes), Validate: b.Validate, Reps: osuReps}
}

func (b Bandwidth) window() int {
	if b.Window <= 0 {
		return OSUWindow
	}
	return b.Window
}

// Volume is the number of bytes one timed repetition moves.
func (b Bandwidth) Volume() float64 {
	iters, _ := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	return float64(b.Bytes) * float64(b.window()) * float64(iters)
}

// Params are the record parameters: the message size, the window and the
// windows per repetition that Run uses.
func (b Bandwidth) Params(int) results.Params {
	iters, _ := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	return results.Params{"bytes": b.Bytes, "window": b.window(), "iters": iters}
}

// Bench is the bench name of the records.
func (Bandwidth) Bench() string { return BenchBandwidth }

// Record is the bandwidth record of m, a measurement of repetition times:
// each repetition's bandwidth is Volume / time in B/s, so the summary
// (median, CI, percentiles) is that of the bandwidth sample itself. The
// ranks' spread is left out (two-party: rank 0's time only); derived
// rep_time_s is the median repetition time.
func (b Bandwidth) Record(m Measurement, meta results.Meta) results.Record {
	volume := b.Volume()
	bw := make([]float64, len(m.Samples))
	for i, t := range m.Samples {
		bw[i] = volume / t
	}
	rec := m.Record(BenchBandwidth, b.Params(m.CommSize), m.CommSize, meta)
	rec.Unit = results.UnitBytesPerSec
	rec.Summary = results.Summarize(bw)
	rec.Samples = bw
	rec.RankMin, rec.RankAvg, rec.RankMax = 0, 0, 0
	rec.Derived = map[string]float64{"rep_time_s": m.Summary.Median}
	return rec
}

// goBandwidth is the Go loop for backends without native kernels.
func goBandwidth(c mpi.Comm, buf []byte, peer, window, iters int, sender bool) (float64, error) {
	ack := make([]byte, bandwidthAckSize)
	reqs := make([]mpi.Request, window)
	t0 := c.Wtime()
	for i := 0; i < iters; i++ {
		for w := range reqs {
			var err error
			if sender {
				reqs[w], err = c.Isend(buf, peer, bandwidthTag)
			} else {
				reqs[w], err = c.Irecv(buf, peer, bandwidthTag)
			}
			if err != nil {
				return 0, err
			}
		}
		if _, err := mpi.Waitall(reqs); err != nil {
			return 0, err
		}
		if sender {
			if _, err := c.Recv(ack, peer, bandwidthTag+1); err != nil {
				return 0, err
			}
		} else if err := c.Send(ack, peer, bandwidthTag+1); err != nil {
			return 0, err
		}
	}
	return c.Wtime() - t0, nil
}

// BandwidthSweep is the sweep of 'commcost bandwidth': one streaming
// bandwidth test per message size from rank 0 to rank 1 of exactly two.
type BandwidthSweep struct {
	RepFlags
	Loop
	Sizes  opts.Sizes `flag:"sizes" default:"1:4M" param:"bytes" usage:"message sizes: LO:HI doubling (1:4M) or a list (8,1K,1M); K = 1024"`
	Window int        `flag:"window" default:"64" usage:"messages in flight per window"`
	OSU    bool       `flag:"osu" usage:"OSU 5.3's methodology, for a figure to put next to osu_bw's: one pass of its loop (100 windows of 64 up to 8K, 20 above, after 10 (2) untimed; the bandwidth of the loop) per size instead of repetitions and their median"`
	Set    opts.Given
}

func init() {
	Register(Def{Name: "bandwidth", Summary: "OSU-style bandwidth: window of 64 Isends + 4-byte ack (2 ranks)",
		New: func() Sweep { return new(BandwidthSweep) }})
}

// Validate checks the sweep's settings.
func (s *BandwidthSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check, func() error { return checkOSU(s.OSU, s.Set) },
		func() error { return CheckValues("Window", BenchBandwidth, "window", []int{s.Window}) },
		func() error { return CheckValues("Sizes", BenchBandwidth, "bytes", s.Sizes) })
}

// Plan lists one bandwidth test per size; it needs exactly two ranks.
func (s *BandwidthSweep) Plan(p int) ([]Pattern, error) {
	if p != 2 {
		return nil, opts.Badf("bandwidth needs exactly 2 ranks, got %d", p)
	}
	return s.Points(), nil
}

// Points are the bandwidth tests of the sweep, one per size.
func (s *BandwidthSweep) Points() []Pattern {
	var out []Pattern
	for _, n := range s.Sizes {
		b := Bandwidth{Bytes: n, Window: s.Window, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: s.Reps()}
		if s.OSU {
			b = b.OSU()
		}
		out = append(out, b)
	}
	return out
}
