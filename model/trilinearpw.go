package model

import (
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
// are split into contiguous regimes, chosen by the same penalised criterion
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

// segmentFor is the segment of packet size l; a size between two segments'
// measured sizes belongs to the lower one, as in Piecewise.
func (p *PiecewiseTrilinear) segmentFor(l float64) *Trilinear {
	for i := len(p.Segments) - 1; i > 0; i-- {
		if l >= p.Segments[i].FromBytes {
			return p.Segments[i].Model
		}
	}
	return p.Segments[0].Model
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

// FitPiecewiseTrilinear splits the packet sizes of "kkaccess" records into
// regimes of at least opt.MinSegmentPoints sizes each (at most
// opt.MaxSegments regimes) and fits the trilinear model in each. A split is
// kept only where it pays for its 8 coefficients and breakpoint under the
// criterion of chooseSegments; records without a protocol switch get one
// segment, the plain trilinear fit.
func FitPiecewiseTrilinear(recs []results.Record, opt Options) (*PiecewiseTrilinear, error) {
	const kind = "trilinear-piecewise"
	pts, op, err := trilinearCells(recs, kind, opt)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].x[1] < pts[j].x[1] })
	ls := levels(pts, 1)
	minLv := opt.minSegmentPoints()
	if len(ls) < 2 {
		// Let the plain fit name the missing levels.
		_, err := fitTrilinearCells(pts, op, opt)
		return nil, err
	}
	// first[i] is the index in pts of the first cell of size ls[i].
	first := make([]int, len(ls)+1)
	for i, j := 0, 0; i < len(pts); i++ {
		for pts[i].x[1] != ls[j] {
			j++
			first[j] = i
		}
	}
	first[len(ls)] = len(pts)
	inf := math.Inf(1)
	fits := map[[2]int]*Trilinear{}
	cost := func(i, j int) float64 {
		if j-i < minLv && !(i == 0 && j == len(ls)) {
			return inf
		}
		t, ok := fits[[2]int{i, j}]
		if !ok {
			t, _ = fitTrilinearCells(pts[first[i]:first[j]], op, opt)
			fits[[2]int{i, j}] = t
		}
		if t == nil {
			return inf
		}
		return t.Fit.RSE * t.Fit.RSE * float64(t.Fit.DoF)
	}
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.y
	}
	ws, _ := weights(pts, ys, opt)
	var wy []float64
	for i := range ys {
		wy = append(wy, math.Abs(ws[i]*ys[i]))
	}
	starts, cands := chooseSegments(len(ls), len(pts), 8, opt.maxSegments(), median(wy), cost)
	if starts == nil {
		// No split fits, not even one segment: the plain fit says why.
		_, err := fitTrilinearCells(pts, op, opt)
		if err == nil {
			err = fmt.Errorf("%w: %s: no segmentation of l = %s with at least %d sizes per segment", ErrIllConditioned, kind, formatLevels(ls), minLv)
		}
		return nil, err
	}
	pt := &PiecewiseTrilinear{Op: op, Candidates: cands}
	var qs []Quality
	for s, i := range starts {
		j := len(ls)
		if s+1 < len(starts) {
			j = starts[s+1]
		}
		t := fits[[2]int{i, j}]
		pt.Segments = append(pt.Segments, TrilinearSegment{FromBytes: ls[i], ToBytes: ls[j-1], Model: t})
		if s > 0 {
			pt.Breakpoints = append(pt.Breakpoints, ls[i])
		}
		qs = append(qs, t.Fit)
	}
	pt.Fit = combineSegments(qs, ys, ws, 8, opt, "")
	return pt, nil
}
