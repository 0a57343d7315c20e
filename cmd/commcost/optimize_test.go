package main

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// optQuick are the repetition flags of the optimize tests on goroutine
// ranks: three timed repetitions, no warm-up, every byte checked.
var optQuick = []string{"--backend", "local", "--np", "4", "--min-reps", "3", "--max-reps", "3", "--warmup", "0", "--validate"}

// writeSyntheticKK writes the k-k-access records of paper 000's Table 1
// (BF(3)) with 1% noise, whose fitted optimum is fixed: for D = 40000 bytes
// k0 is about 38.
func writeSyntheticKK(t *testing.T, dir string) (string, *model.Trilinear) {
	t.Helper()
	recs := synthetic("trilinear")
	path := filepath.Join(dir, "kk.jsonl")
	writeJSONL(t, path, recs)
	tr, err := model.FitTrilinear(recs, model.Options{Op: "read"})
	if err != nil {
		t.Fatal(err)
	}
	return path, tr
}

var (
	// The measured best split and the verdict depend on timings; the
	// golden file keeps only what does not.
	optBestRE    = regexp.MustCompile(`(, )?measured best`)
	optVerdictRE = regexp.MustCompile(`(?m)^predicted optimum k=.*$`)
	optSignRE    = regexp.MustCompile(`[+-]N`)
)

func optShape(s string) string {
	s = optBestRE.ReplaceAllString(s, "")
	s = optVerdictRE.ReplaceAllString(s, "<verdict>")
	return optSignRE.ReplaceAllString(shape(s), "N")
}

// optRecords splits a records file into the kkaccess and optimize records.
func optRecords(t *testing.T, path string) (kk, opt []results.Record) {
	t.Helper()
	recs, err := results.ReadJSONLFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch r.Bench {
		case "kkaccess":
			kk = append(kk, r)
		case optsplit.BenchOptimize:
			opt = append(opt, r)
		default:
			t.Errorf("unexpected bench %q", r.Bench)
		}
	}
	return kk, opt
}

// checkOptRecords checks the optimize records of a run against the model
// they were predicted from: the k asked for, l = round(D/k), r = 1, the
// volume counter, and the derived prediction and its error.
func checkOptRecords(t *testing.T, recs []results.Record, tr *model.Trilinear, dataBytes int, wantK []int, backend string) {
	t.Helper()
	var ks []int
	for _, r := range recs {
		var keys []string
		for k := range r.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, []string{"d_bytes", "k", "l", "op", "r"}) || r.Unit != "s" || r.Meta.Backend != backend {
			t.Errorf("record %v unit %q backend %q", r.Params, r.Unit, r.Meta.Backend)
			continue
		}
		k, l := int(num(r.Params["k"])), int(num(r.Params["l"]))
		ks = append(ks, k)
		if l != optsplit.PacketBytes(dataBytes, k) || num(r.Params["r"]) != 1 || int(num(r.Params["d_bytes"])) != dataBytes || r.Params["op"] != "read" {
			t.Errorf("k = %d: params %v, want l = round(%d/k), r = 1", k, r.Params, dataBytes)
		}
		if r.Counters[optsplit.CounterVolume] != float64(k*l) {
			t.Errorf("k = %d: volume %v, want %d", k, r.Counters[optsplit.CounterVolume], k*l)
		}
		pred := tr.Time(float64(k), float64(l), 1)
		if got := r.Derived[optsplit.DerivedPredicted]; math.Abs(got-pred) > 1e-12*math.Abs(pred) {
			t.Errorf("k = %d: predicted_s %g, want T(k, l, 1) = %g", k, got, pred)
		}
		if got, want := r.Derived[optsplit.DerivedPredErr], pred/r.Median-1; !(r.Median > 0) || math.Abs(got-want) > 1e-9 {
			t.Errorf("k = %d: pred_error %g, want %g (median %g)", k, got, want, r.Median)
		}
	}
	if !slices.Equal(ks, wantK) {
		t.Errorf("measured k = %v, want %v", ks, wantK)
	}
}

// TestOptimizeGolden runs optimize with a model fitted to known records on
// goroutine ranks: the report's shape, the k measured around k0, the
// records with their predictions, and the Figure 13 plot.
func TestOptimizeGolden(t *testing.T) {
	dir := t.TempDir()
	fit, tr := writeSyntheticKK(t, dir)
	out := filepath.Join(dir, "opt.jsonl")
	png := filepath.Join(dir, "fig13.png")
	args := append([]string{"optimize", "--D", "40000", "--fit", fit, "--out", out, "--plot", png}, optQuick...)
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	golden(t, "optimize_fit", optShape(stdout))
	s, err := model.OptimalSplit(tr, 40000)
	if err != nil {
		t.Fatal(err)
	}
	// k0 = sqrt(a2/a1 D) with Table 1's a2 = c4 + c2 = 17.57 us/B and
	// a1 = c6 + c3 = 484.6 us: about 38; the sweep is 1, 38 and k0 * 2^i.
	if math.Abs(s.K0-38.1) > 0.5 || s.KInt != 38 {
		t.Fatalf("synthetic model: k0 = %g, whole k = %d; want about 38", s.K0, s.KInt)
	}
	for _, want := range []string{"k0 = sqrt(a2/a1 D) = " + report.Num(s.K0), "l0 = sqrt(a1/a2 D) = " + report.Num(s.L0), "whole packets k = 38, l = 1053 bytes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	kk, opt := optRecords(t, out)
	if len(kk) != 0 {
		t.Errorf("%d kkaccess records with --fit, want none", len(kk))
	}
	checkOptRecords(t, opt, tr, 40000, []int{1, 5, 9, 19, 38, 76, 152, 303}, job.Local)
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("--plot %s not written: %v", png, err)
	}
}

// TestOptimizeDistinct: with --distinct the k above ranks-1 are dropped
// with a note, and the kept ones are measured with distinct targets.
func TestOptimizeDistinct(t *testing.T) {
	dir := t.TempDir()
	fit, tr := writeSyntheticKK(t, dir)
	out := filepath.Join(dir, "opt.jsonl")
	// D = 100 bytes: k0 = 1.9, so the sweep is 1, 2, 4, 8, 15.
	args := append([]string{"optimize", "--D", "100", "--fit", fit, "--distinct", "--format", "csv", "--out", out}, optQuick...)
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "k = 4,8,15 dropped") || !strings.Contains(stderr, "predicted optimum k=2") {
		t.Errorf("stderr lacks the dropped k or the report:\n%s", stderr)
	}
	if !strings.HasPrefix(stdout, "schema,bench,") || strings.Contains(stdout, "predicted optimum") {
		t.Errorf("stdout is not plain CSV:\n%s", stdout)
	}
	_, opt := optRecords(t, out)
	for i := range opt {
		if opt[i].Params["distinct"] != true {
			t.Errorf("record %v lacks distinct = true", opt[i].Params)
		}
		delete(opt[i].Params, "distinct")
	}
	checkOptRecords(t, opt, tr, 100, []int{1, 2}, job.Local)
}

// TestOptimizeCalibration runs the calibration sweep on goroutine ranks and
// refits its records with --fit: the refit must find the same model. The
// local backend's times are no network's, so the model may have no interior
// optimum; then both runs must fail alike (exit 1, one message), after the
// first wrote the calibration records.
func TestOptimizeCalibration(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cal.jsonl")
	args := append([]string{"optimize", "--D", "4K", "--format", "csv", "--out", out,
		"--cal-k", "1,4", "--cal-l", "64,1K,4K", "--cal-r", "0.5,1"}, optQuick...)
	code, stdout, stderr := runCLI(t, args...)
	kk, opt := optRecords(t, out)
	if len(kk) != 12 {
		t.Fatalf("%d kkaccess records, want the 2 x 3 x 2 calibration cells", len(kk))
	}
	for _, r := range kk {
		if _, ok := r.Params["d_bytes"]; ok || r.Counters[patterns.CounterRAsked] == 0 {
			t.Errorf("calibration record %v counters %v: want a plain kkaccess record", r.Params, r.Counters)
		}
	}
	// One CSV table of both benches: a header with the union of their
	// columns, then every record.
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != 1+len(kk)+len(opt) || !slices.Contains(rows[0], "param_k") {
		t.Errorf("stdout: %d CSV rows (%v), want a header and %d records:\n%s", len(rows), err, len(kk)+len(opt), stdout)
	} else if len(opt) > 0 && !slices.Contains(rows[0], "derived_"+optsplit.DerivedPredicted) {
		t.Errorf("CSV header lacks the optimize columns: %v", rows[0])
	}
	code2, _, stderr2 := runCLI(t, append([]string{"optimize", "--D", "4K", "--fit", out, "--format", "csv"}, optQuick...)...)
	switch code {
	case 0:
		tr, err := model.FitTrilinear(kk, model.Options{Op: "read"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := model.BestSplit(tr, 4096, optsplit.MaxPackets)
		if err != nil {
			t.Fatal(err)
		}
		checkOptRecords(t, opt, tr, 4096, optsplit.Around(nil, s.K0, s.KInt, 4096), job.Local)
		k0Line := regexp.MustCompile(`k0 = sqrt\(a2/a1 D\) = .*|best split is an end of k .*`)
		if code2 != 0 || k0Line.FindString(stderr) == "" || k0Line.FindString(stderr) != k0Line.FindString(stderr2) {
			t.Errorf("refit: exit %d, k0 %q, want %q\nstderr:\n%s", code2, k0Line.FindString(stderr2), k0Line.FindString(stderr), stderr2)
		}
	case 1:
		t.Logf("local-backend calibration without an optimum: %s", stderr)
		if len(opt) != 0 || strings.Count(stderr, "commcost:") != 1 || !strings.Contains(stderr, "calibration sweep") {
			t.Errorf("failed run: %d optimize records; stderr:\n%s", len(opt), stderr)
		}
		why := regexp.MustCompile(`(optimal split|trilinear fit)[^(]*`)
		if code2 != 1 || why.FindString(stderr2) != why.FindString(stderr) {
			t.Errorf("refit: exit %d, stderr %q; want the same failure as %q", code2, stderr2, stderr)
		}
	default:
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

// TestOptimizeFitFromKKAccess refits records written by 'commcost kkaccess'
// itself: they are the --fit input the help text names.
func TestOptimizeFitFromKKAccess(t *testing.T) {
	dir := t.TempDir()
	kkFile := filepath.Join(dir, "kk.jsonl")
	code, _, stderr := runCLI(t, append([]string{"kkaccess", "--k", "1,2,4", "--l", "64,1K,4K", "--r", "0.5,1", "--out", kkFile, "--format", "csv"}, optQuick...)...)
	if code != 0 {
		t.Fatalf("kkaccess: exit %d\n%s", code, stderr)
	}
	recs, err := results.ReadJSONLFile(kkFile)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "opt.jsonl")
	code, _, stderr = runCLI(t, append([]string{"optimize", "--D", "1K", "--fit", kkFile, "--out", out, "--format", "csv"}, optQuick...)...)
	tr, ferr := model.FitTrilinear(recs, model.Options{Op: "read"})
	var s *model.Split
	if ferr == nil {
		s, ferr = model.BestSplit(tr, 1024, optsplit.MaxPackets)
	}
	if ferr != nil {
		// Goroutine ranks' times need not give the model an optimum; the
		// command must then say what the model says, and write nothing:
		// exit 1, or 2 when the records cannot determine the model.
		want := 1
		if errors.Is(ferr, model.ErrIllConditioned) {
			want = 2
		}
		if code != want || !strings.Contains(stderr, ferr.Error()) || strings.Count(stderr, "commcost:") != 1 {
			t.Errorf("exit %d, stderr %q; want exit %d with %q", code, stderr, want, ferr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s written although the model has no optimum", out)
		}
		return
	}
	if code == 1 && strings.Contains(stderr, "not a time: it does not describe these accesses") && strings.Count(stderr, "commcost:") == 1 {
		// The model has an optimum, but predicts a negative time at a
		// split the command evaluates around it (goroutine ranks' times
		// under load): the command says so and writes nothing.
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s written although the model predicts no time", out)
		}
		return
	}
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	_, opt := optRecords(t, out)
	checkOptRecords(t, opt, tr, 1024, optsplit.Around(nil, s.K0, s.KInt, 1024), job.Local)
}

// TestOptimizeBadInput: every bad input exits 2 with one message naming
// the flag and the accepted form, and writes nothing.
func TestOptimizeBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("k0 is about 38\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pingpong := filepath.Join(dir, "pp.jsonl")
	writeJSONL(t, pingpong, synthetic("hockney"))
	kk := filepath.Join(dir, "kk.jsonl")
	writeJSONL(t, kk, synthetic("trilinear"))
	missing := filepath.Join(dir, "missing.jsonl")
	opt := func(args ...string) []string {
		return append(append([]string{"optimize"}, args...), "--backend", "local", "--np", "4", "--out", out)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"D missing", opt(), "--D is required"},
		{"D zero", opt("--D", "0"), "--D 0: want a positive data volume"},
		{"D negative", opt("--D", "-40000"), "--D -40000"},
		{"D malformed", opt("--D", "40KB"), "--D 40KB"},
		{"D too large", opt("--D", "4G"), "--D 4G"},
		{"fit missing", opt("--D", "40000", "--fit", missing), "--fit " + missing},
		{"fit not JSON Lines", opt("--D", "40000", "--fit", notJSON), "--fit " + notJSON},
		{"fit without kkaccess", opt("--D", "40000", "--fit", pingpong), "trilinear needs kkaccess records"},
		{"fit without op", opt("--D", "40000", "--fit", kk, "--op", "write"), `op "write"`},
		{"fit with calibration flags", opt("--D", "40000", "--fit", kk, "--cal-k", "1,2"), "--cal-k"},
		{"k zero", opt("--D", "40000", "--k", "0,2"), "--k 0,2"},
		{"k negative", opt("--D", "40000", "--k", "-4"), "--k -4"},
		{"k too many packets", opt("--D", "1M", "--k", "1,100000"), "--k 1,100000"},
		{"cal-r zero", opt("--D", "40000", "--cal-r", "0,1"), "--cal-r 0,1"},
		{"cal-r above 1", opt("--D", "40000", "--cal-r", "0.5,1.5"), "--cal-r 0.5,1.5"},
		{"cal-k one level", opt("--D", "40000", "--cal-k", "4"), "at least 2 levels"},
		{"cal-r repeated", opt("--D", "40000", "--cal-r", "1,1"), "--cal-r 1,1: 1 is listed twice"},
		{"cal-r one level", opt("--D", "40000", "--cal-r", "1"), "--cal-r 1: the trilinear fit needs at least 2 levels"},
		{"cal-k above the packet limit", opt("--D", "40000", "--cal-k", "1,70000"), "--cal-k 1,70000: 70000 packets"},
		{"cal-l malformed", opt("--D", "40000", "--cal-l", "64,big"), "--cal-l 64,big"},
		{"op unknown", opt("--D", "40000", "--op", "read,write"), "--op read,write"},
		{"plot extension", opt("--D", "40000", "--plot", filepath.Join(dir, "fig.txt")), "--plot"},
		{"iters", opt("--D", "40000", "--iters", "5"), "--iters"},
		{"one rank", append(opt("--D", "40000"), "--np", "1"), "at least 2 ranks, got 1"},
		{"distinct k above ranks", opt("--D", "40000", "--fit", kk, "--k", "4,8", "--distinct"), "--k 4,8 with --distinct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// TestOptimizeModelErrors: records that cannot determine the model are
// the file's, as in `commcost fit`: exit 2, one message with the model's
// reason, nothing written. A model without an interior optimum is not an error:
// the best split is then an end of the k range, which the report says and
// the sweep measures.
func TestOptimizeModelErrors(t *testing.T) {
	dir := t.TempDir()
	var oneK, noOptimum []results.Record
	for _, r := range synthetic("trilinear") {
		if num(r.Params["k"]) == 1 {
			oneK = append(oneK, r)
		}
		// T = 10 us k + 1 ns/B kl - 0.1 ns/B l + 5 us: a2 < 0, larger
		// packets only lose, so one packet is best and there is no
		// interior optimum.
		k, l := num(r.Params["k"]), num(r.Params["l"])
		noOptimum = append(noOptimum, synthRec("kkaccess", r.Params, 8, 10e-6*k+1e-9*k*l-0.1e-9*l+5e-6))
	}
	few, flat := filepath.Join(dir, "few.jsonl"), filepath.Join(dir, "flat.jsonl")
	writeJSONL(t, few, oneK)
	writeJSONL(t, flat, noOptimum)
	out := filepath.Join(dir, "x.jsonl")
	t.Run("one level of k", func(t *testing.T) {
		before := listDir(t, dir)
		code, stdout, stderr := runCLI(t, append([]string{"optimize", "--D", "40000", "--fit", few, "--out", out}, optQuick...)...)
		if code != 2 || !strings.Contains(stderr, "k has 1 level(s)") || !strings.Contains(stderr, "--fit "+few) || strings.Count(stderr, "commcost:") != 1 || stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming --fit and the missing levels", code, stdout, stderr)
		}
		if after := listDir(t, dir); after != before {
			t.Errorf("files changed: %s", after)
		}
	})
	t.Run("no interior optimum", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, append([]string{"optimize", "--D", "40000", "--fit", flat, "--out", out}, optQuick...)...)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q; want the boundary split k = 1", code, stderr)
		}
		if !strings.Contains(stdout, "no interior optimum") || !strings.Contains(stdout, "best split is an end of k in [1, 40000]: k = 1, l = 40000 bytes") {
			t.Errorf("report does not give the boundary optimum k = 1:\n%s", stdout)
		}
		_, opt := optRecords(t, out)
		var ks []int
		for _, r := range opt {
			ks = append(ks, int(num(r.Params["k"])))
		}
		if !slices.Equal(ks, []int{1, 2, 4, 8}) {
			t.Errorf("measured k = %v, want the curve 1, 2, 4, 8 from the boundary", ks)
		}
	})
}

// TestMPIRunOptimize runs optimize under real mpirun with 2 ranks: with a
// model from --fit (the k are then known) and with its own calibration
// sweep, whose model on shared memory may have no interior optimum (then
// the run exits 1 with one message after writing the calibration records).
func TestMPIRunOptimize(t *testing.T) {
	bin := commcostBinary(t)
	dir := t.TempDir()
	fit, tr := writeSyntheticKK(t, dir)
	short := []string{"--validate", "--max-time", "0.1", "--min-reps", "5", "--max-reps", "30", "--format", "csv"}
	out := filepath.Join(dir, "fit.jsonl")
	r := underMPI(t, 2, bin, append([]string{"optimize", "--D", "4K", "--fit", fit, "--out", out}, short...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Count(r.stderr, "predicted optimum k=12") != 1 { // the verdict, from rank 0 only
		t.Errorf("report on stderr once, from rank 0:\n%s", r.stderr)
	}
	_, opt := optRecords(t, out)
	checkOptRecords(t, opt, tr, 4096, []int{1, 2, 3, 6, 12, 24, 49, 97}, "native")
	for _, rec := range opt {
		if rec.Ranks != 2 || rec.N < 3 || !strings.Contains(rec.Meta.MPILibrary, "MPI") {
			t.Errorf("record %v: ranks %d n %d library %q", rec.Params, rec.Ranks, rec.N, rec.Meta.MPILibrary)
		}
	}

	out = filepath.Join(dir, "cal.jsonl")
	r = underMPI(t, 2, bin, append([]string{"optimize", "--D", "4K", "--out", out, "--cal-k", "1,4", "--cal-l", "64,1K,4K", "--cal-r", "0.5,1"}, short...)...)
	kk, opt := optRecords(t, out)
	if len(kk) != 12 {
		t.Errorf("%d calibration records, want 12", len(kk))
	}
	switch {
	case r.code == 0:
		if len(opt) == 0 || !strings.Contains(r.stderr, "k0 = sqrt(a2/a1 D)") {
			t.Errorf("%d optimize records; stderr:\n%s", len(opt), r.stderr)
		}
	case r.code == 1 && strings.Count(r.stderr, "commcost:") == 1 && strings.Contains(r.stderr, "calibration sweep"):
		t.Logf("shared-memory calibration without an optimum: %s", r.stderr)
	default:
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, rec := range kk {
		if rec.Meta.Backend != "native" || rec.Ranks != 2 || rec.N < 3 {
			t.Errorf("calibration record %v: backend %s ranks %d n %d", rec.Params, rec.Meta.Backend, rec.Ranks, rec.N)
		}
	}
}
