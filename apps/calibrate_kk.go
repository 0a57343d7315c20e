package apps

import (
	"fmt"
	"sort"
	"strings"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// KKCalibration is the k-k-access sweep paper 000's applications are
// predicted from (paper 000, section 4: the trilinear T(k, l, r) is fitted
// to k-k-accesses measured on the same machine): reads and writes over the
// grid K x L x R, measured on the store the applications run over.
//
// A > 1 times A k-k-accesses back to back per repetition (the kkaccess
// pattern's a; a record is one access's time) on the direct store, the
// state a program's successive accesses meet: on the shaped test cluster
// a single access after a barrier rides the links' idle state and a
// calibration of a = 4 predicts paper 000's programs with their phases'
// errors centred on zero, where a = 1 priced most of them 15-35% low
// (cmd/commcost testClusterApps). 0 or 1 is the paper's single access.
//
// Block draws every access as a block on one home (patterns.KKAccess.Block:
// a rank's k packets to one module), as the applications' accesses are
// on the direct store and on divalib; not on an emulated network, whose
// driver draws the paper's spread accesses.
type KKCalibration struct {
	K, L     []int
	R        []float64
	A        int
	Block    bool
	Reps     patterns.Reps
	Seed     int64
	Validate bool
}

// WithGrid returns the calibration with the applications' own k and l
// added to its grid (each value once, increasing), so every configuration
// run lies inside the fitted range.
func (cal KKCalibration) WithGrid(ks, ls []int) KKCalibration {
	cal.K, cal.L = mergeInts(cal.K, ks), mergeInts(cal.L, ls)
	return cal
}

// trilinearCoefs is the trilinear model's number of coefficients (paper
// 000, Table 1: c0 .. c7).
const trilinearCoefs = 8

// Check refuses a grid the trilinear fit of the reads and writes cannot
// use, before anything is measured: every monomial of T(k, l, r) must
// vary, so each of K, L and R needs two distinct levels at least, and the
// fit needs more than eight cells to leave a residual. Call it on the grid
// the sweep runs (WithGrid's). The error is an *opts.FieldError naming K,
// L or R.
func (cal KKCalibration) Check() error {
	nk, nl, nr := distinct(cal.K), distinct(cal.L), distinct(cal.R)
	for _, f := range []struct {
		field string
		n     int
		vals  any
	}{{"K", nk, cal.K}, {"L", nl, cal.L}, {"R", nr, cal.R}} {
		if f.n < 2 {
			return opts.Field(f.field, listText(f.vals), "the trilinear fit of the calibration needs at least 2 levels of each of k, l and r (the applications' own k and l included); this grid has %d x %d x %d", nk, nl, nr)
		}
	}
	if nk*nl*nr <= trilinearCoefs {
		return opts.Field("R", listText(cal.R), "the trilinear fit needs more than %d cells to judge its 8 coefficients; the grid has %d x %d x %d = %d: add a level of k, l or r", trilinearCoefs, nk, nl, nr, nk*nl*nr)
	}
	return nil
}

// distinct counts the distinct values of xs.
func distinct[T int | float64](xs []T) int {
	seen := map[T]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

// listText writes a list as a comma list, as the flags take it.
func listText(v any) string {
	s := fmt.Sprint(v)
	return strings.ReplaceAll(strings.Trim(s, "[]"), " ", ",")
}

// Run measures the sweep on env.Store and hands every record to emit as
// it is measured. kind says how the store is measured: "direct" runs the
// pattern itself (the direct store's protocol is the pattern's, so the
// records are those of 'commcost kkaccess'), "emulate" the network's own
// driver (env.Store must be an *emulate.Store), anything else
// StoreKKAccess over the store's global variables, with name as the
// records' "network" parameter. It is collective over env.Comm.
func (cal KKCalibration) Run(env Env, kind, name string, meta results.Meta, emit func(results.Record) error) ([]results.Record, error) {
	reps := cal.Reps
	reps.Sync = patterns.SyncBarrier
	if cal.A > 1 && kind != "direct" {
		return nil, fmt.Errorf("apps: a calibration of %d accesses back to back is measured on the direct store only, not on %s", cal.A, name)
	}
	if cal.Block && kind == "emulate" {
		return nil, fmt.Errorf("apps: a calibration of block accesses is not measured on the emulated network %s", name)
	}
	var recs []results.Record
	for _, op := range []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite} {
		for _, k := range cal.K {
			for _, l := range cal.L {
				for _, r := range cal.R {
					kk := patterns.KKAccess{K: k, L: l, R: r, Op: op, Block: cal.Block, Seed: cal.Seed, Validate: cal.Validate, Reps: reps}
					if cal.A > 1 {
						kk.A = cal.A
					}
					var rec results.Record
					var err error
					switch kind {
					case "direct":
						var m patterns.Measurement
						if m, err = kk.Run(env.Comm); err == nil {
							rec = kk.Record(m, meta)
						}
					case "emulate":
						st, ok := env.Store.(*emulate.Store)
						if !ok {
							return nil, fmt.Errorf("apps: calibration of kind emulate over a %T store", env.Store)
						}
						bc := emulate.BenchConfig{Reps: reps, Seed: cal.Seed, Meta: meta}
						rec, err = emulate.KKAccess(st, emulate.KKPoint{K: k, L: l, R: r, Op: op.String()}, bc)
					default:
						rec, err = StoreKKAccess(env, kk, name, meta)
					}
					if err != nil {
						return nil, err
					}
					if err := emit(rec); err != nil {
						return nil, err
					}
					recs = append(recs, rec)
				}
			}
		}
	}
	return recs, nil
}

// FitTrilinearRW fits the trilinear model (paper 000, section 4, Table 1)
// to the reads and to the writes of a k-k-access calibration, returning
// the two models and their sources.
func FitTrilinearRW(recs []results.Record) ([]model.Model, []string, error) {
	var ms []model.Model
	var srcs []string
	for _, op := range []string{"read", "write"} {
		tr, err := model.FitTrilinear(recs, model.Options{Op: op})
		if err != nil {
			return nil, nil, fmt.Errorf("trilinear fit of the %ss: %w", op, err)
		}
		ms = append(ms, tr)
		srcs = append(srcs, "calibration ("+op+")")
	}
	return ms, srcs, nil
}

// mergeInts is a and b without repeats, increasing.
func mergeInts(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, v := range append(append([]int(nil), a...), b...) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out
}
