package permsched

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitRelative recovers known coefficients from synthetic data with 1%
// multiplicative noise (seeded).
func TestFitRelative(t *testing.T) {
	tests := []struct {
		name  string
		coef  []float64
		xs    func(i int) []float64
		noise float64
	}{
		{"line", []float64{2e-6, 3e-9}, func(i int) []float64 { return []float64{1, float64(int(16) << (i % 12))} }, 0.01},
		{"through origin", []float64{5e-9}, func(i int) []float64 { return []float64{float64(1 + i*37)} }, 0.01},
		{"exact", []float64{1, 2, 3}, func(i int) []float64 { return []float64{1, float64(i), float64(i * i % 7)} }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			var rows [][]float64
			var y []float64
			for i := 0; i < 60; i++ {
				x := tc.xs(i)
				v := 0.0
				for j, c := range tc.coef {
					v += c * x[j]
				}
				rows = append(rows, x)
				y = append(y, v*(1+tc.noise*r.NormFloat64()))
			}
			names := make([]string, len(tc.coef))
			for j := range names {
				names[j] = string(rune('a' + j))
			}
			f, err := fitRelative(names, rows, y)
			if err != nil {
				t.Fatal(err)
			}
			for j, c := range tc.coef {
				tol := 5*f.SE[j] + 1e-12*math.Abs(c)
				if math.Abs(f.Coef[j]-c) > tol {
					t.Errorf("coef %d = %g ± %g, want %g", j, f.Coef[j], f.SE[j], c)
				}
			}
			if tc.noise == 0 && f.RSE > 1e-12 {
				t.Errorf("exact data: RSE %g", f.RSE)
			}
		})
	}
}

func TestFitRejects(t *testing.T) {
	if _, err := fitRelative([]string{"a", "b"}, [][]float64{{1, 2}, {2, 4}, {3, 6}}, []float64{1, 2, 3}); err == nil {
		t.Error("collinear design: want an error")
	}
	if _, err := fitRelative([]string{"a"}, [][]float64{{1}}, []float64{0}); err == nil {
		t.Error("zero y: want an error")
	}
	if _, err := fitRelative([]string{"a", "b"}, [][]float64{{1, 2}}, []float64{1}); err == nil {
		t.Error("too few points: want an error")
	}
	// As many points as coefficients leave no degree of freedom for the
	// standard errors (model.LeastSquares refuses it).
	if _, err := fitRelative([]string{"a", "b"}, [][]float64{{1, 2}, {1, 3}}, []float64{1, 2}); err == nil {
		t.Error("no degree of freedom: want an error")
	}
}
