package apps

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// ConnComp computes the connected components of a dense graph as paper 000,
// section 6.2 does, after Woo and Sahni: module i holds A_i, n/p rows of the
// adjacency matrix, 16 edges per integer as the paper stores them (the
// low 16 bits of each 4-byte integer, IntBytes), and the spanning forest
// W_i (n integers: a parent per vertex).
// Program of processor i (p a power of two dividing n):
//
//	read submatrix A_i of the adjacency matrix A
//	breadth-first search on the subgraph G_i described by A_i
//	write the computed forest W_i
//	synchronize all application processors
//	for j := 1 to log p do
//	    if i mod 2^j = 0 then
//	        read the forest W_(i + 2^(j-1))
//	        merge it into W_i
//	        write the new forest W_i
//	    synchronize
//
// W_0 then holds the components; it is checked against a serial union-find
// over the whole graph. The paper's communication times:
//
//	T_bfs(k, l)   = ceil((n^2/(16 p))/(k l)) T_kk(k, l, r = 1)
//	T_merge(k, l) = ceil(n/(k l)) T_kk(k, l, 1)
//	                + 2 sum_{i=1}^{log p} ceil(n/(k l)) T_kk(k, l, 1/2^i)
//
// with the submatrix (n^2/(16p) integers, n^2/(4p) bytes) and the forest
// (n integers, 4n bytes) in bytes here, over the accesses that cross the
// network (crossing: on the direct store with p = 2 the merge read stays on
// rank 0). Phases: "bfs" and "merge" (communication), "compute" (the
// searches and merges), "sync".
//
// The graph is dense (m = Theta(n^2)) with planted components: the vertices
// fall into Parts random groups, and two vertices of one group are joined
// with probability Density.
type ConnComp struct {
	N       int     // vertices
	Parts   int     // planted groups; 0 means 4
	Density float64 // edge probability inside a group; 0 means 0.1
	Access
}

// Phase names of ConnComp.
const (
	PhaseBFS   = "bfs"
	PhaseMerge = "merge"
)

func (g ConnComp) withDefaults() ConnComp {
	if g.Parts == 0 {
		g.Parts = 4
	}
	if g.Density == 0 {
		g.Density = 0.1
	}
	return g
}

func (g ConnComp) Name() string { return "concomp" }

func (g ConnComp) Params() results.Params {
	g = g.withDefaults()
	return results.Params{"n": g.N, "parts": g.Parts, "density": g.Density, "k": g.K, "l": g.L}
}

func (g ConnComp) Check(p int) error {
	g = g.withDefaults()
	switch {
	case g.N < edgesPerInt || g.N%edgesPerInt != 0:
		return fmt.Errorf("--n %d: the vertices must be a multiple of %d (rows of whole integers of %d edges), at least %d", g.N, edgesPerInt, edgesPerInt, edgesPerInt)
	case !isPow2(p):
		return &RanksError{What: "connected components", Want: powerOfTwoRanks + " for its log p merge steps", Ranks: p}
	case g.N%p != 0:
		return fmt.Errorf("--n %d on %d ranks: the ranks must divide the vertices (p | n)", g.N, p)
	case g.Parts < 1 || g.Parts > g.N:
		return fmt.Errorf("--parts %d: the planted components must be in 1..n", g.Parts)
	case !(g.Density > 0 && g.Density <= 1):
		return fmt.Errorf("--density %v: the edge probability must be in (0, 1]", g.Density)
	}
	// n is a multiple of 16 and of the power of two p.
	step := max(edgesPerInt, p)
	adj := func(n int) int { return ConnComp{N: n}.adjBytes(p) }
	forest := func(n int) int { return ConnComp{N: n}.forestBytes() }
	if err := checkVolume(g.N, step, adj, "submatrix of n^2/(16p) integers", fmt.Sprintf("on %d ranks", p)); err != nil {
		return err
	}
	if err := checkVolume(g.N, step, forest, "forest of n integers", ""); err != nil {
		return err
	}
	if err := g.Access.check(g.adjBytes(p), "submatrix of n^2/(16p) integers"); err != nil {
		return err
	}
	return g.Access.check(g.forestBytes(), "forest of n integers")
}

// edgesPerInt is the paper's packing of the adjacency matrix: "16 edges
// are stored in one variable of type integer" (section 6.2), in the low
// 16 bits of each IntBytes-byte integer, so T_bfs moves the paper's
// n^2/(16p) integers.
const edgesPerInt = 16

func (g ConnComp) adjBytes(p int) int { return g.N * g.N / p / edgesPerInt * IntBytes }
func (g ConnComp) forestBytes() int   { return g.N * IntBytes }

// edgeAt is the byte and bit of edge bit b of a row block: integer
// b/16, little-endian, its low 16 bits.
func edgeAt(b int) (int, uint) {
	return b/edgesPerInt*IntBytes + b%edgesPerInt/8, uint(b % 8)
}

// graph is the planted graph of a seed: group of every vertex and the edge
// test.
type graph struct {
	n         int
	group     []int
	threshold uint64
	seed      uint64
}

func (g ConnComp) graph(seed int64) graph {
	g = g.withDefaults()
	rng := newRand(seed, 0xcc)
	gr := graph{n: g.N, group: make([]int, g.N), seed: uint64(seed)}
	for v, x := range rng.Perm(g.N) {
		gr.group[v] = x % g.Parts
	}
	gr.threshold = uint64(g.Density * math.MaxUint64)
	if g.Density >= 1 {
		gr.threshold = math.MaxUint64
	}
	return gr
}

// edge reports whether u and v (u != v) are joined.
func (gr graph) edge(u, v int) bool {
	if u == v || gr.group[u] != gr.group[v] {
		return false
	}
	if u > v {
		u, v = v, u
	}
	z := gr.seed*0x9e3779b97f4a7c15 + uint64(u)*uint64(gr.n) + uint64(v)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z^(z>>31) <= gr.threshold
}

type connCompState struct {
	adj, forest []globalvar.Var
	want        []uint32 // rank 0: the oracle's component label of every vertex
	// cross is 1 for each access of Run that crosses the network on some
	// rank (crossing): the read of A_i, the first write of W_i, then the
	// read and the write of merge step j = 1..log p.
	cross []float64
}

// crossing fills st.cross (collective, after a store barrier). On the
// direct store with p = 2 rank 0's merge read of W_1 stays on rank 0
// (Module), and with p = 1 every access does; from p = 4 on, and on every
// store that does not keep variables on a rank, all cross (paper 000's
// T_bfs + T_merge).
func (st *connCompState) crossing(s globalvar.Store, c mpi.Comm) error {
	p, i := c.Size(), c.Rank()
	st.cross = []float64{remote(s, st.adj[i]), remote(s, st.forest[i])}
	for j := 1; j <= log2(p); j++ {
		var r, w float64 // 0 on a rank that does not merge in step j
		if i%(1<<j) == 0 {
			r, w = remote(s, st.forest[i+1<<(j-1)]), remote(s, st.forest[i])
		}
		st.cross = append(st.cross, r, w)
	}
	return maxOverRanks(c, st.cross)
}

// Setup creates A and W, writes this rank's rows A_i, and on rank 0 runs the
// oracle.
func (g ConnComp) Setup(env Env) (any, error) {
	if err := needStore(env, g.Name()); err != nil {
		return nil, err
	}
	s, p, i := env.Store, env.Comm.Size(), env.Comm.Rank()
	if err := g.Check(p); err != nil {
		return nil, err
	}
	gr := g.graph(env.Seed)
	var st connCompState
	var err error
	if st.adj, err = blocks(s, varName(g, "A"), g.adjBytes(p), p); err != nil {
		return nil, err
	}
	if st.forest, err = blocks(s, varName(g, "W"), g.forestBytes(), p); err != nil {
		return nil, err
	}
	n, R := g.N, g.N/p
	rows := make([]byte, g.adjBytes(p))
	for r := range R {
		for v := range n {
			if gr.edge(i*R+r, v) {
				at, bit := edgeAt(r*n + v)
				rows[at] |= 1 << bit
			}
		}
	}
	if err := g.Access.write(s, st.adj[i], 0, rows); err != nil {
		return nil, err
	}
	if i == 0 {
		uf := newUnionFind(n)
		for u := range n {
			for v := u + 1; v < n; v++ {
				if gr.edge(u, v) {
					uf.union(u, v)
				}
			}
		}
		st.want = make([]uint32, n)
		for v := range n {
			st.want[v] = uint32(uf.find(v))
		}
	}
	if err := s.Barrier(); err != nil {
		return nil, err
	}
	return &st, st.crossing(s, env.Comm)
}

// Run runs the program once and checks W_0 on rank 0.
func (g ConnComp) Run(env Env) (Outcome, error) {
	var out Outcome
	st, err := stateOf[*connCompState](&env, g)
	if err != nil {
		return out, err
	}
	s, c := env.Store, env.Comm
	p, i := c.Size(), c.Rank()
	n, R := g.N, g.N/p
	pl := &poller{s: s}
	rows := make([]byte, g.adjBytes(p))
	if err := out.Phases.Time(c, PhaseBFS, KindComm, func() error { return g.Access.read(s, st.adj[i], 0, rows) }); err != nil {
		return out, err
	}
	forest := make([]uint32, n)
	_ = out.Phases.Time(c, PhaseCompute, KindComp, func() error {
		bfsForest(rows, i*R, R, n, forest, pl)
		return nil
	})
	if pl.err != nil {
		return out, pl.err
	}
	merge := func(fn func() error) error { return out.Phases.Time(c, PhaseMerge, KindComm, fn) }
	sync := func() error { return out.Phases.Time(c, PhaseSync, KindSync, s.Barrier) }
	if err := merge(func() error { return g.Access.write(s, st.forest[i], 0, u32Bytes(forest)) }); err != nil {
		return out, err
	}
	if err := sync(); err != nil {
		return out, err
	}
	other := make([]uint32, n)
	uf := newUnionFind(n)
	for j := 1; j <= log2(p); j++ {
		if i%(1<<j) == 0 {
			if err := merge(func() error { return g.Access.read(s, st.forest[i+1<<(j-1)], 0, u32Bytes(other)) }); err != nil {
				return out, err
			}
			_ = out.Phases.Time(c, PhaseCompute, KindComp, func() error {
				uf.reset()
				for v := range n {
					uf.union(v, int(forest[v]))
					uf.union(v, int(other[v]))
				}
				for v := range n {
					forest[v] = uint32(uf.find(v))
				}
				pl.poll()
				return nil
			})
			if pl.err != nil {
				return out, pl.err
			}
			if err := merge(func() error { return g.Access.write(s, st.forest[i], 0, u32Bytes(forest)) }); err != nil {
				return out, err
			}
		}
		if err := sync(); err != nil {
			return out, err
		}
	}
	// Check W_0 as the store holds it.
	var verr error
	if i == 0 {
		got := make([]uint32, n)
		if err := g.Access.read(s, st.forest[0], 0, u32Bytes(got)); err != nil {
			return out, err
		}
		verr = samePartition(got, st.want)
	}
	if err := s.Barrier(); err != nil {
		return out, err
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, err
	}
	// The accesses that cross the network (st.cross) of paper 000's
	// T_bfs + T_merge.
	fw, x := g.forestBytes(), st.cross
	merges := g.Access.items(int(x[1]), fw, 1, opWrite, p)
	for j := 1; j <= log2(p); j++ {
		r := 1 / float64(int(1)<<j)
		merges = append(merges, g.Access.items(int(x[2*j]), fw, r, opRead, p)...)
		merges = append(merges, g.Access.items(int(x[2*j+1]), fw, r, opWrite, p)...)
	}
	out.Workload = map[string][]results.WorkItem{
		PhaseBFS:   g.Access.items(int(x[0]), g.adjBytes(p), 1, opRead, p),
		PhaseMerge: merges,
	}
	return out, nil
}

// bfsForest computes a spanning forest of the subgraph G_i given by the R
// rows of the adjacency bits starting at vertex first, by breadth-first
// search from every unvisited vertex; forest[v] is v's parent (v for a
// root).
func bfsForest(rows []byte, first, R, n int, forest []uint32, pl *poller) {
	adj := make([][]int32, n)
	rowBytes := n / edgesPerInt * IntBytes
	for r := range R {
		u := first + r
		// A dense graph is still mostly zero bits: skip zero bytes (the
		// two high bytes of every integer are) and visit the set bits of
		// the others.
		for x, by := range rows[r*rowBytes : (r+1)*rowBytes] {
			for ; by != 0; by &= by - 1 {
				v := x/IntBytes*edgesPerInt + x%IntBytes*8 + bits.TrailingZeros8(by)
				adj[u] = append(adj[u], int32(v))
				adj[v] = append(adj[v], int32(u))
			}
		}
		pl.poll()
	}
	seen := make([]bool, n)
	queue := make([]int32, 0, n)
	for root := range n {
		if seen[root] {
			continue
		}
		seen[root] = true
		forest[root] = uint32(root)
		queue = append(queue[:0], int32(root))
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, v := range adj[u] {
				if !seen[v] {
					seen[v] = true
					forest[v] = uint32(u)
					queue = append(queue, v)
				}
			}
		}
	}
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct{ parent, size []int }

func newUnionFind(n int) *unionFind {
	uf := &unionFind{parent: make([]int, n), size: make([]int, n)}
	uf.reset()
	return uf
}

func (uf *unionFind) reset() {
	for v := range uf.parent {
		uf.parent[v], uf.size[v] = v, 1
	}
}

func (uf *unionFind) find(v int) int {
	for uf.parent[v] != v {
		uf.parent[v] = uf.parent[uf.parent[v]]
		v = uf.parent[v]
	}
	return v
}

func (uf *unionFind) union(a, b int) {
	a, b = uf.find(a), uf.find(b)
	if a == b {
		return
	}
	if uf.size[a] < uf.size[b] {
		a, b = b, a
	}
	uf.parent[b] = a
	uf.size[a] += uf.size[b]
}

// samePartition checks that the forest got (parent pointers) puts vertices
// in the same components as the labels want.
func samePartition(got, want []uint32) error {
	n := len(want)
	uf := newUnionFind(n)
	for v, par := range got {
		if int(par) >= n {
			return fmt.Errorf("%w: concomp: W_0[%d] = %d is not a vertex", errVerify, v, par)
		}
		uf.union(v, int(par))
	}
	toWant := map[int]uint32{}
	fromWant := map[uint32]int{}
	for v := range n {
		r := uf.find(v)
		if w, ok := toWant[r]; ok && w != want[v] {
			return fmt.Errorf("%w: concomp: vertex %d is in the component of vertex %d in W_0 but not in the union-find of the graph", errVerify, v, r)
		}
		if x, ok := fromWant[want[v]]; ok && x != r {
			return fmt.Errorf("%w: concomp: vertex %d and vertex %d are connected in the graph but in different trees of W_0", errVerify, v, x)
		}
		toWant[r], fromWant[want[v]] = want[v], r
	}
	return nil
}

func init() {
	RegisterProgram(Program{Name: "concomp", Paper: "000 sec. 6.2", OverStore: true,
		Summary: "connected components of a dense graph (Woo and Sahni): BFS forests, log p merges",
		New:     func() Config { return new(ConnCompConfig) },
		Phases:  func(results.Params) []string { return []string{PhaseBFS, PhaseCompute, PhaseMerge, PhaseSync} }})
}

// ConnCompConfig is the configuration of 'commcost app concomp'.
type ConnCompConfig struct {
	N opts.Counts `flag:"n" default:"1024" usage:"vertices n (a multiple of 16; p, a power of two, must divide it): a list"`
	AccessFlags
	Parts   int     `flag:"parts" default:"4" usage:"planted components: the vertices fall into this many random groups"`
	Density float64 `flag:"density" default:"0.1" usage:"edge probability inside a group, in (0, 1]"`
}

// Apps are the runs: every n x k x l.
func (c *ConnCompConfig) Apps() ([]App, error) {
	if c.Parts < 1 {
		return nil, opts.Field("Parts", c.Parts, "want an integer >= 1")
	}
	if !(c.Density > 0 && c.Density <= 1) {
		return nil, opts.Field("Density", c.Density, "want a probability in (0, 1]")
	}
	return c.each(c.N, func(n int, acc Access) []App {
		return []App{ConnComp{N: n, Parts: c.Parts, Density: c.Density, Access: acc}}
	})
}
