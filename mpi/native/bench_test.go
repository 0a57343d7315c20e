package native

import (
	"encoding/binary"
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
// count per process, so no benchmark here may communicate, except
// BenchmarkKernels, which tells rank 1 rank 0's count.

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

// kernelCase is one figure of BenchmarkKernels: run does n operations
// between ranks 0 and 1 (each rank its own side) and returns the seconds
// this rank measured around them with MPI_Wtime.
type kernelCase struct {
	name  string
	bytes int // message size
	// metrics turns rank 0's seconds for n operations into the reported
	// figures beyond ns/op.
	metrics func(b *testing.B, sec float64, n int)
	run     func(c *Comm, peer int, first bool, n int) (float64, error)
}

const (
	kernelWindow = 64 // messages per bandwidth operation (OSU osu_bw)
	kernelCmdTag = 90 // rank 0 -> 1: the next case and its count
)

// halfRTT reports OSU's latency, half a round trip, next to ns/op (one
// round trip).
func halfRTT(b *testing.B, sec float64, n int) {
	b.ReportMetric(sec/float64(2*n)*1e9, "ns/half-rtt")
}

func kernelCases() []kernelCase {
	small, large := make([]byte, 8), make([]byte, 1<<20)
	smallRecv, largeRecv := make([]byte, len(small)), make([]byte, len(large))
	return []kernelCase{
		{"pingpong/bytes=8/impl=kernel", len(small), halfRTT, func(c *Comm, peer int, first bool, n int) (float64, error) {
			return c.PingPong(small, smallRecv, peer, 1, n, first)
		}},
		// The same round trips through the Go API, one cgo crossing (and
		// one SERIALIZED guard) per message: the difference to the kernel
		// is what the binding adds per message.
		{"pingpong/bytes=8/impl=go-send-recv", len(small), halfRTT, func(c *Comm, peer int, first bool, n int) (float64, error) {
			t0 := c.Wtime()
			for range n {
				var err error
				if first {
					if err = c.Send(small, peer, 2); err == nil {
						_, err = c.Recv(smallRecv, peer, 2)
					}
				} else if _, err = c.Recv(smallRecv, peer, 2); err == nil {
					err = c.Send(small, peer, 2)
				}
				if err != nil {
					return 0, err
				}
			}
			return c.Wtime() - t0, nil
		}},
		{"pingpong/bytes=1048576/impl=kernel", len(large), halfRTT, func(c *Comm, peer int, first bool, n int) (float64, error) {
			return c.PingPong(large, largeRecv, peer, 3, n, first)
		}},
		{"bandwidth/bytes=1048576/window=64/impl=kernel", len(large), func(b *testing.B, sec float64, n int) {
			// MB = 10^6 bytes, as OSU and the bandwidth subcommand.
			b.ReportMetric(float64(len(large)*kernelWindow*n)/sec/1e6, "MB/s")
		}, func(c *Comm, peer int, first bool, n int) (float64, error) {
			return c.Bandwidth(large, peer, 4, kernelWindow, n, first)
		}},
	}
}

// BenchmarkKernels measures the C kernels the suite's numbers come from, and
// a Go loop of Send and Recv beside them, between ranks 0 and 1 of a
// 2-rank run:
//
//	go test -run '^$' -bench Kernels -count 6 ./mpi/native | benchstat -
//
// ns/op is rank 0's MPI_Wtime around the kernel per operation (a round
// trip; a window of 64 messages plus the ack for bandwidth), with
// ns/half-rtt (OSU latency) and MB/s beside it. Both ranks must run the
// same number of operations, but b.N is chosen by each process's own
// testing package, so rank 0 alone runs the sub-benchmarks and sends rank
// 1 each case and count before the operations (hence b.N, not b.Loop);
// rank 1 serves them and skips. It skips on both ranks unless there are
// exactly 2 ranks with a core each.
func BenchmarkKernels(b *testing.B) {
	needMPI(b)
	c := world()
	if c.Size() != 2 {
		b.Skip("kernel figures are taken with exactly 2 ranks")
	}
	if os.Getenv(oversubEnv) != "" {
		b.Skip("ranks share the cores: timings would be of an oversubscribed machine")
	}
	cases := kernelCases()
	cmd := make([]byte, 16) // case index (-1 = done), operations
	if c.Rank() == 1 {
		for {
			if _, err := c.Recv(cmd, 0, kernelCmdTag); err != nil {
				b.Fatal(err)
			}
			i, n := int(int64(binary.LittleEndian.Uint64(cmd))), int(binary.LittleEndian.Uint64(cmd[8:]))
			if i < 0 {
				b.Skip("rank 1 serves rank 0's kernel benchmarks")
			}
			if _, err := cases[i].run(c, 0, false, n); err != nil {
				b.Fatal(err)
			}
		}
	}
	send := func(i, n int) error {
		binary.LittleEndian.PutUint64(cmd, uint64(int64(i)))
		binary.LittleEndian.PutUint64(cmd[8:], uint64(n))
		return c.Send(cmd, 1, kernelCmdTag)
	}
	defer func() {
		// Release rank 1 whatever happened to the cases.
		if err := send(-1, 0); err != nil {
			b.Error(err)
		}
	}()
	for i, kc := range cases {
		// A failed case may leave rank 1 inside its kernel; stop there
		// (TestMain then aborts the job).
		ok := b.Run(kc.name, func(b *testing.B) {
			if err := send(i, b.N); err != nil {
				b.Fatal(err)
			}
			sec, err := kc.run(c, 1, true, b.N)
			if err != nil {
				b.Fatal(err)
			}
			if !(sec > 0) {
				b.Fatalf("the kernel measured %g s for %d operations", sec, b.N)
			}
			b.ReportMetric(sec/float64(b.N)*1e9, "ns/op")
			kc.metrics(b, sec, b.N)
		})
		if !ok {
			break
		}
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
