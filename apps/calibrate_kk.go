package apps

import (
	"fmt"
	"sort"
	"strings"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
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
// state a program's successive accesses meet: a single access after a
// barrier finds idle links and cores, which a program's successive
// accesses do not (docs/findings/applications.md). 0 or 1 is the
// paper's single access.
//
// Block draws every access as a block on one home (patterns.KKAccess.Block:
// a rank's k packets to one module), as the applications' accesses are
// on the direct store and on divalib; not on an emulated network, whose
// driver draws the paper's spread accesses (KKChecker).
type KKCalibration struct {
	patterns.KKGrid
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

// KKChecker is a store strategy that refuses some k-k-accesses (accesses
// back to back on a store whose protocol is not the pattern's, blocks on a
// driver that draws spread accesses).
type KKChecker interface {
	CheckKK(kk patterns.KKAccess) error
}

// KKMeasurer is a store strategy with a k-k-access of its own (the direct
// store: the pattern itself; an emulated network: its driver); the others
// are measured by StoreKKAccess over their global variables.
type KKMeasurer interface {
	MeasureKK(app mpi.Comm, s globalvar.Store, kk patterns.KKAccess, meta results.Meta) (results.Record, error)
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
func (cal KKCalibration) CheckGrid() error {
	nk, nl, nr := distinct(cal.K), distinct(cal.L), distinct(cal.R)
	for _, f := range []struct {
		field string
		n     int
		vals  any
	}{{"K", nk, cal.K}, {"L", nl, cal.L}, {"R", nr, cal.R}} {
		if f.n < 2 {
			return opts.Field(f.field, ListText(f.vals), "the trilinear fit of the calibration needs at least 2 levels of each of k, l and r (the applications' own k and l included); this grid has %d x %d x %d", nk, nl, nr)
		}
	}
	if nk*nl*nr <= trilinearCoefs {
		return opts.Field("R", ListText(cal.R), "the trilinear fit needs more than %d cells to judge its 8 coefficients; the grid has %d x %d x %d = %d: add a level of k, l or r", trilinearCoefs, nk, nl, nr, nk*nl*nr)
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

// ListText writes a list as a comma list, as the flags take it.
func ListText(v any) string {
	s := fmt.Sprint(v)
	return strings.ReplaceAll(strings.Trim(s, "[]"), " ", ",")
}

// point is the calibration's k-k-access at k, l, r and op.
func (cal KKCalibration) point(k, l int, r float64, op patterns.AccessOp) patterns.KKAccess {
	reps := cal.Reps
	reps.Sync = patterns.SyncBarrier
	kk := patterns.KKAccess{K: k, L: l, R: r, Op: op, Block: cal.Block, Seed: cal.Seed, Validate: cal.Validate, Reps: reps}
	if cal.A > 1 {
		kk.A = cal.A
	}
	return kk
}

// Check refuses a calibration the strategy does not measure (KKChecker),
// before anything runs.
func (cal KKCalibration) Check(st globalvar.Strategy) error {
	if ck, ok := st.(KKChecker); ok {
		return ck.CheckKK(cal.point(1, 0, 1, patterns.AccessRead))
	}
	return nil
}

// Run measures the sweep on env.Store, opened as strategy st, and hands
// every record to emit as it is measured: through the strategy's own
// k-k-access (KKMeasurer) or StoreKKAccess, with the strategy's name as
// the records' "network" parameter. It is collective over env.Comm.
func (cal KKCalibration) Run(env Env, st globalvar.Strategy, meta results.Meta, emit func(results.Record) error) ([]results.Record, error) {
	if err := cal.Check(st); err != nil {
		return nil, fmt.Errorf("apps: %w", err)
	}
	km, own := st.(KKMeasurer)
	var recs []results.Record
	for _, op := range []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite} {
		err := cal.Each(func(k, l int, r float64) error {
			kk := cal.point(k, l, r, op)
			// Under the process's watchdog, a named point: a peer that
			// stops answering during a calibration names the store and
			// the access.
			defer patterns.Installed().Begin("the calibration of store "+st.Name()+": kkaccess "+results.ParamList(kk.Params(env.Comm.Size())), 0)()
			var rec results.Record
			var err error
			if own {
				rec, err = km.MeasureKK(env.Comm, env.Store, kk, meta)
			} else {
				rec, err = StoreKKAccess(env, kk, st.Name(), meta)
			}
			if err == nil {
				err = emit(rec)
			}
			recs = append(recs, rec)
			return err
		})
		if err != nil {
			return nil, err
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
