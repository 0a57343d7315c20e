package appexp

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// quick are repetitions that keep the tests to seconds on goroutine ranks.
var quick = patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: -1, MaxTime: 1}

func fixed(name, unit string, v float64) model.Param {
	return model.Param{Name: name, Unit: unit, Value: v, CI95: [2]float64{v, v}, Fixed: true}
}

// tri is a trilinear model T = c0 + c2 l for op (seconds, bytes).
func tri(op string, c0, c2 float64) *model.Trilinear {
	t := &model.Trilinear{Op: op}
	t.C[7], t.C[5] = fixed("c0", "s", c0), fixed("c2", "s/B", c2)
	return t
}

func hockney(ts, tw float64) *model.Hockney {
	return &model.Hockney{Ts: fixed("t_s", "s", ts), Tw: fixed("t_w", "s/B", tw)}
}

// recorder collects what emit receives per rank (the ranks are goroutines).
type recorder struct {
	mu   sync.Mutex
	recs map[int][]results.Record
}

func (r *recorder) emit(rank int) func(results.Record) error {
	return func(rec results.Record) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.recs == nil {
			r.recs = map[int][]results.Record{}
		}
		r.recs[rank] = append(r.recs[rank], rec)
		return nil
	}
}

func TestParseStore(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		world    int // the world it needs, 0 any
		appRanks int // in a world of 100
		err      string
	}{
		{in: "direct", name: "direct", appRanks: 100},
		{in: "fixed-home", name: "fixed-home", appRanks: 100},
		{in: "tree-4", name: "tree-4", appRanks: 100},
		{in: "tree-2-4", name: "tree-2-4", appRanks: 100},
		{in: "emulate:BF(2)", name: "BF(2)", world: 16, appRanks: 4},
		{in: "emulate:mesh(2x2)", name: "mesh(2x2)", world: 8, appRanks: 4},
		{in: "nowhere", err: `"nowhere" is not a store`},
		{in: "emulate:ring(3)", err: `unknown network "ring"`},
		{in: "", err: `"" is not a store`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			st, err := globalvar.ParseStrategy(tc.in, 7)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Name() != tc.name || st.WorldSize() != tc.world || st.AppRanks(100) != tc.appRanks {
				t.Errorf("got %s world %d, %d app ranks; want %s %d %d", st.Name(), st.WorldSize(), st.AppRanks(100), tc.name, tc.world, tc.appRanks)
			}
			if d, ok := st.(divalib.Config); ok && d.Seed != 7 {
				t.Errorf("divalib seed %d, want 7", d.Seed)
			}
		})
	}
}

// TestStoreOpen: every kind opens over the world, runs fn on the
// application ranks with a working store, and closes it.
func TestStoreOpen(t *testing.T) {
	for _, tc := range []struct {
		store       string
		world, apps int
	}{
		{"direct", 4, 4},
		{"fixed-home", 4, 4},
		{"tree-2", 4, 4},
		{"emulate:mesh(2x2)", 8, 4},
	} {
		t.Run(tc.store, func(t *testing.T) {
			st, err := globalvar.ParseStrategy(tc.store, 1)
			if err != nil {
				t.Fatal(err)
			}
			if w := st.WorldSize(); w != 0 && w != tc.world {
				t.Fatalf("%s needs %d ranks, test has %d", tc.store, w, tc.world)
			}
			var mu sync.Mutex
			calls := 0
			err = local.Run(tc.world, func(c mpi.Comm) error {
				return openStore(c, st, 3, func(env apps.Env) error {
					mu.Lock()
					calls++
					mu.Unlock()
					if env.Comm.Size() != tc.apps || env.Store == nil || env.Seed != 3 {
						t.Errorf("env: %d ranks, store %v, seed %d", env.Comm.Size(), env.Store, env.Seed)
					}
					// Every rank writes its slot of a variable on rank 0;
					// rank 0 reads them all back.
					v, _, err := globalvar.CreateAt(env.Store, "t", 8*env.Comm.Size(), 0)
					if err != nil {
						return err
					}
					me := env.Comm.Rank()
					if err := env.Store.Write(v, 8*me, bytes.Repeat([]byte{byte(me + 1)}, 8)); err != nil {
						return err
					}
					if err := env.Store.Barrier(); err != nil {
						return err
					}
					if me == 0 {
						buf := make([]byte, 8*env.Comm.Size())
						if err := env.Store.Read(v, 0, buf); err != nil {
							return err
						}
						for i, b := range buf {
							if b != byte(i/8+1) {
								t.Errorf("byte %d = %d, want %d", i, b, i/8+1)
								break
							}
						}
					}
					return env.Store.Barrier()
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.apps {
				t.Errorf("fn ran on %d ranks, want %d", calls, tc.apps)
			}
		})
	}
}

func TestStoreRunGrid(t *testing.T) {
	r := StoreRun{Configs: []apps.App{
		apps.MatMul{N: 32, Access: apps.Access{K: 1, L: 64}},
		apps.MatMul{N: 32, Access: apps.Access{K: 4, L: 64}, Sync: true},
		apps.BitonicSort{N: 256, Access: apps.Access{K: 1, L: 256}},
	}}
	ks, ls := r.grid()
	if !slices.Equal(ks, []int{1, 4}) || !slices.Equal(ls, []int{64, 256}) {
		t.Errorf("grid k %v l %v, want [1 4] [64 256]", ks, ls)
	}
}

// TestStoreRunModels: with models nothing is calibrated; every record
// reaches emit on every rank, names its store, and rank 0's communication
// phases carry the paired read/write trilinear prediction and its error.
func TestStoreRunModels(t *testing.T) {
	direct, _ := globalvar.ParseStrategy("direct", 1)
	home, _ := globalvar.ParseStrategy("fixed-home", 1)
	r := StoreRun{
		Configs: []apps.App{apps.MatMul{N: 32, Access: apps.Access{K: 2, L: 128}}},
		Stores:  []globalvar.Strategy{direct, home},
		Reps:    quick, Seed: 1,
		Models:  []model.Model{tri("read", 1e-6, 1e-9), tri("write", 2e-6, 1e-9)},
		Sources: []string{"r.json", "w.json"},
	}
	var rec recorder
	res := make([]StoreResult, 4)
	err := local.Run(4, func(c mpi.Comm) error {
		var err error
		res[c.Rank()], err = r.Run(c, results.Meta{Backend: "local"}, rec.emit(c.Rank()))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := res[0]
	if len(got.Notes) != 0 {
		t.Errorf("notes %q", got.Notes)
	}
	if len(res[1].Records) != 0 {
		t.Errorf("rank 1 has %d records; only rank 0 keeps them", len(res[1].Records))
	}
	stores := map[string]int{}
	comm := 0
	for _, x := range got.Records {
		stores[x.Params["store"].(string)]++
		if x.Bench != apps.Bench || x.Meta.Seed != 1 {
			t.Errorf("record %s seed %d", x.Bench, x.Meta.Seed)
		}
		if x.Params["kind"] != apps.KindComm {
			continue
		}
		comm++
		pred, ok := x.Derived["pred_trilinear_s"]
		if !ok || !(pred > 0) {
			t.Errorf("%v: no prediction: %v", x.Params, x.Derived)
			continue
		}
		if e := x.Derived["pred_err_trilinear"]; math.Abs(e-(pred-x.Median)/x.Median) > 1e-12 {
			t.Errorf("%v: error %g, want (pred - median)/median", x.Params, e)
		}
	}
	if stores["direct"] == 0 || stores["direct"] != stores["fixed-home"] || comm != 2 {
		t.Errorf("records per store %v, %d communication phases; want the same phases on both, one comm phase each", stores, comm)
	}
	for rank := 0; rank < 4; rank++ {
		if len(rec.recs[rank]) != len(got.Records) {
			t.Errorf("rank %d: emit got %d records, want %d", rank, len(rec.recs[rank]), len(got.Records))
		}
	}
}

// TestStoreRunCalibrated: without models the k-k-access sweep is measured
// first on the store, over the given grid plus the configurations' k and
// l, and its trilinear fits predict the phases.
func TestStoreRunCalibrated(t *testing.T) {
	direct, _ := globalvar.ParseStrategy("direct", 1)
	calReps := quick
	calReps.MaxTime = 0.05
	r := StoreRun{
		Configs:     []apps.App{apps.BitonicSort{N: 256, Access: apps.Access{K: 2, L: 128}}},
		Stores:      []globalvar.Strategy{direct},
		Reps:        quick,
		Seed:        1,
		Calibration: apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1, 2}, L: []int{64, 256}, R: []float64{0.5, 1}}, Reps: calReps, Seed: 1},
	}
	var rec recorder
	var res StoreResult
	err := local.Run(4, func(c mpi.Comm) error {
		got, err := r.Run(c, results.Meta{Backend: "local"}, rec.emit(c.Rank()))
		if c.Rank() == 0 {
			res = got
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	kk, app := 0, 0
	for _, x := range rec.recs[0] {
		switch x.Bench {
		case patterns.BenchKKAccess:
			if app > 0 {
				t.Errorf("calibration record after an application record")
			}
			kk++
		case apps.Bench:
			app++
		}
	}
	// (1, 2) x (64, 128, 256) x (0.5, 1) x (read, write).
	if kk != 24 || app != len(res.Records) {
		t.Errorf("%d calibration records (want 24), %d application records (want %d)", kk, app, len(res.Records))
	}
	for _, x := range res.Records {
		if x.Params["kind"] == apps.KindComm && !(x.Derived["pred_trilinear_s"] > 0) {
			t.Errorf("%v: no prediction: %v", x.Params, x.Derived)
		}
	}
}

// TestStoreRunFitFails: a sweep the trilinear model cannot be fitted to
// (one level of k, l and r, the applications' own included) is refused on
// every rank before anything is measured, naming the field, where it was
// refused only after the sweep had run.
func TestStoreRunFitFails(t *testing.T) {
	direct, _ := globalvar.ParseStrategy("direct", 1)
	tests := []struct {
		name string
		cal  apps.KKCalibration
		want string
	}{
		{"one level of everything", apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1}, L: []int{64}, R: []float64{1}}, Reps: quick}, "Calibration.K = 1: the trilinear fit of the calibration needs at least 2 levels"},
		{"one level of r (--cal-r 1)", apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1, 2}, L: []int{64, 256}, R: []float64{1}}, Reps: quick}, "Calibration.R = 1: the trilinear fit of the calibration needs at least 2 levels"},
		{"eight cells", apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1, 2}, L: []int{64, 256}, R: []float64{0.5, 1}}, Reps: quick}, "Calibration.R = 0.5,1: the trilinear fit needs more than 8 cells"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := StoreRun{
				Configs:     []apps.App{apps.BitonicSort{N: 256, Access: apps.Access{K: 1, L: 64}}},
				Stores:      []globalvar.Strategy{direct},
				Reps:        quick,
				Calibration: tc.cal,
			}
			errs := make([]error, 4)
			emitted := make([]int, 4)
			_ = local.Run(4, func(c mpi.Comm) error {
				_, errs[c.Rank()] = r.Run(c, results.Meta{}, func(results.Record) error { emitted[c.Rank()]++; return nil })
				return nil
			})
			for rank, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !opts.IsBadInput(err) || emitted[rank] > 0 {
					t.Errorf("rank %d: %v after %d records; want bad input %q before any record", rank, err, emitted[rank], tc.want)
				}
			}
		})
	}
}

// TestStoreRunBackToBackDirectOnly: a calibration of accesses back to
// back (KKCalibration.A) is refused on a divalib store on every rank
// before anything is measured.
func TestStoreRunBackToBackDirectOnly(t *testing.T) {
	fixed, err := globalvar.ParseStrategy("fixed-home", 1)
	if err != nil {
		t.Fatal(err)
	}
	r := StoreRun{
		Configs:     []apps.App{apps.BitonicSort{N: 256, Access: apps.Access{K: 1, L: 64}}},
		Stores:      []globalvar.Strategy{fixed},
		Reps:        quick,
		Calibration: apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1, 2}, L: []int{64, 256}, R: []float64{0.25, 0.5, 1}}, A: 2, Reps: quick},
	}
	errs := make([]error, 4)
	emitted := make([]int, 4)
	_ = local.Run(4, func(c mpi.Comm) error {
		_, errs[c.Rank()] = r.Run(c, results.Meta{}, func(results.Record) error { emitted[c.Rank()]++; return nil })
		return nil
	})
	for rank, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "back to back is measured on the direct store only") {
			t.Errorf("rank %d: %v", rank, err)
		}
		if emitted[rank] != 0 {
			t.Errorf("rank %d emitted %d records", rank, emitted[rank])
		}
	}
}

// TestStoreRunAgreesOnEmit: a failed write on rank 0 stops every rank
// through the Agree given.
func TestStoreRunAgreesOnEmit(t *testing.T) {
	direct, _ := globalvar.ParseStrategy("direct", 1)
	full := errors.New("disk full")
	var mu sync.Mutex
	agreed := 0
	r := StoreRun{
		Configs: []apps.App{apps.MatMul{N: 32, Access: apps.Access{K: 2, L: 128}}},
		Stores:  []globalvar.Strategy{direct}, Reps: quick,
		Models: []model.Model{tri("", 1e-6, 1e-9)}, Sources: []string{"m.json"},
		Agree: func(c mpi.Comm, err error) error {
			mu.Lock()
			agreed++
			mu.Unlock()
			return apps.AgreeErr(c, err)
		},
	}
	errs := make([]error, 4)
	_ = local.Run(4, func(c mpi.Comm) error {
		_, errs[c.Rank()] = r.Run(c, results.Meta{}, func(results.Record) error {
			if c.Rank() == 0 {
				return full
			}
			return nil
		})
		return nil
	})
	if !errors.Is(errs[0], full) {
		t.Errorf("rank 0: %v, want %v", errs[0], full)
	}
	for rank := 1; rank < 4; rank++ {
		if errs[rank] == nil || !strings.Contains(errs[rank].Error(), "rank 0 failed") {
			t.Errorf("rank %d: %v", rank, errs[rank])
		}
	}
	if agreed != 4 {
		t.Errorf("Agree called %d times, want once per rank", agreed)
	}
}
