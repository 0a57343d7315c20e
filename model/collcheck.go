package model

import (
	"math"
	"sort"

	"github.com/commcost/commcost/results"
)

// Checking the closed forms against the algorithms the MPI library was
// forced to run (Open MPI: --mca coll_tuned_use_dynamic_rules 1 --mca
// coll_tuned_<op>_algorithm N; the collective records carry the name as
// param "alg"), and telling which algorithm the library's default picked.

// AlgCheck is one collective point measured under one algorithm and priced
// by that algorithm's closed form.
type AlgCheck struct {
	Op, Alg   string
	Ranks     int
	Bytes     float64
	Measured  float64 // median of the point's records' medians, s
	Predicted float64 // the closed form, s
	RelErr    float64 // (Predicted - Measured) / Measured
}

// collPoint is the median time of every (op, alg, ranks, bytes).
type collPoint struct {
	op, alg string
	ranks   int
	bytes   float64
}

func collPoints(recs []results.Record) (map[collPoint]float64, []collPoint) {
	ys := map[collPoint][]float64{}
	var order []collPoint
	for _, r := range recs {
		if r.Bench != "collective" {
			continue
		}
		b, err := numParam(r.Params, "bytes", r.Bench)
		if err != nil {
			continue
		}
		op, _ := r.Params["op"].(string)
		alg, _ := r.Params["alg"].(string)
		if alg == "" {
			alg = "default"
		}
		k := collPoint{op, alg, r.Ranks, b}
		if _, ok := ys[k]; !ok {
			order = append(order, k)
		}
		ys[k] = append(ys[k], r.Median)
	}
	med := map[collPoint]float64{}
	for k, v := range ys {
		med[k] = median(v)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		switch {
		case a.op != b.op:
			return a.op < b.op
		case a.alg != b.alg:
			return a.alg < b.alg
		case a.ranks != b.ranks:
			return a.ranks < b.ranks
		}
		return a.bytes < b.bytes
	})
	return med, order
}

// CheckCollAlg prices every forced-algorithm collective point of recs (alg
// other than "default") with m's closed form of that algorithm, skipping
// the algorithms without one.
func CheckCollAlg(m *CollAlg, recs []results.Record) []AlgCheck {
	med, order := collPoints(recs)
	var out []AlgCheck
	for _, k := range order {
		if k.alg == "default" {
			continue
		}
		rs, err := CollRounds(k.op, k.alg, k.bytes, k.ranks)
		if err != nil {
			continue
		}
		pred := m.Cost(rs)
		y := med[k]
		out = append(out, AlgCheck{Op: k.op, Alg: k.alg, Ranks: k.ranks, Bytes: k.bytes, Measured: y, Predicted: pred, RelErr: (pred - y) / y})
	}
	return out
}

// DefaultPick says which algorithm the library's default ran at one point:
// the forced algorithm whose measured time is nearest the default's, and
// the algorithm whose closed form is.
type DefaultPick struct {
	Op    string
	Ranks int
	Bytes float64
	// Default is the default's measured time; Nearest and NearestTime the
	// forced algorithm measured closest to it (by |log ratio|).
	Default     float64
	Nearest     string
	NearestTime float64
	// Modelled is the algorithm with a closed form whose prediction is
	// closest, and ModelledTime that prediction.
	Modelled     string
	ModelledTime float64
}

// DefaultPicks compares every "default" collective point of recs with the
// forced algorithms measured at the same point and with m's closed forms.
func DefaultPicks(m *CollAlg, recs []results.Record) []DefaultPick {
	med, order := collPoints(recs)
	var out []DefaultPick
	for _, k := range order {
		if k.alg != "default" {
			continue
		}
		y := med[k]
		d := DefaultPick{Op: k.op, Ranks: k.ranks, Bytes: k.bytes, Default: y, NearestTime: math.NaN(), ModelledTime: math.NaN()}
		best := math.Inf(1)
		for _, f := range order {
			if f.alg == "default" || f.op != k.op || f.ranks != k.ranks || f.bytes != k.bytes {
				continue
			}
			if e := math.Abs(math.Log(med[f] / y)); e < best {
				best, d.Nearest, d.NearestTime = e, f.alg, med[f]
			}
		}
		best = math.Inf(1)
		for _, alg := range CollAlgorithms(k.op) {
			rs, err := CollRounds(k.op, alg, k.bytes, k.ranks)
			if err != nil {
				continue
			}
			p := m.Cost(rs)
			if e := math.Abs(math.Log(p / y)); e < best {
				best, d.Modelled, d.ModelledTime = e, alg, p
			}
		}
		out = append(out, d)
	}
	return out
}
