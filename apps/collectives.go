package apps

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The message-passing applications of papers 001 and 003 communicate
// through the aggregate operations of paper 003's cost table, run here with
// the same textbook algorithms patterns.AggregateOp measures with
// impl=textbook (binomial-tree broadcast and scatter, recursive-doubling
// all-to-all broadcast, or the ring when the group is not a power of two;
// the circular shift as one exchange). Using the same algorithm is what lets
// a workload item name an "aggregate" record's point exactly, and lets the
// point-to-point view list the rounds those algorithms consist of.
//
// A group is a list of ranks of one communicator (a row or a column of a
// process grid, or all ranks); the operations run among them with plain
// point-to-point messages, so no communicator has to be created per run.

// group is an ordered set of ranks of c; me is this rank's index in it.
type group struct {
	c     mpi.Comm
	ranks []int
	me    int
	tag   int
}

// newGroup returns the group of ranks; the caller must be one of them.
func newGroup(c mpi.Comm, ranks []int, tag int) group {
	g := group{c: c, ranks: ranks, me: -1, tag: tag}
	for i, r := range ranks {
		if r == c.Rank() {
			g.me = i
		}
	}
	if g.me < 0 {
		panic(fmt.Sprintf("apps: rank %d is not in group %v", c.Rank(), ranks))
	}
	return g
}

func (g group) size() int { return len(g.ranks) }

// at is the communicator rank of group member i (mod the group size).
func (g group) at(i int) int {
	n := len(g.ranks)
	return g.ranks[((i%n)+n)%n]
}

// exchange sends send to member dst and receives recv from member src.
func (g group) exchange(send []byte, dst int, recv []byte, src int) error {
	_, err := g.c.Sendrecv(send, g.at(dst), g.tag, recv, g.at(src), g.tag)
	return err
}

// bcast is the binomial-tree one-to-all broadcast of buf from member root:
// relative member v receives from v - 2^j (its lowest set bit) and passes
// the message on to v + 2^i for the smaller powers, ceil(lg p) rounds.
func (g group) bcast(buf []byte, root int) error {
	p := g.size()
	rel := (g.me - root + p) % p
	mask := 1
	for mask < p {
		if rel&mask != 0 {
			if _, err := g.c.Recv(buf, g.at(g.me-mask), g.tag); err != nil {
				return err
			}
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			if err := g.c.Send(buf, g.at(g.me+mask), g.tag); err != nil {
				return err
			}
		}
	}
	return nil
}

// scatter is the binomial-tree one-to-all personalized communication: the
// root holds p blocks of m bytes in send (block i for member i); each
// member ends with its block in recv. tmp holds p*m bytes. The data halve
// at every level of the tree.
func (g group) scatter(send, recv, tmp []byte, m, root int) error {
	p := g.size()
	rel := (g.me - root + p) % p
	cnt := 0 // blocks held, for relative members rel, rel+1, ...
	if rel == 0 {
		for i := 0; i < p; i++ {
			src := ((i + root) % p) * m
			copy(tmp[i*m:(i+1)*m], send[src:src+m])
		}
		cnt = p
	}
	mask := 1
	for mask < p {
		if rel&mask != 0 {
			cnt = min(mask, p-rel)
			if _, err := g.c.Recv(tmp[:cnt*m], g.at(g.me-mask), g.tag); err != nil {
				return err
			}
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			if err := g.c.Send(tmp[mask*m:cnt*m], g.at(g.me+mask), g.tag); err != nil {
				return err
			}
			cnt = mask
		}
	}
	copy(recv, tmp[:m])
	return nil
}

// allgather is the all-to-all broadcast: buf holds p blocks of m bytes,
// this member's own at index me; afterwards every block is everywhere.
// Recursive doubling (partner me XOR 2^j, the exchanged data doubling)
// when p is a power of two, else the ring (p-1 steps of one block).
func (g group) allgather(buf []byte, m int) error {
	p, me := g.size(), g.me
	if isPow2(p) {
		for mask := 1; mask < p; mask <<= 1 {
			mine := me &^ (mask - 1)
			theirs := mine ^ mask
			if err := g.exchange(buf[mine*m:(mine+mask)*m], me^mask, buf[theirs*m:(theirs+mask)*m], me^mask); err != nil {
				return err
			}
		}
		return nil
	}
	for s := 0; s < p-1; s++ {
		out := (me - s + p) % p
		in := (me - s - 1 + p) % p
		if err := g.exchange(buf[out*m:(out+1)*m], me+1, buf[in*m:(in+1)*m], me-1); err != nil {
			return err
		}
	}
	return nil
}

// ceilLog2 is ceil(lg p) for p >= 1.
func ceilLog2(p int) int { return bits.Len(uint(p - 1)) }

// The rounds of the textbook algorithms, as message sizes along the
// critical path: a round's time is that of its largest message when
// concurrent messages do not contend (the assumption of every
// point-to-point model), and an exchange costs one message each way at
// once (full-duplex links, as the postal model assumes).

// bcastRounds: ceil(lg p) messages of m bytes (the root's sends).
func bcastRounds(p, m int) []int {
	out := make([]int, ceilLog2(p))
	for i := range out {
		out[i] = m
	}
	return out
}

// scatterRounds: the root's sends, cnt-mask blocks of m for mask from the
// largest power of two below p down to 1 ((p-1) m bytes in ceil(lg p)
// messages; every subtree root sends the same sequence shifted).
func scatterRounds(p, m int) []int {
	if p < 2 {
		return nil
	}
	var out []int
	cnt := p
	for mask := 1 << (ceilLog2(p) - 1); mask > 0; mask >>= 1 {
		if mask < p {
			out = append(out, (cnt-mask)*m)
			cnt = mask
		}
	}
	return out
}

// allgatherRounds: recursive doubling m, 2m, ..., (p/2) m, or the ring's
// p-1 messages of m.
func allgatherRounds(p, m int) []int {
	var out []int
	if isPow2(p) {
		for mask := 1; mask < p; mask <<= 1 {
			out = append(out, mask*m)
		}
		return out
	}
	for s := 0; s < p-1; s++ {
		out = append(out, m)
	}
	return out
}

// Views of a workload (results.WorkItem.View).
const (
	// ViewAggregate states a phase as paper 003's aggregate operations,
	// each on the group it runs in ("aggregate" records, impl=textbook):
	// the two-level model, BSP and the postal model read it.
	ViewAggregate = "aggregate"
	// ViewP2P states a phase as the rounds of single messages those
	// operations consist of ("pingpong" points: a one-way message): every
	// point-to-point model reads it (Hockney, piecewise, LogGP, LogP,
	// the hyperbolic end-to-end block, BSP, postal).
	ViewP2P = "p2p"
	// ViewContention states a phase as one of paper 001's contention
	// patterns, which the hyperbolic model reduces with its block algebra.
	ViewContention = "contention"
	// ViewGrid states a phase of a process-grid algorithm as its exchange
	// steps, each measured on the whole grid with every row or column
	// exchanging at once ("gridshift" records): the gridstep model reads
	// it. Listed first, so only the models that describe it use it.
	ViewGrid = "grid"
)

// gridItem is one exchange step of a process grid (patterns.GridShift):
// every line along (rows or columns) of g exchanging bytes at once, in
// mode with distance d.
func gridItem(count float64, g Grid, bytes int, along, mode string, d int) results.WorkItem {
	s := patterns.GridShift{Bytes: bytes, Rows: g.Rows, Cols: g.Cols, Along: along, Mode: mode, D: d}.Canonical()
	if err := s.Check(g.size()); err != nil {
		panic("apps: " + err.Error()) // the applications name only steps their grid runs
	}
	return results.WorkItem{Count: count, Bench: patterns.BenchGridShift, Ranks: g.size(), View: ViewGrid, Params: s.Params(g.size())}
}

// allgatherSteps are the grid steps of the all-to-all broadcast (allgather)
// of blocks of m bytes along every line of g at once, with n members per
// line: recursive doubling's rounds (exchange with i XOR 2^j, 2^j m bytes)
// or the ring's n-1 shifts by one of m bytes.
func allgatherSteps(g Grid, along string, n, m int) []results.WorkItem {
	if n < 2 {
		return nil
	}
	if isPow2(n) {
		var out []results.WorkItem
		for mask := 1; mask < n; mask <<= 1 {
			out = append(out, gridItem(1, g, mask*m, along, patterns.GridModeXOR, mask))
		}
		return out
	}
	return []results.WorkItem{gridItem(float64(n-1), g, m, along, patterns.GridModeShift, 1)}
}

// aggItem is one textbook aggregate operation on a group of ranks, named
// with the parameters its "aggregate" records carry
// (patterns.AggregateOp.Params).
func aggItem(count float64, op string, bytes, ranks, q int) results.WorkItem {
	k, err := patterns.ParseAggKind(op)
	if err != nil {
		panic("apps: " + err.Error()) // the applications name only known operations
	}
	a := patterns.AggregateOp{Op: k, Impl: patterns.ImplTextbook, Bytes: bytes, Q: q}
	return results.WorkItem{Count: count, Bench: patterns.BenchAggregate, Ranks: ranks, View: ViewAggregate, Params: a.Params(ranks)}
}

// p2pItems turns rounds (message bytes) repeated count times into
// pingpong items, one per distinct size.
func p2pItems(count float64, rounds []int) []results.WorkItem {
	var out []results.WorkItem
	at := map[int]int{}
	for _, b := range rounds {
		if i, ok := at[b]; ok {
			out[i].Count += count
			continue
		}
		at[b] = len(out)
		out = append(out, results.WorkItem{Count: count, Bench: patterns.BenchPingPong, Params: results.Params{"bytes": b}, View: ViewP2P})
	}
	return out
}

// workload collects items per view and merges equal points.
type workload struct {
	items []results.WorkItem
	index map[string]int // itemKey -> position in items
}

// add merges items into w: an item of the same view, bench, ranks and
// params as one already there adds its count to it. The index keeps this
// linear in the items (gauss at n = 8000 adds tens of thousands).
func (w *workload) add(items ...results.WorkItem) {
	if w.index == nil {
		w.index = map[string]int{}
		for i, o := range w.items {
			w.index[itemKey(o)] = i
		}
	}
	for _, it := range items {
		if it.Count == 0 {
			continue
		}
		k := itemKey(it)
		if i, ok := w.index[k]; ok {
			w.items[i].Count += it.Count
			continue
		}
		w.index[k] = len(w.items)
		w.items = append(w.items, it)
	}
}

// itemKey identifies an item up to its count: its view, bench, ranks
// and params (each value with its type, as == on interfaces compares).
func itemKey(it results.WorkItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %d", it.View, it.Bench, it.Ranks)
	for _, k := range slices.Sorted(maps.Keys(it.Params)) {
		fmt.Fprintf(&b, " %q=%T:%#v", k, it.Params[k], it.Params[k])
	}
	return b.String()
}

// list returns the items grouped by view, views in the order first added.
func (w *workload) list() []results.WorkItem {
	names, by := results.WorkViews(w.items)
	var out []results.WorkItem
	for _, n := range names {
		out = append(out, by[n]...)
	}
	return out
}

// CollectiveError is an error every rank of the run returned alike: a
// verdict of AgreeErr, or a check on data every rank holds (the pivot
// Gaussian elimination broadcasts). A caller can then end every rank
// normally, without aborting the job.
type CollectiveError struct{ Err error }

func (e *CollectiveError) Error() string { return e.Err.Error() }
func (e *CollectiveError) Unwrap() error { return e.Err }

// collective marks err as reached by every rank.
func collective(err error) error {
	if err == nil {
		return nil
	}
	return &CollectiveError{err}
}
