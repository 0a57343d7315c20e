package native

import (
	"os"
	"runtime"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// The binding's own overhead, per call, on rank 0 of a run with no more
// ranks than cores (other ranks skip, so their idle loops do not compete):
//
//	go test -run '^$' -bench . ./mpi/native
//
// Each rank's benchmark loop is local: b.Loop picks its own iteration
// count per process, so no benchmark here may communicate.

func benchRank0(b *testing.B) {
	b.Helper()
	needMPI(b)
	if WorldRank() != 0 {
		b.Skip("runs on rank 0 only")
	}
	if os.Getenv(oversubEnv) != "" {
		b.Skipf("%d ranks share the cores: timings would be of an oversubscribed machine", WorldSize())
	}
}

// BenchmarkCgoCall is one Go->C crossing into an empty C function.
func BenchmarkCgoCall(b *testing.B) {
	benchRank0(b)
	for b.Loop() {
		cgoNoop()
	}
}

// BenchmarkWtime is Comm.Wtime: a cgo crossing plus MPI_Wtime.
func BenchmarkWtime(b *testing.B) {
	benchRank0(b)
	c := world()
	var sum float64
	for b.Loop() {
		sum += c.Wtime()
	}
	runtime.KeepAlive(sum)
}

// BenchmarkGuard is the SERIALIZED check every MPI call pays (enter+leave).
func BenchmarkGuard(b *testing.B) {
	benchRank0(b)
	for b.Loop() {
		if enter("bench") == nil {
			leave()
		}
	}
}

// BenchmarkIprobe is a whole binding call that does not communicate:
// argument checks, guard, cgo crossing, MPI_Iprobe finding nothing.
func BenchmarkIprobe(b *testing.B) {
	benchRank0(b)
	c := world()
	for b.Loop() {
		if _, _, err := c.Iprobe(mpi.AnySource, 999); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKernelFigures logs the kernels' figures against a Go loop of Send and
// Recv (one cgo crossing per message) with 2 ranks, so `go test -v` shows
// what the binding costs: 8 B half round trip, 1 MiB half round trip and
// 1 MiB bandwidth (window 64, MB = 10^6 bytes). Each figure is the minimum
// over up to maxBatches timed batches after a warm-up batch; rank 0 stops
// a figure early once it has spent figureBudget on it and tells rank 1 by
// Bcast, so a loaded machine cannot stretch the test much. It asserts only
// success: timings depend on the machine. For published figures use the
// suite's own measurements, not this smoke report.
func TestKernelFigures(t *testing.T) {
	needMPI(t)
	c := world()
	if c.Size() != 2 {
		t.Skip("figures are taken with exactly 2 ranks")
	}
	if testing.Short() {
		t.Skip("timing report skipped in -short mode")
	}
	peer := 1 - c.Rank()
	first := c.Rank() == 0
	const (
		maxBatches   = 5
		figureBudget = 0.5 // seconds
	)
	best := func(f func() (float64, error)) float64 {
		t.Helper()
		min := 0.0
		start := c.Wtime()
		for i := 0; ; i++ {
			if err := c.Barrier(); err != nil {
				t.Fatal(err)
			}
			sec, err := f()
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && (min == 0 || sec < min) {
				min = sec
			}
			more := []byte{0}
			if i < maxBatches && (i == 0 || c.Wtime()-start < figureBudget) {
				more[0] = 1
			}
			if err := c.Bcast(more, 0); err != nil {
				t.Fatal(err)
			}
			if more[0] == 0 {
				return min
			}
		}
	}
	small, large := make([]byte, 8), make([]byte, 1<<20)
	smallRecv, largeRecv := make([]byte, len(small)), make([]byte, len(large))
	const smallIters, largeIters, window, bwIters = 10000, 200, 64, 20

	kSmall := best(func() (float64, error) { return c.PingPong(small, smallRecv, peer, 1, smallIters, first) })
	goSmall := best(func() (float64, error) {
		t0 := c.Wtime()
		for range smallIters {
			var err error
			if first {
				if err = c.Send(small, peer, 2); err == nil {
					_, err = c.Recv(small, peer, 2)
				}
			} else {
				if _, err = c.Recv(small, peer, 2); err == nil {
					err = c.Send(small, peer, 2)
				}
			}
			if err != nil {
				return 0, err
			}
		}
		return c.Wtime() - t0, nil
	})
	kLarge := best(func() (float64, error) { return c.PingPong(large, largeRecv, peer, 3, largeIters, first) })
	kBW := best(func() (float64, error) { return c.Bandwidth(large, peer, 4, window, bwIters, first) })
	if first {
		half := func(sec float64, iters int) float64 { return sec / float64(2*iters) * 1e6 }
		t.Logf("8 B half round trip: kernel %.3f us, Go Send/Recv loop %.3f us (difference %.0f ns per message)",
			half(kSmall, smallIters), half(goSmall, smallIters), (half(goSmall, smallIters)-half(kSmall, smallIters))*1e3)
		t.Logf("1 MiB half round trip: kernel %.1f us", half(kLarge, largeIters))
		t.Logf("1 MiB bandwidth, window %d: kernel %.0f MB/s (MB = 10^6 B)", window, float64(len(large))*window*bwIters/kBW/1e6)
	}
}

// BenchmarkSelfRoundTrip is one message to this rank itself through the
// request path: Irecv, Isend, then Wait on both (two posts, two waits).
func BenchmarkSelfRoundTrip(b *testing.B) {
	benchRank0(b)
	c := world()
	me := c.Rank()
	out, in := make([]byte, 8), make([]byte, 8)
	for b.Loop() {
		rr, err := c.Irecv(in, me, 5)
		if err != nil {
			b.Fatal(err)
		}
		sr, err := c.Isend(out, me, 5)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mpi.Waitall([]mpi.Request{rr, sr}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWaitany8 is the access engine's inner loop in miniature: 8
// receives and 8 sends to this rank itself, then one Waitany per receive
// over the 8 (completed entries set to nil) and a Waitall of the sends. Its
// time per receive should not grow with the number waited on.
func BenchmarkWaitany8(b *testing.B) {
	benchRank0(b)
	c := world()
	me := c.Rank()
	const k = 8
	bufs, out := make([][]byte, k), make([]byte, 8)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
	}
	recvs, sends := make([]mpi.Request, k), make([]mpi.Request, k)
	for b.Loop() {
		var err error
		for i := range recvs {
			if recvs[i], err = c.Irecv(bufs[i], me, 6+i); err != nil {
				b.Fatal(err)
			}
		}
		for i := range sends {
			if sends[i], err = c.Isend(out, me, 6+i); err != nil {
				b.Fatal(err)
			}
		}
		for range k {
			i, _, err := mpi.Waitany(recvs)
			if err != nil || i < 0 {
				b.Fatal(i, err)
			}
			recvs[i] = nil
		}
		if _, err := mpi.Waitall(sends); err != nil {
			b.Fatal(err)
		}
	}
}
