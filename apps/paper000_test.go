package apps

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// testStore is a store under test: how to run fn on p application ranks
// with the store.
type testStore struct {
	name string
	run  func(p int, fn func(env Env) error) error
	// pOK says which application rank counts the store can run.
	pOK func(p int) bool
}

func withStore(p int, newStore func(c mpi.Comm) (globalvar.Store, error), fn func(env Env) error) error {
	return local.RunWith(local.Options{Timeout: 120 * time.Second}, p, func(c mpi.Comm) error {
		s, err := newStore(c)
		if err != nil {
			return err
		}
		if err := fn(Env{Comm: c, Store: s, Seed: 5}); err != nil {
			return err
		}
		return s.Close()
	})
}

// testStores: the direct store, fixed home, the 4-ary access tree, and the
// emulated butterfly BF(2) (4 application ranks, 12 service ranks).
var testStores = []testStore{
	{"direct", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) { return directstore.New(c, directstore.Config{}) }, fn)
	}, func(int) bool { return true }},
	{"fixed-home", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) {
			return divalib.New(c, divalib.Config{Strategy: divalib.FixedHome, Seed: 3})
		}, fn)
	}, func(int) bool { return true }},
	{"tree-4", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) {
			return divalib.New(c, divalib.Config{Variant: divalib.Tree4, Seed: 3})
		}, fn)
	}, func(int) bool { return true }},
	{"BF(2)", func(p int, fn func(Env) error) error {
		top, err := emulate.Parse("BF(2)")
		if err != nil {
			return err
		}
		cfg := emulate.Config{Topology: top, Seed: 3, StallTimeout: 30 * time.Second}
		return local.RunWith(local.Options{Timeout: 120 * time.Second}, top.Ranks(), func(w mpi.Comm) error {
			return emulate.Run(w, cfg, func(s *emulate.Store) error {
				return fn(Env{Comm: s.AppComm(), Store: s, Seed: 5})
			})
		})
	}, func(p int) bool { return p == 4 }},
}

// runApp runs app twice (so repeated runs over one setup are covered) on
// every rank and returns rank 0's outcome of the second run.
func runApp(ts testStore, p int, app App) (Outcome, error) {
	var mu sync.Mutex
	var out0 Outcome
	err := ts.run(p, func(env Env) error {
		if err := app.Check(env.Comm.Size()); err != nil {
			return err
		}
		if su, ok := app.(Setupper); ok {
			st, err := su.Setup(env)
			if err != nil {
				return err
			}
			env.State = st
		}
		var out Outcome
		for range 2 {
			var err error
			if out, err = app.Run(env); err != nil {
				return err
			}
		}
		if env.Comm.Rank() == 0 {
			mu.Lock()
			out0 = out
			mu.Unlock()
		}
		return nil
	})
	return out0, err
}

// count sums the counts of a phase's workload items.
func count(items []results.WorkItem) float64 {
	s := 0.0
	for _, it := range items {
		s += it.Count
	}
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func TestMatMul(t *testing.T) {
	for _, ts := range testStores {
		for _, p := range []int{1, 2, 4, 8} {
			if !ts.pOK(p) {
				continue
			}
			for _, sync := range []bool{false, true} {
				app := MatMul{N: 16, Access: Access{K: 2, L: 32}, Sync: sync}
				t.Run(fmt.Sprintf("%s/p%d/sync=%v", ts.name, p, sync), func(t *testing.T) {
					out, err := runApp(ts, p, app)
					if err != nil {
						t.Fatal(err)
					}
					// T_MM = (p+2) ceil((n^2/p)/(k l)) with 4-byte integers.
					want := float64((p + 2) * ceilDiv(4*16*16/p, 2*32))
					if got := count(out.Workload[PhaseMM]); got != want {
						t.Errorf("T_MM count %v, want (p+2) ceil(4 n^2/(p k l)) = %v", got, want)
					}
					if sync != (out.Phases.Kind(PhaseSync) == KindSync) {
						t.Errorf("sync phase %q with Sync %v", out.Phases.Kind(PhaseSync), sync)
					}
				})
			}
		}
	}
}

// TestMeasureMatMul: Measure sets the application up once and repeats it.
func TestMeasureMatMul(t *testing.T) {
	err := withStore(4, func(c mpi.Comm) (globalvar.Store, error) { return directstore.New(c, directstore.Config{}) }, func(env Env) error {
		recs, err := Measure(env, MatMul{N: 32, Access: Access{K: 4, L: 64}, Sync: true}, patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: 1}, results.Meta{Backend: "local"})
		if err != nil {
			return err
		}
		if len(recs) != 3 {
			return fmt.Errorf("%d records, want mm, sync, compute", len(recs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
