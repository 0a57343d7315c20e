package model

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// linearFit is a weighted linear least-squares fit y ≈ X β.
type linearFit struct {
	names []string
	coef  []float64
	se    []float64
	ci    [][2]float64
	cov   *mat.SymDense // covariance of coef
	sse   float64       // Σ (w_i r_i)^2
	rse   float64       // sqrt(sse/dof)
	r2    float64
	adjR2 float64
	cond  float64 // condition number of the weighted design with unit column norms
	n     int
	dof   int
	wres  []float64 // weighted residuals w_i (y_i - x_i β)
	tcrit float64   // Student t quantile 0.975 at dof
}

// tQuantile975 returns the two-sided 95% Student-t critical value.
func tQuantile975(dof int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(dof)}.Quantile(0.975)
}

// fitLinear minimises Σ (w_i (y_i - x_i·β))^2.
//
// The weighted design W X is scaled to unit column norms (D) before the
// Householder QR factorisation, W X D^-1 = Q R, so the condition number
// measures collinearity rather than units; β = D^-1 R^-1 Qᵀ W y. The normal
// equations are never formed (they square the condition number). The
// covariance is s^2 D^-1 (RᵀR)^-1 D^-1 = s^2 D^-1 R^-1 R^-T D^-1 with
// s^2 = SSE/(n-p), and the 95% CI is β_j ± t_{0.975,n-p} SE_j.
func fitLinear(rows [][]float64, y, w []float64, names []string) (*linearFit, error) {
	n := len(rows)
	p := len(names)
	if n <= p {
		return nil, fmt.Errorf("%w: %d points for %d coefficients (%v); need at least %d points to estimate uncertainties",
			ErrIllConditioned, n, p, names, p+1)
	}
	xs := mat.NewDense(n, p, nil)
	wy := mat.NewVecDense(n, nil)
	for i, r := range rows {
		if len(r) != p {
			panic(fmt.Sprintf("model: design row %d has %d columns, want %d", i, len(r), p))
		}
		for j, v := range r {
			xs.Set(i, j, w[i]*v)
		}
		wy.SetVec(i, w[i]*y[i])
	}
	scale := make([]float64, p)
	for j := 0; j < p; j++ {
		scale[j] = mat.Norm(xs.ColView(j), 2)
		if scale[j] == 0 || math.IsNaN(scale[j]) || math.IsInf(scale[j], 0) {
			return nil, fmt.Errorf("%w: the column of %s is all zero (its predictor never varies from 0)", ErrIllConditioned, names[j])
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			xs.Set(i, j, xs.At(i, j)/scale[j])
		}
	}
	cond := mat.Cond(xs, 2)
	if math.IsNaN(cond) || cond > MaxCondition {
		return nil, fmt.Errorf("%w: condition number %.3g exceeds %.0e for coefficients %v", ErrIllConditioned, cond, MaxCondition, names)
	}

	var qr mat.QR
	qr.Factorize(xs)
	var bs mat.VecDense
	if err := qr.SolveVecTo(&bs, false, wy); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIllConditioned, err)
	}
	var rfull mat.Dense
	qr.RTo(&rfull)
	r := mat.NewTriDense(p, mat.Upper, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			r.SetTri(i, j, rfull.At(i, j))
		}
	}
	var rinv mat.TriDense
	if err := rinv.InverseTri(r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIllConditioned, err)
	}

	f := &linearFit{names: names, n: n, dof: n - p, cond: cond}
	f.coef = make([]float64, p)
	for j := range f.coef {
		f.coef[j] = bs.AtVec(j) / scale[j]
	}
	f.wres = make([]float64, n)
	var sumW, sumWy float64
	for i, row := range rows {
		var pred float64
		for j, v := range row {
			pred += v * f.coef[j]
		}
		f.wres[i] = w[i] * (y[i] - pred)
		f.sse += f.wres[i] * f.wres[i]
		sumW += w[i] * w[i]
		sumWy += w[i] * w[i] * y[i]
	}
	ybar := sumWy / sumW
	var sst float64
	for i := range y {
		d := y[i] - ybar
		sst += w[i] * w[i] * d * d
	}
	if sst > 0 {
		f.r2 = 1 - f.sse/sst
		f.adjR2 = 1 - (1-f.r2)*float64(n-1)/float64(f.dof)
	}
	s2 := f.sse / float64(f.dof)
	f.rse = math.Sqrt(s2)
	f.tcrit = tQuantile975(f.dof)

	// (RᵀR)^-1 = R^-1 R^-T, then undo the column scaling.
	var a mat.Dense
	a.Mul(&rinv, rinv.T())
	f.cov = mat.NewSymDense(p, nil)
	f.se = make([]float64, p)
	f.ci = make([][2]float64, p)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			f.cov.SetSym(i, j, s2*a.At(i, j)/(scale[i]*scale[j]))
		}
		f.se[i] = math.Sqrt(f.cov.At(i, i))
		f.ci[i] = [2]float64{f.coef[i] - f.tcrit*f.se[i], f.coef[i] + f.tcrit*f.se[i]}
	}
	return f, nil
}

// LinearFit is the result of LeastSquares: the coefficients with their
// standard errors and Student-t 95% confidence intervals, in the order of
// the names given, and the fit's statistics.
type LinearFit struct {
	Names []string
	Coef  []float64
	SE    []float64
	CI95  [][2]float64
	// Cov is the covariance matrix of Coef (row-major, len(Names)^2).
	Cov []float64
	// RSE is the residual standard error of the weighted residuals: a
	// relative error under RelativeWeights.
	RSE float64
	// R2 and AdjR2 are the coefficient of determination of the weighted
	// fit, about the weighted mean, and its adjustment for the degrees of
	// freedom.
	R2, AdjR2 float64
	// Cond is the condition number of the weighted design with unit
	// column norms; fits above MaxCondition are refused.
	Cond   float64
	N, DoF int
}

// LeastSquares minimises Σ (w_i (y_i - x_i·β))^2 over β, with x_i =
// rows[i], by the QR factorisation every model in this package uses
// (MEASURE.md "Fitting"): column-scaled, never the normal equations,
// refusing rank-deficient or ill-conditioned designs (condition number
// above MaxCondition) and designs with no degree of freedom left for the
// uncertainties (len(rows) <= len(names)), with errors wrapping
// ErrIllConditioned. Rows of another length than names, and y or w of
// another length than rows, are programmer misuse and panic.
func LeastSquares(names []string, rows [][]float64, y, w []float64) (*LinearFit, error) {
	if len(y) != len(rows) || len(w) != len(rows) {
		panic(fmt.Sprintf("model: LeastSquares with %d rows, %d values, %d weights", len(rows), len(y), len(w)))
	}
	f, err := fitLinear(rows, y, w, names)
	if err != nil {
		return nil, err
	}
	p := len(names)
	out := &LinearFit{
		Names: append([]string(nil), names...), Coef: f.coef, SE: f.se, CI95: f.ci,
		Cov: make([]float64, p*p), RSE: f.rse, R2: f.r2, AdjR2: f.adjR2, Cond: f.cond, N: f.n, DoF: f.dof,
	}
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			out.Cov[i*p+j] = f.cov.At(i, j)
		}
	}
	return out, nil
}

// RelativeWeights returns the weights 1/y_i that make LeastSquares
// minimise relative error (times span orders of magnitude). Every y_i must
// be positive and finite.
func RelativeWeights(y []float64) ([]float64, error) {
	w := make([]float64, len(y))
	for i, v := range y {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: value %d is %g; relative weights need positive values", ErrBadRecord, i+1, v)
		}
		w[i] = 1 / v
	}
	return w, nil
}

// Predict evaluates the fitted linear form at x.
func (f *LinearFit) Predict(x []float64) float64 {
	var s float64
	for j, v := range x {
		s += v * f.Coef[j]
	}
	return s
}

// param returns coefficient j as a Param.
func (f *linearFit) param(j int, unit string) Param {
	return Param{Name: f.names[j], Unit: unit, Value: f.coef[j], SE: f.se[j], CI95: f.ci[j]}
}

// predict evaluates the fitted linear form at row.
func (f *linearFit) predict(row []float64) float64 {
	var s float64
	for j, v := range row {
		s += v * f.coef[j]
	}
	return s
}

// trimResult is a fit after one-sided outlier trimming.
type trimResult struct {
	fit     *linearFit
	kept    []int    // indices of the rows the final fit used
	trimmed []string // labels of the dropped rows
}

// fitLinearTrimmed fits, then repeatedly drops the single point lying
// furthest above the fit while it is more than opt.TrimSigma robust
// standard deviations above it. Only points above the fit are dropped:
// interference (daemons, other jobs, a preempted rank) can only slow a
// measurement down, so a point far below the fit is information, not an
// outlier. One point per round, because one gross outlier drags the fit
// and inflates its neighbours' residuals. Trimming stops at
// opt.MaxTrimFraction of the points and always leaves at least one degree
// of freedom. The robust scale is 1.4826 * MAD of the weighted residuals,
// floored at 1e-9 of the typical weighted value so that exact data is never
// trimmed on rounding noise.
func fitLinearTrimmed(rows [][]float64, y, w []float64, names, labels []string, opt Options) (*trimResult, error) {
	return trimLoop(y, w, labels, opt, func(kept []int) (*linearFit, error) {
		r := make([][]float64, len(kept))
		yy := make([]float64, len(kept))
		ww := make([]float64, len(kept))
		for i, j := range kept {
			r[i], yy[i], ww[i] = rows[j], y[j], w[j]
		}
		return fitLinear(r, yy, ww, names)
	})
}

// trimLoop runs the trimming of fitLinearTrimmed around any fit of the
// rows kept (nonlinear fits pass their linearisation at the solution).
func trimLoop(y, w []float64, labels []string, opt Options, fit func(kept []int) (*linearFit, error)) (*trimResult, error) {
	kept := make([]int, len(y))
	for i := range kept {
		kept[i] = i
	}
	k := opt.trimSigma()
	maxTrim := int(opt.maxTrimFraction() * float64(len(y)))
	wyAbs := make([]float64, len(y))
	for i := range y {
		wyAbs[i] = math.Abs(w[i] * y[i])
	}
	floor := 1e-9 * median(wyAbs)
	var trimmed []string
	for {
		f, err := fit(kept)
		if err != nil {
			return nil, err
		}
		if math.IsInf(k, 1) || len(trimmed) >= maxTrim || f.dof <= 1 {
			return &trimResult{fit: f, kept: kept, trimmed: trimmed}, nil
		}
		scale := math.Max(1.4826*mad(f.wres), floor)
		worst, worstRes := -1, k*scale
		for i, res := range f.wres {
			if res > worstRes {
				worst, worstRes = i, res
			}
		}
		if worst < 0 {
			return &trimResult{fit: f, kept: kept, trimmed: trimmed}, nil
		}
		if labels != nil {
			trimmed = append(trimmed, labels[kept[worst]])
		} else {
			trimmed = append(trimmed, fmt.Sprintf("row %d", kept[worst]))
		}
		kept = append(append([]int(nil), kept[:worst]...), kept[worst+1:]...)
	}
}

// mad is the median absolute deviation from the median.
func mad(xs []float64) float64 {
	m := median(xs)
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return median(d)
}

// quality fills the common Quality fields from a linear fit.
func (f *linearFit) quality(weighting string, trimmed []string) Quality {
	q := Quality{
		N: f.n, DoF: f.dof, RSE: f.rse, AdjR2: f.adjR2, Cond: f.cond,
		Weighting: weighting, Trimmed: len(trimmed), TrimmedPoints: trimmed,
	}
	switch weighting {
	case "relative":
		q.RSEUnit = "relative"
	case "ci":
		q.RSEUnit = "standard errors"
	default:
		q.RSEUnit = "s"
	}
	return q
}

// quantile returns the empirical p-quantile of xs (linear interpolation
// between order statistics).
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := p * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
}
