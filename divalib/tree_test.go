package divalib

import (
	"slices"
	"testing"
)

// TestDecomposition checks the hierarchical decomposition against the
// paper's rule (section 2): split the longer side into ceil/floor halves.
// M(4,3) is the paper's Figure 1 example.
func TestDecomposition(t *testing.T) {
	tests := []struct {
		mesh     Mesh
		v        Variant
		rootKids []Submesh
		height   int
		nodes    int
	}{
		{Mesh{4, 3}, Tree2, []Submesh{{0, 0, 2, 3}, {2, 0, 2, 3}}, 4, 23},
		{Mesh{3, 4}, Tree2, []Submesh{{0, 0, 3, 2}, {0, 2, 3, 2}}, 4, 23},
		{Mesh{4, 4}, Tree2, []Submesh{{0, 0, 2, 4}, {2, 0, 2, 4}}, 4, 31},
		{Mesh{4, 4}, Tree4, []Submesh{{0, 0, 2, 2}, {0, 2, 2, 2}, {2, 0, 2, 2}, {2, 2, 2, 2}}, 2, 21},
		{Mesh{4, 4}, Tree16, nil, 1, 17},
		{Mesh{4, 4}, Tree2_4, []Submesh{{0, 0, 2, 4}, {2, 0, 2, 4}}, 3, 23},
		{Mesh{16, 16}, Tree4_16, nil, 3, 1 + 4 + 16 + 256},
		{Mesh{2, 2}, Tree16, nil, 1, 5},
		{Mesh{1, 1}, Tree4, nil, 0, 1},
		{Mesh{1, 5}, Tree2, []Submesh{{0, 0, 1, 3}, {0, 3, 1, 2}}, 3, 9},
	}
	for _, tc := range tests {
		t.Run(tc.mesh.String()+"/"+tc.v.String(), func(t *testing.T) {
			tr, err := TreeFor(tc.mesh, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rootKids != nil {
				var got []Submesh
				for _, c := range tr.Children(0) {
					got = append(got, tr.Submesh(int(c)))
				}
				if !slices.Equal(got, tc.rootKids) {
					t.Errorf("root children %v, want %v", got, tc.rootKids)
				}
			}
			if h := tr.Height(); h != tc.height {
				t.Errorf("height %d, want %d", h, tc.height)
			}
			if n := tr.Nodes(); n != tc.nodes {
				t.Errorf("%d nodes, want %d", n, tc.nodes)
			}
			// Every child's submesh lies in its parent's and the children
			// tile the parent; every leaf is one processor, its own.
			for n := 0; n < tr.Nodes(); n++ {
				kids := tr.Children(n)
				if len(kids) == 0 {
					s := tr.Submesh(n)
					if s.Size() != 1 || tr.Leaf(tc.mesh.Rank(s.Row, s.Col)) != n {
						t.Fatalf("leaf %d is %v", n, s)
					}
					continue
				}
				sum := 0
				for _, c := range kids {
					cs := tr.Submesh(int(c))
					ps := tr.Submesh(n)
					if !ps.Contains(cs.Row, cs.Col) || !ps.Contains(cs.Row+cs.Rows-1, cs.Col+cs.Cols-1) {
						t.Fatalf("child %v outside parent %v", cs, ps)
					}
					sum += cs.Size()
				}
				if sum != tr.Submesh(n).Size() {
					t.Fatalf("children of %v cover %d processors", tr.Submesh(n), sum)
				}
			}
		})
	}
}

// TestEmbedding checks the modified embedding (section 2): a child sits at
// (i mod m1, j mod m2) of its submesh when its parent sits at (i, j) of
// the parent's; every node lies in its submesh; leaves on their own rank.
func TestEmbedding(t *testing.T) {
	m := Mesh{8, 8}
	for _, v := range []Variant{Tree2, Tree4, Tree16, Tree2_4, Tree4_16} {
		tr, _ := TreeFor(m, v)
		for root := 0; root < m.Size(); root += 7 {
			e := tr.Embedding(root)
			if int(e[0]) != root {
				t.Fatalf("%v: root at %d, want %d", v, e[0], root)
			}
			for n := 1; n < tr.Nodes(); n++ {
				s, ps := tr.Submesh(n), tr.Submesh(tr.Parent(n))
				r, c := m.Coord(int(e[n]))
				pr, pc := m.Coord(int(e[tr.Parent(n)]))
				wantR, wantC := s.Row+(pr-ps.Row)%s.Rows, s.Col+(pc-ps.Col)%s.Cols
				if r != wantR || c != wantC || !s.Contains(r, c) {
					t.Fatalf("%v root %d node %d at (%d,%d), want (%d,%d) in %v", v, root, n, r, c, wantR, wantC, s)
				}
			}
		}
	}
	// The paper's example: parent at row 1 of rows 0..3; child rows 2..3
	// gets row 2 + 1 mod 2 = 3.
	tr, _ := TreeFor(Mesh{4, 1}, Tree2)
	e := tr.Embedding(1)
	if got := e[tr.Children(0)[1]]; got != 3 {
		t.Fatalf("child of a root at row 1 in rows 2..3 at rank %d, want 3", got)
	}
}

// TestRouting checks dimension-order paths (columns first, then rows) and
// the congestion counters on known cases.
func TestRouting(t *testing.T) {
	m := Mesh{4, 4}
	tests := []struct {
		a, b  int
		links []int
	}{
		{0, 0, nil},
		{0, 3, []int{linkID(0, dirEast), linkID(1, dirEast), linkID(2, dirEast)}},
		{5, 14, []int{linkID(5, dirEast), linkID(6, dirSouth), linkID(10, dirSouth)}},
		{15, 0, []int{linkID(15, dirWest), linkID(14, dirWest), linkID(13, dirWest), linkID(12, dirNorth), linkID(8, dirNorth), linkID(4, dirNorth)}},
	}
	for _, tc := range tests {
		var got []int
		m.forEachLink(tc.a, tc.b, func(l int) { got = append(got, l) })
		if !slices.Equal(got, tc.links) || len(got) != m.Hops(tc.a, tc.b) {
			t.Errorf("%d->%d: links %v, want %v", tc.a, tc.b, got, tc.links)
		}
	}
	tr := NewTraffic(m)
	tr.Charge(0, 3, 100)
	tr.Charge(1, 2, 10)
	tr.Charge(2, 2, 1000) // to oneself: free
	lb, lm := m.links(tr.flows)
	if tr.startups != 2 || lb[linkID(1, dirEast)] != 110 || lm[linkID(1, dirEast)] != 2 {
		t.Fatalf("counters: startups %d, link 1E %d bytes %d msgs", tr.startups, lb[linkID(1, dirEast)], lm[linkID(1, dirEast)])
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Variant
		ok   bool
	}{
		{"2", Tree2, true}, {"4", Tree4, true}, {"16", Tree16, true}, {"2-4", Tree2_4, true}, {"4-16", Tree4_16, true},
		{"2-2", Variant{2, 2}, true}, {"4-64", Variant{4, 64}, true},
		{"3", Variant{}, false}, {"8", Variant{}, false}, {"16-32", Variant{}, false}, {"4-2", Variant{}, false}, {"x", Variant{}, false}, {"2-", Variant{}, false},
	} {
		v, err := ParseVariant(tc.in)
		if (err == nil) != tc.ok || (tc.ok && v != tc.want) {
			t.Errorf("ParseVariant(%q) = %v, %v", tc.in, v, err)
		}
	}
	for _, tc := range []struct {
		in       string
		r, c, sz int
		ok       bool
	}{
		{"16x16", 16, 16, 256, true}, {"2X8", 2, 8, 16, true}, {"", 0, 0, 12, true},
		{"4x4", 4, 4, 15, false}, {"0x4", 0, 0, 0, false}, {"4", 0, 0, 0, false},
	} {
		r, c, err := ParseMesh(tc.in)
		if err == nil && tc.sz > 0 {
			_, err = NewMesh(r, c, tc.sz)
		}
		if (err == nil) != tc.ok || (tc.ok && tc.in != "" && (r != tc.r || c != tc.c)) {
			t.Errorf("mesh %q for %d: %d x %d, %v", tc.in, tc.sz, r, c, err)
		}
	}
	if m := SquareMesh(12); m != (Mesh{3, 4}) {
		t.Errorf("SquareMesh(12) = %v", m)
	}
}
