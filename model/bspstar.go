package model

import (
	"fmt"
	"math"
	"strings"

	"github.com/commcost/commcost/results"
)

// BSPStar is the BSP* model of paper 003's survey (Grama, Kumar, Ranka,
// Singh, slides, "The BSP* Model"): "a communication step with a
// h-relation of size s is assigned a cost max{g x h x ceil(s/B), L}",
// where B is "the minimum message size for the message to be bandwidth
// bound": messages smaller than B cost as much as one of B. With the
// supersteps of an instance (Supersteps: h the most messages a processor
// sends or receives, s their size) the time is
//
//	T = sum over supersteps  max{ g h ceil(s/B), L }
//
// with g the time per B-byte packet and L the step's least cost
// (synchronisation, latency). g and L are fitted for each B of a grid
// (powers of two and the records' message sizes) and the B of the least
// residual is kept; B has no uncertainty (Fixed).
type BSPStar struct {
	Impl    string   `json:"impl,omitempty"`
	G       Param    `json:"g"`
	B       Param    `json:"B"`
	L       Param    `json:"L"`
	Benches []string `json:"benches"`
	Fit     Quality  `json:"quality"`
}

func init() {
	Register(Kind{
		Name:           "bspstar",
		Summary:        "BSP*: sum over supersteps of max{g h ceil(s/B), L} (paper 003, slide \"The BSP* Model\")",
		Benches:        superstepPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitBSPStar(r, o) },
		New:            func() Model { return &BSPStar{} },
		Size:           instanceSize,
		ProgramOptions: &Options{Impl: "textbook"},
		Check: func(m Model) error {
			if b := m.(*BSPStar).B.Value; !(b >= 1) {
				return fmt.Errorf("B = %v: want a packet size of at least 1 byte", b)
			}
			return nil
		},
	})
}

func (b *BSPStar) Kind() string       { return "bspstar" }
func (b *BSPStar) Params() []Param    { return []Param{b.G, b.B, b.L} }
func (b *BSPStar) Quality() Quality   { return b.Fit }
func (b *BSPStar) Patterns() []string { return superstepPatterns }

// FittedBenches lists the patterns the fit used (see FittedBencher).
func (b *BSPStar) FittedBenches() []string { return b.Benches }

// bspStarStep is max{g h ceil(s/B), L} as alternatives over (g, L).
func bspStarStep(s Superstep, B float64) maxStep {
	return maxStep{count: s.Count, alts: [][]float64{{s.h() * packets(s.Bytes, B), 0}, {0, 1}}}
}

// Predict sums max{g h ceil(s/B), L} over the instance's supersteps.
func (b *BSPStar) Predict(in Instance) (float64, error) {
	steps, err := Supersteps(in)
	if err != nil {
		return 0, err
	}
	var t float64
	for _, s := range steps {
		t += s.Count * math.Max(b.G.Value*s.h()*packets(s.Bytes, b.B.Value), b.L.Value)
	}
	return t, nil
}

// FitBSPStar fits g and L for every B of the grid and keeps the best.
func FitBSPStar(recs []results.Record, opt Options) (*BSPStar, error) {
	pts, benches, err := superstepPoints(recs, "bspstar", superstepPatterns, opt)
	if err != nil {
		return nil, err
	}
	var best *maxFit
	var bestB, bestObj float64
	var lastErr error
	for _, B := range gridCandidates(pts) {
		steps := make([][]maxStep, len(pts))
		for i, p := range pts {
			for _, s := range p.steps {
				steps[i] = append(steps[i], bspStarStep(s, B))
			}
		}
		f, err := fitMaxLinear(pts, steps, []string{"g", "L"}, nil, opt)
		if err != nil {
			lastErr = err
			continue
		}
		// Ties (every B up to the smallest message fits alike when all
		// steps are bandwidth-bound) go to the larger B.
		if obj := f.fit.rse; best == nil || obj <= bestObj*(1+1e-9)+1e-12 {
			best, bestB, bestObj = f, B, obj
		}
	}
	if best == nil {
		return nil, fmt.Errorf("bspstar: %w", lastErr)
	}
	m := &BSPStar{G: best.param(0, "g", "s"), B: fixedParam("B", "B", bestB), L: best.param(1, "L", "s"), Benches: benches}
	m.Impl = implOf(pts)
	m.Fit = best.quality(opt, []string{"g", "L"})
	if len(benches) > 1 {
		m.Fit.Notes = append(m.Fit.Notes, "one (g, B, L) for "+strings.Join(benches, ", "))
	}
	return m, nil
}
