package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Summarize and TrimHigh take their percentiles, median and MAD from
// github.com/montanaflynn/stats. That library's Percentile has used other
// definitions in other releases (nearest rank; the p(n+1) "type 6"), so a
// dependency upgrade could silently change every P90 and P99 in the
// records. These tests hold the library to the definitions results
// documents, computed here from first principles on random timing-like
// samples.

// type7 is Hyndman & Fan's type 7 percentile of sorted x: with
// h = (p/100)(n-1), x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
func type7(sorted []float64, p float64) float64 {
	h := p / 100 * float64(len(sorted)-1)
	k := int(math.Floor(h))
	if k+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[k] + (h-float64(k))*(sorted[k+1]-sorted[k])
}

// madRaw is the unscaled median absolute deviation from the median.
func madRaw(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	m := type7(s, 50)
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = math.Abs(v - m)
	}
	slices.Sort(d)
	return type7(d, 50)
}

// timingSamples draws n latencies: a floor plus a lognormal body, with a
// few far-out interference spikes, the shape real repetitions have.
func timingSamples(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 1e-6 + 2e-7*math.Exp(0.5*r.NormFloat64())
		if r.IntN(20) == 0 {
			x[i] += 1e-4 * r.Float64()
		}
	}
	return x
}

func TestSummarizeMatchesType7(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2024))
	const tol = 1e-12 // relative: the same arithmetic, possibly reordered
	close := func(a, b float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }
	for _, n := range []int{1, 2, 3, 6, 7, 10, 31, 100, 1001} {
		for trial := range 20 {
			x := timingSamples(r, n)
			s := Summarize(x)
			sorted := slices.Sorted(slices.Values(x))
			want := map[string][2]float64{
				"median": {s.Median, type7(sorted, 50)},
				"p90":    {s.P90, type7(sorted, 90)},
				"p99":    {s.P99, type7(sorted, 99)},
			}
			for name, v := range want {
				if !close(v[0], v[1]) {
					t.Errorf("n=%d trial %d: %s = %.15g; type 7 gives %.15g", n, trial, name, v[0], v[1])
				}
			}
		}
	}
}

func TestTrimHighMatchesMAD(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 99))
	for _, n := range []int{5, 20, 200} {
		for _, k := range []float64{3, 5, 10} {
			for trial := range 20 {
				x := timingSamples(r, n)
				limit := type7(slices.Sorted(slices.Values(x)), 50) + k*madRaw(x)
				var want []float64
				for _, v := range x {
					if v <= limit {
						want = append(want, v)
					}
				}
				kept, dropped := TrimHigh(x, k)
				if !slices.Equal(kept, want) || dropped != len(x)-len(want) {
					t.Errorf("n=%d k=%g trial %d: TrimHigh kept %d, dropped %d; median + k*MAD = %g keeps %d",
						n, k, trial, len(kept), dropped, limit, len(want))
				}
			}
		}
	}
}
