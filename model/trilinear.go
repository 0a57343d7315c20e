package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// Trilinear is the k-k-access cost model of paper 000, section 4:
//
//	T(k, l, r) = c7 klr + c6 kr + c5 kl + c4 lr + c3 k + c2 l + c1 r + c0
//
// with k the send hot spot (packets per accessing rank), l the packet size
// in bytes and r the portion of ranks accessing. The coefficients are fitted
// by least squares (the paper's method) via QR on per-cell medians with
// relative weights. Params lists c7..c0 in the column order of the paper's
// Table 1.
type Trilinear struct {
	Op string `json:"op,omitempty"`
	// C holds c7, c6, ..., c0 (C[0] is c7: Table 1 order).
	C [8]Param `json:"c"`
	// Cov is the covariance of C, in the same order.
	Cov [][]float64 `json:"cov"`
	// KLevels, LLevels, RLevels are the fitted design levels.
	KLevels []float64 `json:"k_levels"`
	LLevels []float64 `json:"l_levels"`
	RLevels []float64 `json:"r_levels"`
	Fit     Quality   `json:"quality"`
}

// trilinearNames are the coefficient names in Table 1 order and the
// matching monomials.
var trilinearNames = []string{"c7", "c6", "c5", "c4", "c3", "c2", "c1", "c0"}
var trilinearTerms = []string{"klr", "kr", "kl", "lr", "k", "l", "r", "1"}
var trilinearUnits = []string{"s/B", "s", "s/B", "s/B", "s", "s/B", "s", "s"}

// trilinearRow is the design row (klr, kr, kl, lr, k, l, r, 1).
func trilinearRow(k, l, r float64) []float64 {
	return []float64{k * l * r, k * r, k * l, l * r, k, l, r, 1}
}

var trilinearPatterns = []string{"kkaccess"}

// packetSize is the size of a k-k-access record that Options.MinBytes and
// MaxBytes restrict: the packet size l.
func packetSize(r results.Record) (float64, bool) {
	l, err := numParam(r.Params, "l", r.Bench)
	return l, err == nil
}

func init() {
	Register(Kind{
		Name:    "trilinear",
		Summary: "k-k-access T(k, l, r) with eight coefficients c7..c0 (paper 000, section 4, Table 1)",
		Benches: trilinearPatterns,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange, OptOp, OptNetwork},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitTrilinear(r, o) },
		New:     func() Model { return &Trilinear{} },
		Check:   func(m Model) error { return m.(*Trilinear).checkCov() },
		Size:    packetSize,
	})
}

// checkCov checks the shape of a decoded covariance matrix.
func (t *Trilinear) checkCov() error {
	if t.Cov != nil && len(t.Cov) != 8 {
		return fmt.Errorf("cov has %d rows, want 8", len(t.Cov))
	}
	for i, r := range t.Cov {
		if len(r) != 8 {
			return fmt.Errorf("cov row %d has %d columns, want 8", i, len(r))
		}
	}
	return nil
}

func (t *Trilinear) Kind() string       { return "trilinear" }
func (t *Trilinear) Params() []Param    { return t.C[:] }
func (t *Trilinear) Quality() Quality   { return t.Fit }
func (t *Trilinear) Patterns() []string { return trilinearPatterns }

// Coef returns c_i (i = 0..7, the paper's index).
func (t *Trilinear) Coef(i int) float64 { return t.C[7-i].Value }

// Time evaluates T(k, l, r).
func (t *Trilinear) Time(k, l, r float64) float64 {
	var s float64
	for j, v := range trilinearRow(k, l, r) {
		s += v * t.C[j].Value
	}
	return s
}

// Predict gives the time of one k-k-access (params k, l, r; op must match
// the fitted op when both are given).
func (t *Trilinear) Predict(in Instance) (float64, error) {
	if in.Pattern != "kkaccess" {
		return 0, unsupported(t.Kind(), in.Pattern, trilinearPatterns)
	}
	if op := in.Str("op"); op != "" && t.Op != "" && op != t.Op {
		return 0, fmt.Errorf("%w: trilinear model fitted for op %q, asked for op %q", ErrUnsupportedPattern, t.Op, op)
	}
	var v [3]float64
	for i, key := range []string{"k", "l", "r"} {
		x, err := in.Num(key)
		if err != nil {
			return 0, err
		}
		v[i] = x
	}
	return t.Time(v[0], v[1], v[2]), nil
}

// selectOp keeps the k-k-access records of opt.Op, or of the only op
// present.
func selectOp(recs []results.Record, opt Options) ([]results.Record, string, error) {
	return selectByParam(recs, "kkaccess", "op", "ops", opt.Op, "--op read or --op write")
}

// selectByParam keeps the records whose string parameter key equals want,
// or, with want empty, the records of the only value present; records that
// mix values are refused, naming them and how to choose (choice). bench and
// plural only word the errors.
func selectByParam(recs []results.Record, bench, key, plural, want, choice string) ([]results.Record, string, error) {
	seen := map[string]bool{}
	for _, r := range recs {
		v, _ := r.Params[key].(string)
		seen[v] = true
	}
	if want == "" {
		if len(seen) > 1 {
			var names []string
			for v := range seen {
				names = append(names, strconv.Quote(v))
			}
			return nil, "", fmt.Errorf("%w: %s records mix %s %s; choose one (%s)", ErrBadRecord, bench, plural, strings.Join(sortedStrings(names), ", "), choice)
		}
		for v := range seen {
			want = v
		}
	}
	var out []results.Record
	for _, r := range recs {
		if v, _ := r.Params[key].(string); v == want {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("%w: no %s records with %s %q", ErrNoRecords, bench, key, want)
	}
	return out, want, nil
}

// oneAsynchrony refuses k-k-access records of several a (accesses back to
// back per repetition, patterns.KKAccess.A; absent = 1): one access after
// a barrier and one of a sequence are different costs, and a cell merged
// from both is neither.
func oneAsynchrony(recs []results.Record) error {
	seen := map[float64]bool{}
	for _, r := range recs {
		a := 1.0
		if _, ok := r.Params["a"]; ok {
			var err error
			if a, err = numParam(r.Params, "a", "kkaccess"); err != nil {
				return err
			}
		}
		seen[a] = true
	}
	if len(seen) > 1 {
		var as []string
		for a := range seen {
			as = append(as, strconv.FormatFloat(a, 'g', -1, 64))
		}
		return fmt.Errorf("%w: kkaccess records mix a = %s (k-k-accesses back to back per repetition); fit the records of one a", ErrBadRecord, strings.Join(sortedStrings(as), ", "))
	}
	return nil
}

// oneDraw refuses k-k-access records of block accesses (param block, a
// rank's k packets to one module: patterns.KKAccess.Block) mixed with
// records whose packets spread over up to k modules: on a network they
// cost differently (a block is cheaper; docs/findings/model-truth.md),
// and a cell merged from both is neither.
func oneDraw(recs []results.Record) error {
	var block, spread int
	for _, r := range recs {
		if b, _ := r.Params["block"].(bool); b {
			block++
		} else {
			spread++
		}
	}
	if block > 0 && spread > 0 {
		return fmt.Errorf("%w: kkaccess records mix block accesses (%d records with block = true: a rank's k packets to one module) and spread ones (%d); fit the records of one kind", ErrBadRecord, block, spread)
	}
	return nil
}

// FitTrilinear fits the eight coefficients of paper 000's cost function to
// "kkaccess" records. The design needs at least two levels of each of k, l
// and r (otherwise products such as klr and kl are the same column up to a
// constant) and more cells than coefficients; a design that fails either, or
// whose condition number exceeds MaxCondition, is refused with an error that
// names the missing levels.
func FitTrilinear(recs []results.Record, opt Options) (*Trilinear, error) {
	pts, op, err := trilinearCells(recs, "trilinear", opt)
	if err != nil {
		return nil, err
	}
	return fitTrilinearCells(pts, op, opt)
}

// trilinearCells selects the k-k-access records of one op and network and
// merges them into (k, l, r) cells, within opt's packet-size range.
func trilinearCells(recs []results.Record, kind string, opt Options) ([]point, string, error) {
	sel, err := selectRecords(recs, kind, "kkaccess")
	if err != nil {
		return nil, "", err
	}
	sel, op, err := selectOp(sel, opt)
	if err != nil {
		return nil, "", err
	}
	if sel, _, err = selectByParam(sel, "kkaccess", "network", "networks", opt.Network, "--network NAME"); err != nil {
		return nil, "", err
	}
	if err := oneAsynchrony(sel); err != nil {
		return nil, "", err
	}
	if err := oneDraw(sel); err != nil {
		return nil, "", err
	}
	pts, err := mergePoints(sel, "k", "l", "r")
	if err != nil {
		return nil, "", err
	}
	return filterBytes(pts, 1, opt), op, nil
}

// fitTrilinearCells fits the eight coefficients to (k, l, r) cells.
func fitTrilinearCells(pts []point, op string, opt Options) (*Trilinear, error) {
	lk, ll, lr := levels(pts, 0), levels(pts, 1), levels(pts, 2)
	var missing []string
	for i, lv := range [][]float64{lk, ll, lr} {
		name := []string{"k", "l", "r"}[i]
		if len(lv) < 2 {
			missing = append(missing, fmt.Sprintf("%s has %d level(s) (%s = %s), needs at least 2", name, len(lv), name, formatLevels(lv)))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: trilinear design is rank-deficient: %s", ErrIllConditioned, strings.Join(missing, "; "))
	}
	if len(pts) <= 8 {
		return nil, fmt.Errorf("%w: trilinear needs more than 8 (k, l, r) cells to estimate 8 coefficients with uncertainties; have %d (k = %s; l = %s; r = %s)",
			ErrIllConditioned, len(pts), formatLevels(lk), formatLevels(ll), formatLevels(lr))
	}
	rows := make([][]float64, len(pts))
	ys := make([]float64, len(pts))
	labels := make([]string, len(pts))
	for i, p := range pts {
		if p.x[0] < 1 || p.x[1] < 0 || p.x[2] <= 0 || p.x[2] > 1 {
			return nil, fmt.Errorf("%w: kkaccess cell %s outside k >= 1, l >= 0, 0 < r <= 1", ErrBadRecord, p.label())
		}
		rows[i] = trilinearRow(p.x[0], p.x[1], p.x[2])
		ys[i] = p.y
		labels[i] = p.label()
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, trilinearNames, labels, opt)
	if err != nil {
		return nil, fmt.Errorf("trilinear (k = %s; l = %s; r = %s): %w", formatLevels(lk), formatLevels(ll), formatLevels(lr), err)
	}
	t := &Trilinear{Op: op, KLevels: lk, LLevels: ll, RLevels: lr}
	for j := range trilinearNames {
		t.C[j] = tr.fit.param(j, trilinearUnits[j])
	}
	t.Cov = make([][]float64, 8)
	for i := range t.Cov {
		t.Cov[i] = make([]float64, 8)
		for j := range t.Cov[i] {
			t.Cov[i][j] = tr.fit.cov.At(i, j)
		}
	}
	t.Fit = tr.fit.quality(effectiveWeighting(opt, note), tr.trimmed)
	if note != "" {
		t.Fit.Notes = append(t.Fit.Notes, note)
	}
	return t, nil
}

// Split is the optimal split of an access to D bytes into k0 packets of l0
// bytes (paper 000, section 7).
type Split struct {
	DataBytes float64 `json:"data_bytes"`
	// A3..A0 are the r = 1 coefficients: T = a3 kl + a2 l + a1 k + a0.
	A3 float64 `json:"a3"`
	A2 float64 `json:"a2"`
	A1 float64 `json:"a1"`
	A0 float64 `json:"a0"`
	// K0 and L0 are the real optimum, with delta-method standard errors.
	K0   float64 `json:"k0"`
	K0SE float64 `json:"k0_se"`
	L0   float64 `json:"l0"`
	L0SE float64 `json:"l0_se"`
	// PredictedSec is T(k0, l0, 1) = a3 D + 2 sqrt(a1 a2 D) + a0.
	PredictedSec float64 `json:"predicted_s"`
	// KInt is the better of floor(k0) and ceil(k0) within [1, D] (packets
	// are whole), LInt = D/KInt, PredictedIntSec = T(KInt, LInt, 1).
	KInt            int     `json:"k_int"`
	LInt            float64 `json:"l_int"`
	PredictedIntSec float64 `json:"predicted_int_s"`
	// Boundary is set by BestSplit when the model has no interior optimum
	// and the split is the better end of the k range; K0 = KInt, L0 = LInt
	// and the standard errors are zero then.
	Boundary bool `json:"boundary,omitempty"`
}

// ErrNoInteriorOptimum is OptimalSplit's error when a1 <= 0 or a2 <= 0.
var ErrNoInteriorOptimum = errors.New("no interior optimum")

// atR1 is a Split of dataBytes holding only the model's r = 1 coefficients
// a3..a0 (see OptimalSplit).
func atR1(t *Trilinear, dataBytes float64) *Split {
	c := func(i int) float64 { return t.Coef(i) }
	return &Split{DataBytes: dataBytes, A3: c(7) + c(5), A2: c(4) + c(2), A1: c(6) + c(3), A0: c(1) + c(0)}
}

// OptimalSplit implements paper 000, section 7: with r = 1 the trilinear
// function reduces to T(k, l, 1) = a3 kl + a2 l + a1 k + a0 with
//
//	a3 = c7 + c5,  a2 = c4 + c2,  a1 = c6 + c3,  a0 = c1 + c0,
//
// and for a fixed data volume D = kl, T(D/l, l, 1) = a3 D + a2 l + a1 D/l + a0
// has its minimum where dT/dl = a2 - a1 D/l^2 = 0:
//
//	k0 = sqrt(a2/a1 * D),  l0 = sqrt(a1/a2 * D).
//
// It needs a1 > 0 and a2 > 0 (otherwise the minimum is at an end of the
// range, not inside it).
func OptimalSplit(t *Trilinear, dataBytes float64) (*Split, error) {
	if !(dataBytes > 0) || math.IsInf(dataBytes, 0) {
		return nil, fmt.Errorf("optimal split: data volume D = %v bytes, want a positive finite number", dataBytes)
	}
	s := atR1(t, dataBytes)
	if s.A1 <= 0 || s.A2 <= 0 {
		return nil, fmt.Errorf("optimal split: %w, need a1 = c6 + c3 = %.4g s and a2 = c4 + c2 = %.4g s/B both positive (paper 000, section 7)", ErrNoInteriorOptimum, s.A1, s.A2)
	}
	D := dataBytes
	s.K0 = math.Sqrt(s.A2 / s.A1 * D)
	s.L0 = math.Sqrt(s.A1 / s.A2 * D)
	s.PredictedSec = s.A3*D + 2*math.Sqrt(s.A1*s.A2*D) + s.A0
	// Delta method on the coefficient covariance: k0 depends on a2 (c4, c2)
	// and a1 (c6, c3); index j in C is c_{7-j}.
	if len(t.Cov) == 8 {
		grad := func(da1, da2 float64) []float64 {
			g := make([]float64, 8)
			g[7-6], g[7-3] = da1, da1
			g[7-4], g[7-2] = da2, da2
			return g
		}
		quad := func(g []float64) float64 {
			var v float64
			for i := range g {
				for j := range g {
					v += g[i] * t.Cov[i][j] * g[j]
				}
			}
			return math.Sqrt(math.Max(v, 0))
		}
		s.K0SE = quad(grad(-s.K0/(2*s.A1), s.K0/(2*s.A2)))
		s.L0SE = quad(grad(s.L0/(2*s.A1), -s.L0/(2*s.A2)))
	}
	at := func(k float64) float64 { return t.Time(k, D/k, 1) }
	best := math.Inf(1)
	for _, k := range []float64{math.Floor(s.K0), math.Ceil(s.K0)} {
		k = math.Min(math.Max(k, 1), math.Max(math.Floor(D), 1))
		if v := at(k); v < best {
			best, s.KInt, s.LInt, s.PredictedIntSec = v, int(k), D/k, v
		}
	}
	return s, nil
}

// BestSplit is OptimalSplit when the model has an interior optimum. When it
// has none (a1 <= 0 or a2 <= 0), T(D/l, l, 1) = a3 D + a2 D/k + a1 k + a0
// has no stationary point with both terms positive, so over whole packets
// k in [1, min(D, maxK)] the minimum lies at an end: k = 1 when a2 <= 0 <
// a1 (more packets only add per-packet cost), the largest k when a1 <= 0 <
// a2; BestSplit returns the better end with Boundary set. That is what a
// shared-memory node often gives, where the per-byte cost does not depend
// on how the bytes are split.
func BestSplit(t *Trilinear, dataBytes float64, maxK int) (*Split, error) {
	s, err := OptimalSplit(t, dataBytes)
	if !errors.Is(err, ErrNoInteriorOptimum) {
		return s, err
	}
	s = atR1(t, dataBytes)
	s.Boundary = true
	hi := max(1, min(math.Floor(dataBytes), float64(maxK)))
	best := math.Inf(1)
	for _, k := range []float64{1, hi} {
		if v := t.Time(k, dataBytes/k, 1); v < best {
			best, s.KInt, s.LInt = v, int(k), dataBytes/k
		}
	}
	s.K0, s.L0 = float64(s.KInt), s.LInt
	s.PredictedSec, s.PredictedIntSec = best, best
	return s, nil
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
