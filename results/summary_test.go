package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// seq returns 1, 2, ..., n.
func seq(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	return x
}

func TestMedianCIRanks(t *testing.T) {
	// Hand-computed from lo = floor((n - 1.96 sqrt n)/2),
	// hi = ceil(1 + (n + 1.96 sqrt n)/2), clamped to [1, n].
	tests := []struct {
		n, lo, hi int
	}{
		{0, 0, 0},
		{1, 1, 1},   // lo = floor(-0.48) -> 1, hi = ceil(2.48) -> 1
		{2, 1, 2},   // floor(-0.39) -> 1, ceil(3.39) -> 2
		{6, 1, 6},   // floor(0.60) = 0 -> 1, ceil(6.40) = 7 -> 6
		{10, 1, 10}, // floor(1.90) = 1, ceil(9.10) = 10
		{20, 5, 16}, // 1.96 sqrt 20 = 8.765: floor(5.62), ceil(15.38)
		{100, 40, 61},
		{1000, 469, 532}, // 1.96 sqrt 1000 = 61.98: floor(469.01), ceil(531.99)
	}
	for _, tc := range tests {
		lo, hi := MedianCIRanks(tc.n)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("MedianCIRanks(%d) = %d, %d; want %d, %d", tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestSummarizeKnownAnswers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name    string
		samples []float64
		want    Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{3}, Summary{N: 1, Min: 3, Median: 3, Mean: 3, Max: 3, P90: 3, P99: 3, CI95: [2]float64{3, 3}}},
		// p90: rank 0.9*(2-1) = 0.9 -> 1 + 0.9*(3-1) = 2.8; p99 -> 2.98.
		{"two", []float64{3, 1}, Summary{N: 2, Min: 1, Median: 2, Mean: 2, Max: 3, P90: 2.8, P99: 2.98, CI95: [2]float64{1, 3}}},
		// Unsorted input; p90 rank 0.9*4 = 3.6 -> 4 + 0.6*(10-4) = 7.6;
		// p99 rank 3.96 -> 4 + 0.96*6 = 9.76.
		{"five", []float64{4, 1, 10, 2, 3}, Summary{N: 5, Min: 1, Median: 3, Mean: 4, Max: 10, P90: 7.6, P99: 9.76, CI95: [2]float64{1, 10}}},
		// p90 rank 8.1 -> 9.1; p99 rank 8.91 -> 9.91; CI ranks 1, 10.
		{"1..10", seq(10), Summary{N: 10, Min: 1, Median: 5.5, Mean: 5.5, Max: 10, P90: 9.1, P99: 9.91, CI95: [2]float64{1, 10}}},
		// CI ranks 5 and 16.
		{"1..20", seq(20), Summary{N: 20, Min: 1, Median: 10.5, Mean: 10.5, Max: 20, P90: 18.1, P99: 19.81, CI95: [2]float64{5, 16}}},
		// CI ranks 40 and 61; p90 rank 89.1 -> 90.1; p99 rank 98.01 -> 99.01.
		{"1..100", seq(100), Summary{N: 100, Min: 1, Median: 50.5, Mean: 50.5, Max: 100, P90: 90.1, P99: 99.01, CI95: [2]float64{40, 61}}},
		{"ties", []float64{2, 2, 2, 2, 2, 2}, Summary{N: 6, Min: 2, Median: 2, Mean: 2, Max: 2, P90: 2, P99: 2, CI95: [2]float64{2, 2}}},
		{"non-finite filtered and counted", []float64{nan, 1, inf, 3, -inf, 2},
			Summary{N: 3, Min: 1, Median: 2, Mean: 2, Max: 3, P90: 2.8, P99: 2.98, CI95: [2]float64{1, 3}, Invalid: 3}},
		{"all non-finite", []float64{nan, inf}, Summary{Invalid: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.samples)
			got := Summarize(tc.samples)
			if !summaryClose(got, tc.want, 1e-12) {
				t.Errorf("Summarize(%v)\n got %+v\nwant %+v", tc.samples, got, tc.want)
			}
			if !slices.EqualFunc(in, tc.samples, sameFloat) {
				t.Errorf("Summarize modified its input: %v -> %v", in, tc.samples)
			}
		})
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// summaryClose compares the float fields within a relative tolerance and the
// counts exactly.
func summaryClose(a, b Summary, tol float64) bool {
	close := func(x, y float64) bool { return math.Abs(x-y) <= tol*math.Max(1, math.Max(math.Abs(x), math.Abs(y))) }
	return a.N == b.N && a.Dropped == b.Dropped && a.Invalid == b.Invalid &&
		close(a.Min, b.Min) && close(a.Median, b.Median) && close(a.Mean, b.Mean) && close(a.Max, b.Max) &&
		close(a.P90, b.P90) && close(a.P99, b.P99) && close(a.CI95[0], b.CI95[0]) && close(a.CI95[1], b.CI95[1])
}

// TestMedianCIExactCoverage checks the rank formula against the exact
// binomial coverage P(lo <= B <= hi-1), B ~ Binomial(n, 1/2): the interval
// [X(lo), X(hi)] covers the median unless fewer than lo or at least hi
// samples fall below it. The formula is an approximation; this pins down that
// it never drops below 95% where a 95% interval exists.
func TestMedianCIExactCoverage(t *testing.T) {
	lowest, lowestN := 1.0, 0
	for n := MinCISamples; n <= 2000; n++ {
		lo, hi := MedianCIRanks(n)
		c := binomialHalfMass(n, lo, hi-1)
		if c < lowest {
			lowest, lowestN = c, n
		}
	}
	if lowest < 0.95 {
		t.Errorf("exact coverage %.4f < 0.95 at n = %d", lowest, lowestN)
	}
	t.Logf("lowest exact coverage for n in [%d, 2000]: %.4f at n = %d", MinCISamples, lowest, lowestN)
	// Below MinCISamples even [min, max] cannot reach 95%.
	if c := binomialHalfMass(MinCISamples-1, 1, MinCISamples-2); c >= 0.95 {
		t.Errorf("coverage of [min, max] at n = %d is %.4f; MinCISamples is too large", MinCISamples-1, c)
	}
}

// binomialHalfMass is P(a <= B <= b) for B ~ Binomial(n, 1/2), summed in log
// space because 2^-n underflows for large n.
func binomialHalfMass(n, a, b int) float64 {
	lgN, _ := math.Lgamma(float64(n + 1))
	var p float64
	for k := a; k <= b; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		p += math.Exp(lgN - lk - lnk - float64(n)*math.Ln2)
	}
	return p
}

// TestMedianCICoverage is the simulation check: over many seeded samples of
// a distribution with a known median, the CI must cover it about as often as
// the exact binomial coverage says (0.965 at n = 100, 0.984 at n = 30):
// within 4 binomial standard deviations of it (sd ~ 0.004 for 2000 trials),
// and for n = 100 inside [0.92, 0.985].
func TestMedianCICoverage(t *testing.T) {
	const trials = 2000
	tests := []struct {
		name   string
		n      int
		draw   func(*rand.Rand) float64
		median float64
	}{
		// Exponential(1): median ln 2. Times are right-skewed like this.
		{"exponential n=100", 100, func(r *rand.Rand) float64 { return r.ExpFloat64() }, math.Ln2},
		// Lognormal(0, 1): median 1.
		{"lognormal n=100", 100, func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }, 1},
		{"uniform n=30", 30, func(r *rand.Rand) float64 { return r.Float64() }, 0.5},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(42, uint64(i)))
			x := make([]float64, tc.n)
			covered := 0
			for range trials {
				for j := range x {
					x[j] = tc.draw(rng)
				}
				s := Summarize(x)
				if s.CI95[0] <= tc.median && tc.median <= s.CI95[1] {
					covered++
				}
			}
			frac := float64(covered) / trials
			lo, hi := MedianCIRanks(tc.n)
			exact := binomialHalfMass(tc.n, lo, hi-1)
			sd := math.Sqrt(exact * (1 - exact) / trials)
			t.Logf("coverage %.4f over %d trials (exact %.4f)", frac, trials, exact)
			if math.Abs(frac-exact) > 4*sd {
				t.Errorf("coverage %.4f; want %.4f ± %.4f", frac, exact, 4*sd)
			}
			if tc.n == 100 && (frac < 0.92 || frac > 0.985) {
				t.Errorf("coverage %.4f outside [0.92, 0.985]", frac)
			}
		})
	}
}

func TestRelCIHalfWidth(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		s    Summary
		want float64
	}{
		{"empty", Summary{}, inf},
		{"too few for 95%", Summary{N: 5, Median: 1, CI95: [2]float64{1, 1}}, inf},
		{"typical", Summary{N: 100, Median: 10, CI95: [2]float64{9, 11}}, 0.1},
		{"asymmetric", Summary{N: 100, Median: 10, CI95: [2]float64{9.5, 11.5}}, 0.1},
		{"degenerate", Summary{N: 50, Median: 2, CI95: [2]float64{2, 2}}, 0},
		{"zero median, zero width", Summary{N: 50}, 0},
		{"zero median, some width", Summary{N: 50, CI95: [2]float64{-1, 1}}, inf},
		{"negative median", Summary{N: 50, Median: -4, CI95: [2]float64{-5, -3}}, 0.25},
	}
	for _, tc := range tests {
		if got := RelCIHalfWidth(tc.s); got != tc.want && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: RelCIHalfWidth = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestTrimHigh(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name        string
		samples     []float64
		k           float64
		kept        []float64
		wantDropped int
	}{
		// median 3, MAD 1: limit 3 + 3*1 = 6; 100 goes, order is kept.
		{"one outlier", []float64{5, 1, 100, 2, 3, 4}, 3, []float64{5, 1, 2, 3, 4}, 1},
		// median 3.5, |dev| = 1.5 .5 .5 1.5 2.5 96.5 -> MAD 1.5; limit 3.5+2*1.5 = 6.5.
		{"low tail kept", []float64{2, 3, 4, 5, 6, 100}, 2, []float64{2, 3, 4, 5, 6}, 1},
		{"nothing to drop", []float64{1, 2, 3}, 3, []float64{1, 2, 3}, 0},
		// MAD 0: spread unknown, keep everything.
		{"MAD zero", []float64{1, 1, 1, 1, 50}, 3, []float64{1, 1, 1, 1, 50}, 0},
		{"+Inf dropped, NaN kept", []float64{1, 2, 3, inf, nan}, 3, []float64{1, 2, 3, nan}, 1},
		{"empty", nil, 3, []float64{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, dropped := TrimHigh(tc.samples, tc.k)
			if !slices.EqualFunc(kept, tc.kept, sameFloat) || dropped != tc.wantDropped {
				t.Errorf("TrimHigh(%v, %v) = %v, %d; want %v, %d", tc.samples, tc.k, kept, dropped, tc.kept, tc.wantDropped)
			}
		})
	}
}

func TestSummarizeTrimmedCountsDropped(t *testing.T) {
	s := SummarizeTrimmed([]float64{5, 1, 100, 2, 3, 4}, 3)
	want := Summarize([]float64{5, 1, 2, 3, 4})
	want.Dropped = 1
	if !summaryClose(s, want, 0) {
		t.Errorf("SummarizeTrimmed = %+v; want %+v", s, want)
	}
}

func TestTrimHighPanicsOnBadK(t *testing.T) {
	for _, k := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("TrimHigh(k=%v) did not panic", k)
				}
			}()
			TrimHigh([]float64{1, 2, 3}, k)
		}()
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"ties", []float64{2, 2, 2, 9}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := Median(in); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("Median modified its input: %v", in)
			}
			if s := Summarize(tt.in); s.Median != tt.want {
				t.Errorf("Summarize(%v).Median = %v, Median = %v: the two definitions differ", tt.in, s.Median, tt.want)
			}
		})
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}
