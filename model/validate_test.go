package model

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

func TestCrossValidateHockney(t *testing.T) {
	recs := hockneyRecords(2e-6, 1e-9, 0.01, 3, "pingpong")
	for _, h := range []Holdout{{Every: 2}, {Every: 4}, {LeaveOneOut: true}} {
		v, err := CrossValidate("hockney", recs, Options{}, h)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: train %d test %d median %.4f p95 %.4f", v.Scheme, v.NTrain, v.NTest, v.MedianRelErr, v.P95RelErr)
		// 1% noise: held-out relative errors of about 1%.
		if v.MedianRelErr > 0.02 || v.P95RelErr > 0.04 {
			t.Errorf("%s: median %.4f p95 %.4f", v.Scheme, v.MedianRelErr, v.P95RelErr)
		}
		for _, p := range v.Points {
			if strings.Contains(p.Point, "bytes=1 ") || strings.Contains(p.Point, "bytes=4194304 ") {
				if !h.LeaveOneOut {
					t.Errorf("%s held out an end point %s", v.Scheme, p.Point)
				}
			}
		}
	}
}

func TestCrossValidateTrilinearCells(t *testing.T) {
	recs := kkRecords(table1[0].c, 0.03, 5, allR)
	v, err := CrossValidate("trilinear", recs, Options{}, Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trilinear every:4: train %d test %d median %.4f p95 %.4f", v.NTrain, v.NTest, v.MedianRelErr, v.P95RelErr)
	if v.NTest < 30 || v.MedianRelErr > 0.04 {
		t.Errorf("%+v", v)
	}
	// The held-out cells span every level of r (none is left out).
	seen := map[string]bool{}
	for _, p := range v.Points {
		for _, f := range strings.Fields(p.Point) {
			if strings.HasPrefix(f, "r=") {
				seen[f] = true
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("held-out cells cover r levels %v", seen)
	}
}

// TestCrossValidateSizeRange: with MinBytes/MaxBytes the held-out points
// come from the same range as the fit (a model of large packets was once
// scored on the small ones it never saw).
func TestCrossValidateSizeRange(t *testing.T) {
	recs := kkRecords(table1[0].c, 0.01, 7, allR)
	// Below 1 KiB the machine "switches protocol": ten times slower.
	for i, r := range recs {
		if l, _ := numParam(r.Params, "l", ""); l < 1024 {
			recs[i].Median *= 10
		}
	}
	opt := Options{MinBytes: 1024, MaxBytes: 8192}
	v, err := CrossValidate("trilinear", recs, opt, Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range v.Points {
		for _, f := range strings.Fields(p.Point) {
			if ls, ok := strings.CutPrefix(f, "l="); ok {
				if l, err := strconv.ParseFloat(ls, 64); err != nil || l < 1024 || l > 8192 {
					t.Errorf("held-out point %s outside l in [1024, 8192]", p.Point)
				}
			}
		}
	}
	if v.NTest == 0 || v.MedianRelErr > 0.03 {
		t.Errorf("range 1K..8K: %d held out, median %.4f", v.NTest, v.MedianRelErr)
	}
}

func TestParseHoldout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Holdout
		err  bool
	}{
		{"none", Holdout{}, false}, {"loo", Holdout{LeaveOneOut: true}, false}, {"every:3", Holdout{Every: 3}, false},
		{"every:1", Holdout{}, true}, {"every:x", Holdout{}, true}, {"half", Holdout{}, true},
	} {
		got, err := ParseHoldout(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q: %+v, %v", tc.in, got, err)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("%q prints as %q", tc.in, got.String())
		}
	}
}

// fittedModels fits every kind on synthetic data.
func fittedModels(t *testing.T) []Model {
	t.Helper()
	var ms []Model
	add := func(m Model, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	add(FitHockney(hockneyRecords(2e-6, 1e-9, 0.01, 1, "pingpong"), Options{}))
	add(FitPiecewise(protocolRecords([]float64{4096}, []float64{1e-6, 10e-6}, []float64{1e-9, 0.5e-9}, 0.01, 1), Options{}))
	lg, err := FitLogGP(prttRecords(trueLogGP(), 10, true), Options{})
	add(lg, err)
	lp := LogPFromLogGP(lg, 0)
	ms = append(ms, lp, PostalFromLogP(lp))
	add(FitHyperbolic(hyperRecords(ethW, ethC, "alltoall", []int{3, 4, 5}, 0.01, 1), Options{}))
	add(FitTrilinear(kkRecords(table1[0].c, 0.02, 1, allR), Options{}))
	tl, err := FitTwoLevel(aggregateRecords(20e-6, 0.5e-9, map[int]float64{4: 1, 8: 2}), Options{})
	add(tl, err)
	tab, err := TableFromTwoLevel(tl, "mesh2d", 1e-7)
	add(tab, err)
	var bsp []results.Record
	for _, x := range sizes(4, 18) {
		bsp = append(bsp, rec("alltoall", results.Params{"bytes": x}, 4, 3e-9*x+40e-6))
	}
	add(FitBSP(bsp, Options{}))
	for kind, truth := range superstepTruths() {
		add(Fit(kind, synth(t, truth), Options{}))
	}
	// collalg with beta_x from bidirectional rates: an interval of the
	// range over sizes.
	var coll []results.Record
	for _, m := range sizes(0, 20) {
		coll = append(coll, rec("pingpong", results.Params{"bytes": m}, 2, synAlpha+synBeta*m))
	}
	for _, m := range sizes(2, 20) {
		coll = append(coll, rec("reducelocal", results.Params{"bytes": m, "type": "float", "reduction": "sum", "iters": 100}, 2, 3e-8+synGamma*m))
	}
	for i, rate := range []float64{40e6, 45e6, 50e6} {
		coll = append(coll, rec("bibw", results.Params{"bytes": float64(int(64<<10) << i)}, 2, rate))
	}
	add(FitCollAlg(coll, Options{}))
	return ms
}

func TestMarshalRoundTrip(t *testing.T) {
	probes := []Instance{
		{Pattern: "pingpong", Params: results.Params{"bytes": 1000}},
		{Pattern: "roundtrip", Params: results.Params{"bytes": 1000.0}},
		{Pattern: "prtt", Params: results.Params{"bytes": 64, "n": 10, "delay_s": 1e-5}},
		{Pattern: "bandwidth", Params: results.Params{"bytes": 65536, "window": 64}},
		{Pattern: "alltoall", Params: results.Params{"bytes": 4096}, Ranks: 4},
		{Pattern: "pairwise", Params: results.Params{"bytes": 4096}, Ranks: 4},
		{Pattern: "kkaccess", Params: results.Params{"k": 2, "l": 512, "r": 0.5, "op": "read"}},
		{Pattern: "aggregate", Params: results.Params{"op": "alltoall", "impl": "mpi", "bytes": 2048}, Ranks: 8},
		{Pattern: "aggregate", Params: results.Params{"op": "bcast", "impl": "mpi", "bytes": 2048}, Ranks: 8},
	}
	for _, m := range fittedModels(t) {
		t.Run(m.Kind(), func(t *testing.T) {
			data, err := Marshal(m, &Validation{Scheme: "every:2", MedianRelErr: 0.01, P95RelErr: 0.02, MaxRelErr: 0.03})
			if err != nil {
				t.Fatal(err)
			}
			back, v, err := Unmarshal(data)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			if back.Kind() != m.Kind() || v == nil || v.MedianRelErr != 0.01 {
				t.Fatalf("round trip: kind %s, validation %+v", back.Kind(), v)
			}
			n := 0
			for _, in := range probes {
				a, errA := m.Predict(in)
				b, errB := back.Predict(in)
				if (errA == nil) != (errB == nil) || a != b {
					t.Errorf("%s: %g/%v after round trip %g/%v", in.Pattern, a, errA, b, errB)
				}
				if errA == nil {
					n++
				}
			}
			if n == 0 {
				t.Errorf("no probe predicted")
			}
			// Every model's Params have names and finite CIs.
			for _, p := range m.Params() {
				if p.Name == "" || p.CI95[0] > p.Value || p.CI95[1] < p.Value {
					t.Errorf("param %+v", p)
				}
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{`{`, "model JSON"},
		{`{"fit":{}}`, `no "model" field`},
		{`{"model":"quantum","fit":{}}`, `unknown model "quantum"`},
		{`{"model":"hockney"}`, `no "fit" body`},
		{`{"model":"piecewise","fit":{"segments":[]}}`, "no segments"},
		{`{"model":"logp","fit":{"packet_bytes":0}}`, "packet_bytes"},
		{`{"model":"aggregate-table","fit":{"topology":"torus"}}`, "torus"},
		{`{"model":"trilinear","fit":{"cov":[[1]]}}`, "cov has 1 rows"},
		{`{"model":"hockney","fit":{"t_s":{"value":"fast"}}}`, "field t_s.value: the string is not a number"},
	} {
		_, _, err := Unmarshal([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want %q", tc.in, err, tc.msg)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	ms := []Model{
		&Hockney{Ts: Param{Value: 1e-6}, Tw: Param{Value: 1e-9}},
		&Piecewise{Segments: []Segment{{FromBytes: 1}, {FromBytes: 100}}},
		&Trilinear{},
		&LogP{PacketBytes: 8},
		&Postal{PacketBytes: 8, Unit: Param{Value: 1}},
		&AggregateTable{Topology: "hypercube"},
	}
	for _, m := range ms {
		data, err := Marshal(m, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model":"hyperbolic","fit":{"a":{"value":1},"b":{"value":2},"a_w":{"value":1}}}`))
	probes := []Instance{
		{Pattern: "pingpong", Params: results.Params{"bytes": 1000}},
		{Pattern: "alltoall", Params: results.Params{"bytes": 10}, Ranks: 3},
		{Pattern: "kkaccess", Params: results.Params{"k": 2, "l": 512, "r": 0.5}},
		{Pattern: "aggregate", Params: results.Params{"op": "bcast", "bytes": 1}, Ranks: 1 << 20},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := Unmarshal(data)
		if err != nil {
			return
		}
		for _, in := range probes {
			m.Predict(in) // must not panic
		}
		if _, err := Marshal(m, nil); err != nil {
			t.Fatalf("decoded model does not re-encode: %v", err)
		}
		_ = json.Valid(data)
	})
}

func FuzzParseHoldout(f *testing.F) {
	for _, s := range []string{"none", "loo", "every:4", "every:", "every:-1", "every:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHoldout(s)
		if err != nil {
			return
		}
		back, err := ParseHoldout(h.String())
		if err != nil || back != h {
			t.Fatalf("%q -> %+v prints %q -> %+v, %v", s, h, h.String(), back, err)
		}
		if h.Every == 1 || h.Every < 0 {
			t.Fatalf("%q accepted as every:%d", s, h.Every)
		}
	})
}

// TestUnmarshalRequiresEveryParameter: for every fitted kind, a model file
// with any one parameter left out (at any depth: a coefficient of an
// array, a segment's t_s), or with a parameter without its value, is
// refused on read: decoding would take it as 0 and predict nonsense.
func TestUnmarshalRequiresEveryParameter(t *testing.T) {
	// Parameters a kind may leave out as a whole (omitempty in its type).
	optional := map[string]bool{"a_w": true, "b_w": true, "a_c": true, "b_c": true}
	cases := 0
	defer func() { t.Logf("%d incomplete model files refused", cases) }()
	for _, m := range fittedModels(t) {
		data, err := Marshal(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		if err := json.Unmarshal(data, &env); err != nil {
			t.Fatal(err)
		}
		// paths of every parameter (an object with a "value") in the body
		var paths [][]any
		var walk func(v any, path []any)
		walk = func(v any, path []any) {
			switch x := v.(type) {
			case map[string]any:
				if _, ok := x["value"]; ok && len(path) > 0 {
					paths = append(paths, append([]any(nil), path...))
					return
				}
				for k, e := range x {
					if k == "quality" || k == "candidates" || k == "curves" || k == "bisection" || k == "duplex_ratio" {
						continue // fit statistics, per-n curves and evidence, not what Predict reads
					}
					walk(e, append(path, k))
				}
			case []any:
				for i, e := range x {
					walk(e, append(path, i))
				}
			}
		}
		walk(env["fit"], nil)
		if len(paths) == 0 {
			t.Errorf("%s: no parameters found in its JSON", m.Kind())
		}
		for _, path := range paths {
			last := path[len(path)-1]
			for _, drop := range []bool{true, false} {
				if key, ok := last.(string); drop && (!ok || optional[key]) {
					continue // array entries are dropped by shortening; optional blocks may go
				}
				var env2 map[string]any
				json.Unmarshal(data, &env2)
				// walk to the parent of the parameter
				var parent any = env2["fit"]
				for _, step := range path[:len(path)-1] {
					switch s := step.(type) {
					case string:
						parent = parent.(map[string]any)[s]
					case int:
						parent = parent.([]any)[s]
					}
				}
				var param map[string]any
				switch s := last.(type) {
				case string:
					param = parent.(map[string]any)[s].(map[string]any)
					if drop {
						delete(parent.(map[string]any), s)
					}
				case int:
					param = parent.([]any)[s].(map[string]any)
				}
				if !drop {
					delete(param, "value")
				}
				data2, _ := json.Marshal(env2)
				cases++
				if _, _, err := Unmarshal(data2); err == nil {
					t.Errorf("%s: %v with drop=%v accepted", m.Kind(), path, drop)
				} else if key, ok := last.(string); ok && !strings.Contains(err.Error(), key) {
					t.Errorf("%s: %v: error %v does not name %s", m.Kind(), path, err, key)
				}
			}
		}
	}
}

// TestPredictChecked: a prediction that is negative or not finite is an
// error wrapping ErrUnphysical that names the model and the instance.
func TestPredictChecked(t *testing.T) {
	in := Instance{Pattern: "pingpong", Params: results.Params{"bytes": 8}}
	for _, tc := range []struct {
		name   string
		ts, tw float64
		want   string
	}{
		{"positive", 1e-6, 1e-9, ""},
		{"zero", 0, 0, ""},
		{"negative", -1e-6, 1e-12, "which is negative"},
		{"infinite", 1e-6, math.Inf(1), "which is not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Hockney{Ts: Param{Name: "t_s", Value: tc.ts}, Tw: Param{Name: "t_w", Value: tc.tw}}
			v, err := PredictChecked(m, in)
			if tc.want == "" {
				if err != nil || v < 0 {
					t.Errorf("%g, %v", v, err)
				}
				return
			}
			if !errors.Is(err, ErrUnphysical) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hockney predicts") {
				t.Errorf("error %v, want ErrUnphysical naming %q", err, tc.want)
			}
			if _, err := PredictSum(m, []Instance{in}); !errors.Is(err, ErrUnphysical) {
				t.Errorf("PredictSum: %v", err)
			}
			w := []results.WorkItem{{Bench: "pingpong", Params: results.Params{"bytes": 8}, Count: 2}}
			if _, err := PredictWorkload(m, w); !errors.Is(err, ErrUnphysical) || !strings.Contains(err.Error(), "workload item 1") {
				t.Errorf("PredictWorkload: %v, want ErrUnphysical naming the item", err)
			}
		})
	}
}

// TestMarshalBackend: the backend of the records a model was fitted from
// survives MarshalMeta and UnmarshalMeta (replay refuses a fit of the
// local backend by it), and a file without it, as written before it was
// recorded, reads with none.
func TestMarshalBackend(t *testing.T) {
	recs := hockneyRecords(2e-6, 1e-9, 0.01, 3, "pingpong")
	for i := range recs {
		recs[i].Meta.Backend = "local"
	}
	// a record of a bench hockney does not read names no backend of its
	recs = append(recs, rec("barrier", nil, 4, 1e-5))
	recs[len(recs)-1].Meta.Backend = "native"
	m, err := Fit("hockney", recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := FitBackend("hockney", m, recs); b != "local" {
		t.Fatalf("FitBackend = %q, want local", b)
	}
	if b := FitBackend("hockney", m, hockneyRecords(2e-6, 1e-9, 0.01, 3, "pingpong")); b != "" {
		t.Fatalf("FitBackend of records naming none = %q, want none", b)
	}
	data, err := MarshalMeta(m, nil, FileMeta{Backend: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"backend": "local"`) {
		t.Fatalf("no backend written:\n%s", data)
	}
	back, _, meta, err := UnmarshalMeta(data)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Backend != "local" || back.Kind() != "hockney" {
		t.Fatalf("round trip: kind %s, meta %+v", back.Kind(), meta)
	}
	// a file of an older commcost: no backend key
	old := `{"model": "hockney", "fit": {"t_s": {"name": "t_s", "unit": "s", "value": 2e-6}, "t_w": {"name": "t_w", "unit": "s/B", "value": 1e-9}, "min_bytes": 0, "max_bytes": 0}}`
	if _, _, meta, err := UnmarshalMeta([]byte(old)); err != nil || meta != (FileMeta{}) {
		t.Fatalf("older file: meta %+v, err %v", meta, err)
	}
	if _, _, err := Unmarshal([]byte(old)); err != nil {
		t.Fatalf("older file: %v", err)
	}
	// a model without FileMeta writes no backend key
	if data, err := Marshal(m, nil); err != nil || strings.Contains(string(data), "backend") {
		t.Fatalf("Marshal wrote a backend (err %v):\n%s", err, data)
	}
}
