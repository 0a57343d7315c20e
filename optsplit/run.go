package optsplit

import (
	"errors"
	"fmt"
	"slices"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Derived values Run adds to every record of the sweep when there is a
// model.
const (
	DerivedPredicted = "predicted_s" // T(k, l, 1) of the model, seconds
	DerivedPredErr   = "pred_error"  // predicted/measured - 1
)

// trilinearCoefs is the number of coefficients c0..c7 of the trilinear model.
const trilinearCoefs = 8

// CheckGrid reports whether the calibration grid g can determine the
// trilinear model's eight coefficients: it needs at least two distinct
// levels of each of k, l and r (every monomial of T(k, l, r) varies) and
// more than eight cells (so that the fit has a residual to judge it by).
// The error names the first field of K, L and R with too few levels.
func CheckGrid(g patterns.KKGrid) error {
	nk, nl, nr := levels(g.K), levels(g.L), levels(g.R)
	if nk >= 2 && nl >= 2 && nr >= 2 && nk*nl*nr > trilinearCoefs {
		return nil
	}
	field := "K" // all have two levels, but too few cells
	switch {
	case nk < 2:
	case nl < 2:
		field = "L"
	case nr < 2:
		field = "R"
	}
	return &opts.FieldError{Field: field, Reason: fmt.Sprintf("the trilinear fit needs at least 2 levels of each of k, l and r and more than %d cells; have %d x %d x %d", trilinearCoefs, nk, nl, nr)}
}

// levels counts the distinct values of xs.
func levels[T int | float64](xs []T) int {
	return len(slices.Compact(slices.Sorted(slices.Values(xs))))
}

// Point is one split the sweep measures: an access to DataBytes bytes sent
// as K packets of L bytes at r = 1. Version is the emulated router's
// splitting version (Versions), 0 for a plain k-k-access (Optimize).
type Point struct {
	DataBytes int
	K, L      int
	Version   int
}

// Measured is a point with its measured summary and the model's prediction.
type Measured struct {
	Point
	Summary      results.Summary
	PredictedSec float64 // T(K, L, 1); 0 without a model
}

// Config is what Run needs: the calibration (or a model), the plan and the
// measure functions. Everything but Model must be the same on every rank.
type Config struct {
	// Grid is the calibration sweep; with no cells Run calibrates nothing
	// and takes rank 0's Model.
	Grid patterns.KKGrid
	// Op is the access kind the model is fitted for ("read" or "write").
	Op string
	// Model, on rank 0 and used only when Grid has no cells, is a model
	// fitted beforehand; nil there means no model (Plan gets nil).
	Model *model.Trilinear
	// Calibrate measures one cell of the sweep: a k-k-access of k packets
	// of l bytes by a portion r of the ranks. Collective.
	Calibrate func(k, l int, r float64) (results.Record, error)
	// Plan turns the model into the points to measure. Every rank calls it
	// with the same coefficients (on rank 0 with the full fit, elsewhere
	// with the coefficients alone), so it must depend on nothing else that
	// differs between ranks; an error it returns is the same on every rank.
	Plan func(m *model.Trilinear) ([]Point, error)
	// Measure measures one point and returns its record. Collective.
	Measure func(p Point) (results.Record, error)
}

// Result is what Run measured.
type Result struct {
	// Model is the model the points were planned from: on rank 0 the fit
	// (coefficients with standard errors, quality) or the given model, on
	// other ranks its coefficients alone; nil without a model.
	Model *model.Trilinear
	// Calibrated is true when the model was fitted to the calibration
	// sweep Run measured (false: rank 0's Config.Model).
	Calibrated bool
	Points     []Measured
}

// ModelError is a failure every rank reaches together: rank 0 could not fit
// the calibration, or Plan refused the model. Every rank returns one, so the
// caller can end all ranks alike; Reporter is set on rank 0 alone, which
// holds the reason, so that one message is printed.
type ModelError struct {
	Err      error
	Reporter bool
}

func (e *ModelError) Error() string { return e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// errPeerFit is what ranks other than 0 learn when rank 0's fit fails.
var errPeerFit = errors.New("optsplit: rank 0 could not fit the trilinear model to the calibration sweep")

// Run carries out the recipe of the package doc on every rank of c: the
// calibration sweep (each record handed to emit as it completes), the fit
// on rank 0, the broadcast of the coefficients, the plan and the measured
// points, each record with the model's prediction T(k, l, 1) as derived
// DerivedPredicted and DerivedPredErr. Collective over c. emit is called on
// every rank with the record as that rank has it; rank 0's is complete.
func Run(c mpi.Comm, cfg Config, emit func(results.Record) error) (*Result, error) {
	res := &Result{}
	var m *model.Trilinear
	var fitErr error
	if cfg.Grid.Cells() > 0 {
		recs, err := calibrate(cfg, emit)
		if err != nil {
			return nil, err
		}
		if c.Rank() == 0 {
			if m, fitErr = model.FitTrilinear(recs, model.Options{Op: cfg.Op}); fitErr != nil {
				fitErr = fmt.Errorf("trilinear fit of the calibration sweep: %w", fitErr)
			}
		}
		res.Calibrated = true
	} else if c.Rank() == 0 {
		m = cfg.Model
	}
	m, err := bcastModel(c, m, fitErr, cfg.Op)
	if err != nil {
		return nil, err
	}
	res.Model = m
	points, err := cfg.Plan(m)
	if err != nil {
		return res, &ModelError{Err: err, Reporter: c.Rank() == 0}
	}
	for _, p := range points {
		rec, err := cfg.Measure(p)
		if err != nil {
			return res, err
		}
		mp := Measured{Point: p, Summary: rec.Summary}
		if m != nil {
			mp.PredictedSec = m.Time(float64(p.K), float64(p.L), 1)
			if rec.Derived == nil {
				rec.Derived = map[string]float64{}
			}
			rec.Derived[DerivedPredicted] = mp.PredictedSec
			if rec.Median > 0 {
				rec.Derived[DerivedPredErr] = mp.PredictedSec/rec.Median - 1
			}
		}
		if err := emit(rec); err != nil {
			return res, err
		}
		res.Points = append(res.Points, mp)
	}
	return res, nil
}

// calibrate measures the sweep and returns its records.
func calibrate(cfg Config, emit func(results.Record) error) ([]results.Record, error) {
	recs := make([]results.Record, 0, cfg.Grid.Cells())
	err := cfg.Grid.Each(func(k, l int, r float64) error {
		rec, err := cfg.Calibrate(k, l, r)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		return emit(rec)
	})
	return recs, err
}

// Model states in the broadcast.
const (
	stateNone   = 0 // no model: Plan gets nil
	stateModel  = 1 // the coefficients follow
	stateFailed = 2 // rank 0's fit failed
)

// bcastModel sends rank 0's model (or its failure) to every rank: only the
// coefficients c0..c7 travel, as the ranks need nothing else to plan the
// same points (this is what makes the plan agree). Rank 0 keeps its full
// model; the others get a Trilinear with the coefficients alone.
func bcastModel(c mpi.Comm, m *model.Trilinear, fitErr error, op string) (*model.Trilinear, error) {
	v := make([]float64, 1+trilinearCoefs)
	if c.Rank() == 0 {
		switch {
		case fitErr != nil:
			v[0] = stateFailed
		case m != nil:
			v[0] = stateModel
			for i := range trilinearCoefs {
				v[1+i] = m.Coef(i)
			}
		}
	}
	if err := mpi.BcastFloat64s(c, v, 0); err != nil {
		return nil, err
	}
	switch v[0] {
	case stateFailed:
		if c.Rank() == 0 {
			return nil, &ModelError{Err: fitErr, Reporter: true}
		}
		return nil, &ModelError{Err: errPeerFit}
	case stateNone:
		return nil, nil
	}
	if c.Rank() == 0 {
		return m, nil
	}
	t := &model.Trilinear{Op: op}
	for i := range trilinearCoefs {
		t.C[trilinearCoefs-1-i].Value = v[1+i] // C[0] is c7
	}
	return t, nil
}
