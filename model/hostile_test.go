package model

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/results"
)

// TestUnmarshalRefusesWhatWouldMislead: a model file whose top-level params
// (what a user reads and edits) disagree with its body (what predicts) is
// refused rather than predicted from the body in silence, and so is a
// parameter no machine has.
func TestUnmarshalRefusesWhatWouldMislead(t *testing.T) {
	good, err := Marshal(&Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1.5e-6}, Tw: Param{Name: "t_w", Unit: "s/B", Value: 4e-11}, MinBytes: 8, MaxBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []modelEdit{
		{"as written", "", "", "", 0},
		{"params left out", `"params": [`, `"unused": [`, "", 0},
		// The first match is the top-level params, which a user edits.
		{"edited params, body as fitted", `"value": 0.0000015`, `"value": 0.0000025`, `"params" gives t_s = 2.5e-06 but the "fit" body, which is what predicts, has 1.5e-06`, 1},
		{"param the model lacks", `"name": "t_s"`, `"name": "latency"`, `"params" lists latency, which the model does not have (its parameters: t_s, t_w)`, 1},
		{"absurd time in both", `0.0000015`, `1e300`, "parameter t_s = 1e+300 s is beyond 1e+09", 0},
		{"params unit not the model's", `"unit": "s",`, `"unit": "ms",`, `"params" gives t_s in unit "ms" but the model writes it in "s"`, 1},
		{"params empty", `"params": [`, `"params": [], "unused": [`, `"params" lacks t_s: when given, it lists each of the model's parameters once (its parameters: t_s, t_w`, 1},
		{"params lacks t_w", `"params": [`, `"params": [{"name": "t_s", "unit": "s", "value": 0.0000015}], "unused": [`, `"params" lacks t_w`, 1},
		{"params repeats t_s", `"name": "t_w"`, `"name": "t_s"`, `"params" lists t_s 2 times; the model has it once`, 1},
		// Predict uses a value as the unit its fit writes: another unit is
		// refused, not read as that one.
		{"t_w in ns/B", `"unit": "s/B"`, `"unit": "ns/B"`, `fit.t_w.unit = "ns/B": t_w is read in s/B, and no reader converts units (its value would be used as s/B); accepted: "s/B"`, 0},
		{"t_w in a time's unit", `"unit": "s/B"`, `"unit": "s"`, `fit.t_w.unit = "s": t_w is read in s/B`, 0},
		{"t_s per byte", `"unit": "s",`, `"unit": "s/B",`, `fit.t_s.unit = "s/B": t_s is read in s`, 0},
		{"t_s in microseconds", `"unit": "s",`, `"unit": "us",`, `fit.t_s.unit = "us": t_s is read in s`, 0},
		{"t_w of 1 s/B", `4e-11`, `1`, "fit.t_w.value = 1 s/B: a time per byte beyond 0.1 s/B (a rate below 10 bytes a second) is no machine's", 0},
		{"t_w of 1 with its unit left out", `"unit": "s/B",
      "value": 4e-11`, `"unit": "",
      "value": 1`, "fit.t_w.value = 1 s/B: a time per byte beyond 0.1 s/B", 0},
		{"t_w of 1 ms/B", `4e-11`, `0.001`, "", 0},
		{"units left out", `"unit": "s/B",`, ``, "", 0},
		// Keys match exactly and once: the decoder would take "Fit" for
		// fit and keep the last of two values.
		{"an extra top-level key", `"model": "hockney",`, `"model": "hockney", "extra": 1,`, "model JSON: field extra: no such key here (the keys here: model, backend, params, fit, validation, splits)", 0},
		{"a top-level key in another case", `"model": "hockney",`, `"model": "hockney", "Backend": "local",`, `model JSON: field Backend: keys are case-sensitive, and the field is "backend"`, 0},
		{"a top-level key given twice", `"model": "hockney",`, `"model": "hockney", "model": "logp",`, "model JSON: field model: the key is given twice in one object", 0},
		{"a body key in another case", `"min_bytes": 8`, `"min_bytes": 8, "MIN_BYTES": 64`, `model JSON: hockney: field fit.MIN_BYTES: keys are case-sensitive, and the field is "min_bytes"`, 0},
		{"a body key given twice", `"min_bytes": 8`, `"min_bytes": 8, "min_bytes": 64`, "model JSON: field fit.min_bytes: the key is given twice in one object", 0},
		{"an unknown body key", `"min_bytes": 8`, `"min_bytes": 8, "min_size": 8`, "model JSON: hockney: field fit.min_size: no such key here (the keys here: t_s, t_w, min_bytes, max_bytes, quality)", 0},
		{"an unknown key in a listed parameter", `"value": 0.0000015`, `"value": 0.0000015, "valeu": 2`, "model JSON: field params[0].valeu: no such key here (the keys here: name, unit, value, se, ci95, fixed)", 1},
		{"a parameter's value given twice", `"value": 0.0000015`, `"value": 0.0000015, "value": 0.0000025`, "field params[0].value: the key is given twice in one object", 1},
		// The backend is one a fit writes, in its case: another would pass
		// the readers that refuse a fit of local records.
		{"backend Local", `"model": "hockney",`, `"model": "hockney", "backend": "Local",`, `model JSON: field backend "Local" is none commcost writes; accepted (exact case): native, local, replay, none, or the key left out`, 0},
		{"backend made up", `"model": "hockney",`, `"model": "hockney", "backend": "quantum",`, `field backend "quantum" is none commcost writes`, 0},
		{"backend local", `"model": "hockney",`, `"model": "hockney", "backend": "local",`, "", 0},
		{"backend native", `"model": "hockney",`, `"model": "hockney", "backend": "native",`, "", 0},
	}
	checkEdits(t, string(good), tests)
}

// modelEdit is a case of a model file edited by hand: the first n
// matches (every match when n is 0) of from in the file as written
// replaced by to, and the error the reader gives ("" accepted).
type modelEdit struct {
	name, from, to, want string
	n                    int
}

// checkEdits reads good with each edit applied.
func checkEdits(t *testing.T, good string, tests []modelEdit) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := good
			if tc.from != "" {
				if !strings.Contains(data, tc.from) {
					t.Fatalf("%q not in\n%s", tc.from, data)
				}
				data = strings.Replace(data, tc.from, tc.to, cmp.Or(tc.n, -1))
			}
			data = dropUnused(t, data)
			_, _, err := Unmarshal([]byte(data))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// dropUnused removes the top-level member "unused" that an edit renamed
// a member to, leaving that member out: the reader refuses a key no
// model file has.
func dropUnused(t *testing.T, data string) string {
	t.Helper()
	if !strings.Contains(data, `"unused"`) {
		return data
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &top); err != nil {
		t.Fatal(err)
	}
	delete(top, "unused")
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestReadFileRefusesNonRegular: a model file that is a FIFO, a device or
// a directory is refused at once (reading a FIFO without a writer blocks).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	good := filepath.Join(dir, "hockney.json")
	data, _ := Marshal(&Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1e-6}, Tw: Param{Name: "t_w", Unit: "s/B", Value: 1e-10}}, nil)
	if err := os.WriteFile(good, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"regular", good, ""},
		{"fifo", fifo, "named pipe"},
		{"device", "/dev/zero", "character device"},
		{"directory", dir, "directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, _, err := ReadFile(tc.path); done <- err }()
			select {
			case err := <-done:
				if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadFile blocked on %s", tc.path)
			}
		})
	}
}

// TestSizeRangeMessage: the size window is said in the units the flags
// take, a missing bound as none (--min-bytes 1G alone read "[1.07e+09,
// 0]"), next to the sizes the records have.
func TestSizeRangeMessage(t *testing.T) {
	tests := []struct {
		opt  Options
		want string
	}{
		{Options{MinBytes: 1 << 30}, "at least 1G bytes"},
		{Options{MaxBytes: 64 << 10}, "at most 64K bytes"},
		{Options{MinBytes: 64 << 10, MaxBytes: 1 << 20}, "within [64K, 1M] bytes"},
		{Options{MinBytes: 1000}, "at least 1000 bytes"},
		{Options{}, "of any size"},
	}
	for _, tc := range tests {
		if got := tc.opt.SizeRange(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opt, got, tc.want)
		}
	}
	recs := []results.Record{pingpongRecord(8, 2e-6), pingpongRecord(65536, 8e-6), pingpongRecord(1024, 3e-6)}
	_, err := Fit("hockney", recs, Options{MinBytes: 1 << 30})
	if err == nil || !strings.Contains(err.Error(), "hockney: no message size is at least 1G bytes; the records' sizes are 8 to 64K bytes") {
		t.Errorf("fit beyond the records' sizes: %v", err)
	}
}

func pingpongRecord(bytes int, sec float64) results.Record {
	return results.Record{Schema: 1, Bench: "pingpong", Params: results.Params{"bytes": bytes}, Ranks: 2, Unit: "s",
		Summary: results.Summary{N: 1, Min: sec, Median: sec, Max: sec, Mean: sec, CI95: [2]float64{sec, sec}}}
}

// TestUnmarshalRefusesImpossibleMetadata: the metadata beside a model's
// parameters (standard errors, fit quality, fitted sizes, validation) is
// refused when no fit writes it so, in the file's JSON names.
func TestUnmarshalRefusesImpossibleMetadata(t *testing.T) {
	h := &Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{1.3e-6, 1.7e-6}},
		Tw:       Param{Name: "t_w", Unit: "s/B", Value: 4e-11, SE: 1e-12, CI95: [2]float64{3.8e-11, 4.2e-11}},
		MinBytes: 8, MaxBytes: 1 << 20, Fit: Quality{N: 5, DoF: 3, RSE: 0.02, RSEUnit: "relative", Cond: 1.3, Weighting: "relative"}}
	v := &Validation{Scheme: "every:4", NTrain: 4, NTest: 1, MedianRelErr: 0.05, P95RelErr: 0.05, MaxRelErr: 0.05,
		Points: []HeldOutPoint{{Point: "pingpong bytes=512", Measured: 4e-7, Predicted: 4.2e-7, RelErr: 0.05}}}
	good, err := Marshal(h, v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []modelEdit{
		{"as written", "", "", "", 0},
		{"negative standard error", `"se": 1e-7`, `"se": -5`, "fit.t_s.se = -5: a standard error is >= 0", 0},
		{"negative rse", `"rse": 0.02`, `"rse": -1`, "fit.quality.rse = -1: a residual standard error is >= 0", 0},
		{"min above max", `"min_bytes": 8`, `"min_bytes": 1000000000`, "fit.min_bytes = 1e+09 is above fit.max_bytes = 1.048576e+06", 0},
		{"max beyond a record's bytes", `"max_bytes": 1048576`, `"max_bytes": 1e30`, "fit.max_bytes = 1e+30: a size is 0 to 1e+19 bytes", 0},
		{"negative min", `"min_bytes": 8`, `"min_bytes": -8`, "fit.min_bytes = -8: a size is 0 to 1e+19 bytes", 0},
		{"fractional min", `"min_bytes": 8`, `"min_bytes": 1.5`, "fit.min_bytes = 1.5: a size is a whole number of bytes", 0},
		{"fractional max", `"max_bytes": 1048576`, `"max_bytes": 1048576.25`, "fit.max_bytes = 1.04857625e+06: a size is a whole number of bytes", 0},
		{"negative point count", `"n": 5`, `"n": -5`, "fit.quality.n = -5: a count is >= 0", 0},
		{"more dof than points", `"dof": 3`, `"dof": 30`, "fit.quality.dof = 30 is above fit.quality.n = 5", 0},
		{"reversed interval", `0.0000013`, `0.0000019`, "fit.t_s.ci95 = [1.9e-06, 1.7e-06]: the 95% interval's low end is above its high end", 0},
		{"negative condition", `"cond": 1.3`, `"cond": -1`, "fit.quality.cond = -1: a condition number is >= 0", 0},
		{"validation median above max", `"max_rel_err": 0.05`, `"max_rel_err": 0.01`, "validation.p95_rel_err = 0.05 is above validation.max_rel_err = 0.01", 0},
		{"validation lists fewer points", `"n_test": 1`, `"n_test": 7`, "validation.n_test = 7 but validation.points lists 1 held-out points", 0},
		{"validation negative error", `"rel_err": 0.05`, `"rel_err": -0.05`, "validation.points[0].rel_err = -0.05: a relative error is >= 0", 0},
		{"adjusted R^2 above 1", `"adj_r2": 0`, `"adj_r2": 5`, "fit.quality.adj_r2 = 5: an adjusted R^2 is at most 1", 0},
		{"adjusted R^2 negative", `"adj_r2": 0`, `"adj_r2": -3`, "", 0},
		{"trimmed beyond the points named", `"trimmed": 0`, `"trimmed": 99`, "fit.quality.trimmed = 99 but fit.quality.trimmed_points names 0 points", 0},
		{"interval excludes its value", `"ci95": [
        0.0000013,
        0.0000017`, `"ci95": [
        1,
        2`, "fit.t_s.ci95 = [1, 2] does not contain fit.t_s.value = 1.5e-06: a 95% interval contains its estimate", 0},
		{"rse in the unit of another weighting", `"rse_unit": "relative"`, `"rse_unit": "s"`, `fit.quality.rse_unit = "s": a fit of weighting "relative" writes its residual standard error in "relative"; accepted: "relative"`, 0},
		{"rse of a fit weighted by its intervals", `"weighting": "relative"`, `"weighting": "ci"`, `fit.quality.rse_unit = "relative": a fit of weighting "ci" writes its residual standard error in "standard errors"`, 0},
		{"validation measured zero", `"measured": 4e-7`, `"measured": 0`, "validation.points[0].measured = 0: a held-out point's measured time is positive", 0},
	}
	checkEdits(t, string(good), tests)
}

// TestUnmarshalRefusesInconsistentIntervals: a parameter's 95% interval
// is value ± t se with t between the normal quantile and t at one degree
// of freedom, or [value, value] without an SE; one that contradicts its
// SE, or a ci95 of [0, 0] that leaves out its value, is refused.
func TestUnmarshalRefusesInconsistentIntervals(t *testing.T) {
	tw := Param{Name: "t_w", Unit: "s/B", Value: 4e-11, SE: 1e-12, CI95: [2]float64{3.8e-11, 4.2e-11}}
	tests := []struct {
		name string
		ts   Param
		want string // "" accepted
	}{
		{"value ± 2 se", Param{Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{1.3e-6, 1.7e-6}}, ""},
		{"value ± t(1) se", Param{Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{1.5e-6 - 12.706e-7, 1.5e-6 + 12.706e-7}}, ""},
		{"without an uncertainty", Param{Value: 1.5e-6, CI95: [2]float64{1.5e-6, 1.5e-6}}, ""},
		{"built without an interval", Param{Value: 1.5e-6}, ""}, // written as [value, value]
		{"an SE lost in the rounding of its interval", Param{Value: 1.5e-6, SE: 1e-20, CI95: [2]float64{1.5e-6, 1.5e-6}}, ""},
		{"ci_zero_width_se", Param{Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{1.5e-6, 1.5e-6}},
			"fit.t_s: ci95 = [1.5e-06, 1.5e-06] has half width 0, but se = 1e-07: a 95% interval is value ± t se with t >= 1.95"},
		{"ci_width_no_se", Param{Value: 1.5e-6, CI95: [2]float64{1.3e-6, 1.7e-6}},
			"fit.t_s: ci95 = [1.3e-06, 1.7e-06] has width 4e-07, but se = 0: an interval of a parameter without a standard error is [value, value]"},
		{"ci_too_narrow", Param{Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{1.45e-6, 1.55e-6}}, "with t >= 1.95, at least 3.9e-07 wide"},
		{"ci_too_wide", Param{Value: 1.5e-6, SE: 1e-9, CI95: [2]float64{1.3e-6, 1.7e-6}}, "with t <= 12.71, at most 2.54e-08 wide"},
		{"ci_zero_se", Param{Value: 1.5e-6, SE: 1e-7, CI95: [2]float64{0, 0}}, "fit.t_s.ci95 = [0, 0] does not contain fit.t_s.value = 1.5e-06"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.ts
			ts.Name, ts.Unit = "t_s", "s"
			data, err := Marshal(&Hockney{Ts: ts, Tw: tw, MinBytes: 8, MaxBytes: 1 << 20}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = Unmarshal(data)
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A ci95 of [0, 0] written for another value, with or without an SE.
	good, err := Marshal(&Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1.5e-6}, Tw: tw, MinBytes: 8, MaxBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkEdits(t, string(good), []modelEdit{
		{"ci95 left out", `,
      "ci95": [
        0.0000015,
        0.0000015
      ]`, ``, "", 0},
		{"ci_zero_value", `"ci95": [
        0.0000015,
        0.0000015
      ]`, `"ci95": [0, 0]`, "fit.t_s.ci95 = [0, 0] does not contain fit.t_s.value = 1.5e-06: a 95% interval contains its estimate", 0},
	})
}

// TestUnmarshalRefusesImplausibleLinks: a link's per-byte time (t_w, G,
// beta, beta_x) resolved below 1e-13 s/B, a bandwidth above 10 TB/s, or
// its latency (t_s, L, alpha) resolved below 1e-10 s is no machine's and
// is refused (export simgrid would write a link of 1e30 B/s); a value of
// 0, or one whose interval reaches the bound, is not resolved so and is
// left to the commands (a negative one: TestUnmarshalRefusesNegativeTimes).
func TestUnmarshalRefusesImplausibleLinks(t *testing.T) {
	p := func(name, unit string, v, se float64) Param {
		return Param{Name: name, Unit: unit, Value: v, SE: se, CI95: [2]float64{v - 2*se, v + 2*se}}
	}
	ts, tw := p("t_s", "s", 1.5e-6, 1e-7), p("t_w", "s/B", 4e-11, 1e-12)
	hockney := func(ts, tw Param) Model { return &Hockney{Ts: ts, Tw: tw, MinBytes: 8, MaxBytes: 1 << 20} }
	tests := []struct {
		name string
		m    Model
		want string // "" accepted
	}{
		{"a fit of 25 GB/s", hockney(ts, tw), ""},
		{"10 TB/s", hockney(ts, p("t_w", "s/B", 1e-13, 0)), ""},
		{"t_w of 0", hockney(ts, p("t_w", "s/B", 0, 0)), ""},
		{"t_w unresolved near 0", hockney(ts, p("t_w", "s/B", 1e-15, 1e-12)), ""},
		{"a latency of 0.1 ns", hockney(p("t_s", "s", 1e-10, 0), tw), ""},
		{"tw_1e-30", hockney(ts, p("t_w", "s/B", 1e-30, 1e-32)),
			"model JSON: hockney: fit.t_w: t_w = 1e-30 s/B (a bandwidth of 1e+30 B/s): a link's time per byte is at least 1e-13 s/B (10 TB/s, above any link); accepted: 1e-13 to 0.1 s/B"},
		{"tw_1e-30_fixed", hockney(ts, p("t_w", "s/B", 1e-30, 0)), "fit.t_w: t_w = 1e-30 s/B"},
		{"ts_1e-20", hockney(p("t_s", "s", 1e-20, 1e-22), tw),
			"fit.t_s: t_s = 1e-20 s: a link's latency is at least 1e-10 s (a tenth of a nanosecond); accepted: 1e-10 to 1e+09 s"},
		{"pw_segment_tw", &Piecewise{Segments: []Segment{{FromBytes: 8, ToBytes: 1024, Ts: ts, Tw: tw},
			{FromBytes: 1024, ToBytes: 1 << 20, Ts: ts, Tw: p("t_w", "s/B", 2e-16, 1e-18)}}, Breakpoints: []float64{1024}},
			"fit.segments[1].t_w: t_w = 2e-16 s/B (a bandwidth of 5e+15 B/s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkReadBack(t, tc.m, tc.want) })
	}
}

// TestUnmarshalRefusesNegativeTimes: a point-to-point model that prices
// some message in negative time (a negative latency, overhead, gap or
// time per byte; a piecewise segment below 0 somewhere in the sizes it
// prices) is refused by the one reader of model files, so predict,
// compare --models, app table and the programs' --model refuse it as
// replay and export simgrid do.
func TestUnmarshalRefusesNegativeTimes(t *testing.T) {
	p := func(name, unit string, v float64) Param { return Param{Name: name, Unit: unit, Value: v} }
	hockney := func(ts, tw float64) Model {
		return &Hockney{Ts: p("t_s", "s", ts), Tw: p("t_w", "s/B", tw), MinBytes: 8, MaxBytes: 1 << 20}
	}
	loggp := func(edit func(*LogGP)) Model {
		m := &LogGP{L: p("L", "s", 1e-6), Os: p("o_s", "s", 4e-7), Or: p("o_r", "s", 6e-7), G: p("g", "s", 5e-7),
			BG: p("G", "s/B", 1e-10), OsB: p("O_s", "s/B", 1e-11), OrB: p("O_r", "s/B", 1e-11), MinBytes: 1}
		edit(m)
		return m
	}
	seg := func(from, to, ts, tw float64) Segment {
		return Segment{FromBytes: from, ToBytes: to, Ts: p("t_s", "s", ts), Tw: p("t_w", "s/B", tw)}
	}
	pw := func(s ...Segment) Model {
		var bp []float64
		for _, x := range s[1:] {
			bp = append(bp, x.FromBytes)
		}
		return &Piecewise{Segments: s, Breakpoints: bp}
	}
	tests := []struct {
		name string
		m    Model
		want string // "" accepted
	}{
		{"hockney as fitted", hockney(1.5e-6, 4e-11), ""},
		{"hockney negative t_w", hockney(1.5e-6, -4e-11),
			"model JSON: hockney: t_w = -4e-11 s/B is negative: a message would cost less the longer it is, and a fit that prices messages in negative time cannot be used"},
		{"hockney negative t_w within its sizes", &Hockney{Ts: p("t_s", "s", 1e-3), Tw: p("t_w", "s/B", -1e-12), MinBytes: 65536, MaxBytes: 1 << 21},
			"model JSON: hockney: t_w = -1e-12 s/B is negative"},
		{"hockney negative t_s", hockney(-1e-7, 4e-11), "model JSON: hockney: t_s + t_w m (t_s = -1e-07 s, t_w = 4e-11 s/B) is -9.968e-08 s for a 8-byte message"},
		{"hockney negative t_s, no fitted sizes", &Hockney{Ts: p("t_s", "s", -1e-7), Tw: p("t_w", "s/B", 4e-11)},
			"model JSON: hockney: t_s + t_w m (t_s = -1e-07 s, t_w = 4e-11 s/B) is -1e-07 s for a 0-byte message"},
		// A fit from 64 KiB up on a shaped link: its line meets the axis
		// below 0 and prices every size it was fitted to above 0.
		{"hockney negative t_s from 64 KiB up", &Hockney{Ts: p("t_s", "s", -8.75e-4), Tw: p("t_w", "s/B", 4.19e-8), MinBytes: 65536, MaxBytes: 1 << 21}, ""},
		// A slope fitted a hair below 0 that no message size makes a
		// negative time (rounding in a fit's solve) passes.
		{"hockney t_w of rounding", hockney(1.5e-6, -1e-27), ""},
		{"loggp as fitted", loggp(func(*LogGP) {}), ""},
		{"loggp negative L", loggp(func(m *LogGP) { m.L.Value = -2e-7 }), "model JSON: loggp: the wire time L + (m-1) G (L = -2e-07 s, G = 1e-10 s/B) is -2e-07 s for a 0-byte message"},
		{"loggp negative o_r", loggp(func(m *LogGP) { m.Or.Value = -1e-7 }), "the receive overhead o_r + O_r m (o_r = -1e-07 s, O_r = 1e-11 s/B) is -1e-07 s for a 0-byte message"},
		{"loggp negative G", loggp(func(m *LogGP) { m.BG.Value = -1e-10 }), "the wire time L + (m-1) G (L = 1e-06 s, G = -1e-10 s/B) is -0.2147 s for a 2147483647-byte message"},
		{"loggp negative O_s", loggp(func(m *LogGP) { m.OsB.Value = -1e-11 }), "the send overhead o_s + O_s m (o_s = 4e-07 s, O_s = -1e-11 s/B) is -0.02147 s"},
		{"loggp negative g", loggp(func(m *LogGP) { m.G.Value = -1e-6 }), "the gap g + (m-1) G (g = -1e-06 s, G = 1e-10 s/B) is -1e-06 s for a 0-byte message"},
		{"loggp O_s of rounding", loggp(func(m *LogGP) { m.OsB.Value = -1.5e-27 }), ""},
		{"logp negative g", &LogP{L: p("L", "s", 1e-6), O: p("o", "s", 5e-7), G: p("g", "s", -5e-7), PacketBytes: 64}, "model JSON: logp: g = -5e-07 s is negative: a fit that prices messages in negative time cannot be used"},
		{"postal negative lambda", &Postal{Lambda: p("lambda", "units", -2), Unit: p("unit", "s", 5e-7), PacketBytes: 64}, "model JSON: postal: lambda = -2 units is negative"},
		// lambda = 2 + L/o: below 2 is the negative LogP latency a logp
		// file is refused for.
		{"postal lambda below 1 (L < -o)", &Postal{Lambda: p("lambda", "units", 0.465), Unit: p("unit", "s", 1.9e-6), PacketBytes: 1}, "model JSON: postal: lambda = 0.465 units is below 2: lambda is 2 + L/o, so its LogP latency L = (lambda - 2) unit = -2.916e-06 s is negative"},
		{"postal lambda 1.5", &Postal{Lambda: p("lambda", "units", 1.5), Unit: p("unit", "s", 1e-6), PacketBytes: 64}, "lambda = 1.5 units is below 2"},
		{"postal lambda 2 (L = 0)", &Postal{Lambda: p("lambda", "units", 2), Unit: p("unit", "s", 1e-6), PacketBytes: 64}, ""},
		{"piecewise as fitted", pw(seg(8, 4096, 1e-6, 4e-10), seg(8192, 1<<20, 3e-6, 1e-10)), ""},
		// A later segment's intercept may be negative where its line is
		// positive over every size it prices.
		{"piecewise negative intercept of a later segment", pw(seg(8, 4096, 1e-6, 4e-10), seg(65536, 1<<20, -1e-6, 1e-10)), ""},
		{"piecewise negative first t_s", pw(seg(8, 4096, -1e-6, 4e-10), seg(8192, 1<<20, 3e-6, 1e-10)),
			"model JSON: piecewise: segment 1's t_s + t_w m (t_s = -1e-06 s, t_w = 4e-10 s/B) is -1e-06 s for a 0-byte message"},
		{"piecewise negative last t_w", pw(seg(8, 4096, 1e-6, 4e-10), seg(8192, 1<<20, 3e-6, -1e-13)),
			"segment 2's t_s + t_w m (t_s = 3e-06 s, t_w = -1e-13 s/B) is -0.0002117 s for a 2147483647-byte message"},
		{"piecewise segment below 0 before the next", pw(seg(8, 4096, 1e-6, -4e-10), seg(8192, 1<<20, 3e-6, 1e-10)),
			"segment 1's t_s + t_w m (t_s = 1e-06 s, t_w = -4e-10 s/B) is -2.277e-06 s for a 8192-byte message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkReadBack(t, tc.m, tc.want) })
	}
}

// checkReadBack writes m as a model file and reads it back: refused with
// an error containing want, or accepted when want is "".
func checkReadBack(t *testing.T, m Model, want string) {
	t.Helper()
	data, err := Marshal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Unmarshal(data)
	if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
