package divalib

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Variant is the shape of the access trees (paper 004, section 2,
// "Implemented variations of the access tree strategy"):
//   - Arity 2, 4 or 16 with Leaf 0: the l-ary tree. The 4-ary decomposition
//     skips the odd levels of the 2-ary one, the 16-ary skips the odd levels
//     of the 4-ary one.
//   - Arity 2 or 4 with Leaf k >= Arity: the l-k-ary tree. The l-ary
//     decomposition stops at submeshes of at most k processors; such a node
//     gets one child per processor of its submesh.
type Variant struct {
	Arity int
	Leaf  int
}

// The variants the paper evaluates (Variants lists them in report order).
var (
	Tree2    = Variant{Arity: 2}
	Tree4    = Variant{Arity: 4}
	Tree16   = Variant{Arity: 16}
	Tree2_4  = Variant{Arity: 2, Leaf: 4}
	Tree4_16 = Variant{Arity: 4, Leaf: 16}
)

// String is the paper's name: "2", "4", "16", "2-4", "4-16".
func (v Variant) String() string {
	if v.Leaf == 0 {
		return strconv.Itoa(v.Arity)
	}
	return fmt.Sprintf("%d-%d", v.Arity, v.Leaf)
}

// Validate reports whether the paper defines the variant: an l-ary tree of
// an evaluated arity, or an l-k-ary tree whose l is that of an evaluated
// l-k-ary tree and k >= l (Variants).
func (v Variant) Validate() error {
	l, lk := lAry()
	for _, w := range l {
		if v.Leaf == 0 && v.Arity == w.Arity {
			return nil
		}
	}
	for _, a := range leafArities() {
		if v.Leaf != 0 && v.Arity == a && v.Leaf >= v.Arity {
			return nil
		}
	}
	return fmt.Errorf("tree degree %q is not supported: accepted are %s (l-ary) and L-K with L in {%s} and K >= L (l-k-ary, e.g. %s)",
		v.String(), variantList(l), joinInts(leafArities(), ","), variantList(lk))
}

// ParseVariant parses "2", "4", "16" or "L-K" (e.g. "2-4").
func ParseVariant(s string) (Variant, error) {
	var v Variant
	bad := func() error {
		l, lk := lAry()
		return fmt.Errorf("tree degree %q: accepted are %s, or L-K such as %s", s, variantList(l), strings.Replace(variantList(lk), ", ", " and ", 1))
	}
	l, k, hasK := strings.Cut(s, "-")
	a, err := strconv.Atoi(l)
	if err != nil {
		return v, bad()
	}
	v.Arity = a
	if hasK {
		if v.Leaf, err = strconv.Atoi(k); err != nil || v.Leaf < 1 {
			return v, bad()
		}
	}
	return v, v.Validate()
}

// levels is the number of binary decomposition levels one tree level spans.
func (v Variant) levels() int {
	switch v.Arity {
	case 4:
		return 2
	case 16:
		return 4
	}
	return 1
}

// Tree is the decomposition tree of a mesh for one Variant: the access tree
// of every variable is a copy of it, embedded into the mesh from a random
// root position (Embedding). A Tree is immutable after construction and
// shared by every rank in the process (mpi/local runs 4096 ranks in one
// process; the embeddings are cached here once, not once per rank).
//
// Nodes are numbered in preorder, so a parent's index is below its
// children's and a subtree is the index interval [n, end[n]).
type Tree struct {
	Mesh    Mesh
	Variant Variant

	sub      []Submesh
	parent   []int32
	children [][]int32
	end      []int32 // preorder: the subtree of n is [n, end[n])
	depth    []int32
	leaf     []int32 // rank -> its leaf node

	// embeddings[root] maps node -> rank for the embedding whose root sits
	// at processor root; computed on first use.
	embeddings []atomic.Pointer[[]int32]
}

// Nodes is the number of tree nodes.
func (t *Tree) Nodes() int { return len(t.sub) }

// Submesh returns the submesh node n represents.
func (t *Tree) Submesh(n int) Submesh { return t.sub[n] }

// Parent returns n's parent, or -1 at the root.
func (t *Tree) Parent(n int) int { return int(t.parent[n]) }

// Children returns n's children (shared: do not modify).
func (t *Tree) Children(n int) []int32 { return t.children[n] }

// Leaf returns the leaf node of rank r.
func (t *Tree) Leaf(r int) int { return int(t.leaf[r]) }

// Height is the number of edges on the longest root-leaf path.
func (t *Tree) Height() int {
	h := int32(0)
	for _, d := range t.depth {
		h = max(h, d)
	}
	return int(h)
}

// contains reports whether node b is in the subtree of node a.
func (t *Tree) contains(a, b int32) bool { return b >= a && b < t.end[a] }

// next is the first hop on the tree path from a to b (a != b).
func (t *Tree) next(a, b int32) int32 {
	if !t.contains(a, b) {
		return t.parent[a]
	}
	ch := t.children[a]
	// Children are in preorder: the last one starting at or before b.
	lo, hi := 0, len(ch)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ch[mid] <= b {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return ch[lo]
}

var treeCache sync.Map // treeKey -> *Tree

type treeKey struct {
	mesh Mesh
	v    Variant
}

// TreeFor returns the (shared, cached) decomposition tree of mesh m for v.
func TreeFor(m Mesh, v Variant) (*Tree, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	if m.Rows < 1 || m.Cols < 1 {
		return nil, fmt.Errorf("divalib: mesh %v is empty", m)
	}
	key := treeKey{m, v}
	if t, ok := treeCache.Load(key); ok {
		return t.(*Tree), nil
	}
	t, _ := treeCache.LoadOrStore(key, buildTree(m, v))
	return t.(*Tree), nil
}

func buildTree(m Mesh, v Variant) *Tree {
	t := &Tree{Mesh: m, Variant: v, leaf: make([]int32, m.Size())}
	var add func(s Submesh, parent int32, depth int32) int32
	add = func(s Submesh, parent int32, depth int32) int32 {
		n := int32(len(t.sub))
		t.sub = append(t.sub, s)
		t.parent = append(t.parent, parent)
		t.children = append(t.children, nil)
		t.end = append(t.end, 0)
		t.depth = append(t.depth, depth)
		if s.Size() == 1 {
			t.leaf[m.Rank(s.Row, s.Col)] = n
		} else {
			for _, c := range t.childMeshes(s) {
				ch := add(c, n, depth+1)
				t.children[n] = append(t.children[n], ch)
			}
		}
		t.end[n] = int32(len(t.sub))
		return n
	}
	add(Submesh{0, 0, m.Rows, m.Cols}, -1, 0)
	t.embeddings = make([]atomic.Pointer[[]int32], m.Size())
	return t
}

// childMeshes returns the submeshes of the children of a node representing
// s (s has more than one processor).
func (t *Tree) childMeshes(s Submesh) []Submesh {
	v := t.Variant
	if v.Leaf > 0 && s.Size() <= v.Leaf {
		// l-k-ary: the decomposition stops; one child per processor, in
		// row-major order.
		out := make([]Submesh, 0, s.Size())
		for r := s.Row; r < s.Row+s.Rows; r++ {
			for c := s.Col; c < s.Col+s.Cols; c++ {
				out = append(out, Submesh{r, c, 1, 1})
			}
		}
		return out
	}
	// l-ary: the descendants log2(l) binary levels down, or a single
	// processor reached earlier.
	var out []Submesh
	var expand func(s Submesh, lv int)
	expand = func(s Submesh, lv int) {
		a, b, ok := s.split()
		if lv == 0 || !ok {
			out = append(out, s)
			return
		}
		expand(a, lv-1)
		expand(b, lv-1)
	}
	expand(s, v.levels())
	return out
}

// Embedding returns node -> rank for the access tree whose root is mapped
// to processor root, using the paper's modified, locality-preserving
// embedding (paper 004, section 2, "Practical improvements"): if the parent
// v' sits at row i, column j of its submesh M', the child v sits at row
// i mod m1, column j mod m2 of its own m1 x m2 submesh M. Leaves therefore
// always sit on their own processor. The result is shared: do not modify.
func (t *Tree) Embedding(root int) []int32 {
	if e := t.embeddings[root].Load(); e != nil {
		return *e
	}
	e := make([]int32, len(t.sub))
	e[0] = int32(root)
	for n := 1; n < len(t.sub); n++ { // preorder: parents come first
		p := t.parent[n]
		ps, s := t.sub[p], t.sub[n]
		pr, pc := t.Mesh.Coord(int(e[p]))
		i, j := pr-ps.Row, pc-ps.Col
		e[n] = int32(t.Mesh.Rank(s.Row+i%s.Rows, s.Col+j%s.Cols))
	}
	t.embeddings[root].Store(&e)
	return e
}
