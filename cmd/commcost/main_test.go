package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// runCLI runs the CLI in-process and returns its exit status and outputs.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	code := exitCode(err, &errb)
	return code, out.String(), errb.String()
}

var (
	numberRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?`)
	spaceRE  = regexp.MustCompile(`[ \t]+`)
	ruleRE   = regexp.MustCompile(`[─━═-]{2,}`)
	unitRE   = regexp.MustCompile(`(N|\]) (ns|us|ms|s|MB/s|GB/s)\b`)
)

// machineLines are output lines that describe the machine or the test
// binary (CPU model, library, command line); shape drops their values.
var machineLines = regexp.MustCompile(`(?m)^(cpu|mpi|commit): .*$`)

// shape keeps the shape of output and drops what varies between runs and
// machines: numbers become N, runs of blanks one space, table rules one
// dash, time units <unit>, machine description lines their values, and CSV data rows (which
// carry the date and the command line) are replaced by their count.
func shape(s string) string {
	s = machineLines.ReplaceAllString(s, "$1: X")
	if lines := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(lines) > 1 && strings.HasPrefix(lines[0], "schema,bench,") {
		s = fmt.Sprintf("%s\n(%d data rows)\n", lines[0], len(lines)-1)
	}
	s = numberRE.ReplaceAllString(s, "N")
	s = ruleRE.ReplaceAllString(s, "-")
	s = unitRE.ReplaceAllString(s, "$1 <unit>")
	s = spaceRE.ReplaceAllString(s, " ")
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/commcost -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s: output differs from %s\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// TestGolden checks the shape of help, tables and CSV on the local backend
// (timings masked; the local backend is never a network measurement, it
// only exercises the CLI path).
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"help"}, 0},
		{"pingpong_local_table", []string{"pingpong", "--backend", "local", "--sizes", "8,1K", "--iters", "20", "--min-reps", "3", "--max-reps", "3", "--validate"}, 0},
		{"bandwidth_local_csv", []string{"bandwidth", "--backend", "local", "--sizes", "1K", "--iters", "2", "--min-reps", "3", "--max-reps", "3", "--format", "csv"}, 0},
		{"pingpong_local_gobench", []string{"pingpong", "--backend", "local", "--sizes", "8", "--iters", "10", "--min-reps", "3", "--max-reps", "3", "--format", "gobench"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errs)
			}
			golden(t, tt.name, shape(out))
		})
	}
}

// TestBadInput: every bad input exits 2 with one message naming the flag
// or argument, and writes nothing.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	readOnly := filepath.Join(dir, "ro.jsonl")
	if err := os.WriteFile(readOnly, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	isRoot := os.Geteuid() == 0
	tests := []struct {
		name string
		args []string
		want string // substring of stderr
		skip bool
	}{
		{"no subcommand", nil, "no subcommand", false},
		{"unknown subcommand", []string{"pingpang"}, `unknown subcommand "pingpang"`, false},
		{"help of an unknown subcommand", []string{"help", "emulate", "route"}, "help emulate route: no such subcommand", false},
		{"unknown sub-subcommand", []string{"sched", "plan"}, `sched "plan": unknown subcommand; accepted: count, comm, breakeven, gen`, false},
		{"sched without subcommand", []string{"sched"}, "sched needs a subcommand: count, comm, breakeven or gen", false},
		{"unknown flag", []string{"pingpong", "--bogus"}, "bogus", false},
		{"sizes not a number", []string{"pingpong", "--sizes", "1:abc"}, "--sizes 1:abc", false},
		{"sizes decreasing", []string{"pingpong", "--sizes", "4K:1K"}, "--sizes 4K:1K", false},
		{"iters zero", []string{"pingpong", "--iters", "0"}, "--iters 0", false},
		{"iters negative", []string{"bandwidth", "--iters", "-5"}, "--iters -5", false},
		{"warmup negative", []string{"pingpong", "--warmup", "-1"}, "--warmup -1", false},
		{"rel-ci out of range", []string{"pingpong", "--rel-ci", "1.5"}, "--rel-ci", false},
		{"max-reps below min", []string{"pingpong", "--min-reps", "10", "--max-reps", "5"}, "--max-reps", false},
		{"window zero", []string{"bandwidth", "--window", "0"}, "--window 0", false},
		{"format unknown", []string{"pingpong", "--format", "xml"}, "xml", false},
		{"backend unknown", []string{"pingpong", "--backend", "tcp"}, "--backend", false},
		{"positional argument", []string{"pingpong", "extra"}, `unexpected argument "extra"`, false},
		{"out missing dir", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", filepath.Join(dir, "nodir", "x.jsonl")}, "--out", false},
		{"out unwritable", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", readOnly}, "--out", isRoot},
		{"out is a directory", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", dir}, "--out", false},
		{"timeout shorter than a start-up", []string{"pingpong", "--backend", "local", "--sizes", "8", "--timeout", "0.001"}, "--timeout 0.001: must be a number of seconds from 5 to 1e+09 (about 32 years); the watchdog also watches MPI start-up, which a shorter timeout would abort", false},
		{"timeout of a denormal", []string{"pingpong", "--backend", "local", "--sizes", "8", "--timeout", "1e-308"}, "--timeout 1e-308: must be a number of seconds from 5", false},
		{"timeout beyond the bound", []string{"bandwidth", "--backend", "local", "--sizes", "8", "--timeout", "1e10"}, "--timeout 1e10: must be a number of seconds from 5 to 1e+09", false},
		{"timeout NaN", []string{"app", "gauss", "--backend", "local", "--np", "2", "--timeout", "NaN"}, "--timeout NaN: must be a number of seconds from 5", false},
		{"out on devtmpfs", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", "/dev/commcost-records.jsonl"}, "--out /dev/commcost-records.jsonl: results: cannot write /dev/commcost-records.jsonl: a file of the kernel's devtmpfs filesystem, not a records file", false},
		{"out under /sys on a tmpfs", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", "/sys/fs/cgroup/commcost-records.jsonl"}, "--out /sys/fs/cgroup/commcost-records.jsonl: results: cannot write /sys/fs/cgroup/commcost-records.jsonl: a file of the kernel's", false},
		{"out on proc", []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", "/proc/self/x.jsonl"}, "a file of the kernel's proc filesystem, not a records file", false},
		{"pingpong 1 rank", []string{"pingpong", "--backend", "local", "--np", "1", "--sizes", "8", "--out", filepath.Join(dir, "one.jsonl")}, "exactly 2 ranks, got 1", false},
		{"pingpong 3 ranks", []string{"pingpong", "--backend", "local", "--np", "3", "--sizes", "8", "--out", filepath.Join(dir, "three.jsonl")}, "exactly 2 ranks, got 3", false},
		{"bandwidth 3 ranks", []string{"bandwidth", "--backend", "local", "--np", "3", "--sizes", "8"}, "exactly 2 ranks, got 3", false},
		{"suite with out", []string{"suite", "--backend", "local", "--out", filepath.Join(dir, "s.jsonl")}, "--out", false},
		{"suite rundir under a missing parent", []string{"suite", "--backend", "local", "--rundir", filepath.Join(dir, "typo", "runs")}, "--rundir " + filepath.Join(dir, "typo", "runs") + ": its parent directory " + filepath.Join(dir, "typo") + " does not exist", false},
		{"suite rundir a file", []string{"suite", "--backend", "local", "--rundir", readOnly}, "--rundir " + readOnly + ": " + readOnly + " is a regular file; --rundir names a directory (new or existing) for the run directories", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("root can write a read-only file")
			}
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// checkUsageError runs the CLI with args and checks the bad-input contract:
// exit status 2, exactly one message and it mentions want, nothing on
// stdout, and no file under dir created or changed.
func checkUsageError(t *testing.T, dir string, args []string, want string) {
	t.Helper()
	before := listDir(t, dir)
	code, stdout, errs := runCLI(t, args...)
	checkUsageOutcome(t, dir, before, code, stdout, errs, want)
}

// checkUsageErrorPromptly is checkUsageError for an input that could block
// the command (a FIFO without a writer): a command still running after 5 s
// fails the test instead of hanging it.
func checkUsageErrorPromptly(t *testing.T, dir string, args []string, want string) {
	t.Helper()
	before := listDir(t, dir)
	var code int
	var stdout, errs string
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, stdout, errs = runCLI(t, args...)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("commcost %s blocked", strings.Join(args, " "))
	}
	checkUsageOutcome(t, dir, before, code, stdout, errs, want)
}

// checkUsageOutcome checks one run's exit status, outputs and files
// against the bad-input contract (checkUsageError).
func checkUsageOutcome(t *testing.T, dir, before string, code int, stdout, errs, want string) {
	t.Helper()
	if code != 2 {
		t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, stdout, errs)
	}
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q does not mention %q", errs, want)
	}
	if n := strings.Count(errs, "commcost:"); n != 1 {
		t.Errorf("want exactly one message, got %d in %q", n, errs)
	}
	if stdout != "" {
		t.Errorf("stdout not empty: %q", stdout)
	}
	if after := listDir(t, dir); after != before {
		t.Errorf("files changed: before %q after %q", before, after)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%s:%d", p, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, ",")
}
