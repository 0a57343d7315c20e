package replay

import (
	"github.com/commcost/commcost/trace"
)

// builder writes synthetic rank traces in memory: each rank's calls with
// their compute gaps, as the library would record them.
type builder struct {
	t   *trace.Trace
	now []int64 // each rank's clock, ns
}

func newBuilder(p int) *builder {
	b := &builder{t: &trace.Trace{Dir: "synthetic"}, now: make([]int64, p)}
	world := make([]int32, p)
	for i := range world {
		world[i] = int32(i)
	}
	for r := 0; r < p; r++ {
		rk := &trace.Rank{Path: "synthetic/" + trace.RankFile(r), Header: trace.Header{Rank: r, Size: p, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1, NSPerTick: 1}}
		rk.Comms = []trace.Comm{{ID: 0, Members: world}, {ID: uint64(r+1) << 32, Members: []int32{int32(r)}}}
		b.t.Ranks = append(b.t.Ranks, rk)
	}
	return b
}

// call appends a call of rank r after gap ns of compute, lasting dur ns.
func (b *builder) call(r int, gap, dur int64, e trace.Event) {
	b.now[r] += gap
	e.T0, e.T1 = b.now[r], b.now[r]+dur
	b.now[r] += dur
	if e.Peer == 0 && e.Op != trace.OpSend && e.Op != trace.OpRecv && e.Op != trace.OpIsend && e.Op != trace.OpIrecv &&
		e.Op != trace.OpSsend && e.Op != trace.OpSendrecv && !e.Op.Collective() {
		e.Peer = trace.PeerNone
	}
	b.t.Ranks[r].Events = append(b.t.Ranks[r].Events, e)
}

// complete appends the completion of request h (a receive from src).
func (b *builder) complete(r int, h uint64, src, tag int32) {
	b.t.Ranks[r].Events = append(b.t.Ranks[r].Events, trace.Event{Op: trace.OpComplete, Req: h, Peer: src, Tag: tag, T0: b.now[r], T1: b.now[r]})
}

func (b *builder) send(r, dst int, tag int32, bytes int64, gap int64) {
	b.call(r, gap, 100, trace.Event{Op: trace.OpSend, Peer: int32(dst), Tag: tag, Bytes: bytes})
}

func (b *builder) recv(r, src int, tag int32, bytes int64, gap int64) {
	b.call(r, gap, 100, trace.Event{Op: trace.OpRecv, Peer: int32(src), Tag: tag, Bytes2: bytes})
}

func (b *builder) finish() *trace.Trace {
	for r := range b.t.Ranks {
		b.call(r, 0, 0, trace.Event{Op: trace.OpFinalize})
		rk := b.t.Ranks[r]
		rk.Events = append(rk.Events, trace.Event{Op: trace.OpEnd, T0: b.now[r], T1: b.now[r]})
	}
	return b.t
}

// ring is a synthetic program of about events events per rank on p ranks:
// iterations of compute, an exchange with both neighbours (Irecv, Irecv,
// Isend, Isend, Waitall and its four completions) and, every tenth, an
// Allreduce of 8 bytes.
func ring(p, events int) *trace.Trace {
	b := newBuilder(p)
	const perIter = 9
	iters := events / perIter
	for it := 0; it < iters; it++ {
		for r := 0; r < p; r++ {
			left, right := (r+p-1)%p, (r+1)%p
			h := uint64(it%4*4 + 1)
			b.call(r, 2000, 50, trace.Event{Op: trace.OpIrecv, Peer: trace.PeerAny, Flags: trace.FlagAnySource, Tag: 1, Bytes: 4096, Req: h})
			b.call(r, 0, 50, trace.Event{Op: trace.OpIrecv, Peer: trace.PeerAny, Flags: trace.FlagAnySource, Tag: 1, Bytes: 4096, Req: h + 1})
			b.call(r, 0, 50, trace.Event{Op: trace.OpIsend, Peer: int32(left), Tag: 1, Bytes: 1024, Req: h + 2})
			b.call(r, 0, 50, trace.Event{Op: trace.OpIsend, Peer: int32(right), Tag: 1, Bytes: 1024, Req: h + 3})
			b.call(r, 0, 3000, trace.Event{Op: trace.OpWaitall, Tag: 4, Req: 4, Flags: trace.FlagTrue})
			b.complete(r, h, int32(left), 1)
			b.complete(r, h+1, int32(right), 1)
			b.complete(r, h+2, -2, -1)
			b.complete(r, h+3, -2, -1)
			if it%10 == 9 {
				b.call(r, 1000, 5000, trace.Event{Op: trace.OpAllreduce, Peer: trace.PeerNone, Bytes: 8, Bytes2: 8})
			}
		}
	}
	return b.finish()
}
