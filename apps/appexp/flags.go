package appexp

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// The settings of 'commcost app NAME' besides the program's own: StoreApp
// for paper 000's programs over global variables (StoreRun), MPApp for the
// message-passing programs (MPRun). Validate checks what needs no file;
// Prepare reads the files (models, calibration records) and the stores,
// every error naming its field; Run builds the experiment.

// MaxCalA is the most k-k-accesses a calibration times back to back.
const MaxCalA = 64

// CalGrid is the k-k-access calibration of paper 000's programs (the
// flags --cal-k, --cal-l, --cal-r, --cal-max-time, --cal-block, --cal-a):
// the one k x l x r grid type, and how its accesses are drawn.
type CalGrid struct {
	patterns.KKGrid
	MaxTime float64 `flag:"max-time" default:"0.5" usage:"calibration sweep: seconds of repetitions per point at most"`
	Block   bool    `flag:"block" usage:"calibration sweep: each rank sends all k packets of an access to one rank (kkaccess --block), as the applications access a block on its home; not on emulate:NET stores"`
	A       int     `flag:"a" default:"1" usage:"calibration sweep: k-k-accesses back to back per repetition (kkaccess --a; direct store only): 1 is paper 000's single access after a barrier, more the state a program's successive accesses meet"`
}

// Defaults are the calibration grid of paper 000's programs: every k and
// l an access may use, r from a quarter of the ranks up.
func (g *CalGrid) Defaults() map[string]string {
	return map[string]string{"l": "64,256,1K,4K", "r": "0.25,0.5,1"}
}

// Usage says the grid is the calibration's.
func (g *CalGrid) Usage() map[string]string {
	return map[string]string{
		"k": "calibration sweep (without --model): send hot spots k; the application's --k values are added",
		"l": "calibration sweep: packet sizes l in bytes; the application's --l values are added",
		"r": "calibration sweep: portions r of accessing ranks, each in (0, 1]",
	}
}

// Validate checks the grid.
func (g CalGrid) Validate() error {
	if err := g.KKGrid.Validate(); err != nil {
		return err
	}
	if err := opts.CheckSeconds("MaxTime", g.MaxTime); err != nil {
		return err
	}
	if g.A < 1 || g.A > MaxCalA {
		return opts.Field("A", g.A, "want a whole number of accesses in 1..%d", MaxCalA)
	}
	return nil
}

// StoreApp are the settings of a program over global variables.
type StoreApp struct {
	patterns.RepFlags
	patterns.RepWarmup
	patterns.SeedFlag
	Store  opts.Strings `flag:"store" default:"direct"`
	Models opts.Files   `flag:"model" value:"FILE.json" usage:"a fitted model (FILE.json from 'commcost fit MODEL FILE --format json') to predict the phases with; repeatable (models of one kind pair up, e.g. a read and a write trilinear fit). Without it a calibration sweep is measured and fitted first"`
	Plot   string       `flag:"plot" value:"file" usage:"draw predicted against measured phase times to this file (.png, .svg, .pdf)"`
	Cal    CalGrid      `flags:"cal-"`
	Set    opts.Given

	stores  []globalvar.Strategy
	models  []model.Model
	sources []string
}

// Usage is the help of --store, from the store registry.
func (a *StoreApp) Usage() map[string]string {
	return map[string]string{"store": "stores to run on: " + globalvar.FormsText()}
}

// Validate checks the settings that need no file.
func (a *StoreApp) Validate() error {
	if err := patterns.Checks(a.RepFlags.Check, a.RepWarmup.Check, a.SeedFlag.Check); err != nil {
		return err
	}
	if err := a.Cal.Validate(); err != nil {
		return opts.Prefix("Cal", err)
	}
	if a.Plot != "" {
		if err := report.CheckPlotPath(a.Plot); err != nil {
			return opts.Field("Plot", a.Plot, "%v", err)
		}
	}
	if len(a.Models) > 0 {
		for _, f := range []string{"Cal.K", "Cal.L", "Cal.R", "Cal.MaxTime", "Cal.A", "Cal.Block"} {
			if a.Set.Has(f) {
				return opts.Badf("{%s}: the calibration sweep is not measured with {Models}; give one or the other", f)
			}
		}
	}
	return nil
}

// Prepare parses the stores (with the seed) and reads the models, and
// checks the calibration against every store's strategy.
func (a *StoreApp) Prepare() error {
	a.stores = nil
	for _, name := range a.Store {
		st, err := globalvar.ParseStrategy(name, a.Seed)
		if err != nil {
			return opts.Field("Store", "", "%v", err)
		}
		a.stores = append(a.stores, st)
	}
	for _, st := range a.stores {
		if st.WorldSize() > 0 && len(a.stores) > 1 {
			return opts.Field("Store", "", "an emulated network needs a world of its own size, so emulate:NET must be the only store")
		}
	}
	a.models, a.sources = nil, nil
	for _, path := range a.Models {
		m, _, err := model.ReadFile(path)
		if err != nil {
			return opts.Item("Models", path, "%v (want the JSON of 'commcost fit MODEL FILE --format json')", err)
		}
		a.models = append(a.models, m)
		a.sources = append(a.sources, filepath.Base(path))
	}
	if len(a.models) > 0 {
		if _, err := report.NewPredictors(a.models, a.sources, true); err != nil {
			return opts.Badf("{Models} %v", err)
		}
		return nil
	}
	cal := a.calibration()
	for _, st := range a.stores {
		if cal.A > 1 && (apps.KKCalibration{A: cal.A}).Check(st) != nil {
			return opts.Field("Cal.A", a.Cal.A, "accesses back to back are calibrated on {Store} direct only, not %s", st.Name())
		}
		if cal.Block && (apps.KKCalibration{Block: true}).Check(st) != nil {
			return opts.Badf("{Cal.Block}: an emulated network's calibration draws the paper's spread accesses, not blocks; drop {Cal.Block} for {Store} %s", st.Name())
		}
	}
	return nil
}

// CheckGrid refuses a calibration grid the trilinear fit cannot use
// (StoreRun.Check), naming the grid's own fields, before anything runs.
func (a *StoreApp) CheckGrid(r StoreRun) error {
	err := r.Check()
	var fe *opts.FieldError
	if errors.As(err, &fe) && strings.HasPrefix(fe.Field, "Calibration.") {
		g := *fe
		g.Field = "Cal." + strings.TrimPrefix(fe.Field, "Calibration.")
		g.Reason = strings.ReplaceAll(fe.Reason, "{Calibration.", "{Cal.")
		return &g
	}
	return err
}

// Stores are the parsed stores (after Prepare).
func (a *StoreApp) Stores() []globalvar.Strategy { return a.stores }

func (a *StoreApp) calibration() apps.KKCalibration {
	reps := a.RepWarmup.Reps(a.RepFlags.Reps())
	reps.MaxTime = a.Cal.MaxTime
	return apps.KKCalibration{KKGrid: a.Cal.KKGrid, A: a.Cal.A, Block: a.Cal.Block, Reps: reps, Seed: a.Seed, Validate: a.Verify}
}

// Run is the experiment over configs (after Prepare).
func (a *StoreApp) Run(configs []apps.App) StoreRun {
	return StoreRun{Configs: configs, Stores: a.stores, Reps: a.RepWarmup.Reps(a.RepFlags.Reps()), Seed: a.Seed,
		Models: a.models, Sources: a.sources, Calibration: a.calibration()}
}

// ranksFit refuses, naming --store, a network of appRanks application ranks
// that a program of configs does not run on.
func ranksFit(name string, appRanks int, configs []apps.App) error {
	for _, c := range configs {
		if re := (*apps.RanksError)(nil); errors.As(c.Check(appRanks), &re) {
			return opts.Field("Store", "", "app %s needs %s; the network has %d application ranks", name, re.Needs(), appRanks)
		}
	}
	return nil
}

// CheckRanks refuses a world the stores or the programs do not fit;
// ranks names what set its size (job.RanksText), for a program that
// refuses the size alone.
func (a *StoreApp) CheckRanks(name string, world int, ranks string, configs []apps.App) error {
	if len(a.stores) == 1 {
		st := a.stores[0]
		if ck, ok := st.(interface{ CheckRanks(int) error }); ok {
			if err := ck.CheckRanks(world); err != nil {
				// A store that takes a count of ranks says so by Needs:
				// name what set the count (--np or the launcher's -np).
				var rn interface {
					Needs() string
					Applications() int
				}
				if errors.As(err, &rn) {
					// A network whose application ranks the program
					// refuses is refused for that, not for the world.
					if err := ranksFit(name, rn.Applications(), configs); err != nil {
						return err
					}
					return opts.Field("Store", "", "on %s: the network %s", ranks, rn.Needs())
				}
				return opts.Field("Store", "", "%v", err)
			}
		}
	}
	r := a.Run(configs)
	p := r.AppRanks(world)
	for _, c := range configs {
		if err := c.Check(p); err != nil {
			if re := (*apps.RanksError)(nil); errors.As(err, &re) {
				if p != world {
					// The store's network, not the world, sets the ranks.
					return opts.Field("Store", "", "app %s needs %s; the network has %d application ranks", name, re.Needs(), p)
				}
				return opts.Badf("%s: app %s needs %s", ranks, name, re.Needs())
			}
			if de := (*apps.DivideError)(nil); errors.As(err, &de) && p == world {
				return de // the command names --n or, when left at its default, the rank count (DivideError.Default)
			}
			if strings.HasPrefix(err.Error(), "--") {
				return opts.Badf("%v", err) // names its flag and the rank count
			}
			return opts.Badf("app %s on %d ranks: %v", name, p, err)
		}
	}
	if len(a.models) == 0 && p < MinCalibrationRanks {
		return opts.Badf("app %s on %d rank(s): the calibration sweep needs at least %d ranks; give {Models} FILE.json instead", name, p, MinCalibrationRanks)
	}
	if len(a.models) == 0 {
		return a.checkRealisedGrid(r, p)
	}
	return nil
}

// checkRealisedGrid refuses a calibration grid that p application ranks
// make too small for the trilinear fit: portions r whose r p rounds to
// the same whole ranks are one level of r (patterns.RealisedPortions),
// so a grid CheckGrid accepted may have too few cells on few ranks.
func (a *StoreApp) checkRealisedGrid(r StoreRun, p int) error {
	rs, err := patterns.RealisedPortions("Cal.R", r.Calibration.R, p, false)
	if err != nil || len(rs) == len(r.Calibration.R) {
		return err
	}
	asked := r.Calibration.R
	r.Calibration.R = rs
	var fe *opts.FieldError
	if err := a.CheckGrid(r); errors.As(err, &fe) {
		realised := make([]string, len(rs))
		for i, v := range rs {
			realised[i] = strconv.FormatFloat(patterns.RRealised(v, p), 'g', 4, 64)
		}
		return opts.Field("Cal.R", apps.ListText(asked), "on %d application ranks these portions realise only r = %s (r p rounds to whole ranks), and then %s", p, strings.Join(realised, ", "), fe.Reason)
	}
	return nil
}

// MPApp are the settings of a message-passing program.
type MPApp struct {
	patterns.RepFlags
	patterns.RepWarmup
	patterns.SeedFlag
	Models      opts.Files `flag:"model" value:"FILE.json" usage:"fitted model FILE.json ('commcost fit KIND FILE --format json'); repeat for several; without it, the patterns the program needs are measured and every kind fitted first"`
	Kinds       []string   `flag:"kinds"`
	Plot        string     `flag:"plot" value:"file" usage:"write measured against predicted per model to this file (.png, .svg, .pdf)"`
	CalMaxTime  float64    `flag:"cal-max-time" default:"0.5" usage:"seconds of repetitions per calibration point"`
	Calibration string     `flag:"calibration" value:"file" usage:"fit the models to the pattern records of this JSON Lines file (an earlier run's --out) instead of measuring a calibration"`
	Stat        string     `flag:"stat" default:"median" usage:"measured statistic the models are fitted to and judged against: median; fastest (the fastest repetition: the wire time of a shaped link when the machine is busy); or envelope (each entry into a phase at its fastest repetition, summed: the network's time when ranks share cores)"`
	Set         opts.Given

	loaded    []apps.NamedModel
	calibRecs []results.Record
}

// Usage is the help that names runs, not repetitions, and the kinds.
func (a *MPApp) Usage() map[string]string {
	return map[string]string{
		"warmup":   "untimed runs of the program before the timed ones (default 2)",
		"min-reps": "minimum timed runs",
		"max-reps": "maximum timed runs",
		"max-time": "seconds of timed runs before stopping",
		"kinds":    "model kinds to fit to the calibration (without --model)",
	}
}

// Defaults are every kind registered for programs.
func (a *MPApp) Defaults() map[string]string {
	return map[string]string{"kinds": strings.Join(apps.FitKinds(), ",")}
}

// Validate checks the settings that need no file.
func (a *MPApp) Validate() error {
	if err := patterns.Checks(a.RepFlags.Check, a.RepWarmup.Check, a.SeedFlag.Check); err != nil {
		return err
	}
	if !slices.Contains(apps.Stats, a.Stat) {
		return opts.Field("Stat", a.Stat, "accepted values are %s", strings.Join(apps.Stats, ", "))
	}
	if err := opts.CheckSeconds("CalMaxTime", a.CalMaxTime); err != nil {
		return err
	}
	for _, k := range a.Kinds {
		if !slices.Contains(model.Kinds(), k) {
			return opts.Item("Kinds", k, "%q is not a model kind; accepted form: a list of %s", k, strings.Join(model.Kinds(), ", "))
		}
		// A kind no program's calibration is fitted to (model.Kind's
		// ProgramOptions unset) would be measured for and then price no
		// phase.
		if !slices.Contains(apps.FitKinds(), k) {
			return opts.Item("Kinds", k, "%s is not fitted to a message-passing program's calibration, so it would price none of its phases; accepted: a list of %s",
				k, strings.Join(apps.FitKinds(), ", "))
		}
	}
	if a.Set.Has("Kinds") && len(a.Models) > 0 {
		return opts.Badf("{Kinds} chooses what to fit to a calibration; with {Models} nothing is fitted")
	}
	if a.Set.Has("CalMaxTime") && (len(a.Models) > 0 || a.Calibration != "") {
		with := "{Models}"
		if a.Calibration != "" {
			with = "{Calibration}"
		}
		return opts.Badf("{CalMaxTime} times the calibration measured now; with %s none is measured", with)
	}
	if a.Calibration != "" && len(a.Models) > 0 {
		return opts.Badf("{Calibration} and {Models}: give fitted models or the records to fit them to, not both")
	}
	if a.Plot != "" {
		if err := report.CheckPlotPath(a.Plot); err != nil {
			return opts.Field("Plot", a.Plot, "%v", err)
		}
	}
	return nil
}

// Prepare reads the calibration records and the models; a torn last line
// of the calibration file comes back as a warning.
func (a *MPApp) Prepare() (warnings []string, err error) {
	if a.Calibration != "" {
		recs, torn, err := results.ReadRecordsFile(a.Calibration)
		if err != nil {
			return nil, opts.Field("Calibration", "", "%v (want a JSON Lines file of commcost records)", err)
		}
		if torn != nil {
			warnings = append(warnings, fmt.Sprintf("%v; using the %d complete records before it", torn, len(recs)))
		}
		a.calibRecs = nil
		for _, r := range recs {
			if r.Bench != apps.Bench {
				a.calibRecs = append(a.calibRecs, r)
			}
		}
		if len(a.calibRecs) == 0 {
			return warnings, opts.Field("Calibration", "", "no pattern records (only application records or none)")
		}
	}
	var ms []model.Model
	for _, path := range a.Models {
		m, _, err := model.ReadFile(path)
		if err != nil {
			return warnings, opts.Item("Models", path, "%v (want the JSON of 'commcost fit MODEL FILE --format json')", err)
		}
		ms = append(ms, m)
	}
	a.loaded = NameModels(ms, a.Models)
	return warnings, nil
}

// Run is the experiment over progs (after Prepare).
func (a *MPApp) Run(progs []apps.App) MPRun {
	reps := a.RepWarmup.Reps(a.RepFlags.Reps())
	calReps := reps
	calReps.MaxTime, calReps.MinReps, calReps.Warmup = a.CalMaxTime, min(reps.MinReps, 5), 1
	return MPRun{Programs: progs, Models: a.loaded, Calibration: a.calibRecs, CalibrationReps: calReps,
		Kinds: a.Kinds, Reps: reps, Stat: a.Stat, Seed: a.Seed, Validate: a.Verify}
}

// CheckRunTime refuses programs whose one run on p ranks takes longer, at
// the least (apps.MinRunner), than the timed runs' --max-time plus
// timeout (--timeout, s): a run is never cut short, so it would outlast
// both with no word. flag gives the parameters that set the run's length
// with their values, names the same flags without them.
func (a *MPApp) CheckRunTime(p int, progs []apps.App, timeout float64, flag, names string) error {
	limit := a.RepFlags.Reps().MaxTime + timeout
	for _, prog := range progs {
		mr, ok := prog.(apps.MinRunner)
		if !ok {
			continue
		}
		if t := mr.MinRunSec(p); t > limit {
			return opts.Badf("%s: one run of %s on %d ranks takes at least %.3g s (its first run computes the serial oracle), more than --max-time %g s plus --timeout %g s; lower %s, or raise --timeout",
				flag, prog.Name(), p, t, a.RepFlags.Reps().MaxTime, timeout, names)
		}
	}
	return nil
}

// CheckRanks refuses a world the programs do not fit, and models that
// predict none of their phases; ranks names what set the world's size
// (job.RanksText).
func (a *MPApp) CheckRanks(name string, p int, ranks string, progs []apps.App) error {
	if p < 2 {
		return opts.Badf("%s: app %s needs at least 2 ranks to communicate", ranks, name)
	}
	r := a.Run(progs)
	if err := r.Check(p); err != nil {
		if re := (*apps.RanksError)(nil); errors.As(err, &re) {
			return opts.Badf("%s: app %s needs %s", ranks, name, re.Needs())
		}
		if de := (*apps.DivideError)(nil); errors.As(err, &de) {
			return de // the command names --n or, when left at its default, the rank count (DivideError.Default)
		}
		return opts.Badf("%v", err)
	}
	if len(a.loaded) > 0 {
		if err := r.CheckModels(p, a.loaded); err != nil {
			return opts.Badf("{Models}: %v", err)
		}
	}
	return nil
}
