package divalib

import (
	"fmt"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// topo is a tree embedded into the processors: the access tree of a
// variable, the barrier tree, or the star of the fixed-home strategy.
type topo interface {
	rankOf(n int32) int
	parentOf(n int32) int32 // -1 at the root
	numChildren(n int32) int
	childrenOf(n int32) []int32
	leafOf(r int) int32
}

// embedded is a decomposition tree with one embedding.
type embedded struct {
	t   *Tree
	emb []int32
}

func (e embedded) rankOf(n int32) int         { return int(e.emb[n]) }
func (e embedded) parentOf(n int32) int32     { return e.t.parent[n] }
func (e embedded) numChildren(n int32) int    { return len(e.t.children[n]) }
func (e embedded) childrenOf(n int32) []int32 { return e.t.children[n] }
func (e embedded) leafOf(r int) int32         { return e.t.leaf[r] }

// star is the P-ary tree: node 0 (the root) on processor center, node 1+r
// the leaf of rank r. It is the flat barrier and the fixed home's lock tree
// (the fixed-home strategy corresponds to a P-ary access tree, paper 004,
// section 2).
type star struct {
	center, size int
	kids         []int32
}

func newStar(center, size int) *star {
	k := make([]int32, size)
	for i := range k {
		k[i] = int32(i + 1)
	}
	return &star{center: center, size: size, kids: k}
}

func (s *star) rankOf(n int32) int {
	if n == 0 {
		return s.center
	}
	return int(n - 1)
}

func (s *star) parentOf(n int32) int32 {
	if n == 0 {
		return -1
	}
	return 0
}

func (s *star) numChildren(n int32) int {
	if n == 0 {
		return s.size
	}
	return 0
}

// childrenOf is only used by the barrier, whose star is built by newStar
// with the list of leaves; lock stars never need it.
func (s *star) childrenOf(n int32) []int32 {
	if n == 0 {
		return s.kids
	}
	return nil
}

func (s *star) leafOf(r int) int32 { return int32(r + 1) }

// barrier is the tree barrier, also an allreduce of two counters: arrivals
// are combined up the tree (each node waits for all its children), the root
// releases down the tree with the sums. Epochs keep consecutive barriers
// apart: all ranks call barriers in the same order, so epoch numbers agree.
type barrier struct {
	s      *Store
	tp     topo
	epoch  int32
	done   int32    // last epoch released at this rank
	result [2]int64 // sums delivered with the release
	wait   map[barKey]*barWait
	sched  []mpi.BarrierNode // this rank's nodes, for an mpi.Engine

	// Early release (see arrive): earlyRoot is the root if this rank
	// simulates it and exactly one of its children is on another rank
	// (earlyKid) and one at least here, else -1. A node whose parent is
	// on another rank keeps its sums in up while it waits for its release
	// after arriving, and an early release that came first in early.
	earlyRoot, earlyKid int32
	up, early           map[barKey][2]int64

	// Dissemination barrier: epoch entered last, round reached, whether
	// this round's notice is sent, and notices received by (epoch, round)
	// (a peer one epoch ahead may notify early).
	disEpoch, disRound int32
	disSent            bool
	disDone            int32
	disGot             map[[2]int32]int
}

type barKey struct {
	node  int32
	epoch int32
}

type barWait struct {
	n   int
	sum [2]int64
	// at earlyRoot: the remote child has arrived; it was released early
	remoteIn, earlySent bool
}

func (b *barrier) init(s *Store) {
	b.s = s
	b.wait = map[barKey]*barWait{}
	if s.cfg.Barrier == BarrierCentral {
		b.tp = newStar(0, s.size)
	} else {
		// The barrier tree is a decomposition tree embedded from a random
		// root, like the access tree of a variable with ID -1.
		b.tp = embedded{t: s.tree, emb: s.tree.Embedding(s.randomRank(-1))}
	}
	b.sched = b.schedule()
	b.up, b.early = map[barKey][2]int64{}, map[barKey][2]int64{}
	b.earlyRoot, b.earlyKid = -1, -1
	root := b.tp.leafOf(s.rank)
	for b.tp.parentOf(root) >= 0 {
		root = b.tp.parentOf(root)
	}
	if b.tp.rankOf(root) == s.rank {
		var remote []int32
		for _, k := range b.tp.childrenOf(root) {
			if b.tp.rankOf(k) != s.rank {
				remote = append(remote, k)
			}
		}
		if len(remote) == 1 && b.tp.numChildren(root) > 1 {
			b.earlyRoot, b.earlyKid = root, remote[0]
		}
	}
}

// schedule is this rank's part of the barrier tree for an mpi.Engine: the
// nodes it simulates, from its leaf up. They all lie on the path from its
// leaf to the root (a node sits on a processor of its own submesh), so a
// node whose parent is on this rank too has that parent next in the list.
func (b *barrier) schedule() []mpi.BarrierNode {
	me := b.s.rank
	var out []mpi.BarrierNode
	for n := b.tp.leafOf(me); n >= 0; n = b.tp.parentOf(n) {
		if b.tp.rankOf(n) != me {
			continue
		}
		bn := mpi.BarrierNode{ID: n, Need: b.tp.numChildren(n), Parent: b.tp.parentOf(n), ParentRank: me}
		if bn.Need == 0 {
			bn.Need = 1 // a leaf: its rank's own arrival
		}
		if bn.Parent >= 0 {
			bn.ParentRank = b.tp.rankOf(bn.Parent)
		}
		for _, k := range b.tp.childrenOf(n) {
			if r := b.tp.rankOf(k); r != me {
				bn.Kids = append(bn.Kids, k)
				bn.KidRanks = append(bn.KidRanks, r)
			}
		}
		out = append(out, bn)
	}
	return out
}

// disRounds is ceil(log2 P).
func (b *barrier) disRounds() int32 {
	r := int32(0)
	for 1<<r < b.s.size {
		r++
	}
	return r
}

// dissemination is the dissemination barrier (BarrierDissemination). It
// serves requests while waiting.
func (b *barrier) dissemination() error {
	if eng := b.s.eng; eng != nil {
		// The same messages, sent by the engine: charged here.
		for k := int32(0); k < b.disRounds(); k++ {
			b.s.charge((b.s.rank+1<<k)%b.s.size, headerBytes)
		}
		em, ok, err := eng.Dissemination()
		if err != nil {
			b.s.fail(err)
			return err
		}
		if ok {
			b.s.handleEngine(em)
		}
		return b.s.progress(eng.DisseminationDone)
	}
	b.disEpoch++
	b.disRound, b.disSent = 0, false
	b.disAdvance()
	e := b.disEpoch
	return b.s.progress(func() bool { return b.disDone >= e })
}

// disAdvance runs the rounds whose notice has arrived, sending each
// round's notice on entering it.
func (b *barrier) disAdvance() {
	if b.disGot == nil {
		b.disGot = map[[2]int32]int{}
	}
	for r := b.disRounds(); b.disRound < r; {
		if !b.disSent {
			to := (b.s.rank + 1<<b.disRound) % b.s.size
			b.s.send(to, &msg{kind: kDis, vr: -1, off: b.disEpoch, a: int64(b.disRound)})
			b.disSent = true
		}
		k := [2]int32{b.disEpoch, b.disRound}
		if b.disGot[k] == 0 {
			return
		}
		if b.disGot[k]--; b.disGot[k] == 0 {
			delete(b.disGot, k)
		}
		b.disRound++
		b.disSent = false
	}
	b.disDone = b.disEpoch
}

func (b *barrier) disHandle(m *msg) {
	if b.disGot == nil {
		b.disGot = map[[2]int32]int{}
	}
	b.disGot[[2]int32{m.off, int32(m.a)}]++
	if m.off == b.disEpoch && b.disDone < b.disEpoch {
		b.disAdvance()
	}
}

// reduce enters a barrier contributing vals and returns the sums over all
// ranks when every rank has entered. It serves requests while waiting.
func (b *barrier) reduce(vals [2]int64, sum bool) ([2]int64, error) {
	if eng := b.s.eng; eng != nil {
		// The same tree barrier, run by the engine in C. Its messages are
		// charged here, all at once: they are the ones the Go barrier
		// below sends, and congestion counts must not depend on the
		// backend.
		for _, n := range b.sched {
			if n.Parent >= 0 && n.ParentRank != b.s.rank {
				b.s.charge(n.ParentRank, headerBytes)
			}
			for _, r := range n.KidRanks {
				b.s.charge(r, headerBytes)
			}
		}
		em, ok, err := eng.Barrier(vals[0], vals[1])
		if err != nil {
			b.s.fail(err)
			return vals, err
		}
		if ok {
			b.s.handleEngine(em)
		}
		var out [2]int64
		err = b.s.progress(func() bool {
			a, c, done := eng.BarrierDone()
			out = [2]int64{a, c}
			return done
		})
		return out, err
	}
	b.epoch++
	e := b.epoch
	var fl uint8
	if sum {
		fl = fSum
	}
	b.arrive(b.tp.leafOf(b.s.rank), e, vals, fl, false)
	err := b.s.progress(func() bool { return b.done >= e })
	return b.result, err
}

// arrive counts one arrival at node n (its own for a leaf, a child's
// otherwise; remote: from a child on another rank).
//
// The barrier is the paper's one "that uses access trees, too" (paper
// 004, section 2, Synchronization mechanisms): arrivals combine up the
// tree, the root releases down it. The root releases early where it can:
// if exactly one of its children is on another rank, it sends that child
// its release as soon as every other child has arrived and that one has
// not (fEarly, with the sums so far), and completes when the child's
// arrival comes; the child completes once its own subtree is in too, with
// both sums (released). The messages are the tree's, one arrival and one
// release per edge, so the counts do not change (TestGoldenCounts); only
// the order does: at 2 ranks the arrival and the release cross, one
// message latency where up-then-down takes two, as MPI_Barrier's exchange
// does. mpi/native's engine does the same (engine.h).
func (b *barrier) arrive(n, e int32, vals [2]int64, fl uint8, remote bool) {
	k := barKey{n, e}
	w := b.wait[k]
	if w == nil {
		w = &barWait{}
		b.wait[k] = w
	}
	w.n++
	w.sum[0] += vals[0]
	w.sum[1] += vals[1]
	need := b.tp.numChildren(n)
	if need == 0 {
		need = 1 // a leaf: its rank's own arrival
	}
	if n == b.earlyRoot {
		if remote {
			w.remoteIn = true
		} else if !w.remoteIn && w.n == need-1 {
			b.s.send(b.tp.rankOf(b.earlyKid), &msg{kind: kBarRelease, flags: fl | fEarly, vr: -1, dst: b.earlyKid, src: n, off: e, a: w.sum[0], b: w.sum[1]})
			w.earlySent = true
		}
	}
	if w.n < need {
		return
	}
	delete(b.wait, k)
	p := b.tp.parentOf(n)
	if p < 0 {
		b.release(n, e, w.sum, fl, w.earlySent)
		return
	}
	b.s.send(b.tp.rankOf(p), &msg{kind: kBarArrive, flags: fl, vr: -1, dst: p, src: n, off: e, a: w.sum[0], b: w.sum[1]})
	if b.tp.rankOf(p) == b.s.rank {
		return
	}
	if s, ok := b.early[k]; ok {
		delete(b.early, k)
		b.release(n, e, [2]int64{s[0] + w.sum[0], s[1] + w.sum[1]}, fl, false)
		return
	}
	b.up[k] = w.sum
}

// release releases node n's children (but earlyKid, if skip: released
// early), or completes the barrier at a leaf.
func (b *barrier) release(n, e int32, sum [2]int64, fl uint8, skip bool) {
	kids := b.tp.childrenOf(n)
	if len(kids) == 0 {
		b.done, b.result = e, sum
		return
	}
	for _, c := range kids {
		if skip && c == b.earlyKid {
			continue
		}
		b.s.send(b.tp.rankOf(c), &msg{kind: kBarRelease, flags: fl, vr: -1, dst: c, src: n, off: e, a: sum[0], b: sum[1]})
	}
}

// released handles the release of node n by its parent: an early one
// before n's own arrival is kept until then (arrive), one after it adds
// the sums n sent up.
func (b *barrier) released(n, e int32, sum [2]int64, fl uint8) {
	k := barKey{n, e}
	if fl&fEarly == 0 {
		delete(b.up, k)
		b.release(n, e, sum, fl, false)
		return
	}
	fl &^= fEarly
	if s, ok := b.up[k]; ok {
		delete(b.up, k)
		b.release(n, e, [2]int64{s[0] + sum[0], s[1] + sum[1]}, fl, false)
		return
	}
	b.early[k] = sum
}

func (b *barrier) handle(m *msg) {
	if m.kind == kBarArrive {
		b.arrive(m.dst, m.off, [2]int64{m.a, m.b}, m.flags, b.tp.rankOf(m.src) != b.s.rank)
		return
	}
	b.released(m.dst, m.off, [2]int64{m.a, m.b}, m.flags)
}

// lockNode is one node's state in Raymond's tree-based mutual exclusion
// (K. Raymond, "A tree-based algorithm for distributed mutual exclusion",
// ACM TOCS 7(1), 1989), run on the variable's access tree: the paper's
// locks "that use access trees, too" (paper 004, section 2). The token sits
// at one node; every other node points (holder) at the neighbour toward it.
// Requests travel along holder pointers, each node forwarding at most one
// request at a time (asked); the token travels back along the tree, served
// in each node's FIFO order, so the lock is free of deadlock and starvation.
type lockNode struct {
	id     int32   // the node of the lock tree
	holder int32   // neighbour toward the token, or the node itself
	queue  []int32 // requesting neighbours (the node itself for a leaf's own rank)
	asked  bool
	using  bool      // the leaf's rank holds the lock
	next   *lockNode // the variable's next lock node on this rank
}

// lockTopo is the tree the locks of x run on: the access tree of x, or for
// the fixed-home strategy the star centred at x's home.
func (s *Store) lockTopo(x *variable) topo {
	if s.cfg.Strategy == AccessTree {
		return embedded{t: s.tree, emb: s.tree.Embedding(x.root)}
	}
	return &star{center: x.root, size: s.size}
}

func (s *Store) lockNodeOf(x *variable, tp topo, n int32) *lockNode {
	// A list: a rank holds few nodes of one variable's lock tree (its
	// leaf and the inner nodes embedded on it), and a map per locked
	// variable cost about 200 bytes more.
	for l := x.locks; l != nil; l = l.next {
		if l.id == n {
			return l
		}
	}
	// Initially the token is at the root; everybody points up.
	l := &lockNode{id: n, holder: tp.parentOf(n), next: x.locks}
	if l.holder < 0 {
		l.holder = n
	}
	x.locks = l
	return l
}

// Lock implements globalvar.Store.
func (s *Store) Lock(v globalvar.Var) error {
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if s.closed {
		return errClosed
	}
	tp := s.lockTopo(x)
	leaf := tp.leafOf(s.rank)
	l := s.lockNodeOf(x, tp, leaf)
	if l.using {
		return fmt.Errorf("divalib: lock of %q is already held by this rank (locks are not reentrant)", v.Name)
	}
	s.stats.Locks++
	l.queue = append(l.queue, leaf)
	s.lockAssign(x, tp, leaf, l)
	s.lockMakeRequest(x, tp, leaf, l)
	return s.progress(func() bool { return l.using })
}

// Unlock implements globalvar.Store.
func (s *Store) Unlock(v globalvar.Var) error {
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if s.closed {
		return errClosed
	}
	tp := s.lockTopo(x)
	leaf := tp.leafOf(s.rank)
	l := s.lockNodeOf(x, tp, leaf)
	if !l.using {
		return fmt.Errorf("%w: %q", globalvar.ErrNotLocked, v.Name)
	}
	l.using = false
	s.lockAssign(x, tp, leaf, l)
	s.lockMakeRequest(x, tp, leaf, l)
	// Hand the token on now rather than at this rank's next access.
	return s.progress(func() bool { return true })
}

// lockAssign is Raymond's ASSIGN_PRIVILEGE.
func (s *Store) lockAssign(x *variable, tp topo, n int32, l *lockNode) {
	if l.holder != n || l.using || len(l.queue) == 0 {
		return
	}
	l.holder = l.queue[0]
	l.queue = l.queue[1:]
	l.asked = false
	if l.holder == n {
		l.using = true // only a leaf enqueues itself
		return
	}
	s.send(tp.rankOf(l.holder), &msg{kind: kLockTok, vr: int32(x.v.ID), dst: l.holder, src: n})
}

// lockMakeRequest is Raymond's MAKE_REQUEST.
func (s *Store) lockMakeRequest(x *variable, tp topo, n int32, l *lockNode) {
	if l.holder == n || len(l.queue) == 0 || l.asked {
		return
	}
	l.asked = true
	s.send(tp.rankOf(l.holder), &msg{kind: kLockReq, vr: int32(x.v.ID), dst: l.holder, src: n})
}

func (s *Store) lockHandle(x *variable, m *msg) {
	tp := s.lockTopo(x)
	l := s.lockNodeOf(x, tp, m.dst)
	if m.kind == kLockReq {
		l.queue = append(l.queue, m.src)
	} else {
		l.holder = m.dst
	}
	s.lockAssign(x, tp, m.dst, l)
	s.lockMakeRequest(x, tp, m.dst, l)
}
