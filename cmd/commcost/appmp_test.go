package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/results"
)

// TestAppMPBadInput: every bad input exits 2 with one message naming the
// flag or the condition, writes nothing and prints nothing.
func TestAppMPBadInput(t *testing.T) {
	dir := t.TempDir()
	hock, tri := testModels(t, dir)
	negTw := negativeHockney(t, dir)
	out := filepath.Join(dir, "out.jsonl")
	plot := filepath.Join(dir, "p.png")
	local := func(np string, args ...string) []string {
		return append(append([]string{"app"}, args...), "--backend", "local", "--np", np, "--out", out, "--plot", plot)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown application", []string{"app", "fft"}, `app "fft": unknown subcommand; accepted: list, table`},
		{"cannon not square", local("6", "cannon", "--n", "12"), "square"},
		{"cannon n not divisible", local("4", "cannon", "--n", "13"), "not divisible"},
		{"zero size", local("4", "cannon", "--n", "0"), "--n 0"},
		{"negative size", local("4", "gauss", "--n", "-8"), "--n -8"},
		{"one rank", local("1", "cannon", "--n", "8"), "at least 2 ranks"},
		{"checkerboard grid does not fit", local("4", "checkerboard", "--n", "12", "--grid", "2x3"), "6 places"},
		{"checkerboard grid malformed", local("4", "checkerboard", "--grid", "2by2"), "--grid 2by2"},
		{"checkerboard n not divisible", local("6", "checkerboard", "--n", "10", "--grid", "2x3"), "not divisible"},
		{"gauss n not divisible", local("4", "gauss", "--n", "10"), "not divisible"},
		{"gauss singular", local("2", "gauss", "--n", "8", "--matrix", "singular"), "singular"},
		{"gauss near-singular", local("2", "gauss", "--n", "16", "--matrix", "hilbert"), "near-singular"},
		{"gauss unknown matrix", local("2", "gauss", "--n", "8", "--matrix", "magic"), "--matrix magic"},
		{"multigrid n not 2^k-1", local("4", "multigrid", "--n", "16"), "2^k - 1"},
		{"multigrid no iterations", local("4", "multigrid", "--iterations", "0"), "--iterations 0"},
		{"multigrid variant", local("4", "multigrid", "--variant", "fast"), "--variant"},
		{"cannon variant", local("4", "cannon", "--variant", "sync,fast"), "--variant"},
		{"model predicts no phase", local("4", "cannon", "--n", "16", "--model", tri), "--model"},
		{"kind prices no phase", local("4", "cannon", "--n", "16", "--kinds", "trilinear"), "--kinds trilinear: trilinear is not fitted to a message-passing program's calibration, so it would price none of its phases; accepted: a list of bsp, "},
		{"kinds with one pricing no phase", local("4", "gauss", "--n", "16", "--kinds", "hockney,c3"), "--kinds c3: c3 is not fitted to a message-passing program's calibration"},
		{"model file missing", local("4", "cannon", "--model", filepath.Join(dir, "none.json")), "--model"},
		{"model with a negative t_w", local("4", "cannon", "--model", negTw), "--model " + negTw + ": model JSON: hockney: t_w = -1e-09 s/B is negative: a message would cost less the longer it is"},
		{"calibration and model", local("4", "cannon", "--model", hock, "--calibration", hock), "--calibration and --model"},
		{"calibration time with model", local("4", "gauss", "--n", "16", "--model", hock, "--cal-max-time", "1"), "--cal-max-time times the calibration measured now; with --model none is measured"},
		{"calibration time with calibration records", local("4", "gauss", "--n", "16", "--calibration", hock, "--cal-max-time", "1"), "--cal-max-time times the calibration measured now; with --calibration none is measured"},
		{"stat", local("4", "cannon", "--stat", "mean"), "--stat mean"},
		{"format", local("4", "cannon", "--format", "csv"), "--format"},
		{"out directory missing", []string{"app", "cannon", "--n", "16", "--backend", "local", "--np", "4", "--model", hock, "--out", filepath.Join(dir, "no", "x.jsonl")}, "--out"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
}

// TestAppMPLocal runs every application on goroutine ranks with a given
// model: the table is printed, the records (calibration-free) carry the
// workload and every prediction, the plot is written.
func TestAppMPLocal(t *testing.T) {
	dir := t.TempDir()
	hock, _ := testModels(t, dir)
	for _, tc := range []struct {
		name string
		args []string
		runs int
		stat string // the table's measured row; median unless --stat says
	}{
		{"cannon", []string{"cannon", "--n", "32"}, 1, ""},
		{"cannon variants", []string{"cannon", "--n", "32", "--variant", "async,sync"}, 2, ""},
		{"checkerboard", []string{"checkerboard", "--n", "24", "--grid", "2x3"}, 1, ""},
		{"gauss", []string{"gauss", "--n", "32"}, 1, ""},
		{"multigrid", []string{"multigrid", "--n", "15", "--iterations", "3", "--variant", "async,sync"}, 2, ""},
		{"multigrid envelope", []string{"multigrid", "--n", "15", "--iterations", "3", "--stat", "envelope"}, 1, "envelope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := "4"
			if tc.name == "checkerboard" {
				np = "6"
			}
			out := filepath.Join(dir, tc.name+".jsonl")
			plot := filepath.Join(dir, tc.name+".png")
			args := append(append([]string{"app"}, tc.args...), "--backend", "local", "--np", np,
				"--model", hock, "--min-reps", "3", "--max-reps", "3", "--out", out, "--plot", plot)
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if n := strings.Count(stdout, "* best per column"); n != tc.runs {
				t.Errorf("%d ranking tables, want %d:\n%s", n, tc.runs, stdout)
			}
			stat := tc.stat
			if stat == "" {
				stat = "median"
			}
			if !strings.Contains(stdout, "hockney") || !strings.Contains(stdout, "measured ("+stat+")") {
				t.Errorf("table without the model or the measurement:\n%s", stdout)
			}
			if !strings.HasPrefix(tc.name, "multigrid") && !strings.Contains(stdout, "closed forms") {
				t.Errorf("no closed forms:\n%s", stdout)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			comm := 0
			for _, r := range recs {
				if r.Bench != apps.Bench || r.Params["kind"] != apps.KindComm {
					continue
				}
				comm++
				if len(r.Workload) == 0 {
					t.Errorf("%v: no workload", r.Params)
				}
				if _, ok := r.Derived["pred_hockney_s"]; !ok {
					t.Errorf("%v: no hockney prediction in %v", r.Params, r.Derived)
				}
				env, ok := r.Derived[apps.EnvelopeKey]
				if !ok || env <= 0 {
					t.Errorf("%v: no envelope in %v", r.Params, r.Derived)
				}
				if tc.stat == "envelope" && r.Derived["measured_s"] != env {
					t.Errorf("%v: judged on %v, not the envelope %v", r.Params, r.Derived["measured_s"], env)
				}
				if v, ok := r.Derived[apps.MeasuredStatKey(stat)]; !ok || v != r.Derived["measured_s"] {
					t.Errorf("%v: the statistic judged on is not named (%s) in %v", r.Params, apps.MeasuredStatKey(stat), r.Derived)
				}
			}
			if comm == 0 {
				t.Errorf("no communication phase record among %d", len(recs))
			}
			plots, _ := filepath.Glob(strings.TrimSuffix(plot, ".png") + "*.png")
			if len(plots) != tc.runs {
				t.Errorf("plots %v, want %d", plots, tc.runs)
			}
		})
	}
}

// TestAppMPRunTimeRefusal: a matrix that needs pivoting is found during
// the elimination, on every rank alike: exit 1, one message.
func TestAppMPRunTimeRefusal(t *testing.T) {
	dir := t.TempDir()
	hock, _ := testModels(t, dir)
	code, stdout, stderr := runCLI(t, "app", "gauss", "--n", "16", "--matrix", "zeropivot", "--backend", "local", "--np", "4", "--model", hock)
	if code != 1 || strings.Count(stderr, "commcost:") != 1 || !strings.Contains(stderr, "step 0") {
		t.Errorf("exit %d, stderr %q, stdout %q; want exit 1 with one message about step 0", code, stderr, stdout)
	}
}

// TestMPIRunAppsMP: the message-passing applications under mpirun with 4 ranks verify,
// calibrate what their models need and print the ranking.
func TestMPIRunAppsMP(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun: skipped under -short")
	}
	bin := commcostBinary(t)
	for _, args := range [][]string{
		// --validate checks every buffer of the calibration (the grid
		// steps, Cannon's row+col alignment among them, and the aggregate
		// operations) under real MPI.
		{"app", "cannon", "--n", "64", "--kinds", "hockney,twolevel,gridstep", "--validate", "--min-reps", "3", "--max-reps", "3", "--calib-max-time", "0.2"},
		{"app", "gauss", "--n", "64", "--kinds", "hockney,bsp", "--validate", "--min-reps", "3", "--max-reps", "3", "--calib-max-time", "0.2"},
		{"app", "multigrid", "--n", "31", "--iterations", "3", "--variant", "async,sync", "--kinds", "hockney,hyperbolic", "--min-reps", "3", "--max-reps", "3", "--calib-max-time", "0.2"},
	} {
		t.Run(args[1], func(t *testing.T) {
			r := underMPI(t, 4, bin, args...)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "* best per column") || !strings.Contains(r.stdout, "hockney") {
				t.Errorf("no ranking table:\n%s", r.stdout)
			}
			if args[1] == "cannon" && !strings.Contains(r.stdout, "gridstep") {
				t.Errorf("no gridstep row (the grid steps were not calibrated):\n%s", r.stdout)
			}
		})
	}
}
