package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// Models and records are checked for physical sense.

// editModel writes a copy of the model file src with edit applied to its
// "fit" body.
func editModel(t *testing.T, src, dst string, edit func(fit map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m["fit"].(map[string]any))
	// The top-level params are a copy of the body's for readers; left in,
	// they would disagree with the edited body (refused on their own).
	delete(m, "params")
	out, _ := json.Marshal(m)
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPhysicalSense: predict refuses impossible instances (exit 2, in the
// words of the pattern's flag checks), incomplete model files (exit 2)
// and predictions that are no time (exit 1); fit and report refuse
// records with impossible parameters, naming the line.
func TestPhysicalSense(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "pp.jsonl")
	writeJSONL(t, pp, synthetic("hockney"))
	hj := filepath.Join(dir, "h.json")
	code, out, errs := runCLI(t, "fit", "hockney", pp, "--format", "json")
	if code != 0 {
		t.Fatalf("fit: %s", errs)
	}
	os.WriteFile(hj, []byte(out), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"model":"hockney","fit":{}}`), 0o644)
	noTw := editModel(t, hj, filepath.Join(dir, "notw.json"), func(f map[string]any) { delete(f, "t_w") })
	noValue := editModel(t, hj, filepath.Join(dir, "novalue.json"), func(f map[string]any) { delete(f["t_s"].(map[string]any), "value") })
	negative := editModel(t, hj, filepath.Join(dir, "neg.json"), func(f map[string]any) {
		// the interval moved with the value, as a fit would write it
		ts := f["t_s"].(map[string]any)
		ts["value"], ts["se"], ts["ci95"] = -1e-3, 5e-5, []float64{-1.1e-3, -0.9e-3}
	})
	// Intervals no fit writes for their standard errors, and a link's
	// costs beyond any machine's.
	param := func(name, key string, value, se float64, ci []float64) string {
		return editModel(t, hj, filepath.Join(dir, name), func(f map[string]any) {
			p := f[key].(map[string]any)
			p["value"], p["se"], p["ci95"] = value, se, ci
		})
	}
	ciZero := param("cizero.json", "t_s", 2e-6, 1e-7, []float64{0, 0})
	ciPoint := param("cipoint.json", "t_s", 2e-6, 1e-7, []float64{2e-6, 2e-6})
	ciNoSE := param("cinose.json", "t_s", 2e-6, 0, []float64{1.8e-6, 2.2e-6})
	tw30 := param("tw30.json", "t_w", 1e-30, 0, []float64{1e-30, 1e-30})
	ts20 := param("ts20.json", "t_s", 1e-20, 1e-21, []float64{0.8e-20, 1.2e-20})
	huge := editModel(t, hj, filepath.Join(dir, "huge.json"), func(f map[string]any) { f["t_w"].(map[string]any)["value"] = 1e308 })
	// Fit metadata no fit writes, refused by the reader every command uses.
	seNeg := editModel(t, hj, filepath.Join(dir, "seneg.json"), func(f map[string]any) { f["t_s"].(map[string]any)["se"] = -5 })
	rseNeg := editModel(t, hj, filepath.Join(dir, "rse.json"), func(f map[string]any) { f["quality"].(map[string]any)["rse"] = -1 })
	minMax := editModel(t, hj, filepath.Join(dir, "minmax.json"), func(f map[string]any) { f["min_bytes"], f["max_bytes"] = 1e6, 8 })
	maxB := editModel(t, hj, filepath.Join(dir, "maxb.json"), func(f map[string]any) { f["max_bytes"] = 1e30 })
	tsStr := editModel(t, hj, filepath.Join(dir, "tsstr.json"), func(f map[string]any) { f["t_s"].(map[string]any)["value"] = "abc" })
	// A user's edit of the parameters a model file lists for reading,
	// which the body (what predicts) does not follow.
	edited := filepath.Join(dir, "edited.json")
	{
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		m["params"].([]any)[0].(map[string]any)["value"] = 0.5
		b, _ := json.Marshal(m)
		os.WriteFile(edited, b, 0o644)
	}
	// Records: valid ones with one impossible record on line 3.
	bad := func(name string, edit func(*results.Record)) string {
		recs := synthetic("hockney")[:4]
		edit(&recs[2])
		path := filepath.Join(dir, name)
		var lines []string
		for _, r := range recs {
			r.Schema = results.SchemaVersion
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(b))
		}
		os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return path
	}
	negBytes := bad("negbytes.jsonl", func(r *results.Record) { r.Params["bytes"] = -5 })
	fracBytes := bad("fracbytes.jsonl", func(r *results.Record) { r.Params["bytes"] = 2.5 })
	kk := bad("kk.jsonl", func(r *results.Record) {
		r.Bench = "kkaccess"
		r.Params = results.Params{"k": 4, "l": 64, "r": 5.0, "op": "read"}
	})
	// Sizes no MPI call can carry (more than mpi.MaxCount bytes).
	hugeBytes := bad("hugebytes.jsonl", func(r *results.Record) { r.Params["bytes"] = 1e12 })
	overBytes := bad("overbytes.jsonl", func(r *results.Record) { r.Params["bytes"] = 1 << 31 })
	hugeL := bad("hugel.jsonl", func(r *results.Record) {
		r.Bench = "kkaccess"
		r.Params = results.Params{"k": 4, "l": 1 << 40, "r": 1.0, "op": "read"}
	})
	// An application record whose workload names an impossible instance
	// or no pattern at all is refused on read, with its line.
	app := func(name string, item results.WorkItem) string {
		return bad(name, func(r *results.Record) {
			r.Bench = "app"
			r.Params = results.Params{"app": "test", "phase": "exchange", "kind": "comm"}
			r.Workload = []results.WorkItem{{Count: 1, Bench: "pingpong", Params: results.Params{"bytes": 8}}, item}
		})
	}
	wlR := app("wl-r.jsonl", results.WorkItem{Count: 3, Bench: "kkaccess", Params: results.Params{"k": 4, "l": 64, "r": 5, "op": "read"}})
	wlBytes := app("wl-bytes.jsonl", results.WorkItem{Count: 3, Bench: "pingpong", Params: results.Params{"bytes": -5}})
	wlHuge := app("wl-huge.jsonl", results.WorkItem{Count: 3, Bench: "alltoall", Params: results.Params{"bytes": 1e12}})
	wlNoBench := app("wl-nobench.jsonl", results.WorkItem{Count: 3, Params: results.Params{"bytes": 8}})
	wlCount := app("wl-count.jsonl", results.WorkItem{Count: -1, Bench: "pingpong", Params: results.Params{"bytes": 8}})
	wlOp := app("wl-op.jsonl", results.WorkItem{Count: 1, Bench: "kkaccess", Params: results.Params{"k": 1, "l": 64, "r": 1, "op": "rmw"}})
	runDir := filepath.Join(dir, "run")
	os.Mkdir(runDir, 0o755)
	if data, err := os.ReadFile(negBytes); err == nil {
		os.WriteFile(filepath.Join(runDir, results.RecordsFile), data, 0o644)
	}
	usage := []struct {
		name string
		args []string
		want string
	}{
		{"negative bytes", []string{"predict", hj, "pingpong", "bytes=-5"}, "bytes = -5: must not be negative"},
		{"fractional bytes", []string{"predict", hj, "pingpong", "bytes=2.5"}, "bytes = 2.5: must be a whole number"},
		{"bytes as typed", []string{"predict", hj, "pingpong", "bytes=99999999999999999999999"}, "PATTERN pingpong bytes=99999999999999999999999: bytes = 99999999999999999999999: must be an integer from 0 to 2147483647 bytes"},
		{"a size beyond one call", []string{"predict", hj, "pingpong", "bytes=3G"}, "PATTERN pingpong bytes=3G: bytes = 3G: must be an integer from 0 to 2147483647 bytes"},
		{"k zero", []string{"predict", hj, "kkaccess", "k=0", "l=64", "r=1", "op=read"}, "k = 0: must be positive"},
		{"r five", []string{"predict", hj, "kkaccess", "k=1", "l=64", "r=5", "op=read"}, "r = 5: must be in (0, 1]"},
		{"op unknown", []string{"predict", hj, "kkaccess", "k=1", "l=64", "r=1", "op=rmw"}, `op = "rmw": must be one of read, write`},
		// A pattern the model kind does not describe is said so, with the
		// ones it does, not as a parameter the instance lacks.
		{"pattern hockney does not describe", []string{"predict", hj, "kkaccess", "k=4", "l=1024", "r=1", "op=read"},
			`PATTERN kkaccess k=4 l=1024 r=1 op=read: pattern not described by this model: hockney predicts pingpong, roundtrip, not "kkaccess"`},
		{"unknown key", []string{"predict", hj, "pingpong", "bytes=8", "foo=3"}, `pingpong has no parameter "foo"`},
		// A parameter the model reads and the instance lacks is asked for
		// in the form predict takes, not as a record's defect.
		{"parameter missing", []string{"predict", hj, "pingpong"}, "PATTERN pingpong: the hockney model needs bytes=VALUE for pingpong; usage: commcost predict MODEL.json pingpong bytes=VALUE"},
		{"misspelt key", []string{"predict", hj, "pingpong", "byte=8"}, `pingpong has no parameter "byte"`},
		{"model without parameters", []string{"predict", empty, "pingpong", "bytes=8"}, "t_s is missing"},
		{"model missing a parameter", []string{"predict", noTw, "pingpong", "bytes=8"}, "t_w is missing"},
		{"parameter without value", []string{"predict", noValue, "pingpong", "bytes=8"}, "parameter t_s has no value"},
		{"model parameter no machine has", []string{"predict", huge, "pingpong", "bytes=8"}, "parameter t_w = 1e+308 s/B is beyond 1e+09 in absolute value"},
		{"params edited, body not", []string{"predict", edited, "pingpong", "bytes=8"}, `"params" gives t_s = 0.5 but the "fit" body, which is what predicts, has`},
		{"negative standard error", []string{"predict", seNeg, "pingpong", "bytes=8"}, "MODEL.json " + seNeg + ": model JSON: hockney: fit.t_s.se = -5: a standard error is >= 0"},
		{"negative standard error exported", []string{"export", "simgrid", seNeg, "--out", filepath.Join(dir, "sg")}, "MODEL.json " + seNeg + ": model JSON: hockney: fit.t_s.se = -5"},
		{"negative standard error in an app", []string{"app", "gauss", "--backend", "local", "--np", "2", "--n", "64", "--model", seNeg}, "--model " + seNeg + ": model JSON: hockney: fit.t_s.se = -5"},
		{"negative rse", []string{"predict", rseNeg, "pingpong", "bytes=8"}, "fit.quality.rse = -1: a residual standard error is >= 0"},
		{"an interval of [0, 0]", []string{"predict", ciZero, "pingpong", "bytes=8"},
			"MODEL.json " + ciZero + ": model JSON: hockney: fit.t_s.ci95 = [0, 0] does not contain fit.t_s.value = 2e-06: a 95% interval contains its estimate"},
		{"an interval of no width with a standard error", []string{"predict", ciPoint, "pingpong", "bytes=8"},
			"fit.t_s: ci95 = [2e-06, 2e-06] has half width 0, but se = 1e-07: a 95% interval is value ± t se with t >= 1.95, at least 3.9e-07 wide"},
		{"an interval without a standard error", []string{"predict", ciNoSE, "pingpong", "bytes=8"},
			"fit.t_s: ci95 = [1.8e-06, 2.2e-06] has width 4e-07, but se = 0: an interval of a parameter without a standard error is [value, value]"},
		{"a link of 1e30 B/s exported", []string{"export", "simgrid", tw30, "--out", filepath.Join(dir, "sg30")},
			"MODEL.json " + tw30 + ": model JSON: hockney: fit.t_w: t_w = 1e-30 s/B (a bandwidth of 1e+30 B/s): a link's time per byte is at least 1e-13 s/B (10 TB/s, above any link); accepted: 1e-13 to 0.1 s/B"},
		{"a latency of 1e-20 s", []string{"predict", ts20, "pingpong", "bytes=8"},
			"fit.t_s: t_s = 1e-20 s: a link's latency is at least 1e-10 s (a tenth of a nanosecond); accepted: 1e-10 to 1e+09 s"},
		{"fitted sizes reversed", []string{"predict", minMax, "pingpong", "bytes=8"}, "fit.min_bytes = 1e+06 is above fit.max_bytes = 8"},
		{"fitted size beyond a record's", []string{"predict", maxB, "pingpong", "bytes=8"}, "fit.max_bytes = 1e+30: a size is 0 to 1e+19 bytes"},
		{"parameter of the wrong type", []string{"predict", tsStr, "pingpong", "bytes=8"}, "MODEL.json " + tsStr + ": model JSON: hockney body: field t_s.value: the string is not a number"},
		{"fit: negative size on line 3", []string{"fit", "hockney", negBytes}, "line 3: record pingpong: impossible parameter bytes = -5"},
		{"fit: fractional size on line 3", []string{"fit", "hockney", fracBytes}, "line 3: record pingpong: impossible parameter bytes = 2.5"},
		{"fit: r = 5 on line 3", []string{"fit", "trilinear", kk}, "line 3: record kkaccess: impossible parameter r = 5"},
		{"report: negative size on line 3", []string{"report", runDir}, "line 3"},
		{"fit: 1e12 bytes on line 3", []string{"fit", "hockney", hugeBytes}, "line 3: record pingpong: impossible parameter bytes = 1000000000000: must be an integer from 0 to 2147483647 bytes"},
		{"fit: 2^31 bytes on line 3", []string{"fit", "hockney", overBytes}, "line 3: record pingpong: impossible parameter bytes = 2147483648: must be an integer from 0 to 2147483647 bytes"},
		{"fit: l of 1 TiB on line 3", []string{"fit", "trilinear", hugeL}, "line 3: record kkaccess: impossible parameter l = 1099511627776: must be an integer from 0 to 2147483647 bytes"},
		{"fit: workload r = 5 on line 3", []string{"fit", "hockney", wlR}, "line 3: record app: workload item 2: workload item kkaccess: impossible parameter r = 5"},
		{"fit: workload negative size on line 3", []string{"fit", "hockney", wlBytes}, "line 3: record app: workload item 2: workload item pingpong: impossible parameter bytes = -5"},
		{"fit: workload absurd size on line 3", []string{"fit", "hockney", wlHuge}, "line 3: record app: workload item 2: workload item alltoall: impossible parameter bytes = 1000000000000"},
		{"fit: workload without bench on line 3", []string{"fit", "hockney", wlNoBench}, "line 3: record app: workload item 2: workload item has no bench name"},
		{"fit: workload negative count on line 3", []string{"fit", "hockney", wlCount}, "line 3: record app: workload item 2: workload item pingpong has count -1"},
		{"fit: workload unknown op on line 3", []string{"fit", "hockney", wlOp}, `line 3: record app: workload item 2: workload item kkaccess: impossible parameter op = "rmw"`},
	}
	// A model whose parameters price a message in negative time is a
	// model file every reader refuses (exit 2), not a number to print.
	usage = append(usage, struct {
		name string
		args []string
		want string
	}{"negative prediction", []string{"predict", negative, "pingpong", "bytes=64K"},
		"MODEL.json " + negative + ": model JSON: hockney: t_s + t_w m (t_s = -0.001 s, t_w = "})
	for _, tc := range usage {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
}
