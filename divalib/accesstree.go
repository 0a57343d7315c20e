package divalib

import (
	"fmt"
	"slices"
)

// The access-tree strategy (paper 004, section 2). Every variable has an
// access tree, a copy of the decomposition tree embedded into the mesh; the
// tree nodes that hold a copy always form a connected component. Each tree
// node is simulated by the processor it is embedded on and keeps:
//
//   - toward: the tree neighbour in the direction of the write token (or
//     itself at the token holder). Outside the component that is also the
//     direction of the nearest copy (in a tree, the path from a node to any
//     node of a connected component enters it at the same, nearest node);
//   - copy and nbrs: whether it holds a copy, and which neighbours hold one
//     (the edges of the component at this node).
//
// Read from v: the request follows toward pointers to the nearest copy u,
// which sends the value along the tree path to v; every node on the way
// keeps a copy (paper: "A copy of x is created on each access tree node on
// the path from u to v").
//
// Write from v: the request follows toward pointers to the token holder t,
// which multicasts invalidations through the component (each node forwards
// to its copy neighbours and acknowledges when its subtree has), applies the
// write to its own copy and sends the new value, with the token, along the
// tree path to v; the nodes on the way keep copies. Deviation from the
// paper, for concurrency: the paper lets the nearest copy u perform the
// write; here the request goes on to the token holder, the one node that
// serialises the writes of a variable (two writers entering the component at
// different nodes would otherwise start colliding invalidation waves). The
// token sits at the last writer, so when a processor writes what it wrote
// before (matrix square, bitonic sort, the paper's applications) t = u = v
// and the messages are the paper's.
//
// Why no stale read: tree edges map to processor pairs, and MPI does not
// let messages between one pair overtake each other, so an invalidation
// sent after a copy always arrives after it. The token holder answers no
// request while its wave is out (they wait in deferred), and applies the
// write only when every copy, including copies still travelling, has
// acknowledged. One race remains: node u sends a copy to y just before y's
// invalidation reaches u (y forwarded the wave to u and waits for u's
// acknowledgement, which follows the copy). Versions close it: the token
// holder numbers its writes, copies carry their version, invalidations the
// version being produced, and a copy older than the newest invalidation its
// rank has seen is passed on without being kept (and, since it is not kept,
// without pointing y back at u, which would close a pointer cycle). The
// reader still gets that value, which is correct: its read began before the
// write's wave was acknowledged, so before the write took effect. So once a
// write has returned, no copy of an older value exists anywhere.
//
// Replacement (atEvict) drops a pendant part of the component and sends a
// Drop over its one external edge, so the neighbour forgets the edge. A
// copy that neighbour sent on the edge before the Drop arrived is still in
// flight, and re-creates the dropped copy on arrival; if the neighbour
// forgot the edge, no invalidation would reach that copy. Copies are
// therefore numbered per edge, a Drop names the last one received, and the
// neighbour forgets the edge only when it has sent no later one (atDrop).

// hopLimit bounds how far a request may chase the token: far more than any
// legitimate chase, so hitting it means the pointers form a cycle.
const hopLimit = 1 << 16

// atNode is the state of one access-tree node of one variable.
type atNode struct {
	id       int32
	toward   int32
	waveFrom int32 // neighbour an invalidation came from; -1 when none
	pending  int32 // acknowledgements outstanding
	copy     bool
	nbrs     []int32
	// wr is the token holder's write whose invalidation wave is out (nil
	// when none: the node is not busy). Apart, because a node is rarely
	// busy and there are millions of nodes in a large count-based run.
	wr *atWrite
	// Copies sent to / received from each neighbour (kData with fStore),
	// numbered per edge; a Drop names the last one its sender received,
	// so that the receiver can tell whether copies are still in flight
	// on the edge (see atDrop). A node has at most arity+1 neighbours
	// and usually talks to one or two: a short list, not two maps (a Go
	// map of one entry costs about 200 bytes, and Barnes-Hut at P = 512
	// has millions of nodes).
	edges []atEdge
}

// atWrite is a write at the token holder while its wave is out: the write
// to apply, and the requests that arrived meanwhile.
type atWrite struct {
	m        *msg
	deferred []*msg
}

// busy reports whether n is the token holder with a wave out.
func (n *atNode) busy() bool { return n.wr != nil }

// atEdge counts the copies a node sent to and received from neighbour nbr.
type atEdge struct {
	nbr       int32
	sent, got int64
}

// edge returns the counters of n's edge to nbr, made on first use.
func (n *atNode) edge(nbr int32) *atEdge {
	for i := range n.edges {
		if n.edges[i].nbr == nbr {
			return &n.edges[i]
		}
	}
	n.edges = append(n.edges, atEdge{nbr: nbr})
	return &n.edges[len(n.edges)-1]
}

// edgeCount returns what n counted on its edge to nbr (zeros if none).
func (n *atNode) edgeCount(nbr int32) atEdge {
	for _, e := range n.edges {
		if e.nbr == nbr {
			return e
		}
	}
	return atEdge{nbr: nbr}
}

// atNode returns (creating on first use) the state of node n of x on this
// rank. Untouched nodes point up: the token starts at the root, which holds
// the initial zero copy.
func (s *Store) atNode(x *variable, n int32) *atNode {
	for _, st := range x.nodes {
		if st.id == n {
			return st
		}
	}
	st := &atNode{id: n, waveFrom: -1, toward: s.tree.parent[n]}
	if n == 0 {
		st.toward = 0
		st.copy = true
		x.copies++
		s.install(x, make([]byte, x.v.Size), true)
	}
	x.nodes = append(x.nodes, st)
	return st
}

func (s *Store) atSend(x *variable, m *msg) {
	m.vr = int32(x.v.ID)
	s.send(int(s.tree.Embedding(x.root)[m.dst]), m)
}

// atRead returns this rank's copy of x (hit), or sends the read request
// toward the nearest copy (the caller awaits it).
func (s *Store) atRead(x *variable) ([]byte, bool) {
	leaf := s.tree.leaf[s.rank]
	n := s.atNode(x, leaf)
	if n.copy {
		s.stats.ReadHits++
		s.cacheHit(x)
		return x.data, true
	}
	s.begin(x)
	x.acc.read = true
	s.atHandleRead(x, n, &msg{kind: kRead, vr: int32(x.v.ID), dst: leaf, src: leaf, origin: int32(s.rank)})
	return nil, false
}

// atWrite writes locally (reporting true) when this rank holds the only
// copy and the token, or sends the write toward the token (the caller
// awaits it).
func (s *Store) atWrite(x *variable, off int, data []byte) bool {
	leaf := s.tree.leaf[s.rank]
	n := s.atNode(x, leaf)
	if n.toward == n.id && !n.busy() && len(n.nbrs) == 0 {
		// The only copy and the token are here: a local write.
		x.data = applyWrite(x.data, off, data)
		x.ver++
		x.maxInv = x.ver
		s.stats.WriteHits++
		s.cacheHit(x)
		return true
	}
	s.begin(x)
	payload := slices.Clone(data) // the caller may reuse data after Write returns
	if payload == nil {
		payload = []byte{}
	}
	s.atHandleWrite(x, n, &msg{kind: kWrite, vr: int32(x.v.ID), dst: leaf, src: leaf, origin: int32(s.rank), off: int32(off), data: payload})
	return false
}

func (s *Store) atHandle(x *variable, m *msg) {
	n := s.atNode(x, m.dst)
	switch m.kind {
	case kRead:
		s.atHandleRead(x, n, m)
	case kWrite:
		s.atHandleWrite(x, n, m)
	case kData:
		s.atData(x, n, m)
	case kInv:
		s.atInv(x, n, m)
	case kAck:
		s.atAck(x, n)
	case kDrop:
		s.atDrop(n, m)
	default:
		s.fail(fmt.Errorf("divalib: access tree: unexpected message kind %d", m.kind))
	}
}

func (s *Store) atHandleRead(x *variable, n *atNode, m *msg) {
	switch {
	case n.busy():
		n.wr.deferred = append(n.wr.deferred, s.keep(m))
	case n.copy:
		s.atSendData(x, n, m.origin, x.data, x.ver, fStore)
	default:
		if m.b > hopLimit {
			s.fail(fmt.Errorf("divalib: read of %q by rank %d travelled %d hops: pointer cycle at node %d (toward %d)", x.v.Name, m.origin, m.b, n.id, n.toward))
			return
		}
		s.atSend(x, &msg{kind: kRead, dst: n.toward, src: n.id, origin: m.origin, b: m.b + 1})
	}
}

func (s *Store) atHandleWrite(x *variable, n *atNode, m *msg) {
	switch {
	case n.busy():
		n.wr.deferred = append(n.wr.deferred, s.keep(m))
	case n.toward != n.id:
		if m.b > hopLimit {
			s.fail(fmt.Errorf("divalib: write of %q by rank %d travelled %d hops: pointer cycle at node %d (toward %d)", x.v.Name, m.origin, m.b, n.id, n.toward))
			return
		}
		s.atSend(x, &msg{kind: kWrite, dst: n.toward, src: n.id, origin: m.origin, off: m.off, data: m.data, b: m.b + 1})
	default:
		// The token holder: invalidate every other copy first.
		n.wr = &atWrite{m: s.keep(m)}
		targets := n.nbrs
		n.nbrs = nil
		n.pending = int32(len(targets))
		for _, t := range targets {
			s.atSend(x, &msg{kind: kInv, dst: t, src: n.id, a: x.ver + 1})
		}
		if n.pending == 0 {
			s.atFinishWrite(x, n)
		}
	}
}

// atSendData sends a copy from n (which holds one) toward origin's leaf, or
// delivers it if n is that leaf.
func (s *Store) atSendData(x *variable, n *atNode, origin int32, data []byte, ver int64, flags uint8) {
	target := s.tree.leaf[origin]
	if n.id == target {
		s.complete(x, data)
		return
	}
	nx := s.tree.next(n.id, target)
	var seq int64
	if flags&fStore != 0 {
		n.nbrs = addUnique(n.nbrs, nx)
		e := n.edge(nx)
		e.sent++
		seq = e.sent
	}
	if flags&fToken != 0 {
		n.toward = nx
	}
	s.atSend(x, &msg{kind: kData, flags: flags, dst: nx, src: n.id, origin: origin, data: data, a: ver, b: seq})
}

// atData handles a copy travelling to the leaf of m.origin.
func (s *Store) atData(x *variable, n *atNode, m *msg) {
	flags := m.flags
	if flags&fStore != 0 {
		n.edge(m.src).got = m.b
	}
	switch {
	case flags&fToken != 0:
		// The answer to a write: the path keeps copies and the token moves
		// along it; these copies are mandatory (the token holder's is the
		// last copy until others exist).
		s.atTakeCopy(x, n, m.data, m.a, true)
		n.nbrs = addUnique(n.nbrs, m.src)
	case flags&fStore != 0 && m.a < x.maxInv:
		// Older than an invalidation this rank has seen: pass it on, keep
		// nothing (see the race above). The sender's wave reaches this
		// node anyway, so no Drop is needed.
		flags &^= fStore
	case flags&fStore != 0:
		had := n.copy
		if s.atTakeCopy(x, n, m.data, m.a, false) {
			n.nbrs = addUnique(n.nbrs, m.src)
			if !had {
				n.toward = m.src
			}
		} else {
			// No room: this node and the rest of the path keep no copy
			// (the component must stay connected); the sender forgets
			// the edge.
			flags &^= fStore
			s.atSend(x, &msg{kind: kDrop, dst: m.src, src: n.id, b: m.b})
		}
	}
	if n.id == s.tree.leaf[m.origin] {
		if flags&fToken != 0 {
			n.toward = n.id
		}
		s.complete(x, m.data)
		return
	}
	s.atSendData(x, n, m.origin, m.data, m.a, flags)
}

// atTakeCopy gives node n a copy of x (the rank's one buffer).
func (s *Store) atTakeCopy(x *variable, n *atNode, data []byte, ver int64, mandatory bool) bool {
	if n.copy {
		s.touch(x)
		return true
	}
	if x.copies == 0 {
		if !s.install(x, data, mandatory) {
			return false
		}
		x.ver = ver
	}
	n.copy = true
	x.copies++
	return true
}

func (s *Store) atDropCopy(x *variable, n *atNode) {
	if !n.copy {
		return
	}
	n.copy = false
	x.copies--
	if x.copies == 0 {
		s.release(x)
	}
}

func (s *Store) atInv(x *variable, n *atNode, m *msg) {
	n.toward = m.src // the wave comes from the token's side
	x.maxInv = max(x.maxInv, m.a)
	s.atDropCopy(x, n)
	targets := remove(n.nbrs, m.src)
	n.nbrs = nil
	if len(targets) == 0 {
		s.atSend(x, &msg{kind: kAck, dst: m.src, src: n.id})
		return
	}
	n.waveFrom, n.pending = m.src, int32(len(targets))
	for _, t := range targets {
		s.atSend(x, &msg{kind: kInv, dst: t, src: n.id, a: m.a})
	}
}

func (s *Store) atAck(x *variable, n *atNode) {
	n.pending--
	if n.pending > 0 {
		return
	}
	if n.busy() {
		s.atFinishWrite(x, n)
		return
	}
	if n.waveFrom < 0 {
		s.fail(fmt.Errorf("divalib: access tree %q node %d: acknowledgement without a wave", x.v.Name, n.id))
		return
	}
	s.atSend(x, &msg{kind: kAck, dst: n.waveFrom, src: n.id})
	n.waveFrom = -1
}

// atFinishWrite runs at the token holder once every other copy is gone.
func (s *Store) atFinishWrite(x *variable, n *atNode) {
	w := n.wr
	m := w.m
	n.wr = nil
	x.data = applyWrite(x.data, int(m.off), m.data)
	x.ver++
	x.maxInv = max(x.maxInv, x.ver)
	s.touch(x)
	s.atSendData(x, n, m.origin, x.data, x.ver, fStore|fToken)
	// Requests that waited for the wave now see the new value (reads) or
	// follow the token (writes).
	d := w.deferred
	for _, dm := range d {
		s.atHandle(x, dm)
	}
}

// atEvict drops this rank's copies of x if they form a pendant part of the
// component: no token, exactly one edge to a copy on another processor. The
// remaining component stays connected, and it is never the last copy.
func (s *Store) atEvict(x *variable) bool {
	if x.copies == 0 {
		return false
	}
	ext, extNbr := int32(-1), int32(-1)
	var extNode *atNode
	emb := s.tree.Embedding(x.root)
	for _, n := range x.nodes {
		if !n.copy {
			continue
		}
		if n.toward == n.id || n.busy() {
			return false
		}
		for _, b := range n.nbrs {
			if int(emb[b]) == s.rank {
				continue
			}
			if ext >= 0 {
				return false
			}
			ext, extNbr, extNode = n.id, b, n
		}
	}
	if ext < 0 {
		return false
	}
	for _, n := range x.nodes {
		if n.copy {
			n.copy, n.nbrs = false, nil
			n.toward = s.tree.next(n.id, extNbr)
		}
	}
	x.copies = 0
	s.release(x)
	s.atSend(x, &msg{kind: kDrop, dst: extNbr, src: ext, b: extNode.edgeCount(extNbr).got})
	return true
}

// atDrop handles neighbour m.src's Drop (its copy was evicted or not
// kept). m.b is the number of copies it had received from n on the edge;
// if n has sent more, they were in flight when the neighbour dropped its
// copy, and the first of them will make it a copy holder again, attached to
// n. Forgetting the edge now would leave that copy outside every later
// invalidation wave: a stale copy. So n keeps the edge. If the neighbour
// does not keep that copy either, it sends another Drop (no room), or the
// copy is older than a wave that is still to reach n and clears the edge.
func (s *Store) atDrop(n *atNode, m *msg) {
	if m.b != n.edgeCount(m.src).sent {
		return
	}
	n.nbrs = remove(n.nbrs, m.src)
}

func addUnique(s []int32, v int32) []int32 {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// remove returns s without v (a new slice: s may be shared).
func remove(s []int32, v int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}
