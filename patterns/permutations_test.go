package patterns

import (
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestPermutationsRun: exactly Count permutations are timed, each rank
// sends and receives one message per permutation, the data arrive, and the
// ratios of paper 002's Table 1 bracket 1.
func TestPermutationsRun(t *testing.T) {
	for _, p := range []int{2, 5} {
		const count = 25
		rs := runRanks(t, p, func(c mpi.Comm) (Measurement, error) {
			return Permutations{Bytes: 40, Count: count, Seed: 11, Validate: true, Reps: Reps{Warmup: 2}}.Run(c)
		})
		checkMeasured(t, rs, count)
		if rs[0].Stop != results.StopFixed {
			t.Errorf("p=%d: stop %q, want %q", p, rs[0].Stop, results.StopFixed)
		}
		for r, res := range rs {
			if res.Mine != (Counts{1, 1, 40, 40}) {
				t.Errorf("p=%d rank %d: %+v per permutation", p, r, res.Mine)
			}
		}
		hi, lo := PermutationRatios(rs[0])
		if hi < 1 || lo > 1 || lo <= 0 {
			t.Errorf("p=%d: max/ave %v, min/ave %v", p, hi, lo)
		}
	}
	if err := (Permutations{}).Check(1); err == nil {
		t.Error("one rank: no error")
	}
}
