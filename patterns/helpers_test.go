package patterns

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// quickReps are repetitions for unit tests: one warm-up, three timed.
var quickReps = Reps{Warmup: 1, MinReps: 3, MaxReps: 3, MaxTime: 30}

// runRanks runs fn on n goroutine ranks and returns every rank's Measurement.
func runRanks(t *testing.T, n int, fn func(c mpi.Comm) (Measurement, error)) []Measurement {
	t.Helper()
	out := make([]Measurement, n)
	var mu sync.Mutex
	err := local.RunWith(local.Options{Timeout: 2 * time.Minute, DetectDeadlock: true}, n, func(c mpi.Comm) error {
		r, err := fn(c)
		mu.Lock()
		out[c.Rank()] = r
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkMeasured checks what every measuring pattern must deliver: the
// same summary on every rank, n timed repetitions, positive finite times.
func checkMeasured(t *testing.T, rs []Measurement, n int) {
	t.Helper()
	for r, res := range rs {
		if res.Summary.N != n {
			t.Errorf("rank %d: %d samples, want %d", r, res.Summary.N, n)
		}
		if !(res.Summary.Median > 0) || math.IsInf(res.Summary.Max, 0) {
			t.Errorf("rank %d: summary %+v", r, res.Summary)
		}
		if res.Summary != rs[0].Summary {
			t.Errorf("rank %d summary differs from rank 0's", r)
		}
		for k, v := range res.Counters {
			if rs[0].Counters[k] != v {
				t.Errorf("rank %d counter %s = %v, rank 0 has %v", r, k, v, rs[0].Counters[k])
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
