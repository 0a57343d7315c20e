package appexp

import (
	"fmt"
	"slices"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// MinCalibrationRanks is the fewest application ranks the k-k-access
// calibration of StoreRun runs on: a k-k-access needs a rank to access
// another's module.
const MinCalibrationRanks = 2

// StoreRun is one 'commcost app NAME' experiment for paper 000's programs
// over global variables (section 6): every configuration on every store,
// measured phase by phase, every communication phase predicted.
type StoreRun struct {
	// Configs are the configurations to run, in order, on every store.
	Configs []apps.App
	// Stores are the store strategies to run on, each opened in turn;
	// empty means over the communicator itself (Env.Store nil, records'
	// store "mpi").
	Stores []globalvar.Strategy
	// Reps configures every configuration's repetitions (apps.Measure).
	Reps patterns.Reps
	// Seed draws the inputs and seeds the stores; the records' Meta.Seed.
	Seed int64
	// Models predict the phases (report.NewPredictors pairs a read and a
	// write model of one kind); Sources name where each came from. Without
	// Models, Calibration is measured on every store first and the
	// trilinear model fitted to its reads and to its writes
	// (apps.FitTrilinearRW).
	Models  []model.Model
	Sources []string
	// Calibration is the k-k-access sweep (paper 000, section 4); the
	// configurations' own k and l (their "k" and "l" parameters) are added
	// to its grid, so every configuration lies inside the fitted range.
	Calibration apps.KKCalibration
	// Agree makes the ranks return one verdict after a step that may fail
	// on some only (writing a record on rank 0, a fit on rank 0); nil
	// means apps.AgreeErr. The CLI passes its own, which prints one
	// message for all ranks.
	Agree func(c mpi.Comm, err error) error
}

// StoreResult is what a StoreRun leaves on rank 0 for the tables
// (report.WriteAppsReport): the application records, annotated with every
// predictor's prediction, and the notes on what a predictor could not
// predict.
type StoreResult struct {
	Records []results.Record
	Notes   []string
}

// AppRanks is the number of ranks the applications run on in a world of
// world ranks: an emulated network's application ranks, else all.
func (r StoreRun) AppRanks(world int) int {
	if len(r.Stores) == 1 {
		return r.Stores[0].AppRanks(world)
	}
	return world
}

func (r StoreRun) agree(c mpi.Comm, err error) error {
	if r.Agree != nil {
		return r.Agree(c, err)
	}
	return apps.AgreeErr(c, err)
}

// Run runs the experiment on every rank of c (collective). Every
// calibration and application record is handed to emit on every
// application rank as it is measured (the caller writes rank 0's), and
// the outcome is agreed over the application ranks (an emulated network's
// service ranks are busy routing); the records' "store" parameter names
// the store. meta.Seed is set to Seed. The result is on application rank
// 0 only (empty elsewhere).
func (r StoreRun) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error) (StoreResult, error) {
	meta.Seed = r.Seed
	var res StoreResult
	// The same verdict on every rank (the configuration is everyone's),
	// before anything is measured.
	if err := r.Check(); err != nil {
		return res, err
	}
	run := func(env apps.Env, st globalvar.Strategy) error {
		emitApp := func(rec results.Record) error { return r.agree(env.Comm, emit(rec)) }
		preds, err := r.predictors(env, st, meta, emitApp)
		if err != nil {
			return err
		}
		for _, a := range r.Configs {
			recs, err := apps.Measure(env, a, r.Reps, meta)
			if err != nil {
				return err
			}
			for i := range recs {
				recs[i].Params["store"] = st.Name()
			}
			if env.Comm.Rank() == 0 {
				res.Notes = append(res.Notes, report.AnnotateApps(recs, preds)...)
				res.Records = append(res.Records, recs...)
			}
			for _, rec := range recs {
				if err := emitApp(rec); err != nil {
					return err
				}
			}
		}
		return nil
	}
	stores := r.Stores
	if len(stores) == 0 {
		stores = []globalvar.Strategy{mpiStore{}}
	}
	for _, st := range stores {
		if err := openStore(c, st, r.Seed, func(env apps.Env) error { return run(env, st) }); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Check refuses, before anything is measured, a calibration grid the
// trilinear fit cannot use (apps.KKCalibration.Check on the grid with the
// configurations' k and l added); with Models nothing is calibrated.
// The error is an *opts.FieldError of the field Calibration.K, .L or .R.
func (r StoreRun) Check() error {
	if len(r.Models) > 0 {
		return nil
	}
	ks, ls := r.grid()
	return opts.Prefix("Calibration", r.Calibration.WithGrid(ks, ls).CheckGrid())
}

// predictors returns rank 0's predictors: Models, or the trilinear models
// fitted to a calibration measured now on env (collective).
func (r StoreRun) predictors(env apps.Env, st globalvar.Strategy, meta results.Meta, emit func(results.Record) error) ([]report.Predictor, error) {
	if len(r.Models) > 0 {
		if env.Comm.Rank() != 0 {
			return nil, nil
		}
		return report.NewPredictors(r.Models, r.Sources, true)
	}
	ks, ls := r.grid()
	recs, err := r.Calibration.WithGrid(ks, ls).Run(env, st, meta, emit)
	if err != nil {
		return nil, err
	}
	var preds []report.Predictor
	var ferr error
	if env.Comm.Rank() == 0 {
		ms, srcs, err := apps.FitTrilinearRW(recs)
		if err == nil {
			preds, err = report.NewPredictors(ms, srcs, false)
		}
		if err != nil {
			ferr = fmt.Errorf("calibration sweep on %s: %w (its records are in the output)", st.Name(), err)
		}
	}
	return preds, r.agree(env.Comm, ferr)
}

// grid returns the k and l the configurations access with (their "k" and
// "l" parameters), each once, in order of appearance.
func (r StoreRun) grid() (ks, ls []int) {
	for _, a := range r.Configs {
		ps := a.Params()
		if k, ok := ps["k"].(int); ok && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
		if l, ok := ps["l"].(int); ok && !slices.Contains(ls, l) {
			ls = append(ls, l)
		}
	}
	return ks, ls
}
