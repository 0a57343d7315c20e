package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestLeastSquares checks the exported solver against closed forms: for an
// unweighted straight line y = a + b x, b = Sxy/Sxx, a = ybar - b xbar,
// SE(b) = s/sqrt(Sxx), SE(a) = s sqrt(1/n + xbar^2/Sxx) with s^2 =
// SSE/(n-2), and R^2 = 1 - SSE/Syy.
func TestLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	for _, tc := range []struct {
		name  string
		n     int
		noise float64
	}{
		{"exact", 12, 0},
		{"noisy", 40, 0.3},
		{"three points", 3, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows [][]float64
			var xs, ys, ws []float64
			for i := 0; i < tc.n; i++ {
				x := float64(i*i%17) + float64(i)
				y := 2 + 0.5*x + tc.noise*rng.NormFloat64()
				rows = append(rows, []float64{1, x})
				xs, ys, ws = append(xs, x), append(ys, y), append(ws, 1)
			}
			f, err := LeastSquares([]string{"a", "b"}, rows, ys, ws)
			if err != nil {
				t.Fatal(err)
			}
			n := float64(tc.n)
			var xbar, ybar float64
			for i := range xs {
				xbar += xs[i] / n
				ybar += ys[i] / n
			}
			var sxx, sxy, syy float64
			for i := range xs {
				sxx += (xs[i] - xbar) * (xs[i] - xbar)
				sxy += (xs[i] - xbar) * (ys[i] - ybar)
				syy += (ys[i] - ybar) * (ys[i] - ybar)
			}
			b := sxy / sxx
			a := ybar - b*xbar
			var sse float64
			for i := range xs {
				r := ys[i] - a - b*xs[i]
				sse += r * r
			}
			s := math.Sqrt(sse / (n - 2))
			near(t, "a", f.Coef[0], a, 1e-9)
			near(t, "b", f.Coef[1], b, 1e-9)
			if tc.noise > 0 {
				near(t, "SE(b)", f.SE[1], s/math.Sqrt(sxx), 1e-6)
				near(t, "SE(a)", f.SE[0], s*math.Sqrt(1/n+xbar*xbar/sxx), 1e-6)
				near(t, "R^2", f.R2, 1-sse/syy, 1e-9)
				near(t, "RSE", f.RSE, s, 1e-9)
				tq := tQuantile975(tc.n - 2)
				near(t, "CI95 lo", f.CI95[1][0], b-tq*f.SE[1], 1e-9)
				near(t, "cov(b,b)", f.Cov[3], f.SE[1]*f.SE[1], 1e-9)
			} else if f.RSE > 1e-12 {
				t.Errorf("exact data: RSE %g", f.RSE)
			}
			if f.N != tc.n || f.DoF != tc.n-2 {
				t.Errorf("N %d DoF %d", f.N, f.DoF)
			}
			near(t, "Predict", f.Predict([]float64{1, 10}), f.Coef[0]+10*f.Coef[1], 1e-12)
		})
	}
}

func TestLeastSquaresRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows [][]float64
		y    []float64
	}{
		{"collinear", [][]float64{{1, 2}, {2, 4}, {3, 6}}, []float64{1, 2, 3}},
		{"no degree of freedom", [][]float64{{1, 2}, {1, 3}}, []float64{1, 2}},
		{"zero column", [][]float64{{1, 0}, {1, 0}, {1, 0}}, []float64{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := RelativeWeights(tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := LeastSquares([]string{"a", "b"}, tc.rows, tc.y, w); !errors.Is(err, ErrIllConditioned) {
				t.Errorf("err = %v, want ErrIllConditioned", err)
			}
		})
	}
	for _, y := range [][]float64{{1, 0}, {1, -2}, {math.Inf(1)}, {math.NaN()}} {
		if _, err := RelativeWeights(y); !errors.Is(err, ErrBadRecord) {
			t.Errorf("RelativeWeights(%v): err = %v", y, err)
		}
	}
}
