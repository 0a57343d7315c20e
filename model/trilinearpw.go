package model

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/commcost/commcost/results"
)

// PiecewiseTrilinear is paper 000's trilinear k-k-access model (section 4)
// with one set of eight coefficients per packet-size regime. The paper's
// store-and-forward Transputer network moved every packet the same way, so
// T was linear in l; an MPI library switches protocol with the message size
// (on shared memory: a fast path up to a few hundred bytes, copy-in/copy-out
// eager up to 4 KiB, rendezvous above), and the cost of a k-k-access jumps
// with it. As piecewise Hockney does for the ping-pong, the packet sizes
// are split into contiguous regimes, chosen by a penalised criterion
// (chooseSegments, with 8 coefficients per segment), and T(k, l, r) is
// fitted separately in each.
type PiecewiseTrilinear struct {
	Op       string             `json:"op,omitempty"`
	Segments []TrilinearSegment `json:"segments"`
	// Breakpoints holds the first packet size of every segment after the
	// first.
	Breakpoints []float64               `json:"breakpoints"`
	Candidates  []SegmentationCandidate `json:"candidates"`
	Fit         Quality                 `json:"quality"`
}

// TrilinearSegment is the trilinear model of the packet sizes
// [FromBytes, ToBytes].
type TrilinearSegment struct {
	FromBytes float64    `json:"from_bytes"`
	ToBytes   float64    `json:"to_bytes"`
	Model     *Trilinear `json:"model"`
}

func init() {
	Register(Kind{
		Name:    "trilinear-piecewise",
		Summary: "trilinear T(k, l, r) per packet-size regime, regimes found from the records by penalised BIC (paper 000)",
		Benches: trilinearPatterns,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange, OptOp, OptNetwork, OptSegments},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitPiecewiseTrilinear(r, o) },
		New:     func() Model { return &PiecewiseTrilinear{} },
		Check: func(m Model) error {
			t := m.(*PiecewiseTrilinear)
			if len(t.Segments) == 0 {
				return errors.New("no segments")
			}
			for i, s := range t.Segments {
				if s.Model == nil {
					return fmt.Errorf("segment %d has no model", i+1)
				}
				if err := checkUsable(s.Model); err != nil {
					return fmt.Errorf("segment %d: %w", i+1, err)
				}
				if i > 0 && s.FromBytes <= t.Segments[i-1].FromBytes {
					return fmt.Errorf("segment %d starts at l = %g bytes, not after segment %d (%g)", i+1, s.FromBytes, i, t.Segments[i-1].FromBytes)
				}
			}
			return nil
		},
		Size: packetSize,
	})
}

func (p *PiecewiseTrilinear) Kind() string       { return "trilinear-piecewise" }
func (p *PiecewiseTrilinear) Quality() Quality   { return p.Fit }
func (p *PiecewiseTrilinear) Patterns() []string { return trilinearPatterns }

// Params lists c7..c0 of every segment, suffixed with the segment number
// ("c7[1]", ...).
func (p *PiecewiseTrilinear) Params() []Param {
	var out []Param
	for i, s := range p.Segments {
		for _, c := range s.Model.C {
			c.Name = fmt.Sprintf("%s[%d]", c.Name, i+1)
			out = append(out, c)
		}
	}
	return out
}

// segmentFor is the model of packet size l (see segmentAt).
func (p *PiecewiseTrilinear) segmentFor(l float64) *Trilinear {
	return p.Segments[segmentAt(len(p.Segments), func(i int) float64 { return p.Segments[i].FromBytes }, l)].Model
}

// Time evaluates T(k, l, r) with the segment of l.
func (p *PiecewiseTrilinear) Time(k, l, r float64) float64 { return p.segmentFor(l).Time(k, l, r) }

// Predict gives the time of one k-k-access (params k, l, r).
func (p *PiecewiseTrilinear) Predict(in Instance) (float64, error) {
	l, err := in.Num("l")
	if err != nil && in.Pattern == "kkaccess" {
		return 0, err
	}
	if len(p.Segments) == 0 {
		return 0, fmt.Errorf("%w: trilinear-piecewise model without segments", ErrBadRecord)
	}
	t, err := p.segmentFor(l).Predict(in)
	if err != nil && in.Pattern != "kkaccess" {
		return 0, unsupported(p.Kind(), in.Pattern, trilinearPatterns)
	}
	return t, err
}

// trilinearSegmentPenalty multiplies the BIC penalty of a packet-size
// segmentation (chooseSegments). Plain BIC, not piecewise Hockney's doubled
// penalty: a regime can only start at one of the few measured l levels, so
// the search inflates the gain of a split far less than a breakpoint
// chosen among every message size does. Calibrated on the 9 l levels x 4 k
// x 4 r of the tests: noise-only sweeps split 0 times in 200 at 2, 5 and
// 10% noise; a weak switch (c0 +30%, c2 and c5 +20% from 1 KiB) is found in
// 100/100 sweeps at 5% noise and 49/100 at 10% (doubled penalty: 95 and 0).
const trilinearSegmentPenalty = 1

// FitPiecewiseTrilinear splits the packet sizes of "kkaccess" records into
// regimes of at least opt.MinSegmentPoints sizes each (at most
// opt.MaxSegments regimes) and fits the trilinear model in each. A split is
// kept only where it pays for its 8 coefficients and breakpoint under the
// criterion of chooseSegments (with trilinearSegmentPenalty); records without a protocol switch get one
// segment, the plain trilinear fit. The search compares untrimmed fits (so
// every candidate is scored on every cell, as the criterion counts them);
// the chosen regimes are then fitted with opt's outlier trimming. The
// weights are decided once for all cells: when CI weighting must fall back
// to relative weights for some cell, every regime uses relative weights.
func FitPiecewiseTrilinear(recs []results.Record, opt Options) (*PiecewiseTrilinear, error) {
	const kind = "trilinear-piecewise"
	pts, op, err := trilinearCells(recs, kind, opt)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].x[1] < pts[j].x[1] })
	ls := levels(pts, 1)
	if len(ls) < 2 {
		// Let the plain fit name the missing levels.
		_, err := fitTrilinearCells(pts, op, opt)
		return nil, err
	}
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.y
	}
	ws, note := weights(pts, ys, opt)
	if note != "" {
		opt.Weighting = WeightRelative
	}
	search := opt
	search.TrimSigma = -1
	// first[i] is the index in pts of the first cell of size ls[i].
	first := make([]int, len(ls)+1)
	for i, j := 0, 0; i < len(pts); i++ {
		for pts[i].x[1] != ls[j] {
			j++
			first[j] = i
		}
	}
	first[len(ls)] = len(pts)
	minLv := opt.minSegmentPoints()
	whole := func(i, j int) bool { return i == 0 && j == len(ls) }
	type fit struct {
		t   *Trilinear
		err error
	}
	fits := map[[2]int]fit{}
	cost := func(i, j int) float64 {
		if j-i < minLv && !whole(i, j) {
			return math.Inf(1)
		}
		f, ok := fits[[2]int{i, j}]
		if !ok {
			f.t, f.err = fitTrilinearCells(pts[first[i]:first[j]], op, search)
			fits[[2]int{i, j}] = f
		}
		if f.err != nil {
			return math.Inf(1)
		}
		return f.t.Fit.RSE * f.t.Fit.RSE * float64(f.t.Fit.DoF)
	}
	starts, cands := chooseSegments(len(ls), len(pts), 8, opt.maxSegments(), trilinearSegmentPenalty, medianWeighted(ws, ys), cost)
	if starts == nil {
		// Not even one segment fits: the whole range's error says why.
		if err := fits[[2]int{0, len(ls)}].err; err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: no segmentation of l = %s", ErrIllConditioned, kind, formatLevels(ls))
	}
	pt := &PiecewiseTrilinear{Op: op, Candidates: cands}
	var qs []Quality
	for s, i := range starts {
		j := len(ls)
		if s+1 < len(starts) {
			j = starts[s+1]
		}
		t, err := fitTrilinearCells(pts[first[i]:first[j]], op, opt)
		if err != nil {
			return nil, fmt.Errorf("%s segment %d (l = %g..%g): %w", kind, s+1, ls[i], ls[j-1], err)
		}
		pt.Segments = append(pt.Segments, TrilinearSegment{FromBytes: ls[i], ToBytes: ls[j-1], Model: t})
		if s > 0 {
			pt.Breakpoints = append(pt.Breakpoints, ls[i])
		}
		qs = append(qs, t.Fit)
	}
	pt.Fit = combineSegments(qs, ys, ws, 8, opt, note)
	return pt, nil
}
