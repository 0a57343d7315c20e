// Package scripts_test runs the helper and batch scripts on hostile input:
// each refusal is one message and an exit status, before anything starts,
// never a shell error or a silent exit.
package scripts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// script runs bash with args in the repository root (this directory's
// parent) with env added, and returns its status and stderr.
func script(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// oneMessage checks that stderr is one line starting with prefix and
// holding want, with no shell error ("line N:", "command not found").
func oneMessage(t *testing.T, stderr, prefix, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], prefix) || !strings.Contains(lines[0], want) {
		t.Errorf("stderr is not one message %q... holding %q:\n%s", prefix, want, stderr)
	}
	for _, bad := range []string{": line ", "command not found", "integer expression", "syntax error"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("a shell error reached the user (%q):\n%s", bad, stderr)
		}
	}
}

// refusal is one hostile run of a helper script: bash ARGS with ENV added
// must exit 2 with one message line starting with prefix and holding want.
type refusal struct {
	name   string
	env    []string
	args   []string
	prefix string
	want   string
}

// fromDir is the arguments of bash running scripts/NAME with args from
// dir, as a user in dir would: relative paths in args are dir's.
func fromDir(t *testing.T, dir, name string, args ...string) []string {
	t.Helper()
	path, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"-c", `cd "$1" && shift && exec bash "$@"`, "bash", dir, path}, args...)
}

// refuse runs each refusal; each must end before anything is installed,
// built or launched, so a row takes a fraction of a second.
func refuse(t *testing.T, tests []refusal) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := script(t, tc.env, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			oneMessage(t, stderr, tc.prefix, tc.want)
		})
	}
}

// TestHelperScriptsRefuseBadCounts: the helper scripts check their counts
// (ranks, rounds, launches, repetitions) before installing, building or
// launching anything: 0, 1 where 2 are needed, negatives, words and
// numbers beyond a sane bound, which the message names.
func TestHelperScriptsRefuseBadCounts(t *testing.T) {
	refuse(t, []refusal{
		{"run.sh 0", nil, []string{"scripts/run.sh", "0"}, "run.sh: NP '0'", "want an integer from 2"},
		{"run.sh empty", nil, []string{"scripts/run.sh", ""}, "run.sh: NP ''", "want an integer from 2"},
		{"bench_dsm_vs_c.sh empty", nil, []string{"scripts/bench_dsm_vs_c.sh", ""}, "bench_dsm_vs_c: ROUNDS ''", "want an integer from 1"},
		{"run.sh 1", nil, []string{"scripts/run.sh", "1"}, "run.sh: NP '1'", "the suite measures between ranks"},
		{"run.sh 100000", nil, []string{"scripts/run.sh", "100000"}, "run.sh: NP '100000'", "ranks per core"},
		{"run.sh abc", nil, []string{"scripts/run.sh", "abc"}, "run.sh: NP 'abc'", "want an integer"},
		{"run.sh -4", nil, []string{"scripts/run.sh", "-4"}, "run.sh: NP '-4'", "want an integer"},
		{"run.sh of an escape sequence", nil, []string{"scripts/run.sh", "\x1b[2J"}, "run.sh: NP '?[2J'", "want an integer"},
		{"run.sh 20 digits", nil, []string{"scripts/run.sh", "99999999999999999999"}, "run.sh: NP", "want an integer"},
		{"bench_dsm_vs_c.sh abc", nil, []string{"scripts/bench_dsm_vs_c.sh", "abc"}, "bench_dsm_vs_c: ROUNDS 'abc'", "want an integer"},
		{"bench_dsm_vs_c.sh 0", nil, []string{"scripts/bench_dsm_vs_c.sh", "0"}, "bench_dsm_vs_c: ROUNDS '0'", "want an integer"},
		{"bench_dsm_vs_c.sh two arguments", nil, []string{"scripts/bench_dsm_vs_c.sh", "2", "3"}, "bench_dsm_vs_c: one argument at most (ROUNDS), got 2", "usage:"},
		{"bench_dsm_vs_c.sh ROUNDS of 20 digits", nil, []string{"scripts/bench_dsm_vs_c.sh", "99999999999999999999"}, "bench_dsm_vs_c: ROUNDS", "want an integer from 1 to 99999"},
		{"bench_dsm_vs_c.sh READS=x", []string{"READS=x"}, []string{"scripts/bench_dsm_vs_c.sh", "2"}, "bench_dsm_vs_c: READS='x'", "timed remote reads"},
		{"bench_simgrid.sh NP=100000", []string{"NP=100000"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP '100000'", "16 ranks per core"},
		{"bench_simgrid.sh NP=0", []string{"NP=0"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP '0'", "want an integer from 2"},
		{"bench_simgrid.sh NP=1", []string{"NP=1"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP '1'", "measure between ranks"},
		{"bench_simgrid.sh NP=abc", []string{"NP=abc"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP 'abc'", "want an integer"},
		{"bench_simgrid.sh NP=-3", []string{"NP=-3"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP '-3'", "want an integer"},
		{"bench_simgrid.sh NP of 20 digits", []string{"NP=99999999999999999999"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP", "want an integer"},
		{"bench_vs_osu.sh --launches 0", nil, []string{"scripts/bench_vs_osu.sh", "--launches", "0"}, "bench_vs_osu: --launches '0'", "want an integer from 1 to 1000"},
		{"bench_vs_osu.sh --launches of 20 digits", nil, []string{"scripts/bench_vs_osu.sh", "--launches", "99999999999999999999"}, "bench_vs_osu: --launches", "want an integer from 1 to 1000"},
		{"bench_vs_osu.sh --np 1", nil, []string{"scripts/bench_vs_osu.sh", "--np", "2 1"}, "bench_vs_osu: --np '2 1'", "want rank counts from 2"},
		{"bench_vs_osu.sh --np 100000", nil, []string{"scripts/bench_vs_osu.sh", "--np", "100000"}, "bench_vs_osu: --np '100000'", "16 per core"},
		{"bench_vs_osu.sh --np of 20 digits", nil, []string{"scripts/bench_vs_osu.sh", "--np", "99999999999999999999"}, "bench_vs_osu: --np", "want rank counts"},
		{"bench_vs_osu.sh --np empty", nil, []string{"scripts/bench_vs_osu.sh", "--np", " "}, "bench_vs_osu: --np ' '", "want rank counts"},
		{"bench_vs_osu.sh --max-time 0", nil, []string{"scripts/bench_vs_osu.sh", "--max-time", "0"}, "bench_vs_osu: --max-time '0'", "> 0, at most 3600"},
		{"bench_vs_osu.sh --max-time of two points", nil, []string{"scripts/bench_vs_osu.sh", "--max-time", "1.2.3"}, "bench_vs_osu: --max-time '1.2.3'", "want a number of seconds"},
		{"bench_vs_osu.sh --max-time a day", nil, []string{"scripts/bench_vs_osu.sh", "--max-time", "86400"}, "bench_vs_osu: --max-time '86400'", "at most 3600"},
		{"launches.sh N of 20 digits", nil, []string{"scripts/launches.sh", "99999999999999999999", "true"}, "launches.sh: N 99999999999999999999", "want an integer >= 1 and at most 10000"},
		{"launches.sh N beyond the bound", nil, []string{"scripts/launches.sh", "10001", "true"}, "launches.sh: N 10001", "at most 10000"},
		{"launches.sh N negative", nil, []string{"scripts/launches.sh", "-3", "true"}, "launches.sh: N -3", "want an integer >= 1"},
		{"launches.sh of no such command", nil, []string{"scripts/launches.sh", "1", "/nonexistent"}, "launches.sh: CMD /nonexistent", "no such command or executable"},
		{"launches.sh N of an escape sequence", nil, []string{"scripts/launches.sh", "\x1b[2J", "true"}, "launches.sh: N ?[2J", "want an integer"},
		{"bench_vs_c.sh --rounds 0", nil, []string{"scripts/bench_vs_c.sh", "--rounds", "0"}, "bench_vs_c: --rounds '0'", "want an integer from 1 to 1000"},
		{"bench_vs_c.sh --rounds of 20 digits", nil, []string{"scripts/bench_vs_c.sh", "--rounds", "99999999999999999999"}, "bench_vs_c: --rounds", "want an integer from 1 to 1000"},
		{"bench_vs_c.sh --np 1", nil, []string{"scripts/bench_vs_c.sh", "--np", "1"}, "bench_vs_c: --np '1'", "want an integer from 2"},
		{"bench_vs_c.sh --np 100000", nil, []string{"scripts/bench_vs_c.sh", "--np", "100000"}, "bench_vs_c: --np '100000'", "16 ranks per core"},
		{"bench_vs_c.sh --np of 20 digits", nil, []string{"scripts/bench_vs_c.sh", "--np", "99999999999999999999"}, "bench_vs_c: --np", "want an integer from 2"},
		{"forced_alg.sh --np 1", nil, []string{"scripts/forced_alg.sh", "--np", "2 1"}, "forced_alg: --np '2 1'", "want rank counts from 2"},
		{"forced_alg.sh --np abc", nil, []string{"scripts/forced_alg.sh", "--np", "abc"}, "forced_alg: --np 'abc'", "want rank counts"},
		{"forced_alg.sh --np 100000", nil, []string{"scripts/forced_alg.sh", "--np", "100000"}, "forced_alg: --np '100000'", "16 per core"},
		{"forced_alg.sh --np of 20 digits", nil, []string{"scripts/forced_alg.sh", "--np", "99999999999999999999"}, "forced_alg: --np", "want rank counts"},
		{"forced_alg.sh --np empty", nil, []string{"scripts/forced_alg.sh", "--np", ""}, "forced_alg: --np ''", "want rank counts"},
		{"forced_alg.sh --out in /dev", nil, []string{"scripts/forced_alg.sh", "--out", "/dev/commcost-forced"}, "forced_alg: --out '/dev/commcost-forced': under /proc, /sys or /dev", "a directory of yours"},
		{"forced_alg.sh --np twice", nil, []string{"scripts/forced_alg.sh", "--np", "2 2"}, "forced_alg: --np '2 2'", "each once"},
		{"forced_alg.sh --max-time 0", nil, []string{"scripts/forced_alg.sh", "--max-time", "0"}, "forced_alg: --max-time '0'", "> 0, at most 3600"},
		{"forced_alg.sh --max-time abc", nil, []string{"scripts/forced_alg.sh", "--max-time", "abc"}, "forced_alg: --max-time 'abc'", "want a number of seconds"},
		{"bench_trace.sh REPS=0", []string{"REPS=0"}, []string{"scripts/bench_trace.sh"}, "bench_trace: REPS '0'", "want an integer from 1 to 1000"},
		{"bench_trace.sh REPS=abc", []string{"REPS=abc"}, []string{"scripts/bench_trace.sh"}, "bench_trace: REPS 'abc'", "want an integer"},
		{"bench_trace.sh REPS of 20 digits", []string{"REPS=99999999999999999999"}, []string{"scripts/bench_trace.sh"}, "bench_trace: REPS", "want an integer from 1 to 1000"},
		{"bench_trace.sh REPS=-1", []string{"REPS=-1"}, []string{"scripts/bench_trace.sh"}, "bench_trace: REPS '-1'", "want an integer"},
		{"bench_replay.sh BENCHTIME=0x", []string{"BENCHTIME=0x"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME='0x'", "1 to 1000"},
		{"bench_replay.sh BENCHTIME of 20 digits", []string{"BENCHTIME=99999999999999999999x"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME=", "want Nx"},
		{"bench_replay.sh BENCHTIME a word", []string{"BENCHTIME=long"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME='long'", "or a duration"},
		{"bench_replay.sh BENCHTIME=0s", []string{"BENCHTIME=0s"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME='0s'", "from 1ms to 10m"},
		{"bench_replay.sh BENCHTIME of 11 digits of seconds", []string{"BENCHTIME=99999999999s"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME='99999999999s'", "from 1ms to 10m"},
		{"bench_replay.sh BENCHTIME=600m", []string{"BENCHTIME=600m"}, []string{"scripts/bench_replay.sh"}, "bench_replay: BENCHTIME='600m'", "from 1ms to 10m"},
		// Scripts that read only the environment refuse an argument,
		// which they would ignore (`bench_simgrid.sh 4` for NP=4).
		{"bench_simgrid.sh with an argument", nil, []string{"scripts/bench_simgrid.sh", "4"}, "bench_simgrid: takes no arguments (got '4')", "set NP"},
		{"bench_replay.sh with an argument", nil, []string{"scripts/bench_replay.sh", "abc"}, "bench_replay: takes no arguments (got 'abc')", "BENCHTIME"},
		{"bench_trace.sh with an argument", nil, []string{"scripts/bench_trace.sh", "-3"}, "bench_trace: takes no arguments (got '-3')", "REPS"},
		{"setup.sh with an argument", nil, []string{"scripts/setup.sh", "mpich"}, "setup.sh: takes no arguments (got 'mpich')", "MPI"},
		{"lint.sh with an argument", nil, []string{"scripts/lint.sh", "./..."}, "lint.sh: takes no arguments (got './...')", "whole tree"},
		{"test.sh with arguments", nil, []string{"scripts/test.sh", "1", "2"}, "test.sh: takes no arguments (got '1 2')", "TAGS"},
		{"run.sh two arguments", nil, []string{"scripts/run.sh", "2", "3"}, "run.sh: one argument at most (NP), got 2", "usage: scripts/run.sh [NP]"},
		{"slurmcluster.sh --cpus 0", nil, []string{"scripts/slurmcluster.sh", "--cpus", "0", "--check"}, "slurmcluster: --cpus '0'", "want a whole number from 1 to 1024"},
		{"slurmcluster.sh --cpus of 20 digits", nil, []string{"scripts/slurmcluster.sh", "--cpus", "99999999999999999999", "--check"}, "slurmcluster: --cpus", "from 1 to 1024"},
		{"slurmcluster.sh --cpus beyond the bound", nil, []string{"scripts/slurmcluster.sh", "--cpus", "2000", "--check"}, "slurmcluster: --cpus '2000'", "from 1 to 1024"},
		{"slurmcluster.sh --cpus without a value", nil, []string{"scripts/slurmcluster.sh", "--cpus"}, "slurmcluster: --cpus needs a number", "--help"},
		{"slurmcluster.sh --port of 20 digits", nil, []string{"scripts/slurmcluster.sh", "--port", "99999999999999999999", "--check"}, "slurmcluster: --port", "from 1024 to 65000"},
		{"slurmcluster.sh --port a word", nil, []string{"scripts/slurmcluster.sh", "--port", "x", "--check"}, "slurmcluster: --port 'x'", "want a port number"},
		{"testcluster.sh --hosts of 20 digits", nil, []string{"scripts/testcluster.sh", "--hosts", "99999999999999999999", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --hosts 99999999999999999999", "want a whole number of hosts, 1 to 64"},
		{"testcluster.sh --slots of 20 digits", nil, []string{"scripts/testcluster.sh", "--hosts", "2", "--slots", "99999999999999999999", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --slots", "want 1 to 64"},
		{"testcluster.sh --split of 20 digits", nil, []string{"scripts/testcluster.sh", "--hosts", "4", "--bottleneck", "1gbit", "--split", "99999999999999999999", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --split", "want 1 to 3 hosts"},
		{"testcluster.sh --timeout of 20 digits", nil, []string{"scripts/testcluster.sh", "--hosts", "2", "--timeout", "99999999999999999999", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --timeout", "to 604800 (a week)"},
		{"testcluster.sh --lock-wait beyond a day", nil, []string{"scripts/testcluster.sh", "--hosts", "2", "--lock-wait", "100000", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --lock-wait 100000", "to 86400 (a day)"},
		{"bench_simgrid.sh NP beyond a cluster", []string{"NP=5000", "LAUNCHER=mpirun"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: NP '5000'", "to 4096 (through LAUNCHER)"},
	})
}

// TestHelperScriptsRefuseBadInput: the helper scripts' other inputs
// (lists, launchers, directories, files) are checked as their counts are:
// one message naming the flag or variable, status 2, before anything runs.
func TestHelperScriptsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(full, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The caller's directory, for the paths the scripts take relative to
	// it (not to the checkout they cd to): sub is a directory, file a file.
	caller := t.TempDir()
	if err := os.Mkdir(filepath.Join(caller, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(caller, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	refuse(t, []refusal{
		{"build_trace.sh OUT relative to the caller", nil, fromDir(t, caller, "build_trace.sh", "file/x.so"), "build_trace.sh: OUT '" + caller + "/file/x.so'", "not a directory"},
		{"bench_vs_c.sh --tsv relative to the caller", nil, fromDir(t, caller, "bench_vs_c.sh", "--tsv", "sub", "--cells", "nosuch"), "bench_vs_c: --tsv '" + caller + "/sub'", "not a directory"},
		{"bench_vs_osu.sh --tsv relative to the caller", []string{"OSU_DIR=" + dir}, fromDir(t, caller, "bench_vs_osu.sh", "--tsv", "sub", "--benches", "^latency$"), "bench_vs_osu: --tsv '" + caller + "/sub'", "not a directory"},
		{"bench_vs_osu.sh --tsv6 relative to the caller", []string{"OSU_DIR=" + dir}, fromDir(t, caller, "bench_vs_osu.sh", "--tsv6", "sub", "--benches", "^latency$"), "bench_vs_osu: --tsv6 '" + caller + "/sub'", "not a directory"},
		{"forced_alg.sh --out relative to the caller", []string{"MPI=mpich"}, fromDir(t, caller, "forced_alg.sh", "--out", "file"), "forced_alg: --out '" + caller + "/file'", "want a directory"},
		// An output that is not a file to append to is refused before
		// measuring; the later refusal (--cells, OSU_DIR) keeps a script
		// that lacks the check from measuring here.
		{"bench_vs_c.sh --tsv a device", nil, []string{"scripts/bench_vs_c.sh", "--tsv", "/dev/full", "--cells", "nosuch"}, "bench_vs_c: --tsv '/dev/full'", "not a regular file"},
		{"bench_vs_c.sh --tsv new in /dev", nil, []string{"scripts/bench_vs_c.sh", "--tsv", "/dev/x.tsv", "--cells", "nosuch"}, "bench_vs_c: --tsv '/dev/x.tsv'", "not one of the kernel's /dev"},
		{"bench_vs_c.sh --tsv in a missing read-only tree", nil, []string{"scripts/bench_vs_c.sh", "--tsv", "/proc/nope/x.tsv", "--cells", "nosuch"}, "bench_vs_c: --tsv '/proc/nope/x.tsv'", "want a file to append rows to"},
		{"bench_vs_osu.sh --tsv a device", []string{"OSU_DIR=" + dir}, []string{"scripts/bench_vs_osu.sh", "--tsv", "/dev/full", "--benches", "^latency$"}, "bench_vs_osu: --tsv '/dev/full'", "not a regular file"},
		{"bench_vs_osu.sh --tsv6 a device", []string{"OSU_DIR=" + dir}, []string{"scripts/bench_vs_osu.sh", "--tsv6", "/dev/null", "--benches", "^latency$"}, "bench_vs_osu: --tsv6 '/dev/null'", "not a regular file"},
		{"bench_vs_osu.sh --benches unknown", nil, []string{"scripts/bench_vs_osu.sh", "--benches", "nosuch"}, "bench_vs_osu: --benches 'nosuch'", "matching some of the benchmarks latency bandwidth barrier"},
		{"bench_vs_osu.sh --benches empty", nil, []string{"scripts/bench_vs_osu.sh", "--benches", ""}, "bench_vs_osu: --benches ''", "matching some of the benchmarks"},
		{"bench_vs_osu.sh --benches a comma list", nil, []string{"scripts/bench_vs_osu.sh", "--benches", "bcast,reduce"}, "bench_vs_osu: --benches 'bcast,reduce'", "(e.g. 'bcast|reduce')"},
		{"bench_vs_osu.sh --benches no expression", nil, []string{"scripts/bench_vs_osu.sh", "--benches", "("}, "bench_vs_osu: --benches '('", "want a regular expression"},
		{"bench_vs_osu.sh --benches without a value", nil, []string{"scripts/bench_vs_osu.sh", "--benches"}, "bench_vs_osu: --benches needs a value", "usage:"},
		{"bench_vs_osu.sh --tsv empty", nil, []string{"scripts/bench_vs_osu.sh", "--tsv", ""}, "bench_vs_osu: --tsv ''", "want a file to append rows to"},
		{"bench_vs_osu.sh --tsv6 a directory", nil, []string{"scripts/bench_vs_osu.sh", "--tsv6", dir}, "bench_vs_osu: --tsv6", "want a file to append rows to"},
		{"bench_vs_osu.sh OSU_DIR without OSU", []string{"OSU_DIR=" + dir}, []string{"scripts/bench_vs_osu.sh", "--benches", "^latency$"}, "bench_vs_osu: OSU_DIR=", "holds no osu_latency and osu_bw"},
		{"bench_vs_osu.sh OSU_SRC without sources", []string{"OSU_SRC=" + dir}, []string{"scripts/bench_vs_osu.sh", "--benches", "^bandwidth$"}, "bench_vs_osu: no OSU found", "set OSU_DIR"},
		{"bench_vs_osu.sh OSU6_SRC without sources", []string{"OSU6_SRC=" + dir}, []string{"scripts/bench_vs_osu.sh", "--benches", "^bcast$"}, "bench_vs_osu: no OSU 6.1 sources", "set OSU6_SRC"},
		{"bench_vs_osu.sh unknown option", nil, []string{"scripts/bench_vs_osu.sh", "--bogus"}, "bench_vs_osu: unknown option '--bogus'", "usage:"},
		{"bench_vs_c.sh --cells unknown", nil, []string{"scripts/bench_vs_c.sh", "--cells", "nosuch"}, "bench_vs_c: --cells 'nosuch'", "matching some cells' names"},
		{"bench_vs_c.sh --cells empty", nil, []string{"scripts/bench_vs_c.sh", "--cells", ""}, "bench_vs_c: --cells ''", "want a regular expression"},
		{"bench_vs_c.sh --tsv a directory", nil, []string{"scripts/bench_vs_c.sh", "--tsv", dir}, "bench_vs_c: --tsv", "want a file to append rows to"},
		{"bench_vs_c.sh --rounds without a value", nil, []string{"scripts/bench_vs_c.sh", "--rounds"}, "bench_vs_c: --rounds needs a value", "usage:"},
		{"bench_vs_c.sh TAGS not a build tag", []string{"TAGS=bogus"}, []string{"scripts/bench_vs_c.sh"}, "bench_vs_c: TAGS='bogus'", `want "-tags mpich" or empty`},
		{"bench_vs_c.sh TAGS without a tag", []string{"TAGS=-tags"}, []string{"scripts/bench_vs_c.sh"}, "bench_vs_c: TAGS='-tags'", `want "-tags mpich" or empty`},
		{"launches.sh COMMCOST_LAUNCH_ID with an escape", []string{"COMMCOST_LAUNCH_ID=\x1b]0;x\a"}, []string{"scripts/launches.sh", "1", "true"}, "launches.sh: COMMCOST_LAUNCH_ID '?]0;x?'", "want plain text"},
		{"bench_vs_c.sh unknown option", nil, []string{"scripts/bench_vs_c.sh", "--bogus"}, "bench_vs_c: unknown option '--bogus'", "usage:"},
		{"forced_alg.sh --ops unknown", nil, []string{"scripts/forced_alg.sh", "--ops", "bcast nosuch"}, "forced_alg: --ops 'bcast nosuch'", "want some of the collectives barrier bcast"},
		{"forced_alg.sh --ops empty", nil, []string{"scripts/forced_alg.sh", "--ops", " "}, "forced_alg: --ops ' '", "want some of the collectives"},
		{"forced_alg.sh --ops twice", nil, []string{"scripts/forced_alg.sh", "--ops", "bcast bcast"}, "forced_alg: --ops 'bcast bcast'", "each once"},
		{"forced_alg.sh --sizes empty", nil, []string{"scripts/forced_alg.sh", "--sizes", ""}, "forced_alg: --sizes ''", "want LO:HI"},
		{"forced_alg.sh --sizes decreasing", nil, []string{"scripts/forced_alg.sh", "--sizes", "1M:8"}, "forced_alg: --sizes '1M:8'", "want LO:HI"},
		{"forced_alg.sh --sizes twice", nil, []string{"scripts/forced_alg.sh", "--sizes", "8,1K,8"}, "forced_alg: --sizes '8,1K,8'", "each once"},
		{"forced_alg.sh --sizes beyond one call", nil, []string{"scripts/forced_alg.sh", "--sizes", "4G"}, "forced_alg: --sizes '4G'", "at most 2G less 1 bytes"},
		{"forced_alg.sh --sizes a word", nil, []string{"scripts/forced_alg.sh", "--sizes", "big"}, "forced_alg: --sizes 'big'", "a comma list of sizes"},
		{"forced_alg.sh --out a file", nil, []string{"scripts/forced_alg.sh", "--out", "scripts/run.sh"}, "forced_alg: --out '/", "/scripts/run.sh': want a directory"},
		{"forced_alg.sh --out empty", nil, []string{"scripts/forced_alg.sh", "--out", ""}, "forced_alg: --out ''", "want a directory"},
		{"forced_alg.sh --np without a value", nil, []string{"scripts/forced_alg.sh", "--np"}, "forced_alg: --np needs a value", "usage:"},
		{"forced_alg.sh unknown option", nil, []string{"scripts/forced_alg.sh", "--bogus"}, "forced_alg: unknown option '--bogus'", "usage:"},
		{"bench_trace.sh OSU_SRC missing", []string{"OSU_SRC=" + filepath.Join(dir, "nope")}, []string{"scripts/bench_trace.sh"}, "bench_trace: OSU_SRC=", "holds no OSU 6.1 sources"},
		{"build_trace.sh two arguments", nil, []string{"scripts/build_trace.sh", "a.so", "b.so"}, "build_trace.sh: one argument at most, got 2", "usage:"},
		{"build_trace.sh unknown option", nil, []string{"scripts/build_trace.sh", "--bogus"}, "build_trace.sh: unknown option '--bogus'", "usage:"},
		{"build_trace.sh OUT a directory", nil, []string{"scripts/build_trace.sh", dir}, "build_trace.sh: OUT", "is a directory"},
		{"check_benchstat.sh missing file", nil, []string{"scripts/check_benchstat.sh", filepath.Join(dir, "nope")}, "check_benchstat: ", "is missing, empty or not a file"},
		{"check_benchstat.sh no Benchmark line", nil, []string{"scripts/check_benchstat.sh", "scripts/run.sh"}, "check_benchstat: 'scripts/run.sh' holds no Benchmark line", "want files of Go benchmark output"},
		{"build_trace.sh OUT in a missing directory", nil, []string{"scripts/build_trace.sh", filepath.Join(dir, "nope", "x.so")}, "build_trace.sh: OUT", "its directory is missing"},
		{"build_trace.sh OUT under a file", nil, []string{"scripts/build_trace.sh", "scripts/run.sh/x.so"}, "build_trace.sh: OUT", "not a directory"},
		// The library is moved onto OUT: as root, onto /dev/null it would
		// replace the device.
		{"build_trace.sh OUT a device", nil, []string{"scripts/build_trace.sh", "/dev/null"}, "build_trace.sh: OUT '/dev/null' is not a regular file", "usage:"},
		{"build_trace.sh OUT in /dev", nil, []string{"scripts/build_trace.sh", "/dev/commcost-x.so"}, "build_trace.sh: OUT '/dev/commcost-x.so' is under /proc, /sys or /dev", "usage:"},
		{"build_trace.sh OUT in /sys", nil, []string{"scripts/build_trace.sh", "/sys/fs/cgroup/commcost-x.so"}, "build_trace.sh: OUT '/sys/fs/cgroup/commcost-x.so' is under /proc, /sys or /dev", "usage:"},
		{"check_benchstat.sh a directory", nil, []string{"scripts/check_benchstat.sh", dir}, "check_benchstat: ", "not a file"},
		{"check_benchstat.sh BENCHSTAT_VERSION of two words", []string{"BENCHSTAT_VERSION=v1 x"}, []string{"scripts/check_benchstat.sh"}, "check_benchstat: BENCHSTAT_VERSION='v1 x'", "want a module version"},
		{"slurmcluster.sh unknown option", nil, []string{"scripts/slurmcluster.sh", "--bogus"}, "slurmcluster: unknown option '--bogus'", "--help"},
		{"testcluster.sh --subnet beyond 255", nil, []string{"scripts/testcluster.sh", "--hosts", "2", "--subnet", "10.999.0", "--prefix", "ccu-", "--", "true"}, "testcluster.sh: --subnet 10.999.0", "each 0 to 255"},
		{"testcluster.sh unknown option", nil, []string{"scripts/testcluster.sh", "--bogus"}, "testcluster.sh: unknown option --bogus", "usage:"},
		{"test_batch.sh BINARY missing", nil, []string{"scripts/test_batch.sh", filepath.Join(dir, "nope")}, "test_batch: BINARY", "is not an executable file"},
		{"test_batch.sh BINARY a directory", nil, []string{"scripts/test_batch.sh", dir}, "test_batch: BINARY", "is not an executable file"},
		{"test_batch.sh two arguments", nil, []string{"scripts/test_batch.sh", "a", "b"}, "test_batch: one argument at most (BINARY), got 2", "usage:"},
		{"test_batch.sh unknown option", nil, []string{"scripts/test_batch.sh", "--bogus"}, "test_batch: unknown option '--bogus'", "usage:"},
		{"test_batch.sh --inside outside a cluster", []string{"SLURM_CONF="}, []string{"scripts/test_batch.sh", "--inside"}, "test_batch: --inside runs inside scripts/slurmcluster.sh", "no SLURM_CONF"},
		{"test_batch.sh TEST_BATCH_LOGS a file", []string{"TEST_BATCH_LOGS=scripts/run.sh"}, []string{"scripts/test_batch.sh"}, "test_batch: TEST_BATCH_LOGS='/", "is not a directory"},
		{"bench_simgrid.sh LAUNCHER of spaces", []string{"LAUNCHER=  "}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: LAUNCHER='  '", "want the whole launch prefix"},
		{"bench_simgrid.sh LAUNCHER not found", []string{"LAUNCHER=no-such-launcher -x"}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: LAUNCHER='no-such-launcher -x'", "a launcher on PATH"},
		{"bench_simgrid.sh OSU_SRC missing", []string{"OSU_SRC=" + filepath.Join(dir, "nope")}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: OSU_SRC=", "holds no OSU 6.1 sources"},
		{"bench_simgrid.sh WORK someone's directory", []string{"WORK=" + full}, []string{"scripts/bench_simgrid.sh"}, "bench_simgrid: WORK=", "it deletes WORK first"},
	})
}

// TestBatchJobsNeverDieSilently: the batch library's start (cc_init)
// under set -e -o pipefail, as every job script runs it: a COMMCOST that
// is a directory, not executable or missing, a PBS node file with no
// host, and step settings the steps would refuse only at their second
// launch (COMMCOST_SIZES, COMMCOST_QUICK) each stop the job with one
// message and status 2 (bad input); a COMMCOST that is a wrapper script
// (not a dynamic executable) and sizes in every form commcost takes are
// accepted; a step that fails where nothing expected it is named.
func TestBatchJobsNeverDieSilently(t *testing.T) {
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "commcost-wrapper")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec true \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "nodes-empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	blank := filepath.Join(dir, "nodes-blank")
	if err := os.WriteFile(blank, []byte("\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "nodes-two")
	if err := os.WriteFile(two, []byte("n1\nn2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(dir, "commcost-dir")
	if err := os.Symlink(dir, dirLink); err != nil {
		t.Fatal(err)
	}
	lib, err := filepath.Abs("batch/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	pbs := []string{"PBS_JOBID=42.server", "PBS_O_WORKDIR=" + dir, "COMMCOST_RESULTS=" + filepath.Join(dir, "runs")}
	slurm := []string{"SLURM_JOB_ID=7", "SLURM_SUBMIT_DIR=" + dir, "SLURM_NTASKS=2", "COMMCOST_LAUNCHER=mpirun", "COMMCOST_RESULTS=" + filepath.Join(dir, "runs")}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	_, mpirunErr := exec.LookPath("mpirun")
	tests := []struct {
		name   string
		env    []string
		body   string
		status int
		want   string // "" for a job that starts (status 0)
	}{
		{"COMMCOST is a directory", with(pbs, "COMMCOST="+dir, "PBS_NODEFILE="+two), "cc_init pbs", 2, "is a directory"},
		{"COMMCOST is a directory (slurm)", with(slurm, "COMMCOST="+dir), "cc_init slurm", 2, "is a directory"},
		{"COMMCOST is a link to a directory", with(pbs, "COMMCOST="+dirLink, "PBS_NODEFILE="+two), "cc_init pbs", 2, "COMMCOST=" + dirLink + " is a directory"},
		{"COMMCOST not executable", with(pbs, "COMMCOST="+plain, "PBS_NODEFILE="+two), "cc_init pbs", 2, "is not executable"},
		{"COMMCOST missing", with(pbs, "COMMCOST="+filepath.Join(dir, "nope"), "PBS_NODEFILE="+two), "cc_init pbs", 2, "no commcost binary at"},
		{"empty PBS node file", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+empty), "cc_init pbs", 2, "lists no host"},
		{"srun asked for under PBS", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_LAUNCHER=srun"), "cc_init pbs", 2, "COMMCOST_LAUNCHER=srun: a PBS job launches with mpirun only"},
		{"mpirun asked for under PBS", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_LAUNCHER=mpirun"), "cc_init pbs", 0, ""},
		{"blank PBS node file", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+blank), "cc_init pbs", 2, "lists no host"},
		{"not in a Slurm job", []string{"SLURM_JOB_ID=", "COMMCOST=" + wrapper}, "cc_init slurm", 1, "not inside a Slurm job"},
		{"a step fails unexpectedly", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two), "cc_init pbs 2>/dev/null; false | cat", 1, "stopped with status 1 at the job script line 3, in: cat"},
		{"COMMCOST is a wrapper script", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two), "cc_init pbs", 0, ""},
		{"COMMCOST is a name on PATH", with(pbs, "COMMCOST=commcost-wrapper", "PATH="+dir+":"+os.Getenv("PATH"), "PBS_NODEFILE="+two), "cc_init pbs", 0, ""},
		{"COMMCOST_RESULTS is a file", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_RESULTS="+plain), "cc_init pbs", 2, "COMMCOST_RESULTS=" + plain + " is not a directory"},
		{"a job id that climbs out", with(slurm, "COMMCOST="+wrapper, "SLURM_JOB_ID=../../x"), "cc_init slurm", 2, "is not a plain name"},
		{"an escape sequence in the task count", with(slurm, "COMMCOST="+wrapper, "SLURM_NTASKS=2\x1b[2J"), "cc_init slurm", 2, "the job's task count '2?[2J' is not a whole number"},
		{"a task count beyond an int", with(slurm, "COMMCOST="+wrapper, "SLURM_NTASKS=99999999999999999999"), "cc_init slurm", 2, "is not a whole number of at most 9 digits"},
		{"control characters in the results path", with(slurm, "COMMCOST="+wrapper, "COMMCOST_RESULTS="+dir+"/r\x1b[2J"), "cc_init slurm", 2, "holds control characters"},
		{"control characters in the srun plugin", with(slurm, "COMMCOST="+wrapper, "COMMCOST_LAUNCHER=srun", "COMMCOST_SRUN_MPI=\x1b[2J"), "cc_init slurm", 2, "COMMCOST_SRUN_MPI='?[2J' holds control characters"},
		{"an srun plugin that is not one name", with(slurm, "COMMCOST="+wrapper, "COMMCOST_LAUNCHER=srun", "COMMCOST_SRUN_MPI=pmix --x"), "cc_init slurm", 2, "COMMCOST_SRUN_MPI='pmix --x': want the name of one of srun's MPI plugins"},
		{"control characters in the binary's path", with(slurm, "COMMCOST="+wrapper+"\x07"), "cc_init slurm", 2, "holds control characters"},
		{"control characters in the mpirun flags", with(slurm, "COMMCOST="+wrapper, "COMMCOST_MPIRUN_FLAGS=--mca\x1b[2J"), "cc_init slurm", 2, "COMMCOST_MPIRUN_FLAGS='--mca?[2J' holds control characters"},
		{"control characters in the network", with(slurm, "COMMCOST="+wrapper, "COMMCOST_NET=BF(2)\r"), "cc_init slurm", 2, "COMMCOST_NET='BF(2)?' holds control characters"},
		{"control characters in the sizes", with(slurm, "COMMCOST="+wrapper, "COMMCOST_SIZES=8\x1b"), "cc_init slurm", 2, "COMMCOST_SIZES='8?' holds control characters"},
		{"control characters in the kkaccess flags", with(slurm, "COMMCOST="+wrapper, "COMMCOST_KK_ARGS=--k\t1"), "cc_init slurm", 2, "COMMCOST_KK_ARGS='--k?1' holds control characters"},
		{"control characters in the quick switch", with(slurm, "COMMCOST="+wrapper, "COMMCOST_QUICK=1\x1b"), "cc_init slurm", 2, "COMMCOST_QUICK='1?' holds control characters"},
		{"control characters in the launcher", with(slurm, "COMMCOST="+wrapper, "COMMCOST_LAUNCHER=srun\x1b"), "cc_init slurm", 2, "COMMCOST_LAUNCHER='srun?' holds control characters"},
		{"a quick switch that is not 0 or 1", with(slurm, "COMMCOST="+wrapper, "COMMCOST_QUICK=yes"), "cc_init slurm", 2, "COMMCOST_QUICK='yes': want 1 (small sweeps) or 0"},
		{"sizes that decrease", with(slurm, "COMMCOST="+wrapper, "COMMCOST_SIZES=4M:8"), "cc_init slurm", 2, "COMMCOST_SIZES='4M:8': want LO:HI"},
		{"sizes listed twice", with(slurm, "COMMCOST="+wrapper, "COMMCOST_SIZES=8,1K,8"), "cc_init slurm", 2, "COMMCOST_SIZES='8,1K,8': want"},
		{"sizes beyond one call", with(slurm, "COMMCOST="+wrapper, "COMMCOST_SIZES=8,4G"), "cc_init slurm", 2, "a size at most 2G less 1 bytes"},
		{"sizes that are a word", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_SIZES=all"), "cc_init pbs", 2, "COMMCOST_SIZES='all': want"},
		{"sizes of commcost's forms", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_SIZES= 8, 1k,64K"), "cc_init pbs", 0, ""},
		{"an array job without its task", with(slurm, "COMMCOST="+wrapper, "SLURM_ARRAY_JOB_ID=7", "SLURM_ARRAY_TASK_ID="), "cc_init slurm", 2, "SLURM_ARRAY_JOB_ID=7 is set but SLURM_ARRAY_TASK_ID is not"},
		{"a PBS job id of only a server", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "PBS_JOBID=.server"), "cc_init pbs", 2, "is empty without its server suffix"},
		{"a sizes range", with(pbs, "COMMCOST="+wrapper, "PBS_NODEFILE="+two, "COMMCOST_SIZES=0:4M", "COMMCOST_QUICK=1"), "cc_init pbs", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status == 0 && mpirunErr != nil {
				t.Skip("no mpirun on PATH: a PBS job's launcher")
			}
			code, stderr := script(t, tc.env, "-c", "set -euo pipefail\n. "+lib+"\n"+tc.body)
			if code != tc.status {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.status, stderr)
			}
			if tc.want == "" {
				if !strings.Contains(stderr, "== commcost job 42 (pbs)") {
					t.Errorf("the job did not start:\n%s", stderr)
				}
				return
			}
			oneMessage(t, stderr, "commcost job: ", tc.want)
		})
	}
}

// TestScriptsHelp: every script a user runs prints its usage (the comment
// it opens with) for --help and -h and exits 0, as commcost SUB --help
// does, starting nothing.
func TestScriptsHelp(t *testing.T) {
	for _, name := range []string{"bench_dsm_vs_c", "bench_replay", "bench_simgrid", "bench_trace", "build_trace", "check_benchstat",
		"launches", "lint", "run", "setup", "test", "test_batch", "bench_vs_c", "bench_vs_osu", "forced_alg"} {
		path := filepath.Join("scripts", name+".sh")
		if _, err := os.Stat(filepath.Join("..", path)); err != nil {
			continue
		}
		for _, flag := range []string{"--help", "-h"} {
			t.Run(name+flag, func(t *testing.T) {
				cmd := exec.Command("bash", path, flag)
				cmd.Dir = ".."
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.HasPrefix(string(out), name+".sh") {
					t.Errorf("%s %s: %v\n%s", path, flag, err, out)
				}
			})
		}
	}
}

// TestPaper003MeshBounds: the table script's record bounds are the Go
// reader's, so a file one accepts the other does not refuse, and back.
func TestPaper003MeshBounds(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command("python3", "-c", "import sys; sys.path.insert(0, '.'); import paper003_mesh as m; print(m.MIN_SECONDS, m.MAX_SECONDS, m.MAX_BYTES, m.MAX_RANKS)").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var minS, maxS float64
	var maxB, maxR int64
	if _, err := fmt.Sscan(string(out), &minS, &maxS, &maxB, &maxR); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if minS != results.MinRecordSeconds || maxS != results.MaxRecordSeconds || maxB != mpi.MaxCount || maxR != results.MaxRecordRanks {
		t.Errorf("script bounds %v %v %v %v, Go's %v %v %v %v", minS, maxS, maxB, maxR, results.MinRecordSeconds, results.MaxRecordSeconds, mpi.MaxCount, results.MaxRecordRanks)
	}
}

// TestPaper003MeshRefuses: the table script refuses what it cannot read
// with one line and exit 2 (no Python traceback, no blocking on a FIFO, no
// silent empty output), and prints its usage for --help.
func TestPaper003MeshRefuses(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	agg := `{"bench":"aggregate","ranks":4,"params":{"op":"bcast","bytes":8,"impl":"textbook"},`
	for _, tc := range []struct{ name, arg, want string }{
		{"no file", "", "usage: scripts/paper003_mesh.py RECORDS.jsonl"},
		{"missing", filepath.Join(dir, "none.jsonl"), "none.jsonl': missing"},
		{"FIFO", fifo, "fifo.jsonl': not a regular file"},
		{"not JSON", write("junk.jsonl", "junk\n"), "junk.jsonl line 1: not a commcost aggregate record"},
		{"NaN median", write("nan.jsonl", agg+`"median":NaN,"ci95":[1e-6,2e-6]}`+"\n"), "nan.jsonl line 1: median nan"},
		{"median below 1 ps", write("tiny.jsonl", agg+`"median":1e-300,"ci95":[1e-300,1e-300]}`+"\n"), "tiny.jsonl line 1: median 1e-300 with ci95 [1e-300, 1e-300]: want times from 1e-12 to 1e+09 s"},
		{"bytes a string", write("strbytes.jsonl", strings.Replace(agg, `"bytes":8`, `"bytes":"8"`, 1)+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), `strbytes.jsonl line 1: params.bytes "8": want an integer from 0 to 2147483647 bytes`},
		{"negative bytes", write("negbytes.jsonl", strings.Replace(agg, `"bytes":8`, `"bytes":-8`, 1)+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "negbytes.jsonl line 1: params.bytes -8: want an integer from 0 to 2147483647 bytes"},
		{"ranks beyond the bound", write("ranks.jsonl", strings.Replace(agg, `"ranks":4`, `"ranks":1e9`, 1)+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "ranks.jsonl line 1: ranks 1000000000.0: want an integer from 1 to 16777216 ranks"},
		{"median a string", write("strmedian.jsonl", agg+`"median":"1e-6","ci95":[1e-6,1e-6]}`+"\n"), "strmedian.jsonl line 1: not a commcost aggregate record (TypeError"},
		{"one size, no fit", write("one.jsonl", agg+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "one.jsonl: the textbook records cannot separate t_s from t_w"},
		{"qshift without q", write("noq.jsonl", strings.Replace(strings.Replace(agg, "bcast", "qshift", 1), "textbook", "mesh1d", 1)+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "no records of the table's operations"},
		{"no aggregate records", write("pp.jsonl", `{"bench":"pingpong"}`+"\n"), "pp.jsonl: no aggregate records"},
		{"negative fit", write("neg.jsonl", strings.Replace(agg, `"bytes":8`, `"bytes":1000`, 1)+`"median":1e-7,"ci95":[9e-8,1.1e-7]}`+"\n"+
			strings.Replace(agg, `"bytes":8`, `"bytes":2000`, 1)+`"median":1e-6,"ci95":[9e-7,1.1e-6]}`+"\n"+
			strings.Replace(agg, `"bytes":8`, `"bytes":4000`, 1)+`"median":3e-6,"ci95":[2.7e-6,3.3e-6]}`+"\n"), "neg.jsonl: the textbook records fit t_s = -0.417 us, t_w = 0.467 ns/B to the hypercube column: a negative parameter"},
		{"duplicated record", write("dup.jsonl", agg+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"+strings.Replace(agg, `"bytes":8`, `"bytes":64`, 1)+`"median":2e-6,"ci95":[2e-6,2e-6]}`+"\n"+agg+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "dup.jsonl lines 1 and 3: the same record twice"},
		{"no table operation", write("reduce.jsonl", strings.Replace(agg, "bcast", "reduce", 1)+`"median":1e-6,"ci95":[1e-6,1e-6]}`+"\n"), "no records of the table's operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"scripts/paper003_mesh.py"}
			if tc.arg != "" {
				args = append(args, tc.arg)
			}
			cmd := exec.Command("python3", args...)
			cmd.Dir = ".."
			var stderr strings.Builder
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("blocked")
			}
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			oneMessage(t, stderr.String(), "paper003_mesh.py: ", tc.want)
		})
	}
	out, err := exec.Command("python3", "../scripts/paper003_mesh.py", "--help").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "paper003_mesh.py:") {
		t.Errorf("--help: %v\n%s", err, out)
	}
}
