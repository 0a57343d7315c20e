package optsplit

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// What an "optimize" record holds, checked on every record written or read
// (results.RegisterParamCheck and RegisterRecordCheck), so that compare,
// report and the figure refuse a record Optimize could not have written:
//
//   - params d_bytes (D >= 1), k (1..MaxPackets), l (1..mpi.MaxCount
//     bytes), r in (0, 1], op (read or write) and, optional, distinct;
//   - unit s and a positive median (an access takes time);
//   - k <= D (the sweep clips k to [1, D]), l = PacketBytes(D, k) =
//     max(1, round(D/k)), r = 1 (every rank accesses), and with distinct
//     k <= ranks-1;
//   - derived predicted_s = T(k, l, 1) of the model, positive (Optimize
//     plans from no model that predicts otherwise), and pred_error =
//     predicted_s/median - 1;
//   - counters as the k-k-access at r = 1 counts them: volume_bytes = k l,
//     accessing_ranks = ranks, r_realised = 1, and every rank sends and
//     receives k requests and k answers, 2k messages of k (req + answer)
//     bytes per repetition (req, answer = 16, l for a read; 16 + l, 16
//     for a write), msgs_total and bytes_total ranks times that.
var optimizeSpecs = []patterns.ParamSpec{
	{Key: "d_bytes", Kind: patterns.ParamInt, Min: 1, NoMax: true, Unit: "bytes"},
	{Key: "k", Kind: patterns.ParamInt, Min: 1, Max: MaxPackets},
	{Key: "l", Kind: patterns.ParamInt, Min: 1, Max: mpi.MaxCount, Unit: "bytes"},
	{Key: "r", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: 1},
	patterns.SpecOp,
	{Key: "distinct", Kind: patterns.ParamBool, Optional: true},
}

func init() {
	results.RegisterParamCheck(BenchOptimize, func(p results.Params) error {
		if err := patterns.CheckSpecs(optimizeSpecs, p); err != nil {
			return err
		}
		return patterns.UnknownParams(BenchOptimize, p, optimizeSpecs)
	})
	results.RegisterRecordCheck(BenchOptimize, checkOptimizeRecord)
}

// recordTol is the relative slack of a value recomputed from the record:
// the counters are sums of per-repetition averages, which round.
const recordTol = 1e-9

// checkOptimizeRecord is the record check of an "optimize" record (see
// optimizeSpecs); the parameters are in range by the time it runs.
func checkOptimizeRecord(r *results.Record) error {
	if r.Unit != results.UnitSeconds {
		return fmt.Errorf("unit %q: %s records are times in %q", r.Unit, BenchOptimize, results.UnitSeconds)
	}
	if !(r.Median > 0) {
		return fmt.Errorf("median %v s is not positive: a k-k-access takes time", r.Median)
	}
	d, ok1 := patterns.Number(r.Params["d_bytes"])
	k, ok2 := patterns.Number(r.Params["k"])
	l, ok3 := patterns.Number(r.Params["l"])
	rr, ok4 := patterns.Number(r.Params["r"])
	op, _ := r.Params["op"].(string)
	if !(ok1 && ok2 && ok3 && ok4) {
		return nil
	}
	switch want := float64(PacketBytes(int(d), int(k))); {
	case k > d:
		return fmt.Errorf("k = %s above d_bytes = %s: the sweep's k is at most D, a packet per byte", count(k), count(d))
	case l != want:
		return fmt.Errorf("l = %s with k = %s and d_bytes = %s: the packets of D bytes are l = max(1, round(D/k)) = %s bytes", count(l), count(k), count(d), count(want))
	case rr != 1:
		return fmt.Errorf("r = %v: an %s record's accesses are by every rank, r = 1", rr, BenchOptimize)
	}
	if distinct, _ := r.Params["distinct"].(bool); distinct && k > float64(r.Ranks-1) {
		return fmt.Errorf("k = %s distinct targets on ranks = %d: at most %d other ranks to target", count(k), r.Ranks, r.Ranks-1)
	}
	if err := checkOptimizeDerived(r); err != nil {
		return err
	}
	return checkOptimizeCounters(r, k, l, op)
}

// checkOptimizeDerived: predicted_s is the model's positive prediction and
// pred_error its relative error against the median, as Run stores them.
func checkOptimizeDerived(r *results.Record) error {
	pred, hasPred := r.Derived[DerivedPredicted]
	if hasPred && !(pred > 0) {
		return fmt.Errorf("derived %s = %v is not positive: the model's prediction T(k, l, 1) is a time", DerivedPredicted, pred)
	}
	e, ok := r.Derived[DerivedPredErr]
	if !ok {
		return nil
	}
	if !hasPred {
		return fmt.Errorf("derived %s = %v without a %s to be the error of", DerivedPredErr, e, DerivedPredicted)
	}
	if want := pred/r.Median - 1; math.Abs(e-want) > recordTol*math.Max(1, math.Abs(want)) {
		return fmt.Errorf("derived %s = %v disagrees with %s / median - 1 = %v / %v - 1 = %.6g", DerivedPredErr, e, DerivedPredicted, pred, r.Median, want)
	}
	return nil
}

// checkOptimizeCounters compares the counters with what k packets of l
// bytes by every one of the ranks count (see optimizeSpecs).
func checkOptimizeCounters(r *results.Record, k, l float64, op string) error {
	req, answer := float64(mpi.AccessHeaderBytes), l
	if op == patterns.AccessWrite.String() {
		req, answer = mpi.AccessHeaderBytes+l, mpi.AccessHeaderBytes
	}
	p := float64(r.Ranks)
	want := []struct {
		key string
		v   float64
		how string
	}{
		{CounterVolume, k * l, "k x l"},
		{patterns.CounterAccessingRanks, p, "ranks (r = 1)"},
		{patterns.CounterRRealised, 1, "r = 1"},
		{patterns.CounterMsgsSentMax, 2 * k, "2k (k requests and k answers a rank)"},
		{patterns.CounterMsgsRecvMax, 2 * k, "2k (k requests and k answers a rank)"},
		{patterns.CounterMsgsTotal, 2 * k * p, "2k x ranks"},
		{patterns.CounterBytesSentMax, k * (req + answer), fmt.Sprintf("k x (%s + %s), a rank's %s requests and answers", count(req), count(answer), op)},
		{patterns.CounterBytesRecvMax, k * (req + answer), fmt.Sprintf("k x (%s + %s), a rank's %s requests and answers", count(req), count(answer), op)},
		{patterns.CounterBytesTotal, k * (req + answer) * p, fmt.Sprintf("k x (%s + %s) x ranks", count(req), count(answer))},
	}
	for _, w := range want {
		v, ok := r.Counters[w.key]
		if ok && math.Abs(v-w.v) > recordTol*math.Max(math.Abs(v), math.Abs(w.v)) {
			return fmt.Errorf("counters %s = %v disagrees with %s = %s", w.key, v, w.how, count(w.v))
		}
	}
	return nil
}

// count prints a whole number without an exponent.
func count(v float64) string { return results.FormatCount(v) }
