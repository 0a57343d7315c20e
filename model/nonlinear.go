package model

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// levenbergMarquardt minimises Σ r_i(θ)^2. Each step solves the damped
// linear least-squares problem
//
//	min ||r + J δ||^2 + λ ||D δ||^2,  D = diag(||J_j||)
//
// as the stacked system [J; sqrt(λ) D] δ = [-r; 0] by QR (Marquardt's
// scaling; no normal equations). λ shrinks after a successful step and
// grows after a failed one.
func levenbergMarquardt(theta []float64, m int, resid func(theta, r []float64), jac func(theta []float64, j *mat.Dense)) ([]float64, error) {
	p := len(theta)
	r := make([]float64, m)
	rNew := make([]float64, m)
	J := mat.NewDense(m, p, nil)
	sse := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x * x
		}
		return s
	}
	resid(theta, r)
	cur := sse(r)
	if math.IsNaN(cur) || math.IsInf(cur, 0) {
		return nil, fmt.Errorf("nonlinear fit: residuals are not finite at the starting point %v", theta)
	}
	lambda := 1e-3
	trial := make([]float64, p)
	aug := mat.NewDense(m+p, p, nil)
	rhs := mat.NewVecDense(m+p, nil)
	for iter := 0; iter < 500; iter++ {
		jac(theta, J)
		d := make([]float64, p)
		for j := 0; j < p; j++ {
			d[j] = mat.Norm(J.ColView(j), 2)
			if d[j] == 0 {
				d[j] = 1
			}
		}
		improved := false
		for tries := 0; tries < 60; tries++ {
			aug.Zero()
			aug.Slice(0, m, 0, p).(*mat.Dense).Copy(J)
			for j := 0; j < p; j++ {
				aug.Set(m+j, j, math.Sqrt(lambda)*d[j])
			}
			for i := 0; i < m; i++ {
				rhs.SetVec(i, -r[i])
			}
			for j := 0; j < p; j++ {
				rhs.SetVec(m+j, 0)
			}
			var qr mat.QR
			qr.Factorize(aug)
			var delta mat.VecDense
			if err := qr.SolveVecTo(&delta, false, rhs); err != nil {
				lambda *= 4
				continue
			}
			for j := range trial {
				trial[j] = theta[j] + delta.AtVec(j)
			}
			resid(trial, rNew)
			next := sse(rNew)
			if !math.IsNaN(next) && next <= cur {
				rel := (cur - next) / math.Max(cur, math.SmallestNonzeroFloat64)
				copy(theta, trial)
				copy(r, rNew)
				cur = next
				lambda = math.Max(lambda/3, 1e-12)
				improved = true
				var step float64
				for j := range trial {
					step = math.Max(step, math.Abs(delta.AtVec(j)))
				}
				if rel < 1e-14 || step < 1e-12 || cur == 0 {
					return theta, nil
				}
				break
			}
			lambda *= 4
			if lambda > 1e16 {
				break
			}
		}
		if !improved {
			// No step decreases the SSE: a minimum to working precision.
			return theta, nil
		}
	}
	return theta, nil
}

// hyperCurveFit is T(x; a, b) fitted to one series of sizes.
type hyperCurveFit struct {
	a, b Param
	q    Quality
}

// fitHyperbolicCurve fits T(x; a, b) = a^2/(a + b x) + b x (paper 001,
// eq. 2) by Levenberg-Marquardt over (ln a, ln b), which keeps a and b
// positive. The standard errors come from the linearisation at the
// solution: T is homogeneous of degree 1 in (a, b), so a ∂T/∂a + b ∂T/∂b = T
// (Euler) and the weighted linear least-squares fit of y on the Jacobian
// columns
//
//	∂T/∂a = (a^2 + 2 a b x)/(a + b x)^2,  ∂T/∂b = x (1 - a^2/(a + b x)^2)
//
// reproduces (a, b) at the optimum and yields the Gauss-Newton covariance
// s^2 (JᵀWJ)^-1 with its Student-t intervals, the RSE, R^2 and the
// condition number of the Jacobian.
func fitHyperbolicCurve(xs, ys []float64, pts []point, labels []string, opt Options) (*hyperCurveFit, error) {
	if len(xs) < 3 {
		return nil, fmt.Errorf("%w: a hyperbolic curve needs at least 3 message sizes, have %d", ErrIllConditioned, len(xs))
	}
	ws, note := weights(pts, ys, opt)
	var a, b float64
	tr, err := trimLoop(ys, ws, labels, opt, func(kept []int) (*linearFit, error) {
		x := make([]float64, len(kept))
		y := make([]float64, len(kept))
		w := make([]float64, len(kept))
		for i, j := range kept {
			x[i], y[i], w[i] = xs[j], ys[j], ws[j]
		}
		a0, b0 := hyperStart(x, y)
		theta, err := levenbergMarquardt([]float64{math.Log(a0), math.Log(b0)}, len(x),
			func(th, r []float64) {
				c := Block{A: math.Exp(th[0]), B: math.Exp(th[1])}
				for i := range x {
					r[i] = w[i] * (y[i] - c.Time(x[i]))
				}
			},
			func(th []float64, J *mat.Dense) {
				aa, bb := math.Exp(th[0]), math.Exp(th[1])
				for i := range x {
					da, db := hyperGrad(aa, bb, x[i])
					J.Set(i, 0, -w[i]*da*aa)
					J.Set(i, 1, -w[i]*db*bb)
				}
			})
		if err != nil {
			return nil, err
		}
		a, b = math.Exp(theta[0]), math.Exp(theta[1])
		rows := make([][]float64, len(x))
		for i := range x {
			da, db := hyperGrad(a, b, x[i])
			rows[i] = []float64{da, db}
		}
		return fitLinear(rows, y, w, []string{"a", "b"})
	})
	if err != nil {
		return nil, err
	}
	f := tr.fit
	// Report the Levenberg-Marquardt solution; the linearisation supplies
	// the uncertainties around it.
	mk := func(name, unit string, v, se float64) Param {
		return Param{Name: name, Unit: unit, Value: v, SE: se, CI95: [2]float64{v - f.tcrit*se, v + f.tcrit*se}}
	}
	q := f.quality(effectiveWeighting(opt, note), tr.trimmed)
	if note != "" {
		q.Notes = append(q.Notes, note)
	}
	return &hyperCurveFit{a: mk("a", "s", a, f.se[0]), b: mk("b", "s/B", b, f.se[1]), q: q}, nil
}

// hyperGrad returns ∂T/∂a and ∂T/∂b of T(x; a, b).
func hyperGrad(a, b, x float64) (float64, float64) {
	d := a + b*x
	return (a*a + 2*a*b*x) / (d * d), x * (1 - a*a/(d*d))
}

// hyperStart guesses (a, b): T(0) = a, so the time of the smallest message;
// b is the asymptotic slope, so the slope between the two largest sizes.
func hyperStart(x, y []float64) (float64, float64) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return x[idx[i]] < x[idx[j]] })
	a := y[idx[0]]
	n := len(idx)
	hi, lo := idx[n-1], idx[n-2]
	b := 0.0
	if x[hi] > x[lo] {
		b = (y[hi] - y[lo]) / (x[hi] - x[lo])
	}
	if b <= 0 && x[hi] > 0 {
		b = y[hi] / x[hi]
	}
	if b <= 0 {
		b = 1e-12
	}
	if a <= 0 {
		a = 1e-9
	}
	return a, b
}
