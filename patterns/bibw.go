package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchBibw is the bench name of bidirectional bandwidth records: params
// bytes, window and iters (windows per repetition), unit B/s.
const BenchBibw = "bibw"

const bibwTag = 3

// Bibw configures OSU's bidirectional bandwidth benchmark (osu_bibw.c)
// between ranks 0 and 1: per window both ranks post Window receives and
// Window non-blocking sends of Bytes, then wait for them all (no ack: a
// rank's receives complete only once the other has sent). A repetition is
// Iters windows timed on rank 0, as OSU times it; its bandwidth is
// 2 Bytes Window Iters / time, both directions counted.
type Bibw struct {
	Bytes    int
	Window   int // messages each way per window; 0 = OSUWindow (64)
	Iters    int // windows per timed repetition; 0 = OSU-derived default
	Warmup   int // untimed windows; 0 = OSU default
	Validate bool
	Reps     Reps
}

func (b Bibw) window() int {
	if b.Window <= 0 {
		return OSUWindow
	}
	return b.Window
}

// OSU returns b configured as osu_bibw measures (OSU 6.1): one repetition
// of the full loop, 100 windows of 64 each way up to OSULargeMessage and 20
// above, after 10 (2) untimed; its bandwidth is the figure osu_bibw prints.
func (b Bibw) OSU() Bibw {
	return Bibw{Bytes: b.Bytes, Window: OSUWindow, Iters: osuBandwidth.full(b.Bytes), Warmup: osuBandwidth.skip(b.Bytes), Validate: b.Validate, Reps: osuReps}
}

// Volume is the bytes one timed repetition moves, both directions.
func (b Bibw) Volume() float64 {
	iters, _ := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	return 2 * float64(b.Bytes) * float64(b.window()) * float64(iters)
}

// bibwBatch is the batch of iters windows per repetition: the backend's
// kernel (mpi.BibwKernels), else the windows in Go.
func bibwBatch(c mpi.Comm, send, recv []byte, peer, window, iters int, first bool) BatchRep {
	if bk, ok := c.(mpi.BibwKernels); ok {
		return func(b mpi.Batch) error { return bk.BibwBatch(b, send, recv, peer, bibwTag, window, iters, first) }
	}
	return SerialBatch(c, func() (float64, error) { return goBibw(c, send, recv, peer, window, iters, first) })
}

// goBibw is osu_bibw's loop in Go, for backends without the kernel.
func goBibw(c mpi.Comm, send, recv []byte, peer, window, iters int, first bool) (float64, error) {
	recvs, sends := make([]mpi.Request, window), make([]mpi.Request, window)
	t0 := c.Wtime()
	for range iters {
		for w := range recvs {
			var err error
			if recvs[w], err = c.Irecv(recv, peer, bibwTag); err != nil {
				return 0, err
			}
		}
		for w := range sends {
			var err error
			if sends[w], err = c.Isend(send, peer, bibwTag); err != nil {
				return 0, err
			}
		}
		a, b := sends, recvs
		if !first {
			a, b = recvs, sends
		}
		if _, err := mpi.Waitall(a); err != nil {
			return 0, err
		}
		if _, err := mpi.Waitall(b); err != nil {
			return 0, err
		}
	}
	return c.Wtime() - t0, nil
}

// Run measures the bidirectional bandwidth (collective over exactly two
// ranks).
func (b Bibw) Run(c mpi.Comm) (Measurement, error) {
	if c.Size() != 2 {
		return Measurement{}, fmt.Errorf("bibw needs exactly 2 ranks, got %d", c.Size())
	}
	window := b.window()
	iters, warmup := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	send, recv := make([]byte, b.Bytes), make([]byte, b.Bytes)
	touch(send)
	touch(recv)
	first, peer := c.Rank() == 0, 1-c.Rank()
	if err := c.Barrier(); err != nil {
		return Measurement{}, err
	}
	if warmup > 0 {
		warm := bibwBatch(c, send, recv, peer, window, warmup, first)
		if err := warm(mpi.Batch{Own: make([]float64, 1)}); err != nil {
			return Measurement{}, err
		}
	}
	reps := b.Reps
	reps.Reduction = ReduceRank0
	batch := bibwBatch(c, send, recv, peer, window, iters, first)
	if b.Validate {
		batch = checked(batch, func() {
			prepareCheck(send, true, b.Bytes)
			prepareCheck(recv, false, b.Bytes)
		}, func() error { return checkPattern(recv, b.Bytes, "bibw") })
	}
	return MeasureBatch(c, reps, b.Validate, batch)
}

// Params are the record parameters: the message size, the window and the
// windows per repetition that Run uses.
func (b Bibw) Params(int) results.Params {
	iters, _ := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	return results.Params{"bytes": b.Bytes, "window": b.window(), "iters": iters}
}

// Bench is the bench name of the records.
func (Bibw) Bench() string { return BenchBibw }

// Record is the bidirectional bandwidth record of m: each repetition's
// bandwidth Volume / time in B/s (rank 0's time, as OSU), derived
// rep_time_s the median repetition time.
func (b Bibw) Record(m Measurement, meta results.Meta) results.Record {
	return bandwidthRecord(m, BenchBibw, b.Params(m.CommSize), b.Volume(), meta)
}

// bandwidthRecord turns repetition times into a record of bandwidth
// volume/time in B/s.
func bandwidthRecord(m Measurement, bench string, params results.Params, volume float64, meta results.Meta) results.Record {
	bw := make([]float64, len(m.Samples))
	for i, t := range m.Samples {
		bw[i] = volume / t
	}
	rec := m.Record(bench, params, m.CommSize, meta)
	rec.Unit = results.UnitBytesPerSec
	rec.Summary = results.Summarize(bw)
	rec.Samples = bw
	rec.RankMin, rec.RankAvg, rec.RankMax = 0, 0, 0
	rec.Derived = map[string]float64{"rep_time_s": m.Summary.Median}
	return rec
}

// Demand of the bidirectional bandwidth test: a send and a receive
// buffer, window messages each way in flight, iters windows per
// repetition.
func (b Bibw) Demand(int) Demand {
	iters, warmup := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	w, n := float64(b.window()), float64(b.Bytes)
	d := Demand{
		BufferBytes: 2 * int64(b.Bytes), MemParam: "bytes", InFlightBytes: 2 * int64(b.window()) * int64(b.Bytes),
		RepMessages: 2 * float64(iters) * w, RepBytes: 2 * float64(iters) * w * n, RepParam: "--iters or --window",
		WarmupMessages: 2 * float64(warmup) * w, WarmupBytes: 2 * float64(warmup) * w * n, WarmupParam: "--warmup or --window",
	}
	if b.Validate {
		d.BufferBytes *= 2
	}
	return d
}

// BibwSweep is the sweep of 'commcost bibw': one bidirectional bandwidth
// test per message size between ranks 0 and 1 of exactly two.
type BibwSweep struct {
	RepFlags
	Loop
	Sizes  opts.Sizes `flag:"sizes" default:"1:4M" param:"bytes" usage:"message sizes: LO:HI doubling (1:4M) or a list (8,1K,1M); K = 1024"`
	Window int        `flag:"window" default:"64" usage:"messages each way per window"`
	OSU    bool       `flag:"osu" usage:"OSU 6.1's methodology, for a figure to put next to osu_bibw's: one pass of its loop (100 windows of 64 each way up to 8K, 20 above, after 10 (2) untimed; the bandwidth of the loop) per size instead of repetitions and their median"`
	Set    opts.Given
}

func init() {
	Register(Def{Name: "bibw", Summary: "OSU-style bidirectional bandwidth: windows of 64 Isends each way (2 ranks)",
		New: func() Sweep { return new(BibwSweep) }})
}

// Validate checks the sweep's settings.
func (s *BibwSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check, func() error { return checkOSUAs(s.OSU, s.Set, "OSU 6.1") },
		func() error { return CheckValues("Window", BenchBibw, "window", []int{s.Window}) },
		func() error { return CheckValues("Sizes", BenchBibw, "bytes", s.Sizes) })
}

// Plan lists one test per size; it needs exactly two ranks.
func (s *BibwSweep) Plan(p int) ([]Pattern, error) {
	if p != 2 {
		return nil, opts.Badf("bibw needs exactly 2 ranks, got %d", p)
	}
	var out []Pattern
	for _, n := range s.Sizes {
		b := Bibw{Bytes: n, Window: s.Window, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: s.Reps()}
		if s.OSU {
			b = b.OSU()
		}
		out = append(out, b)
	}
	return out, nil
}
