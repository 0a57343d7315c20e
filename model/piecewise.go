package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/commcost/commcost/results"
)

// Piecewise is a Hockney model with one (t_s, t_w) pair per message-size
// segment. Protocol switches (eager -> rendezvous, shared-memory single
// copy) make point-to-point costs piecewise linear with jumps at the switch
// sizes (MEASURE.md "Fitting"), so segments are fitted separately and are not
// forced to join.
type Piecewise struct {
	Segments []Segment `json:"segments"`
	// Breakpoints holds the first measured size of every segment after the
	// first; the protocol switch lies between it and the previous measured
	// size.
	Breakpoints []float64 `json:"breakpoints"`
	// Candidates records the criterion of the best segmentation for each
	// number of segments tried, so the choice can be audited.
	Candidates []SegmentationCandidate `json:"candidates"`
	Fit        Quality                 `json:"quality"`
}

// Segment is one linear piece over the measured sizes [FromBytes, ToBytes].
type Segment struct {
	FromBytes float64 `json:"from_bytes"`
	ToBytes   float64 `json:"to_bytes"`
	Ts        Param   `json:"t_s"`
	Tw        Param   `json:"t_w"`
	Fit       Quality `json:"quality"`
}

// SegmentationCandidate is the best K-segment split and its criterion.
type SegmentationCandidate struct {
	K   int     `json:"k"`
	SSE float64 `json:"sse"`
	// BIC is the criterion C(K) of segmentation (BIC with a doubled penalty).
	BIC float64 `json:"bic"`
}

func init() {
	Register(Kind{
		Name:           "piecewise",
		Summary:        "Hockney per message-size segment; breakpoints (protocol switches) chosen by penalised BIC",
		Benches:        hockneyPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptSegments},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitPiecewise(r, o) },
		New:            func() Model { return &Piecewise{} },
		ProgramOptions: &Options{},
		Check: func(m Model) error {
			t := m.(*Piecewise)
			if len(t.Segments) == 0 {
				return errors.New("no segments")
			}
			for i := 1; i < len(t.Segments); i++ {
				if t.Segments[i].FromBytes <= t.Segments[i-1].FromBytes {
					return fmt.Errorf("segment %d starts at %g bytes, not after segment %d (%g)", i+1, t.Segments[i].FromBytes, i, t.Segments[i-1].FromBytes)
				}
			}
			return nil
		},
	})
}

func (p *Piecewise) Kind() string       { return "piecewise" }
func (p *Piecewise) Quality() Quality   { return p.Fit }
func (p *Piecewise) Patterns() []string { return hockneyPatterns }

// Params lists t_s and t_w of every segment, suffixed with the segment
// number ("t_s[1]", ...).
func (p *Piecewise) Params() []Param {
	var out []Param
	for i, s := range p.Segments {
		ts, tw := s.Ts, s.Tw
		ts.Name = fmt.Sprintf("t_s[%d]", i+1)
		tw.Name = fmt.Sprintf("t_w[%d]", i+1)
		out = append(out, ts, tw)
	}
	return out
}

// segmentFor returns the segment describing a message of m bytes (see
// segmentAt).
func (p *Piecewise) segmentFor(m float64) Segment {
	return p.Segments[segmentAt(len(p.Segments), func(i int) float64 { return p.Segments[i].FromBytes }, m)]
}

// segmentAt is the index of the segment, of n > 0 whose first measured
// sizes from(0) < from(1) < ... ascend, that describes size x: the last one
// starting at or below x. A size between the last measured size of one
// segment and the first of the next belongs to the lower segment: the
// switch is somewhere in that gap and the records cannot say where.
func segmentAt(n int, from func(i int) float64, x float64) int {
	for i := n - 1; i > 0; i-- {
		if x >= from(i) {
			return i
		}
	}
	return 0
}

// OneWay returns the segment's t_s + t_w m.
func (p *Piecewise) OneWay(m float64) float64 {
	s := p.segmentFor(m)
	return s.Ts.Value + s.Tw.Value*m
}

// Predict is as Hockney.Predict with the segment of the message size.
func (p *Piecewise) Predict(in Instance) (float64, error) {
	m, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong":
		return p.OneWay(m), nil
	case "roundtrip":
		return 2 * p.OneWay(m), nil
	}
	return 0, unsupported(p.Kind(), in.Pattern, hockneyPatterns)
}

// segStats accumulates a weighted straight-line fit incrementally
// (West's weighted update of means and co-moments, which stays accurate
// where raw power sums would cancel catastrophically for sizes up to 1e9).
type segStats struct {
	w, mx, my, sxx, sxy, syy float64
}

func (s *segStats) add(x, y, w float64) {
	s.w += w
	dx := x - s.mx
	s.mx += dx * w / s.w
	dy := y - s.my
	s.my += dy * w / s.w
	s.sxx += w * dx * (x - s.mx)
	s.sxy += w * dx * (y - s.my)
	s.syy += w * dy * (y - s.my)
}

// sse is the weighted residual sum of squares of the best line.
func (s *segStats) sse() float64 {
	if s.sxx <= 0 {
		return s.syy
	}
	return math.Max(s.syy-s.sxy*s.sxy/s.sxx, 0)
}

// segmentPenalty multiplies the BIC penalty of a segmentation; see
// segmentation.
const segmentPenalty = 2

// segmentation finds, for each K = 1..maxK, the split of the sorted points
// into K contiguous segments of at least minPts points minimising the total
// weighted SSE (dynamic programming over the O(n^2) segment costs, exact,
// not greedy), and returns the start indices of the K chosen by
//
//	C(K) = n ln(max(SSE_K, floor)/n) + 2 (3K - 1) ln n
//
// (2K line coefficients plus K-1 breakpoints). This is BIC with the
// penalty doubled (segmentPenalty): the breakpoints are the best of many
// candidate positions, and that search inflates the apparent gain of a
// split. Calibrated on 23 sizes (1 B .. 4 MiB) with 2% relative noise over
// 300 seeds: plain BIC split a straight line 29% of the time, the doubled
// penalty 0.7%, while still finding a 50% start-up jump at 4 KiB in 99%
// of the seeds. chooseSegments does the search and the choice.
func segmentation(xs, ys, ws []float64, maxK, minPts int) ([]int, []SegmentationCandidate) {
	n := len(xs)
	inf := math.Inf(1)
	// A segment may only start where the size changes, so equal sizes
	// (a ping-pong and a round trip at the same m) stay together.
	canStart := func(i int) bool { return i == 0 || xs[i] != xs[i-1] }
	cost := make([][]float64, n)
	for i := 0; i < n; i++ {
		cost[i] = make([]float64, n+1)
		for j := range cost[i] {
			cost[i][j] = inf
		}
		if !canStart(i) {
			continue
		}
		var s segStats
		distinct := 0
		for j := i; j < n; j++ {
			if j == i || xs[j] != xs[j-1] {
				distinct++
			}
			s.add(xs[j], ys[j], ws[j]*ws[j])
			if distinct >= minPts && (j+1 == n || canStart(j+1)) {
				cost[i][j+1] = s.sse()
			}
		}
	}
	return chooseSegments(n, n, 2, maxK, segmentPenalty, medianWeighted(ws, ys), func(i, j int) float64 { return cost[i][j] })
}

// medianWeighted is the median of |w_i y_i|, the scale of chooseSegments'
// floor.
func medianWeighted(ws, ys []float64) float64 {
	wy := make([]float64, len(ys))
	for i := range ys {
		wy[i] = math.Abs(ws[i] * ys[i])
	}
	return median(wy)
}

// chooseSegments splits units 0..n-1 into contiguous segments [i, j) of
// weighted residual sum of squares cost(i, j) (+Inf where a segment may not
// be [i, j)): for each K = 1..maxK the split of least total cost, by exact
// dynamic programming, then the K minimising
//
//	C(K) = nObs ln(max(SSE_K, floor)/nObs) + penalty ((coefs+1) K - 1) ln nObs
//
// (coefs coefficients per segment plus K-1 breakpoints): BIC with its
// penalty multiplied by penalty (segmentPenalty = 2 for piecewise Hockney,
// see segmentation). The floor, nObs (1e-7 m)^2 with m the
// median weighted value, stops the criterion from rewarding splits that
// only chase rounding noise once a segmentation is exact. It returns the
// start unit of every chosen segment (nil if no K is feasible) and every
// K's candidate.
func chooseSegments(n, nObs, coefs, maxK int, penalty, m float64, cost func(i, j int) float64) ([]int, []SegmentationCandidate) {
	inf := math.Inf(1)
	best := make([][]float64, maxK+1)
	from := make([][]int, maxK+1)
	for k := range best {
		best[k] = make([]float64, n+1)
		from[k] = make([]int, n+1)
		for j := range best[k] {
			best[k][j] = inf
		}
	}
	best[0][0] = 0
	for k := 1; k <= maxK; k++ {
		for j := 1; j <= n; j++ {
			for i := 0; i < j; i++ {
				if best[k-1][i] == inf {
					continue
				}
				if c := best[k-1][i] + cost(i, j); c < best[k][j] {
					best[k][j], from[k][j] = c, i
				}
			}
		}
	}
	floor := float64(nObs) * (1e-7 * m) * (1e-7 * m)
	var cands []SegmentationCandidate
	bestK, bestBIC := 0, inf
	for k := 1; k <= maxK; k++ {
		if best[k][n] == inf {
			continue
		}
		bic := float64(nObs)*math.Log(math.Max(best[k][n], floor)/float64(nObs)) + penalty*float64((coefs+1)*k-1)*math.Log(float64(nObs))
		cands = append(cands, SegmentationCandidate{K: k, SSE: best[k][n], BIC: bic})
		if bic < bestBIC {
			bestK, bestBIC = k, bic
		}
	}
	if bestK == 0 {
		return nil, cands
	}
	starts := make([]int, bestK)
	j := n
	for k := bestK; k >= 1; k-- {
		i := from[k][j]
		starts[k-1] = i
		j = i
	}
	return starts, cands
}

// FitPiecewise segments ping-pong/round-trip points by message size
// (segmentation) and fits a Hockney line to every segment separately.
func FitPiecewise(recs []results.Record, opt Options) (*Piecewise, error) {
	pts, ys, err := oneWayPoints(recs, "piecewise", opt)
	if err != nil {
		return nil, err
	}
	minPts := opt.minSegmentPoints()
	lv := levels(pts, 0)
	if len(lv) < minPts {
		return nil, fmt.Errorf("%w: piecewise needs at least %d distinct message sizes; the records have bytes = %s",
			ErrIllConditioned, minPts, formatLevels(lv))
	}
	xs := make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = p.x[0]
	}
	ws, note := weights(pts, ys, opt)
	starts, cands := segmentation(xs, ys, ws, opt.maxSegments(), minPts)
	if starts == nil {
		return nil, fmt.Errorf("%w: piecewise: no segmentation with at least %d sizes per segment", ErrIllConditioned, minPts)
	}
	pw := &Piecewise{Candidates: cands}
	var qs []Quality
	for k, s := range starts {
		e := len(pts)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		h, err := fitHockneyPoints(pts[s:e], ys[s:e], opt)
		if err != nil {
			return nil, fmt.Errorf("piecewise segment %d (%g..%g bytes): %w", k+1, xs[s], xs[e-1], err)
		}
		pw.Segments = append(pw.Segments, Segment{FromBytes: xs[s], ToBytes: xs[e-1], Ts: h.Ts, Tw: h.Tw, Fit: h.Fit})
		if k > 0 {
			pw.Breakpoints = append(pw.Breakpoints, xs[s])
		}
		qs = append(qs, h.Fit)
	}
	pw.Fit = combineSegments(qs, ys, ws, 2, opt, note)
	return pw, nil
}

// combineSegments is the quality of a segmented fit over the kept points
// of all segments: the SSE is the sum of the segments' SSEs, the
// parameters are coefs per segment plus the breakpoints, the condition
// number the worst segment's; note (the weighting's) and the segments'
// own notes are kept.
func combineSegments(qs []Quality, ys, ws []float64, coefs int, opt Options, note string) Quality {
	var q Quality
	var sse float64
	for _, s := range qs {
		q.Trimmed += s.Trimmed
		q.TrimmedPoints = append(q.TrimmedPoints, s.TrimmedPoints...)
		q.N += s.N
		q.Cond = max(q.Cond, s.Cond)
		sse += s.RSE * s.RSE * float64(s.DoF)
	}
	q.DoF = q.N - ((coefs+1)*len(qs) - 1)
	var sumW, sumWy, sst float64
	for i := range ys {
		sumW += ws[i] * ws[i]
		sumWy += ws[i] * ws[i] * ys[i]
	}
	ybar := sumWy / sumW
	for i := range ys {
		sst += ws[i] * ws[i] * (ys[i] - ybar) * (ys[i] - ybar)
	}
	if q.DoF > 0 {
		q.RSE = math.Sqrt(sse / float64(q.DoF))
		if sst > 0 {
			q.AdjR2 = 1 - (sse/sst)*float64(q.N-1)/float64(q.DoF)
		}
	}
	q.Weighting = effectiveWeighting(opt, note)
	if len(qs) > 0 {
		q.RSEUnit = qs[0].RSEUnit
	}
	if note != "" {
		q.Notes = append(q.Notes, note)
	}
	for i, s := range qs {
		for _, n := range s.Notes {
			if n != note {
				q.Notes = append(q.Notes, fmt.Sprintf("segment %d: %s", i+1, n))
			}
		}
	}
	return q
}
