package patterns

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// What a pattern's record holds beyond its summary, checked on every
// record written or read (checkRecord, registered for every bench of this
// package): the unit its bench writes, derived values and counters that
// are not negative (every one is a time, a rate, a ratio or a count of
// one pattern's run), a derived time ("..._s") that is 0 or at least
// results.MinRecordSeconds, and each derived value that its record's
// statistics and parameters determine equal to what the pattern computes
// from them (derivedChecks). report, compare and the CSV export show
// every derived value, so one the record contradicts is refused.

// derivedTol is the relative slack of a derived value recomputed from
// the record: the arithmetic that made it rounds, the check does not
// redo it in the same order.
const derivedTol = 1e-6

// recordUnits are the units of a bench's records: the bandwidth patterns
// write B/s, the one-sided bench s or B/s by its mode, the rest s.
func recordUnits(bench string) []string {
	switch bench {
	case BenchBandwidth, BenchBibw, BenchMultiBandwidth:
		return []string{results.UnitBytesPerSec}
	case BenchOneSided:
		return []string{results.UnitSeconds, results.UnitBytesPerSec}
	}
	return []string{results.UnitSeconds}
}

// checkValues refuses a record's unit, derived values and counters that
// no pattern writes (see above).
func checkValues(bench string, r *results.Record) error {
	if units := recordUnits(bench); !slices.Contains(units, r.Unit) {
		return fmt.Errorf("unit %q: %s records are in %s", r.Unit, bench, strings.Join(quoted(units), " or "))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Derived)) {
		v := r.Derived[k]
		if v < 0 {
			return fmt.Errorf("derived %s = %v is negative: a %s record's derived values are times, rates, ratios and counts", k, v, bench)
		}
		if strings.HasSuffix(k, "_s") && v > 0 && v < results.MinRecordSeconds {
			return fmt.Errorf("derived %s = %v s: a time is 0 or at least %g s", k, v, results.MinRecordSeconds)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Counters)) {
		if v := r.Counters[k]; v < 0 {
			return fmt.Errorf("counters %s = %v is negative: a %s record counts messages, bytes, ranks and repetitions", k, v, bench)
		}
	}
	if f := derivedChecks[bench]; f != nil {
		return f(r)
	}
	return nil
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// derivedChecks are, by bench, the checks of the derived values a record
// determines (each pattern's Record method computes them so).
var derivedChecks = map[string]func(*results.Record) error{
	// round_trip_s: two one-way latencies.
	BenchPingPong: func(r *results.Record) error {
		return sameAs(r, "round_trip_s", 2*r.Median, "2 x the median")
	},
	BenchBandwidth:      bandwidthDerived,
	BenchBibw:           bandwidthDerived,
	BenchMultiBandwidth: bandwidthDerived,
	BenchOneSided: func(r *results.Record) error {
		if r.Unit == results.UnitBytesPerSec {
			return bandwidthDerived(r)
		}
		// Latency: rep_time_s is the median per call times the calls
		// of a repetition, twice iters where both ranks call in turn.
		iters, ok := paramNumber(r, "iters")
		if !ok {
			return nil
		}
		per := iters
		if s, _ := r.Params["sync"].(string); s == mpi.SyncFence.String() || s == mpi.SyncPSCW.String() {
			per *= 2
		}
		return sameAs(r, "rep_time_s", r.Median*per, "the median x the calls per repetition")
	},
	// Paper 002's Table 1: the mean and the extremes over it.
	BenchPermutations: func(r *results.Record) error {
		if err := sameAs(r, "ave_s", r.Mean, "the mean"); err != nil {
			return err
		}
		hi, lo := 0.0, 0.0
		if r.Mean != 0 {
			hi, lo = r.Max/r.Mean, r.Min/r.Mean
		}
		if err := sameAs(r, "max_over_ave", hi, "max / mean"); err != nil {
			return err
		}
		return sameAs(r, "min_over_ave", lo, "min / mean")
	},
	// OSU's figure: the average over ranks between its extremes.
	BenchCollective: func(r *results.Record) error {
		return ordered(r, DerivedOSUMin, DerivedOSUAvg, DerivedOSUMax)
	},
	BenchNonBlocking: func(r *results.Record) error {
		if err := ordered(r, DerivedOSUCommMin, DerivedOSUComm, DerivedOSUCommMax); err != nil {
			return err
		}
		d := r.Derived
		overall, ok1 := d[DerivedOSUOverall]
		compute, ok2 := d[DerivedOSUCompute]
		comm, ok3 := d[DerivedOSUComm]
		if !(ok1 && ok2 && ok3) {
			return nil
		}
		return sameAs(r, DerivedOSUOverlap, OverlapPct(overall, compute, comm), "OSU's overlap of osu_overall_s, osu_compute_s and osu_comm_s")
	},
	// The emulated k-access's series: a k-accesses of the amortised time.
	BenchKAccess: func(r *results.Record) error {
		a, ok := paramNumber(r, "a")
		if !ok {
			return nil
		}
		return sameAs(r, "total_s", r.Median*a, "the median x a")
	},
}

// bandwidthDerived checks the derived values of a bandwidth record
// (bandwidthRecord): each repetition's bandwidth is the volume over its
// time and rep_time_s the median time, so the volume over rep_time_s lies
// between the smallest and the largest bandwidth (it is the median
// bandwidth for an odd count; for an even one the two middle times
// bracket it). The multi-pair test's message rates are its messages
// over the same times.
func bandwidthDerived(r *results.Record) error {
	bytes, msgs, ok := bandwidthVolume(r)
	if !ok {
		return nil
	}
	rep, has := r.Derived["rep_time_s"]
	if has && r.Invalid == 0 && bytes*msgs > 0 {
		if bw := bytes * msgs / rep; !(within(r.Min, bw) && within(bw, r.Max)) {
			return fmt.Errorf("derived rep_time_s = %v s disagrees with the bandwidths: %g bytes over it is %.6g B/s, outside [min %v, max %v]", rep, bytes*msgs, bw, r.Min, r.Max)
		}
	}
	if r.Bench != BenchMultiBandwidth {
		return nil
	}
	if has {
		if err := sameAs(r, DerivedRate, msgs/rep, "the messages over rep_time_s"); err != nil {
			return err
		}
	}
	if rate, ok := r.Derived[DerivedOSURate]; ok {
		return sameAs(r, DerivedOSUBw, rate*bytes, "osu_msg_rate x bytes")
	}
	return nil
}

// bandwidthVolume is a bandwidth record's message size and messages per
// repetition (both directions of a bidirectional test), from its
// parameters as the pattern's Volume computes them.
func bandwidthVolume(r *results.Record) (bytes, msgs float64, ok bool) {
	bytes, ok1 := paramNumber(r, "bytes")
	window, ok2 := paramNumber(r, "window")
	iters, ok3 := paramNumber(r, "iters")
	if !(ok1 && ok2 && ok3) {
		return 0, 0, false
	}
	msgs = window * iters
	switch r.Bench {
	case BenchBibw:
		msgs *= 2
	case BenchOneSided:
		if m, _ := r.Params["mode"].(string); m == mpi.RMABibw.String() {
			msgs *= 2
		}
	case BenchMultiBandwidth:
		pairs, ok := paramNumber(r, "pairs")
		if !ok {
			return 0, 0, false
		}
		msgs *= pairs
	}
	return bytes, msgs, true
}

// sameAs refuses derived key when present and not want (how: what it is).
func sameAs(r *results.Record, key string, want float64, how string) error {
	v, ok := r.Derived[key]
	if !ok || math.Abs(v-want) <= derivedTol*math.Max(math.Abs(want), math.Abs(v)) {
		return nil
	}
	return fmt.Errorf("derived %s = %v disagrees with %s, %.6g", key, v, how, want)
}

// ordered refuses derived lo <= mid <= hi out of order (a spread over
// ranks: minimum, average, maximum), among those present.
func ordered(r *results.Record, keys ...string) error {
	prev := ""
	for _, k := range keys {
		v, ok := r.Derived[k]
		if !ok {
			continue
		}
		if prev != "" && !within(r.Derived[prev], v) {
			return fmt.Errorf("derived %s = %v is above %s = %v: they are the minimum, average and maximum over ranks", prev, r.Derived[prev], k, v)
		}
		prev = k
	}
	return nil
}

// within reports a <= b up to derivedTol.
func within(a, b float64) bool {
	return a <= b || a-b <= derivedTol*math.Max(math.Abs(a), math.Abs(b))
}

// paramNumber is the record parameter key as a number.
func paramNumber(r *results.Record, key string) (float64, bool) {
	return Number(r.Params[key])
}
