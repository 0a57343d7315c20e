package permsched

import (
	"github.com/commcost/commcost/model"
)

// Fit is a linear least-squares fit y ~ sum_j Coef[j] x_j that minimises
// relative error (MEASURE.md "Fitting": times span orders of magnitude).
// It is model's fit, so the cost models of the schedulers and of the
// communication models share one QR solver, one conditioning limit
// (model.MaxCondition on the column-scaled design) and one definition of
// R^2 (the weighted fit's, about the weighted mean) and of the relative
// RSE.
type Fit = model.LinearFit

// fitRelative fits rows (one per point, one column per coefficient) to y
// with relative weights 1/y. Every y must be positive, and there must be
// more points than coefficients, so that the standard errors are estimated
// from at least one degree of freedom.
func fitRelative(names []string, rows [][]float64, y []float64) (*Fit, error) {
	w, err := model.RelativeWeights(y)
	if err != nil {
		return nil, err
	}
	return model.LeastSquares(names, rows, y, w)
}
