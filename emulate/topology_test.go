package emulate

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// bfs computes hop distances from src independently of the routing tables.
func bfs(t *Topology, src int) []int {
	d := make([]int, t.Nodes())
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int{src}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, v := range t.Neighbors(u) {
			if d[v] < 0 {
				d[v] = d[u] + 1
				q = append(q, v)
			}
		}
	}
	return d
}

// TestTopologies checks every family against known sizes, diameters and
// mean distances (H_k over distinct pairs, H_k-k over permutations; the
// paper quotes about 2.1 and 3.7 for SE(3), section 6.5).
func TestTopologies(t *testing.T) {
	tests := []struct {
		spec                 string
		name                 string
		apps, nodes, links   int
		maxDegree            int
		diameter             int
		meanAccess, meanPerm float64 // 0: not checked
	}{
		{"SE(2)", "SE(2)", 4, 4, 3, 2, 3, 0, 0},
		{"se3", "SE(3)", 8, 8, 10, 3, 5, 116.0 / 56, 3.709},
		{"SE(4)", "SE(4)", 16, 16, 21, 3, 7, 0, 0}, // 8 exchange + 13 shuffle (two self-loops, 0101-1010 once)
		{"CCC(2)", "CCC(2)", 8, 8, 8, 2, 4, 0, 0},
		{"CCC(3)", "CCC(3)", 24, 24, 36, 3, 6, 0, 0},
		{"HC(3)", "HC(3)", 8, 8, 12, 3, 3, 12.0 / 7, 0},
		{"mesh(3x4)", "mesh(3x4)", 12, 12, 17, 4, 5, 0, 0},
		{"torus4", "torus(4x4)", 16, 16, 32, 4, 4, 2 * 16.0 / 15, 0},
		{"torus(2x3)", "torus(2x3)", 6, 6, 9, 3, 2, 0, 0},
		// Butterflies: every module is d hops from every entry node.
		{"BF(1)", "BF(1)", 2, 4, 4, 2, 2, 1, 1},
		{"BF(2)", "BF(2)", 4, 12, 16, 4, 4, 2, 2},
		{"butterfly(3)", "BF(3)", 8, 32, 48, 4, 6, 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if top.Name() != tc.name || top.Apps() != tc.apps || top.Nodes() != tc.nodes || len(top.Links()) != tc.links {
				t.Fatalf("%s: name %s apps %d nodes %d links %d, want %s %d %d %d",
					tc.spec, top.Name(), top.Apps(), top.Nodes(), len(top.Links()), tc.name, tc.apps, tc.nodes, tc.links)
			}
			deg := 0
			for u := range top.Nodes() {
				deg = max(deg, len(top.Neighbors(u)))
			}
			if deg != tc.maxDegree {
				t.Errorf("max degree %d, want %d", deg, tc.maxDegree)
			}
			if got := top.Diameter(); got != tc.diameter {
				t.Errorf("diameter %d, want %d", got, tc.diameter)
			}
			const tol = 1e-3
			if tc.meanAccess > 0 && math.Abs(top.MeanAccessDistance()-tc.meanAccess) > tol {
				t.Errorf("mean access distance %.4f, want %.4f", top.MeanAccessDistance(), tc.meanAccess)
			}
			if tc.meanPerm > 0 {
				if got := top.MeanPermutationMaxDistance(0, 1); math.Abs(got-tc.meanPerm) > tol {
					t.Errorf("mean permutation max distance %.4f, want %.4f", got, tc.meanPerm)
				}
			}
			if got := top.Ranks(); got != tc.apps+tc.nodes {
				t.Errorf("ranks %d, want %d", got, tc.apps+tc.nodes)
			}
		})
	}
}

// TestRoutingTables checks, for every topology and every pair of nodes, that
// the table's path exists, uses links, and is as long as the BFS distance;
// and that butterfly requests visit d+1 levels, one level per hop.
func TestRoutingTables(t *testing.T) {
	for _, spec := range []string{"SE(1)", "SE(3)", "SE(5)", "CCC(2)", "CCC(3)", "CCC(4)", "HC(1)", "HC(4)",
		"mesh(1x5)", "mesh(4x4)", "torus(3x5)", "torus(2x2)", "BF(1)", "BF(2)", "BF(3)", "BF(4)"} {
		t.Run(spec, func(t *testing.T) {
			top, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			n := top.Nodes()
			for u := range n {
				d := bfs(top, u)
				for v := range n {
					if d[v] < 0 {
						t.Fatalf("%d cannot reach %d", u, v)
					}
					if top.Dist(u, v) != d[v] {
						t.Fatalf("Dist(%d,%d) = %d, BFS %d", u, v, top.Dist(u, v), d[v])
					}
					path := top.Path(u, v)
					if len(path)-1 != d[v] || path[0] != u || path[len(path)-1] != v {
						t.Fatalf("path %d->%d = %v, want %d hops", u, v, path, d[v])
					}
					for i := 1; i < len(path); i++ {
						if !linked(top, path[i-1], path[i]) {
							t.Fatalf("path %d->%d uses %d-%d, not a link", u, v, path[i-1], path[i])
						}
					}
				}
			}
			if top.Kind() == KindBF {
				dim := top.Dims()[0]
				rows := 1 << dim
				for i := range top.Apps() {
					for m := range top.Apps() {
						path := top.Path(top.Entry(i), top.ModuleNode(m))
						if len(path) != dim+1 {
							t.Fatalf("request %d->%d visits %d levels, want %d", i, m, len(path), dim+1)
						}
						for l, u := range path {
							if u/rows != l {
								t.Fatalf("request %d->%d: node %d at step %d is on level %d", i, m, u, l, u/rows)
							}
						}
						back := top.Path(top.ModuleNode(m), top.Entry(i))
						if len(back) != dim+1 {
							t.Fatalf("reply %d->%d visits %d levels, want %d", m, i, len(back), dim+1)
						}
					}
				}
			}
			// The broadcast tree reaches every node from the root along
			// shortest paths.
			for v := range n {
				depth := 0
				for u := v; u != top.Root(); u = top.TreeParent(u) {
					depth++
					if depth > n {
						t.Fatalf("tree parent chain from %d does not reach the root", v)
					}
				}
				if depth != top.Dist(top.Root(), v) {
					t.Fatalf("tree depth of %d is %d, distance %d", v, depth, top.Dist(top.Root(), v))
				}
			}
		})
	}
}

func linked(t *Topology, u, v int) bool {
	for _, w := range t.Neighbors(u) {
		if w == v {
			return true
		}
	}
	return false
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec, want string
	}{
		{"XY(3)", "unknown network"},
		{"BF(0)", "dimension out of range"},
		{"BF(10)", "dimension out of range"},
		{"CCC(1)", "dimension out of range"},
		{"SE(13)", "dimension out of range"},
		{"SE()", "integer dimension"},
		{"mesh(0x4)", "sides out of range"},
		{"mesh(1x1)", "sides out of range"},
		{"mesh(4x)", "RxC"},
		{"torus(2x3x4)", "RxC"},
		{"BF((2))", "accepted forms"},
		{"BF(2", "accepted forms"},
		{"BF2)", "accepted forms"},
		{"BF(2))", "accepted forms"},
		{"(2)", "unknown network"},
		{"box(2)", `unknown network "box"`},
	}
	for _, tc := range tests {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestCheckRanks(t *testing.T) {
	top, err := Butterfly(3)
	if err != nil {
		t.Fatal(err)
	}
	err = top.CheckRanks(16)
	var rc *RankCountError
	if !errors.As(err, &rc) || err.Error() != "BF(3) needs 8 application + 32 service ranks = 40, got 16" {
		t.Fatalf("CheckRanks(16) = %v", err)
	}
	if err := top.CheckRanks(40); err != nil {
		t.Fatal(err)
	}
}

func TestRoleOf(t *testing.T) {
	top, _ := Butterfly(2)
	for r := range top.Ranks() {
		role := top.RoleOf(r)
		switch {
		case r < 4 && (role.App != r || role.Node != -1):
			t.Fatalf("rank %d: %+v, want application %d", r, role, r)
		case r >= 4 && (role.App != -1 || role.Node != r-4):
			t.Fatalf("rank %d: %+v, want node %d", r, role, r-4)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts round-trips through
// its canonical name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"BF(2)", "se3", "mesh(4x4)", "torus4", "CCC(3)", "hc(2)", "x", "mesh(99x99)", "BF(-1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		top, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(top.Name())
		if err != nil || again.Name() != top.Name() || again.Ranks() != top.Ranks() {
			t.Fatalf("Parse(%q) = %s, which does not round-trip: %v", s, top.Name(), err)
		}
	})
}

// TestMeanPermutationMaxDistanceSampled: for p > 8 the mean is sampled; it
// must lie between the mean access distance and the diameter, and be
// reproducible for a seed.
func TestMeanPermutationMaxDistanceSampled(t *testing.T) {
	for _, spec := range []string{"SE(4)", "CCC(3)", "torus(4x4)"} {
		top, _ := Parse(spec)
		a := top.MeanPermutationMaxDistance(2000, 9)
		if a < top.MeanAccessDistance() || a > float64(top.Diameter()) {
			t.Errorf("%s: sampled H_k-k %.3f outside [%.3f, %d]", spec, a, top.MeanAccessDistance(), top.Diameter())
		}
		if b := top.MeanPermutationMaxDistance(2000, 9); b != a {
			t.Errorf("%s: same seed gave %.4f and %.4f", spec, a, b)
		}
	}
}
