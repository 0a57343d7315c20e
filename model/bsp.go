package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/commcost/commcost/results"
)

// BSP is Valiant's bulk-synchronous model as paper 000 (section 2.2) states
// it: the router delivers any h-relation in g h + L, where h is the largest
// amount of data (here in bytes) any processor sends or receives, g the gap
// per byte and L the startup/synchronisation cost. It is a baseline: it
// ignores contention, the number of communicating processors and message
// counts, which is what the trilinear and hyperbolic models add.
type BSP struct {
	G Param `json:"g"`
	L Param `json:"L"`
	// Benches lists the patterns the fit used.
	Benches []string `json:"benches"`
	// Impl is the implementation of the aggregate records the fit read
	// ("" without any): one per fit, as for the superstep models.
	Impl string  `json:"impl,omitempty"`
	Fit  Quality `json:"quality"`
}

var bspPatterns = []string{"alltoall", "pairwise", "rowcontention", "kkaccess", "aggregate", "pingpong"}

func init() {
	Register(Kind{
		Name:           "bsp",
		Summary:        "BSP g h + L on h-relations (paper 000, section 2.2)",
		Benches:        bspPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitBSP(r, o) },
		New:            func() Model { return &BSP{} },
		ProgramOptions: &Options{Impl: "textbook"},
		Size: func(r results.Record) (float64, bool) {
			h, err := HRelationBytes(InstanceOf(r))
			return h, err == nil
		},
	})
}

func (b *BSP) Kind() string       { return "bsp" }
func (b *BSP) Params() []Param    { return []Param{b.G, b.L} }
func (b *BSP) Quality() Quality   { return b.Fit }
func (b *BSP) Patterns() []string { return bspPatterns }

// FittedBenches lists the patterns the fit used (see FittedBencher).
func (b *BSP) FittedBenches() []string { return b.Benches }

// HRelationBytes is the h of a pattern instance: alltoall (p-1) x (every
// rank sends p-1 messages of x bytes), pairwise, rowcontention and pingpong
// x, kkaccess k l (k packets of l bytes per accessing rank), aggregate the
// two-level volume MaxVolumeBytes.
func HRelationBytes(in Instance) (float64, error) {
	switch in.Pattern {
	case "alltoall":
		x, err := in.Num("bytes")
		if err != nil {
			return 0, err
		}
		if in.Ranks < 2 {
			return 0, fmt.Errorf("%w: alltoall with ranks = %d", ErrBadRecord, in.Ranks)
		}
		return float64(in.Ranks-1) * x, nil
	case "pairwise", "rowcontention", "pingpong":
		return in.Num("bytes")
	case "kkaccess":
		k, err := in.Num("k")
		if err != nil {
			return 0, err
		}
		l, err := in.Num("l")
		if err != nil {
			return 0, err
		}
		return k * l, nil
	case "aggregate":
		m, err := in.Num("bytes")
		if err != nil {
			return 0, err
		}
		nb, _ := in.Num("neighbors")
		return MaxVolumeBytes(in.Str("op"), m, in.Ranks, nb)
	}
	return 0, unsupported("bsp", in.Pattern, bspPatterns)
}

// Predict is g h + L.
func (b *BSP) Predict(in Instance) (float64, error) {
	h, err := HRelationBytes(in)
	if err != nil {
		return 0, err
	}
	return b.G.Value*h + b.L.Value, nil
}

// FitBSP fits g and L to the h-relation patterns among recs (alltoall,
// pairwise, rowcontention, kkaccess, aggregate; ping-pong only when no
// multi-rank pattern is present).
func FitBSP(recs []results.Record, opt Options) (*BSP, error) {
	sel, err := selectRecords(recs, "bsp", "alltoall", "pairwise", "rowcontention", "kkaccess", "aggregate")
	if err != nil {
		sel, err = selectRecords(recs, "bsp", "alltoall", "pairwise", "rowcontention", "kkaccess", "aggregate", "pingpong")
		if err != nil {
			return nil, err
		}
	}
	// The aggregate records of one implementation (--impl, or the only
	// one present), as every superstep model reads them: textbook and
	// mesh rounds of one op are different h-relations' costs, and a fit
	// of both is of neither.
	sel, impl, err := selectAggregateImpl(sel, opt)
	if err != nil {
		return nil, err
	}
	// One point per distinct instance: group by bench and all parameters.
	groups := map[string][]results.Record{}
	var keys []string
	for _, r := range sel {
		k := fmt.Sprintf("%s %s ranks=%d", r.Bench, paramString(r.Params), r.Ranks)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Strings(keys)
	var rows [][]float64
	var ys []float64
	var labels []string
	var pts []point
	hs := map[float64]bool{}
	benches := map[string]bool{}
	for _, k := range keys {
		g := groups[k]
		in := InstanceOf(g[0])
		h, err := HRelationBytes(in)
		if err != nil {
			return nil, err
		}
		if !opt.inRange(h) {
			continue
		}
		// The point's value and, for WeightCI, its standard error: the
		// medians of the records' medians and CI-implied errors, as
		// records are merged into points everywhere in this package.
		var ms, ss []float64
		for _, r := range g {
			ms = append(ms, r.Median)
			if w := r.CI95[1] - r.CI95[0]; w > 0 {
				ss = append(ss, w/(2*1.96))
			}
		}
		y := median(ms)
		var sigma float64
		if len(ss) == len(ms) {
			sigma = median(ss)
		}
		rows = append(rows, []float64{h, 1})
		ys = append(ys, y)
		labels = append(labels, k)
		pts = append(pts, point{key: k, inst: in, x: []float64{h}, y: y, sigma: sigma})
		hs[h] = true
		benches[in.Pattern] = true
	}
	if len(hs) < 3 {
		return nil, fmt.Errorf("%w: bsp needs h-relations of at least 3 different sizes h; have %d", ErrIllConditioned, len(hs))
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, []string{"g", "L"}, labels, opt)
	if err != nil {
		return nil, fmt.Errorf("bsp: %w", err)
	}
	b := &BSP{G: tr.fit.param(0, "s/B"), L: tr.fit.param(1, "s"), Impl: impl, Fit: tr.fit.quality(effectiveWeighting(opt, note), tr.trimmed)}
	for k := range benches {
		b.Benches = append(b.Benches, k)
	}
	sort.Strings(b.Benches)
	if note != "" {
		b.Fit.Notes = append(b.Fit.Notes, note)
	}
	if len(b.Benches) > 1 {
		b.Fit.Notes = append(b.Fit.Notes, "one (g, L) for "+strings.Join(b.Benches, ", ")+": BSP charges every h-relation alike")
	}
	return b, nil
}
