package emulate

import (
	"fmt"
	"sort"
)

// Kind names a family of service networks.
type Kind string

// The service-network families (paper 000, section 1 "Types of Service
// Networks" and section 3; mesh, torus and hypercube are additions).
const (
	KindSE    Kind = "SE"    // shuffle-exchange, direct
	KindCCC   Kind = "CCC"   // cube-connected cycles, direct
	KindHC    Kind = "HC"    // hypercube, direct
	KindMesh  Kind = "mesh"  // 2-D mesh, direct
	KindTorus Kind = "torus" // 2-D torus, direct
	KindBF    Kind = "BF"    // butterfly, indirect
)

// MaxNodes bounds the service nodes of one topology: the routing table has
// Nodes^2 entries on every rank, and no cluster commcost targets has more
// ranks to give to a service network.
const MaxNodes = 4096

// Node is one service node (one service rank).
type Node struct {
	Label string // e.g. "(2,5)" for level 2, row 5 of a butterfly
	// Module is the index of the shared-memory module this node holds, or
	// -1 for a pure switch (inner butterfly levels).
	Module int
	// App is the index of the application rank attached to this node (its
	// entry node), or -1.
	App int
}

// Topology is a service network as a value: the node list, the undirected
// links, the attachment of application ranks and memory modules, and the
// shortest-path routing table, computed once by the constructor (paper 000,
// section 3.2: "In a preprocessing phase, before starting the application
// program, the shortest paths of the service network are computed
// sequentially and stored in a look-up table").
//
// A Topology is immutable after construction and safe for concurrent use.
type Topology struct {
	name   string
	kind   Kind
	dims   []int
	nodes  []Node
	adj    [][]int // adj[u]: neighbours of u, increasing; the port of a neighbour is its index here
	apps   int
	entry  []int // entry[i]: node the application rank i attaches to
	module []int // module[m]: node holding memory module m
	n      int
	dist   []int32 // dist[u*n+v]: hop distance between service nodes
	next   []int16 // next[u*n+t]: port at u on a shortest path to t, -1 at u == t
	root   int     // barrier root: the module node of least eccentricity towards the entry nodes
	tree   []int   // tree[v]: parent of v in the BFS tree rooted at root (-1 at the root)
}

// Name is the topology's canonical name, e.g. "BF(3)" or "mesh(4x4)".
func (t *Topology) Name() string { return t.name }

// Kind is the topology's family.
func (t *Topology) Kind() Kind { return t.kind }

// Dims are the size parameters: {d} for SE, CCC, HC, BF; {rows, cols} for
// mesh and torus.
func (t *Topology) Dims() []int { return append([]int(nil), t.dims...) }

// Indirect reports whether the network is indirect: switches that only
// route, with processors on one side and memory modules on the other.
func (t *Topology) Indirect() bool { return t.kind == KindBF }

// Nodes is the number of service nodes (service ranks).
func (t *Topology) Nodes() int { return t.n }

// Node describes service node u.
func (t *Topology) Node(u int) Node { return t.nodes[u] }

// Apps is the number of application ranks, equal to the number of memory
// modules (paper 000, section 1: "we assume that the number of application
// processors is equal to the number of shared memory modules").
func (t *Topology) Apps() int { return t.apps }

// Ranks is the number of MPI ranks the emulation needs: Apps() application
// ranks plus Nodes() service ranks.
func (t *Topology) Ranks() int { return t.apps + t.n }

// Neighbors lists the neighbours of u in port order. The caller must not
// modify the slice.
func (t *Topology) Neighbors(u int) []int { return t.adj[u] }

// Links lists every undirected link once, as [2]int{u, v} with u < v.
func (t *Topology) Links() [][2]int {
	var out [][2]int
	for u, nb := range t.adj {
		for _, v := range nb {
			if u < v {
				out = append(out, [2]int{u, v})
			}
		}
	}
	return out
}

// Entry is the service node application rank i attaches to.
func (t *Topology) Entry(i int) int { return t.entry[i] }

// ModuleNode is the service node holding memory module m.
func (t *Topology) ModuleNode(m int) int { return t.module[m] }

// Root is the service node that counts barrier packets and starts the
// release broadcast.
func (t *Topology) Root() int { return t.root }

// Dist is the hop distance between service nodes u and v.
func (t *Topology) Dist(u, v int) int { return int(t.dist[u*t.n+v]) }

// NextPort is the port (index into Neighbors(u)) of the next hop from u on
// the routing table's shortest path to dst, or -1 when u == dst.
func (t *Topology) NextPort(u, dst int) int { return int(t.next[u*t.n+dst]) }

// NextHop is the neighbour of u on the routing table's path to dst, or -1
// when u == dst.
func (t *Topology) NextHop(u, dst int) int {
	p := t.NextPort(u, dst)
	if p < 0 {
		return -1
	}
	return t.adj[u][p]
}

// Path is the node sequence the routing table sends a packet along from u to
// dst, both included.
func (t *Topology) Path(u, dst int) []int {
	path := []int{u}
	for u != dst {
		u = t.NextHop(u, dst)
		path = append(path, u)
	}
	return path
}

// TreeParent is v's parent in the breadth-first tree rooted at Root(), or -1
// for the root. Barrier releases travel down this tree.
func (t *Topology) TreeParent(v int) int { return t.tree[v] }

// Diameter is the largest distance between two service nodes.
func (t *Topology) Diameter() int {
	m := int32(0)
	for _, d := range t.dist {
		m = max(m, d)
	}
	return int(m)
}

// AccessDistance is the number of links a request of application rank i to
// memory module m crosses: the link from the application rank into its entry
// node plus the service-network hops to the module's node.
func (t *Topology) AccessDistance(i, m int) int { return 1 + t.Dist(t.entry[i], t.module[m]) }

// maxRequestHops is the longest service-network path a request or barrier
// packet takes (entry node to module or root node).
func (t *Topology) maxRequestHops() int {
	h := 0
	for _, e := range t.entry {
		for _, m := range t.module {
			h = max(h, t.Dist(e, m))
		}
		h = max(h, t.Dist(e, t.root))
	}
	return h
}

// maxReplyHops is the longest path of a reply (module node to entry node) or
// of a release along the broadcast tree (root to entry node, tree depth).
func (t *Topology) maxReplyHops() int {
	h := 0
	for _, e := range t.entry {
		for _, m := range t.module {
			h = max(h, t.Dist(m, e))
		}
	}
	// Every BFS tree depth equals the distance to the root.
	for v := range t.n {
		h = max(h, t.Dist(t.root, v))
	}
	return h
}

// CheckRanks reports whether a world of size ranks fits the topology. The
// message names the count needed, as in "BF(3) needs 8 application + 32
// service ranks = 40, got 16".
func (t *Topology) CheckRanks(size int) error {
	if size != t.Ranks() {
		return &RankCountError{Topology: t.name, Apps: t.apps, Service: t.n, Got: size}
	}
	return nil
}

// RankCountError is a world size that does not match a topology.
type RankCountError struct {
	Topology      string
	Apps, Service int
	Got           int
}

func (e *RankCountError) Error() string {
	return fmt.Sprintf("%s %s, got %d", e.Topology, e.Needs(), e.Got)
}

// Applications is the number of application ranks the topology has: a
// program run on it runs on that many ranks.
func (e *RankCountError) Applications() int { return e.Apps }

// Needs is the count the topology takes, for a caller that names what
// set the number of ranks itself: "needs 2 application + 2 service
// ranks = 4".
func (e *RankCountError) Needs() string {
	return fmt.Sprintf("needs %d application + %d service ranks = %d", e.Apps, e.Service, e.Apps+e.Service)
}

// Dimension limits of the constructors. The upper limits keep Nodes() within
// MaxNodes; the lower ones exclude degenerate graphs (CCC(1) has no cycle).
var dimRange = map[Kind][2]int{
	KindSE:  {1, 12},
	KindCCC: {2, 9},
	KindHC:  {1, 12},
	KindBF:  {1, 9},
}

// meshSideMax bounds a mesh or torus side.
const meshSideMax = 64

func checkDim(kind Kind, d int) error {
	r := dimRange[kind]
	if d < r[0] || d > r[1] {
		return fmt.Errorf("%s(%d): dimension out of range; accepted %d..%d", kind, d, r[0], r[1])
	}
	return nil
}

// graph collects undirected links without duplicates or self-loops (the
// shuffle of 0...0 and 1...1 is a self-loop; a cycle of length 2 in CCC(2)
// and a torus side of 2 would give double links).
type graph struct {
	n   int
	set []map[int]bool
}

func newGraph(n int) *graph {
	g := &graph{n: n, set: make([]map[int]bool, n)}
	for i := range g.set {
		g.set[i] = map[int]bool{}
	}
	return g
}

func (g *graph) link(u, v int) {
	if u == v {
		return
	}
	g.set[u][v] = true
	g.set[v][u] = true
}

func (g *graph) adjacency() [][]int {
	adj := make([][]int, g.n)
	for u, s := range g.set {
		for v := range s {
			adj[u] = append(adj[u], v)
		}
		sort.Ints(adj[u])
	}
	return adj
}

// direct builds a direct network: node i holds module i and application
// rank i attaches to it.
func direct(name string, kind Kind, dims []int, labels []string, g *graph) (*Topology, error) {
	n := g.n
	t := &Topology{name: name, kind: kind, dims: dims, adj: g.adjacency(), apps: n, n: n}
	t.nodes = make([]Node, n)
	t.entry = make([]int, n)
	t.module = make([]int, n)
	for i := range n {
		t.nodes[i] = Node{Label: labels[i], Module: i, App: i}
		t.entry[i], t.module[i] = i, i
	}
	return t, t.finish()
}

// ShuffleExchange is SE(d): 2^d nodes; node i links to i XOR 1 (exchange)
// and to its cyclic left rotation (shuffle), as undirected links (paper 000,
// section 1; Leighton 1992, section 3.3).
func ShuffleExchange(d int) (*Topology, error) {
	if err := checkDim(KindSE, d); err != nil {
		return nil, err
	}
	n := 1 << d
	g := newGraph(n)
	labels := make([]string, n)
	for i := range n {
		labels[i] = fmt.Sprintf("%0*b", d, i)
	}
	seLinks(d, g.link)
	return direct(fmt.Sprintf("SE(%d)", d), KindSE, []int{d}, labels, g)
}

// seLinks calls link for every link of SE(d) (a self-loop or a link twice
// included), for the constructor and for networkShape.
func seLinks(d int, link func(u, v int)) {
	n := 1 << d
	for i := range n {
		link(i, i^1)
		link(i, ((i<<1)|(i>>(d-1)))&(n-1))
	}
}

func init() {
	RegisterNetwork(NetworkDef{Kind: KindSE, Aliases: []string{"shuffle", "shuffleexchange"}, Arg: ArgDim,
		New: func(d []int) (*Topology, error) { return ShuffleExchange(d[0]) }})
}

// CubeConnectedCycles is CCC(d): d*2^d nodes (w, i), w a d-bit word and i a
// position 0..d-1; (w, i) links to (w, i±1 mod d) along its cycle and to
// (w XOR 2^i, i) along cube dimension i. Node index w*d + i.
func CubeConnectedCycles(d int) (*Topology, error) {
	if err := checkDim(KindCCC, d); err != nil {
		return nil, err
	}
	n := d << d
	g := newGraph(n)
	labels := make([]string, n)
	for w := range 1 << d {
		for i := range d {
			labels[w*d+i] = fmt.Sprintf("(%0*b,%d)", d, w, i)
		}
	}
	cccLinks(d, g.link)
	return direct(fmt.Sprintf("CCC(%d)", d), KindCCC, []int{d}, labels, g)
}

// cccLinks calls link for every link of CCC(d), as seLinks for SE(d).
func cccLinks(d int, link func(u, v int)) {
	for w := range 1 << d {
		for i := range d {
			u := w*d + i
			link(u, w*d+(i+1)%d)
			link(u, (w^(1<<i))*d+i)
		}
	}
}

func init() {
	RegisterNetwork(NetworkDef{Kind: KindCCC, Arg: ArgDim,
		New: func(d []int) (*Topology, error) { return CubeConnectedCycles(d[0]) }})
}

// Hypercube is HC(d): 2^d nodes, i links to i XOR 2^b for every bit b.
func Hypercube(d int) (*Topology, error) {
	if err := checkDim(KindHC, d); err != nil {
		return nil, err
	}
	n := 1 << d
	g := newGraph(n)
	labels := make([]string, n)
	for i := range n {
		for b := range d {
			g.link(i, i^(1<<b))
		}
		labels[i] = fmt.Sprintf("%0*b", d, i)
	}
	return direct(fmt.Sprintf("HC(%d)", d), KindHC, []int{d}, labels, g)
}

func init() {
	RegisterNetwork(NetworkDef{Kind: KindHC, Aliases: []string{"hypercube", "cube"}, Arg: ArgDim,
		New: func(d []int) (*Topology, error) { return Hypercube(d[0]) }})
}

// Butterfly is BF(d), the indirect network of paper 000: d+1 levels of 2^d
// switches (level l, row w), node index l*2^d + w; (l, w) links to (l+1, w)
// (straight) and to (l+1, w XOR 2^l) (cross). Application rank i attaches to
// (0, i); memory module m sits at (d, m). Every request crosses exactly d
// links, on the unique monotone path that fixes one address bit per level,
// so every path visits d+1 levels.
func Butterfly(d int) (*Topology, error) {
	if err := checkDim(KindBF, d); err != nil {
		return nil, err
	}
	rows := 1 << d
	n := (d + 1) * rows
	g := newGraph(n)
	t := &Topology{name: fmt.Sprintf("BF(%d)", d), kind: KindBF, dims: []int{d}, apps: rows, n: n}
	t.nodes = make([]Node, n)
	for l := 0; l <= d; l++ {
		for w := range rows {
			u := l*rows + w
			t.nodes[u] = Node{Label: fmt.Sprintf("(%d,%0*b)", l, d, w), Module: -1, App: -1}
			if l < d {
				g.link(u, (l+1)*rows+w)
				g.link(u, (l+1)*rows+(w^(1<<l)))
			}
		}
	}
	t.adj = g.adjacency()
	t.entry = make([]int, rows)
	t.module = make([]int, rows)
	for i := range rows {
		t.entry[i] = i
		t.module[i] = d*rows + i
		t.nodes[i].App = i
		t.nodes[d*rows+i].Module = i
	}
	return t, t.finish()
}

func init() {
	RegisterNetwork(NetworkDef{Kind: KindBF, Aliases: []string{"butterfly"}, Arg: ArgDim,
		New: func(d []int) (*Topology, error) { return Butterfly(d[0]) }})
}

// Mesh is the rows x cols 2-D mesh; node index r*cols + c.
func Mesh(rows, cols int) (*Topology, error) { return grid(KindMesh, rows, cols) }

func init() {
	RegisterNetwork(NetworkDef{Kind: KindMesh, Arg: ArgSides,
		New: func(d []int) (*Topology, error) { return Mesh(d[0], d[1]) }})
}

// Torus is the rows x cols 2-D torus (mesh with wrap-around links).
func Torus(rows, cols int) (*Topology, error) { return grid(KindTorus, rows, cols) }

func init() {
	RegisterNetwork(NetworkDef{Kind: KindTorus, Arg: ArgSides,
		New: func(d []int) (*Topology, error) { return Torus(d[0], d[1]) }})
}

// checkSides refuses a mesh or torus side outside 1..meshSideMax, or a
// single node.
func checkSides(kind Kind, rows, cols int) error {
	if rows < 1 || cols < 1 || rows > meshSideMax || cols > meshSideMax || rows*cols < 2 {
		return fmt.Errorf("%s(%dx%d): sides out of range; accepted 1..%d with at least 2 nodes", kind, rows, cols, meshSideMax)
	}
	return nil
}

func grid(kind Kind, rows, cols int) (*Topology, error) {
	if err := checkSides(kind, rows, cols); err != nil {
		return nil, err
	}
	n := rows * cols
	g := newGraph(n)
	labels := make([]string, n)
	for r := range rows {
		for c := range cols {
			u := r*cols + c
			labels[u] = fmt.Sprintf("(%d,%d)", r, c)
			if c+1 < cols || (kind == KindTorus && cols > 1) {
				g.link(u, r*cols+(c+1)%cols)
			}
			if r+1 < rows || (kind == KindTorus && rows > 1) {
				g.link(u, ((r+1)%rows)*cols+c)
			}
		}
	}
	return direct(fmt.Sprintf("%s(%dx%d)", kind, rows, cols), kind, []int{rows, cols}, labels, g)
}

// checkNodes refuses a network of more than MaxNodes service nodes.
func checkNodes(name string, n int) error {
	if n > MaxNodes {
		return fmt.Errorf("%s has %d service nodes, more than %d", name, n, MaxNodes)
	}
	return nil
}

// finish computes the distance and routing tables by one breadth-first
// search per destination (O(n (n + links)) time, n^2 entries), then the
// barrier root and its broadcast tree.
func (t *Topology) finish() error {
	n := t.n
	if err := checkNodes(t.name, n); err != nil {
		return err
	}
	for u := range n {
		if len(t.adj[u]) > 1<<15 {
			return fmt.Errorf("%s: node degree too large", t.name)
		}
	}
	t.dist = make([]int32, n*n)
	t.next = make([]int16, n*n)
	queue := make([]int, 0, n)
	for dst := range n {
		for u := range n {
			t.dist[u*n+dst] = -1
		}
		t.dist[dst*n+dst] = 0
		queue = append(queue[:0], dst)
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, u := range t.adj[v] {
				if t.dist[u*n+dst] < 0 {
					t.dist[u*n+dst] = t.dist[v*n+dst] + 1
					queue = append(queue, u)
				}
			}
		}
		for u := range n {
			du := t.dist[u*n+dst]
			if du < 0 {
				return fmt.Errorf("%s: node %d cannot reach node %d", t.name, u, dst)
			}
			t.next[u*n+dst] = -1
			if u == dst {
				continue
			}
			// Ties go to the lowest port: deterministic tables, so every rank
			// computes the same routes without exchanging them.
			for p, v := range t.adj[u] {
				if t.dist[v*n+dst] == du-1 {
					t.next[u*n+dst] = int16(p)
					break
				}
			}
		}
	}
	// The barrier root is a module node (only nodes with a service manager
	// count synchronisation packets, paper 000, section 3.2) whose farthest
	// entry node is nearest; ties go to the lowest index.
	t.root = -1
	best := int32(1 << 30)
	for _, m := range t.module {
		ecc := int32(0)
		for _, e := range t.entry {
			ecc = max(ecc, t.dist[m*n+e])
		}
		if ecc < best || (ecc == best && m < t.root) {
			t.root, best = m, ecc
		}
	}
	t.tree = make([]int, n)
	for v := range n {
		// The parent is v's own next hop towards the root, so the tree uses
		// the routing table's links and depth(v) = Dist(root, v).
		t.tree[v] = t.NextHop(v, t.root)
	}
	return nil
}

// treeChildren lists, for node u, the ports of its children in the
// broadcast tree, keeping only children with an entry node below them when
// entriesOnly is set (a release is useful only where an application waits).
func (t *Topology) treeChildren(u int, entriesOnly bool) []int {
	var ports []int
	for p, v := range t.adj[u] {
		if t.tree[v] != u {
			continue
		}
		if entriesOnly && !t.subtreeHasEntry(v) {
			continue
		}
		ports = append(ports, p)
	}
	return ports
}

func (t *Topology) subtreeHasEntry(v int) bool {
	if t.nodes[v].App >= 0 {
		return true
	}
	for _, w := range t.adj[v] {
		if t.tree[w] == v && t.subtreeHasEntry(w) {
			return true
		}
	}
	return false
}
