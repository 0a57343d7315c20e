package permsched_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// quickReps keeps the executor tests fast: the data, not the time, is
// under test.
var quickReps = patterns.Reps{Warmup: -1, MinReps: 2, MaxReps: 2}

// noWarmup is quickReps' warm-up as experiment 2's configuration says it.
var noWarmup = patterns.RepWarmup{Warmup: opts.Int(0)}

// execMatrices are the executor's test instances: every shape the
// schedulers must handle, small enough for goroutine ranks.
func execMatrices(t *testing.T) []struct {
	name string
	m    *permsched.Matrix
} {
	t.Helper()
	mk := func(m *permsched.Matrix, err error) *permsched.Matrix {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return []struct {
		name string
		m    *permsched.Matrix
	}{
		{"fig7 n=8 d=3 (self-sends)", mk(permsched.Fig7(8, 3, 1))},
		{"uniform n=6 d=4 (n not a power of two)", mk(permsched.UniformOut(6, 4, 2))},
		{"skewed n=7 d=2", mk(permsched.Skewed(7, 2, 3, permsched.SkewConfig{}))},
		{"multigraph n=5", mk(permsched.NewMatrix(5, [][]int32{{1, 1, 1, 4}, {0, 0}, nil, {3, 2, 2}, {0}}))},
		{"samplesort trace n=4 (weighted)", mk(permsched.SampleSortTrace(4, 300, 4))},
		{"n=1 self", mk(permsched.NewMatrix(1, [][]int32{{0, 0}}))},
		{"empty n=3", mk(permsched.NewMatrix(3, nil))},
	}
}

// TestExchangeDelivers runs every scheduler's schedule, sequential and
// runtime-parallel, and MPI_Alltoallv, over goroutine ranks and checks that
// every byte arrives (TimeExchange verifies each repetition).
func TestExchangeDelivers(t *testing.T) {
	for _, tc := range execMatrices(t) {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			err := local.Run(m.N(), func(c mpi.Comm) error {
				for _, size := range []int{0, 1, 100, 5000} {
					for _, s := range permsched.Schedulers() {
						sc, err := s.Schedule(m, 7)
						if err != nil {
							return err
						}
						x, err := permsched.NewExchange(c, sc, size)
						if err != nil {
							return err
						}
						if _, err := permsched.TimeExchange(c, x, quickReps); err != nil {
							return err
						}
						// Runtime scheduling from the ranks' own rows.
						pc, err := permsched.ScheduleParallel(c, s, m.Row(c.Rank()), m.RowBytes(c.Rank()), 7)
						if err != nil {
							return err
						}
						if err := permsched.Validate(pc); err != nil {
							return err
						}
						px, err := permsched.NewExchange(c, pc, size)
						if err != nil {
							return err
						}
						if _, err := permsched.TimeExchange(c, px, quickReps); err != nil {
							return err
						}
					}
					x, err := permsched.NewAlltoallv(c, m, size)
					if err != nil {
						return err
					}
					if _, err := permsched.TimeExchange(c, x, quickReps); err != nil {
						return err
					}
					if m.Weighted() {
						break // sizes come from the matrix
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestScheduleParallelMatchesSequential: runtime scheduling produces, phase
// by phase, the same (source, destination) pairs as the static scheduler
// with the same seed, on every rank.
func TestScheduleParallelMatchesSequential(t *testing.T) {
	for _, tc := range execMatrices(t) {
		for _, s := range permsched.Schedulers() {
			want, err := s.Schedule(tc.m, 11)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			err = local.Run(tc.m.N(), func(c mpi.Comm) error {
				got, err := permsched.ScheduleParallel(c, s, tc.m.Row(c.Rank()), tc.m.RowBytes(c.Rank()), 11)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				if got.Phases() != want.Phases() {
					t.Errorf("%s %s rank %d: %d phases, sequential %d", tc.name, s.Name(), c.Rank(), got.Phases(), want.Phases())
					return nil
				}
				for k := 0; k < got.Phases(); k++ {
					g, w := got.Pairs(k), want.Pairs(k)
					slices.SortFunc(g, cmpPair)
					slices.SortFunc(w, cmpPair)
					if !slices.Equal(g, w) {
						t.Errorf("%s %s rank %d phase %d: %v, sequential %v", tc.name, s.Name(), c.Rank(), k, g, w)
						break
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func cmpPair(a, b permsched.Pair) int {
	if a.Src != b.Src {
		return a.Src - b.Src
	}
	return a.Dst - b.Dst
}

// TestExchangeSizeMismatch: a schedule for n ranks on a communicator of
// another size is refused with a *SizeError before anything is sent.
func TestExchangeSizeMismatch(t *testing.T) {
	m, err := permsched.Fig7(4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := permsched.CGM{}.Schedule(m, 1)
	err = local.Run(3, func(c mpi.Comm) error {
		_, err := permsched.NewExchange(c, sc, 8)
		var se *permsched.SizeError
		if !errors.As(err, &se) || se.Matrix != 4 || se.Comm != 3 {
			t.Errorf("NewExchange on 3 ranks: %v, want SizeError{4, 3}", err)
		}
		_, err = permsched.NewAlltoallv(c, m, 8)
		if !errors.As(err, &se) {
			t.Errorf("NewAlltoallv on 3 ranks: %v, want SizeError", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVerifyDetectsCorruption: the data check is not vacuous.
func TestVerifyDetectsCorruption(t *testing.T) {
	m, err := permsched.Fig7NoSelf(4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := permsched.Exact{}.Schedule(m, 1)
	err = local.Run(4, func(c mpi.Comm) error {
		x, err := permsched.NewExchange(c, sc, 64)
		if err != nil {
			return err
		}
		if err := x.Run(); err != nil {
			return err
		}
		if err := x.Verify(); err != nil {
			t.Errorf("rank %d: clean run fails verification: %v", c.Rank(), err)
		}
		x.Clear()
		if err := x.Verify(); err == nil {
			t.Errorf("rank %d: cleared buffer passes verification", c.Rank())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExperimentsLocal runs experiments 2 and 3 end to end over 8
// goroutine ranks: records come out, the tables print, the cost model fits.
func TestExperimentsLocal(t *testing.T) {
	var mu sync.Mutex
	var recs []results.Record
	err := local.Run(8, func(c mpi.Comm) error {
		return permsched.RunComm(c, permsched.CommConfig{
			Densities: []int{2, 4, 7},
			Sizes:     []int{16, 1024, 8192},
			RepWarmup: noWarmup,
			MinReps:   quickReps.MinReps,
			MaxReps:   quickReps.MaxReps,
			SchedReps: quickReps,
		}, func(r results.Record) error {
			if c.Rank() == 0 {
				mu.Lock()
				recs = append(recs, r)
				mu.Unlock()
			}
			return r.Validate()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// 3 perm1 + 3 d x (5 schedule + 3 sizes x 6 methods).
	if want := 3 + 3*(5+3*6); len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	var out bytes.Buffer
	if err := permsched.WriteCommTables(&out, recs, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"d = 7", "Alltoallv", "EXACT", "comp", "perm", "Table 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("comm tables lack %q:\n%s", want, out.String())
		}
	}
	t.Log(out.String())
	cm, err := permsched.FitCostModel(recs, 1)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := permsched.WriteBreakeven(&out, cm, recs, true); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "eq. 5") || !strings.Contains(out.String(), "| 8K") {
		t.Errorf("break-even output:\n%s", out.String())
	}
	for _, r := range cm.Records([]int{16, 8192}, results.Meta{}) {
		if err := r.Validate(); err != nil {
			t.Errorf("cost-model record: %v", err)
		}
	}
}
