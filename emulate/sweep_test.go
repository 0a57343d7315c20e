package emulate

import (
	"fmt"
	"slices"
	"testing"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestGridPoints: the sweep order (records stream in it) and the k-access
// grid's skipped points.
func TestGridPoints(t *testing.T) {
	kk := patterns.KKGrid{K: []int{1, 2}, L: []int{64, 1024}, R: []float64{0.5, 1}}
	pts := KKPoints(kk, []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite})
	if len(pts) != 16 {
		t.Fatalf("k-k-access grid 2x2x2x2: %d points", len(pts))
	}
	for i, want := range []KKPoint{
		{K: 1, L: 64, R: 0.5, Op: "read"}, {K: 1, L: 1024, R: 0.5, Op: "read"}, {K: 2, L: 64, R: 0.5, Op: "read"},
	} {
		if pts[i] != want {
			t.Errorf("point %d = %+v, want %+v (l innermost, then k, r, op)", i, pts[i], want)
		}
	}
	if last := pts[15]; last != (KKPoint{K: 2, L: 1024, R: 1, Op: "write"}) {
		t.Errorf("last point %+v", last)
	}
	tests := []struct {
		name string
		g    KAGrid
		want int
	}{
		{"es true with a = 1 skipped", KAGrid{K: []int{5}, L: []int{256}, H: []float64{0.25, 1}, A: []int{1, 4, 16}, ES: []bool{false, true}}, 2*3 + 2*2},
		{"es false only", KAGrid{K: []int{5}, L: []int{256}, H: []float64{1}, A: []int{1}, ES: []bool{false}}, 1},
		{"es true, a = 1 only: nothing", KAGrid{K: []int{5}, L: []int{256}, H: []float64{1}, A: []int{1}, ES: []bool{true}}, 0},
		{"empty dimension", KAGrid{K: nil, L: []int{256}, H: []float64{1}, A: []int{4}, ES: []bool{false}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.g.Points()
			if len(got) != tt.want {
				t.Fatalf("%d points, want %d: %+v", len(got), tt.want, got)
			}
			for _, p := range got {
				if p.ES && p.A == 1 {
					t.Errorf("point %+v: es with a = 1", p)
				}
			}
		})
	}
}

// TestSweeps runs both sweeps on BF(2) under the local backend: one record
// per point, in Points order, each naming its point.
func TestSweeps(t *testing.T) {
	kk := patterns.KKGrid{K: []int{1, 2}, L: []int{8, 64}, R: []float64{1}}
	ka := KAGrid{K: []int{2}, L: []int{32}, H: []float64{0.25, 1}, A: []int{1, 2}, ES: []bool{false, true}}
	var got []string
	runLocal(t, "BF(2)", Config{}, func(s *Store) error {
		bc := BenchConfig{Reps: patterns.Reps{Warmup: -1, MinReps: 2, MaxReps: 2}, Seed: 3}
		emit := func(r results.Record) error {
			if s.Rank() == 0 {
				got = append(got, fmt.Sprintf("%s k=%v l=%v", r.Bench, r.Params["k"], r.Params["l"]))
			}
			return nil
		}
		if err := KKSweep(s, kk, []patterns.AccessOp{patterns.AccessRead}, bc, emit); err != nil {
			return err
		}
		return KASweep(s, ka, bc, emit)
	})
	var want []string
	for _, p := range KKPoints(kk, []patterns.AccessOp{patterns.AccessRead}) {
		want = append(want, fmt.Sprintf("%s k=%v l=%v", BenchKKAccess, p.K, p.L))
	}
	for _, p := range ka.Points() {
		want = append(want, fmt.Sprintf("%s k=%v l=%v", BenchKAccess, p.K, p.L))
	}
	if !slices.Equal(got, want) {
		t.Errorf("records\n%v\nwant\n%v", got, want)
	}
}
