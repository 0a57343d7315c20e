package optsplit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// tableOne are the coefficients c7..c0 of paper 000's Table 1 for BF(3), in
// microseconds (per byte for c7, c5, c4, c2).
var tableOne = [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242}

// tableModel is the model with Table 1's BF(3) coefficients (seconds).
func tableModel() *model.Trilinear {
	m := &model.Trilinear{Op: "read"}
	for j, c := range tableOne {
		m.C[j].Value = c * 1e-6
	}
	return m
}

// timeRec is a record whose summary is the single time y.
func timeRec(bench string, params results.Params, y float64) results.Record {
	return results.Record{Schema: results.SchemaVersion, Bench: bench, Params: params, Unit: "s",
		Summary: results.Summary{N: 3, Min: y, Median: y, Mean: y, Max: y, P90: y, P99: y, CI95: [2]float64{y, y}}}
}

// perRank runs fn on p goroutine ranks and returns each rank's outcome.
func perRank[T any](t *testing.T, p int, fn func(c mpi.Comm) (T, error)) ([]T, []error) {
	t.Helper()
	outs, errs := make([]T, p), make([]error, p)
	err := local.RunWith(local.Options{Timeout: 60 * time.Second}, p, func(c mpi.Comm) error {
		outs[c.Rank()], errs[c.Rank()] = fn(c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return outs, errs
}

var testGrid = patterns.KKGrid{K: []int{1, 2, 4, 8}, L: []int{64, 256, 1024, 4096, 16384}, R: []float64{0.25, 0.5, 1}}

// TestRun: rank 0 fits its calibration records (Table 1's model, exact),
// every rank plans from the same coefficients, although the other ranks'
// records say something else, and every measured record carries the
// prediction T(k, l, 1) and its error.
func TestRun(t *testing.T) {
	const p = 3
	truth := tableModel()
	type out struct {
		res     *Result
		planned []float64 // the coefficients Plan saw
		emitted []results.Record
	}
	outs, errs := perRank(t, p, func(c mpi.Comm) (out, error) {
		var o out
		res, err := Run(c, Config{
			Grid: testGrid, Op: "read",
			Calibrate: func(k, l int, r float64) (results.Record, error) {
				y := truth.Time(float64(k), float64(l), r)
				if c.Rank() != 0 {
					y = 1 // only rank 0's records may decide the model
				}
				return timeRec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, y), nil
			},
			Plan: func(m *model.Trilinear) ([]Point, error) {
				for i := range trilinearCoefs {
					o.planned = append(o.planned, m.Coef(i))
				}
				var pts []Point
				for _, k := range []int{1, 4, 16} {
					pts = append(pts, Point{DataBytes: 4096, K: k, L: 4096 / k})
				}
				return pts, nil
			},
			Measure: func(pt Point) (results.Record, error) {
				return timeRec(BenchOptimize, results.Params{"k": pt.K}, 2*truth.Time(float64(pt.K), float64(pt.L), 1)), nil
			},
		}, func(rec results.Record) error {
			o.emitted = append(o.emitted, rec)
			return nil
		})
		o.res = res
		return o, err
	})
	cells := testGrid.Cells()
	for r, o := range outs {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if !slices.Equal(o.planned, outs[0].planned) {
			t.Errorf("rank %d planned from %v, rank 0 from %v", r, o.planned, outs[0].planned)
		}
		for i, c := range o.planned {
			if want := truth.Coef(i); !scalar.EqualWithinAbsOrRel(c, want, 1e-15, 1e-6) {
				t.Errorf("rank %d: c%d = %g, want Table 1's %g", r, i, c, want)
			}
		}
		if len(o.emitted) != cells+3 || !o.res.Calibrated || len(o.res.Points) != 3 {
			t.Fatalf("rank %d: %d records (want %d cells + 3 points), calibrated %v, %d points", r, len(o.emitted), cells, o.res.Calibrated, len(o.res.Points))
		}
		for i, rec := range o.emitted[cells:] {
			pt := o.res.Points[i]
			want := truth.Time(float64(pt.K), float64(pt.L), 1)
			if !scalar.EqualWithinRel(rec.Derived[DerivedPredicted], want, 1e-6) || !scalar.EqualWithinRel(pt.PredictedSec, want, 1e-6) ||
				!scalar.EqualWithinAbs(rec.Derived[DerivedPredErr], -0.5, 1e-6) {
				t.Errorf("rank %d, k = %d: derived %v, point %+v; want predicted %g, error -0.5", r, pt.K, rec.Derived, pt, want)
			}
		}
	}
	// Rank 0 keeps the fit itself (quality, standard errors); the others
	// have the coefficients.
	if outs[0].res.Model.Fit.N != cells || outs[1].res.Model.Fit.N != 0 {
		t.Errorf("fit points: rank 0 %d (want %d), rank 1 %d (want 0)", outs[0].res.Model.Fit.N, cells, outs[1].res.Model.Fit.N)
	}
}

// TestRunVerdicts: a failure of the fit or of the plan is a *ModelError on
// every rank, printed by rank 0 alone; without calibration rank 0's model
// (or none) reaches every rank.
func TestRunVerdicts(t *testing.T) {
	const p = 3
	truth := tableModel()
	kk := func(k, l int, r float64) (results.Record, error) {
		return timeRec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, truth.Time(float64(k), float64(l), r)), nil
	}
	refused := errors.New("no split for this model")
	tests := []struct {
		name     string
		grid     patterns.KKGrid
		model    bool // rank 0 has Table 1's model
		plan     error
		wantErr  string // rank 0's message; "" for success
		peerErr  error  // what the other ranks' ModelError wraps
		measured int
	}{
		{"fit fails", patterns.KKGrid{K: []int{4}, L: testGrid.L, R: testGrid.R}, false, nil, "trilinear fit", errPeerFit, 0},
		{"plan refuses", testGrid, false, refused, refused.Error(), refused, 0},
		{"model from rank 0", patterns.KKGrid{}, true, nil, "", nil, 2},
		{"no model", patterns.KKGrid{}, false, nil, "", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			measured := 0
			outs, errs := perRank(t, p, func(c mpi.Comm) (*Result, error) {
				cfg := Config{Grid: tt.grid, Op: "read", Calibrate: kk,
					Plan: func(m *model.Trilinear) ([]Point, error) {
						if tt.plan != nil {
							return nil, tt.plan
						}
						if (m != nil) != (tt.model || tt.grid.Cells() > 0) {
							return nil, fmt.Errorf("rank %d planned with model %v", c.Rank(), m)
						}
						return []Point{{DataBytes: 64, K: 1, L: 64}, {DataBytes: 64, K: 2, L: 32}}, nil
					},
					Measure: func(pt Point) (results.Record, error) {
						mu.Lock()
						measured++
						mu.Unlock()
						return timeRec(BenchOptimize, results.Params{"k": pt.K}, 1e-3), nil
					}}
				if tt.model && c.Rank() == 0 {
					cfg.Model = truth
				}
				return Run(c, cfg, func(results.Record) error { return nil })
			})
			if measured != tt.measured*p {
				t.Errorf("%d points measured over all ranks, want %d", measured, tt.measured*p)
			}
			for r, err := range errs {
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
					if outs[r].Calibrated || (outs[r].Model != nil) != tt.model {
						t.Errorf("rank %d: calibrated %v, model %v", r, outs[r].Calibrated, outs[r].Model)
					}
					if tt.model && !scalar.EqualWithinRel(outs[r].Model.Coef(3), truth.Coef(3), 1e-15) {
						t.Errorf("rank %d: c3 = %g, want rank 0's %g", r, outs[r].Model.Coef(3), truth.Coef(3))
					}
					for _, pt := range outs[r].Points {
						if (pt.PredictedSec != 0) != tt.model {
							t.Errorf("rank %d: prediction %g with model %v", r, pt.PredictedSec, tt.model)
						}
					}
					continue
				}
				var me *ModelError
				if !errors.As(err, &me) || me.Reporter != (r == 0) {
					t.Fatalf("rank %d: %v (%T), want a *ModelError reported by rank 0 alone", r, err, err)
				}
				if r == 0 && !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("rank 0: %q lacks %q", err, tt.wantErr)
				}
				if r > 0 && !errors.Is(err, tt.peerErr) {
					t.Errorf("rank %d: %v, want %v", r, err, tt.peerErr)
				}
			}
		})
	}
}

// TestCheckGrid: a calibration grid the trilinear fit cannot use is
// refused, naming the first field with too few levels.
func TestCheckGrid(t *testing.T) {
	tests := []struct {
		name  string
		g     patterns.KKGrid
		field string // "" for a usable grid
	}{
		{"3 x 3 x 2", patterns.KKGrid{K: []int{1, 2, 4}, L: []int{64, 1024, 16384}, R: []float64{0.5, 1}}, ""},
		{"2 x 2 x 2 is eight cells for eight coefficients", patterns.KKGrid{K: []int{1, 2}, L: []int{64, 1024}, R: []float64{0.5, 1}}, "K"},
		{"one level of r", patterns.KKGrid{K: []int{1, 2, 4, 8}, L: []int{64, 1024, 16384}, R: []float64{1}}, "R"},
		{"one level of l", patterns.KKGrid{K: []int{1, 2, 4, 8}, L: []int{64}, R: []float64{0.5, 1}}, "L"},
		{"a repeated r is one level", patterns.KKGrid{K: []int{1, 2, 4, 8}, L: []int{64, 1024, 16384}, R: []float64{1, 1}}, "R"},
		{"a repeated k is one level", patterns.KKGrid{K: []int{2, 2, 2}, L: []int{64, 1024, 16384}, R: []float64{0.5, 1}}, "K"},
		{"empty", patterns.KKGrid{}, "K"},
	}
	for _, tt := range tests {
		err := CheckGrid(tt.g)
		var fe *opts.FieldError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v, want ok", tt.name, err)
		case tt.field == "":
		case !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Reason, "at least 2 levels"):
			t.Errorf("%s: %v, want field %s saying what the fit needs", tt.name, err, tt.field)
		}
	}
}
