package optsplit

import (
	"fmt"
	"math"
	"slices"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Bench and counter of the records Optimize writes next to the calibration
// cells (patterns.KKAccess.Record's "kkaccess" records, as 'commcost
// kkaccess' writes them).
const (
	BenchOptimize = "optimize"     // one per measured k: patterns.KKAccess.Params and d_bytes
	CounterVolume = "volume_bytes" // k l: the bytes actually accessed
)

// MaxPackets is the largest send hot spot patterns.KKAccess accepts.
const MaxPackets = patterns.MaxPackets

// Span is how far the default sweep reaches either side of the optimum:
// round(max(k0, 1) * 2^i) for i = -Span..Span, a factor of 8, where
// Figure 13's curve has clearly risen on both sides.
const Span = 3

// OptimizeConfig configures the Figure 13 experiment on plain MPI ranks.
type OptimizeConfig struct {
	DataBytes int   // D, bytes every rank accesses (>= 1)
	Ks        []int // send hot spots to measure; nil: Around the optimum
	// Distinct sends the measured accesses to k distinct ranks (paper 000,
	// section 7: "from distinct shared memory modules"); k above p-1 is
	// dropped. The calibration uses random permutations either way.
	Distinct bool
	Op       patterns.AccessOp
	Seed     int64
	Validate bool
	Reps     patterns.Reps
	// Grid is the calibration sweep; with no cells, rank 0's Model is
	// used (fitted beforehand, e.g. from records of 'commcost kkaccess').
	Grid  patterns.KKGrid
	Model *model.Trilinear
	Meta  results.Meta
}

// OptimizeResult is the Figure 13 experiment's outcome.
type OptimizeResult struct {
	Result
	// Split is the model's best split of D (model.BestSplit): k0, l0, the
	// whole-packet optimum, or the better end of the k range without an
	// interior optimum. Its standard errors are set on rank 0 only.
	Split *model.Split
	// Dropped are the k above p-1 that Distinct left out.
	Dropped []int
	Op      patterns.AccessOp
	Ranks   int // of the communicator
}

// PlanSplit is the model's optimal split of dataBytes and the points
// measured around it (Around ks, Distinct on ranks ranks when distinct),
// with the k Distinct dropped. A model that predicts no positive time at a
// planned point describes no access there, and is refused.
func PlanSplit(m *model.Trilinear, dataBytes int, ks []int, distinct bool, ranks int) (*model.Split, []Point, []int, error) {
	if m == nil {
		return nil, nil, nil, fmt.Errorf("optimize: no model (give a calibration grid or a fitted model)")
	}
	s, err := model.BestSplit(m, float64(dataBytes), MaxPackets)
	if err != nil {
		return nil, nil, nil, err
	}
	around := Around(ks, s.K0, s.KInt, dataBytes)
	var dropped []int
	if distinct {
		around, dropped = Distinct(around, ranks)
	}
	points := make([]Point, len(around))
	for i, k := range around {
		points[i] = Point{DataBytes: dataBytes, K: k, L: PacketBytes(dataBytes, k)}
		if t := m.Time(float64(k), float64(points[i].L), 1); !(t > 0) {
			return s, nil, dropped, fmt.Errorf("optimize: the trilinear model predicts T(k=%d, l=%d, 1) = %.3g s, not a time: it does not describe these accesses (calibrate over k and l around D = %d bytes)", k, points[i].L, t, dataBytes)
		}
	}
	return s, points, dropped, nil
}

// Optimize runs the recipe on the ranks of c with the plain k-k-access
// (patterns.KKAccess): the calibration cells become "kkaccess" records,
// then k packets of round(D/k) bytes are accessed at r = 1 for every k of
// cfg.Ks, or Around the model's optimum, one "optimize" record each. A
// model that predicts no positive time at a planned split is refused
// before any is measured (a ModelError on every rank).
// Collective over c, which needs at least 2 ranks.
func Optimize(c mpi.Comm, cfg OptimizeConfig, emit func(results.Record) error) (*OptimizeResult, error) {
	out := &OptimizeResult{Op: cfg.Op, Ranks: c.Size()}
	access := func(k, l int, r float64, distinct bool) patterns.KKAccess {
		return patterns.KKAccess{K: k, L: l, R: r, Op: cfg.Op, Distinct: distinct,
			Seed: cfg.Seed, Validate: cfg.Validate, Reps: cfg.Reps}
	}
	res, err := Run(c, Config{
		Grid:  cfg.Grid,
		Op:    cfg.Op.String(),
		Model: cfg.Model,
		Calibrate: func(k, l int, r float64) (results.Record, error) {
			kk := access(k, l, r, false)
			m, err := kk.Run(c)
			if err != nil {
				return results.Record{}, err
			}
			return kk.Record(m, cfg.Meta), nil
		},
		Plan: func(m *model.Trilinear) ([]Point, error) {
			s, points, dropped, err := PlanSplit(m, cfg.DataBytes, cfg.Ks, cfg.Distinct, c.Size())
			out.Split, out.Dropped = s, dropped
			return points, err
		},
		Measure: func(p Point) (results.Record, error) {
			kk := access(p.K, p.L, 1, cfg.Distinct)
			m, err := kk.Run(c)
			if err != nil {
				return results.Record{}, err
			}
			params := kk.Params(c.Size())
			params["d_bytes"] = p.DataBytes
			rec := m.Record(BenchOptimize, params, c.Size(), cfg.Meta)
			if rec.Counters == nil {
				rec.Counters = map[string]float64{}
			}
			rec.Counters[CounterVolume] = float64(p.K * p.L)
			return rec, nil
		},
	}, emit)
	if res != nil {
		out.Result = *res
	}
	return out, err
}

// Around is the set of send hot spots the sweep measures: asked when given,
// else 1, kInt and round(max(k0, 1) * 2^i) for i = -Span..Span; clipped to
// [1, min(D, MaxPackets)], without repeats, increasing.
func Around(asked []int, k0 float64, kInt, dataBytes int) []int {
	ks := slices.Clone(asked)
	if len(ks) == 0 {
		ks = append(ks, 1, kInt)
		// Centred on k0, but at least on 1: with k0 below one packet the
		// curve still shows how more packets cost.
		for i := -Span; i <= Span; i++ {
			ks = append(ks, int(math.Round(math.Ldexp(max(k0, 1), i))))
		}
	}
	hi := min(dataBytes, MaxPackets)
	for i, k := range ks {
		ks[i] = min(max(k, 1), hi)
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// Distinct keeps the k a rank can send to k distinct other ranks of p
// (k <= p-1) and returns the others separately.
func Distinct(ks []int, p int) (kept, dropped []int) {
	for _, k := range ks {
		if k <= p-1 {
			kept = append(kept, k)
		} else {
			dropped = append(dropped, k)
		}
	}
	return kept, dropped
}

// PacketBytes is l = round(D/k), at least 1 byte.
func PacketBytes(dataBytes, k int) int {
	return max(1, int(math.Round(float64(dataBytes)/float64(k))))
}

// BestPoint is the index of the least measured median (the first of
// equals), or -1 without points.
func BestPoint(points []Measured) int {
	best := -1
	for i, p := range points {
		if best < 0 || p.Summary.Median < points[best].Summary.Median {
			best = i
		}
	}
	return best
}

// Verdict compares the measured time at the predicted whole-packet optimum
// kInt with the best measured split, saying whether their 95% CIs overlap
// (then the difference is within the measurement's resolution).
func Verdict(points []Measured, kInt int) string {
	b := BestPoint(points)
	if b < 0 {
		return "no split measured"
	}
	best := points[b]
	at := slices.IndexFunc(points, func(p Measured) bool { return p.K == kInt })
	if at < 0 {
		return fmt.Sprintf("predicted optimum k=%d was not measured; the best measured split is k=%d (l=%d bytes)", kInt, best.K, best.L)
	}
	if at == b {
		return fmt.Sprintf("predicted optimum k=%d (l=%d bytes) is the measured best", kInt, points[at].L)
	}
	p := points[at]
	above := 100 * (p.Summary.Median/best.Summary.Median - 1)
	overlap := "do not overlap"
	if p.Summary.CI95[0] <= best.Summary.CI95[1] && best.Summary.CI95[0] <= p.Summary.CI95[1] {
		overlap = "overlap"
	}
	return fmt.Sprintf("predicted optimum k=%d (l=%d bytes) measures %.1f%% above the best measured split k=%d (l=%d bytes); their 95%% CIs %s",
		kInt, p.L, above, best.K, best.L, overlap)
}
