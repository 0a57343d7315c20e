package model

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/commcost/commcost/results"
)

// gridRecords are gridshift records of one step at sizes 32 KiB .. 512 KiB
// following t_s + t_w m, with relative noise sigma.
func gridRecords(along, mode string, d int, ts, tw, sigma float64, rng *rand.Rand) []results.Record {
	var recs []results.Record
	for m := 32 << 10; m <= 512<<10; m *= 2 {
		ps := results.Params{"bytes": m, "rows": 2, "cols": 2, "along": along, "mode": mode, "d": d}
		recs = append(recs, rec("gridshift", ps, 4, noisy(rng, ts+tw*float64(m), sigma)))
	}
	return recs
}

// TestGridStepRecovery: two steps of one 2 x 2 grid with different
// effective bandwidths (the row exchange inside a group, the column
// exchange across a shared link four times slower) are fitted apart and
// each predicted with its own line; an unfitted step is unsupported.
func TestGridStepRecovery(t *testing.T) {
	const ts = 50e-6
	twRow := 8.0 / 200e6 * 1514 / 1448 // one 200 Mbit/s link
	twCol := 4 * twRow
	for _, tc := range []struct {
		name  string
		sigma float64
		tol   float64
	}{
		{"exact", 0, 1e-9},
		{"1% noise", 0.01, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 1))
			recs := append(gridRecords("row", "shift", 1, ts, twRow, tc.sigma, rng), gridRecords("col", "shift", 1, ts, twCol, tc.sigma, rng)...)
			recs = append(recs, rec("pingpong", results.Params{"bytes": 8}, 2, 1e-6)) // read by other kinds, ignored here
			g, err := FitGridStep(recs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Steps) != 2 {
				t.Fatalf("%d steps fitted, want 2", len(g.Steps))
			}
			for _, c := range []struct {
				along string
				tw    float64
			}{{"row", twRow}, {"col", twCol}} {
				in := Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 131072, "rows": 2, "cols": 2, "along": c.along, "mode": "shift", "d": 1}}
				got, err := g.Predict(in)
				if err != nil {
					t.Fatal(err)
				}
				near(t, c.along, got, ts+c.tw*131072, tc.tol)
			}
			// An XOR by 1 on lines of 2 is the shift by 1: the same fit.
			xor, err := g.Predict(Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 131072, "rows": 2, "cols": 2, "along": "col", "mode": "xor", "d": 1}})
			if err != nil {
				t.Fatalf("xor d=1 on 2 members: %v", err)
			}
			near(t, "col xor", xor, ts+twCol*131072, tc.tol)
			// The row+col step (the row step, then the column step, as
			// Cannon's alignment) is a step of its own: neither line
			// prices it, and without its records it is unsupported.
			_, err = g.Predict(Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 131072, "rows": 2, "cols": 2, "along": "row+col", "mode": "shift", "d": 1}})
			if !errors.Is(err, ErrUnsupportedPattern) {
				t.Errorf("unfitted row+col step: error %v, want ErrUnsupportedPattern", err)
			}
			_, err = g.Predict(Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 1, "rows": 2, "cols": 2, "along": "row", "mode": "align", "d": 0}})
			if !errors.Is(err, ErrUnsupportedPattern) {
				t.Errorf("unfitted step: error %v, want ErrUnsupportedPattern", err)
			}
			if _, err := g.Predict(Instance{Pattern: "pingpong", Params: results.Params{"bytes": 1}}); !errors.Is(err, ErrUnsupportedPattern) {
				t.Errorf("pingpong: error %v, want ErrUnsupportedPattern", err)
			}
			if q := g.Quality(); q.N != 10 || q.DoF != 6 {
				t.Errorf("quality N %d DoF %d, want 10 and 6", q.N, q.DoF)
			}
		})
	}
}

// TestGridStepBoth: a row+col step is fitted from its own records and
// its XOR by 1 on a 2 x 2 grid is its shift by 1 (both lines have two
// members); it does not price the row step alone.
func TestGridStepBoth(t *testing.T) {
	const ts, tw = 80e-6, 2e-7
	rng := rand.New(rand.NewPCG(3, 4))
	g, err := FitGridStep(gridRecords("row+col", "xor", 1, ts, tw, 0, rng), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Steps) != 1 || g.Steps[0].Mode != "shift" || g.Steps[0].Along != "row+col" {
		t.Fatalf("steps %+v, want one row+col shift", g.Steps)
	}
	got, err := g.Predict(Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 65536, "rows": 2, "cols": 2, "along": "row+col", "mode": "shift", "d": 1}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "row+col shift", got, ts+tw*65536, 1e-9)
	if _, err := g.Predict(Instance{Pattern: "gridshift", Ranks: 4, Params: results.Params{"bytes": 65536, "rows": 2, "cols": 2, "along": "row", "mode": "shift", "d": 1}}); !errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("row step from a row+col fit: error %v, want ErrUnsupportedPattern", err)
	}
}

// TestGridStepErrors: no records, too few sizes of a step.
func TestGridStepErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	two := gridRecords("row", "shift", 1, 1e-5, 1e-8, 0, rng)[:2]
	for _, tc := range []struct {
		name string
		recs []results.Record
		want error
	}{
		{"none", nil, ErrNoRecords},
		{"two sizes", two, ErrIllConditioned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FitGridStep(tc.recs, Options{}); !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}
