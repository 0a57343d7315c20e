package emulate

import (
	"fmt"
	"math"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func TestKKDestinations(t *testing.T) {
	tests := []struct {
		p, k     int
		r        float64
		accessed int
	}{
		{8, 4, 1, 8},
		{8, 3, 0.5, 4},
		{16, 2, 0.125, 2},
		{4, 5, 0.01, 1}, // at least one rank
	}
	for _, tc := range tests {
		rng := pointRNG(1, 2, 3)
		dest := kkDestinations(rng, tc.p, tc.k, tc.r)
		n := 0
		for _, d := range dest {
			if d != nil {
				n++
				if len(d) != tc.k {
					t.Fatalf("p=%d k=%d: %d destinations", tc.p, tc.k, len(d))
				}
			}
		}
		if n != tc.accessed {
			t.Fatalf("p=%d r=%v: %d accessing ranks, want %d", tc.p, tc.r, n, tc.accessed)
		}
		for j := range tc.k {
			seen := map[int]bool{}
			for _, d := range dest {
				if d == nil {
					continue
				}
				if seen[d[j]] || d[j] < 0 || d[j] >= tc.p {
					t.Fatalf("step %d is not a partial permutation: %v", j, dest)
				}
				seen[d[j]] = true
			}
		}
	}
}

func TestKDestinations(t *testing.T) {
	for _, tc := range []struct {
		pt  KAPoint
		p   int
		hot int
	}{
		{KAPoint{K: 3, H: 1, A: 4, ES: true}, 8, 8},
		{KAPoint{K: 2, H: 0.5, A: 5, ES: false}, 8, 4},
		{KAPoint{K: 1, H: 0.125, A: 3, ES: true}, 8, 1},
	} {
		dest := kDestinations(pointRNG(4, 5, 6), tc.p, tc.pt)
		var hotMods []int
		for a := range tc.pt.A {
			best, bestMod := 0, -1
			for j := range tc.pt.K {
				count := map[int]int{}
				for i := range tc.p {
					count[dest[a][i][j]]++
				}
				for m, c := range count {
					if c > best {
						best, bestMod = c, m
					}
				}
			}
			if best != tc.hot {
				t.Fatalf("%+v access %d: largest group hitting one module %d, want %d", tc.pt, a, best, tc.hot)
			}
			hotMods = append(hotMods, bestMod)
		}
		if tc.hot > 1 {
			for a := 1; a < len(hotMods); a++ {
				if tc.pt.ES != (hotMods[a] == hotMods[0]) {
					t.Fatalf("%+v: hot modules %v", tc.pt, hotMods)
				}
			}
		}
	}
}

func TestSplitAccess(t *testing.T) {
	cfg := Config{PacketBytes: 4096, SplitFunc: func(d int) (int, int) { return 4, (d + 3) / 4 }}
	tests := []struct {
		d       int
		version SplitVersion
		k, l    int
	}{
		{10000, SplitOne, 1, 10000},
		{10000, SplitFixed, 3, 4096},
		{4096, SplitFixed, 1, 4096},
		{100, SplitFixed, 1, 100},
		{10000, SplitModel, 4, 2500},
		{0, SplitFixed, 1, 0},
	}
	for _, tc := range tests {
		if k, l := splitAccess(tc.d, tc.version, cfg); k != tc.k || l != tc.l {
			t.Errorf("splitAccess(%d, v%d) = %d x %d, want %d x %d", tc.d, tc.version, k, l, tc.k, tc.l)
		}
	}
}

// TestModelSplit checks version 3 against paper 000, section 7: with
// T(k, l, 1) = a3 kl + a2 l + a1 k + a0 the optimum for D = kl is
// k0 = sqrt(a2/a1 D), l0 = sqrt(a1/a2 D). With a1 = c6 + c3 = 100 us and
// a2 = c4 + c2 = 0.01 us/B, D = 10000 B gives k0 = 1, l0 = 10000; with
// a2 = 1 us/B, k0 = 10 packets of 1000 B.
func TestModelSplit(t *testing.T) {
	tr := func(c6, c3, c4, c2 float64) *model.Trilinear {
		m := &model.Trilinear{}
		m.C[7-6].Value, m.C[7-3].Value, m.C[7-4].Value, m.C[7-2].Value = c6, c3, c4, c2
		return m
	}
	tests := []struct {
		m         *model.Trilinear
		d, min    int
		wantK     int
		wantL     int
		tolerance int
	}{
		{tr(60e-6, 40e-6, 0.005e-6, 0.005e-6), 10000, 1, 1, 10000, 0},
		{tr(60e-6, 40e-6, 0.5e-6, 0.5e-6), 10000, 1, 10, 1000, 0},
		{tr(60e-6, 40e-6, 0.5e-6, 0.5e-6), 10000, 2000, 5, 2000, 0}, // floor on the packet length
		{tr(-60e-6, 40e-6, 0.5e-6, 0.5e-6), 10000, 1, 1, 10000, 0},  // no interior optimum: one packet
		{tr(60e-6, 40e-6, 0.5e-6, 0.5e-6), 262144, 64, 51, 5141, 1}, // sqrt(0.01 * 262144) = 51.2
	}
	for _, tc := range tests {
		k, l := ModelSplit(tc.m, tc.min)(tc.d)
		if abs(k-tc.wantK) > tc.tolerance || k*l < tc.d || (k-1)*l >= tc.d {
			t.Errorf("ModelSplit(d=%d, min=%d) = %d x %d, want about %d x %d", tc.d, tc.min, k, l, tc.wantK, tc.wantL)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestCounters: one read of module 3 by application 0 through BF(2)
// crosses 2 links out (levels 0-1-2) and 3 back (2-1-0, then the
// application link), so the links carry 5 packets, one per link on the path.
func TestCounters(t *testing.T) {
	runLocal(t, "BF(2)", Config{}, func(s *Store) error {
		v, err := s.CreateAt("x", 64, 3)
		if err != nil {
			return err
		}
		if err := s.AppComm().Barrier(); err != nil {
			return err
		}
		if s.Rank() == 0 {
			if _, err := s.Stats(true); err != nil {
				return err
			}
			if err := s.Read(v, 0, make([]byte, 64)); err != nil {
				return err
			}
			st, err := s.Stats(false)
			if err != nil {
				return err
			}
			c := Counters(st)
			if c["packets"] != 5 || c["reads"] != 1 || c["received"] != 5 {
				return fmt.Errorf("one read: packets %v reads %v received %v, want 5 1 5", c["packets"], c["reads"], c["received"])
			}
			path := s.Topology().Path(s.Topology().Entry(0), s.Topology().ModuleNode(3))
			for i := 1; i < len(path); i++ {
				key := fmt.Sprintf("link.%d-%d.packets", path[i-1], path[i])
				if c[key] != 1 {
					return fmt.Errorf("%s = %v, want 1 (%v)", key, c[key], c)
				}
			}
			if c["link.0-app.packets"] != 1 {
				return fmt.Errorf("application link carried %v packets", c["link.0-app.packets"])
			}
		}
		return s.AppComm().Barrier()
	})
}

// TestDrivers runs each driver once on BF(2) and checks the records' shape
// and the traffic their counters account for.
func TestDrivers(t *testing.T) {
	recs := map[string]results.Record{}
	runLocal(t, "BF(2)", Config{}, func(s *Store) error {
		bc := BenchConfig{Reps: patterns.Reps{Warmup: -1, MinReps: 3, MaxReps: 3}, Seed: 1}
		kk, err := KKAccess(s, KKPoint{K: 4, L: 256, R: 1, Op: "read"}, bc)
		if err != nil {
			return err
		}
		ka, err := KAccess(s, KAPoint{K: 4, L: 128, H: 1, A: 16, ES: true}, bc)
		if err != nil {
			return err
		}
		sp, err := SplitAccess(s, SplitPoint{Ints: 3000, Version: SplitFixed, Op: "read"}, bc)
		if err != nil {
			return err
		}
		kkr, err := KKAccess(s, KKPoint{K: 1, L: 8, R: 0.6, Op: "write"}, bc)
		if err != nil {
			return err
		}
		if s.Rank() == 0 {
			recs["kk"], recs["ka"], recs["split"], recs["kk-r"] = kk, ka, sp, kkr
		}
		return nil
	})
	kk := recs["kk"]
	if kk.Bench != "kkaccess" || kk.Unit != "s" || kk.N != 3 || kk.Params["network"] != "BF(2)" || kk.Params["k"] != 4 || kk.Params["l"] != 256 || kk.Params["r"] != 1.0 || kk.Params["op"] != "read" {
		t.Fatalf("kkaccess record: %+v", kk)
	}
	// 3 repetitions x 4 ranks x 4 reads, 5 packets each.
	if kk.Counters["reads"] != 48 || kk.Counters["packets"] != 240 || kk.Derived["hops_mean"] != 3 {
		t.Fatalf("kkaccess counters: reads %v packets %v hops %v", kk.Counters["reads"], kk.Counters["packets"], kk.Derived["hops_mean"])
	}
	ka := recs["ka"]
	if ka.Bench != "kaccess" || ka.Params["h"] != 1.0 || ka.Params["a"] != 16 || ka.Params["es"] != true || ka.Counters["reads"] != 3*4*16*4 {
		t.Fatalf("kaccess record: params %v reads %v", ka.Params, ka.Counters["reads"])
	}
	if ka.Counters["sink_hwm_max"] < 2 {
		t.Fatalf("h = 1 made no queue at the hot module: sink_hwm_max %v", ka.Counters["sink_hwm_max"])
	}
	// The access records name their points as the patterns' own records
	// do (realised r and h, op), plus the network; the asked values are
	// counters.
	for _, c := range []struct {
		rec     results.Record
		pattern patterns.Pattern
		counter string
		asked   float64
	}{
		{recs["kk"], patterns.KKAccess{K: 4, L: 256, R: 1}, patterns.CounterRAsked, 1},
		{recs["kk-r"], patterns.KKAccess{K: 1, L: 8, R: 0.6, Op: patterns.AccessWrite}, patterns.CounterRAsked, 0.6},
		{recs["ka"], patterns.KAccess{K: 4, L: 128, H: 1, A: 16, ES: true}, patterns.CounterHAsked, 1},
	} {
		want := c.pattern.Params(4)
		want["network"] = "BF(2)"
		if fmt.Sprint(c.rec.Params) != fmt.Sprint(want) || c.rec.Counters[c.counter] != c.asked {
			t.Errorf("%s record params %v, %s %v; want %v, %v", c.rec.Bench, c.rec.Params, c.counter, c.rec.Counters[c.counter], want, c.asked)
		}
	}
	if r := recs["kk-r"].Params["r"]; r != 0.5 {
		t.Errorf("k-k-access with r = 0.6 on 4 ranks: params r = %v, want the realised 0.5", r)
	}
	sp := recs["split"]
	if sp.Bench != "packetsplit" || sp.Params["bytes"] != 12000 || sp.Derived["k"] != 3 || sp.Derived["l"] != 4096 || sp.Counters["reads"] != 3*4*3 {
		t.Fatalf("packetsplit record: params %v derived %v reads %v", sp.Params, sp.Derived, sp.Counters["reads"])
	}
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			t.Fatalf("%s: %v", r.Bench, err)
		}
		if math.IsNaN(r.Median) || r.Median <= 0 {
			t.Fatalf("%s: median %v", r.Bench, r.Median)
		}
	}
}
