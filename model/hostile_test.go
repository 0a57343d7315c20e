package model

import (
	"cmp"
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
		{"t_w of 1 with its unit left out", `4e-11`, `1, "unit": ""`, "fit.t_w.value = 1 s/B: a time per byte beyond 0.1 s/B", 0},
		{"t_w of 1 ms/B", `4e-11`, `0.001`, "", 0},
		{"units left out", `"unit": "s/B",`, ``, "", 0},
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
