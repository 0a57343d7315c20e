package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/commcost/commcost/results"
)

// CollFit is a curve per collective for users who want one, fitted to the
// "collective" records of each (op, alg) by weighted least squares of the
// per-point medians (relative weights by default).
//
// For an algorithm with a closed form (CollRounds; the records of a forced
// algorithm name it), the curve has that algorithm's shape with its own
// coefficients: with R(p) the rounds along the critical path, B(m, p) the
// bytes they carry and G(m, p) the bytes they reduce,
//
//	t(m, p) = c0 + c_r R + c_b B + c_g G,
//
// the alpha, beta and gamma of Thakur, Rabenseifner and Gropp's costs
// fitted to the collective itself rather than priced from point-to-point
// (so contention, copies and a call's overhead are in them).
//
// For the library's default (which changes algorithm with the size and
// the rank count) and the algorithms without a closed form, with
// L = ceil(lg p) and V the bytes a rank moves along the critical path of
// the usual algorithms (the record's bytes times (p-1) for the gathers,
// scatters and all-to-alls, (p-1)/p for reduce_scatter, 1 for the
// broadcast and the reductions),
//
//	t(m, p) = c0 + c_lg L + c_v V + c_vlg V L,
//
// the form of the tree and recursive-doubling algorithms' costs.
//
// The terms the records cannot separate are dropped (a term that is a
// linear combination of the ones before it over the fitted points: R
// with one rank count, G where it is proportional to B, as in the ring;
// the L terms with one rank count, the V terms for barrier or one size).
// It predicts collectives of the (op, alg) it was fitted to at any size
// and rank count.
type CollFit struct {
	Curves []CollCurve `json:"curves"`
	Fit    Quality     `json:"quality"`
}

// CollCurve is the fit of one (op, alg).
type CollCurve struct {
	Op    string  `json:"op"`
	Alg   string  `json:"alg"`
	Coef  []Param `json:"coef"` // c0, c_lg, c_v, c_vlg, the ones fitted
	Ranks []int   `json:"ranks"`
	// MinBytes and MaxBytes are the fitted sizes.
	MinBytes float64 `json:"min_bytes"`
	MaxBytes float64 `json:"max_bytes"`
	Fit      Quality `json:"quality"`
}

var collFitPatterns = []string{"collective"}

func init() {
	Register(Kind{
		Name:    "collfit",
		Summary: "a fitted curve per collective and algorithm: a forced algorithm's own closed form c0 + c_r R + c_b B + c_g G (rounds, bytes, bytes reduced), else c0 + c_lg lg p + c_v V + c_vlg V lg p, V the bytes a rank moves",
		Benches: collFitPatterns,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitCollFit(r, o) },
		New:     func() Model { return &CollFit{} },
	})
}

func (m *CollFit) Kind() string       { return "collfit" }
func (m *CollFit) Quality() Quality   { return m.Fit }
func (m *CollFit) Patterns() []string { return collFitPatterns }

// Params lists every curve's coefficients, named op/alg/coefficient.
func (m *CollFit) Params() []Param {
	var out []Param
	for _, c := range m.Curves {
		for _, p := range c.Coef {
			q := p
			q.Name = c.Op + "/" + c.Alg + "/" + p.Name
			out = append(out, q)
		}
	}
	return out
}

// CollVolume is V of a collective: the bytes a rank moves along the
// critical path of the usual algorithms, in units of the record's bytes.
func CollVolume(op string, bytes float64, p int) float64 {
	fp := float64(p)
	switch op {
	case "barrier":
		return 0
	case "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter_block":
		return bytes * (fp - 1)
	case "reduce_scatter":
		return bytes * (fp - 1) / fp
	}
	return bytes
}

// collTerms are the design row's terms of (bytes, p), for the terms used;
// the terms c_r, c_b and c_g need alg's closed form.
func collTerms(op, alg string, bytes float64, p int, terms []string) []float64 {
	l, v := float64(ceilLg(p)), CollVolume(op, bytes, p)
	var nr, nb, ng float64
	if slices.ContainsFunc(terms, func(t string) bool { return t == "c_r" || t == "c_b" || t == "c_g" }) {
		rs, _ := CollRounds(op, alg, bytes, p)
		for _, r := range rs {
			nr, nb, ng = nr+r.Count, nb+r.Count*r.Bytes, ng+r.Count*r.ReduceBytes
		}
	}
	row := make([]float64, len(terms))
	for i, t := range terms {
		switch t {
		case "c_r":
			row[i] = nr
		case "c_b":
			row[i] = nb
		case "c_g":
			row[i] = ng
		case "c0":
			row[i] = 1
		case "c_lg":
			row[i] = l
		case "c_v":
			row[i] = v
		case "c_vlg":
			row[i] = v * l
		}
	}
	return row
}

// closedForm says whether the curve has its algorithm's shape.
func (c *CollCurve) closedForm() bool {
	return slices.ContainsFunc(c.Coef, func(p Param) bool { return p.Name == "c_r" || p.Name == "c_b" || p.Name == "c_g" })
}

func (c *CollCurve) terms() []string {
	out := make([]string, len(c.Coef))
	for i, p := range c.Coef {
		out[i] = p.Name
	}
	return out
}

// Predict is the curve of the instance's op and alg ("default" when it
// names none) at its bytes and ranks.
func (m *CollFit) Predict(in Instance) (float64, error) {
	if in.Pattern != "collective" {
		return 0, unsupported(m.Kind(), in.Pattern, collFitPatterns)
	}
	b, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	if in.Ranks < 1 {
		return 0, fmt.Errorf("%w: collective on %d ranks", ErrBadRecord, in.Ranks)
	}
	op, alg := in.Str("op"), in.Str("alg")
	if alg == "" {
		alg = "default"
	}
	for i := range m.Curves {
		c := &m.Curves[i]
		if c.Op != op || c.Alg != alg {
			continue
		}
		if c.closedForm() {
			if _, err := CollRounds(op, alg, b, in.Ranks); err != nil {
				return 0, err
			}
		}
		row := collTerms(op, alg, b, in.Ranks, c.terms())
		t := 0.0
		for j, p := range c.Coef {
			t += p.Value * row[j]
		}
		return t, nil
	}
	var have []string
	for _, c := range m.Curves {
		have = append(have, c.Op+"/"+c.Alg)
	}
	return 0, fmt.Errorf("%w: collfit has no curve of %s/%s (it has %s)", ErrUnsupportedPattern, op, alg, strings.Join(have, ", "))
}

// FitCollFit fits one curve per (op, alg) of the "collective" records.
func FitCollFit(recs []results.Record, opt Options) (*CollFit, error) {
	sel, err := selectRecords(recs, "collfit", "collective")
	if err != nil {
		return nil, err
	}
	groups := map[[2]string][]results.Record{}
	for _, r := range sel {
		op, _ := r.Params["op"].(string)
		alg, _ := r.Params["alg"].(string)
		if alg == "" {
			alg = "default"
		}
		groups[[2]string{op, alg}] = append(groups[[2]string{op, alg}], r)
	}
	keys := make([][2]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	m := &CollFit{}
	var sse float64
	for _, k := range keys {
		c, s, err := fitCollCurve(k[0], k[1], groups[k], opt)
		if err != nil {
			return nil, fmt.Errorf("collfit %s/%s: %w", k[0], k[1], err)
		}
		m.Curves = append(m.Curves, c)
		m.Fit.N += c.Fit.N
		m.Fit.DoF += c.Fit.DoF
		m.Fit.Trimmed += c.Fit.Trimmed
		m.Fit.TrimmedPoints = append(m.Fit.TrimmedPoints, c.Fit.TrimmedPoints...)
		m.Fit.Cond = math.Max(m.Fit.Cond, c.Fit.Cond)
		m.Fit.Weighting, m.Fit.RSEUnit = c.Fit.Weighting, c.Fit.RSEUnit
		sse += s
		for _, n := range c.Fit.Notes {
			m.Fit.Notes = append(m.Fit.Notes, k[0]+"/"+k[1]+": "+n)
		}
	}
	if m.Fit.DoF > 0 {
		m.Fit.RSE = math.Sqrt(sse / float64(m.Fit.DoF))
	}
	// The worst curve's: one number for a model of several curves.
	m.Fit.AdjR2 = math.Inf(1)
	for _, c := range m.Curves {
		m.Fit.AdjR2 = math.Min(m.Fit.AdjR2, c.Fit.AdjR2)
	}
	return m, nil
}

// fitCollCurve fits one (op, alg) and returns it with its weighted SSE.
func fitCollCurve(op, alg string, recs []results.Record, opt Options) (CollCurve, float64, error) {
	pts, err := mergePoints(recs, "bytes")
	if err != nil {
		return CollCurve{}, 0, err
	}
	pts = filterBytes(pts, 0, opt)
	if len(pts) == 0 {
		return CollCurve{}, 0, fmt.Errorf("%w: no sizes within [%g, %g] bytes", ErrNoRecords, opt.MinBytes, opt.MaxBytes)
	}
	ranks := map[int]bool{}
	sizes := map[float64]bool{}
	for _, p := range pts {
		ranks[p.inst.Ranks] = true
		sizes[p.x[0]] = true
	}
	terms := []string{"c0"}
	if _, err := CollRounds(op, alg, pts[0].x[0], pts[0].inst.Ranks); err == nil && alg != "default" {
		terms = independentTerms(pts, func(t []string, x float64, p int) []float64 { return collTerms(op, alg, x, p, t) },
			[]string{"c0", "c_r", "c_b", "c_g"})
	} else {
		if len(ranks) > 1 {
			terms = append(terms, "c_lg")
		}
		if op != "barrier" && len(sizes) > 1 {
			terms = append(terms, "c_v")
			if len(ranks) > 1 {
				terms = append(terms, "c_vlg")
			}
		}
	}
	rows, ys, labels := make([][]float64, len(pts)), make([]float64, len(pts)), make([]string, len(pts))
	for i, p := range pts {
		rows[i], ys[i], labels[i] = collTerms(op, alg, p.x[0], p.inst.Ranks, terms), p.y, p.label()
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, terms, labels, opt)
	if err != nil {
		return CollCurve{}, 0, err
	}
	c := CollCurve{Op: op, Alg: alg, Fit: tr.fit.quality(effectiveWeighting(opt, note), tr.trimmed)}
	units := map[string]string{"c0": "s", "c_lg": "s", "c_v": "s/B", "c_vlg": "s/B", "c_r": "s", "c_b": "s/B", "c_g": "s/B"}
	for j, t := range terms {
		c.Coef = append(c.Coef, tr.fit.param(j, units[t]))
	}
	for r := range ranks {
		c.Ranks = append(c.Ranks, r)
	}
	sort.Ints(c.Ranks)
	c.MinBytes, c.MaxBytes = math.Inf(1), math.Inf(-1)
	for _, i := range tr.kept {
		c.MinBytes, c.MaxBytes = math.Min(c.MinBytes, pts[i].x[0]), math.Max(c.MaxBytes, pts[i].x[0])
	}
	if note != "" {
		c.Fit.Notes = append(c.Fit.Notes, note)
	}
	return c, tr.fit.sse, nil
}

// independentTerms keeps, in order, the candidate terms whose column over
// pts is not (to a relative 1e-9) a linear combination of the columns
// kept before it: Gram-Schmidt on the unit-scaled columns.
func independentTerms(pts []point, row func(terms []string, x float64, p int) []float64, cand []string) []string {
	cols := make([][]float64, len(cand))
	for i := range cols {
		cols[i] = make([]float64, len(pts))
	}
	for j, p := range pts {
		for i, v := range row(cand, p.x[0], p.inst.Ranks) {
			cols[i][j] = v
		}
	}
	var kept []string
	var basis [][]float64
	for i, c := range cols {
		v := slices.Clone(c)
		n0 := floats.Norm(v, 2)
		if n0 == 0 {
			continue
		}
		floats.Scale(1/n0, v)
		for _, b := range basis {
			floats.AddScaled(v, -floats.Dot(v, b), b)
		}
		if n := floats.Norm(v, 2); n > 1e-9 {
			floats.Scale(1/n, v)
			basis = append(basis, v)
			kept = append(kept, cand[i])
		}
	}
	return kept
}
