package results

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/montanaflynn/stats"
)

// Physical bounds on a record's statistics, by unit. A value beyond them is
// no measurement of any machine (a corrupt or hand-made file) and would
// overflow the arithmetic of every reader: a fit squares its medians, a log
// plot takes their logarithms, a prediction multiplies them by counts.
const (
	MaxRecordSeconds = 1e9  // about 32 years
	MaxRecordBytes   = 1e19 // about 2^63
	MaxRecordRate    = 1e18 // bytes per second: six orders above any link
	MaxRecordValue   = 1e18 // counts and other units, in absolute value
	// MaxRecordRanks bounds a record's rank count, as it bounds the
	// ranks of an instance given to predict: a scan or a prediction
	// over 1e15 ranks would not end.
	MaxRecordRanks = 1 << 24
	// MinRecordSeconds is the shortest time other than 0 a record may
	// hold: no operation a record times takes less than a picosecond,
	// and a median of 1e-300 s fits a negative bandwidth term.
	MinRecordSeconds = 1e-12
	// MaxRecordKeys bounds the entries of a record's params, derived and
	// counters maps: a record has a few dozen, and a million keys make
	// every table built from the record a million columns wide.
	MaxRecordKeys = 1000
)

// CheckValues reports the first statistic of r no measurement can have,
// so that every reader (fit, compare, report, app table, sched, dsm plot,
// a --calibration or --fit file) refuses it before using it and every
// writer refuses to write it:
//
//   - n >= 1: a record summarises at least one repetition;
//   - every statistic (min, median, mean, max, p90, p99, ci95, rank_*),
//     derived value, counter and sample is finite;
//   - min <= median <= max, and the CI contains its median
//     (ci95[0] <= median <= ci95[1]);
//   - a size (B) or bandwidth (B/s) has a positive median, a time (unit
//     s) a median of 0 or more (a phase that moved nothing, as Cannon's
//     shift on one rank, a replayed rank without MPI calls), and none of
//     them or a count a negative statistic; and each statistic is within
//     its unit's bound (MaxRecordSeconds, ...); a time other than 0 is
//     at least MinRecordSeconds;
//   - the repetitions of a time took at most MaxRecordSeconds together:
//     n times the min and half of n times the median are lower bounds
//     on that (5e8 s repetitions 891 times are no calibration);
//   - median <= p90 <= p99 <= max, min <= mean <= max and rank_min <=
//     rank_avg <= rank_max, a 0 there standing for a field left out
//     (checkOrder);
//   - in a measurement's unit the CI lies within [min, max], and kept
//     samples are the n values summarised, each within [min, max] and
//     not below the unit's least value, with the record's min, median,
//     mean and max as their own, and the CI the order statistics
//     Summarize takes of them (checkSamples);
//   - dropped <= n: trimming drops only outliers above the median;
//   - aggregate and stop are Reduction* and Stop* values or empty, and
//     among those the bench's writers produce (writerLabels);
//   - samples, workload and the metadata's hosts, ranks per host and
//     command hold at most MaxRecordElements entries each (the reader
//     refuses longer lists before decoding them);
//   - params, derived and counters hold at most MaxRecordKeys entries
//     each, and a counter is within MaxRecordValue in absolute value (a
//     counter may be negative: an N-body run's energy);
//   - the metadata is one of a launch (Meta.check: a backend of
//     Backends, ranks per host from 1 to MaxRecordRanks, one per host;
//     cores, GOMAXPROCS and the load average not negative), and ranks is at most the launch's ranks,
//     the sum of ranks per host (checkLaunch);
//   - ranks is at most MaxRecordRanks, and the bench's record check
//     (RegisterRecordCheck) accepts the record.
//
// Other units (a fitted slope, say) may be negative but are bounded by
// MaxRecordValue in absolute value.
func (r *Record) CheckValues() error {
	if r.N < 1 {
		return fmt.Errorf("record %s %s has n = %d: a record summarises at least one repetition", r.Bench, paramString(r.Params), r.N)
	}
	// Outliers are trimmed only above the median of the repetitions
	// (TrimHigh), so no more are dropped than kept: dropped <= n.
	if r.Dropped > r.N {
		return fmt.Errorf("record %s %s has dropped = %d but n = %d: the outliers dropped lie above the median of the repetitions, at most as many as the n kept", r.Bench, paramString(r.Params), r.Dropped, r.N)
	}
	lo, hi, positive := valueRange(r.Unit)
	named := []struct {
		name string
		v    float64
	}{
		{"median", r.Median}, {"min", r.Min}, {"mean", r.Mean}, {"max", r.Max},
		{"p90", r.P90}, {"p99", r.P99}, {"ci95[0]", r.CI95[0]}, {"ci95[1]", r.CI95[1]},
		{"rank_min", r.RankMin}, {"rank_avg", r.RankAvg}, {"rank_max", r.RankMax},
	}
	for _, s := range named {
		if math.IsNaN(s.v) || math.IsInf(s.v, 0) || s.v < lo || s.v > hi {
			return fmt.Errorf("record %s %s: %s %v is outside [%g, %g], the range of a value in %s", r.Bench, paramString(r.Params), s.name, s.v, lo, hi, unitName(r.Unit))
		}
		if r.Unit == UnitSeconds && s.v > 0 && s.v < MinRecordSeconds {
			return fmt.Errorf("record %s %s: %s %v s is shorter than %g s, the shortest time a record holds (0 aside)", r.Bench, paramString(r.Params), s.name, s.v, MinRecordSeconds)
		}
	}
	if positive && !(r.Median > 0) && r.Unit != UnitSeconds {
		return fmt.Errorf("record %s %s: median %v is not positive (unit %s)", r.Bench, paramString(r.Params), r.Median, r.Unit)
	}
	if !(r.Min <= r.Median && r.Median <= r.Max) {
		return fmt.Errorf("record %s %s: median %v is not between min %v and max %v", r.Bench, paramString(r.Params), r.Median, r.Min, r.Max)
	}
	if !(r.CI95[0] <= r.Median && r.Median <= r.CI95[1]) {
		return fmt.Errorf("record %s %s: ci95 [%v, %v] does not contain the median %v", r.Bench, paramString(r.Params), r.CI95[0], r.CI95[1], r.Median)
	}
	// A measurement's CI ends are two of its sorted repetitions
	// (Summarize), so they lie within [min, max] as the median does; a
	// fitted coefficient in another unit (sched count's slope) carries
	// its regression's CI around a single value instead.
	if measuredUnit(r.Unit) && !(notAbove(r.Min, r.CI95[0]) && notAbove(r.CI95[1], r.Max)) {
		return fmt.Errorf("record %s %s: ci95 [%v, %v] is not within min %v and max %v: its ends are two of the repetitions", r.Bench, paramString(r.Params), r.CI95[0], r.CI95[1], r.Min, r.Max)
	}
	if err := r.checkOrder(); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if err := r.checkLabels(); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if err := r.checkWriterLabels(); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if r.Unit == UnitSeconds {
		n := float64(r.N)
		if total := max(n*r.Min, float64((r.N+1)/2)*r.Median); total > MaxRecordSeconds {
			return fmt.Errorf("record %s %s: its n = %d repetitions (min %v s, median %v s) took at least %.3g s together, beyond %g s (about 32 years)", r.Bench, paramString(r.Params), r.N, r.Min, r.Median, total, MaxRecordSeconds)
		}
	}
	for _, m := range []struct {
		name string
		n    int
	}{{"params", len(r.Params)}, {"derived", len(r.Derived)}, {"counters", len(r.Counters)}} {
		if m.n > MaxRecordKeys {
			return fmt.Errorf("record %s: %s has %d entries, more than the %d a record may hold", r.Bench, m.name, m.n, MaxRecordKeys)
		}
	}
	for _, l := range []struct {
		name string
		n    int
	}{{"samples", len(r.Samples)}, {"workload", len(r.Workload)}, {"meta.hosts", len(r.Meta.Hosts)},
		{"meta.ranks_per_host", len(r.Meta.RanksPerHost)}, {"meta.command", len(r.Meta.Command)}} {
		if l.n > MaxRecordElements {
			return fmt.Errorf("record %s: %s has %d entries, more than the %d a record may hold", r.Bench, l.name, l.n, MaxRecordElements)
		}
	}
	if r.Ranks > MaxRecordRanks {
		return fmt.Errorf("record %s %s: ranks = %d is beyond %d", r.Bench, paramString(r.Params), r.Ranks, MaxRecordRanks)
	}
	for _, m := range []struct {
		name string
		v    map[string]float64
	}{{"derived", r.Derived}, {"counters", r.Counters}} {
		for _, k := range slices.Sorted(maps.Keys(m.v)) { // the first in key order: a message that does not vary
			v := m.v[k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("record %s %s: %s %q is %v", r.Bench, paramString(r.Params), m.name, k, v)
			}
			if m.name == "counters" && math.Abs(v) > MaxRecordValue {
				return fmt.Errorf("record %s %s: counters %q = %v is beyond %g in absolute value", r.Bench, paramString(r.Params), k, v, MaxRecordValue)
			}
			// A derived value names its unit in its key (README.md): a
			// time or a bandwidth there has its unit's bound too (an
			// application record's prediction of 1e294 s is none).
			if m.name == "derived" {
				if bound, unit := derivedBound(k); math.Abs(v) > bound {
					return fmt.Errorf("record %s %s: derived %q = %v is beyond %g %s", r.Bench, paramString(r.Params), k, v, bound, unit)
				}
			}
		}
	}
	if err := r.checkSamples(lo); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if err := r.Meta.check(); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if err := r.checkLaunch(); err != nil {
		return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
	}
	if f, ok := recordChecks.Load(r.Bench); ok {
		if err := f.(func(*Record) error)(r); err != nil {
			return fmt.Errorf("record %s %s: %w", r.Bench, paramString(r.Params), err)
		}
	}
	return nil
}

// orderTol is the relative slack of the order checks: a mean of n equal
// values, or a percentile interpolated between two, may exceed them by
// the rounding of its arithmetic (the mean of three 0.1 is 0.10000000000000002).
const orderTol = 1e-9

// notAbove reports whether a <= b up to orderTol.
func notAbove(a, b float64) bool {
	return a <= b || a-b <= orderTol*math.Max(math.Abs(a), math.Abs(b))
}

// checkOrder refuses statistics out of the order Summarize gives them:
// median <= p90 <= p99 <= max and min <= mean <= max (percentiles of one
// sorted sample, its mean), and rank_min <= rank_avg <= rank_max (one
// spread over the ranks). A 0 in p90, p99, mean or a rank_* field is a
// field the record leaves out (rank_* are omitted when 0, and hand-made
// records often give only min, median and max), so it is not compared.
func (r *Record) checkOrder() error {
	type stat struct {
		name string
		v    float64
	}
	chain := func(why string, s ...stat) error {
		prev := stat{}
		for _, x := range s {
			if x.v == 0 && x.name != "median" && x.name != "max" {
				continue
			}
			if prev.name != "" && !notAbove(prev.v, x.v) {
				return fmt.Errorf("%s %v is above %s %v: %s", prev.name, prev.v, x.name, x.v, why)
			}
			prev = x
		}
		return nil
	}
	if err := chain("the percentiles of one sample rise with their rank", stat{"median", r.Median}, stat{"p90", r.P90}, stat{"p99", r.P99}, stat{"max", r.Max}); err != nil {
		return err
	}
	if r.Mean != 0 && !(notAbove(r.Min, r.Mean) && notAbove(r.Mean, r.Max)) {
		return fmt.Errorf("mean %v is not between min %v and max %v", r.Mean, r.Min, r.Max)
	}
	return chain("they are the minimum, average and maximum over the ranks", stat{"rank_min", r.RankMin}, stat{"rank_avg", r.RankAvg}, stat{"rank_max", r.RankMax})
}

// checkSamples refuses raw samples no writer stores: every writer keeps
// the very values its statistics summarise (Summarize of the samples,
// unthinned and uncapped, in the record's unit: a bandwidth record keeps
// the bandwidths), so there are n of them, each finite, not below its
// unit's least value (0 for a time, a size, a bandwidth or a count) and
// within [min, max], and their min, median, mean and max are the
// record's, computed as Summarize does (a sorted copy: the order of the
// samples does not matter) up to sampleTol, and so are its p90, p99 and
// the ends of its CI (Summarize's order statistics). A mean or a
// percentile of 0 is a field left out, as in checkOrder. A record without samples (the default) passes.
func (r *Record) checkSamples(lo float64) error {
	if len(r.Samples) == 0 {
		return nil
	}
	if len(r.Samples) != r.N {
		return fmt.Errorf("samples holds %d values but n = %d: a record keeps one sample per repetition it summarises", len(r.Samples), r.N)
	}
	for i, v := range r.Samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sample %d is %v", i+1, v)
		}
		if v < lo {
			return fmt.Errorf("sample %d is %v, below %g, the least value in %s", i+1, v, lo, unitName(r.Unit))
		}
		if !(notAbove(r.Min, v) && notAbove(v, r.Max)) {
			return fmt.Errorf("sample %d is %v, outside min %v and max %v, the extremes of the samples", i+1, v, r.Min, r.Max)
		}
	}
	x := slices.Clone(r.Samples)
	slices.Sort(x)
	mean, _ := stats.Mean(x) // errors only for an empty sample
	for _, s := range []struct {
		name           string
		samples, field float64
	}{{"min", x[0], r.Min}, {"max", x[len(x)-1], r.Max}, {"median", Median(x), r.Median}, {"mean", mean, r.Mean}} {
		if s.name == "mean" && s.field == 0 {
			continue
		}
		if !sampleClose(s.samples, s.field) {
			return fmt.Errorf("samples have %s %v but %s = %v: a record's statistics summarise its samples", s.name, s.samples, s.name, s.field)
		}
	}
	// The percentiles and the CI (the order statistics MedianCIRanks(n))
	// are the samples' as Summarize, which every writer summarises them
	// with, takes them; a percentile of 0 is a field left out.
	sum := Summarize(x)
	for _, p := range []struct {
		name           string
		samples, field float64
	}{{"p90", sum.P90, r.P90}, {"p99", sum.P99, r.P99}} {
		if p.field != 0 && !sampleClose(p.samples, p.field) {
			return fmt.Errorf("samples have %s %v but %s = %v: a record's statistics summarise its samples", p.name, p.samples, p.name, p.field)
		}
	}
	if ci := sum.CI95; !sampleClose(ci[0], r.CI95[0]) || !sampleClose(ci[1], r.CI95[1]) {
		lo, hi := MedianCIRanks(len(x))
		return fmt.Errorf("samples have ci95 [%v, %v] but ci95 = [%v, %v]: a record's CI is its sorted samples number %d and %d of %d (MedianCIRanks)", ci[0], ci[1], r.CI95[0], r.CI95[1], lo, hi, len(x))
	}
	return nil
}

// sampleTol is the relative slack between a statistic recomputed from
// the samples and the record's: a JSON float round trip is exact, so it
// only absorbs another tool's summation order; sampleAbsTol lets two
// values both within it of 0 agree.
const (
	sampleTol    = 1e-9
	sampleAbsTol = 1e-300
)

// sampleClose reports whether a and b agree up to sampleTol.
func sampleClose(a, b float64) bool {
	return math.Abs(a-b) <= sampleTol*math.Max(math.Abs(a), math.Abs(b))+sampleAbsTol
}

// checkLabels refuses an aggregate or stop value no writer uses: they
// are the Reduction* and Stop* constants, or left out.
func (r *Record) checkLabels() error {
	switch r.Reduction {
	case "", ReductionMaxOverRanks, ReductionRank0, ReductionWindowLatestEnd, ReductionRank0Wall:
	default:
		return fmt.Errorf("aggregate %q is none of %s, %s, %s, %s", r.Reduction, ReductionMaxOverRanks, ReductionRank0, ReductionWindowLatestEnd, ReductionRank0Wall)
	}
	switch r.Stop {
	case "", StopRelCI, StopMaxReps, StopMaxTime, StopFixed:
	default:
		return fmt.Errorf("stop %q is none of %s, %s, %s, %s", r.Stop, StopRelCI, StopMaxReps, StopMaxTime, StopFixed)
	}
	return nil
}

// checkLaunch refuses more ranks than the launch the metadata describes:
// ranks_per_host counts every rank of the launch (job.NewMeta gathers it
// over the world, replay counts the traced ranks), and the ranks that
// took part are some of them, so ranks <= the sum of ranks_per_host.
// Fewer is a record of part of a launch: a calibration's ping-pong on a
// pair of a larger launch, an emulated network's application ranks
// without its service ranks, a dsm mesh or an all-to-all on a subset. A
// record without ranks_per_host (sched count, sched breakeven --in: no
// launch) passes.
func (r *Record) checkLaunch() error {
	if len(r.Meta.RanksPerHost) == 0 {
		return nil
	}
	sum := 0
	for _, n := range r.Meta.RanksPerHost {
		sum += n // at most 2^20 entries of at most 2^24 (checked above): no overflow
	}
	if r.Ranks > sum {
		return fmt.Errorf("meta ranks_per_host sums to %d but ranks = %d: the ranks that took part are some of the launch's", sum, r.Ranks)
	}
	return nil
}

// check refuses metadata no launch has: a backend commcost does not
// write (CheckBackend), a host with fewer than one rank
// or more than MaxRecordRanks, ranks per host that are not parallel to
// the hosts, a host name longer than any system allows, a negative core
// count, GOMAXPROCS or load average.
func (m *Meta) check() error {
	if err := CheckBackend(m.Backend); err != nil {
		return fmt.Errorf("meta %w", err)
	}
	for i, n := range m.RanksPerHost {
		if n < 1 || n > MaxRecordRanks {
			return fmt.Errorf("meta ranks_per_host[%d] = %d: a host runs 1 to %d ranks", i, n, MaxRecordRanks)
		}
	}
	if len(m.Hosts) > 0 && len(m.RanksPerHost) > 0 && len(m.Hosts) != len(m.RanksPerHost) {
		return fmt.Errorf("meta has %d hosts but %d ranks_per_host entries: ranks_per_host has one entry per host", len(m.Hosts), len(m.RanksPerHost))
	}
	for i, h := range m.Hosts {
		if len(h) > maxHostLen {
			return fmt.Errorf("meta hosts[%d] \"%s\" is %d bytes: a host name is at most %d (the system's limit)", i, Printable(clip(h, 40)), len(h), maxHostLen)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"cores", m.Cores}, {"gomaxprocs", m.GOMAXPROCS}} {
		if f.v < 0 || f.v > MaxRecordRanks {
			return fmt.Errorf("meta %s = %d: want 0 (unknown) to %d", f.name, f.v, MaxRecordRanks)
		}
	}
	if !(m.Load1 >= 0 && m.Load1 <= MaxRecordValue) {
		return fmt.Errorf("meta load1 = %v: a load average is a number from 0 to %g", m.Load1, MaxRecordValue)
	}
	// BuildCommit's forms: a git hash or description, "-dirty", "unknown".
	if len(m.Commit) > maxCommitLen || strings.IndexFunc(m.Commit, func(c rune) bool { return c <= ' ' || c > '~' }) >= 0 {
		return fmt.Errorf("meta commit \"%s\": a commit is at most %d printable characters without spaces (a git hash or description, as commcost's build stamps it)", Printable(clip(m.Commit, 40)), maxCommitLen)
	}
	if m.Date != "" {
		if _, err := time.Parse(time.RFC3339, m.Date); err != nil {
			return fmt.Errorf("meta date \"%s\": want the RFC 3339 time commcost writes (e.g. 2026-12-02T14:00:00Z)", Printable(clip(m.Date, 40)))
		}
	}
	return nil
}

// Backends are the values of meta.backend commcost writes: "native"
// (MPI under mpirun or srun), "local" (goroutine ranks exchanging
// through memory), "replay" (a trace's replay) and "none" (no MPI: sched
// count, sched breakeven --in). Records made by hand may leave it out.
var Backends = []string{"native", "local", "replay", "none"}

// CheckBackend refuses a backend none of Backends (exactly; "" is one
// left out): the readers that refuse local records or fits (replay,
// export simgrid) compare the value, and "Local" or a made-up name would
// pass them.
func CheckBackend(b string) error {
	if b == "" || slices.Contains(Backends, b) {
		return nil
	}
	return fmt.Errorf("backend \"%s\" is none commcost writes; accepted (exact case): %s, or the key left out", Printable(clip(b, 40)), strings.Join(Backends, ", "))
}

// maxCommitLen bounds meta.commit: git describe's longest forms are a
// tag, a count, a 40-digit hash and "-dirty".
const maxCommitLen = 128

// maxHostLen bounds a host name in meta.hosts: a DNS name is at most 253
// characters (RFC 1035 section 2.3.4), gethostname's at most 255 bytes.
const maxHostLen = 255

// clip is s cut to n bytes with "..." after, for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// valueRange is the range of a statistic in unit, and whether its median
// must be positive.
func valueRange(unit string) (lo, hi float64, positive bool) {
	switch unit {
	case UnitSeconds:
		return 0, MaxRecordSeconds, true
	case UnitBytes:
		return 0, MaxRecordBytes, true
	case UnitBytesPerSec:
		return 0, MaxRecordRate, true
	case UnitCount:
		return 0, MaxRecordValue, false
	}
	return -MaxRecordValue, MaxRecordValue, false
}

// measuredUnit reports whether unit is one of a measurement's (seconds,
// bytes, bandwidth, count), whose statistics come from Summarize.
func measuredUnit(unit string) bool {
	switch unit {
	case UnitSeconds, UnitBytes, UnitBytesPerSec, UnitCount:
		return true
	}
	return false
}

// derivedBound is the bound on a derived value by the unit its key ends
// in: _B_per_s bytes per second, _s seconds; other keys are dimensionless
// and only finite (the largest float stands for "no bound" in some).
func derivedBound(key string) (float64, string) {
	switch {
	case strings.HasSuffix(key, "_B_per_s"):
		return MaxRecordRate, "bytes per second"
	case strings.HasSuffix(key, "_s"):
		return MaxRecordSeconds, "seconds"
	}
	return math.MaxFloat64, ""
}

func unitName(unit string) string {
	switch unit {
	case UnitSeconds:
		return "seconds"
	case UnitBytes:
		return "bytes"
	case UnitBytesPerSec:
		return "bytes per second"
	case UnitCount:
		return "a count"
	}
	return "unit " + unit
}
