package results

import (
	"math"
	"slices"

	"github.com/montanaflynn/stats"
)

// ciZ is the standard normal quantile for a two-sided 95% interval.
const ciZ = 1.96

// MinCISamples is the smallest sample whose median CI can reach 95%
// confidence: the widest interval order statistics give, [min, max], covers
// the median with probability 1 - 2^(1-n), which first exceeds 0.95 at n = 6.
// Below it Summarize still reports [min, max], but RelCIHalfWidth is +Inf so
// that an adaptive repetition loop never stops on a degenerate interval.
const MinCISamples = 6

// MedianCIRanks returns the 1-based ranks of the order statistics that bound
// the nonparametric 95% confidence interval of the median of n samples
// (MEASURE.md; Le Boudec, "Performance Evaluation of Computer and
// Communication Systems", ch. 2: the CI of the median from order statistics,
// with the normal approximation to Binomial(n, 1/2)):
//
//	lo = floor((n - 1.96 sqrt(n)) / 2)
//	hi = ceil(1 + (n + 1.96 sqrt(n)) / 2)
//
// both clamped to [1, n]. For n = 100 this gives ranks 40 and 61, whose exact
// coverage is P(40 <= Binomial(100, 1/2) <= 60) = 0.965. It returns 0, 0 for
// n <= 0.
func MedianCIRanks(n int) (lo, hi int) {
	if n <= 0 {
		return 0, 0
	}
	fn := float64(n)
	h := ciZ * math.Sqrt(fn)
	lo = int(math.Floor((fn - h) / 2))
	hi = int(math.Ceil(1 + (fn+h)/2))
	return min(max(lo, 1), n), min(max(hi, 1), n)
}

// Summarize returns the statistics of samples (MEASURE.md "Repetitions and
// statistics"). samples is not modified.
//
//   - N counts the finite samples; NaN and ±Inf are left out of every
//     statistic and counted in Invalid, so a broken timer shows up in the
//     record instead of poisoning the mean or vanishing.
//   - Min, Max: extremes. Mean: arithmetic mean.
//   - Median, P90, P99: percentiles by linear interpolation between closest
//     ranks (Hyndman & Fan type 7, the default of R, NumPy and Excel
//     PERCENTILE.INC) as implemented by github.com/montanaflynn/stats:
//     with the sorted sample x[0..n-1], percentile p is x[k] + f (x[k+1] - x[k])
//     where k + f = (p/100)(n-1). The median is the mean of the two middle
//     values for even n. For n = 1 every statistic is the single value.
//   - CI95: the order statistics at MedianCIRanks(N); for N < MinCISamples
//     this is [Min, Max] and its coverage is below 95%.
//
// A sample with no finite value gives the zero Summary (with Invalid set).
// Dropped is left 0: SummarizeTrimmed sets it.
func Summarize(samples []float64) Summary {
	var s Summary
	x := make([]float64, 0, len(samples))
	for _, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			s.Invalid++
			continue
		}
		x = append(x, v)
	}
	if len(x) == 0 {
		return s
	}
	// Sorting once up front lets every stats call below, which sorts its own
	// copy, run on already-sorted input (pdqsort's linear-time case); an
	// adaptive loop that re-summarises after every repetition stays cheap.
	slices.Sort(x)
	n := len(x)
	s.N = n
	s.Min, s.Max = x[0], x[n-1]
	// The errors below are only for empty input or percent outside (0, 100],
	// both excluded here.
	s.Mean, _ = stats.Mean(x)
	s.Median, _ = stats.Median(x)
	s.P90, _ = stats.Percentile(x, 90)
	s.P99, _ = stats.Percentile(x, 99)
	lo, hi := MedianCIRanks(n)
	s.CI95 = [2]float64{x[lo-1], x[hi-1]}
	return s
}

// Median is the median of v: the middle value, or the mean of the two
// middle values for an even count (the definition of Summary.Median). It is
// NaN for an empty v; v is not modified. Unlike Summarize it does not filter
// NaN and ±Inf, so callers pass finite values. It is the one median of the
// module: patterns, model and permsched use it.
func Median(v []float64) float64 {
	m, err := stats.Median(v)
	if err != nil { // only for empty input
		return math.NaN()
	}
	return m
}

// RelCIHalfWidth is the half-width of the median's 95% CI relative to the
// median, (CI95[1] - CI95[0]) / 2 / |Median|: the stopping criterion of
// adaptive repetitions (MEASURE.md, default target 0.03).
//
// It is +Inf when the interval cannot support a 95% claim (N < MinCISamples)
// or when a non-degenerate interval sits around a zero median; it is 0 for a
// degenerate interval (all middle samples equal), including a zero median.
func RelCIHalfWidth(s Summary) float64 {
	if s.N < MinCISamples {
		return math.Inf(1)
	}
	w := (s.CI95[1] - s.CI95[0]) / 2
	if w == 0 {
		return 0
	}
	if s.Median == 0 {
		return math.Inf(1)
	}
	return w / math.Abs(s.Median)
}

// TrimHigh drops the samples above median + k*MAD, where MAD is the raw
// (unscaled) median absolute deviation from the median of the finite
// samples. Only the high tail is trimmed because a time can be delayed by
// interference but never made shorter than the work it measures.
//
// For normally distributed data 1.4826 MAD estimates the standard deviation,
// so k = 4.45 is roughly "3 sigma"; timing tails are heavier, so callers
// usually want a larger k. kept preserves the input order (it may be a time
// series) and is a new slice; samples is not modified.
//
// When MAD is 0 (more than half the samples equal, common with a coarse
// timer) the spread is unknown and nothing is dropped. +Inf counts as above
// any threshold; NaN and -Inf are kept for Summarize to count as Invalid.
//
// TrimHigh panics if k is not a positive finite number: that is a
// programming error, not a property of the data.
func TrimHigh(samples []float64, k float64) (kept []float64, dropped int) {
	if !(k > 0) || math.IsInf(k, 0) {
		panic("results.TrimHigh: k must be positive and finite")
	}
	finite := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite = append(finite, v)
		}
	}
	limit := math.Inf(1)
	if len(finite) > 0 {
		med, _ := stats.Median(finite)
		mad, _ := stats.MedianAbsoluteDeviation(finite)
		if mad > 0 {
			limit = med + k*mad
		}
	}
	kept = make([]float64, 0, len(samples))
	for _, v := range samples {
		if v > limit || math.IsInf(v, 1) {
			dropped++
			continue
		}
		kept = append(kept, v)
	}
	return kept, dropped
}

// SummarizeTrimmed is Summarize after TrimHigh(samples, k), with the number of
// trimmed samples (including any +Inf) in Dropped. It panics for a bad k as TrimHigh does.
func SummarizeTrimmed(samples []float64, k float64) Summary {
	kept, dropped := TrimHigh(samples, k)
	s := Summarize(kept)
	s.Dropped = dropped
	return s
}
