package apps_test

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// dsmStrategies are the strategies the paper-004 applications are tested
// over: the fixed home and every access-tree variant.
var dsmStrategies = []string{"fixed-home", "tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16"}

// withStore runs fn on np local ranks over a divalib store of the named
// strategy (closed afterwards).
func withStore(t *testing.T, np int, strategy string, fn func(c mpi.Comm, s globalvar.Store) error) error {
	t.Helper()
	st, v, err := divalib.ParseStrategy(strategy)
	if err != nil {
		t.Fatal(err)
	}
	return local.Run(np, func(c mpi.Comm) error {
		s, err := divalib.New(c, divalib.Config{Strategy: st, Variant: v, Seed: 7})
		if err != nil {
			return err
		}
		if err := fn(c, s); err != nil {
			return err
		}
		return s.Close()
	})
}

// runTwice sets app up on the store and runs it twice (the second run
// starts from the copies the first left), handing rank 0's outcomes to
// check.
func runTwice(c mpi.Comm, s globalvar.Store, app interface {
	apps.App
	apps.Setupper
}, seed int64, check func(apps.Outcome)) error {
	env := apps.Env{Comm: c, Store: s, Seed: seed}
	var err error
	if env.State, err = app.Setup(env); err != nil {
		return err
	}
	for rep := 0; rep < 2; rep++ {
		out, err := app.Run(env)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			check(out)
		}
	}
	return nil
}

// reversed places wire w on rank p-1-w: a placement other than the
// identity, so that a mix-up of wires and ranks shows.
func reversed(p int) []int {
	out := make([]int, p)
	for w := range out {
		out[w] = p - 1 - w
	}
	return out
}

// TestBitonicStoreSorts sorts over every strategy, twice on one store (the
// second run starts from the copies the first left), and checks the
// outcome: the verification inside Run passed, the phases are timed, the
// workload names one read per step.
func TestBitonicStoreSorts(t *testing.T) {
	for _, tc := range []struct {
		np, m   int
		reverse bool
	}{{4, 1, false}, {4, 33, true}, {16, 64, false}, {16, 5, true}} {
		for _, strategy := range dsmStrategies {
			t.Run(fmt.Sprintf("np%d/m%d/rev%v/%s", tc.np, tc.m, tc.reverse, strategy), func(t *testing.T) {
				cfg := apps.BitonicConfig{Keys: tc.m}
				if tc.reverse {
					cfg.Wires = reversed(tc.np)
				}
				err := withStore(t, tc.np, strategy, func(c mpi.Comm, s globalvar.Store) error {
					return runTwice(c, s, apps.NewBitonicStore(cfg), 11, func(out apps.Outcome) {
						names := out.Phases.Names()
						if len(names) != 3 || out.Phases.Sec(apps.BitonicExchange) <= 0 {
							t.Errorf("phases %v", names)
						}
						d := bits.Len(uint(tc.np)) - 1
						if w := out.Workload[apps.BitonicExchange]; len(w) != 1 || w[0].Count != float64(d*(d+1)/2) || w[0].Params["l"] != 4*tc.m {
							t.Errorf("workload %+v", w)
						}
					})
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestBitonicHandSorts runs the message-passing version and checks its
// congestion against an independent count: every pair exchanges 4m bytes
// both ways along the dimension-order path between the two ranks.
func TestBitonicHandSorts(t *testing.T) {
	for _, tc := range []struct {
		np, m int
		mesh  divalib.Mesh
	}{{4, 8, divalib.Mesh{Rows: 2, Cols: 2}}, {16, 16, divalib.Mesh{Rows: 4, Cols: 4}}, {8, 3, divalib.Mesh{Rows: 1, Cols: 8}}} {
		t.Run(fmt.Sprintf("np%d/m%d", tc.np, tc.m), func(t *testing.T) {
			var got divalib.Congestion
			err := local.Run(tc.np, func(c mpi.Comm) error {
				tr := divalib.NewTraffic(tc.mesh)
				app := apps.NewBitonicHand(apps.BitonicConfig{Keys: tc.m}, tr)
				if _, err := app.Run(apps.Env{Comm: c, Seed: 3}); err != nil {
					return err
				}
				g, err := tr.Reduce(c)
				if c.Rank() == 0 {
					got = g
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			// Independent count: per directed link, the bytes of every
			// message whose row-first path crosses it.
			load := map[[4]int]int64{}
			for _, st := range apps.BitonicSteps(tc.np) {
				for w := 0; w < tc.np; w++ {
					p, _ := st.Partner(w)
					r, cc := w/tc.mesh.Cols, w%tc.mesh.Cols
					pr, pc := p/tc.mesh.Cols, p%tc.mesh.Cols
					for cc != pc {
						d := 1
						if pc < cc {
							d = -1
						}
						load[[4]int{r, cc, r, cc + d}] += int64(4 * tc.m)
						cc += d
					}
					for r != pr {
						d := 1
						if pr < r {
							d = -1
						}
						load[[4]int{r, cc, r + d, cc}] += int64(4 * tc.m)
						r += d
					}
				}
			}
			var want int64
			for _, v := range load {
				want = max(want, v)
			}
			if got.MaxLinkBytes != want {
				t.Errorf("congestion %d bytes, independent count %d", got.MaxLinkBytes, want)
			}
			if d := (bits.Len(uint(tc.np)) - 1); got.Startups != int64(tc.np*d*(d+1)/2) {
				t.Errorf("startups %d, want P d(d+1)/2 = %d", got.Startups, tc.np*d*(d+1)/2)
			}
		})
	}
}

// corrupting is a store whose reads of one variable return a changed key on
// one rank: the verification must catch it on every rank.
type corrupting struct {
	globalvar.Store
	rank, me int
}

func (c corrupting) Read(v globalvar.Var, off int, buf []byte) error {
	err := c.Store.Read(v, off, buf)
	if c.me == c.rank && len(buf) > 0 && strings.HasSuffix(v.Name, "K[0]") {
		// Keys far above the rest: they stay in the reader's upper half.
		for i := range buf {
			buf[i] = 0xff
		}
	}
	return err
}

func TestBitonicDetectsCorruption(t *testing.T) {
	errs := make([]error, 4)
	_ = withStore(t, 4, "tree-4", func(c mpi.Comm, s globalvar.Store) error {
		app := apps.NewBitonicStore(apps.BitonicConfig{Keys: 16})
		_, errs[c.Rank()] = app.Run(apps.Env{Comm: c, Store: corrupting{Store: s, rank: 1, me: c.Rank()}, Seed: 1})
		return nil
	})
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: corruption not detected", r)
		}
	}
}

func TestBitonicCheck(t *testing.T) {
	tests := []struct {
		name string
		cfg  apps.BitonicConfig
		p    int
		want string
	}{
		{"no keys", apps.BitonicConfig{Keys: 0}, 4, "m = 0"},
		{"not a power of two", apps.BitonicConfig{Keys: 4}, 6, "power-of-two"},
		{"short placement", apps.BitonicConfig{Keys: 4, Wires: []int{0, 1}}, 4, "lists 2 ranks"},
		{"not a permutation", apps.BitonicConfig{Keys: 4, Wires: []int{0, 1, 1, 2}}, 4, "not a permutation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check(tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check(%d) = %v, want an error containing %q", tt.p, err, tt.want)
			}
		})
	}
	if err := (apps.BitonicConfig{Keys: 1}).Check(1); err != nil {
		t.Fatal(err)
	}
}

// TestBarnesHutRuns simulates over every strategy (twice on one store: the
// second run starts from the copies the first left) and checks the
// outcome: verified inside Run (zones, root mass, forces within the theta
// limits), every phase timed in the measured steps only, small energy
// drift. Short runs (3 steps, 2 measured): goroutine ranks that poll are
// slow on a loaded machine.
func TestBarnesHutRuns(t *testing.T) {
	type tc struct {
		np, n      int
		strategies []string
	}
	for _, tc := range []tc{{4, 200, dsmStrategies}, {16, 500, []string{"fixed-home", "tree-4"}}} {
		for _, strategy := range tc.strategies {
			t.Run(fmt.Sprintf("np%d/n%d/%s", tc.np, tc.n, strategy), func(t *testing.T) {
				err := withStore(t, tc.np, strategy, func(c mpi.Comm, s globalvar.Store) error {
					app := apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: tc.n, Steps: 3, Measured: 2, Zones: reversed(tc.np)})
					return runTwice(c, s, app, 5, func(out apps.Outcome) {
						want := []string{apps.BHLoad, apps.BHCofm, apps.BHPartition, apps.BHForce, apps.BHForceComp, apps.BHAdvance, apps.BHSize}
						if got := out.Phases.Names(); !slices.Equal(got, want) {
							t.Errorf("phases %v, want %v", got, want)
						}
						if d := out.Counters["energy_drift"]; !(d < 1e-3) {
							t.Errorf("energy drift %v over 3 steps", d)
						}
						if out.Counters["force_err_median"] <= 0 || out.Counters["interactions_per_measured_step"] < float64(tc.n) {
							t.Errorf("counters %v", out.Counters)
						}
					})
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestBarnesHutDiverged: a time step that would send the bodies to
// infinity (1e300), or far enough that the energy is beyond what a record
// holds (1e11), is refused on every rank by the configuration's check
// naming dt and its range, not met with the pool of cells used up by an
// octree of infinite space or a record refused after the run. (Within the
// range the run's own divergence checks remain as a guard.)
func TestBarnesHutDiverged(t *testing.T) {
	for _, dt := range []float64{1e300, 1e11} {
		errs := make([]error, 4)
		_ = withStore(t, 4, "fixed-home", func(c mpi.Comm, s globalvar.Store) error {
			app := apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: 64, Steps: 3, Measured: 1, Dt: dt, Sample: 8})
			env := apps.Env{Comm: c, Store: s, Seed: 1}
			st, err := app.Setup(env)
			if err == nil {
				env.State = st
				_, err = app.Run(env)
			}
			errs[c.Rank()] = err
			return nil
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "time step dt = "+fmt.Sprint(dt)+": must be in (0, 1]") {
				t.Errorf("dt %g, rank %d: %v", dt, r, err)
			}
		}
	}
}

// TestBarnesHutForceError: on one rank (no messages, fast), the tree
// forces converge to direct summation as theta shrinks, and stay within
// the limits the verification applies.
func TestBarnesHutForceError(t *testing.T) {
	var last float64
	for _, theta := range []float64{0.25, 0.5, 1, 1.5} {
		var med, glob float64
		err := withStore(t, 1, "tree-4", func(c mpi.Comm, s globalvar.Store) error {
			app := apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: 2000, Theta: theta, Steps: 1, Measured: 1, Sample: 200})
			out, err := app.Run(apps.Env{Comm: c, Store: s, Seed: 9})
			med, glob = out.Counters["force_err_median"], out.Counters["force_err_global"]
			return err
		})
		if err != nil {
			t.Fatalf("theta %v: %v", theta, err)
		}
		t.Logf("theta %v: median relative error %.2e, sample %.2e", theta, med, glob)
		if glob <= last {
			t.Errorf("theta %v: error %v did not grow with theta (was %v)", theta, glob, last)
		}
		if theta == 0.25 && glob > 2e-3 {
			t.Errorf("theta 0.25: error %v, want below 2e-3", glob)
		}
		last = glob
	}
}

// hiding is a store whose reads of the root cell show its first subcell
// as empty on one rank: the verification must catch the lost subtree.
type hiding struct {
	globalvar.Store
	rank, me int
}

func (h hiding) Read(v globalvar.Var, off int, buf []byte) error {
	err := h.Store.Read(v, off, buf)
	if h.me == h.rank && strings.HasSuffix(v.Name, "/c0") && len(buf) >= 32 {
		for i := 0; i < 8; i++ {
			if int32(binary.LittleEndian.Uint32(buf[4*i:])) < 0 {
				clear(buf[4*i : 4*i+4])
				break
			}
		}
	}
	return err
}

func TestBarnesHutDetectsLostSubtree(t *testing.T) {
	errs := make([]error, 4)
	_ = withStore(t, 4, "tree-4", func(c mpi.Comm, s globalvar.Store) error {
		app := apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: 300, Steps: 2, Measured: 1})
		_, errs[c.Rank()] = app.Run(apps.Env{Comm: c, Store: hiding{Store: s, rank: 2, me: c.Rank()}, Seed: 1})
		return nil
	})
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: a lost subtree went unnoticed", r)
		}
	}
	t.Log(errs[0])
}

func TestBarnesHutCheck(t *testing.T) {
	tests := []struct {
		name string
		cfg  apps.BarnesHutConfig
		want string
	}{
		{"no bodies", apps.BarnesHutConfig{Bodies: -1}, "N = -1"},
		{"theta zero after default", apps.BarnesHutConfig{Bodies: 10, Theta: -0.5}, "theta = -0.5"},
		{"theta above 2", apps.BarnesHutConfig{Bodies: 10, Theta: 2.5}, "theta = 2.5"},
		{"measured above steps", apps.BarnesHutConfig{Bodies: 10, Steps: 3, Measured: 4}, "measured steps = 4"},
		{"zones", apps.BarnesHutConfig{Bodies: 10, Zones: []int{0, 0, 1, 2}}, "not a permutation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check(4)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestDSMAppsMeasure: the paper-004 applications follow the application
// contract, so apps.Measure repeats them and records each phase, the
// exchange with its workload.
func TestDSMAppsMeasure(t *testing.T) {
	err := withStore(t, 4, "tree-2", func(c mpi.Comm, s globalvar.Store) error {
		for _, app := range []apps.App{
			apps.NewBitonicStore(apps.BitonicConfig{Keys: 32}),
			apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: 100, Steps: 2, Measured: 1}),
		} {
			recs, err := apps.Measure(apps.Env{Comm: c, Store: s, Seed: 2}, app, patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: 1}, results.Meta{Backend: "local"})
			if err != nil {
				return err
			}
			if c.Rank() != 0 {
				continue
			}
			for _, rec := range recs {
				if err := rec.Validate(); err != nil {
					t.Error(err)
				}
				if rec.N != 3 || rec.Params["app"] != app.Name() {
					t.Errorf("%s: %+v", app.Name(), rec)
				}
				if rec.Params["phase"] == apps.BitonicExchange && len(rec.Workload) != 1 {
					t.Errorf("bitonic exchange: workload %v", rec.Workload)
				}
			}
			if want := map[string]int{apps.BitonicName: 3, "barneshut": 7}[app.Name()]; len(recs) != want {
				t.Errorf("%s: %d phase records, want %d", app.Name(), len(recs), want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDSMAppsOverDirectStore: the paper-004 programs are written against
// globalvar.Store only, so they run (and verify) over the direct store as
// over divalib's strategies. The direct store caches nothing, so every
// access to another rank's variable needs that rank's service: a program
// that entered a plain MPI collective with a store access of another rank
// still pending would hang here.
func TestDSMAppsOverDirectStore(t *testing.T) {
	err := local.Run(4, func(c mpi.Comm) error {
		s, err := directstore.New(c, directstore.Config{})
		if err != nil {
			return err
		}
		for _, app := range []apps.App{
			// Wires and zones away from their variables' homes (round
			// robin): the read-backs before the verification are remote.
			apps.NewBitonicStore(apps.BitonicConfig{Keys: 64, Wires: reversed(4)}),
			apps.NewBarnesHut(apps.BarnesHutConfig{Bodies: 200, Steps: 2, Measured: 1, Zones: reversed(4)}),
		} {
			if _, err := app.Run(apps.Env{Comm: c, Store: s, Seed: 4}); err != nil {
				return fmt.Errorf("%s: %w", app.Name(), err)
			}
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
