package replay

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/trace"
)

func hockney(ts, tw float64) *Pricer {
	p, err := NewPricer("h", &model.Hockney{Ts: model.Param{Value: ts}, Tw: model.Param{Value: tw}}, nil)
	if err != nil {
		panic(err)
	}
	return p
}

func loggp(L, o, g, G float64) *Pricer {
	p, err := NewPricer("l", &model.LogGP{L: model.Param{Value: L}, Os: model.Param{Value: o}, Or: model.Param{Value: o},
		G: model.Param{Value: g}, BG: model.Param{Value: G}}, nil)
	if err != nil {
		panic(err)
	}
	return p
}

func replayOf(t *testing.T, tr *trace.Trace, p *Pricer, eager int64) *Result {
	t.Helper()
	prog, err := Lower(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate(prog, engineConfig{pricer: p, eager: eager, compute: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

// TestPingPong: n round trips of m bytes take 2 n T(m) under every model
// whose isolated message costs T(m), and the compute between them adds.
func TestPingPong(t *testing.T) {
	const n, m, gap = 7, 3000, 5000 // gap ns of compute before each send
	b := newBuilder(2)
	for i := 0; i < n; i++ {
		b.send(0, 1, 3, m, gap)
		b.recv(1, 0, 3, m, 0)
		b.send(1, 0, 3, m, gap)
		b.recv(0, 1, 3, m, 0)
	}
	tr := b.finish()
	for _, tc := range []struct {
		name string
		p    *Pricer
	}{
		{"hockney", hockney(2e-6, 1e-9)},
		{"loggp", loggp(1e-6, 0.4e-6, 0.5e-6, 0.8e-9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := replayOf(t, tr, tc.p, -1)
			want := 2 * n * (tc.p.OneWay(m) + gap*1e-9)
			if !near(res.WallSec[0], want) {
				t.Errorf("rank 0 ends at %g s, want %g", res.WallSec[0], want)
			}
			// rank 0 computes before each of its n sends; its receives
			// wait for rank 1's compute as well as the messages
			if wantMPI := want - n*gap*1e-9; !near(res.MPISec[0], wantMPI) {
				t.Errorf("rank 0 in MPI %g s, want %g", res.MPISec[0], wantMPI)
			}
		})
	}
}

// TestLogGPOverlap: k Isends of m bytes back to back from rank 0, received
// by rank 1 with one Waitall: LogGOPSim's rules give the last arrival at
// (k-1) max(o, g + (m-1)G) + o + L + (m-1)G, completed o later.
func TestLogGPOverlap(t *testing.T) {
	const k, m = 5, 2000
	for _, tc := range []struct {
		name        string
		L, o, g, G  float64
		wantSenderS float64
	}{
		{"gap-bound", 2e-6, 0.3e-6, 1e-6, 1e-9, k * 0.3e-6},
		{"overhead-bound", 2e-6, 3e-6, 1e-6, 0.1e-9, k * 3e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(2)
			for i := 0; i < k; i++ {
				b.call(0, 0, 0, trace.Event{Op: trace.OpIsend, Peer: 1, Bytes: m, Req: uint64(10 + i)})
				b.call(1, 0, 0, trace.Event{Op: trace.OpIrecv, Peer: 0, Bytes: m, Req: uint64(10 + i)})
			}
			b.call(0, 0, 0, trace.Event{Op: trace.OpWaitall, Tag: k, Req: k})
			b.call(1, 0, 0, trace.Event{Op: trace.OpWaitall, Tag: k, Req: k})
			for i := 0; i < k; i++ {
				b.complete(0, uint64(10+i), -2, 0)
				b.complete(1, uint64(10+i), 0, 0)
			}
			p := loggp(tc.L, tc.o, tc.g, tc.G)
			res := replayOf(t, b.finish(), p, -1)
			step := math.Max(tc.o, tc.g+(m-1)*tc.G)
			want := float64(k-1)*step + tc.o + tc.L + (m-1)*tc.G + tc.o
			if !near(res.WallSec[1], want) {
				t.Errorf("receiver ends at %g, want %g", res.WallSec[1], want)
			}
			if !near(res.WallSec[0], tc.wantSenderS) {
				t.Errorf("sender ends at %g, want k o = %g", res.WallSec[0], tc.wantSenderS)
			}
		})
	}
}

// TestRendezvous: a message above the eager limit leaves when its receive
// is posted, and the blocking send returns then plus T(m); below it the
// send returns at once.
func TestRendezvous(t *testing.T) {
	const m, late = 100000, 1e6 // the receive is posted 1 ms late
	b := newBuilder(2)
	b.send(0, 1, 0, m, 0)
	b.recv(1, 0, 0, m, late)
	tr := b.finish()
	p := hockney(1e-6, 1e-9)
	T := p.OneWay(m)
	for _, tc := range []struct {
		name       string
		eager      int64
		sendReturn float64
	}{
		{"eager", 200000, 0},
		{"rendezvous", 65536, late*1e-9 + T},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := replayOf(t, tr, p, tc.eager)
			if !near(res.WallSec[0], tc.sendReturn) {
				t.Errorf("send returns at %g, want %g", res.WallSec[0], tc.sendReturn)
			}
			if want := math.Max(T, late*1e-9) + boolf(tc.eager < m)*T; !near(res.WallSec[1], want) {
				t.Errorf("receive returns at %g, want %g", res.WallSec[1], want)
			}
		})
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestWildcardSizes: rank 0 receives twice from ANY_SOURCE; the trace's
// actual sources decide which message (of its own size) each receive got.
func TestWildcardSizes(t *testing.T) {
	b := newBuilder(3)
	b.send(1, 0, 5, 100, 0)
	b.send(2, 0, 5, 1000000, 2e6) // 2 ms later, 1 MB
	b.call(0, 0, 0, trace.Event{Op: trace.OpRecv, Peer: 1, Flags: trace.FlagAnySource, Tag: 5, Bytes2: 100})
	b.call(0, 0, 0, trace.Event{Op: trace.OpRecv, Peer: 2, Flags: trace.FlagAnySource, Tag: 5, Bytes2: 1000000})
	p := hockney(1e-6, 1e-9)
	res := replayOf(t, b.finish(), p, -1)
	if want := 2e-3 + p.OneWay(1e6); !near(res.WallSec[0], want) {
		t.Errorf("rank 0 ends at %g, want %g", res.WallSec[0], want)
	}
}

// TestScale: twice the bandwidth halves a Hockney message's per-byte time;
// half the latency halves t_s; compute=0.5 halves the gaps.
func TestScale(t *testing.T) {
	const m = 50000
	b := newBuilder(2)
	b.send(0, 1, 0, m, 1e6)
	b.recv(1, 0, 0, m, 0)
	tr := b.finish()
	h := &model.Hockney{Ts: model.Param{Value: 2e-6}, Tw: model.Param{Value: 1e-9}}
	for _, tc := range []struct {
		scale []string
		want  float64
	}{
		{nil, 1e-3 + 2e-6 + m*1e-9},
		{[]string{"bandwidth=2"}, 1e-3 + 2e-6 + m*0.5e-9},
		{[]string{"latency=0.5"}, 1e-3 + 1e-6 + m*1e-9},
		{[]string{"compute=0.5", "t_w=3"}, 0.5e-3 + 2e-6 + m*3e-9},
	} {
		s, err := ParseScale(tc.scale)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPricer("h", h, s)
		if err != nil {
			t.Fatal(err)
		}
		prog, _ := Lower(tr, nil)
		res, err := simulate(prog, engineConfig{pricer: p, eager: -1, compute: s.get(ScaleCompute)})
		if err != nil {
			t.Fatal(err)
		}
		if !near(res.WallSec[1], tc.want) {
			t.Errorf("%v: receiver ends at %g, want %g", tc.scale, res.WallSec[1], tc.want)
		}
	}
	for _, bad := range []string{"bandwidth", "bandwidth=0", "latency=-1", "=2", "L=x"} {
		if _, err := ParseScale([]string{bad}); err == nil {
			t.Errorf("ParseScale(%q) accepted", bad)
		}
	}
	if _, err := NewPricer("h", h, Scale{"G": 2}); err == nil || !strings.Contains(err.Error(), "no parameter \"G\"") {
		t.Errorf("hockney with G=2: %v", err)
	}
}

// TestBadTraces: unmatched messages and missing definitions are bad input
// naming the file, the rank and the event.
func TestBadTraces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func() *trace.Trace
		want  string
		avail int64 // what the process may take, when not what it may
	}{
		{"unmatched send", func() *trace.Trace {
			b := newBuilder(2)
			b.send(0, 1, 9, 64, 0)
			return b.finish()
		}, "synthetic/rank-0.cct: rank 0, event 0: Send of 64 bytes to rank 1 (tag 9, point-to-point) has no matching receive in rank 1's trace", 0},
		{"unmatched receive", func() *trace.Trace {
			b := newBuilder(2)
			b.recv(1, 0, 9, 64, 0)
			return b.finish()
		}, "rank-1.cct: rank 1, event 0: Recv of 64 bytes from rank 0 (tag 9, point-to-point) has no matching send in rank 0's trace", 0},
		{"tag mismatch", func() *trace.Trace {
			b := newBuilder(2)
			b.send(0, 1, 1, 64, 0)
			b.recv(1, 0, 2, 64, 0)
			return b.finish()
		}, "no matching receive", 0},
		{"receive smaller than its send", func() *trace.Trace {
			b := newBuilder(2)
			b.send(0, 1, 0, 8, 0)
			b.recv(1, 0, 0, 4, 0)
			return b.finish()
		}, "synthetic/rank-1.cct: offset 144 (event 0): Recv of 4 bytes from rank 0 (tag 0) matches the Send of 8 bytes at synthetic/rank-0.cct: offset 144 (event 0): a receive holds at least the bytes of its matched send (a real run fails with MPI_ERR_TRUNCATE)", 0},
		{"no finalize", func() *trace.Trace {
			b := newBuilder(1)
			b.call(0, 0, 10, trace.Event{Op: trace.OpBarrier})
			return b.t
		}, "rank 0, event 0: the trace has no MPI_Finalize", 0},
		{"start without init", func() *trace.Trace {
			b := newBuilder(1)
			b.call(0, 0, 10, trace.Event{Op: trace.OpStart, Req: 77})
			return b.finish()
		}, "Start of request 0x4d, which no traced Send_init, Ssend_init, Bsend_init, Rsend_init or Recv_init created", 0},
		{"collectives decomposing beyond memory", func() *trace.Trace {
			return alltoalls(16, 10, 16<<16)
		}, "too large: the trace lowers into 2400 point-to-point messages (of them 2400 from its 10 MPI_Alltoall calls on 16 ranks, decomposed into their algorithm's messages), which need about", 100 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.avail > 0 {
				defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
				availableMemory = func() (int64, string, bool) { return tc.avail, "a test's limit", true }
			}
			_, err := Lower(tc.make(), nil)
			if err == nil || !opts.IsBadInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want bad input with %q", err, tc.want)
			}
		})
	}
}

// TestDeadlock: two blocking rendezvous sends head to head cannot finish.
func TestDeadlock(t *testing.T) {
	b := newBuilder(2)
	b.send(0, 1, 0, 1e6, 0)
	b.send(1, 0, 0, 1e6, 0)
	b.recv(0, 1, 0, 1e6, 0)
	b.recv(1, 0, 0, 1e6, 0)
	prog, err := Lower(b.finish(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = simulate(prog, engineConfig{pricer: hockney(1e-6, 1e-9), eager: 1000, compute: 1})
	if err == nil || !strings.Contains(err.Error(), "replay deadlock: rank 0, event 0 (Send)") {
		t.Errorf("err = %v", err)
	}
	if _, err := simulate(prog, engineConfig{pricer: hockney(1e-6, 1e-9), eager: -1, compute: 1}); err != nil {
		t.Errorf("eager: %v", err)
	}
}

// TestDecompose: on every member count from 2 to 13 and every root, each
// collective's sends are exactly its receives (same pairs, same bytes),
// and a broadcast or reduction touches every member once.
func TestDecompose(t *testing.T) {
	ops := []trace.Op{trace.OpBarrier, trace.OpBcast, trace.OpReduce, trace.OpAllreduce, trace.OpGather, trace.OpScatter,
		trace.OpAllgather, trace.OpAlltoall, trace.OpReduceScatter, trace.OpScan, trace.OpExscan, trace.OpIbarrier, trace.OpIbcast,
		trace.OpIreduce, trace.OpIallreduce, trace.OpGatherv, trace.OpScatterv, trace.OpAllgatherv, trace.OpIallgather,
		trace.OpAlltoallv, trace.OpIalltoall, trace.OpReduceScatterBlock}
	for p := 2; p <= 13; p++ {
		for _, op := range ops {
			for _, m := range []int64{8, 1 << 20} {
				root := (p * 7) % p
				if p > 3 {
					root = 3
				}
				type pair struct {
					a, b  int
					bytes int64
				}
				count := map[pair]int{}
				recvs := make([]int, p)
				for me := 0; me < p; me++ {
					sent, recvd := m, m
					base := map[trace.Op]trace.Op{trace.OpAlltoallv: trace.OpAlltoall, trace.OpIalltoall: trace.OpAlltoall,
						trace.OpReduceScatterBlock: trace.OpReduceScatter, trace.OpGatherv: trace.OpGather, trace.OpScatterv: trace.OpScatter,
						trace.OpAllgatherv: trace.OpAllgather, trace.OpIallgather: trace.OpAllgather}[op]
					if base == 0 {
						base = op
					}
					switch base {
					case trace.OpAlltoall, trace.OpReduceScatter:
						sent, recvd = m*int64(p), m*int64(p)
					case trace.OpGather:
						if me == root {
							recvd = m * int64(p)
						}
					case trace.OpScatter:
						if me == root {
							sent = m * int64(p)
						}
					case trace.OpAllgather:
						recvd = m * int64(p)
					}
					n := 0
					for _, rd := range Decompose(op, me, p, root, sent, recvd) {
						n += len(rd)
						for _, x := range rd {
							if x.Send {
								count[pair{me, x.Peer, x.Bytes}]++
							} else {
								count[pair{x.Peer, me, x.Bytes}]--
								recvs[me]++
							}
						}
					}
					if x := Xfers(op, me, p, root, sent, recvd); x != n {
						t.Fatalf("%s p=%d m=%d root=%d member %d: Xfers counts %d messages, Decompose makes %d", op, p, m, root, me, x, n)
					}
				}
				for k, v := range count {
					if v != 0 {
						t.Fatalf("%s p=%d m=%d root=%d: %d unmatched %d-byte messages %d -> %d", op, p, m, root, v, k.bytes, k.a, k.b)
					}
				}
				if op == trace.OpBcast || op == trace.OpScatter || op == trace.OpIbcast || op == trace.OpScatterv {
					for me, n := range recvs {
						if want := boolInt(me != root); n != want {
							t.Fatalf("%s p=%d: member %d receives %d times, want %d", op, p, me, n, want)
						}
					}
				}
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCollectiveModel: a collective model's price replaces the
// decomposition: every member leaves at the last arrival plus the price.
func TestCollectiveModel(t *testing.T) {
	b := newBuilder(3)
	for r := 0; r < 3; r++ {
		b.call(r, int64(r)*1e6, 0, trace.Event{Op: trace.OpAllreduce, Peer: trace.PeerNone, Bytes: 8})
	}
	prog, err := Lower(b.finish(), fixedColl(5e-6))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate(prog, engineConfig{pricer: hockney(1e-6, 0), eager: -1, compute: 1})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 3; r++ {
		if !near(res.WallSec[r], 2e-3+5e-6) {
			t.Errorf("rank %d leaves at %g, want %g", r, res.WallSec[r], 2e-3+5e-6)
		}
	}
}

type fixedColl float64

func (f fixedColl) PriceCollective(op trace.Op, ranks int, bytes int64) (float64, bool) {
	return float64(f), op == trace.OpAllreduce
}

// TestNoPointToPoint: a model that prices no message is refused.
func TestNoPointToPoint(t *testing.T) {
	_, err := NewPricer("trilinear", &model.Trilinear{}, nil)
	if err == nil || !opts.IsBadInput(err) || !strings.Contains(err.Error(), "prices no point-to-point message") {
		t.Errorf("err = %v", err)
	}
}

// TestCalibrationLeavesOutUnusableKinds: a calibration whose loggp fit has
// a negative receive overhead (measured on a loaded machine: testdata
// negloggp holds that run's ping-pong, round-trip and PRTT records) is
// replayed under the kinds that price messages, and names the one left
// out and why.
func TestCalibrationLeavesOutUnusableKinds(t *testing.T) {
	c := Config{Calibration: filepath.Join("testdata", "negloggp")}
	pricers, skipped, err := c.loadModels(Scale{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pricers) == 0 || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "loggp: the loggp model gives a 0-byte message a receive overhead of -4.38e-07 s") {
		t.Fatalf("%d kinds kept, left out %q; want hockney and the others kept, loggp left out for its receive overhead", len(pricers), skipped)
	}
	for _, p := range pricers {
		if p.Name == "loggp" {
			t.Error("loggp kept")
		}
	}
}

// alltoalls is n MPI_Alltoall calls of bytes per member on p ranks.
func alltoalls(p, n int, bytes int64) *trace.Trace {
	b := newBuilder(p)
	for i := 0; i < n; i++ {
		for r := 0; r < p; r++ {
			b.call(r, 1000, 5000, trace.Event{Op: trace.OpAlltoall, Peer: trace.PeerNone, Bytes: bytes, Bytes2: bytes})
		}
	}
	return b.finish()
}

// TestLowerDemand: the lowering's count before it lowers bounds what it
// builds (every slice at its final size), and a trace of collectives
// within the limit lowers.
func TestLowerDemand(t *testing.T) {
	for _, tr := range []*trace.Trace{alltoalls(16, 10, 16<<16), alltoalls(13, 3, 13*64), ring(5, 400)} {
		d := demandOf(tr, nil)
		prog, err := Lower(tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(prog.Msgs)) > d.posts/2 {
			t.Errorf("%d messages, the demand counted %d postings", len(prog.Msgs), d.posts)
		}
		for r, ops := range prog.Ranks {
			if int64(len(ops)) > d.ops[r] || cap(ops) != int(d.ops[r]) {
				t.Errorf("rank %d: %d ops (capacity %d), the demand counted %d", r, len(ops), cap(ops), d.ops[r])
			}
		}
	}
}
