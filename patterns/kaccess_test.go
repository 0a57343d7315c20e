package patterns

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestKAccessHotSpot checks that the drawn k-accesses realise the receive
// hot spot h of paper 000, section 5, as asked: in every step exactly H =
// round(h p) ranks address the hot module, every other module gets at most
// one packet (so the realised h is H/p), ranks do not address themselves
// (except in a hot spot of all p ranks), and with es the hot spots repeat
// in all a accesses.
func TestKAccessHotSpot(t *testing.T) {
	tests := []struct {
		p, k, a int
		h       float64
		es      bool
	}{
		{2, 1, 1, 0.5, false},
		{2, 2, 3, 1, true},
		{4, 1, 1, 0.25, false},
		{4, 3, 4, 0.5, false},
		{4, 3, 4, 0.5, true},
		{4, 2, 2, 0.75, true},
		{4, 2, 5, 1, false},
		{8, 5, 7, 0.375, true},
		{16, 4, 3, 1.0 / 16, false},
		{1024, 2, 2, 0.5, true},
		{1024, 3, 2, 0.1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("p%d_k%d_a%d_h%g_es%v", tt.p, tt.k, tt.a, tt.h, tt.es), func(t *testing.T) {
			rng := newRand(int64(tt.p*7 + tt.a))
			hot := HotRanks(tt.h, tt.p)
			pl := newAccessPlan(tt.p, tt.k, tt.a)
			drawKAccess(rng, pl, hot, tt.es)
			if got, want := pl.maxShare(), float64(hot)/float64(tt.p); !near(got, want) || math.Abs(want-tt.h) > 0.5/float64(tt.p) {
				t.Fatalf("realised h = %v, want %v (asked %v)", got, want, tt.h)
			}
			hotModules := make([][]int, tt.a)
			hotRanks := make([][]int, tt.a)
			for x := 0; x < tt.a; x++ {
				for j := 0; j < tt.k; j++ {
					load := make([]int, tt.p)
					for i := 0; i < tt.p; i++ {
						v := pl.row(x, i)[j]
						if v < 0 || v >= tt.p {
							t.Fatalf("rank %d: target %d", i, v)
						}
						load[v]++
					}
					var big []int
					for mod, n := range load {
						if n > 1 {
							big = append(big, mod)
						}
					}
					if hot > 1 {
						if len(big) != 1 || load[big[0]] != hot {
							t.Fatalf("access %d step %d: loads %v, want one module with %d", x, j, load, hot)
						}
						hotModules[x] = append(hotModules[x], big[0])
						var rs []int
						for i := 0; i < tt.p; i++ {
							if pl.row(x, i)[j] == big[0] {
								rs = append(rs, i)
							}
						}
						hotRanks[x] = append(hotRanks[x], rs...)
					} else if len(big) != 0 {
						t.Fatalf("h = 1/p but loads %v", load)
					}
					for i := 0; i < tt.p; i++ {
						if pl.row(x, i)[j] == i && hot < tt.p {
							t.Fatalf("rank %d addresses itself", i)
						}
					}
				}
			}
			if hot > 1 && tt.a > 1 {
				same := true
				for x := 1; x < tt.a; x++ {
					same = same && slices.Equal(hotModules[x], hotModules[0]) && slices.Equal(hotRanks[x], hotRanks[0])
				}
				if tt.es && !same {
					t.Errorf("es: hot spots differ between accesses: %v", hotModules)
				}
				if !tt.es && same && tt.p >= 8 {
					t.Errorf("without es the hot spots should change: %v", hotModules)
				}
			}
		})
	}
}

// TestKAccessRun runs k-accesses on goroutine ranks with validation: every
// rank issues a k requests per repetition, each answered once, and the
// record's h counter is the one asked.
func TestKAccessRun(t *testing.T) {
	tests := []struct {
		name string
		p    int
		ka   KAccess
	}{
		{"h1p_a1", 4, KAccess{K: 2, L: 32, H: 0.25, A: 1}},
		{"h05_a3_es", 4, KAccess{K: 2, L: 64, H: 0.5, A: 3, ES: true}},
		{"h1_a2", 4, KAccess{K: 1, L: 16, H: 1, A: 2}},
		{"write_h06_a2", 5, KAccess{K: 3, L: 8, H: 0.6, A: 2, Op: AccessWrite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka := tt.ka
			ka.Seed, ka.Validate, ka.Reps = 3, true, quickReps
			rs := runRanks(t, tt.p, func(c mpi.Comm) (Measurement, error) { return ka.Run(c) })
			checkMeasured(t, rs, quickReps.MinReps)
			ctr := rs[0].Counters
			hot := HotRanks(ka.H, tt.p)
			if ctr[CounterHotRanks] != float64(hot) || !near(ctr[CounterHRealised], float64(hot)/float64(tt.p)) {
				t.Errorf("hot ranks %v, h %v; want %d, %v", ctr[CounterHotRanks], ctr[CounterHRealised], hot, float64(hot)/float64(tt.p))
			}
			want := float64(2 * tt.p * ka.K * ka.A)
			if !near(ctr[CounterMsgsTotal], want) {
				t.Errorf("%v messages per repetition, want %v", ctr[CounterMsgsTotal], want)
			}
			var recv float64
			for r, res := range rs {
				recv += res.Mine.MsgsRecv
				// Each rank sends k a requests (plus the answers it serves).
				if res.Mine.MsgsRecv < float64(ka.K*ka.A) {
					t.Errorf("rank %d received %v messages, want >= %d answers", r, res.Mine.MsgsRecv, ka.K*ka.A)
				}
			}
			if !near(recv, want) {
				t.Errorf("%v messages received per repetition, want %v", recv, want)
			}
		})
	}
}

func TestKAccessCheck(t *testing.T) {
	bad := []struct {
		name string
		p    int
		ka   KAccess
	}{
		{"h below 1/p", 4, KAccess{K: 1, A: 1, H: 0.2}},
		{"h above 1", 4, KAccess{K: 1, A: 1, H: 1.1}},
		{"a0", 4, KAccess{K: 1, A: 0, H: 0.5}},
		{"k0", 4, KAccess{K: 0, A: 1, H: 0.5}},
		{"l negative", 4, KAccess{K: 1, A: 1, H: 0.5, L: -2}},
	}
	for _, tt := range bad {
		if err := tt.ka.Check(tt.p); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if err := (KAccess{K: 1, A: 1, H: 1.0 / 3}).Check(3); err != nil {
		t.Errorf("h = 1/3 on 3 ranks: %v", err)
	}
}
