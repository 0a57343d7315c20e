package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// synthRec is a time record with median y (as a pattern would write it:
// for n = 5 the CI is [min, max]).
func synthRec(bench string, params results.Params, ranks int, y float64) results.Record {
	return results.Record{
		Bench: bench, Params: params, Ranks: ranks, Unit: "s",
		Summary: results.Summary{N: 5, Min: y * 0.99, Median: y, Mean: y, Max: y * 1.01, P90: y, P99: y, CI95: [2]float64{y * 0.99, y * 1.01}},
		Meta:    results.Meta{Backend: "native"},
	}
}

func pow2(lo, hi int) []float64 {
	var out []float64
	for e := lo; e <= hi; e++ {
		out = append(out, math.Ldexp(1, e))
	}
	return out
}

// synthetic returns fixed-seed records for each model kind, generated
// from known parameters with 1% relative noise.
func synthetic(kind string) []results.Record {
	rng := rand.New(rand.NewPCG(42, 7))
	noise := func(y float64) float64 { return y * (1 + 0.01*rng.NormFloat64()) }
	var recs []results.Record
	switch kind {
	case "hockney", "piecewise":
		for _, m := range pow2(0, 22) {
			y := 0.5e-6 + 0.2e-9*m
			if kind == "piecewise" && m >= 8192 {
				y = 4e-6 + 0.08e-9*m
			}
			recs = append(recs, synthRec("pingpong", results.Params{"bytes": m}, 2, noise(y)))
		}
	case "loggp", "loggp-negative-L":
		L, os, or, g, G := 1.5e-6, 0.4e-6, 0.6e-6, 0.5e-6, 0.1e-9
		if kind == "loggp-negative-L" {
			L = -0.3e-6 // the overheads exceed half the round trip
		}
		rt := func(s float64) float64 { return 2 * (os + L + math.Max(s-1, 0)*G + or) }
		for _, s := range pow2(0, 16) {
			p1 := rt(s)
			gap := g + math.Max(s-1, 0)*G
			recs = append(recs,
				synthRec("prtt", results.Params{"bytes": s, "n": 1, "delay_s": 0}, 2, p1),
				synthRec("prtt", results.Params{"bytes": s, "n": 10, "delay_s": 0}, 2, p1+9*math.Max(os, gap)),
				synthRec("prtt", results.Params{"bytes": s, "n": 10, "delay_s": p1}, 2, p1+9*math.Max(os+p1, gap)),
				synthRec("prtt", results.Params{"bytes": s, "n": 10, "delay_s": p1, "side": "server"}, 2, 9*(p1+or)))
		}
	case "hyperbolic":
		w, c := model.Block{A: 750e-6, B: 1.05e-6}, model.Block{A: 250e-6, B: 0.95e-6} // paper 001 eq. 6
		for _, x := range pow2(0, 16) {
			recs = append(recs, synthRec("roundtrip", results.Params{"bytes": x}, 2, noise(2*model.EndToEnd(w, c).Time(x))))
			for n := 3; n <= 6; n++ {
				recs = append(recs, synthRec("alltoall", results.Params{"bytes": x}, n, noise(model.AllToAll(w, c, n).Time(x))))
			}
		}
	case "trilinear", "trilinear-piecewise":
		c := [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242} // paper 000 Table 1, BF(3)
		for _, k := range []float64{1, 2, 4, 8} {
			for _, l := range pow2(6, 14) {
				for _, r := range []float64{0.25, 0.5, 0.75, 1} {
					y := (c[0]*k*l*r + c[1]*k*r + c[2]*k*l + c[3]*l*r + c[4]*k + c[5]*l + c[6]*r + c[7]) * 1e-6
					if kind == "trilinear-piecewise" && l >= 1024 {
						y += (2*c[4]*k + 0.5*c[5]*l + 2000) * 1e-6 // a protocol switch at 1 KiB
					}
					recs = append(recs, synthRec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, 8, noise(y)))
				}
			}
		}
	case "twolevel", "bsp":
		ts, tw := 20e-6, 0.5e-9
		for _, p := range []int{4, 8} {
			for _, op := range []string{"bcast", "allgather", "scatter", "alltoall", "qshift", "news"} {
				for _, m := range pow2(10, 18) {
					M := m
					switch op {
					case "allgather", "scatter", "alltoall":
						M = float64(p-1) * m
					case "news":
						M = 4 * m
					}
					y := ts + tw*M
					if op == "alltoall" || op == "qshift" {
						y = ts + tw*M*float64(p)/2 // bisection width c = 2
					}
					recs = append(recs, synthRec("aggregate", results.Params{"op": op, "impl": "mpi", "bytes": m}, p, noise(y)))
				}
			}
		}
	}
	return recs
}

// editLine replaces from by to in line n (1-based) of the file at path:
// a record no writer writes, which the writers refuse to.
func editLine(t *testing.T, path string, n int, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if n > len(lines) || !strings.Contains(lines[n-1], from) {
		t.Fatalf("%s: line %d has no %q", path, n, from)
	}
	lines[n-1] = strings.Replace(lines[n-1], from, to, 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSONL(t *testing.T, path string, recs []results.Record) {
	t.Helper()
	var buf bytes.Buffer
	w := results.NewJSONLWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFitGolden checks the shape of every model's table output.
func TestFitGolden(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		kind  string
		extra []string
	}{
		{"hockney", nil},
		{"piecewise", nil},
		{"loggp", nil},
		{"hyperbolic", nil},
		{"trilinear", []string{"--split", "10000"}},
		{"trilinear-piecewise", nil},
		{"twolevel", nil},
		{"bsp", nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			file := filepath.Join(dir, tc.kind+".jsonl")
			writeJSONL(t, file, synthetic(tc.kind))
			// Flags after the positional arguments, as people type them.
			code, out, errs := runCLI(t, append([]string{"fit", tc.kind, file}, tc.extra...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, "fit_"+tc.kind, shape(out))
		})
	}
}

// TestFitJSONAndPredict fits, prints JSON, reads it back and predicts.
func TestFitJSONAndPredict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		kind    string
		check   map[string]float64 // parameter -> true value (relative tolerance 5%)
		predict []string
		want    float64
	}{
		{"hockney", map[string]float64{"t_s": 0.5e-6, "t_w": 0.2e-9}, []string{"pingpong", "bytes=1M"}, 0.5e-6 + 0.2e-9*(1<<20)},
		{"piecewise", map[string]float64{"t_w[2]": 0.08e-9}, []string{"roundtrip", "bytes=65536"}, 2 * (4e-6 + 0.08e-9*65536)},
		{"loggp", map[string]float64{"L": 1.5e-6, "o_s": 0.4e-6, "o_r": 0.6e-6, "g": 0.5e-6, "G": 0.1e-9}, []string{"pingpong", "bytes=1"}, 0.4e-6 + 1.5e-6 + 0.6e-6},
		{"hyperbolic", map[string]float64{"a_w": 750e-6, "a_c": 250e-6, "b_c": 0.95e-6}, []string{"alltoall", "bytes=0", "ranks=8"}, 4*7*750e-6 + 56*250e-6},
		{"trilinear", map[string]float64{"c0": 1242e-6, "c5": 4.989e-6}, []string{"kkaccess", "k=1", "l=0", "r=1", "op=read"}, (102.2 + 382.4 - 51.73 + 1242) * 1e-6},
		{"twolevel", map[string]float64{"t_w": 0.5e-9, "c@8": 2}, []string{"aggregate", "op=alltoall", "bytes=1K", "--ranks", "8"}, 20e-6 + 0.5e-9*7*1024*4},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			file := filepath.Join(dir, tc.kind+".jsonl")
			writeJSONL(t, file, synthetic(tc.kind))
			code, out, errs := runCLI(t, "fit", "--format", "json", tc.kind, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			m, val, err := model.Unmarshal([]byte(out))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if val == nil || val.NTest == 0 {
				t.Errorf("no held-out validation in the JSON")
			}
			for name, want := range tc.check {
				p, ok := model.ParamByName(m, name)
				if !ok {
					t.Fatalf("no parameter %s in %v", name, m.Params())
				}
				if !scalar.EqualWithinRel(p.Value, want, 0.05) {
					t.Errorf("%s = %g, want %g", name, p.Value, want)
				}
			}
			mfile := filepath.Join(dir, tc.kind+".json")
			if err := os.WriteFile(mfile, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs = runCLI(t, append([]string{"predict", "--format", "json", mfile}, tc.predict...)...)
			if code != 0 {
				t.Fatalf("predict exit %d: %s", code, errs)
			}
			var res struct{ Predicted float64 }
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if !scalar.EqualWithinRel(res.Predicted, tc.want, 0.05) {
				t.Errorf("predicted %g, want %g", res.Predicted, tc.want)
			}
		})
	}
}

// TestFitSplitJSONReads: the optimal splits fit trilinear --split adds
// to its model file are a key the model reader knows, so the file reads.
func TestFitSplitJSONReads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kk.jsonl")
	writeJSONL(t, file, synthetic("trilinear"))
	code, out, errs := runCLI(t, "fit", "trilinear", file, "--split", "10000", "--format", "json")
	if code != 0 || !strings.Contains(out, `"splits"`) {
		t.Fatalf("exit %d, no splits in the file?\n%s\n%s", code, errs, out)
	}
	mfile := filepath.Join(dir, "tri.json")
	if err := os.WriteFile(mfile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "predict", mfile, "kkaccess", "k=1", "l=0", "r=1", "op=read"); code != 0 {
		t.Fatalf("predict exit %d: %s", code, errs)
	}
}

func TestFitPlot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pp.jsonl")
	writeJSONL(t, file, synthetic("piecewise"))
	png := filepath.Join(dir, "pp.png")
	code, _, errs := runCLI(t, "fit", "piecewise", file, "--plot", png, "--holdout", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("plot: %v, %d bytes", err, len(data))
	}
}

func TestPredictTable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "h.jsonl")
	writeJSONL(t, file, synthetic("hockney"))
	_, out, _ := runCLI(t, "fit", "hockney", file, "--format", "json")
	mfile := filepath.Join(dir, "h.json")
	os.WriteFile(mfile, []byte(out), 0o644)
	code, out, errs := runCLI(t, "predict", mfile, "pingpong", "bytes=64K")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "predict_hockney", shape(out))
}

// TestFitBadInput: bad input exits 2, names the flag or argument, and
// writes nothing (no output, no plot file).
func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "pp.jsonl")
	writeJSONL(t, pp, synthetic("hockney"))
	kk := filepath.Join(dir, "kk.jsonl")
	writeJSONL(t, kk, synthetic("trilinear"))
	garbage := filepath.Join(dir, "garbage.jsonl")
	os.WriteFile(garbage, []byte("{not json\n"), 0o644)
	nan := filepath.Join(dir, "nan.jsonl")
	os.WriteFile(nan, []byte(`{"schema":1,"bench":"pingpong","params":{"bytes":8},"ranks":2,"unit":"s","n":1,"median":-1,"ci95":[0,0],"meta":{}}`+"\n"), 0o644)
	mjson := filepath.Join(dir, "m.json")
	_, out, _ := runCLI(t, "fit", "hockney", pp, "--format", "json")
	os.WriteFile(mjson, []byte(out), 0o644)
	// Native and local ping-pongs in one file; aggregate records of two
	// implementations in another.
	backends := synthetic("hockney")
	for i := range backends {
		backends[i].Meta.Backend = "native"
		if i%2 == 1 {
			backends[i].Meta.Backend = "local"
		}
	}
	mixedBackends := filepath.Join(dir, "backends.jsonl")
	writeJSONL(t, mixedBackends, backends)
	impls := synthetic("bsp")
	for i := range impls {
		if i%2 == 1 {
			impls[i].Params["impl"] = "textbook"
		}
	}
	mixedImpls := filepath.Join(dir, "impls.jsonl")
	writeJSONL(t, mixedImpls, impls)
	// A ping-pong record with a parameter no ping-pong has, on line 3.
	foo := filepath.Join(dir, "foo.jsonl")
	writeJSONL(t, foo, synthetic("hockney"))
	editLine(t, foo, 3, `"params":{`, `"params":{"foo":1,`)
	// A ping-pong file whose line 2 is pasted again at its end.
	twice := filepath.Join(dir, "twice.jsonl")
	writeJSONL(t, twice, synthetic("hockney"))
	if data, err := os.ReadFile(twice); err != nil || os.WriteFile(twice, append(data, strings.SplitAfter(string(data), "\n")[1]...), 0o644) != nil {
		t.Fatal("appending line 2")
	}
	// Ping-pongs that fit a negative time per byte: t = 1 ms - 1 ns/B m
	// from 10 KiB up, every time positive.
	var negative []results.Record
	for _, m := range []int{10 << 10, 40 << 10, 160 << 10, 640 << 10} {
		negative = append(negative, synthRec("pingpong", results.Params{"bytes": m}, 2, 1e-3-1e-9*float64(m)))
	}
	negTW := filepath.Join(dir, "negtw.jsonl")
	writeJSONL(t, negTW, negative)
	// Keys in another case or given twice, which the decoder would take
	// for the field and override it with; a backend no run writes.
	upper := filepath.Join(dir, "upper.jsonl")
	writeJSONL(t, upper, synthetic("hockney"))
	editLine(t, upper, 2, `"median":`, `"MEDIAN":1e-3,"median":`)
	twiceKey := filepath.Join(dir, "twicekey.jsonl")
	writeJSONL(t, twiceKey, synthetic("hockney"))
	editLine(t, twiceKey, 2, `"median":`, `"median":1e-3,"median":`)
	bkLocal := filepath.Join(dir, "bklocal.jsonl")
	writeJSONL(t, bkLocal, synthetic("hockney"))
	editLine(t, bkLocal, 1, `"backend":"native"`, `"backend":"Local"`)
	// Model files edited by hand: an extra key, a backend in another
	// case, a fractional size.
	editModel := func(name, from, to string) string {
		path := filepath.Join(dir, name)
		if !strings.Contains(out, from) {
			t.Fatalf("model file has no %q", from)
		}
		os.WriteFile(path, []byte(strings.Replace(out, from, to, 1)), 0o644)
		return path
	}
	mExtra := editModel("extra.json", `"model": "hockney",`, `"model": "hockney", "extra": 1,`)
	mLocal := editModel("Local.json", `"backend": "native"`, `"backend": "Local"`)
	mFrac := editModel("frac.json", `"min_bytes": 1,`, `"min_bytes": 1.5,`)
	// prtt records whose LogGP latency is negative: logp refuses them,
	// and postal, derived from the same LogP, too.
	negL := filepath.Join(dir, "negl.jsonl")
	writeJSONL(t, negL, synthetic("loggp-negative-L"))
	plot := filepath.Join(dir, "never.png")
	fifoPNG := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifoPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no args", []string{"fit"}, "fit wants MODEL and FILE.jsonl"},
		{"unknown model", []string{"fit", "amdahl", pp}, `MODEL "amdahl"`},
		{"missing file", []string{"fit", "hockney", filepath.Join(dir, "none.jsonl")}, "FILE"},
		{"not JSON Lines", []string{"fit", "hockney", garbage}, "FILE " + garbage},
		{"wrong pattern", []string{"fit", "hockney", kk, "--plot", plot}, "needs pingpong or roundtrip records; the input has kkaccess"},
		{"negative median", []string{"fit", "hockney", nan}, "median -1"},
		// A fit every model reader refuses is not written as a model file.
		{"json of a negative time per byte", []string{"fit", "hockney", negTW, "--format", "json"}, "FILE " + negTW + ": the hockney fit cannot be a model file, whose readers would refuse it: model JSON: hockney: t_w = -1e-09 s/B is negative"},
		{"table of a negative time per byte", []string{"fit", "hockney", negTW}, "FILE " + negTW + ": the hockney fit cannot be a model file, whose readers would refuse it: model JSON: hockney: t_w = -1e-09 s/B is negative"},
		{"a line twice", []string{"fit", "hockney", twice}, twice + ": line 24: the same record as line 2 (pingpong bytes=2, every field alike, its meta and samples too): a record read twice would count as two runs"},
		{"a parameter pingpong has not", []string{"fit", "hockney", foo}, foo + ": line 3: record pingpong: impossible parameter foo = 1: pingpong records have no parameter foo (theirs: bytes, iters)"},
		{"a key in another case", []string{"fit", "hockney", upper}, upper + `: line 2: field MEDIAN: no field of a record: keys are case-sensitive, and the field is "median"`},
		{"a key given twice", []string{"fit", "hockney", twiceKey}, twiceKey + ": line 2: field median: the key is given twice in one object"},
		{"a backend no run writes", []string{"fit", "hockney", bkLocal}, bkLocal + `: line 1: record pingpong bytes=1: meta backend "Local" is none commcost writes; accepted (exact case): native, local, replay, none, or the key left out`},
		{"logp json of a negative L", []string{"fit", "logp", negL, "--format", "json"}, "the logp fit cannot be a model file, whose readers would refuse it: model JSON: logp: L = "},
		{"postal json of a negative L", []string{"fit", "postal", negL, "--format", "json"}, "FILE " + negL + ": the postal fit cannot be a model file, whose readers would refuse it: model JSON: postal: lambda = 1.4"},
		{"predict a model with an extra key", []string{"predict", mExtra, "pingpong", "bytes=8"}, "MODEL.json " + mExtra + ": model JSON: field extra: no such key here (the keys here: model, backend, params, fit, validation, splits)"},
		{"predict a model of backend Local", []string{"predict", mLocal, "pingpong", "bytes=8"}, `MODEL.json ` + mLocal + `: model JSON: field backend "Local" is none commcost writes; accepted (exact case): native, local, replay, none`},
		{"predict a model of a fractional size", []string{"predict", mFrac, "pingpong", "bytes=8"}, "fit.min_bytes = 1.5: a size is a whole number of bytes"},
		{"format", []string{"fit", "hockney", pp, "--format", "xml"}, "--format xml"},
		{"weighting", []string{"fit", "hockney", pp, "--weighting", "sqrt"}, "--weighting sqrt"},
		{"holdout", []string{"fit", "hockney", pp, "--holdout", "every:1"}, "--holdout every:1"},
		{"trim", []string{"fit", "hockney", pp, "--trim", "-2"}, "--trim -2"},
		{"min-bytes", []string{"fit", "hockney", pp, "--min-bytes", "lots"}, "--min-bytes lots"},
		{"max below min", []string{"fit", "hockney", pp, "--min-bytes", "4K", "--max-bytes", "1K"}, "--max-bytes 1K"},
		{"max-bytes zero", []string{"fit", "hockney", pp, "--max-bytes", "0"}, "--max-bytes 0: want a size > 0"},
		{"op", []string{"fit", "trilinear", kk, "--op", "rmw"}, "--op rmw"},
		{"impl", []string{"fit", "twolevel", kk, "--impl", "nccl"}, "--impl nccl"},
		{"hockney mixed backends", []string{"fit", "hockney", mixedBackends}, `hockney: the records mix backends "native" (pingpong bytes=1) and "local" (pingpong bytes=2)`},
		{"bsp mixed impls", []string{"fit", "bsp", mixedImpls}, `aggregate records mix impls "mpi", "textbook"; choose one (--impl`},
		{"split on hockney", []string{"fit", "hockney", pp, "--split", "1000"}, "--split applies to trilinear, not hockney"},
		{"op on hockney", []string{"fit", "hockney", pp, "--op", "read"}, "--op applies to trilinear, trilinear-piecewise, not hockney"},
		{"hop-s on trilinear", []string{"fit", "trilinear", kk, "--hop-s", "1e-6"}, "--hop-s applies to twolevel, not trilinear"},
		{"max-segments on trilinear", []string{"fit", "trilinear", kk, "--max-segments", "2"}, "--max-segments applies to piecewise, trilinear-piecewise, not trilinear"},
		{"packet-bytes on loggp", []string{"fit", "loggp", pp, "--packet-bytes", "64"}, "--packet-bytes applies to c3, logp, postal, not loggp"},
		{"split zero", []string{"fit", "trilinear", kk, "--split", "0"}, "--split 0"},
		{"plot extension", []string{"fit", "hockney", pp, "--plot", filepath.Join(dir, "x.txt")}, "--plot"},
		{"plot dir missing", []string{"fit", "hockney", pp, "--plot", filepath.Join(dir, "no", "x.png")}, "does not exist"},
		{"plot a FIFO", []string{"fit", "hockney", pp, "--plot", fifoPNG}, "--plot " + fifoPNG + ": is a named pipe (FIFO), not a regular file"},
		{"plot on devtmpfs", []string{"fit", "hockney", pp, "--plot", "/dev/commcost-fit.png"}, "--plot /dev/commcost-fit.png: directory /dev is on the kernel's devtmpfs filesystem, not a place for data"},
		{"plot on proc", []string{"fit", "hockney", pp, "--plot", "/proc/self/fit.png"}, "directory /proc/self is on the kernel's proc filesystem"},
		{"extra argument", []string{"fit", "hockney", pp, "more"}, "got 3 argument(s)"},
		{"max-segments", []string{"fit", "piecewise", pp, "--max-segments", "0"}, "--max-segments 0"},
		{"predict no args", []string{"predict", mjson}, "predict wants MODEL.json and PATTERN"},
		{"predict bad model", []string{"predict", pp, "pingpong", "bytes=8"}, "MODEL.json " + pp},
		{"predict negative t_w", []string{"predict", negativeHockney(t, dir), "pingpong", "bytes=8"}, "MODEL.json " + filepath.Join(dir, "negative-tw.json") + ": model JSON: hockney: t_w = -1e-09 s/B is negative: a message would cost less the longer it is"},
		{"predict bad pair", []string{"predict", mjson, "pingpong", "bytes"}, `"bytes" is not key=value`},
		{"predict duplicate", []string{"predict", mjson, "pingpong", "bytes=1", "bytes=2"}, "bytes given twice"},
		{"predict pattern", []string{"predict", mjson, "kkaccess", "bytes=8"}, "PATTERN kkaccess"},
		{"predict missing param", []string{"predict", mjson, "pingpong", "size=8"}, `pingpong has no parameter "size"`},
		{"predict ranks", []string{"predict", mjson, "pingpong", "bytes=8", "ranks=0"}, "ranks wants an integer"},
		{"predict format", []string{"predict", mjson, "pingpong", "bytes=8", "--format", "csv"}, "--format csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, out, errs)
			}
			if out != "" {
				t.Errorf("wrote to stdout on bad input: %q", out)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not contain %q", errs, tc.want)
			}
			if _, err := os.Stat(plot); err == nil {
				t.Errorf("plot written on bad input")
			}
		})
	}
}

// TestFitRefusesIllConditioned: a design with one level of r is the
// file's: exit 2, naming the file and the missing levels.
func TestFitRefusesIllConditioned(t *testing.T) {
	dir := t.TempDir()
	var oneR []results.Record
	for _, r := range synthetic("trilinear") {
		if r.Params["r"].(float64) == 1 {
			oneR = append(oneR, r)
		}
	}
	file := filepath.Join(dir, "r1.jsonl")
	writeJSONL(t, file, oneR)
	code, out, errs := runCLI(t, "fit", "trilinear", file)
	if code != 2 || out != "" || !strings.Contains(errs, "r has 1 level(s) (r = 1)") || !strings.Contains(errs, file) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func FuzzParseAssignments(f *testing.F) {
	for _, s := range []string{"bytes=8", "k=4 l=1K r=0.5 op=read", "ranks=8", "x=", "=1", "a=1 a=2", "bytes=NaN", "b=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ranks, err := patterns.ParseAssignments(strings.Fields(s))
		if err != nil {
			return
		}
		if ranks < 0 {
			t.Fatalf("ranks %d", ranks)
		}
		for k, v := range p {
			if k == "" || k == "ranks" {
				t.Fatalf("key %q accepted", k)
			}
			if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
				t.Fatalf("%s = %v accepted", k, x)
			}
		}
	})
}

// TestFitWeightingReachesEveryModel: --weighting is honoured by every model
// kind (it used to be dropped for loggp): the fit reports the weighting it
// used, and it is the one asked for.
func TestFitWeightingReachesEveryModel(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"hockney", "piecewise", "loggp", "hyperbolic", "trilinear", "trilinear-piecewise", "twolevel", "bsp"} {
		file := filepath.Join(dir, kind+".jsonl")
		writeJSONL(t, file, synthetic(kind))
		for _, w := range []string{"none", "ci"} {
			t.Run(kind+"/"+w, func(t *testing.T) {
				code, out, errs := runCLI(t, "fit", "--format", "json", "--holdout", "none", "--weighting", w, kind, file)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				m, _, err := model.Unmarshal([]byte(out))
				if err != nil {
					t.Fatal(err)
				}
				if got := m.Quality().Weighting; got != w {
					t.Errorf("fit used weighting %q, asked for %q", got, w)
				}
			})
		}
	}
}

// TestFitTornLastLine: fit reads through the shared
// reader, so a torn last line costs that record only, with one warning:
// the fit equals the fit of the complete records before it.
func TestFitTornLastLine(t *testing.T) {
	dir := t.TempDir()
	recs := synthetic("hockney")
	whole := filepath.Join(dir, "whole.jsonl")
	writeJSONL(t, whole, recs[:len(recs)-1])
	full := filepath.Join(dir, "full.jsonl")
	writeJSONL(t, full, recs)
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(whole)
	lastLen := len(data) - len(before)
	for _, tc := range []struct {
		name string
		cut  int // bytes of the last record left
	}{
		{"one byte", 1},
		{"half", lastLen / 2},
		{"all but the newline", lastLen - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			torn := filepath.Join(t.TempDir(), "whole.jsonl")
			os.WriteFile(torn, data[:len(before)+tc.cut], 0o644)
			code, want, errs := runCLI(t, "fit", "hockney", whole, "--format", "json")
			if code != 0 {
				t.Fatalf("fit of the whole records: exit %d: %s", code, errs)
			}
			code, got, errs := runCLI(t, "fit", "hockney", torn, "--format", "json")
			if tc.cut == lastLen-1 {
				// A complete JSON record without its newline is a record.
				if code != 0 || errs != "" {
					t.Errorf("exit %d, stderr %q; want the record read, no warning", code, errs)
				}
				return
			}
			if code != 0 || got != want {
				t.Errorf("exit %d; fit differs from the fit of the %d whole records: %v\n%s", code, len(recs)-1, got != want, errs)
			}
			if strings.Count(errs, "commcost:") != 1 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "truncated final line") ||
				!strings.Contains(errs, torn) {
				t.Errorf("want one warning naming %s and the torn line:\n%s", torn, errs)
			}
		})
	}
}
