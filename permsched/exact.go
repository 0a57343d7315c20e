package permsched

import "math/bits"

// Exact is the optimal scheduler (beyond the paper). A schedule of partial
// permutations is a proper edge colouring of the bipartite multigraph
// senders -> receivers, one colour per phase. König's edge-colouring theorem
// (1916) says a bipartite multigraph of maximum degree D has a proper
// colouring with D colours, and D is a lower bound (the busiest rank sends
// or receives D messages, one per phase), so Exact always returns exactly
// D = m.MaxDegree() phases, none empty. CGM's expected d + log2 d (paper
// eq. 4) is therefore log2 d phases above optimal on the paper's matrices,
// and further off when receivers are skewed.
//
// Method (all steps are exact; none is a heuristic that could fall back):
//
//  1. Regularise. Vertices on each side are merged into bins by next-fit in
//     rank order, a bin taking vertices while its degree sum stays <= D.
//     Merging is safe: a proper colouring of the merged graph gives every
//     edge of a bin a distinct colour, so it is proper on the original
//     graph. Next-fit leaves at most 2E/D+1 bins per side. The sides are
//     then padded to the same number of bins b, and dummy edges join bins
//     with spare degree until the graph is D-regular; it has b*D <= 2E+D
//     edges. (Without merging, a skewed matrix with D >> d would be padded
//     to n*D edges.)
//  2. Colour a k-regular bipartite multigraph with k colours, recursively:
//     k even: Euler split. At every vertex pair up its edges; the two
//     pairings make every edge part of one alternating cycle, which has
//     even length in a bipartite graph; colouring its edges alternately A
//     and B puts exactly one edge of every pair in each half, so both halves
//     are k/2-regular (Gabow 1976; Cole, Ost and Schirra 2001). O(E).
//     k odd: a k-regular bipartite multigraph has a perfect matching
//     (Hall's theorem); random-walk augmentation finds one in expected
//     O(b log b) time (see perfectMatching; Hopcroft-Karp is the fallback),
//     it becomes one colour, and the rest is (k-1)-regular with k-1 even.
//     k = 1: the graph is a perfect matching.
//  3. Phase c holds the real messages of colour c; dummy edges vanish.
//
// Time O(E log D): log2 D levels of Euler splits, plus at most one perfect
// matching per subproblem of odd degree, each expected O(b log b).
type Exact struct{}

// Name is "EXACT".
func (Exact) Name() string { return "EXACT" }

// Schedule returns an optimal schedule; seed drives the random walks of the
// perfect matchings (odd degrees only).
func (Exact) Schedule(m *Matrix, seed uint64) (*Schedule, error) {
	d := m.MaxDegree()
	s := newSchedule("EXACT", m, d)
	if d == 0 {
		return s, nil
	}
	n := m.n
	outDeg := make([]int, n)
	for i := range outDeg {
		outDeg[i] = m.OutDegree(i)
	}
	inDeg := m.InDegrees()
	binL, loadL := nextFit(outDeg, d)
	binR, loadR := nextFit(inDeg, d)
	b := max(len(loadL), len(loadR))
	c := newColourer(b, d, m.Len())
	c.rng = seed ^ streamSched
	for id := range m.dst {
		c.place(binL[m.src[id]], binR[m.dst[id]], int32(id))
	}
	// Pad with dummy edges (id -1) between bins that still have spare degree.
	spare := func(load []int32, k int) int {
		if k < len(load) {
			return d - int(load[k])
		}
		return d
	}
	for l, r, sl, sr := 0, 0, spare(loadL, 0), spare(loadR, 0); l < b && r < b; {
		switch {
		case sl == 0:
			if l++; l < b {
				sl = spare(loadL, l)
			}
		case sr == 0:
			if r++; r < b {
				sr = spare(loadR, r)
			}
		default:
			c.place(int32(l), int32(r), -1)
			sl--
			sr--
		}
	}
	if c.placed != b*d {
		panic("permsched: Exact: regularisation left the graph irregular") // unreachable: both sides' spare sums are b*d - E
	}
	c.colour(0, d, c.stride(d), 0)

	// Counting sort of the real messages by colour gives the phases.
	cnt := make([]int32, d+1)
	for id := 0; id < m.Len(); id++ {
		cnt[c.col[id]+1]++
	}
	for k := 1; k <= d; k++ {
		cnt[k] += cnt[k-1]
	}
	s.ids = s.ids[:m.Len()]
	pos := append([]int32(nil), cnt[:d]...)
	for id := 0; id < m.Len(); id++ {
		k := c.col[id]
		s.ids[pos[k]] = int32(id)
		pos[k]++
	}
	s.off = append(s.off[:0], cnt...)
	return s, nil
}

// nextFit packs vertices (in index order) into bins of capacity d and
// returns each vertex's bin and each bin's load. Vertices of degree 0 go in
// bin 0 (they have no edges, any bin will do). Any two consecutive bins hold
// more than d together, so there are at most 2*sum/d + 1 bins.
func nextFit(deg []int, d int) (bin []int32, load []int32) {
	bin = make([]int32, len(deg))
	for v, dv := range deg {
		if dv == 0 {
			continue
		}
		if len(load) == 0 || int(load[len(load)-1])+dv > d {
			load = append(load, 0)
		}
		bin[v] = int32(len(load) - 1)
		load[len(load)-1] += int32(dv)
	}
	return bin, load
}

// colourer holds the regularised graph and the scratch space of the
// recursion, allocated once per schedule.
//
// Layout (why it is fast): the subproblem that receives colours
// [base, base+k) lives in the region starting at f*b*base of two
// double-buffered arrays, right endpoints v and message ids o (-1 for dummy
// edges), grouped by left vertex with an even stride s >= k: left vertex
// u's k edges sit at region+u*s .. region+u*s+k-1. Left endpoints are thus
// implicit, the Euler split's left pairing is positions (p, p^1), and its
// output keeps the grouping. f is 1 when D is a power of two (every k is
// even down to 1 and s = k); otherwise f = 2 leaves room for strides
// rounded up to even, and the spare slot lets a perfect matching be removed
// by swapping each matched edge to the end of its group, without moving the
// rest. Reads are sequential except the cycle walk, which touches one
// random cache line per two edges.
type colourer struct {
	b, d   int
	f      int     // region scale: 1 or 2 (see above)
	col    []int32 // colour by message id (dummy edges are not coloured)
	fill   []int32 // per left bin: edges placed so far
	placed int

	v     [2][]uint16 // double buffers: right endpoint (b <= MaxRanks fits 16 bits)
	o     [2][]int32  // and message id (-1 dummy)
	pairR []int32     // per position: partner at the right endpoint
	pendR []int32     // per right vertex: a position waiting for its partner
	side  []bool      // per position: in half B of an Euler split

	// Perfect matchings, for odd degrees.
	matchL []int32 // per left vertex: matched position, or -1
	matchR []int32 // per right vertex: matched left vertex, or -1
	exit   []int32 // random walk: last position a left vertex left by
	rng    uint64  // random-walk generator state (wyrand)
	dist   []int32 // Hopcroft-Karp fallback
	queue  []int32
	iter   []int32
}

// stride is the group stride of a subproblem of degree k: k itself when D
// is a power of two (k is then 1 or even), else k rounded up to even.
func (c *colourer) stride(k int) int {
	if c.f == 1 {
		return k
	}
	return k + k&1
}

// newColourer allocates for a d-regular graph on b+b bins with e real edges.
func newColourer(b, d, e int) *colourer {
	c := &colourer{b: b, d: d, f: 2, col: make([]int32, e), fill: make([]int32, b)}
	if d&(d-1) == 0 {
		c.f = 1
	}
	t := c.f * b * d
	for i := range c.v {
		c.v[i] = make([]uint16, t)
		c.o[i] = make([]int32, t)
	}
	c.pairR = make([]int32, t+1) // +1: eulerSplit's scratch slot
	c.pendR = make([]int32, b)
	for i := range c.pendR {
		c.pendR[i] = -1
	}
	c.side = make([]bool, t)
	return c
}

// place adds edge id (u -> v) to the initial layout (colours [0, d),
// stride(d)): a counting sort by left endpoint.
func (c *colourer) place(u, v, id int32) {
	p := int(u)*c.stride(c.d) + int(c.fill[u])
	c.fill[u]++
	c.v[0][p], c.o[0][p] = uint16(v), id
	c.placed++
}

// colour gives the subproblem of degree k, stride s in buffer buf the
// colours base .. base+k-1.
func (c *colourer) colour(base int32, k, s, buf int) {
	b := c.b
	for {
		lo := c.f * b * int(base)
		switch {
		case k == 0:
			return
		case k == 1:
			o := c.o[buf]
			for u := 0; u < b; u++ {
				if e := o[lo+u*s]; e >= 0 {
					c.col[e] = base
				}
			}
			return
		case k%2 == 1:
			c.perfectMatching(lo, k, s, buf)
			// Swap each matched edge to the end of its group and colour
			// it; the rest is (k-1)-regular in place.
			v, o := c.v[buf], c.o[buf]
			for u := 0; u < b; u++ {
				p, q := int(c.matchL[u]), lo+u*s+k-1
				v[p], v[q] = v[q], v[p]
				o[p], o[q] = o[q], o[p]
				if e := o[q]; e >= 0 {
					c.col[e] = base + int32(k) - 1
				}
			}
			k--
		default:
			half := k / 2
			s2 := c.stride(half)
			c.eulerSplit(lo, k, s, buf, c.f*b*(int(base)+half), s2)
			c.colour(base, half, s2, 1-buf)
			// The second half is a loop iteration, not a call: the
			// recursion depth stays log2 k.
			base, k, s, buf = base+int32(half), half, s2, 1-buf
		}
	}
}

// eulerSplit splits the subproblem of even degree k at region lo, stride s
// of buffer buf into two halves of degree k/2, written with stride s2 to
// the other buffer at regions lo (half A) and hiB (half B).
//
// The inner loops are written branch-free (selects the compiler turns into
// conditional moves): which half a position goes to is a coin toss, and a
// mispredicted branch per edge would cost more than the memory traffic.
func (c *colourer) eulerSplit(lo, k, s, buf, hiB, s2 int) {
	v, o := c.v[buf], c.o[buf]
	pairR, pendR, side := c.pairR, c.pendR, c.side
	sink := int32(len(pairR) - 1) // scratch slot for the write a first arrival does not need
	b := c.b
	if s == k && s2 == k/2 {
		// No holes in or out: the subproblem is one group, and the loops
		// run flat instead of b short inner loops.
		b, k, s, s2 = 1, b*k, b*k, b*k/2
	}
	for u := 0; u < b; u++ {
		g := lo + u*s
		for i := g; i < g+k; i++ {
			r := v[i]
			p := pendR[r]
			pairR[i] = p // final if p >= 0; otherwise overwritten when the partner arrives
			q, next := p, int32(-1)
			if p < 0 {
				q, next = sink, int32(i)
			}
			pairR[q] = int32(i)
			pendR[r] = next
			side[i] = false
		}
	}
	// Every degree is even, so every pendR entry is back to -1 here.
	// Walk each alternating cycle: right partner, then left partner (the
	// position p^1: groups start at even positions), ... back to the
	// start. Its length is even, so alternating halves are consistent and
	// every pair is split.
	for u := 0; u < b; u++ {
		g := lo + u*s
		for i := g; i < g+k; i += 2 {
			if side[i] != side[i+1] {
				continue // visited: a split pair has exactly one position in B
			}
			cur := int32(i)
			for {
				nb := pairR[cur]
				side[nb] = true
				cur = nb ^ 1
				if cur == int32(i) {
					break
				}
			}
		}
	}
	nv, no := c.v[1-buf], c.o[1-buf]
	for u := 0; u < b; u++ {
		g := lo + u*s
		a, bb := lo+u*s2, hiB+u*s2
		for i := g; i < g+k; i++ {
			j, inB := a, 0
			if side[i] {
				j, inB = bb, 1
			}
			nv[j], no[j] = v[i], o[i]
			bb += inB
			a += 1 - inB
		}
	}
}

// perfectMatching finds a perfect matching of the k-regular subproblem at
// region lo, stride s of buffer buf, leaving it in matchL.
//
// It augments by random walks (Goel, Kapralov and Khanna, "Perfect
// matchings in O(n log n) time in regular bipartite graphs", STOC 2010):
// from a free left vertex, leave by a uniformly random unmatched edge; at a
// matched right vertex jump to its mate and repeat; at a free right vertex
// stop and flip the loop-erased walk (each left vertex's last exit). In a
// k-regular bipartite multigraph the expected total length of all walks is
// O(b log b) whatever k is, against Hopcroft-Karp's O(E) per phase. A walk
// that ends is an exact augmenting path; if the walks exceed a budget of a
// few b log b steps (improbable), Hopcroft-Karp finishes the matching, so
// the worst case stays polynomial.
func (c *colourer) perfectMatching(lo, k, s, buf int) {
	b := c.b
	if c.matchL == nil {
		c.matchL = make([]int32, b)
		c.matchR = make([]int32, b)
		c.exit = make([]int32, b)
	}
	v := c.v[buf]
	matchL, matchR := c.matchL, c.matchR
	for i := range matchL {
		matchL[i], matchR[i] = -1, -1
	}
	// Greedy start: it leaves a small fraction free, and the walks are
	// short while many right vertices are free.
	for u := 0; u < b; u++ {
		g := lo + u*s
		for p := g; p < g+k; p++ {
			if r := v[p]; matchR[r] < 0 {
				matchL[u], matchR[r] = int32(p), int32(u)
				break
			}
		}
	}
	budget := walkBudget * b * (bitsLen(b) + 1)
	kk := uint64(k)
	rng := c.rng
	for u := 0; u < b && budget > 0; u++ {
		if matchL[u] >= 0 {
			continue
		}
		cur := int32(u)
		for budget > 0 {
			budget--
			// wyrand step, then a multiply-shift draw in [0, k): the bias
			// of at most k/2^64 does not matter, every walk that ends is
			// an exact augmenting path.
			rng += 0xa0761d6478bd642f
			hi, lo64 := bits.Mul64(rng, rng^0xe7037ed1a0b428db)
			draw, _ := bits.Mul64(hi^lo64, kk)
			p := int32(lo+int(cur)*s) + int32(draw)
			if p == matchL[cur] {
				continue // the walk leaves by unmatched edges only
			}
			c.exit[cur] = p
			w := matchR[v[p]]
			if w < 0 {
				break
			}
			cur = w
		}
		if budget <= 0 {
			break
		}
		// Flip the loop-erased walk: following last exits from u gives a
		// simple alternating path to the free right vertex.
		for x := int32(u); x >= 0; {
			p := c.exit[x]
			r := v[p]
			prev := matchR[r]
			matchL[x], matchR[r] = p, x
			x = prev
		}
	}
	c.rng = rng
	c.hopcroftKarp(lo, k, s, v)
}

// hopcroftKarp completes the matching in matchL/matchR (a no-op when it is
// already perfect).
func (c *colourer) hopcroftKarp(lo, k, s int, v []uint16) {
	b := c.b
	free := 0
	for u := 0; u < b; u++ {
		if c.matchL[u] < 0 {
			free++
		}
	}
	if free == 0 {
		return
	}
	if c.dist == nil {
		c.dist = make([]int32, b)
		c.queue = make([]int32, 0, b)
		c.iter = make([]int32, b)
	}
	hk := hkGraph{c: c, lo: lo, k: k, s: s, v: v}
	for free > 0 {
		if !hk.bfs() {
			panic("permsched: Exact: no augmenting path in a regular bipartite graph") // unreachable by Hall's theorem
		}
		clear(c.iter)
		for u := 0; u < b; u++ {
			if c.matchL[u] < 0 && hk.dfs(int32(u)) {
				free--
			}
		}
	}
}

// hkGraph is one subproblem seen by Hopcroft-Karp.
type hkGraph struct {
	c        *colourer
	lo, k, s int
	v        []uint16
}

const infDist = int32(1 << 30)

// walkBudget scales the random walks' step budget (walkBudget * b log2 b);
// tests set it to 0 to exercise the Hopcroft-Karp fallback.
var walkBudget = 16

// bfs layers the left vertices by alternating distance from the free ones
// and reports whether some free right vertex is reachable.
func (h hkGraph) bfs() bool {
	c := h.c
	q := c.queue[:0]
	for u := 0; u < c.b; u++ {
		if c.matchL[u] < 0 {
			c.dist[u] = 0
			q = append(q, int32(u))
		} else {
			c.dist[u] = infDist
		}
	}
	found := false
	for i := 0; i < len(q); i++ {
		u := q[i]
		g := h.lo + int(u)*h.s
		for p := g; p < g+h.k; p++ {
			w := c.matchR[h.v[p]]
			if w < 0 {
				found = true
				continue
			}
			if c.dist[w] == infDist {
				c.dist[w] = c.dist[u] + 1
				q = append(q, w)
			}
		}
	}
	c.queue = q
	return found
}

// dfs looks for an augmenting path from left vertex u along the BFS layers
// and flips it.
func (h hkGraph) dfs(u int32) bool {
	c := h.c
	for ; c.iter[u] < int32(h.k); c.iter[u]++ {
		p := int32(h.lo+int(u)*h.s) + c.iter[u]
		r := h.v[p]
		w := c.matchR[r]
		if w < 0 || (c.dist[w] == c.dist[u]+1 && h.dfs(w)) {
			c.matchL[u], c.matchR[r] = p, u
			c.iter[u]++
			return true
		}
	}
	c.dist[u] = infDist
	return false
}
