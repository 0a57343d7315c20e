package apps

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestMultigridVerifies(t *testing.T) {
	for _, tc := range []struct {
		p, n, iters int
		sync        bool
	}{
		{1, 15, 4, false}, {2, 15, 4, false}, {4, 31, 6, false}, {4, 31, 6, true},
		{9, 15, 12, false}, {16, 7, 20, true}, {3, 1, 3, false},
	} {
		t.Run(fmt.Sprintf("p=%d/n=%d/sync=%v", tc.p, tc.n, tc.sync), func(t *testing.T) {
			m := &Multigrid{N: tc.n, Iters: tc.iters, Sync: tc.sync}
			outs, errs := runMP(t, tc.p, m, 0)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			kinds := map[string]string{"exchange": KindComm, "vcycle": KindComp}
			if tc.sync {
				kinds["barrier"] = KindSync
			}
			for name, kind := range kinds {
				if got := outs[0].Phases.Kind(name); got != kind {
					t.Errorf("phase %s: kind %q, want %q", name, got, kind)
				}
			}
		})
	}
}

// TestMultigridConverges: block Jacobi in time with exact plane solves is
// exact after p iterations (plane i is final once plane i-1 is); with
// V-cycles the residual keeps falling to the V-cycle's contraction.
func TestMultigridConverges(t *testing.T) {
	const p = 4
	m := &Multigrid{N: 31, Iters: 3 * p, Cycles: 2}
	o := m.oracle(p)
	first, last := o.history[0], o.history[len(o.history)-1]
	if !(last < 1e-6*first) {
		t.Errorf("residual %g -> %g after %d iterations: want a reduction by 1e6", first, last, m.Iters)
	}
	for k := 1; k < len(o.history); k++ {
		if o.history[k] > o.history[k-1]*1.0001 && o.history[k] > 1e-12*first {
			t.Errorf("iteration %d: residual rose from %g to %g", k+1, o.history[k-1], o.history[k])
		}
	}
	// The steady lid profile at t = Period/4 is positive inside: the
	// solution of plane 3 (t = 4 Dt = Period/4) must be.
	for _, v := range o.planes[3] {
		if !(v > 0) || math.IsNaN(v) {
			t.Fatalf("plane 3 has a value %g; the heated lid makes every interior value positive", v)
		}
	}
}

func TestMultigridCheck(t *testing.T) {
	for _, tc := range []struct {
		m    *Multigrid
		want string
	}{
		{&Multigrid{N: 16, Iters: 1}, "2^k - 1"},
		{&Multigrid{N: 0, Iters: 1}, "--n 0"},
		{&Multigrid{N: 15, Iters: 0}, "--iters 0"},
		{&Multigrid{N: 15, Iters: 1, Dt: -1}, "positive"},
	} {
		if err := tc.m.Check(4); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: Check = %v, want %q", tc.m.Params(), err, tc.want)
		}
	}
}

// TestMultigridDemandNamesIterations: when the values kept per iteration
// outweigh the planes, the need names --iterations, the flag that grows it.
func TestMultigridDemandNamesIterations(t *testing.T) {
	if f := (&Multigrid{N: 127, Iters: 10}).Demand(2).Field; f != "n" {
		t.Errorf("default: field %q, want n", f)
	}
	if f := (&Multigrid{N: 3, Iters: 1 << 20}).Demand(2).Field; f != "iterations" {
		t.Errorf("many iterations: field %q, want iterations", f)
	}
}
