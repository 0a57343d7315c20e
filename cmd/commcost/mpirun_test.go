package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// binDir holds the CLI that commcostBinary builds: one directory for the
// whole test process, so that every test reuses the first build
// (mpirun.BuildCommcost builds again once the directory of the first build
// is gone, as a test's t.TempDir is when that test ends). TestMain removes
// it.
var binDir struct {
	sync.Mutex
	path string
}

func TestMain(m *testing.M) {
	code := m.Run()
	binDir.Lock()
	if binDir.path != "" {
		os.RemoveAll(binDir.path)
	}
	binDir.Unlock()
	os.Exit(code)
}

// commcostBinary builds the CLI for tests that run it under real mpirun,
// once per test process.
func commcostBinary(t *testing.T) string {
	t.Helper()
	if err := mpirun.Available(); err != nil {
		t.Skipf("integration test needs mpirun: %v", err)
	}
	binDir.Lock()
	if binDir.path == "" {
		dir, err := os.MkdirTemp("", "commcost-bin-")
		if err != nil {
			binDir.Unlock()
			t.Fatal(err)
		}
		binDir.path = dir
	}
	dir := binDir.path
	binDir.Unlock()
	bin, err := mpirun.BuildCommcost(dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, cmd *exec.Cmd) cmdResult {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return cmdResult{code, out.String(), errb.String()}
}

func underMPI(t *testing.T, np int, bin string, args ...string) cmdResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd, err := mpirun.Command(ctx, np, bin, args...)
	if err != nil {
		t.Skip(err)
	}
	return runCmd(t, cmd)
}

// TestMPIRunPt2pt runs ping-pong and bandwidth under real mpirun with two
// ranks, validating every buffer, and checks the JSONL they append.
func TestMPIRunPt2pt(t *testing.T) {
	bin := commcostBinary(t)
	out := filepath.Join(t.TempDir(), "pt2pt.jsonl")
	r := underMPI(t, 2, bin, "pingpong", "--sizes", "0,8,64K,1M", "--validate", "--out", out, "--max-time", "2", "--max-reps", "20")
	if r.code != 0 {
		t.Fatalf("pingpong exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = underMPI(t, 2, bin, "bandwidth", "--sizes", "8,1M", "--validate", "--out", out, "--max-time", "2", "--max-reps", "20")
	if r.code != 0 {
		t.Fatalf("bandwidth exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("%d records, want 4 pingpong + 2 bandwidth", len(recs))
	}
	for _, rec := range recs {
		if rec.Meta.Backend != "native" || rec.Ranks != 2 || rec.N < 1 || !(rec.Median > 0) {
			t.Errorf("bad record %+v", rec)
		}
		if !strings.Contains(rec.Meta.MPILibrary, "MPI") || len(rec.Meta.Hosts) == 0 || rec.Meta.Command == nil {
			t.Errorf("metadata incomplete: %+v", rec.Meta)
		}
		if rec.CI95[0] > rec.Median || rec.CI95[1] < rec.Median {
			t.Errorf("CI %v does not hold the median %g", rec.CI95, rec.Median)
		}
	}
	if recs[0].Unit != "s" || recs[5].Unit != "B/s" {
		t.Errorf("units %q %q", recs[0].Unit, recs[5].Unit)
	}
}

// TestMPIRunWrongRanks: one message, exit 2, nothing written, under mpirun
// with 3 ranks and when started without mpirun at all.
func TestMPIRunWrongRanks(t *testing.T) {
	bin := commcostBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	r := underMPI(t, 3, bin, "pingpong", "--sizes", "8", "--out", out)
	if r.code != 2 || strings.Count(r.stderr, "commcost: pingpong needs exactly 2 ranks, got 3") != 1 {
		t.Errorf("np 3: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runCmd(t, exec.Command(bin, "pingpong", "--sizes", "8", "--out", out))
	// The hint names the launcher of the MPI the binary links (MPICH's
	// mpiexec rejects Open MPI's --oversubscribe).
	hint := mpirun.LaunchLine(mpirun.Linked(), 2, "commcost", "pingpong")
	if r.code != 2 || !strings.Contains(r.stderr, "got 1") || !strings.Contains(r.stderr, hint) {
		t.Errorf("singleton: exit %d, stderr:\n%s\nwant the hint %q", r.code, r.stderr, hint)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written", out)
	}
}

// TestMPIRunInfoAndSuite: info describes the world; suite writes a run
// directory whose JSONL is valid and whose report renders it.
func TestMPIRunInfoAndSuite(t *testing.T) {
	bin := commcostBinary(t)
	r := underMPI(t, 2, bin, "info")
	if r.code != 0 || !strings.Contains(r.stdout, "ranks") || !strings.Contains(r.stdout, "Open MPI") && !strings.Contains(r.stdout, "MPICH") {
		t.Fatalf("info exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	base := t.TempDir()
	// The message-passing applications' part of the suite runs in
	// TestReportRegeneratesSuite (goroutine ranks), and commcost app under
	// mpirun in TestMPIRunAppsMP; their calibration would add ping-pongs.
	// What is checked is which records and report sections the run
	// produces, not their precision: --max-reps 20 keeps each point from
	// repeating up to the default 1000 times.
	r = underMPI(t, 2, bin, "suite", "--rundir", base, "--sizes", "8,1K", "--max-time", "1", "--max-reps", "20", "--mp-apps=false")
	if r.code != 0 {
		t.Fatalf("suite exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	runs, _ := filepath.Glob(filepath.Join(base, "*", results.RecordsFile))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	recs, err := results.ReadJSONLFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range recs {
		count[r.Bench]++
		// The suite's k-k-access records are the pattern's own, as
		// commcost kkaccess writes them: realised r, asked r as a counter.
		if r.Bench == patterns.BenchKKAccess {
			k, _ := r.Params["k"].(int)
			l, _ := r.Params["l"].(int)
			asked, ok := r.Counters[patterns.CounterRAsked]
			kk := patterns.KKAccess{K: k, L: l, R: asked}
			// (fmt prints the integral r read back as int 1 and the
			// float 1 of Params alike.)
			if !ok || fmt.Sprint(r.Params) != fmt.Sprint(kk.Params(r.Ranks)) {
				t.Errorf("suite kkaccess record params %v counters %v, want the pattern's params %v and counter %s",
					r.Params, r.Counters, kk.Params(r.Ranks), patterns.CounterRAsked)
			}
		}
	}
	// 2 sizes each of ping-pong and bandwidth; k-k-access 4 k x 9 l x 2 r.
	// Paper 000's four programs (matmul twice) on the direct store: every
	// phase of each.
	if count["pingpong"] != 2 || count["bandwidth"] != 2 || count["kkaccess"] != 72 || count["app"] < 15 {
		t.Fatalf("records per bench %v", count)
	}
	report, err := os.ReadFile(filepath.Join(filepath.Dir(runs[0]), results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pingpong", "bandwidth", "kkaccess", "trilinear fit", "trilinear-piecewise fit", "held-out", "## Applications", "Table 2"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(runs[0]), results.PlotsDir, "trilinear.png")); err != nil {
		t.Error(err)
	}
	// The report of a real run regenerates from records.jsonl alone.
	dir := filepath.Dir(runs[0])
	_, plots := runDirFiles(t, dir)
	os.Remove(filepath.Join(dir, results.ReportFile))
	os.RemoveAll(filepath.Join(dir, results.PlotsDir))
	if r := runCmd(t, exec.Command(bin, "report", dir)); r.code != 0 {
		t.Fatalf("report exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	again, plots2 := runDirFiles(t, dir)
	if !bytes.Equal(report, again) || !slices.Equal(plots, plots2) {
		t.Errorf("regenerated report differs: report.md equal %v, plots %v then %v", bytes.Equal(report, again), plots, plots2)
	}
}

// TestMPIRunOneRankFails: an error on one rank alone ends the whole job at
// once (MPI_Abort) instead of leaving the other ranks blocked and this one
// waiting for them in MPI_Finalize until mpirun's timeout. Here rank 1
// answers the ping-pong with 16 bytes into rank 0's 8-byte buffer (two
// programs, MPMD), so only rank 0 sees MPI_ERR_TRUNCATE. Before the abort
// the job hung (30 s timeout hit).
func TestMPIRunOneRankFails(t *testing.T) {
	bin := commcostBinary(t)
	t.Setenv(job.AllowMPMDEnv, "1") // else refused as different commands (TestMPIRunDifferentCommands)
	start := time.Now()
	r := underMPI(t, 1, bin, "pingpong", "--sizes", "8", "--max-time", "2",
		":", "-np", "1", bin, "pingpong", "--sizes", "16", "--max-time", "2")
	took := time.Since(start)
	if r.code == 0 || !strings.Contains(r.stderr, "MPI_ERR_TRUNCATE") || took > time.Minute {
		t.Errorf("exit %d after %.1f s, want a failure naming MPI_ERR_TRUNCATE within a minute\n%s%s", r.code, took.Seconds(), r.stdout, r.stderr)
	}
}

// TestMPIRunNPDisagrees: with the native backend a --np that differs from
// the world the launcher started is refused on every subcommand that has
// --np, with one message naming both, instead of running on the world's
// ranks and writing records of another rank count.
func TestMPIRunNPDisagrees(t *testing.T) {
	bin := commcostBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	for _, tc := range []struct {
		name string
		np   int // 0: without a launcher
		args []string
		want string
	}{
		{"dsm check singleton", 0, []string{"dsm", "check", "--np", "4", "--out", out}, "--np 4: the native backend runs on the world the launcher started, here 1 rank(s) without a launcher"},
		{"dsm matsquare singleton", 0, []string{"dsm", "matsquare", "--np", "4", "--out", out}, "--np 4: the native backend"},
		{"reducelocal singleton", 0, []string{"reducelocal", "--np", "4", "--sizes", "8", "--out", out}, "--np 4: the native backend"},
		{"info singleton", 0, []string{"info", "--np", "3"}, "--np 3: the native backend"},
		{"dsm check under mpirun", 2, []string{"dsm", "check", "--np", "4", "--out", out}, "--np 4: the native backend runs on the world the launcher started, here mpirun -np 2; --np sets the ranks of --backend local only"},
		{"pingpong under mpirun", 2, []string{"pingpong", "--np", "4", "--sizes", "8", "--out", out}, "here mpirun -np 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r cmdResult
			if tc.np == 0 {
				r = runCmd(t, exec.Command(bin, tc.args...))
			} else {
				r = underMPI(t, tc.np, bin, tc.args...)
			}
			if r.code != 2 || strings.Count(r.stderr, "commcost: ") != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant one message with %q", r.code, r.stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written", out)
			}
		})
	}
	// A --np equal to the world's size is what the launcher did: accepted.
	if r := underMPI(t, 2, bin, "reducelocal", "--np", "2", "--sizes", "8", "--max-time", "0.1", "--out", out); r.code != 0 {
		t.Errorf("--np 2 under mpirun -np 2: exit %d\n%s", r.code, r.stderr)
	}
}
