package model

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestSuperstepsCostTable: summed over an aggregate operation's supersteps,
// a cost of t_s + t_w x per round is paper 003's table ("Timings for
// Various Aggregate Communication Operations", t_h = 0): the textbook
// rounds give the hypercube column, the mesh1d rounds the 1-D mesh column
// and the mesh2d rounds, on a square mesh, the 2-D column; the q-shift at
// the table's worst q (floor(p/2) on the ring, floor(sqrt p/2) along both
// sides of the mesh).
func TestSuperstepsCostTable(t *testing.T) {
	const ts, tw, m = 30e-6, 2e-9, 1000.0
	for _, tc := range []struct {
		impl, topo string
		ps         []int
	}{
		{"textbook", "hypercube", []int{2, 4, 8, 16}},
		{"mesh1d", "mesh1d", []int{2, 4, 8, 16}},
		{"mesh2d", "mesh2d", []int{4, 9, 16, 25, 36}},
	} {
		for _, p := range tc.ps {
			for _, op := range []string{"bcast", "allgather", "scatter", "alltoall", "qshift"} {
				if tc.impl == "mesh1d" && op == "bcast" && p&(p-1) != 0 {
					continue
				}
				if tc.impl == "mesh2d" && op == "bcast" && p != 4 && p != 16 {
					continue // log p rounds need sqrt p a power of two
				}
				q := 1
				switch {
				case op == "qshift" && tc.impl == "mesh1d":
					q = p / 2
				case op == "qshift" && tc.impl == "mesh2d":
					s := int(math.Sqrt(float64(p)))
					q = s/2*s + s/2
				}
				t.Run(fmt.Sprintf("%s/p%d/%s", tc.impl, p, op), func(t *testing.T) {
					in := Instance{Pattern: "aggregate", Ranks: p, Params: results.Params{"op": op, "impl": tc.impl, "bytes": m, "q": q}}
					steps, err := Supersteps(in)
					if err != nil {
						t.Fatal(err)
					}
					var got float64
					for _, s := range steps {
						got += s.Count * (ts + tw*s.Bytes)
					}
					want, err := AggregateCost(op, tc.topo, p, m, ts, tw, 0)
					if err != nil {
						t.Fatal(err)
					}
					near(t, "sum of t_s + t_w x", got, want, 1e-12)
				})
			}
		}
	}
}

// synth returns records of every pattern the superstep models read, with
// medians from m's own prediction: pingpong, paper 001's alltoall on 3 and
// 4 ranks, and textbook aggregates on 4 and 6 ranks, at sizes that are not
// all powers of two.
func synth(t *testing.T, m Model) []results.Record {
	t.Helper()
	var recs []results.Record
	add := func(in Instance) {
		y, err := m.Predict(in)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec(in.Pattern, in.Params, in.Ranks, y))
	}
	sz := []float64{8, 100, 1000, 3000, 4096, 6000, 16384, 50000, 262144, 1 << 20}
	for _, x := range sz {
		add(Instance{Pattern: "pingpong", Params: results.Params{"bytes": x}, Ranks: 2})
		for _, n := range []int{3, 4} {
			add(Instance{Pattern: "alltoall", Params: results.Params{"bytes": x}, Ranks: n})
		}
	}
	for _, p := range []int{4, 6} {
		for _, op := range []string{"bcast", "allgather", "scatter", "alltoall", "qshift"} {
			for _, x := range []float64{64, 3000, 65536} {
				add(Instance{Pattern: "aggregate", Params: results.Params{"op": op, "impl": "textbook", "bytes": x, "q": 1, "neighbors": 0}, Ranks: p})
			}
		}
	}
	return recs
}

// superstepTruths are models of each superstep kind with known
// coefficients, with which synth makes records.
func superstepTruths() map[string]Model {
	fixed := func(n, u string, v float64) Param { return fixedParam(n, u, v) }
	return map[string]Model{
		"bspstar": &BSPStar{G: fixed("g", "s", 20e-6), B: fixed("B", "B", 4096), L: fixed("L", "s", 50e-6)},
		"qsm":     &QSM{G: fixed("g", "s/B", 1e-9), D: fixed("d", "s", 5e-6), L: fixed("L", "s", 20e-6)},
		"cgm":     &CGM{G: fixed("g", "s/B", 1.5e-9), L: fixed("L", "s", 30e-6)},
		"c3": &C3{S: fixed("s", "s", 5e-6), H: fixed("h", "s", 2e-6), Tau: fixed("tau", "s", 1e-6), L: fixed("l", "B", 1024),
			Bisection: []C3Bisection{
				{Ranks: 2, Beta: fixed("beta", "s", 2e-6)},
				{Ranks: 3, Beta: fixed("beta", "s", 1e-6)},
				{Ranks: 4, Beta: fixed("beta", "s", 1e-6/1.5)},
				{Ranks: 6, Beta: fixed("beta", "s", 1e-6/2)},
			}},
	}
}

// TestSuperstepModelsRecover: each superstep model, fitted to records made
// by its own formula with known coefficients, recovers them exactly (and
// the grid-searched packet sizes, B and l, exactly).
func TestSuperstepModelsRecover(t *testing.T) {
	truths := superstepTruths()
	tests := []struct {
		kind  string
		truth Model
	}{{"bspstar", truths["bspstar"]}, {"qsm", truths["qsm"]}, {"cgm", truths["cgm"]}, {"c3", truths["c3"]}}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			recs := synth(t, tc.truth)
			m, err := Fit(tc.kind, recs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.truth.Params()
			got := m.Params()
			if c3, ok := m.(*C3); ok {
				// The bisection widths are derived; compare the betas.
				got = []Param{c3.S, c3.H, c3.Tau, c3.L}
				for _, b := range c3.Bisection {
					got = append(got, b.Beta)
				}
				tr := tc.truth.(*C3)
				want = []Param{tr.S, tr.H, tr.Tau, tr.L}
				for _, b := range tr.Bisection {
					want = append(want, b.Beta)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("params %v, want %v", got, want)
			}
			for i := range want {
				near(t, want[i].Name, got[i].Value, want[i].Value, 1e-7)
			}
			if q := m.Quality(); q.RSE > 1e-9 {
				t.Errorf("RSE %g on exact data", q.RSE)
			}
			for _, r := range recs {
				v, err := m.Predict(InstanceOf(r))
				if err != nil {
					t.Fatal(err)
				}
				near(t, r.Bench+" "+paramString(r.Params), v, r.Median, 1e-7)
			}
		})
	}
}

// TestSuperstepModelsFormulas: each model's prediction of single instances
// against its formula written out by hand.
func TestSuperstepModelsFormulas(t *testing.T) {
	fixed := func(v float64) Param { return fixedParam("x", "", v) }
	bs := &BSPStar{G: fixed(20e-6), B: fixed(4096), L: fixed(50e-6)}
	qs := &QSM{G: fixed(1e-9), D: fixed(5e-6), L: fixed(20e-6)}
	cg := &CGM{G: fixed(1.5e-9), L: fixed(30e-6)}
	c3 := &C3{S: fixed(5e-6), H: fixed(2e-6), Tau: fixed(1e-6), L: fixed(1024), Bisection: []C3Bisection{{Ranks: 4, Beta: fixed(0.5e-6)}}}
	pp := func(x float64) Instance {
		return Instance{Pattern: "pingpong", Params: results.Params{"bytes": x}, Ranks: 2}
	}
	a2a := func(x float64, n int) Instance {
		return Instance{Pattern: "alltoall", Params: results.Params{"bytes": x}, Ranks: n}
	}
	agg := func(op, impl string, x float64, p int) Instance {
		return Instance{Pattern: "aggregate", Params: results.Params{"op": op, "impl": impl, "bytes": x, "q": 1, "neighbors": 0}, Ranks: p}
	}
	ceil := math.Ceil
	for _, tc := range []struct {
		name string
		m    Model
		in   Instance
		want float64
	}{
		// BSP*: max{g h ceil(s/B), L}.
		{"bspstar small pingpong", bs, pp(100), 50e-6},
		{"bspstar large pingpong", bs, pp(20000), 20e-6 * ceil(20000/4096.0)},
		{"bspstar alltoall n=4", bs, a2a(5000, 4), 20e-6 * 3 * 2},
		{"bspstar textbook bcast p=8", bs, agg("bcast", "textbook", 100, 8), 3 * 50e-6},
		{"bspstar mesh1d alltoall p=4", bs, agg("alltoall", "mesh1d", 5000, 4),
			20e-6*ceil(3*5000/4096.0) + 20e-6*ceil(2*5000/4096.0) + 50e-6},
		// QSM: max{g m_rw, d k} + L.
		{"qsm small pingpong", qs, pp(100), 5e-6 + 20e-6},
		{"qsm large pingpong", qs, pp(1e6), 1e-9*1e6 + 20e-6},
		{"qsm alltoall n=4", qs, a2a(1000, 4), math.Max(1e-9*3*1000, 5e-6*3) + 20e-6},
		{"qsm mpi bcast p=5", qs, agg("bcast", "mpi", 1e5, 5), math.Max(1e-9*4*1e5, 5e-6) + 20e-6},
		// CGM: lambda (g h + L), h the operation's volume.
		{"cgm pingpong", cg, pp(1000), 1.5e-9*1000 + 30e-6},
		{"cgm textbook allgather p=8", cg, agg("allgather", "textbook", 1000, 8), 3 * (1.5e-9*7*1000 + 30e-6)},
		{"cgm mesh2d alltoall p=6", cg, agg("alltoall", "mesh2d", 1000, 6), 3 * (1.5e-9*5*1000 + 30e-6)},
		// C^3: max{sender, receiver, C_p, C_l}; pingpong is blocking on 2
		// processors (no bisection estimate there: no C_l).
		{"c3 pingpong", c3, pp(3000), math.Max(2*5e-6+3*2e-6+1e-6*3, 3*2e-6/2)},
		{"c3 large pingpong (C_p)", c3, pp(1 << 20), math.Max(2*5e-6+3*2e-6+1e-6*1024, 1024*2e-6/2)},
		{"c3 alltoall n=4 (C_l)", c3, a2a(1<<16, 4), math.Max(3*(5e-6+2e-6+64e-6), math.Max(64*12*2e-6/4, 0.5e-6*64*12))},
		{"c3 alltoall n=4 small", c3, a2a(100, 4), 3 * (5e-6 + 2e-6 + 1e-6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.m.Predict(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			near(t, tc.name, got, tc.want, 1e-12)
		})
	}
}

// TestSuperstepModelsRefuse: what the records cannot determine is an
// error or a note, never a number made up.
func TestSuperstepModelsRefuse(t *testing.T) {
	var pps []results.Record
	for _, x := range sizes(3, 20) {
		pps = append(pps, rec("pingpong", results.Params{"bytes": x}, 2, 20e-6+1e-9*x))
	}
	if _, err := Fit("c3", pps, Options{}); !errors.Is(err, ErrIllConditioned) {
		t.Errorf("c3 on blocking messages only: %v, want ErrIllConditioned (s and h cannot be told apart)", err)
	}
	var mixed []results.Record
	for _, impl := range []string{"mpi", "textbook"} {
		for _, x := range sizes(3, 10) {
			mixed = append(mixed, rec("aggregate", results.Params{"op": "bcast", "impl": impl, "bytes": x}, 4, 1e-5+1e-9*x))
		}
	}
	for _, kind := range []string{"bspstar", "qsm", "cgm", "c3"} {
		if _, err := Fit(kind, mixed, Options{}); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s on two impls without --impl: %v, want ErrBadRecord", kind, err)
		}
	}
	// BSP* on large messages only: every step bandwidth-bound, L not
	// determined.
	var large []results.Record
	for _, x := range sizes(14, 20) {
		large = append(large, rec("pingpong", results.Params{"bytes": x}, 2, 1e-6*x/4096))
	}
	m, err := Fit("bspstar", large, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := m.(*BSPStar).L; !l.Fixed || l.Value != 0 || len(m.Quality().Notes) == 0 {
		t.Errorf("L = %+v, notes %v: want L not determined (Fixed 0) with a note", l, m.Quality().Notes)
	}
}
