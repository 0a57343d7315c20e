package model

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// MissingParamError is a record or instance of Bench without the
// parameter Key a model reads; it is ErrBadRecord.
type MissingParamError struct{ Bench, Key string }

func (e *MissingParamError) Error() string {
	return fmt.Sprintf("%v: %s record has no parameter %q", ErrBadRecord, e.Bench, e.Key)
}

// Is reports ErrBadRecord.
func (e *MissingParamError) Is(target error) bool { return target == ErrBadRecord }

// numParam returns params[key] as a finite float64. Records decoded from
// JSON carry float64; records built in Go may carry ints.
func numParam(params results.Params, key, bench string) (float64, error) {
	v, ok := params[key]
	if !ok {
		return 0, &MissingParamError{Bench: bench, Key: key}
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, fmt.Errorf("%w: %s parameter %q = %q is not a number", ErrBadRecord, bench, key, x)
		}
	default:
		return 0, fmt.Errorf("%w: %s parameter %q = %v (%T) is not a number", ErrBadRecord, bench, key, v, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: %s parameter %q is %v", ErrBadRecord, bench, key, f)
	}
	return f, nil
}

// selectRecords keeps the records whose bench is one of benches and checks
// them: a positive finite median in the expected unit, and one backend
// (oneBackend). It is an error when none is left, naming what was wanted
// and what was found.
func selectRecords(recs []results.Record, kind string, benches ...string) ([]results.Record, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: %s needs %s records", ErrNoRecords, kind, strings.Join(benches, " or "))
	}
	want := map[string]bool{}
	for _, b := range benches {
		want[b] = true
	}
	var out []results.Record
	found := map[string]int{}
	for i, r := range recs {
		found[r.Bench]++
		if !want[r.Bench] {
			continue
		}
		if err := checkRecord(i, r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		var got []string
		for b, n := range found {
			got = append(got, fmt.Sprintf("%s (%d)", b, n))
		}
		sort.Strings(got)
		return nil, fmt.Errorf("%w: %s needs %s records; the input has %s",
			ErrNoRecords, kind, strings.Join(benches, " or "), strings.Join(got, ", "))
	}
	if err := oneBackend(out, kind); err != nil {
		return nil, err
	}
	return out, nil
}

// oneBackend refuses records of several backends (meta backend: native
// MPI, the in-process local one, a replay): they time different
// transports, and one fit of both describes neither. A record that names
// no backend (a hand-made one) is not compared.
func oneBackend(recs []results.Record, kind string) error {
	if i, j, mixed := results.MixedBackends(recs); mixed {
		a, b := recs[i], recs[j]
		return fmt.Errorf("%w: %s: the records mix backends %q (%s %s) and %q (%s %s): they time different transports, and one fit of both describes neither; fit the records of one backend",
			ErrBadRecord, kind, results.Printable(a.Meta.Backend), a.Bench, paramString(a.Params),
			results.Printable(b.Meta.Backend), b.Bench, paramString(b.Params))
	}
	return nil
}

// FitBackend is the meta backend of the records m, a fit of kind, was
// fitted from (the records of the benches it read, of which oneBackend
// let one backend through), or "" when none names one (hand-made
// records): what MarshalMeta records in the model file.
func FitBackend(kind string, m Model, recs []results.Record) string {
	k, _ := Lookup(kind)
	benches := k.Benches
	if u, ok := m.(FittedBencher); ok {
		benches = u.FittedBenches()
	}
	for _, r := range recs {
		if r.Meta.Backend != "" && slices.Contains(benches, r.Bench) {
			return r.Meta.Backend
		}
	}
	return ""
}

// checkRecord validates the fields every fit reads.
func checkRecord(i int, r results.Record) error {
	wantUnit := "s"
	if r.Bench == "bandwidth" {
		wantUnit = "B/s"
	}
	if r.Unit != wantUnit {
		return fmt.Errorf("%w: record %d (%s): unit %q, want %q", ErrBadRecord, i+1, r.Bench, r.Unit, wantUnit)
	}
	m := r.Median
	if math.IsNaN(m) || math.IsInf(m, 0) || m <= 0 {
		return fmt.Errorf("%w: record %d (%s %s): median %v is not a positive finite value",
			ErrBadRecord, i+1, r.Bench, paramString(r.Params), m)
	}
	for _, c := range r.CI95 {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("%w: record %d (%s %s): ci95 holds %v", ErrBadRecord, i+1, r.Bench, paramString(r.Params), c)
		}
	}
	for k, v := range r.Params {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return fmt.Errorf("%w: record %d (%s): parameter %q is %v", ErrBadRecord, i+1, r.Bench, k, f)
		}
	}
	return nil
}

// paramString formats params as k=v pairs sorted by key.
func paramString(p results.Params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", k, p[k])
	}
	return b.String()
}

// point is one parameter point: the records measured at the same pattern,
// ranks and key parameters, merged by the median of their medians
// (MEASURE.md: fit on per-point medians).
type point struct {
	key   string
	inst  Instance
	x     []float64 // the key parameters' values, in keyParams order
	y     float64   // median of the records' medians
	sigma float64   // standard error implied by the CI95 (median over records); 0 if unknown
	nrec  int
}

// label names the point in notes and errors.
func (p point) label() string { return p.key }

// mergePoints merges records into points keyed by bench, ranks and the
// numeric parameters keyParams (which every record must carry). Other
// parameters (seeds, ...) do not split points. Points come back sorted by
// bench, then keyParams in order, then ranks.
func mergePoints(recs []results.Record, keyParams ...string) ([]point, error) {
	type acc struct {
		p      point
		ys, ss []float64
	}
	byKey := map[string]*acc{}
	var order []string
	for _, r := range recs {
		x := make([]float64, len(keyParams))
		var kb strings.Builder
		kb.WriteString(r.Bench)
		for i, k := range keyParams {
			v, err := numParam(r.Params, k, r.Bench)
			if err != nil {
				return nil, err
			}
			x[i] = v
			fmt.Fprintf(&kb, " %s=%s", k, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if r.Ranks > 0 {
			fmt.Fprintf(&kb, " ranks=%d", r.Ranks)
		}
		key := kb.String()
		a, ok := byKey[key]
		if !ok {
			a = &acc{p: point{key: key, inst: InstanceOf(r), x: x}}
			byKey[key] = a
			order = append(order, key)
		}
		a.ys = append(a.ys, r.Median)
		if w := r.CI95[1] - r.CI95[0]; w > 0 {
			a.ss = append(a.ss, w/(2*1.96))
		}
	}
	pts := make([]point, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		a.p.y = median(a.ys)
		a.p.nrec = len(a.ys)
		if len(a.ss) == len(a.ys) {
			a.p.sigma = median(a.ss)
		}
		pts = append(pts, a.p)
	}
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := pts[i], pts[j]
		if a.inst.Pattern != b.inst.Pattern {
			return a.inst.Pattern < b.inst.Pattern
		}
		for k := range a.x {
			if a.x[k] != b.x[k] {
				return a.x[k] < b.x[k]
			}
		}
		return a.inst.Ranks < b.inst.Ranks
	})
	return pts, nil
}

// median is results.Median, the module's one median (NaN for no values),
// under the short name the fitting code uses.
func median(xs []float64) float64 { return results.Median(xs) }

// filterBytes keeps the points whose parameter at index idx lies within
// the options' [MinBytes, MaxBytes] window.
func filterBytes(pts []point, idx int, opt Options) []point {
	if opt.MinBytes == 0 && opt.MaxBytes == 0 {
		return pts
	}
	var out []point
	for _, p := range pts {
		if opt.inRange(p.x[idx]) {
			out = append(out, p)
		}
	}
	return out
}

// weights returns the row weights for ys under opt, and a note when the CI
// weighting had to fall back to relative weights.
func weights(pts []point, ys []float64, opt Options) ([]float64, string) {
	w := make([]float64, len(ys))
	switch opt.Weighting {
	case WeightNone:
		for i := range w {
			w[i] = 1
		}
		return w, ""
	case WeightCI:
		ok := len(pts) == len(ys)
		for _, p := range pts {
			if p.sigma <= 0 {
				ok = false
			}
		}
		if ok {
			// sigma is the uncertainty of the point's median; when the
			// fitted y is a transformation of the median (e.g. RTT/2), the
			// caller's ys scale with it, so scale sigma by ys/median.
			for i, p := range pts {
				w[i] = 1 / (p.sigma * ys[i] / p.y)
			}
			return w, ""
		}
		for i := range w {
			w[i] = 1 / ys[i]
		}
		return w, "weighting ci: some records lack a confidence interval; fell back to relative weights"
	}
	for i := range w {
		w[i] = 1 / ys[i]
	}
	return w, ""
}

// effectiveWeighting is the weighting a fit ended up using.
func effectiveWeighting(opt Options, note string) string {
	if opt.Weighting == WeightCI && note != "" {
		return WeightRelative.String()
	}
	return opt.Weighting.String()
}

// levels returns the distinct values of column idx of pts, sorted.
func levels(pts []point, idx int) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, p := range pts {
		if !seen[p.x[idx]] {
			seen[p.x[idx]] = true
			out = append(out, p.x[idx])
		}
	}
	sort.Float64s(out)
	return out
}

func formatLevels(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ", ")
}
