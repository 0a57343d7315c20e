package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestSchedGolden: the matrix files `sched gen` writes are deterministic
// for a seed (they are the inputs of --matrix and of the fuzz corpus).
func TestSchedGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"sched_gen_fig7", []string{"sched", "gen", "--gen", "fig7", "--n", "8", "--d", "3", "--seed", "1"}},
		{"sched_gen_samplesort", []string{"sched", "gen", "--gen", "samplesort", "--n", "6", "--keys", "100", "--seed", "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, tc.name, out)
		})
	}
}

// TestSchedCount runs experiment 1 small: tables on stdout, records in the
// --out file, progress on stderr.
func TestSchedCount(t *testing.T) {
	out := filepath.Join(t.TempDir(), "count.jsonl")
	code, stdout, stderr := runCLI(t, "sched", "count", "--n", "16,33", "--d", "2,5,8", "--samples", "4", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"n = 16", "n = 33", "CGM perm", "EXACT ms", "d n ln d"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[6/6] n=33 d=8") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Per cell: D, then perms and time for 5 schedulers; 5 slope records.
	if want := 6*(1+2*5) + 5; len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.Bench == "sched.perms" && r.Params["scheduler"] == "EXACT" && r.Counters["optimal"] != 4 {
			t.Errorf("EXACT optimal on %v of 4 matrices (%v)", r.Counters["optimal"], r.Params)
		}
	}
}

// TestSchedTrace schedules a matrix file written by `sched gen`.
func TestSchedTrace(t *testing.T) {
	dir := t.TempDir()
	code, mtx, _ := runCLI(t, "sched", "gen", "--gen", "samplesort", "--n", "8", "--keys", "50")
	if code != 0 {
		t.Fatal("gen failed")
	}
	path := filepath.Join(dir, "trace.txt")
	if err := os.WriteFile(path, []byte(mtx), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "sched", "count", "--matrix", path, "--samples", "3", "--quiet")
	if code != 0 || !strings.Contains(stdout, "trace") {
		t.Fatalf("count --matrix: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "sched", "comm", "--backend", "local", "--np", "8", "--matrix", path,
		"--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--quiet")
	if code != 0 || !strings.Contains(stdout, "Alltoallv") {
		t.Fatalf("comm --matrix: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSchedCommBreakeven runs experiment 2 on goroutine ranks into a file,
// then experiment 3 from that file.
func TestSchedCommBreakeven(t *testing.T) {
	out := filepath.Join(t.TempDir(), "comm.jsonl")
	code, stdout, stderr := runCLI(t, "sched", "comm", "--backend", "local", "--np", "6", "--d", "2,3,5",
		"--sizes", "16,1K,8K", "--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"d = 5", "Alltoallv", "comp", "perm", "Fig. 9"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + 3*(5+3*6); len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.Meta.Backend != backendLocal {
			t.Errorf("record %s backend %q", r.Bench, r.Meta.Backend)
			break
		}
	}
	code, stdout, stderr = runCLI(t, "sched", "breakeven", "--in", out, "--markdown")
	if code != 0 {
		t.Fatalf("breakeven exit %d: %s", code, stderr)
	}
	for _, want := range []string{"C1", "C2", "C3", "eq. 5", "| 8K"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("breakeven lacks %q:\n%s", want, stdout)
		}
	}
	// Issue 18, class 1: a torn last line (an append cut short) costs that
	// record only, through the shared reader: the same table, one warning.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	torn := filepath.Join(filepath.Dir(out), "torn.jsonl")
	last := lines[len(lines)-1]
	os.WriteFile(torn, []byte(string(data)+last[:len(last)/2]), 0o644)
	code, tornOut, tornErr := runCLI(t, "sched", "breakeven", "--in", torn, "--markdown")
	if code != 0 || tornOut != stdout {
		t.Errorf("breakeven of a torn file: exit %d, stdout differs: %v; stderr %s", code, tornOut != stdout, tornErr)
	}
	if strings.Count(tornErr, "commcost:") != 1 || !strings.Contains(tornErr, "warning") || !strings.Contains(tornErr, "truncated final line") ||
		!strings.Contains(tornErr, fmt.Sprintf("using the %d complete records", len(recs))) {
		t.Errorf("want one warning naming the torn line and the %d records kept:\n%s", len(recs), tornErr)
	}
}

// TestSchedBadInput: every bad input is a usage error (exit 2) whose
// message names the flag, and nothing is written: no stdout, no --out file.
func TestSchedBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notSquare := write("notsquare.txt", "0 1 0\n1 0 1\n")
	ragged := write("ragged.txt", "0 1 0\n1 0\n1 1 0\n")
	negative := write("negative.txt", "0 -4\n1 0\n")
	garbage := write("garbage.txt", "0 x\n1 0\n")
	five := write("five.txt", "0 1 0 0 0\n0 0 1 0 0\n0 0 0 1 0\n0 0 0 0 1\n1 0 0 0 0\n")
	good := write("good.jsonl", "")
	local := []string{"--backend", "local", "--np", "4", "--warmup", "0", "--min-reps", "2", "--max-reps", "2"}
	tests := []struct {
		name string
		args []string
		want string // in the error message
	}{
		{"no subcommand", []string{"sched"}, "subcommand"},
		{"unknown subcommand", []string{"sched", "run"}, "unknown subcommand"},
		{"d > n-1", []string{"sched", "count", "--n", "32", "--d", "32"}, "--d 32"},
		{"d > n-1 of one n", []string{"sched", "count", "--n", "64,16", "--d", "4,20"}, "n = 16"},
		{"negative d", []string{"sched", "count", "--d", "-1"}, "--d -1"},
		{"d not a number", []string{"sched", "count", "--d", "four"}, "--d four"},
		{"n < 1", []string{"sched", "count", "--n", "0"}, "--n 0"},
		{"n garbage", []string{"sched", "count", "--n", "1e3"}, "--n 1e3"},
		{"samples 0", []string{"sched", "count", "--samples", "0"}, "--samples"},
		{"unknown gen", []string{"sched", "count", "--gen", "torus"}, "--gen torus"},
		{"unknown scheduler", []string{"sched", "count", "--sched", "CGM,XYZ"}, "--sched"},
		{"negative cell-sec", []string{"sched", "count", "--cell-sec", "-1"}, "--cell-sec"},
		{"matrix not square", []string{"sched", "count", "--matrix", notSquare}, "square"},
		{"matrix ragged", []string{"sched", "count", "--matrix", ragged}, "line 2"},
		{"matrix negative", []string{"sched", "count", "--matrix", negative}, "non-negative"},
		{"matrix garbage", []string{"sched", "count", "--matrix", garbage}, "not an integer"},
		{"matrix missing", []string{"sched", "count", "--matrix", filepath.Join(dir, "none.txt")}, "--matrix"},
		{"matrix with n", []string{"sched", "count", "--matrix", five, "--n", "5"}, "exclude"},
		{"bad entries", []string{"sched", "count", "--matrix", five, "--entries", "words"}, "--entries"},
		{"comm rank count != matrix", append([]string{"sched", "comm", "--matrix", five}, local...), "5 ranks but the run has 4"},
		{"comm d > n-1", append([]string{"sched", "comm", "--d", "4"}, local...), "--d 4"},
		{"comm bad sizes", append([]string{"sched", "comm", "--sizes", "16,big"}, local...), "--sizes"},
		{"comm bad methods", append([]string{"sched", "comm", "--methods", "CGM,MPI"}, local...), "--methods"},
		{"comm bad backend", []string{"sched", "comm", "--backend", "tcp"}, "--backend"},
		{"comm bad rel-ci", []string{"sched", "comm", "--rel-ci", "2"}, "--rel-ci"},
		{"breakeven in missing", []string{"sched", "breakeven", "--in", filepath.Join(dir, "none.jsonl")}, "--in"},
		{"breakeven in empty", []string{"sched", "breakeven", "--in", good}, "--in"},
		{"breakeven in with d", []string{"sched", "breakeven", "--in", good, "--d", "4"}, "exclude"},
		{"breakeven without LP", append([]string{"sched", "breakeven", "--methods", "CGM"}, local...), "--methods"},
		{"breakeven reuse", []string{"sched", "breakeven", "--reuse", "0.5"}, "--reuse"},
		{"gen d > n-1", []string{"sched", "gen", "--n", "8", "--d", "8"}, "--d 8"},
		{"gen unknown", []string{"sched", "gen", "--gen", "ring"}, "--gen ring"},
		{"positional", []string{"sched", "count", "extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			args := append(append([]string(nil), tc.args...), "--out", out)
			if tc.args[len(tc.args)-1] == "extra" || len(tc.args) < 3 || tc.args[1] == "gen" {
				args = tc.args // these take no --out
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("wrote to stdout on bad input: %q", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("created %s on bad input", out)
			}
		})
	}
}
