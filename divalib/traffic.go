package divalib

import (
	"github.com/commcost/commcost/mpi"
)

// Traffic charges messages to the links of the virtual mesh they would
// traverse under dimension-order routing. It is per rank; Reduce combines
// the ranks. Counting is independent of the hardware, so the same run gives
// the same congestion on mpi/local with 1024 goroutine ranks and on a real
// cluster.
type Traffic struct {
	mesh      Mesh
	linkBytes []int64 // per directed link (linkID)
	linkMsgs  []int64
	startups  int64 // messages this rank sent to another rank
	bytes     int64 // bytes this rank sent to another rank
}

// NewTraffic returns zeroed counters for m.
func NewTraffic(m Mesh) *Traffic {
	n := m.Size() * numDirs
	return &Traffic{mesh: m, linkBytes: make([]int64, n), linkMsgs: make([]int64, n)}
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
	t.mesh.forEachLink(a, b, func(l int) {
		t.linkBytes[l] += int64(n)
		t.linkMsgs[l]++
	})
}

// Reset zeroes the counters (start of a measured phase).
func (t *Traffic) Reset() {
	clear(t.linkBytes)
	clear(t.linkMsgs)
	t.startups, t.bytes = 0, 0
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
	for i, v := range u.linkBytes {
		t.linkBytes[i] += v
	}
	for i, v := range u.linkMsgs {
		t.linkMsgs[i] += v
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

// Reduce sums the counters of every rank (collective: a plain MPI
// allreduce, so call it only when no rank is waiting for another to serve
// it, e.g. after a Store barrier).
func (t *Traffic) Reduce(c mpi.Comm) (Congestion, error) {
	nl := len(t.linkBytes)
	send := make([]int64, 2*nl+2)
	copy(send, t.linkBytes)
	copy(send[nl:], t.linkMsgs)
	send[2*nl], send[2*nl+1] = t.startups, t.bytes
	sum := make([]int64, len(send))
	if err := c.AllreduceInt64s(send, sum, mpi.OpSum); err != nil {
		return Congestion{}, err
	}
	mx := []int64{t.startups}
	maxStart := []int64{0}
	if err := c.AllreduceInt64s(mx, maxStart, mpi.OpMax); err != nil {
		return Congestion{}, err
	}
	var g Congestion
	for l := 0; l < nl; l++ {
		g.MaxLinkBytes = max(g.MaxLinkBytes, sum[l])
		g.MaxLinkMessages = max(g.MaxLinkMessages, sum[nl+l])
		g.LoadBytes += sum[l]
		g.LoadMessages += sum[nl+l]
	}
	g.Startups, g.BytesSent, g.MaxStartups = sum[2*nl], sum[2*nl+1], maxStart[0]
	return g, nil
}
