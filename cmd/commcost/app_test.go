package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// appQuick are the repetition flags of the app tests on goroutine ranks.
var appQuick = []string{"--backend", "local", "--np", "4", "--min-reps", "3", "--max-reps", "3", "--warmup", "0"}

// writeModel writes a fitted model as 'commcost fit --format json' does.
func writeModel(t *testing.T, path string, m model.Model) {
	t.Helper()
	data, err := model.Marshal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// negativeHockney writes a hockney model file whose t_w is negative (a
// fit that prices large messages in negative time) and returns its path.
func negativeHockney(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "negative-tw.json")
	writeModel(t, path, &model.Hockney{Ts: fixed("t_s", "s", 20e-6), Tw: fixed("t_w", "s/B", -1e-9)})
	return path
}

// modelFile writes m as 'commcost fit --format json' does and returns
// the path.
func modelFile(t *testing.T, path string, m model.Model) string {
	t.Helper()
	writeModel(t, path, m)
	return path
}

func fixed(name, unit string, v float64) model.Param {
	return model.Param{Name: name, Unit: unit, Value: v, CI95: [2]float64{v, v}, Fixed: true}
}

func testModels(t *testing.T, dir string) (hockney, trilinear string) {
	t.Helper()
	h := &model.Hockney{Ts: fixed("t_s", "s", 20e-6), Tw: fixed("t_w", "s/B", 1e-9)}
	tr := &model.Trilinear{}
	for i := 0; i < 8; i++ {
		tr.C[i] = fixed("c", "s", 1e-6)
	}
	return modelFile(t, filepath.Join(dir, "hockney.json"), h), modelFile(t, filepath.Join(dir, "trilinear.json"), tr)
}

// triModels writes trilinear read and write models fitted to the synthetic
// k-k-access records (paper 000's BF(3) coefficients).
func triModels(t *testing.T, dir string) (read, write string) {
	t.Helper()
	recs := synthetic("trilinear")
	tr, err := model.FitTrilinear(recs, model.Options{Op: "read"})
	if err != nil {
		t.Fatal(err)
	}
	read = filepath.Join(dir, "tri-read.json")
	writeModel(t, read, tr)
	w := *tr
	w.Op = "write"
	write = filepath.Join(dir, "tri-write.json")
	writeModel(t, write, &w)
	return read, write
}

// TestApp runs each application on goroutine ranks over the direct store
// with --model files, then 'app table' on the records: every communication
// phase record carries its workload and a prediction by the paired read
// and write models, and the tables name every phase.
func TestApp(t *testing.T) {
	dir := t.TempDir()
	rd, wr := triModels(t, dir)
	for _, tc := range []struct {
		app    string
		args   []string
		phases []string
	}{
		{"matmul", []string{"--n", "32", "--k", "2", "--l", "128"}, []string{apps.PhaseMM}},
		{"concomp", []string{"--n", "64", "--k", "2", "--l", "64"}, []string{apps.PhaseBFS, apps.PhaseMerge}},
		{"bitonic", []string{"--n", "256", "--k", "1,2", "--l", "128"}, []string{apps.PhaseBitonic}},
		{"samplesort", []string{"--n", "640", "--k", "2", "--l", "128"}, []string{apps.PhaseSplitter, apps.PhaseDistribution, apps.PhaseLocalSort}},
	} {
		t.Run(tc.app, func(t *testing.T) {
			out := filepath.Join(dir, tc.app+".jsonl")
			args := append(append([]string{"app", tc.app}, tc.args...), appQuick...)
			args = append(args, "--model", rd, "--model", wr, "--out", out, "--format", "csv")
			code, stdout, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			if !strings.Contains(stdout, "bench,") || !strings.Contains(errs, "Table 2") {
				t.Errorf("stdout is not CSV or the report is not on stderr:\n%s\n%s", stdout, errs)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range recs {
				if r.Bench != apps.Bench {
					t.Errorf("unexpected bench %q with --model", r.Bench)
					continue
				}
				if r.Params["store"] != "direct" || r.Ranks != 4 {
					t.Errorf("record params %v ranks %d", r.Params, r.Ranks)
				}
				if r.Params["kind"] != apps.KindComm {
					continue
				}
				ph := r.Params["phase"].(string)
				seen[ph] = true
				if len(r.Workload) == 0 || !(r.Derived["pred_trilinear_s"] > 0) {
					t.Errorf("%s: workload %v, derived %v", ph, r.Workload, r.Derived)
				}
			}
			for _, ph := range tc.phases {
				if !seen[ph] {
					t.Errorf("no record of phase %s", ph)
				}
			}
			code, stdout, errs = runCLI(t, "app", "table", out, "--format", "markdown")
			if code != 0 {
				t.Fatalf("app table: exit %d\n%s", code, errs)
			}
			for _, ph := range tc.phases {
				if !strings.Contains(stdout, tc.app+" "+ph) {
					t.Errorf("app table lacks %s %s:\n%s", tc.app, ph, stdout)
				}
			}
		})
	}
}

// TestAppCalibrated: without --model the store is calibrated first (the
// kkaccess records come out before the application's) and the phases are
// predicted by the trilinear fits of its reads and writes, on the direct
// store and on fixed-home.
func TestAppCalibrated(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	plot := filepath.Join(dir, "pred.png")
	args := append([]string{"app", "bitonic", "--n", "256", "--k", "2", "--l", "128", "--store", "direct,fixed-home",
		"--cal-k", "1,2", "--cal-l", "64,256", "--cal-r", "0.5,1", "--cal-max-time", "0.05", "--out", out, "--plot", plot}, appQuick...)
	code, stdout, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(stdout, "Table 2") || !strings.Contains(stdout, "fixed-home") {
		t.Errorf("report:\n%s", stdout)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	kk := map[string]int{}
	for _, r := range recs {
		if r.Bench == "kkaccess" {
			net, _ := r.Params["network"].(string)
			kk[net]++
		}
		if r.Bench == apps.Bench && r.Params["kind"] == apps.KindComm && !(r.Derived["pred_trilinear_s"] > 0) {
			t.Errorf("%v: no prediction", r.Params)
		}
	}
	// (1, 2) x (64, 128, 256) x (0.5, 1) x (read, write) per store; the
	// direct store's records are the pattern's (no network param).
	if kk[""] != 24 || kk["fixed-home"] != 24 {
		t.Errorf("calibration records per store %v, want 24 each", kk)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
}

// runCalibratedApp runs the application of args with a small calibration
// sweep (k = 1, 2; l = 64, 256 and the application's; r = 1/2, 1), hands
// every calibration record to check, asserts that every communication
// phase is predicted, and returns the calibration records per store
// (param network; "<nil>" on the direct store) and the communication
// phases.
func runCalibratedApp(t *testing.T, args []string, check func(results.Record)) (kk map[string]int, comm int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	args = append(append(args, "--cal-k", "1,2", "--cal-l", "64,256", "--cal-r", "0.5,1", "--cal-max-time", "0.05", "--out", out), appQuick...)
	code, _, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	kk = map[string]int{}
	for _, r := range recs {
		switch {
		case r.Bench == "kkaccess":
			kk[fmt.Sprint(r.Params["network"])]++
			check(r)
		case r.Bench == apps.Bench && r.Params["kind"] == apps.KindComm:
			comm++
			if !(r.Derived["pred_trilinear_s"] > 0) {
				t.Errorf("%v: no prediction", r.Params)
			}
		}
	}
	return kk, comm
}

// TestAppCalibratedBackToBack: --cal-a 3 measures the direct store's
// calibration as 3 accesses back to back per repetition, which every
// calibration record states (param a), and the fits still predict every
// communication phase.
func TestAppCalibratedBackToBack(t *testing.T) {
	kk, comm := runCalibratedApp(t, []string{"app", "matmul", "--n", "32", "--k", "2", "--l", "128", "--store", "direct", "--cal-a", "3"},
		func(r results.Record) {
			if a := fmt.Sprint(r.Params["a"]); a != "3" {
				t.Errorf("calibration record %v: a = %v, want 3", r.Params, r.Params["a"])
			}
		})
	if kk["<nil>"] != 24 || comm == 0 {
		t.Errorf("%v calibration records (want 24), %d communication phases", kk, comm)
	}
}

// TestAppCalibratedBlocks: --cal-block measures the calibration as block
// accesses (a rank's k packets to one home) on the direct store and over
// divalib's global variables alike, every calibration record says so
// (param block), and the fits predict every communication phase.
func TestAppCalibratedBlocks(t *testing.T) {
	kk, comm := runCalibratedApp(t, []string{"app", "bitonic", "--n", "256", "--k", "2", "--l", "128", "--store", "direct,fixed-home", "--cal-block"},
		func(r results.Record) {
			if r.Params["block"] != true {
				t.Errorf("calibration record %v: block = %v, want true", r.Params, r.Params["block"])
			}
		})
	if len(kk) != 2 || kk["<nil>"] != 24 || kk["fixed-home"] != 24 || comm != 2 {
		t.Errorf("calibration records per store %v (want 24 each on the direct store and fixed-home), %d communication phases (want 2)", kk, comm)
	}
}

func TestAppList(t *testing.T) {
	code, out, errs := runCLI(t, "app", "list")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, n := range []string{"matmul", "concomp", "bitonic", "samplesort", "--sync", "--parts"} {
		if !strings.Contains(out, n) {
			t.Errorf("app list lacks %s:\n%s", n, out)
		}
	}
}

// TestAppBadInput: exit 2, one message naming the flag, nothing written.
func TestAppBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	rd, _ := triModels(t, dir)
	hock := filepath.Join(dir, "hockney.json")
	hm, err := model.FitHockney(synthetic("hockney"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeModel(t, hock, hm)
	hockLink := filepath.Join(dir, "hockney-link.json")
	if err := os.Symlink(hock, hockLink); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "model.txt")
	if err := os.WriteFile(notJSON, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	negTw := negativeHockney(t, dir)
	// A run's records, a copy of its file and a file with a line twice:
	// each would count one run as two.
	run := filepath.Join(dir, "run.jsonl")
	writeJSONL(t, run, synthetic("hockney")[:3])
	runCopy := filepath.Join(dir, "run-copy.jsonl")
	data, err := os.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runCopy, data, 0o644); err != nil {
		t.Fatal(err)
	}
	twice := filepath.Join(dir, "twice.jsonl")
	if err := os.WriteFile(twice, append(data, strings.SplitAfter(string(data), "\n")[1]...), 0o644); err != nil {
		t.Fatal(err)
	}
	app := func(name string, args ...string) []string {
		return append(append([]string{"app", name}, args...), "--backend", "local", "--np", "4", "--out", out, "--model", rd)
	}
	// One gauss phase measured natively and on the local backend: a table
	// of both would list it twice under one label.
	gaussOn := func(backend string) string {
		path := filepath.Join(dir, "gauss-"+backend+".jsonl")
		line := `{"schema":1,"bench":"app","params":{"app":"gauss","phase":"xbcast","kind":"comm","matrix":"dd","n":64,"variant":"async"},"ranks":2,"unit":"s","n":1,` +
			`"min":4e-4,"median":4e-4,"max":4e-4,"ci95":[4e-4,4e-4],` + workloadJSON(t, &apps.Gauss{N: 64, Matrix: "dd"}, 2, "xbcast") + `"meta":{"backend":"` + backend + `"}}` + "\n"
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gaussNative, gaussLocal := gaussOn("native"), gaussOn("local")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no application", []string{"app"}, "app needs a subcommand"},
		{"unknown application", []string{"app", "quicksort"}, `app "quicksort": unknown subcommand`},
		{"unknown store", app("matmul", "--store", "nvram"), "--store nvram"},
		{"emulate with another store", app("matmul", "--store", "direct,emulate:BF(2)"), "must be the only store"},
		{"emulate bad network", app("matmul", "--store", "emulate:XY(3)"), "--store emulate:XY(3)"},
		{"emulate wrong ranks", app("matmul", "--store", "emulate:BF(2)"), "--store emulate:BF(2)"},
		{"p does not divide n", app("matmul", "--n", "30"), "--n 30: not divisible by the 4 ranks (the ranks must divide the matrix order: p | n)"},
		{"k l above the submatrix", app("matmul", "--n", "4", "--k", "1", "--l", "256"), "--k 1 with --l 256: k l = 256 bytes is above the submatrix of n^2/p integers (16 bytes, set by --n)"},
		{"concomp n not a multiple of 16", app("concomp", "--n", "3"), "--n 3: the vertices must be a multiple of 16"},
		// A refusal of the rank count names what set it and the accepted
		// counts, once.
		{"not a power of two", append(app("bitonic", "--n", "64"), "--np", "3"), "commcost: --np 3: app bitonic needs a power-of-two number of ranks (2, 4, 8, 16, ...)\n"},
		{"concomp not a power of two", append(app("concomp", "--n", "96"), "--np", "6"), "--np 6: app concomp needs a power-of-two number of ranks (2, 4, 8, 16, ...) for its log p merge steps"},
		{"cannon not a square", []string{"app", "cannon", "--backend", "local", "--np", "3", "--out", out}, "--np 3: app cannon needs a square number of ranks for its q x q process grid (4, 9, 16, 25, ...)"},
		{"message passing on one rank", []string{"app", "gauss", "--backend", "local", "--np", "1", "--out", out}, "--np 1: app gauss needs at least 2 ranks to communicate"},
		{"network's ranks not a power of two", []string{"app", "bitonic", "--n", "64", "--store", "emulate:mesh(3x3)", "--backend", "local", "--out", out}, "--store emulate:mesh(3x3): app bitonic needs a power-of-two number of ranks (2, 4, 8, 16, ...); the network has 9 application ranks"},
		{"samplesort n not 64k", app("samplesort", "--n", "100"), "multiple of 64"},
		{"k zero", app("bitonic", "--k", "0"), "--k 0"},
		{"l zero", app("bitonic", "--l", "0"), "--l 0"},
		{"k l above the volume", app("bitonic", "--n", "64", "--k", "4", "--l", "128"), "above the array of n keys"},
		{"l above the volume", app("concomp", "--n", "64", "--k", "1", "--l", "1K"), "above the"},
		{"sync malformed", app("matmul", "--sync", "maybe"), "--sync maybe"},
		{"density", app("concomp", "--density", "0"), "--density 0"},
		{"model missing", app("bitonic", "--model", filepath.Join(dir, "none.json")), "--model"},
		{"model not a model", app("bitonic", "--model", notJSON), "--model " + notJSON},
		{"model without k-k-access", app("bitonic", "--model", hock), "predicts no k-k-access"},
		{"calibration flags with model", app("bitonic", "--cal-k", "1,2"), "--cal-k"},
		{"calibration on one rank", []string{"app", "bitonic", "--n", "64", "--l", "64", "--backend", "local", "--np", "1", "--out", out}, "calibration sweep needs at least 2 ranks"},
		{"cal-r zero", []string{"app", "bitonic", "--cal-r", "0", "--backend", "local", "--out", out}, "--cal-r 0"},
		{"cal-r one level", []string{"app", "matmul", "--cal-r", "1", "--backend", "local", "--np", "4", "--out", out}, "--cal-r 1: the trilinear fit of the calibration needs at least 2 levels"},
		// On 2 ranks r = 0.25 and 0.5 both realise one accessing rank:
		// the default portions give two levels, too few cells for 2 x 2 k, l.
		{"cal grid collapsed on 2 ranks", []string{"app", "bitonic", "--n", "64", "--k", "1", "--l", "8", "--cal-k", "1,2", "--cal-l", "8,16", "--backend", "local", "--np", "2", "--out", out}, "--cal-r 0.25,0.5,1: on 2 application ranks these portions realise only r = 0.5, 1 (r p rounds to whole ranks), and then the trilinear fit needs more than 8 cells"},
		{"matmul n beyond a store variable", []string{"app", "matmul", "--n", "65536", "--backend", "local", "--np", "4", "--out", out}, "--n 65536: the submatrix of n^2/p integers on 4 ranks is 4294967296 bytes, more than one store variable holds (2147483583 bytes); want n <= 46340 on 4 ranks (or more ranks)"},
		{"samplesort n beyond a store variable", []string{"app", "samplesort", "--n", "300000000", "--backend", "local", "--np", "4", "--out", out}, "--n 300000000: the array A_i of 2n keys"},
		{"barneshut bodies per rank", []string{"dsm", "barneshut", "--bodies-per-rank", "1000000000", "--backend", "local", "--np", "4", "--out", out}, "--bodies-per-rank 1000000000: barneshut on 4 ranks"},
		{"cal-a zero", []string{"app", "bitonic", "--cal-a", "0", "--backend", "local", "--out", out}, "--cal-a 0: want a whole number of accesses in 1..64"},
		{"cal-a on a divalib store", []string{"app", "bitonic", "--cal-a", "4", "--store", "direct,fixed-home", "--backend", "local", "--out", out}, "--cal-a 4: accesses back to back are calibrated on --store direct only, not fixed-home"},
		{"cal-a with model", app("bitonic", "--cal-a", "2"), "--cal-a"},
		{"cal-block on an emulated network", []string{"app", "matmul", "--cal-block", "--store", "emulate:BF(2)", "--backend", "local", "--np", "16", "--out", out}, "--cal-block: an emulated network's calibration draws the paper's spread accesses"},
		{"cal-block with model", app("bitonic", "--cal-block"), "--cal-block"},
		{"plot extension", app("bitonic", "--plot", filepath.Join(dir, "p.txt")), "--plot"},
		{"iters", app("bitonic", "--iters", "3"), "--iters"},
		{"list with arguments", []string{"app", "list", "x"}, `unexpected argument "x"`},
		{"table without files", []string{"app", "table"}, "app table needs one or more FILE.jsonl"},
		{"table of no records", []string{"app", "table", notJSON}, "FILE " + notJSON},
		{"table with a model twice", []string{"app", "table", notJSON, "--model", hock, "--model", hock}, "--model " + hock + ": is given twice; give each model once"},
		{"table with a model through a link", []string{"app", "table", notJSON, "--model", hock, "--model", hockLink}, "--model " + hockLink + ": is the same file as " + hock + "; give each model once"},
		{"table of a file and its copy", []string{"app", "table", run, runCopy}, "FILE: " + runCopy + " line 1 is the same record as " + run + " line 1 (pingpong bytes=1, every field alike, its meta and samples too): a record read twice would count as two runs"},
		{"table of a line twice", []string{"app", "table", twice}, "FILE " + twice + ": results: " + twice + ": line 4: the same record as line 2 (pingpong bytes=2"},
		{"table_mixed_backends", []string{"app", "table", gaussNative, gaussLocal},
			"commcost: FILE " + gaussNative + ", " + gaussLocal + `: the records mix backends "native" (app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async) and "local" (app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async): they time different transports; give app table the records of one backend`},
		{"table with a negative t_w", []string{"app", "table", notJSON, "--model", negTw}, "--model " + negTw + ": model JSON: hockney: t_w = -1e-09 s/B is negative: a message would cost less the longer it is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// TestAppTableNamesMissingPhases: a run whose records lack a phase is
// noted with the phase's name, from the program's registered phases.
func TestAppTableNamesMissingPhases(t *testing.T) {
	rec := func(phase, kind string) string {
		return `{"schema":1,"bench":"app","params":{"app":"gauss","phase":"` + phase + `","kind":"` + kind + `","matrix":"dd","n":64,"variant":"async"},"ranks":2,"unit":"s","n":1,` +
			`"min":4e-4,"median":4e-4,"max":4e-4,"ci95":[4e-4,4e-4],"derived":{"measured_s":4e-4,"run_phases":4},` + workloadJSON(t, &apps.Gauss{N: 64, Matrix: "dd"}, 2, phase) + `"meta":{}}`
	}
	path := filepath.Join(t.TempDir(), "noxb.jsonl")
	lines := rec("pivotbcast", "comm") + "\n" + rec("eliminate", "comp") + "\n" + rec("backsolve", "comp") + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCLI(t, "app", "table", path)
	want := "note: mpi gauss [matrix=dd n=64 variant=async] on 2 ranks: records of 3 of the run's 4 phases (pivotbcast, eliminate, backsolve); xbcast is missing (no record names it)"
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the note %q", code, stdout, errs, want)
	}
}
