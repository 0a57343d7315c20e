package permsched

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Fit is a linear least-squares fit y ~ sum_j Coef[j] x_j that minimises
// relative error (MEASURE.md "Fitting": times span orders of magnitude), so
// every row is weighted by 1/y. It is solved with a QR factorisation of the
// weighted design, never the normal equations.
type Fit struct {
	Names []string
	Coef  []float64
	SE    []float64 // standard errors of Coef
	R2    float64   // 1 - SSE/SST of the weighted (relative) residuals
	RSE   float64   // residual standard error: a relative error
	N     int
}

// errFit reports a design the data cannot determine.
var errFit = errors.New("permsched: fit")

// fitRelative fits rows (one per point, one column per coefficient) to y.
// Every y must be positive.
func fitRelative(names []string, rows [][]float64, y []float64) (*Fit, error) {
	n, p := len(rows), len(names)
	if n < p || p == 0 {
		return nil, fmt.Errorf("%w: %d points for %d coefficients %v", errFit, n, p, names)
	}
	a := mat.NewDense(n, p, nil)
	b := mat.NewVecDense(n, nil)
	for i, r := range rows {
		if !(y[i] > 0) {
			return nil, fmt.Errorf("%w: point %d has non-positive value %g", errFit, i, y[i])
		}
		for j, v := range r {
			a.Set(i, j, v/y[i])
		}
		b.SetVec(i, 1)
	}
	var qr mat.QR
	qr.Factorize(a)
	if c := qr.Cond(); math.IsInf(c, 0) || c > 1e12 {
		return nil, fmt.Errorf("%w: the design of %v is rank deficient (condition number %.3g): vary the parameters more", errFit, names, c)
	}
	var beta mat.VecDense
	if err := qr.SolveVecTo(&beta, false, b); err != nil {
		return nil, fmt.Errorf("%w: %v", errFit, err)
	}
	f := &Fit{Names: names, Coef: make([]float64, p), SE: make([]float64, p), N: n}
	for j := range f.Coef {
		f.Coef[j] = beta.AtVec(j)
	}
	// Residuals: relative ones for RSE, absolute ones for R^2 on the
	// original scale (the weighted response is constant, so its own R^2
	// would be meaningless).
	sse, rel, mean := 0.0, 0.0, 0.0
	for i := 0; i < n; i++ {
		mean += y[i] / float64(n)
	}
	sst := 0.0
	for i, row := range rows {
		pred := f.Predict(row)
		sse += (y[i] - pred) * (y[i] - pred)
		sst += (y[i] - mean) * (y[i] - mean)
		rel += (1 - pred/y[i]) * (1 - pred/y[i])
	}
	if sst > 0 {
		f.R2 = 1 - sse/sst
	}
	if dof := n - p; dof > 0 {
		s2 := rel / float64(dof)
		f.RSE = math.Sqrt(s2)
		// Cov = s^2 (R^T R)^-1 with R the p x p triangle of the QR.
		var r mat.Dense
		qr.RTo(&r)
		var rinv mat.Dense
		if err := rinv.Inverse(r.Slice(0, p, 0, p)); err == nil {
			for j := 0; j < p; j++ {
				v := 0.0
				for k := 0; k < p; k++ {
					v += rinv.At(j, k) * rinv.At(j, k)
				}
				f.SE[j] = math.Sqrt(s2 * v)
			}
		}
	}
	return f, nil
}

// Predict evaluates the fit at x.
func (f *Fit) Predict(x []float64) float64 {
	y := 0.0
	for j, c := range f.Coef {
		y += c * x[j]
	}
	return y
}
