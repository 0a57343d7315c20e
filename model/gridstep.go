package model

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/results"
)

// GridStep prices the exchange steps of 2-D process-grid algorithms
// (Cannon's shifts and alignment, the rounds of the checkerboard
// multiplication's all-to-all broadcasts) with Hockney's line
// t(m) = t_s + t_w m fitted separately for every step, from "gridshift"
// records of that very step: its grid, the lines that exchange (rows or
// columns), the mode (shift, xor, align) and the distance. It is the
// two-level model of paper 003 taken one level further: where that model
// fits one effective bandwidth t_w p/c per processor count, so that every
// bisection-sensitive operation on p processors shares one bisection
// width c, GridStep fits one per permutation, because on a real network
// two permutations on the same p differ: on the test cluster's two
// groups joined by one link, the row exchange of a 2 x 2 grid stays inside
// each group while the column exchange crosses the shared link, several
// times slower. Each step's t_w is the effective per-byte time of a
// message while every rank of the grid sends and receives one at once, so
// it contains whatever they contend for: host links in both directions,
// a shared link, the hosts' processors.
//
// It predicts only steps it was fitted for; any other is an error
// wrapping ErrUnsupportedPattern that names the step and the fitted ones.
type GridStep struct {
	Steps []GridStepFit `json:"steps"`
}

// GridStepFit is the Hockney line of one grid exchange step.
type GridStepFit struct {
	Ranks int    `json:"ranks"`
	Rows  int    `json:"rows"`
	Cols  int    `json:"cols"`
	Along string `json:"along"`
	Mode  string `json:"mode"`
	D     int    `json:"d"`
	Ts    Param  `json:"t_s"`
	Tw    Param  `json:"t_w"`
	// MinBytes and MaxBytes are the fitted sizes' range.
	MinBytes float64 `json:"min_bytes"`
	MaxBytes float64 `json:"max_bytes"`
	Fit      Quality `json:"quality"`
}

var gridStepPatterns = []string{"gridshift"}

func init() {
	Register(Kind{
		Name:           "gridstep",
		Summary:        "t(m) = t_s + t_w m per exchange step of a process grid, fitted from that step measured on the whole grid (contention per permutation)",
		Benches:        gridStepPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitGridStep(r, o) },
		New:            func() Model { return &GridStep{} },
		ProgramOptions: &Options{},
		Check: func(m Model) error {
			if len(m.(*GridStep).Steps) == 0 {
				return fmt.Errorf("%w: a gridstep model without steps", ErrBadRecord)
			}
			return nil
		},
	})
}

func (g *GridStep) Kind() string       { return "gridstep" }
func (g *GridStep) Patterns() []string { return gridStepPatterns }

// Params lists t_s and t_w of every step, named after the step.
func (g *GridStep) Params() []Param {
	var out []Param
	for _, s := range g.Steps {
		ts, tw := s.Ts, s.Tw
		ts.Name = "t_s[" + s.Key() + "]"
		tw.Name = "t_w[" + s.Key() + "]"
		out = append(out, ts, tw)
	}
	return out
}

// Quality sums the points and degrees of freedom of the steps' fits and
// reports the largest residual error among them (the least certain step),
// with every step's notes.
func (g *GridStep) Quality() Quality {
	var q Quality
	for i, s := range g.Steps {
		if i == 0 || s.Fit.RSE > q.RSE {
			q.RSE, q.RSEUnit, q.AdjR2, q.Cond, q.Weighting = s.Fit.RSE, s.Fit.RSEUnit, s.Fit.AdjR2, s.Fit.Cond, s.Fit.Weighting
		}
		q.N += s.Fit.N
		q.DoF += s.Fit.DoF
		q.Trimmed += s.Fit.Trimmed
		q.TrimmedPoints = append(q.TrimmedPoints, s.Fit.TrimmedPoints...)
		for _, n := range s.Fit.Notes {
			q.Notes = append(q.Notes, s.Key()+": "+n)
		}
	}
	return q
}

// Key names the step: "row shift d=1 on 2x2".
func (s GridStepFit) Key() string {
	return fmt.Sprintf("%s %s d=%d on %dx%d", s.Along, s.Mode, s.D, s.Rows, s.Cols)
}

// gridStepKey reads a step's identity from an instance's parameters.
func gridStepKey(in Instance) (GridStepFit, error) {
	s := GridStepFit{Ranks: in.Ranks, Along: in.Str("along"), Mode: in.Str("mode")}
	for _, k := range []struct {
		name string
		v    *int
	}{{"rows", &s.Rows}, {"cols", &s.Cols}, {"d", &s.D}} {
		v, err := in.Num(k.name)
		if err != nil {
			return s, err
		}
		*k.v = int(v)
	}
	if s.Along == "" || s.Mode == "" {
		return s, fmt.Errorf("%w: gridshift needs string parameters along and mode", ErrBadRecord)
	}
	// An XOR by d on lines of 2d members is the circular shift by d (the
	// same permutation; patterns.GridShift.Canonical): one fit serves both,
	// whichever name a record or a workload gives it.
	// For "row+col" (the row step, then the column step) both
	// directions' lines must have 2d members.
	var ns []int
	switch s.Along {
	case "row":
		ns = []int{s.Cols}
	case "col":
		ns = []int{s.Rows}
	case "row+col":
		ns = []int{s.Cols, s.Rows}
	}
	if s.Mode == "xor" && len(ns) > 0 && !slices.ContainsFunc(ns, func(n int) bool { return n != 2*s.D }) {
		s.Mode = "shift"
	}
	return s, nil
}

func (s GridStepFit) same(o GridStepFit) bool {
	return s.Ranks == o.Ranks && s.Rows == o.Rows && s.Cols == o.Cols && s.Along == o.Along && s.Mode == o.Mode && s.D == o.D
}

// Predict gives t_s + t_w m of the step a "gridshift" instance names.
func (g *GridStep) Predict(in Instance) (float64, error) {
	if in.Pattern != "gridshift" {
		return 0, unsupported(g.Kind(), in.Pattern, gridStepPatterns)
	}
	m, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	k, err := gridStepKey(in)
	if err != nil {
		return 0, err
	}
	var fitted []string
	for _, s := range g.Steps {
		if s.same(k) {
			return s.Ts.Value + s.Tw.Value*m, nil
		}
		fitted = append(fitted, fmt.Sprintf("%s (%d ranks)", s.Key(), s.Ranks))
	}
	return 0, fmt.Errorf("%w: gridstep was not fitted for the %s step on %d ranks (fitted: %s); calibrate it with gridshift records",
		ErrUnsupportedPattern, k.Key(), k.Ranks, strings.Join(fitted, ", "))
}

// FitGridStep fits one Hockney line per grid exchange step found in the
// "gridshift" records (weighted QR least squares on per-size medians, as
// FitHockney); every step needs at least 3 distinct sizes.
func FitGridStep(recs []results.Record, opt Options) (*GridStep, error) {
	sel, err := selectRecords(recs, "gridstep", "gridshift")
	if err != nil {
		return nil, err
	}
	var keys []GridStepFit
	groups := map[int][]results.Record{}
	for _, r := range sel {
		k, err := gridStepKey(InstanceOf(r))
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(keys, k.same)
		if i < 0 {
			i = len(keys)
			keys = append(keys, k)
		}
		groups[i] = append(groups[i], r)
	}
	g := &GridStep{}
	for i, k := range keys {
		pts, err := mergePoints(groups[i], "bytes")
		if err != nil {
			return nil, err
		}
		pts = filterBytes(pts, 0, opt)
		if lv := levels(pts, 0); len(lv) < 3 {
			return nil, fmt.Errorf("%w: gridstep needs at least 3 distinct message sizes per step to fit t_s, t_w with an uncertainty; the %s step has bytes = %s",
				ErrIllConditioned, k.Key(), formatLevels(lv))
		}
		ys := make([]float64, len(pts))
		for j, p := range pts {
			ys[j] = p.y
		}
		h, err := fitHockneyPoints(pts, ys, opt)
		if err != nil {
			return nil, fmt.Errorf("gridstep %s: %w", k.Key(), err)
		}
		if math.IsNaN(h.Tw.Value) {
			return nil, fmt.Errorf("%w: gridstep %s: t_w is not a number", ErrIllConditioned, k.Key())
		}
		k.Ts, k.Tw, k.MinBytes, k.MaxBytes, k.Fit = h.Ts, h.Tw, h.MinBytes, h.MaxBytes, h.Fit
		g.Steps = append(g.Steps, k)
	}
	return g, nil
}
