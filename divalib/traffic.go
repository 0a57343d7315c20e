package divalib

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
)

// Traffic charges messages to the links of the virtual mesh they would
// traverse under dimension-order routing. It is per rank; Reduce combines
// the ranks. Counting is independent of the hardware, so the same run gives
// the same congestion on mpi/local with 4096 goroutine ranks and on a real
// cluster.
//
// A rank keeps one counter pair per (sender, receiver) pair it charged, not
// per link of the mesh: a rank talks to few others, so its counters stay
// small whatever P is (dense per-link arrays cost 64 bytes per processor on
// every rank: 1 GiB at 4096 local ranks). The links are expanded once, at
// the root of Reduce.
type Traffic struct {
	mesh     Mesh
	pairs    map[uint64]int32 // pairKey(from, to) -> index in flows
	flows    []flow
	startups int64 // messages this rank sent to another rank
	bytes    int64 // bytes this rank sent to another rank
}

// flow is the traffic from one rank to another.
type flow struct {
	from, to    int32
	bytes, msgs int64
}

func pairKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// NewTraffic returns zeroed counters for m.
func NewTraffic(m Mesh) *Traffic {
	return &Traffic{mesh: m, pairs: map[uint64]int32{}}
}

// Charge accounts one message of n bytes from rank a to rank b: one startup
// at a, and n bytes and one message on every link of the dimension-order
// path. A message to oneself costs nothing: it never leaves the processor.
func (t *Traffic) Charge(a, b, n int) {
	if a == b {
		return
	}
	t.startups++
	t.bytes += int64(n)
	k := pairKey(a, b)
	i, ok := t.pairs[k]
	if !ok {
		i = int32(len(t.flows))
		t.pairs[k] = i
		t.flows = append(t.flows, flow{from: int32(a), to: int32(b)})
	}
	f := &t.flows[i]
	f.bytes += int64(n)
	f.msgs++
}

// Reset zeroes the counters (start of a measured phase).
func (t *Traffic) Reset() {
	clear(t.pairs)
	t.flows = t.flows[:0]
	t.startups, t.bytes = 0, 0
}

// links expands flows onto the directed links of the mesh: bytes and
// messages per linkID.
func (m Mesh) links(flows []flow) (linkBytes, linkMsgs []int64) {
	n := m.Size() * numDirs
	linkBytes, linkMsgs = make([]int64, n), make([]int64, n)
	for _, f := range flows {
		m.forEachLink(int(f.from), int(f.to), func(l int) {
			linkBytes[l] += f.bytes
			linkMsgs[l] += f.msgs
		})
	}
	return linkBytes, linkMsgs
}

// Add adds u's counters to t. Both must count the same mesh; an
// experiment keeps one Traffic per phase and adds the store's counters to
// it at every phase boundary, so that a phase's congestion is the maximum
// over links of its bytes summed over all its occurrences (paper 004,
// section 3.3: the congestion of the force phase "added over 5 time
// steps").
func (t *Traffic) Add(u *Traffic) {
	if t.mesh != u.mesh {
		panic("divalib: Traffic.Add of the counters of mesh " + u.mesh.String() + " to those of mesh " + t.mesh.String())
	}
	for _, f := range u.flows {
		k := pairKey(int(f.from), int(f.to))
		i, ok := t.pairs[k]
		if !ok {
			i = int32(len(t.flows))
			t.pairs[k] = i
			t.flows = append(t.flows, flow{from: f.from, to: f.to})
		}
		t.flows[i].bytes += f.bytes
		t.flows[i].msgs += f.msgs
	}
	t.startups += u.startups
	t.bytes += u.bytes
}

// Congestion is the traffic of a phase summed over all ranks (paper 004,
// section 1: "the congestion is defined to be the maximum amount of data
// that is transmitted by the same link during the execution").
type Congestion struct {
	MaxLinkBytes    int64 // congestion in bytes: max over directed links
	MaxLinkMessages int64 // congestion in messages
	LoadBytes       int64 // total communication load: sum over links of bytes
	LoadMessages    int64 // sum over links of messages (message-hops)
	Startups        int64 // messages sent between different ranks, all ranks
	MaxStartups     int64 // the most messages one rank sent
	BytesSent       int64 // bytes sent between different ranks, all ranks
}

// Counters are the congestion figures under the record counter names of
// the DIVA experiments (the matrix square here, bitonic sorting and
// Barnes-Hut in apps/dsmexp).
func (g Congestion) Counters() map[string]float64 {
	return map[string]float64{
		"congestion_bytes": float64(g.MaxLinkBytes), "congestion_messages": float64(g.MaxLinkMessages),
		"load_bytes": float64(g.LoadBytes), "load_messages": float64(g.LoadMessages),
		"startups": float64(g.Startups), "max_startups_per_rank": float64(g.MaxStartups), "bytes_sent": float64(g.BytesSent),
	}
}

// flowWords is the int64 words of one flow on the wire of Reduce.
const flowWords = 4

// Reduce sums the counters of every rank (collective: plain MPI
// collectives, so call it only when no rank is waiting for another to serve
// it, e.g. after a Store barrier). Rank 0 gathers every rank's flows,
// expands them onto the links and broadcasts the result; only it holds
// per-link counters.
func (t *Traffic) Reduce(c mpi.Comm) (Congestion, error) {
	const root = 0
	me, p := c.Rank(), c.Size()
	head := []int64{int64(len(t.flows)), t.startups, t.bytes}
	var heads []int64
	if me == root {
		heads = make([]int64, len(head)*p)
	}
	if err := c.Gather(mpi.Int64Bytes(head), mpi.Int64Bytes(heads), root); err != nil {
		return Congestion{}, err
	}
	send := make([]int64, 0, flowWords*len(t.flows))
	for _, f := range t.flows {
		send = append(send, int64(f.from), int64(f.to), f.bytes, f.msgs)
	}
	var counts, displs []int
	var g Congestion
	total := []int64{0}
	if me == root {
		counts, displs = make([]int, p), make([]int, p)
		for r := 0; r < p; r++ {
			n := heads[len(head)*r]
			counts[r], displs[r] = int(8*flowWords*n), int(8*flowWords*total[0])
			total[0] += n
			g.Startups += heads[len(head)*r+1]
			g.BytesSent += heads[len(head)*r+2]
			g.MaxStartups = max(g.MaxStartups, heads[len(head)*r+1])
		}
	}
	// Every rank learns the total, so all refuse together a report that
	// does not fit one message.
	if err := mpi.BcastInt64s(c, total, root); err != nil {
		return Congestion{}, err
	}
	if 8*flowWords*total[0] > mpi.MaxCount {
		return Congestion{}, fmt.Errorf("divalib: congestion report: %d sender-receiver pairs exceed one message (%d bytes)", total[0], mpi.MaxCount)
	}
	var all []int64
	if me == root {
		all = make([]int64, flowWords*total[0])
	}
	if err := c.Gatherv(mpi.Int64Bytes(send), mpi.Int64Bytes(all), counts, displs, root); err != nil {
		return Congestion{}, err
	}
	if me == root {
		flows := make([]flow, len(all)/flowWords)
		for i := range flows {
			w := all[flowWords*i:]
			flows[i] = flow{from: int32(w[0]), to: int32(w[1]), bytes: w[2], msgs: w[3]}
		}
		lb, lm := t.mesh.links(flows)
		for l := range lb {
			g.MaxLinkBytes = max(g.MaxLinkBytes, lb[l])
			g.MaxLinkMessages = max(g.MaxLinkMessages, lm[l])
			g.LoadBytes += lb[l]
			g.LoadMessages += lm[l]
		}
	}
	out := []int64{g.MaxLinkBytes, g.MaxLinkMessages, g.LoadBytes, g.LoadMessages, g.Startups, g.MaxStartups, g.BytesSent}
	if err := mpi.BcastInt64s(c, out, root); err != nil {
		return Congestion{}, err
	}
	return Congestion{out[0], out[1], out[2], out[3], out[4], out[5], out[6]}, nil
}
