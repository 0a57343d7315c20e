package model

import (
	"math"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

func TestAggregateCostTable(t *testing.T) {
	ts, tw, th := 10e-6, 1e-9, 0.5e-6
	m := 4096.0
	p := 16
	P, lg, sp := 16.0, 4.0, 4.0
	for _, tc := range []struct {
		op, topo string
		want     float64
	}{
		{"bcast", "mesh1d", (ts+tw*m)*lg + th*(P-1)},
		{"bcast", "mesh2d", (ts+tw*m)*lg + 2*th*(sp-1)},
		{"bcast", "hypercube", (ts + tw*m) * lg},
		{"bcast2", "mesh1d", 2 * (ts*P + tw*m)},
		{"bcast2", "mesh2d", 2 * (2*ts*sp + tw*m)},
		{"bcast2", "hypercube", 2 * (ts*lg + tw*m)},
		{"allgather", "mesh1d", (ts + tw*m) * (P - 1)},
		{"allgather", "mesh2d", 2*ts*(sp-1) + tw*m*(P-1)},
		{"allgather", "hypercube", ts*lg + tw*m*(P-1)},
		{"scatter", "hypercube", ts*lg + tw*m*(P-1)},
		{"alltoall", "mesh1d", (ts + tw*m*P/2) * (P - 1)},
		{"alltoall", "mesh2d", (2*ts + tw*m*P) * (sp - 1)},
		{"alltoall", "hypercube", (ts+tw*m)*(P-1) + th/2*P*lg},
		{"qshift", "mesh1d", (ts + tw*m) * 8},
		{"qshift", "mesh2d", (ts + tw*m) * 5},
		{"qshift", "hypercube", ts + tw*m + th*lg},
	} {
		got, err := AggregateCost(tc.op, tc.topo, p, m, ts, tw, th)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.op+"/"+tc.topo, got, tc.want, 1e-12)
	}
	if _, err := AggregateCost("news", "mesh2d", 4, 1, 1, 1, 1); err == nil {
		t.Error("news has no table row")
	}
	if _, err := AggregateCost("bcast", "torus", 4, 1, 1, 1, 1); err == nil {
		t.Error("unknown topology accepted")
	}
}

// aggregateRecords simulates a machine with bisection width c(p) under the
// two-level model.
func aggregateRecords(ts, tw float64, bisection map[int]float64) []results.Record {
	var recs []results.Record
	for p, c := range bisection {
		for _, op := range aggregateOps {
			for _, m := range sizes(10, 20) {
				M, _ := MaxVolumeBytes(op, m, p, 0)
				y := ts + tw*M
				if s, _ := BisectionSensitive(op); s {
					y = ts + tw*M*float64(p)/c
				}
				recs = append(recs, rec("aggregate", results.Params{"op": op, "impl": "mpi", "bytes": m}, p, y))
			}
		}
	}
	return recs
}

func TestTwoLevelRecovery(t *testing.T) {
	// A bus-like network: c = 1 at every p; and a fat one at p = 16.
	bis := map[int]float64{4: 1, 8: 1, 16: 8}
	tl, err := FitTwoLevel(aggregateRecords(20e-6, 0.5e-9, bis), Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t_s", tl.Ts.Value, 20e-6, 1e-8)
	near(t, "t_w", tl.Tw.Value, 0.5e-9, 1e-8)
	if len(tl.Bisection) != 3 {
		t.Fatalf("bisection %v", tl.Bisection)
	}
	for _, b := range tl.Bisection {
		near(t, sprintf("c@%d", b.Ranks), b.C.Value, bis[b.Ranks], 1e-7)
	}
	got, err := tl.Predict(Instance{Pattern: "aggregate", Params: results.Params{"op": "alltoall", "bytes": 1e4}, Ranks: 8})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "alltoall p=8", got, 20e-6+0.5e-9*7e4*8, 1e-8)
	if _, err := tl.Predict(Instance{Pattern: "aggregate", Params: results.Params{"op": "qshift", "bytes": 1.0}, Ranks: 32}); err == nil ||
		!strings.Contains(err.Error(), "ranks = 32") {
		t.Errorf("err = %v", err)
	}
	tab, err := TableFromTwoLevel(tl, "hypercube", 0)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tab.Predict(Instance{Pattern: "aggregate", Params: results.Params{"op": "bcast", "bytes": 1024.0}, Ranks: 8})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "table bcast", v, (20e-6+0.5e-9*1024)*3, 1e-8)
}

func TestTwoLevelBadInput(t *testing.T) {
	recs := aggregateRecords(1e-5, 1e-9, map[int]float64{4: 1})
	recs = append(recs, rec("aggregate", results.Params{"op": "reduce", "impl": "mpi", "bytes": 8.0}, 4, 1e-5))
	if _, err := FitTwoLevel(recs, Options{}); err == nil || !strings.Contains(err.Error(), `op "reduce"`) {
		t.Errorf("err = %v", err)
	}
	mixed := aggregateRecords(1e-5, 1e-9, map[int]float64{4: 1})
	mixed = append(mixed, rec("aggregate", results.Params{"op": "bcast", "impl": "textbook", "bytes": 8.0}, 4, 1e-5))
	if _, err := FitTwoLevel(mixed, Options{}); err == nil || !strings.Contains(err.Error(), "mix impls") {
		t.Errorf("err = %v", err)
	}
	if _, err := FitTwoLevel(mixed, Options{Impl: "mpi"}); err != nil {
		t.Errorf("with impl selected: %v", err)
	}
}

func TestBSP(t *testing.T) {
	g, L := 2e-9, 30e-6
	var recs []results.Record
	for _, p := range []int{2, 4, 8} {
		for _, x := range sizes(4, 18) {
			recs = append(recs, rec("alltoall", results.Params{"bytes": x}, p, g*float64(p-1)*x+L))
		}
	}
	b, err := FitBSP(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "g", b.G.Value, g, 1e-9)
	near(t, "L", b.L.Value, L, 1e-9)
	v, err := b.Predict(Instance{Pattern: "kkaccess", Params: results.Params{"k": 4.0, "l": 1024.0, "r": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "kkaccess h = k l", v, g*4096+L, 1e-12)
	if math.IsNaN(b.Fit.AdjR2) {
		t.Error("adj R^2 NaN")
	}
}
