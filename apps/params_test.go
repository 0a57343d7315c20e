package apps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestPredictionsCheckedOnRead: an annotated phase record (Annotate) is
// refused on read, naming the line and the value, when a prediction is not
// a positive time or a stored error is not (pred - measured) / measured
// of the record's own prediction and measurement.
func TestPredictionsCheckedOnRead(t *testing.T) {
	const meas = 4e-4
	tests := []struct {
		name string
		edit func(d map[string]float64)
		want string // "" accepted
	}{
		{"as annotated", func(d map[string]float64) {}, ""},
		{"prediction of -5 s", func(d map[string]float64) { d["pred_hockney_s"] = -5 }, "line 1: record app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async: derived pred_hockney_s = -5: a prediction is a positive time"},
		{"prediction of 0 s", func(d map[string]float64) { d["pred_hockney_s"] = 0 }, "derived pred_hockney_s = 0: a prediction is a positive time"},
		{"error of 1e300", func(d map[string]float64) { d["pred_err_hockney"] = 1e300 }, "derived pred_err_hockney = 1e+300 disagrees with (pred_hockney_s - measured_s) / measured_s = -0.5"},
		{"error of another prediction", func(d map[string]float64) { d["pred_hockney_s"] = 8e-4 }, "derived pred_err_hockney = -0.5 disagrees with (pred_hockney_s - measured_s) / measured_s = 1"},
		{"error without its prediction", func(d map[string]float64) { delete(d, "pred_hockney_s") }, "derived pred_err_hockney = -0.5 without pred_hockney_s"},
		{"error against the median without measured_s", func(d map[string]float64) { delete(d, "measured_s") }, ""},
		{"error the median contradicts", func(d map[string]float64) { delete(d, "measured_s"); d["pred_err_hockney"] = 1 }, "derived pred_err_hockney = 1 disagrees with (pred_hockney_s - median) / median = -0.5"},
		{"prediction without an error", func(d map[string]float64) { delete(d, "pred_err_hockney") }, ""},
		{"prediction of 1e-300 s", func(d map[string]float64) { d["pred_hockney_s"] = 1e-300; d["pred_err_hockney"] = -1 },
			"derived pred_hockney_s = 1e-300: a prediction is a positive time, at least 1e-12 s"},
		{"measured_s of -1 s", func(d map[string]float64) { d["measured_s"] = -1 }, "derived measured_s = -1: a time is 0 or at least 1e-12 s"},
		{"envelope of 1e-300 s", func(d map[string]float64) { d[results.DerivedEnvelope] = 1e-300 }, "derived envelope_s = 1e-300: a time is 0 or at least 1e-12 s"},
		{"envelope of 0 s (a phase that moved nothing)", func(d map[string]float64) { d[results.DerivedEnvelope] = 0 }, ""},
		{"a prediction of a numbered model", func(d map[string]float64) { d["pred_hockney-2_s"] = 3e-4 }, ""},
		{"a prediction of a model file's kind", func(d map[string]float64) { d["pred_trilinear__read_json__s"] = 3e-4 }, ""},
		{"a prediction of a kind with a dash", func(d map[string]float64) { d["pred_trilinear-piecewise_s"] = 3e-4 }, ""},
		{"pred_fake", func(d map[string]float64) { d["pred_fake_s"] = 1e-4; d["pred_err_fake"] = -0.75 },
			`derived pred_err_fake: "fake" names no model; a prediction's NAME is a model kind (bsp, bspstar,`},
		{"pred_kind_suffix", func(d map[string]float64) { d["pred_hockneyx_s"] = 3e-4 }, `derived pred_hockneyx_s: "hockneyx" names no model`},
		{"pred_kind_dash_word", func(d map[string]float64) { d["pred_hockney-x_s"] = 3e-4 }, `derived pred_hockney-x_s: "hockney-x" names no model`},
		{"a prediction key without its unit", func(d map[string]float64) { d["pred_zzz"] = 3 }, "derived pred_zzz: a prediction's key is pred_NAME_s (seconds) or pred_err_NAME (its relative error)"},
		{"a prediction of a name no model has", func(d map[string]float64) { d["pred_bogus!!_s"] = 3e-4 }, "derived pred_bogus!!_s: a prediction's key is"},
		{"a prediction of no name", func(d map[string]float64) { d["pred__s"] = 3e-4 }, "derived pred__s: a prediction's key is"},
		{"an error of no name", func(d map[string]float64) { d["pred_err_"] = 0 }, "derived pred_err_: a prediction's key is"},
		{"a prediction key with an escape", func(d map[string]float64) { d["pred_\x1b[2J_s"] = 3e-4 }, `derived pred_\x1b[2J_s: a prediction's key is`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := results.Record{Schema: 1, Bench: Bench, Ranks: 2, Unit: results.UnitSeconds,
				Params:  results.Params{"app": "gauss", "n": 64, "matrix": "dd", "variant": "async", "phase": "xbcast", "kind": results.PhaseKindComm},
				Summary: results.Summary{N: 1, Min: meas, Median: meas, Mean: meas, Max: meas, P90: meas, P99: meas, CI95: [2]float64{meas, meas}},
				Derived: map[string]float64{"measured_s": meas, "pred_hockney_s": 2e-4, "pred_err_hockney": -0.5}}
			r.Workload = writtenWorkload(r.Params, r.Ranks)
			tc.edit(r.Derived)
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = results.ReadJSONL(strings.NewReader(string(line) + "\n"))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPhaseRecordUnitAndCounters: an application phase record is a time
// in s, and its programs' counters (keys, a bucket's expansion, a
// residual) are not negative.
func TestPhaseRecordUnitAndCounters(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"as measured", func(r *results.Record) {}, ""},
		{"a counter of -100", func(r *results.Record) { r.Counters["bytes_sent"] = -100 }, "counters bytes_sent = -100 is negative"},
		{"unit ms", func(r *results.Record) { r.Unit = "ms" }, `unit "ms": an application phase's record is a time in "s"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := results.Record{Schema: 1, Bench: Bench, Ranks: 2, Unit: results.UnitSeconds,
				Params:   results.Params{"app": "samplesort", "n": 128, "k": 4, "l": 64, "phase": "distribution", "kind": results.PhaseKindComm},
				Summary:  results.Summarize([]float64{4e-4, 5e-4}),
				Counters: map[string]float64{CounterExpansion: 1.25, CounterSample: 2}}
			r.Workload = writtenWorkload(r.Params, r.Ranks)
			tc.edit(&r)
			err := r.CheckValues()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
