package apps

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// Known parameters: t_s = 50 us, t_w = 40 ns/B (200 Mbit/s).
const (
	testTs = 50e-6
	testTw = 40e-9
)

func param(name, unit string, v float64) model.Param {
	return model.Param{Name: name, Unit: unit, Value: v, CI95: [2]float64{v, v}, Fixed: true}
}

func testHockney() *model.Hockney {
	return &model.Hockney{Ts: param("t_s", "s", testTs), Tw: param("t_w", "s/B", testTw)}
}

func testTwoLevel(bisection map[int]float64) *model.TwoLevel {
	t := &model.TwoLevel{Ts: param("t_s", "s", testTs), Tw: param("t_w", "s/B", testTw)}
	for p, beta := range bisection {
		t.Bisection = append(t.Bisection, model.BisectionFit{Ranks: p, Beta: param("beta", "s/B", beta)})
	}
	return t
}

func predict(t *testing.T, m model.Model, w []results.WorkItem, wantView string) float64 {
	t.Helper()
	v, view, err := model.PredictWorkloadView(m, w)
	if err != nil {
		t.Fatalf("%s: %v", m.Kind(), err)
	}
	if view != wantView {
		t.Errorf("%s predicted from view %q, want %q", m.Kind(), view, wantView)
	}
	return v
}

func close(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !scalar.EqualWithinAbsOrRel(got, want, 1e-15, 1e-12) {
		t.Errorf("%s = %.12g, closed form %.12g", name, got, want)
	}
}

// TestWorkloadClosedForms: each application's workload, predicted by a
// model with known parameters, equals the closed form of its algorithm:
// Hockney on the point-to-point rounds gives paper 003's cost-table
// hypercube column (the textbook algorithms are the hypercube's) and the
// slides' "Accurate" Cannon; the two-level model on the aggregate view
// gives t_s + t_w m' per operation with m' its two-level volume.
func TestWorkloadClosedForms(t *testing.T) {
	hock := testHockney()
	for _, p := range []int{1, 4, 9, 16} {
		g, _ := SquareGrid(p)
		q := g.Rows
		n := 12 * q
		m := 8 * (n / q) * (n / q)
		t.Run(fmt.Sprintf("cannon/p=%d", p), func(t *testing.T) {
			w := Cannon{N: n}.Workload(p)
			if p == 1 {
				if len(w["align"])+len(w["shift"]) != 0 {
					t.Fatalf("one rank communicates: %v", w)
				}
				return
			}
			total := predict(t, hock, w["align"], ViewP2P) + predict(t, hock, w["shift"], ViewP2P)
			forms, err := ClosedForms("cannon", n, p, testTs, testTw)
			if err != nil {
				t.Fatal(err)
			}
			close(t, "Hockney(align + shift)", total, forms[4].Sec) // Accurate: 2 sqrt p (t_s + t_w n^2/p)
			tl := testTwoLevel(map[int]float64{q: 2 * testTw, p: 3 * testTw})
			got := predict(t, tl, w["shift"], ViewAggregate)
			close(t, "twolevel(shift)", got, float64(q-1)*(2*testTs+2*testTw*float64(m)+3*testTw*float64(m)))
			close(t, "twolevel(align)", predict(t, tl, w["align"], ViewAggregate), 2*(testTs+2*testTw*float64(m)))
		})
		t.Run(fmt.Sprintf("checkerboard/p=%d", p), func(t *testing.T) {
			w := Checkerboard{N: n}.Workload(p)
			if p == 1 {
				return
			}
			for _, ph := range []string{"rowbcast", "colbcast"} {
				want, _ := model.AggregateCost("allgather", "hypercube", q, float64(m), testTs, testTw, 0)
				if !isPow2(q) {
					want, _ = model.AggregateCost("allgather", "mesh1d", q, float64(m), testTs, testTw, 0)
				}
				close(t, "Hockney("+ph+")", predict(t, hock, w[ph], ViewP2P), want)
				if q > 2 {
					close(t, "twolevel("+ph+")", predict(t, testTwoLevel(nil), w[ph], ViewAggregate), testTs+testTw*float64((q-1)*m))
				}
			}
			if q == 2 {
				// Among two ranks the broadcast is an exchange, stated as
				// the circular shift it is: of the row (2 ranks), and of
				// all p ranks by q for the columns.
				tl := testTwoLevel(map[int]float64{2: 2 * testTw, p: 3 * testTw})
				close(t, "twolevel(rowbcast)", predict(t, tl, w["rowbcast"], ViewAggregate), testTs+2*testTw*float64(m))
				close(t, "twolevel(colbcast)", predict(t, tl, w["colbcast"], ViewAggregate), testTs+3*testTw*float64(m))
			}
		})
	}
	for _, tc := range []struct{ p, n int }{{2, 8}, {4, 64}, {8, 64}, {3, 9}} {
		t.Run(fmt.Sprintf("gauss/p=%d/n=%d", tc.p, tc.n), func(t *testing.T) {
			g := &Gauss{N: tc.n}
			w := g.Workload(tc.p)
			topo := "hypercube"
			if !isPow2(tc.p) {
				topo = "mesh1d" // the ring all-to-all broadcast
			}
			var want, wantTL float64
			for i := 0; i < tc.n-1; i++ {
				s := float64(g.pieceBytes(i, tc.p))
				sc := float64(ceilLog2(tc.p))*testTs + testTw*s*float64(tc.p-1) // binomial scatter, any p
				ag, _ := model.AggregateCost("allgather", topo, tc.p, s, testTs, testTw, 0)
				want += sc + ag
				wantTL += 2 * (testTs + testTw*float64(tc.p-1)*s)
			}
			close(t, "Hockney(pivotbcast)", predict(t, hock, w["pivotbcast"], ViewP2P), want)
			close(t, "twolevel(pivotbcast)", predict(t, testTwoLevel(nil), w["pivotbcast"], ViewAggregate), wantTL)
			xb := float64(8 * tc.n / tc.p)
			close(t, "Hockney(xbcast)", predict(t, hock, w["xbcast"], ViewP2P),
				float64(tc.p)*float64(ceilLog2(tc.p))*(testTs+testTw*xb))
		})
	}
	t.Run("multigrid", func(t *testing.T) {
		mg := &Multigrid{N: 63, Iters: 7}
		x := float64(mg.PlaneBytes())
		w := mg.Workload(5)["exchange"]
		close(t, "Hockney(exchange)", predict(t, hock, w, ViewP2P), 7*(testTs+testTw*x))
		wb, cb := model.Block{A: 100e-6, B: 10e-9}, model.Block{A: 20e-6, B: 30e-9}
		h := &model.Hyperbolic{A: param("a", "s", 0), B: param("b", "s/B", 0), Source: "alltoall"}
		aw, bw, ac, bc := param("a_w", "s", wb.A), param("b_w", "s/B", wb.B), param("a_c", "s", cb.A), param("b_c", "s/B", cb.B)
		h.Aw, h.Bw, h.Ac, h.Bc = &aw, &bw, &ac, &bc
		// Table 1, Ethernet row, n = 5: a = 4 a_w + 4 a_c, b = max{2 b_w, 4 b_c}.
		want := 7 * model.Block{A: 4*wb.A + 4*cb.A, B: math.Max(2*wb.B, 4*cb.B)}.Time(x)
		close(t, "hyperbolic(exchange)", predict(t, h, w, ViewContention), want)
	})
}

// TestWorkloadGridSteps: the grid view names the exchange steps exactly as
// Cannon and the checkerboard run them (checked against the programs'
// own partners by TestGridShiftPartners): Cannon's alignment as one
// row+col step (every row shifting by its own index, then at once every
// column by its own: the two overlap), each of its q-1 shifts as all rows
// then all columns shifting one place left (up), i.e. to member i + q - 1;
// the checkerboard's broadcasts as recursive doubling's XOR rounds (the
// 2-member round named as the shift it is) or the ring's q-1 shifts by
// one. A gridstep model with a known line per step then predicts each
// phase as the sum of its steps.
func TestWorkloadGridSteps(t *testing.T) {
	type step struct {
		along, mode string
		d, bytes    int
		count       float64
	}
	for _, tc := range []struct {
		name  string
		p     int
		work  map[string][]results.WorkItem
		g     Grid
		phase map[string][]step
	}{
		{"cannon 2x2", 4, Cannon{N: 64}.Workload(4), Grid{2, 2}, map[string][]step{
			"align": {{"row+col", "align", 0, 8 * 32 * 32, 1}},
			"shift": {{"row", "shift", 1, 8 * 32 * 32, 1}, {"col", "shift", 1, 8 * 32 * 32, 1}}}},
		{"cannon 3x3", 9, Cannon{N: 9}.Workload(9), Grid{3, 3}, map[string][]step{
			"align": {{"row+col", "align", 0, 72, 1}},
			"shift": {{"row", "shift", 2, 72, 2}, {"col", "shift", 2, 72, 2}}}},
		{"checkerboard 2x2", 4, Checkerboard{N: 64}.Workload(4), Grid{2, 2}, map[string][]step{
			"rowbcast": {{"row", "shift", 1, 8 * 32 * 32, 1}},
			"colbcast": {{"col", "shift", 1, 8 * 32 * 32, 1}}}},
		{"checkerboard 4x4", 16, Checkerboard{N: 16}.Workload(16), Grid{4, 4}, map[string][]step{
			"rowbcast": {{"row", "xor", 1, 128, 1}, {"row", "shift", 2, 256, 1}},
			"colbcast": {{"col", "xor", 1, 128, 1}, {"col", "shift", 2, 256, 1}}}},
		{"checkerboard 2x3 ring", 6, Checkerboard{N: 12, Grid: Grid{2, 3}}.Workload(6), Grid{2, 3}, map[string][]step{
			"rowbcast": {{"row", "shift", 1, 8 * 6 * 4, 2}},
			"colbcast": {{"col", "shift", 1, 8 * 6 * 4, 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := &model.GridStep{}
			want := map[string]float64{}
			lineOf := func(s step) (float64, float64) {
				return testTs, testTw * float64(1+len(s.along)+3*len(s.mode)+s.d) // a distinct line per step
			}
			for ph, steps := range tc.phase {
				for _, s := range steps {
					ts, tw := lineOf(s)
					gs.Steps = append(gs.Steps, model.GridStepFit{Ranks: tc.p, Rows: tc.g.Rows, Cols: tc.g.Cols, Along: s.along, Mode: s.mode, D: s.d,
						Ts: param("t_s", "s", ts), Tw: param("t_w", "s/B", tw)})
					want[ph] += s.count * (ts + tw*float64(s.bytes))
				}
			}
			for ph, steps := range tc.phase {
				_, views := results.WorkViews(tc.work[ph])
				if got := len(views[ViewGrid]); got != len(steps) {
					t.Errorf("%s: %d grid items, want %d: %+v", ph, got, len(steps), views[ViewGrid])
				}
				close(t, "gridstep("+ph+")", predict(t, gs, tc.work[ph], ViewGrid), want[ph])
				// The other models skip the grid view, as before it existed.
				if _, view, err := model.PredictWorkloadView(testHockney(), tc.work[ph]); err != nil || view != ViewP2P {
					t.Errorf("hockney: view %q, error %v; want the p2p view", view, err)
				}
			}
		})
	}
}
