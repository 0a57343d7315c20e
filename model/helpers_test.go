package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/results"
)

// rec builds a time record with median y.
func rec(bench string, params results.Params, ranks int, y float64) results.Record {
	return results.Record{
		Schema: results.SchemaVersion, Bench: bench, Params: params, Ranks: ranks, Unit: "s",
		Summary: results.Summary{N: 1, Min: y, Median: y, Mean: y, Max: y, P90: y, P99: y, CI95: [2]float64{y, y}},
	}
}

// sizes returns 2^lo .. 2^hi.
func sizes(lo, hi int) []float64 {
	var out []float64
	for e := lo; e <= hi; e++ {
		out = append(out, math.Ldexp(1, e))
	}
	return out
}

// noisy multiplies y by (1 + sigma N(0,1)): relative noise, the error
// model the default relative weighting assumes.
func noisy(rng *rand.Rand, y, sigma float64) float64 {
	if sigma == 0 {
		return y
	}
	return y * (1 + sigma*rng.NormFloat64())
}

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !scalar.EqualWithinAbsOrRel(got, want, tol, tol) {
		t.Errorf("%s = %.10g, want %.10g (tol %g)", name, got, want, tol)
	}
}

func inCI(p Param, v float64) bool { return p.CI95[0] <= v && v <= p.CI95[1] }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
