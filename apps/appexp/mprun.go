package appexp

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// NameModels names models loaded from files for the ranking tables and
// the records' derived values: the model's kind, with the file's base
// name in brackets when there are several files (two may hold one kind).
func NameModels(models []model.Model, paths []string) []apps.NamedModel {
	out := make([]apps.NamedModel, len(models))
	for i, m := range models {
		name := m.Kind()
		if len(paths) > 1 {
			name += " (" + filepath.Base(paths[i]) + ")"
		}
		out[i] = apps.NamedModel{Name: name, Model: m}
	}
	return out
}

// Workloads are the communication phases of progs on p ranks, keyed
// "INDEX/PHASE" (INDEX the program's position in progs), as
// apps.Calibration.Run and apps.Predictable take them.
func Workloads(progs []apps.App, p int) map[string][]results.WorkItem {
	work := map[string][]results.WorkItem{}
	for i, prog := range progs {
		for ph, w := range prog.(apps.Workloader).Workload(p) {
			work[fmt.Sprintf("%d/%s", i, ph)] = w
		}
	}
	return work
}

// MPRun is one 'commcost app NAME' run of the message-passing programs of
// papers 001 and 003: calibrate (without Models), fit, then measure every
// program and rank the models on it.
type MPRun struct {
	// Programs must implement apps.Workloader (every message-passing
	// program does).
	Programs []apps.App
	// Models, when given, predict the phases; nothing is calibrated.
	Models []apps.NamedModel
	// Calibration, when given without Models, are the pattern records to
	// fit Kinds to (an earlier run's); otherwise a calibration of the
	// patterns the programs' workloads name is measured with
	// CalibrationReps (apps.Calibration).
	Calibration     []results.Record
	CalibrationReps patterns.Reps
	// Validate checks every buffer of the measured calibration
	// (apps.Calibration.Validate); the programs check their results
	// against their oracles either way.
	Validate bool
	// Kinds are the model kinds fitted (apps.Fit; apps.FitKinds when
	// empty).
	Kinds []string
	// Reps configures the programs' repetitions (apps.Measure).
	Reps patterns.Reps
	// Stat is the statistic the models are fitted to and judged on
	// (apps.ByStat): apps.StatMedian (also ""), apps.StatFastest or
	// apps.StatEnvelope.
	Stat string
	Seed int64
	// Agree: as StoreRun.Agree.
	Agree func(c mpi.Comm, err error) error
}

// MPResult is one program's outcome on rank 0.
type MPResult struct {
	Program apps.App
	Ranks   int
	// Records are the program's phase records, annotated with every
	// model's prediction (apps.Ranking.Annotate).
	Records []results.Record
	Ranking *apps.Ranking
	// Table is the ranking as report.md rebuilds it from the records
	// (report.AppRankings).
	Table  report.AppRanking
	Models []apps.NamedModel
}

// Check reports why the programs cannot run on p ranks: a program's own
// check (sizes against the rank count), or its input (gauss's matrix,
// drawn from Seed: a singular one is refused before anything runs).
func (r MPRun) Check(p int) error {
	for _, prog := range r.Programs {
		if err := prog.Check(p); err != nil {
			return err
		}
		if in, ok := prog.(apps.Inputer); ok {
			if err := in.Input(r.Seed); err != nil {
				return err
			}
		}
	}
	return nil
}

// ProgramDemand is the largest memory need per rank of the programs
// alone on p ranks: arithmetic on their sizes, cheap at any n, where
// Demand's calibration part states the programs' workloads (gauss's grows
// with n), so a command checks this first.
func (r MPRun) ProgramDemand(p int) sysmem.Need {
	var needs []sysmem.Need
	for _, prog := range r.Programs {
		if d, ok := prog.(interface{ Demand(int) sysmem.Need }); ok {
			needs = append(needs, d.Demand(p))
		}
	}
	return sysmem.Largest(needs...)
}

// Demand is the largest memory need per rank of the programs on p ranks
// (each program's Demand: gauss, multigrid, cannon, checkerboard) and,
// when the run measures its calibration, of the calibration's largest
// point (apps.Calibration.Demand), for the command to check before
// Check, which computes gauss's serial oracle. The two run one after the
// other, so the larger counts.
func (r MPRun) Demand(p int) sysmem.Need {
	needs := []sysmem.Need{r.ProgramDemand(p)}
	if cal, ok := r.calibration(); ok {
		for _, prog := range r.Programs {
			if prog.Check(p) != nil {
				return sysmem.Largest(needs...) // no workload on p ranks: Check refuses the run
			}
		}
		needs = append(needs, cal.Demand(Workloads(r.Programs, p), p))
	}
	return sysmem.Largest(needs...)
}

// calibration is the calibration Run measures, ok false when it measures
// none (models given, or an earlier run's records).
func (r MPRun) calibration() (apps.Calibration, bool) {
	if len(r.Models) > 0 || r.Calibration != nil {
		return apps.Calibration{}, false
	}
	return apps.Calibration{Reps: r.CalibrationReps, Kinds: r.Kinds, Validate: r.Validate}, true
}

// CheckCalibration refuses, as bad input, calibration records given by the
// user (Calibration) whose models predict no program on p ranks or predict
// a time no record holds (CheckModels): found before anything is opened or
// measured. It does nothing when Run measures its own calibration.
func (r MPRun) CheckCalibration(p int) error {
	if len(r.Models) > 0 || r.Calibration == nil {
		return nil
	}
	cal, err := apps.ByStat(r.Calibration, r.Stat)
	if err != nil {
		return opts.Badf("--calibration: %v", err)
	}
	models, _ := apps.Fit(cal, r.Kinds)
	if err := r.CheckModels(p, models); err != nil {
		return opts.Badf("--calibration: %v", err)
	}
	return nil
}

// CheckModels reports an error unless, for every program, some of models
// predicts some communication phase on p ranks (apps.Predictable), so a
// model set that predicts nothing is refused before anything is measured.
func (r MPRun) CheckModels(p int, models []apps.NamedModel) error {
	for _, prog := range r.Programs {
		if err := apps.Predictable(prog.(apps.Workloader).Workload(p), models); err != nil {
			return err
		}
	}
	return nil
}

// Run runs r on every rank of c (collective). Every record (calibration,
// then each program's) goes to emit on rank 0 as it is measured. notes,
// when not nil, receives rank 0's notes on the fit (a kind the
// calibration cannot support); each receives every program's result on
// rank 0 as soon as it is measured, in order. meta.Seed is set to Seed.
func (r MPRun) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, notes func(string), each func(MPResult) error) error {
	meta.Seed = r.Seed
	emit0 := func(rec results.Record) error {
		if c.Rank() != 0 {
			return nil
		}
		return emit(rec)
	}
	agree := r.Agree
	if agree == nil {
		agree = apps.AgreeErr
	}
	models := r.Models
	p := c.Size()
	if len(models) == 0 {
		cal := r.Calibration
		if measure, ok := r.calibration(); ok {
			var err error
			if cal, err = measure.Run(c, Workloads(r.Programs, p), meta, emit0); err != nil {
				return fmt.Errorf("calibration: %w", err)
			}
		}
		var err error
		if cal, err = apps.ByStat(cal, r.Stat); err != nil {
			return err
		}
		var ferr error
		if c.Rank() == 0 {
			var ns []string
			models, ns = apps.Fit(cal, r.Kinds)
			for _, n := range ns {
				if notes != nil {
					notes(n)
				}
			}
			if err := r.CheckModels(p, models); err != nil {
				ferr = fmt.Errorf("calibration: %w", err)
				if r.Calibration != nil {
					// The user's records, not this run's measurement.
					ferr = opts.Badf("--calibration: %v", err)
				}
			}
		}
		if err := agree(c, ferr); err != nil {
			return err
		}
	}
	for _, prog := range r.Programs {
		if in, ok := prog.(apps.Inputer); ok {
			if err := in.Input(r.Seed); err != nil {
				return err
			}
		}
		recs, err := apps.Measure(apps.Env{Comm: c, Seed: r.Seed}, prog, r.Reps, meta)
		if err != nil {
			return err
		}
		if c.Rank() != 0 {
			continue
		}
		rank, err := apps.RankAnnotated(recs, models, r.Stat)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if err := emit0(rec); err != nil {
				return err
			}
		}
		// The table is built from the annotated records, as report.md
		// rebuilds it.
		tables := report.AppRankings(recs)
		if len(tables) != 1 {
			return fmt.Errorf("%s: %d ranking tables from one run's records", prog.Name(), len(tables))
		}
		if err := each(MPResult{Program: prog, Ranks: p, Records: recs, Ranking: rank, Table: tables[0], Models: models}); err != nil {
			return err
		}
	}
	return nil
}

// Write prints the result: the ranking table, the notes on what it cannot
// show, and, for paper 003's programs (all but multigrid), the closed
// forms of the total communication with t_s and t_w from the models
// (SlidesParams), or why there are none.
func (res MPResult) Write(w io.Writer, markdown bool) error {
	if err := res.Table.Write(w, markdown); err != nil {
		return err
	}
	res.Ranking.WriteNotes(w)
	name := res.Program.Name()
	if _, err := apps.ClosedForms(name, 1, 1, 0, 0); errors.Is(err, apps.ErrNoClosedForm) {
		return nil // a program paper 003 does not treat (multigrid, a user's)
	}
	ts, tw, src, ok := SlidesParams(res.Models)
	if !ok {
		_, err := fmt.Fprintln(w, "paper 003's closed forms need t_s and t_w: fit or give a hockney or twolevel model")
		return err
	}
	n, _ := res.Program.Params()["n"].(int)
	forms, err := apps.ClosedForms(name, n, res.Ranks, ts, tw)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	return res.Ranking.WriteClosedForms(w, forms, src, markdown)
}

// SlidesParams picks t_s and t_w for paper 003's closed forms: the
// Hockney fit's (the slides' point-to-point cost t_s + t_w m), else the
// two-level model's; source is the model's name.
func SlidesParams(models []apps.NamedModel) (ts, tw float64, source string, ok bool) {
	for _, kind := range []string{"hockney", "twolevel"} {
		for _, nm := range models {
			if nm.Model.Kind() != kind {
				continue
			}
			a, okA := model.ParamByName(nm.Model, "t_s")
			b, okB := model.ParamByName(nm.Model, "t_w")
			if okA && okB {
				return a.Value, b.Value, nm.Name, true
			}
		}
	}
	return 0, 0, "", false
}
