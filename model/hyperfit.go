package model

import (
	"fmt"
	"math"
	"sort"

	"github.com/commcost/commcost/results"
)

// Hyperbolic is the hyperbolic model of paper 001 fitted to records: the
// end-to-end block (a, b) of one message from round trips (eq. 3), and,
// when contention records are present, the component blocks of the end
// nodes (a_w, b_w) and of the network (a_c, b_c).
//
// Which contention pattern supplied a_c, b_c is in Source. The paper takes
// limits n -> infinity of a(n) and b(n) from the per-n fits T(x; a(n), b(n)):
//
//	"alltoall"      eq. 4:  a(n) = 4(n-1) a_w + n(n-1) a_c, b(n) = max{2(n-1) b_w, n(n-1) b_c}
//	                eq. 5:  a_c = lim a(n)/(n(n-1)),  b_c = lim b(n)/(n(n-1))
//	"pairwise"      eq. 8:  a(n) = 2 a_p + n a_c,     b(n) = max{b_p, n b_c}
//	                eqs. 9-10: a_c = lim a(n)/n,      b_c = lim b(n)/n
//	"rowcontention" eq. 12: a(n) = 2 a_p + 2n a_c,    b(n) = max{b_p, n b_c}
//	                eqs. 13-14: a_c = lim a(n)/(2n),  b_c = lim b(n)/n
//
// At a finite n the a-limits are biased by the end-node term (by 4 a_w/n
// for all-to-all: with the paper's own Ethernet values, eq. 6, that is
// +375 µs on a_c = 250 µs at n = 8). Since the round trip gives a = 2 a_w +
// a_c (eq. 3; a = 2 a_p + 2 a_c for the row pattern, eq. 12 at n = 1),
// eliminating a_w from the per-n equations gives a_c exactly at finite n,
// and the same value as the limit when n grows:
//
//	all-to-all:     a_c = (a(n) - 2(n-1) a) / ((n-1)(n-2)),  n >= 3
//	pairwise:       a_c = (a(n) - a) / (n-1),                n >= 2
//	row contention: a_c = (a(n) - a) / (2(n-1)),             n >= 2
//
// These are used, evaluated at the largest measured n; the paper's raw
// limit quotient at that n is kept in AcLimit. The paper's rule of thumb
// decides whether that n is large enough: adding a node changes a_c by
// less than 5% (AcChange, AcConverged). The b-limits are exact once the
// network is the bottleneck (n(n-1) b_c >= 2(n-1) b_w) and are used as
// they stand at the largest n. a_w then follows from eq. 3, and b_w from
// b = max{b_w, b_c}: when b is not above b_c, b_w is shadowed by the
// network (paper 001, section 3.1) and b is kept as its upper bound, with a
// note. For the pairwise and row patterns the paper calls the end-node
// block CB_p; here it is a_w, b_w.
type Hyperbolic struct {
	A Param `json:"a"`
	B Param `json:"b"`
	// Component blocks; nil when only round trips were fitted.
	Aw *Param `json:"a_w,omitempty"`
	Bw *Param `json:"b_w,omitempty"`
	Ac *Param `json:"a_c,omitempty"`
	Bc *Param `json:"b_c,omitempty"`
	// Source is the contention pattern the components come from.
	Source string `json:"source,omitempty"`
	// AcLimit is the paper's limit quotient (eq. 5, 9 or 13) at the
	// largest n, before the finite-n correction.
	AcLimit float64 `json:"ac_limit,omitempty"`
	// AcChange is |a_c(n_max) - a_c(n_prev)| / a_c(n_prev) for the two
	// largest measured n; AcConverged is AcChange < 5% with n_prev =
	// n_max - 1 (the paper's "adding a node" rule).
	AcChange    float64 `json:"ac_change,omitempty"`
	AcConverged bool    `json:"ac_converged"`
	// Medium is the decision between end nodes that send and receive at
	// once at full speed (MediumDuplex: full-duplex links, switched
	// Ethernet, give an all-to-all b(n) = (n-1) b_w) and nodes that serve
	// their n-1 sent and n-1 received messages one after another
	// (MediumShared: eq. 4's node term 2(n-1) b_w, the paper's shared
	// medium), taken on the evidence DuplexRatio: rho = b(n) / ((n-1) b_w)
	// at the largest n, with its 95% CI. The CI below 1.5 - duplexMargin
	// decides duplex, above 1.5 + duplexMargin shared; a CI across the
	// band is MediumUndecided, and predictions then carry both
	// (MediumPredictions). Only an all-to-all fit can show it; other
	// sources keep the paper's half-duplex node (MediumShared).
	Medium      string `json:"medium,omitempty"`
	DuplexRatio *Param `json:"duplex_ratio,omitempty"`
	// Duplex is Medium == MediumDuplex, as files written before Medium
	// say it (read only).
	Duplex bool `json:"duplex,omitempty"`
	// Curves are the per-n fits T(x; a(n), b(n)) of the contention pattern.
	Curves []HyperbolicCurve `json:"curves,omitempty"`
	// Fit is the quality of the round-trip fit of (a, b); each curve
	// carries its own.
	Fit Quality `json:"quality"`
}

// HyperbolicCurve is T(x; a(n), b(n)) fitted to one contention pattern at
// one n (paper 001's n: nodes for all-to-all, pairs for the others).
type HyperbolicCurve struct {
	Pattern string  `json:"pattern"`
	N       int     `json:"n"`
	A       Param   `json:"a"`
	B       Param   `json:"b"`
	Fit     Quality `json:"quality"`
}

// hyperbolicBenches are the records the fit reads; hyperbolicPatterns what
// Predict describes: also paper 001's multigrid chain, which no pattern
// measures (the hyperbolic model reduces it from the fitted blocks).
var (
	hyperbolicBenches  = []string{"pingpong", "roundtrip", "alltoall", "pairwise", "rowcontention"}
	hyperbolicPatterns = append(append([]string(nil), hyperbolicBenches...), "chainshift")
)

func init() {
	Register(Kind{
		Name:    "hyperbolic",
		Summary: "T(x; a, b) = a^2/(a + b x) + b x with end-node and network blocks from the contention patterns (paper 001)",
		Benches: hyperbolicBenches,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitHyperbolic(r, o) },
		New:     func() Model { return &Hyperbolic{} },
		Check: func(m Model) error {
			switch md := m.(*Hyperbolic).Medium; md {
			case "", MediumDuplex, MediumShared, MediumUndecided:
				return nil
			default:
				return fmt.Errorf("medium %q: want %s, %s or %s", md, MediumDuplex, MediumShared, MediumUndecided)
			}
		},
		// A program's calibration is fitted with absolute weights: b is
		// the slope of T's asymptote and a its value at x = 0 (paper 001,
		// eq. 2; section 2 extracts them "at extreme limits of message
		// size"), and relative weights would let the calibration's small
		// round trips, which a shaped link's token bucket speeds up, set b.
		ProgramOptions: &Options{Weighting: WeightNone},
	})
}

func (h *Hyperbolic) Kind() string       { return "hyperbolic" }
func (h *Hyperbolic) Quality() Quality   { return h.Fit }
func (h *Hyperbolic) Patterns() []string { return hyperbolicPatterns }
func (h *Hyperbolic) Params() []Param {
	out := []Param{h.A, h.B}
	for _, p := range []*Param{h.Aw, h.Bw, h.Ac, h.Bc} {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// EndToEndBlock is the fitted one-message block (a, b).
func (h *Hyperbolic) EndToEndBlock() Block { return Block{A: h.A.Value, B: h.B.Value} }

// Components returns the end-node and network blocks, or false.
func (h *Hyperbolic) Components() (w, c Block, ok bool) {
	if h.Aw == nil || h.Bw == nil || h.Ac == nil || h.Bc == nil {
		return Block{}, Block{}, false
	}
	return Block{A: h.Aw.Value, B: h.Bw.Value}, Block{A: h.Ac.Value, B: h.Bc.Value}, true
}

// Predict: "pingpong" T(x; a, b) one way, "roundtrip" twice that; with
// component blocks also "alltoall" (Ranks = n, eq. 4), "pairwise" (Ranks =
// 2n, eq. 8), "rowcontention" (Ranks = 2n, eq. 12) and "chainshift"
// (Ranks = n, paper 001 Table 1 by ChainShift, with the network block of
// the pattern the components came from: alltoall a shared medium, pairwise
// a dedicated link, rowcontention a mesh row), all evaluated with rule 4,
// T(x; a(n), b(n)). A chainshift over 2 ranks is one message and needs
// only the end-to-end block.
func (h *Hyperbolic) Predict(in Instance) (float64, error) {
	x, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong":
		return h.EndToEndBlock().Time(x), nil
	case "roundtrip":
		return 2 * h.EndToEndBlock().Time(x), nil
	case "chainshift":
		if in.Ranks < 2 {
			return 0, fmt.Errorf("%w: chainshift needs ranks >= 2, got %d", ErrBadRecord, in.Ranks)
		}
		if in.Ranks == 2 {
			return h.EndToEndBlock().Time(x), nil
		}
	case "alltoall", "pairwise", "rowcontention":
	default:
		return 0, unsupported(h.Kind(), in.Pattern, hyperbolicPatterns)
	}
	w, c, ok := h.Components()
	if !ok {
		return 0, fmt.Errorf("%w: this hyperbolic model was fitted from round trips only; %s needs a_c, b_c (fit with alltoall, pairwise or rowcontention records)",
			ErrUnsupportedPattern, in.Pattern)
	}
	switch in.Pattern {
	case "chainshift", "alltoall":
		if in.Pattern == "alltoall" && in.Ranks < 2 {
			return 0, fmt.Errorf("%w: alltoall needs ranks >= 2, got %d", ErrBadRecord, in.Ranks)
		}
		duplex, shared, _, err := h.MediumPredictions(in)
		if err != nil {
			return 0, err
		}
		switch h.medium() {
		case MediumDuplex:
			return duplex, nil
		case MediumShared:
			return shared, nil
		}
		return (duplex + shared) / 2, nil // undecided: both carried, each printed by the callers
	case "pairwise":
		if in.Ranks < 2 || in.Ranks%2 != 0 {
			return 0, fmt.Errorf("%w: pairwise needs an even ranks = 2n >= 2, got %d", ErrBadRecord, in.Ranks)
		}
		return Pairwise(w, c, in.Ranks/2).Time(x), nil
	default:
		if in.Ranks < 2 || in.Ranks%2 != 0 {
			return 0, fmt.Errorf("%w: rowcontention needs an even ranks = 2n >= 2, got %d", ErrBadRecord, in.Ranks)
		}
		return RowContention(w, c, in.Ranks/2).Time(x), nil
	}
}

// contentionN returns the paper's n for a contention record: the number
// of nodes for all-to-all, of pairs (ranks = 2n) for the others.
func contentionN(pattern string, ranks int) (int, error) {
	switch pattern {
	case "alltoall":
		if ranks < 2 {
			return 0, fmt.Errorf("%w: alltoall record with ranks = %d, want >= 2", ErrBadRecord, ranks)
		}
		return ranks, nil
	case "pairwise", "rowcontention":
		if ranks < 2 || ranks%2 != 0 {
			return 0, fmt.Errorf("%w: %s record with ranks = %d, want an even 2n >= 2", ErrBadRecord, pattern, ranks)
		}
		return ranks / 2, nil
	}
	return 0, fmt.Errorf("not a contention pattern: %s", pattern)
}

// acInversion returns ka, kaa of a_c = (a(n) - kaa a)/ka (see the
// Hyperbolic doc comment).
func acInversion(pattern string, n int) (ka, kaa float64) {
	N := float64(n)
	switch pattern {
	case "alltoall":
		return (N - 1) * (N - 2), 2 * (N - 1)
	case "pairwise":
		return N - 1, 1
	}
	return 2 * (N - 1), 1
}

// networkEstimate turns one per-n fit (a(n), b(n)) and the round-trip a
// into a_c (finite-n inversion), the paper's limit quotient, and b_c, per
// the equations in the Hyperbolic doc comment. ok is false when n is too
// small for the inversion (all-to-all at n = 2 gives a(2) = 2a exactly).
func networkEstimate(pattern string, n int, an, bn, a Param) (ac Param, acLimit float64, bc Param, ok bool) {
	N := float64(n)
	ka, kaa := acInversion(pattern, n)
	var limDiv, bDiv float64
	switch pattern {
	case "alltoall":
		limDiv, bDiv = N*(N-1), N*(N-1)
	case "pairwise":
		limDiv, bDiv = N, N
	default:
		limDiv, bDiv = 2*N, N
	}
	bc = scaleParam(bn, "b_c", 1/bDiv)
	if ka <= 0 {
		return Param{}, an.Value / limDiv, bc, false
	}
	v := (an.Value - kaa*a.Value) / ka
	se := math.Sqrt(sq(an.SE)+sq(kaa*a.SE)) / ka
	// t is the quantile of the intervals a_c is derived from: a_n's, or
	// a's where a_n has none (an SE of a_c without an interval is none a
	// fit writes; checkInterval).
	t := 0.0
	if an.SE > 0 {
		t = (an.CI95[1] - an.Value) / an.SE
	} else if a.SE > 0 {
		t = (a.CI95[1] - a.Value) / a.SE
	}
	ac = Param{Name: "a_c", Unit: "s", Value: v, SE: se, CI95: [2]float64{v - t*se, v + t*se}}
	return ac, an.Value / limDiv, bc, true
}

// FitHyperbolic fits the end-to-end block to "roundtrip"/"pingpong"
// records and, when present, derives the component blocks from
// "alltoall", else "pairwise", else "rowcontention" records.
func FitHyperbolic(recs []results.Record, opt Options) (*Hyperbolic, error) {
	pts, ys, err := oneWayPoints(recs, "hyperbolic", opt)
	if err != nil {
		return nil, err
	}
	xs := make([]float64, len(pts))
	labels := make([]string, len(pts))
	for i, p := range pts {
		xs[i], labels[i] = p.x[0], p.label()
	}
	if lv := levels(pts, 0); len(lv) < 3 {
		return nil, fmt.Errorf("%w: hyperbolic needs round trips at 3 or more message sizes; the records have bytes = %s",
			ErrIllConditioned, formatLevels(lv))
	}
	e2e, err := fitHyperbolicCurve(xs, ys, pts, labels, opt)
	if err != nil {
		return nil, fmt.Errorf("hyperbolic a, b from round trips: %w", err)
	}
	h := &Hyperbolic{A: e2e.a, B: e2e.b, Fit: e2e.q}

	var source string
	var present []string
	for _, pat := range []string{"alltoall", "pairwise", "rowcontention"} {
		for _, r := range recs {
			if r.Bench == pat {
				present = append(present, pat)
				if source == "" {
					source = pat
				}
				break
			}
		}
	}
	if source == "" {
		return h, nil
	}
	if len(present) > 1 {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("components derived from %s records; %v records not used", source, present[1:]))
	}
	sel, err := selectRecords(recs, "hyperbolic", source)
	if err != nil {
		return nil, err
	}
	cpts, err := mergePoints(sel, "bytes")
	if err != nil {
		return nil, err
	}
	cpts = filterBytes(cpts, 0, opt)
	byRanks := map[int][]point{}
	for _, p := range cpts {
		byRanks[p.inst.Ranks] = append(byRanks[p.inst.Ranks], p)
	}
	var ranks []int
	for r := range byRanks {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	type acEst struct {
		n       int
		an, bn  Param // a(n), b(n)
		ac, bc  Param
		acLimit float64
	}
	var ests []acEst
	for _, rk := range ranks {
		ps := byRanks[rk]
		n, err := contentionN(source, rk)
		if err != nil {
			return nil, err
		}
		if len(levels(ps, 0)) < 3 {
			h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("%s at ranks=%d has fewer than 3 sizes; not fitted", source, rk))
			continue
		}
		x := make([]float64, len(ps))
		y := make([]float64, len(ps))
		l := make([]string, len(ps))
		for i, p := range ps {
			x[i], y[i], l[i] = p.x[0], p.y, p.label()
		}
		cf, err := fitHyperbolicCurve(x, y, ps, l, opt)
		if err != nil {
			return nil, fmt.Errorf("hyperbolic %s at ranks=%d: %w", source, rk, err)
		}
		h.Curves = append(h.Curves, HyperbolicCurve{Pattern: source, N: n, A: cf.a, B: cf.b, Fit: cf.q})
		if ac, lim, bc, ok := networkEstimate(source, n, cf.a, cf.b, h.A); ok {
			ests = append(ests, acEst{n: n, an: cf.a, bn: cf.b, ac: ac, bc: bc, acLimit: lim})
		}
	}
	if len(ests) == 0 {
		return nil, fmt.Errorf("%w: hyperbolic: no %s rank count with 3 or more message sizes gives a_c (all-to-all needs n >= 3 nodes, the pair patterns n >= 2 pairs)", ErrIllConditioned, source)
	}
	last := ests[len(ests)-1]
	ac, bc := last.ac, last.bc
	h.Ac, h.Bc, h.Source, h.AcLimit = &ac, &bc, source, last.acLimit
	if len(ests) >= 2 {
		prev := ests[len(ests)-2]
		h.AcChange = math.Abs(last.ac.Value-prev.ac.Value) / math.Abs(prev.ac.Value)
		h.AcConverged = h.AcChange < 0.05 && prev.n == last.n-1
		switch {
		case prev.n != last.n-1:
			h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("a_c changes by %.1f%% from n=%d to n=%d; the 5%% rule needs consecutive n (paper 001, section 3.1)", 100*h.AcChange, prev.n, last.n))
		case !h.AcConverged:
			h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("a_c changes by %.1f%% from n=%d to n=%d (>= 5%%): not enough nodes by paper 001's rule (section 3.1)", 100*h.AcChange, prev.n, last.n))
		}
	} else {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("a_c from a single n=%d; the 5%% convergence rule needs two consecutive n", last.n))
	}
	if ac.Value <= 0 {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("a_c = %.3g s is not positive: small messages do not contend in the network (paper 001 could not isolate a_c on the SP2 and Paragon either)", ac.Value))
	}
	// End-node block from eq. 3 (eq. 12 at n = 1 for the row pattern).
	acMul := 1.0
	if source == "rowcontention" {
		acMul = 2
	}
	awv := (h.A.Value - acMul*ac.Value) / 2
	// a_c itself depends on a: a_w = (a (1 + acMul kaa/ka) - acMul a(n)/ka)/2,
	// so propagate through a and a(n), which come from independent fits.
	ka, kaa := acInversion(source, last.n)
	awse := math.Sqrt(sq((1+acMul*kaa/ka)*h.A.SE)+sq(acMul/ka*last.an.SE)) / 2
	t := tQuantile975(max(h.Fit.DoF, 1))
	aw := Param{Name: "a_w", Unit: "s", Value: awv, SE: awse, CI95: [2]float64{awv - t*awse, awv + t*awse}}
	if awv <= 0 {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("a_w = %.3g s is not positive: a_c from the contention records exceeds the round-trip a", awv))
	}
	bw := h.B
	bw.Name = "b_w"
	if h.B.Value <= bc.Value*1.05 {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("b = %.3g s/B is not above b_c = %.3g s/B: b_w is shadowed by the network (paper 001, section 3.1); b_w <= b is kept as its upper bound", h.B.Value, bc.Value))
	}
	h.Aw, h.Bw = &aw, &bw
	h.Medium = MediumShared
	if source == "alltoall" && last.n >= 2 && bw.Value > 0 {
		// Eq. 4's node term 2(n-1) b_w bounds b(n) from below for a
		// half-duplex node; a measured b(n) well under it means the node
		// sends and receives at once.
		rho := last.bn.Value / (float64(last.n-1) * bw.Value)
		se := rho * math.Sqrt(sq(last.bn.SE/last.bn.Value)+sq(bw.SE/bw.Value))
		r := Param{Name: "rho", Value: rho, SE: se, CI95: [2]float64{rho - t*se, rho + t*se}}
		h.DuplexRatio = &r
		h.Medium = decideMedium(r)
		switch h.Medium {
		case MediumDuplex:
			h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("all-to-all at n=%d: b(n) = %.3g (n-1) b_w, 95%% CI [%.3g, %.3g] under %.2g: the nodes send and receive at once (full duplex); b_w counts once per direction, and b_c is an upper bound (the network did not limit)", last.n, rho, r.CI95[0], r.CI95[1], duplexRatio-duplexMargin))
		case MediumUndecided:
			h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("all-to-all at n=%d: b(n) = %.3g (n-1) b_w, 95%% CI [%.3g, %.3g] across %.2g..%.2g: the calibration cannot tell a full-duplex node (1) from a shared medium (2); predictions are the mean of both, each printed", last.n, rho, r.CI95[0], r.CI95[1], duplexRatio-duplexMargin, duplexRatio+duplexMargin))
		}
	}
	h.Duplex = h.Medium == MediumDuplex
	return h, nil
}

// The medium decisions (Hyperbolic.Medium).
const (
	MediumDuplex    = "duplex"
	MediumShared    = "shared"
	MediumUndecided = "undecided"
)

// duplexRatio separates b(n) = (n-1) b_w (full duplex) from 2(n-1) b_w
// (a node serving sends and receives in turn), halfway; duplexMargin is
// the band about it that a decision's CI must stay out of.
const (
	duplexRatio  = 1.5
	duplexMargin = 0.1
)

// decideMedium is the decision on the evidence r.
func decideMedium(r Param) string {
	switch {
	case r.CI95[1] < duplexRatio-duplexMargin:
		return MediumDuplex
	case r.CI95[0] > duplexRatio+duplexMargin:
		return MediumShared
	}
	return MediumUndecided
}

// medium is the decision, for models read from files written before
// Medium (Duplex alone).
func (h *Hyperbolic) medium() string {
	switch {
	case h.Medium != "":
		return h.Medium
	case h.Duplex:
		return MediumDuplex
	}
	return MediumShared
}

// MediumPredictions are the all-to-all or chain prediction of in on a
// full-duplex node and on a shared medium, and whether the model's
// decision is undecided (so a caller shows both).
func (h *Hyperbolic) MediumPredictions(in Instance) (duplex, shared float64, undecided bool, err error) {
	if in.Pattern != "alltoall" && in.Pattern != "chainshift" {
		return 0, 0, false, fmt.Errorf("%w: %s has no medium decision", ErrUnsupportedPattern, in.Pattern)
	}
	x, err := in.Num("bytes")
	if err != nil {
		return 0, 0, false, err
	}
	w, c, ok := h.Components()
	if !ok || in.Ranks < 2 {
		return 0, 0, false, fmt.Errorf("%w: no network block or fewer than 2 ranks", ErrUnsupportedPattern)
	}
	if in.Pattern == "chainshift" {
		return ChainShift(w, c, in.Ranks, h.Source, true).Time(x), ChainShift(w, c, in.Ranks, h.Source, false).Time(x), h.medium() == MediumUndecided, nil
	}
	return AllToAllDuplex(w, c, in.Ranks).Time(x), AllToAll(w, c, in.Ranks).Time(x), h.medium() == MediumUndecided, nil
}

// AllToAllDuplex is eq. 4 for end nodes that send and receive at once:
// each direction of a node serves n-1 messages,
//
//	a(n) = 4(n-1) a_w + n(n-1) a_c,  b(n) = max{(n-1) b_w, n(n-1) b_c}.
func AllToAllDuplex(w, c Block, n int) Block {
	k := float64(n - 1)
	node := Block{A: 2 * k * w.A, B: k * w.B}
	return Serial(false, node, c.Scale(float64(n)*k), node)
}

// scaleParam multiplies a parameter (value, SE, CI) by k > 0 and renames it.
func scaleParam(p Param, name string, k float64) Param {
	return Param{Name: name, Unit: p.Unit, Value: p.Value * k, SE: p.SE * k, CI95: [2]float64{p.CI95[0] * k, p.CI95[1] * k}, Fixed: p.Fixed}
}
