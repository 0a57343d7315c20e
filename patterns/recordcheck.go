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
// from them, and each counter its parameters determine equal to that
// (derivedChecks). report, compare and the CSV export show every derived
// value and counter, so one the record contradicts is refused.

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

// signedDerived are, by bench, the derived values that may be negative:
// packetsplit's prediction by the fitted trilinear model (optsplit), which
// a model fitted away from a size may put below 0, and its relative error.
var signedDerived = map[string]map[string]bool{"packetsplit": {"pred_error": true, "predicted_s": true}}

// checkValues refuses a record's unit, derived values and counters that
// no pattern writes (see above).
func checkValues(bench string, r *results.Record) error {
	if units := recordUnits(bench); !slices.Contains(units, r.Unit) {
		return fmt.Errorf("unit %q: %s records are in %s", r.Unit, bench, strings.Join(quoted(units), " or "))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Derived)) {
		v := r.Derived[k]
		if v < 0 && !signedDerived[bench][k] {
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
		if err := f(r); err != nil {
			return err
		}
	}
	return busiestRank(r)
}

// busiestRank ties the traffic counters of CountersOf to each other: the
// busiest rank's messages and bytes a repetition (_max, sent or received;
// every message sent is received in the pattern) are at least the mean
// over the record's ranks of the total and at most the total.
func busiestRank(r *results.Record) error {
	for _, c := range []struct{ max, total string }{
		{CounterMsgsSentMax, CounterMsgsTotal}, {CounterMsgsRecvMax, CounterMsgsTotal},
		{CounterBytesSentMax, CounterBytesTotal}, {CounterBytesRecvMax, CounterBytesTotal},
	} {
		most, ok1 := r.Counters[c.max]
		total, ok2 := r.Counters[c.total]
		if !ok1 || !ok2 || r.Ranks < 1 {
			continue
		}
		if mean := total / float64(r.Ranks); most < mean*(1-derivedTol) || most > total*(1+derivedTol) {
			return fmt.Errorf("counters %s = %v with %s = %v on ranks = %d: the busiest rank's share is between the mean over ranks, %v, and the total", c.max, most, c.total, total, r.Ranks, mean)
		}
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

// derivedChecks are, by bench, the checks of the derived values and
// counters a record determines (each pattern's Record and Run compute
// them so): a counter that is a function of the parameters and the ranks
// equals it, up to derivedTol.
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
	// Paper 002's Table 1: the mean and the extremes over it; the traffic
	// of a permutation.
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
		if err := sameAs(r, "min_over_ave", lo, "min / mean"); err != nil {
			return err
		}
		// Each rank sends one message of bytes to its image and receives
		// one in every permutation (a derangement: none to itself), iters
		// permutations a repetition; iters is no parameter, so
		// msgs_sent_max says it.
		return countedTraffic(r, CounterMsgsSentMax, "its permutations per repetition, one message each,", "permutations a repetition")
	},
	// OSU's figure: the average over ranks between its extremes.
	BenchCollective: func(r *results.Record) error {
		if err := allRanksMax(r); err != nil {
			return err
		}
		if err := ordered(r, DerivedOSUMin, DerivedOSUAvg, DerivedOSUMax); err != nil {
			return err
		}
		return belowSlowest(r, "a rank's mean time per call is at most the slowest repetition's, the maximum over ranks", DerivedOSUMin, DerivedOSUAvg, DerivedOSUMax)
	},
	BenchNonBlocking: func(r *results.Record) error {
		if err := allRanksMax(r); err != nil {
			return err
		}
		if err := ordered(r, DerivedOSUCommMin, DerivedOSUComm, DerivedOSUCommMax); err != nil {
			return err
		}
		if err := nonBlockingBounds(r); err != nil {
			return err
		}
		d := r.Derived
		for _, k := range []string{DerivedOSUOverlap, DerivedOverlap} {
			if v, ok := d[k]; ok && v > 100 {
				return fmt.Errorf("derived %s = %v: an overlap is a percentage of the communication, 0 to 100", k, v)
			}
		}
		overall, ok1 := d[DerivedOSUOverall]
		compute, ok2 := d[DerivedOSUCompute]
		comm, ok3 := d[DerivedOSUComm]
		if !(ok1 && ok2 && ok3) {
			return nil
		}
		return sameAs(r, DerivedOSUOverlap, OverlapPct(overall, compute, comm), "OSU's overlap of osu_overall_s, osu_compute_s and osu_comm_s")
	},
	// The emulated k-access's series: a k-accesses of the amortised time;
	// the realised hot spot's counters (KAccess.Run) are those of h.
	BenchKAccess: func(r *results.Record) error {
		if err := hotSpotCounters(r); err != nil {
			return err
		}
		a, ok := paramNumber(r, "a")
		if !ok {
			return nil
		}
		if err := accessTraffic(r, a, float64(r.Ranks), "ranks"); err != nil {
			return err
		}
		return sameAs(r, "total_s", r.Median*a, "the median x a")
	},
	BenchKKAccess: func(r *results.Record) error {
		rr, ok1 := paramNumber(r, "r")
		asked, ok2 := r.Counters[CounterRAsked]
		if ok2 && !(asked > 0 && asked <= 1) {
			return fmt.Errorf("counters %s = %v: an asked r is in (0, 1]", CounterRAsked, asked)
		}
		if ok1 && ok2 && asked > 0 && asked <= 1 && float64(AccessingRanks(asked, r.Ranks)) != math.Round(rr*float64(r.Ranks)) {
			return fmt.Errorf("counters %s = %v disagrees with r = %v: on ranks = %d it rounds to %d accessing ranks, r = %d/%d", CounterRAsked, asked, rr, r.Ranks, AccessingRanks(asked, r.Ranks), AccessingRanks(asked, r.Ranks), r.Ranks)
		}
		if !ok1 || !(rr > 0 && rr <= 1) {
			return nil
		}
		a, ok := paramNumber(r, "a")
		if !ok {
			a = 1
		}
		return accessTraffic(r, a, float64(AccessingRanks(rr, r.Ranks)), "accessing ranks")
	},
	// Paper 001's all-to-all: each of the n ranks sends n-1 messages and
	// receives n-1 per exchange, iters exchanges per repetition.
	BenchAllToAll: allToAllCounters,
	// Concurrent ping-pongs: each rank of a pair sends and receives one
	// message per round trip, counter iters round trips per repetition.
	BenchPairwise:      pingPongCounters,
	BenchRowContention: pingPongCounters,
	BenchRoundTrip:     pingPongCounters,
	BenchPRTT:          prttCounters,
	// OSU's latency, rank 0's mean half round trip: rank 0's time of a
	// repetition is at most the repetition's sample, the maximum over
	// ranks, so the mean is at most the slowest sample.
	BenchMultiLatency: func(r *results.Record) error {
		if err := allRanksMax(r); err != nil {
			return err
		}
		// Rank i pairs with i + ranks/2 (MultiLatency.Params): every
		// rank but an odd count's last takes part.
		if pairs, ok := paramNumber(r, "pairs"); ok && pairs != float64(r.Ranks/2) {
			return fmt.Errorf("pairs = %s on ranks = %d: rank i pairs with i + ranks/2, so a multilat record's pairs are ranks/2 = %d", show(pairs), r.Ranks, r.Ranks/2)
		}
		if v, ok := r.Derived[DerivedOSULatSec]; ok && !within(v, r.Max) {
			return fmt.Errorf("derived %s = %v s is above max %v s: rank 0's mean half round trip is at most the slowest repetition's, the maximum over ranks", DerivedOSULatSec, v, r.Max)
		}
		return nil
	},
	BenchAggregate: aggregateCounters,
	BenchGridShift: gridShiftCounters,
}

// maxCountedGrid is the largest grid whose traffic gridShiftCounters
// counts rank by rank (a record's ranks are otherwise unbounded).
const maxCountedGrid = 1 << 20

// gridShiftCounters: in every exchange each rank that takes part in a
// direction (PartnersAlong: all of them but align's idle lines) sends and
// receives one message of bytes in it, so the busiest rank's counts are
// iters times the most directions a rank takes part in and the totals
// iters times their sum over the grid's ranks; iters, the exchanges per
// repetition, is no parameter, so msgs_sent_max says it.
func gridShiftCounters(r *results.Record) error {
	g, ok := gridShiftOf(r)
	sent, ok5 := r.Counters[CounterMsgsSentMax]
	if !ok || !ok5 || r.Ranks > maxCountedGrid || float64(g.Rows)*float64(g.Cols) != float64(r.Ranks) {
		return nil
	}
	bytes := float64(g.Bytes)
	alongs, err := g.alongs()
	if err != nil || g.Check(r.Ranks) != nil {
		return nil
	}
	most, total := 0, 0
	for rank := range r.Ranks {
		n := 0
		for _, a := range alongs {
			if _, _, ok := g.PartnersAlong(rank, a); ok {
				n++
			}
		}
		most, total = max(most, n), total+n
	}
	if most == 0 {
		return nil
	}
	grid := fmt.Sprintf("%s's %s exchange on a %dx%d grid", g.Mode, g.Along, g.Rows, g.Cols)
	iters, err := wholeIters(CounterMsgsSentMax, sent, sent/float64(most), fmt.Sprintf("its exchanges per repetition msgs_sent_max / %d, the most messages a rank sends in %s,", most, grid))
	if err != nil {
		return err
	}
	n := show(iters)
	for _, c := range []struct {
		key  string
		want float64
		how  string
	}{
		{CounterMsgsRecvMax, iters * float64(most), fmt.Sprintf("exchanges x the most a rank receives in one = %s x %d", n, most)},
		{CounterMsgsTotal, iters * float64(total), fmt.Sprintf("exchanges x the messages of %s = %s x %d", grid, n, total)},
		{CounterBytesSentMax, iters * float64(most) * bytes, fmt.Sprintf("exchanges x the most a rank sends in one x bytes = %s x %d x %s", n, most, show(bytes))},
		{CounterBytesRecvMax, iters * float64(most) * bytes, fmt.Sprintf("exchanges x the most a rank receives in one x bytes = %s x %d x %s", n, most, show(bytes))},
		{CounterBytesTotal, iters * float64(total) * bytes, fmt.Sprintf("exchanges x the messages of %s x bytes = %s x %d x %s", grid, n, total, show(bytes))},
	} {
		if err := sameCounter(r, c.key, c.want, c.how); err != nil {
			return err
		}
	}
	return nil
}

// allRanksMax refuses a record of a pattern whose samples are always the
// maximum over ranks of each rank's own time, every one kept (the
// collectives, the non-blocking collectives and the multi-pair latency
// take no --sync and trim nothing), when it names another aggregate or
// dropped samples: the bounds of belowSlowest hold only for those.
func allRanksMax(r *results.Record) error {
	if r.Reduction != results.ReductionMaxOverRanks {
		return fmt.Errorf("aggregate %q: a %s record's samples are always %s, the maximum over ranks of each rank's own time", r.Reduction, r.Bench, results.ReductionMaxOverRanks)
	}
	if r.Dropped > 0 {
		return fmt.Errorf("dropped = %d: a %s record keeps every repetition, none is dropped", r.Dropped, r.Bench)
	}
	return nil // rank_max <= max: results' check of every such record
}

// belowSlowest refuses a derived value of keys above the record's max,
// the slowest repetition's time (why: the reason it cannot be); the
// samples are the maximum over ranks of each rank's own time, all kept
// (allRanksMax): every rank's own time of a repetition is at most its
// sample, so every mean of a rank's own times is at most max.
func belowSlowest(r *results.Record, why string, keys ...string) error {
	for _, k := range keys {
		if v, ok := r.Derived[k]; ok && !within(v, r.Max) {
			return fmt.Errorf("derived %s = %v s is above max %v s: %s", k, v, r.Max, why)
		}
	}
	return nil
}

// nonBlockingBounds ties the non-blocking record's derived values to its
// samples, the overlapped calls' (NonBlocking.Run): without probes no
// MPI_Test runs (osu_test_s 0); the overlapped calls' mean time
// (osu_overall_s) and the compute with its tests (osu_compute_s +
// osu_test_s) are means of a rank's own times, at most max; each rank
// computes at least its own mean pure communication in every overlapped
// call, so osu_comm_max_s is at most max too; and comm_s, the median of
// the pure calls' maxima over ranks, is at most twice their mean, at
// most the sum over ranks of their own means: 2 x ranks x osu_comm_max_s.
func nonBlockingBounds(r *results.Record) error {
	d := r.Derived
	if probes, ok := paramNumber(r, "probes"); ok && probes == 0 {
		if v, ok := d[DerivedOSUTest]; ok && v != 0 {
			return fmt.Errorf("derived %s = %v s with probes = 0: without probes no MPI_Test runs, its time is 0", DerivedOSUTest, v)
		}
	}
	if err := belowSlowest(r, "a rank's mean overlapped call is at most the slowest repetition's, the maximum over ranks", DerivedOSUOverall); err != nil {
		return err
	}
	if err := belowSlowest(r, "each rank computes at least its mean pure communication in every overlapped call, so the slowest overlapped repetition takes at least that", DerivedOSUCommMax); err != nil {
		return err
	}
	compute, ok1 := d[DerivedOSUCompute]
	test, ok2 := d[DerivedOSUTest]
	if ok1 && ok2 && !within(compute+test, r.Max) {
		return fmt.Errorf("derived %s + %s = %v s is above max %v s: the compute with its tests is part of each rank's overlapped call", DerivedOSUCompute, DerivedOSUTest, compute+test, r.Max)
	}
	if comm, ok := d[DerivedComm]; ok {
		if cmax, ok := d[DerivedOSUCommMax]; ok && r.Ranks > 0 && !within(comm, 2*float64(r.Ranks)*cmax) {
			return fmt.Errorf("derived %s = %v s is above 2 x ranks x %s = 2 x %d x %v s: the median of the pure calls' maxima over ranks is at most twice their mean, at most the sum of the ranks' mean times", DerivedComm, comm, DerivedOSUCommMax, r.Ranks, cmax)
		}
	}
	return nil
}

// sameCounter refuses counter key when present and not want (how: the
// formula, with its numbers).
func sameCounter(r *results.Record, key string, want float64, how string) error {
	v, ok := r.Counters[key]
	if !ok || math.Abs(v-want) <= derivedTol*math.Max(math.Abs(want), math.Abs(v)) {
		return nil
	}
	return fmt.Errorf("counters %s = %v disagrees with %s = %s", key, v, how, results.FormatCount(want))
}

// trafficCounters checks the traffic counters of a pattern whose every
// rank that takes part sends and receives msgs messages of bytes bytes per
// repetition, the taking ranks all of the record's (CountersOf: _max of
// the busiest rank, _total the sum over ranks); msgs is the product of
// factors, named by names ("(ranks-1) x exchanges") and valued by nums
// ("2 x 1") for the messages.
func trafficCounters(r *results.Record, bytes, msgs float64, names, nums string) error {
	ranks := float64(r.Ranks)
	b, p := results.FormatCount(bytes), fmt.Sprint(r.Ranks)
	for _, c := range []struct {
		key, names, nums string
		want             float64
	}{
		{CounterMsgsSentMax, names, nums, msgs},
		{CounterMsgsRecvMax, names, nums, msgs},
		{CounterMsgsTotal, "ranks x " + names, p + " x " + nums, ranks * msgs},
		{CounterBytesSentMax, names + " x bytes", nums + " x " + b, msgs * bytes},
		{CounterBytesRecvMax, names + " x bytes", nums + " x " + b, msgs * bytes},
		{CounterBytesTotal, "ranks x " + names + " x bytes", p + " x " + nums + " x " + b, ranks * msgs * bytes},
	} {
		how := c.names + " = " + c.nums
		if !strings.Contains(c.nums, " x ") {
			how = c.names // one factor: sameCounter says its value
		}
		if err := sameCounter(r, c.key, c.want, how); err != nil {
			return err
		}
	}
	return nil
}

// wholeIters is the iterations per repetition q a counter says (key = v,
// how: what q is), a whole number >= 1 up to the rounding of the per
// repetition division (Counts.PerRep).
func wholeIters(key string, v, q float64, how string) (float64, error) {
	n := math.Round(q)
	if !(n >= 1) || math.Abs(q-n) > 1e-9*n {
		return 0, fmt.Errorf("counters %s = %v: %s, %v, is not a whole number >= 1", key, v, how, q)
	}
	return n, nil
}

// allToAllCounters: per repetition a rank sends and receives iters (n-1)
// messages of the record's bytes (AllToAll.Run); iters is not a
// parameter, so msgs_sent_max says it and the others follow.
func allToAllCounters(r *results.Record) error {
	bytes, ok := paramNumber(r, "bytes")
	msgs, ok2 := r.Counters[CounterMsgsSentMax]
	if !ok || !ok2 || r.Ranks < 2 {
		return nil
	}
	iters, err := wholeIters(CounterMsgsSentMax, msgs, msgs/float64(r.Ranks-1), fmt.Sprintf("its exchanges per repetition msgs_sent_max / (ranks-1) = %v / %d", msgs, r.Ranks-1))
	if err != nil {
		return err
	}
	return trafficCounters(r, bytes, float64(r.Ranks-1)*iters, "(ranks-1) x exchanges", fmt.Sprintf("%d x %s", r.Ranks-1, results.FormatCount(iters)))
}

// pingPongCounters: a rank of a pair sends and receives counter iters
// messages per repetition (pingPongPairs), and the record's ranks are the
// pairs' (the waiting ranks count nothing). iters itself is a run's
// setting (--iters, or the OSU count capped by the time budget), not a
// function of the parameters.
func pingPongCounters(r *results.Record) error {
	return countedTraffic(r, CounterIters, "the round trips per repetition", "counters iters")
}

// countedTraffic ties the traffic counters to the record's bytes and the
// exchanges per repetition that counter key counts (a whole number, what
// how says it is); names says what the exchanges are in the messages.
func countedTraffic(r *results.Record, key, how, names string) error {
	bytes, ok1 := paramNumber(r, "bytes")
	n, ok2 := r.Counters[key]
	if !ok1 || !ok2 {
		return nil
	}
	iters, err := wholeIters(key, n, n, how)
	if err != nil {
		return err
	}
	return trafficCounters(r, bytes, iters, names, results.FormatCount(iters))
}

// prttCounters: per exchange the client sends n messages and receives
// one, the server the reverse (PRTT.Run), iters exchanges per repetition;
// the record's two ranks are the pair.
func prttCounters(r *results.Record) error {
	bytes, ok1 := paramNumber(r, "bytes")
	n, ok2 := paramNumber(r, "n")
	iters, ok3 := r.Counters[CounterIters]
	if !(ok1 && ok2 && ok3) {
		return nil
	}
	iters, err := wholeIters(CounterIters, iters, iters, "the exchanges per repetition")
	if err != nil {
		return err
	}
	most, total := iters*n, iters*(n+1)
	for _, c := range []struct {
		key, how string
		want     float64
	}{
		{CounterMsgsSentMax, fmt.Sprintf("iters x n = %s x %s", results.FormatCount(iters), show(n)), most},
		{CounterMsgsRecvMax, fmt.Sprintf("iters x n = %s x %s", results.FormatCount(iters), show(n)), most},
		{CounterMsgsTotal, fmt.Sprintf("iters x (n+1) = %s x %s", results.FormatCount(iters), show(n+1)), total},
		{CounterBytesSentMax, fmt.Sprintf("iters x n x bytes = %s x %s x %s", results.FormatCount(iters), show(n), show(bytes)), most * bytes},
		{CounterBytesRecvMax, fmt.Sprintf("iters x n x bytes = %s x %s x %s", results.FormatCount(iters), show(n), show(bytes)), most * bytes},
		{CounterBytesTotal, fmt.Sprintf("iters x (n+1) x bytes = %s x %s x %s", results.FormatCount(iters), show(n+1), show(bytes)), total * bytes},
	} {
		if err := sameCounter(r, c.key, c.want, c.how); err != nil {
			return err
		}
	}
	return nil
}

// accessTraffic checks the traffic counters of an access pattern's
// repetition (accessEngine): a accesses of k packets by each of n
// accessing ranks (named who), every packet a request and its answer, a
// 16-byte header and the l bytes of the data (and the header back for a
// write): msgs_total = 2 x a x k x n, bytes_total = a x k x n x (16 + l)
// for a read, x (32 + l) for a write.
func accessTraffic(r *results.Record, a, n float64, who string) error {
	k, ok1 := paramNumber(r, "k")
	l, ok2 := paramNumber(r, "l")
	op, _ := r.Params["op"].(string)
	if !ok1 || !ok2 || (op != AccessRead.String() && op != AccessWrite.String()) {
		return nil
	}
	header := float64(accessHeaderBytes)
	if op == AccessWrite.String() {
		header *= 2
	}
	packets := a * k * n
	nums := fmt.Sprintf("%s x %s x %s", show(a), show(k), show(n))
	if err := sameCounter(r, CounterMsgsTotal, 2*packets, fmt.Sprintf("2 x a x k x %s = 2 x %s", who, nums)); err != nil {
		return err
	}
	return sameCounter(r, CounterBytesTotal, packets*(header+l), fmt.Sprintf("a x k x %s x (%s header bytes + l) = %s x (%s + %s)", who, show(header), nums, show(header), show(l)))
}

// hotSpotCounters: the drawn k-accesses realise exactly the record's h
// (KAccess.Params): h_realised is h, hot_ranks h x ranks, and the asked
// h_asked, in (0, 1] as every writer validates it, rounds to them
// (HotRanks).
func hotSpotCounters(r *results.Record) error {
	h, ok := paramNumber(r, "h")
	if !ok {
		return nil
	}
	if v, ok := r.Counters[CounterHRealised]; ok && math.Abs(v-h) > derivedTol*h {
		return fmt.Errorf("counters %s = %v disagrees with the realised h = %v", CounterHRealised, v, h)
	}
	hot := math.Round(h * float64(r.Ranks))
	if err := sameCounter(r, CounterHotRanks, hot, fmt.Sprintf("h x ranks = %v x %d", h, r.Ranks)); err != nil {
		return err
	}
	if asked, ok := r.Counters[CounterHAsked]; ok && !(asked > 0 && asked <= 1) {
		return fmt.Errorf("counters %s = %v: an asked h is in (0, 1]", CounterHAsked, asked)
	}
	if asked, ok := r.Counters[CounterHAsked]; ok && asked > 0 && asked <= 1 && float64(HotRanks(asked, r.Ranks)) != hot {
		return fmt.Errorf("counters %s = %v disagrees with h = %v: on ranks = %d it rounds to %d hot ranks, h = %d/%d", CounterHAsked, asked, h, r.Ranks, HotRanks(asked, r.Ranks), HotRanks(asked, r.Ranks), r.Ranks)
	}
	return nil
}

// aggregateCounters: volume_bytes is the two-level model's m of the
// operation on the record's ranks and textbook_rounds the rounds of its
// impl's algorithm (AggregateOp.VolumeBytes, AggregateOp.Rounds), the
// NEWS volume by the record's neighbours.
func aggregateCounters(r *results.Record) error {
	name, _ := r.Params["op"].(string)
	op, err := ParseAggKind(name)
	bytes, ok := paramNumber(r, "bytes")
	if err != nil || !ok || r.Ranks < 1 {
		return nil
	}
	impl := ImplMPI
	if s, ok := r.Params["impl"].(string); ok {
		if impl, err = ParseAggImpl(s); err != nil {
			return nil
		}
	}
	q, _ := paramNumber(r, "q")
	a := AggregateOp{Op: op, Impl: impl, Bytes: int(bytes), Q: int(q)}
	p := r.Ranks
	vol, how := bytes, "bytes"
	switch op {
	case AggAllgather, AggScatter, AggAlltoall:
		vol, how = float64(p-1)*bytes, fmt.Sprintf("(ranks-1) x bytes = %d x %s", p-1, show(bytes))
	case AggNEWS:
		nb, _ := paramNumber(r, "neighbors")
		vol, how = nb*bytes, fmt.Sprintf("neighbors x bytes = %s x %s", show(nb), show(bytes))
	}
	if err := sameCounter(r, CounterVolumeBytes, vol, how); err != nil {
		return err
	}
	if op == AggQShift && !(q >= 1 && q < float64(p)) {
		return nil // the relation refuses it
	}
	return sameCounter(r, CounterTextbookRounds, float64(a.Rounds(p)), fmt.Sprintf("the rounds of %s's %s on %d ranks", impl, name, p))
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
