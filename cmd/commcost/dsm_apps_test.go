package main

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/results"
)

// TestDSMAppsBadInput: every bad input of dsm bitonic, barneshut and the
// matrix square's sweep and figure flags is a usage error (exit 2) with
// one message naming the flag and the accepted form, and nothing is
// written (neither --out nor the --plot directory).
func TestDSMAppsBadInput(t *testing.T) {
	dir, out := badInputDir(t)
	plot := filepath.Join(dir, "figs")
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	local := []string{"--backend", "local", "--out", out, "--plot", plot}
	bit := func(a ...string) []string { return append(append([]string{"dsm", "bitonic"}, a...), local...) }
	bh := func(a ...string) []string { return append(append([]string{"dsm", "barneshut"}, a...), local...) }
	checkBadInputs(t, dir, []badInput{
		{"keys zero", bit("--keys", "0"), "--keys 0: 0 is not positive; the value must be positive"},
		{"keys negative", bit("--keys", "-4"), "--keys -4"},
		{"keys too many", bit("--keys", "1G"), "do not fit one message"},
		{"ranks not a power of two", bit("--np", "12", "--keys", "64,128"), "power-of-two number of ranks"},
		{"sweep mesh not a power of two", bit("--meshes", "4x4,3x3"), "--meshes 4x4,3x3"},
		{"mesh does not fit", bit("--np", "16", "--mesh", "2x4"), "--mesh 2x4 has 8 processors but --np is 16"},
		{"unknown strategy", bit("--strategies", "hand,tree-8"), `tree degree "8"`},
		{"memory below one block", bit("--keys", "4096", "--memory", "8K"), "--memory 8K: smaller than one key block (16384 bytes for 4096 keys)"},
		{"reps", bit("--reps", "0"), "--reps 0"},
		{"warmup", bit("--warmup", "-2"), "--warmup -2"},
		{"meshes and mesh", bit("--meshes", "4x4", "--mesh", "4x4"), "either --meshes or --mesh"},
		{"meshes malformed", bit("--meshes", "4x4,8"), `--meshes 4x4,8: 8: accepted form is a comma list of ROWSxCOLS`},
		// The list rule of every list flag.
		{"meshes empty", bit("--meshes", ""), `--meshes "": empty list`},
		{"meshes empty item", bit("--meshes", "2x2,,4x4"), "--meshes 2x2,,4x4: empty item in the list"},
		{"meshes twice", bit("--meshes", "2x2,4x4,2x2"), "--meshes 2x2,4x4,2x2: 2x2 is listed twice; list each value once"},
		{"keys twice", bit("--keys", "64,64"), "--keys 64,64: 64 is listed twice"},
		{"timeout zero", bit("--timeout", "0"), "--timeout 0: must be a number of seconds from 5 to 1e+09"},
		{"timeout beyond a duration", bit("--timeout", "1e10"), "--timeout 1e10: must be a number of seconds from 5 to 1e+09 (about 32 years)"},
		{"meshes native", []string{"dsm", "bitonic", "--meshes", "4x4", "--out", out}, "needs --backend local"},
		{"plot is a file", []string{"dsm", "bitonic", "--backend", "local", "--plot", file}, "--plot " + file + ": " + file + " is a regular file; --plot names a directory (new or existing) for the figures"},
		{"plot parent missing", []string{"dsm", "bitonic", "--backend", "local", "--plot", filepath.Join(dir, "no", "figs")}, "the parent directory must exist"},
		{"bodies zero", bh("--bodies", "0"), "--bodies 0: 0 is not positive; the value must be positive"},
		{"bodies per rank zero", bh("--bodies-per-rank", "0"), "--bodies-per-rank 0"},
		{"bodies both ways", bh("--bodies", "100", "--bodies-per-rank", "10"), "either --bodies or --bodies-per-rank"},
		{"theta zero", bh("--theta", "0"), "--theta 0: must be in (0, 2]"},
		{"theta above 2", bh("--theta", "2.5"), "--theta 2.5: must be in (0, 2]"},
		{"measured above steps", bh("--steps", "3", "--measured", "4"), "--measured 4"},
		{"hand in barneshut", bh("--strategies", "hand,tree-4"), `strategy "hand"`},
		{"unknown strategy bh", bh("--strategies", "home"), `strategy "home"`},
		{"memory below a body", bh("--memory", "64"), "--memory 64: smaller than one body variable"},
		{"cells per body", bh("--cells-per-body", "0"), "--cells-per-body 0"},
		{"bh mesh does not fit", bh("--np", "8", "--mesh", "3x3"), "--mesh 3x3 has 9 processors but --np is 8"},
		{"mesh wrapping around", bit("--np", "4", "--mesh", "8589934597x2213609287470756660"), "each side is at most 16777216, the most ranks a run has"},
		{"bh mesh wrapping around", bh("--np", "3", "--mesh", "8589934605x545761658833005647"), "each side is at most 16777216"},
		{"matsquare sweep not square", []string{"dsm", "matsquare", "--backend", "local", "--meshes", "4x4,2x8", "--out", out}, "needs a square mesh"},
		{"matsquare plot is a file", []string{"dsm", "matsquare", "--backend", "local", "--plot", file}, file + " is a regular file; --plot names a directory"},
		{"plot without files", []string{"dsm", "plot", "--plot", plot}, "needs one or more JSON Lines files"},
		{"plot missing file", []string{"dsm", "plot", filepath.Join(dir, "none.jsonl"), "--plot", plot}, "none.jsonl"},
		{"plot csv", []string{"dsm", "plot", file, "--format", "csv"}, "--format csv: dsm plot prints tables"},
	})
}

// checkFigures checks that each named PNG exists and decodes with a
// plausible size.
func checkFigures(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
			t.Errorf("%s: %v pixels", n, b)
		}
	}
}

// TestDSMAppsLocal runs both experiments on goroutine ranks (two meshes for
// bitonic, two body counts for Barnes-Hut), checks the records and the
// ratio tables, and that the figures are drawn.
func TestDSMAppsLocal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "apps.jsonl")
	figs := filepath.Join(dir, "figs")
	code, stdout, errs := runCLI(t, "dsm", "bitonic", "--backend", "local", "--meshes", "2x2,4x4", "--keys", "16,64",
		"--reps", "2", "--out", out, "--plot", figs)
	if code != 0 {
		t.Fatalf("bitonic: exit %d\n%s%s", code, stdout, errs)
	}
	for _, want := range []string{"congestion ratio to hand-optimised", "execution time ratio", "tree-2-4", "[not a network time: local backend]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("bitonic tables lack %q:\n%s", want, stdout)
		}
	}
	checkFigures(t, figs, "fig6_bitonic_keys.png", "fig7_bitonic_meshes.png")
	code, stdout, errs = runCLI(t, "dsm", "barneshut", "--backend", "local", "--np", "4", "--bodies", "150,300",
		"--steps", "3", "--measured", "2", "--strategies", "fixed-home,tree-2,tree-4", "--out", out, "--plot", figs, "--format", "markdown")
	if code != 0 {
		t.Fatalf("barneshut: exit %d\n%s%s", code, stdout, errs)
	}
	for _, want := range []string{"cache hit ratio", "energy drift", "Fig. 9", "| tree-4 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("barneshut tables lack %q:\n%s", want, stdout)
		}
	}
	checkFigures(t, figs, "fig8_barneshut_bodies.png", "fig9_barneshut_treebuild.png", "fig10_barneshut_force.png")
	// Fig. 11 holds the bodies per processor while the mesh grows, at any
	// N / P (a sweep at 10 per rank once drew nothing: only 200 counted).
	sweep := filepath.Join(dir, "sweep.jsonl")
	sweepFigs := filepath.Join(dir, "sweepfigs")
	code, stdout, errs = runCLI(t, "dsm", "barneshut", "--backend", "local", "--meshes", "2x2,2x4", "--bodies-per-rank", "10",
		"--steps", "3", "--measured", "2", "--strategies", "fixed-home,tree-4", "--out", sweep, "--plot", sweepFigs)
	if code != 0 {
		t.Fatalf("barneshut --meshes 2x2,2x4 --bodies-per-rank 10: exit %d\n%s%s", code, stdout, errs)
	}
	checkFigures(t, sweepFigs, "fig11_barneshut_procs.png")
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkAppRecords(t, recs, "local", map[int]int{4: 14, 16: 14}, 2*3*7)
	// The tables and figures again, from the records alone.
	again := filepath.Join(dir, "again")
	code, stdout, errs = runCLI(t, "dsm", "plot", out, "--plot", again)
	if code != 0 || !strings.Contains(stdout, "congestion ratio to hand-optimised") || !strings.Contains(stdout, "cache hit ratio") {
		t.Fatalf("dsm plot: exit %d\n%s%s", code, stdout, errs)
	}
	checkFigures(t, again, "fig6_bitonic_keys.png", "fig7_bitonic_meshes.png", "fig8_barneshut_bodies.png", "fig9_barneshut_treebuild.png", "fig10_barneshut_force.png")

	// Refused with nothing on stdout: one file given twice (every ratio
	// counted twice), and records of one mesh and one size, which draw no
	// figure (the tables were printed before the refusal).
	bad := t.TempDir()
	var one []results.Record
	for _, r := range recs {
		if r.Bench == dsmexp.BenchBitonic && r.Ranks == 4 && fmt.Sprint(r.Params["keys"]) == "16" {
			one = append(one, r)
		}
	}
	oneMesh := filepath.Join(bad, "onemesh.jsonl")
	writeJSONL(t, oneMesh, one)
	checkUsageError(t, bad, []string{"dsm", "plot", oneMesh, oneMesh}, oneMesh+" is given twice")
	checkUsageError(t, bad, []string{"dsm", "plot", oneMesh, "--plot", filepath.Join(bad, "figs")}, "--plot: no figure has two points in these records")
}

// checkAppRecords checks the experiment records: every one verified,
// counted and valid; wantBitonic[ranks] bitonic records per world size,
// wantBH Barnes-Hut records.
func checkAppRecords(t *testing.T, recs []results.Record, backend string, wantBitonic map[int]int, wantBH int) {
	t.Helper()
	bit := map[int]int{}
	bh := 0
	for _, rec := range recs {
		if err := rec.Validate(); err != nil {
			t.Error(err)
		}
		if rec.Meta.Backend != backend || rec.Counters[dsmexp.KeyVerified] != 1 || rec.Counters[dsmexp.KeyStartups] <= 0 {
			t.Errorf("%s %v: backend %q counters %v", rec.Bench, rec.Params, rec.Meta.Backend, rec.Counters)
		}
		switch rec.Bench {
		case dsmexp.BenchBitonic:
			bit[rec.Ranks]++
			if rec.Derived[dsmexp.KeyCongestionRatio] <= 0 || rec.Derived[dsmexp.KeyTimeRatio] <= 0 {
				t.Errorf("bitonic %v: derived %v", rec.Params, rec.Derived)
			}
			if rec.Params["strategy"] != dsmexp.Hand && rec.Derived[dsmexp.KeyCongestionRatio] <= 1 {
				t.Errorf("bitonic %v: congestion ratio %v, the hand version is optimal", rec.Params, rec.Derived[dsmexp.KeyCongestionRatio])
			}
		case dsmexp.BenchBarnesHut:
			bh++
			if rec.Params["phase"] == dsmexp.PhaseTotal {
				if d, ok := rec.Derived[dsmexp.KeyEnergyDrift]; !ok || d > 1e-2 {
					t.Errorf("barneshut %v: energy drift %v", rec.Params, d)
				}
				if rec.Counters["force_err_median"] <= 0 {
					t.Errorf("barneshut %v: counters %v", rec.Params, rec.Counters)
				}
			}
			if rec.Params["phase"] == "force" && (rec.Derived[dsmexp.KeyHitRatio] < 0.5 || rec.Derived[dsmexp.KeyLocalComp] <= 0) {
				t.Errorf("barneshut force %v: derived %v", rec.Params, rec.Derived)
			}
		default:
			t.Errorf("unexpected record %s", rec.Bench)
		}
	}
	for r, n := range wantBitonic {
		if bit[r] != n {
			t.Errorf("%d bitonic records on %d ranks, want %d", bit[r], r, n)
		}
	}
	if bh != wantBH {
		t.Errorf("%d Barnes-Hut records, want %d", bh, wantBH)
	}
}

// TestMPIRunDSMApps runs both experiments over every strategy under real
// mpirun with 4 ranks (a 2x2 mesh), and a mesh that does not fit the
// world is refused once, with nothing written.
func TestMPIRunDSMApps(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the mpirun integration test")
	}
	bin := commcostBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "apps.jsonl")
	run := func(args ...string) cmdResult { return mpirunCLI(t, bin, 4, 6*time.Minute, args...) }
	r := run("dsm", "bitonic", "--keys", "64,1024", "--reps", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("dsm bitonic: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run("dsm", "barneshut", "--bodies", "400", "--steps", "3", "--measured", "2", "--out", out, "--format", "csv")
	if r.code != 0 {
		t.Fatalf("dsm barneshut: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkAppRecords(t, recs, "native", map[int]int{4: 14}, 6*7)
	bad := filepath.Join(dir, "bad.jsonl")
	r = run("dsm", "barneshut", "--mesh", "1x2", "--out", bad)
	if r.code != 2 || strings.Count(r.stderr, "--mesh 1x2") != 1 {
		t.Fatalf("mesh 1x2 on 4 ranks: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("%s written on bad input", bad)
	}
}

// mpirunCLI runs the commcost binary under mpirun on np ranks and fails the
// test if it does not end within limit (skips it when mpirun cannot start).
func mpirunCLI(t *testing.T, bin string, np int, limit time.Duration, args ...string) cmdResult {
	t.Helper()
	// Oversubscribed runs under MPICH need longer (mpirun.HangLimit).
	limit = mpirun.HangLimit(limit, np)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd, err := mpirun.Command(ctx, np, bin, args...)
	if err != nil {
		t.Skip(err)
	}
	r := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("%v: hung (killed after %v)\n%s%s", args, limit, r.stdout, r.stderr)
	}
	return r
}
