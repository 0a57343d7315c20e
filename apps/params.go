package apps

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The parameters every application phase record has (results.BenchApp):
// the program, the phase and its kind, checked on every record written or
// read (results.RegisterParamCheck), so that `app table` refuses a file
// whose phase is missing instead of printing it as <nil>.
var appParams = []patterns.ParamSpec{
	{Key: "app", Kind: patterns.ParamString},
	{Key: "phase", Kind: patterns.ParamString},
	{Key: "kind", Kind: patterns.ParamString, Values: []string{results.PhaseKindComm, results.PhaseKindComp, results.PhaseKindSync}},
}

func init() {
	results.RegisterParamCheck(Bench, func(p results.Params) error {
		if err := patterns.CheckSpecs(appParams, p); err != nil {
			return err
		}
		for _, k := range []string{"app", "phase"} {
			if p[k] == "" {
				return fmt.Errorf("%s is empty", k)
			}
		}
		return nil
	})
	results.RegisterRecordCheck(Bench, checkPredictions)
}

// maxRunPhases bounds a run's phase count on read: every program times a
// handful of phases.
const maxRunPhases = 1000

// checkPredictions is the record check of an application phase record:
// parameters a run of its program has (checkAppParams); its unit is s; its
// workload items of known benches (results.HasParamCheck); every derived time ("..._s": the envelope, measured_s)
// is 0 or at least results.MinRecordSeconds and every prediction
// pred_NAME_s at least that (Ranking.Annotate); every stored error
// pred_err_NAME is (pred_NAME_s - measured_s) / measured_s (of the
// median without measured_s), as Annotate and report.AnnotateApps
// computed it. A table shows both, so a record whose error its own
// prediction contradicts (or a prediction of -5 s or 1e-300 s) is
// refused rather than shown. A run's phase count
// (results.DerivedRunPhases) is a whole number up to maxRunPhases. The
// programs' counters count (keys, a bucket's expansion) or measure a
// residual, so none is negative (Barnes-Hut's energies, which are, are
// counters of dsm-barneshut records, not of these). The workload is the
// one a run of the parameters writes (checkWorkload).
func checkPredictions(r *results.Record) error {
	if err := checkAppParams(r); err != nil {
		return err
	}
	if r.Unit != results.UnitSeconds {
		return fmt.Errorf("unit %q: an application phase's record is a time in %q", r.Unit, results.UnitSeconds)
	}
	// A workload names points a model prices: a bench whose parameters some
	// package checks (a pattern's, a chain shift).
	for i, w := range r.Workload {
		if !results.HasParamCheck(w.Bench) {
			return fmt.Errorf("workload item %d: bench %q is no pattern or workload point of this commcost", i+1, w.Bench)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Counters)) {
		if v := r.Counters[k]; v < 0 {
			return fmt.Errorf("counters %s = %v is negative: a program's counters count or measure a residual", k, v)
		}
	}
	if err := checkAppValues(r); err != nil {
		return err
	}
	// Paper 000's programs are annotated against the median
	// (report.AnnotateApps), the message-passing ones against measured_s.
	meas, measName := r.Median, "median"
	if m, ok := r.Derived["measured_s"]; ok {
		meas, measName = m, "measured_s"
	}
	if v, ok := r.Derived[results.DerivedRunPhases]; ok && !(v >= 1 && v <= maxRunPhases && v == math.Trunc(v)) {
		return fmt.Errorf("derived %s = %v: the run's phase count is a whole number from 1 to %d", results.DerivedRunPhases, v, maxRunPhases)
	}
	keys := slices.Sorted(maps.Keys(r.Derived))
	for _, k := range keys {
		if err := checkPredKey(k); err != nil {
			return err
		}
	}
	for _, k := range keys {
		v := r.Derived[k]
		m, ok := strings.CutPrefix(k, "pred_")
		if ok && !strings.HasPrefix(m, "err_") && strings.HasSuffix(m, "_s") && !(v >= results.MinRecordSeconds) {
			return fmt.Errorf("derived %s = %v: a prediction is a positive time, at least %g s", k, v, results.MinRecordSeconds)
		}
		if strings.HasSuffix(k, "_s") && (v < 0 || v > 0 && v < results.MinRecordSeconds) {
			return fmt.Errorf("derived %s = %v: a time is 0 or at least %g s", k, v, results.MinRecordSeconds)
		}
	}
	for _, k := range keys {
		v := r.Derived[k]
		name, isErr := strings.CutPrefix(k, "pred_err_")
		if !isErr {
			continue
		}
		pred, ok := r.Derived["pred_"+name+"_s"]
		if !ok || !(meas > 0) {
			return fmt.Errorf("derived %s = %v without pred_%s_s and a positive %s to be the error of", k, v, name, measName)
		}
		if want := (pred - meas) / meas; math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return fmt.Errorf("derived %s = %v disagrees with (pred_%s_s - %s) / %s = %.6g", k, v, name, measName, measName, want)
		}
	}
	return checkWorkload(r)
}

// checkPredKey refuses a derived key of the predictions' prefix that is
// neither pred_NAME_s (a prediction) nor pred_err_NAME (its error), NAME
// a model's name as Annotate and report.AnnotateApps write it (letters,
// digits, '-' and '_'): a table reads only those two forms and would drop
// any other key silently.
func checkPredKey(k string) error {
	m, ok := strings.CutPrefix(k, "pred_")
	if !ok {
		return nil
	}
	name, isErr := strings.CutPrefix(m, "err_")
	if !isErr {
		var isPred bool
		if name, isPred = strings.CutSuffix(m, "_s"); !isPred {
			name = ""
		}
	}
	if name == "" || derivedName(name) != name {
		return fmt.Errorf("derived %s: a prediction's key is pred_NAME_s (seconds) or pred_err_NAME (its relative error), NAME a model's name of letters, digits, '-' and '_'", results.Printable(k))
	}
	if !isModelName(name) {
		return fmt.Errorf("derived %s: %q names no model; a prediction's NAME is a model kind (%s), maybe with -N or its file's name after it", results.Printable(k), name, strings.Join(model.Kinds(), ", "))
	}
	return nil
}

// isModelName reports whether name is a predictor's name as the writers
// spell it in a derived key: a model kind (model.Kinds), the kind-N of a
// further predictor of one kind (report.Predictors), or the kind with its
// file's base name in brackets (appexp.NameModels), the brackets and what
// is no letter, digit, '-' or '_' made '_' (derivedName).
func isModelName(name string) bool {
	for _, kind := range model.Kinds() {
		rest, ok := strings.CutPrefix(name, kind)
		if !ok {
			continue
		}
		if rest == "" || strings.HasPrefix(rest, "__") {
			return true
		}
		if n, ok := strings.CutPrefix(rest, "-"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}
