package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/job"
)

// One message, once, that names the real problem.

// messageCases are bad inputs whose one-line message must name the cause;
// every one goes through checkUsageError (exit 2, one message, nothing
// written) and must fit on one line with no usage text after it.
var messageCases = []struct {
	name string
	args []string
	want string
}{
	// A flag error is one line pointing to -h, not the flag list.
	{"unknown flag", []string{"pingpong", "--bogus"}, "--bogus: no such flag (run 'commcost pingpong -h' for the flags)"},
	{"flag without value", []string{"kkaccess", "--k"}, "--k: needs a value"},
	{"integer flag not a number", []string{"pingpong", "--iters", "abc"}, "--iters abc: want an integer"},
	{"float flag not a number", []string{"pingpong", "--max-time", "soon"}, "--max-time soon: want a number"},
	{"bool flag", []string{"pingpong", "--validate=maybe"}, "--validate maybe: want true or false"},
	{"integer out of range", []string{"pingpong", "--iters", "99999999999999999999"}, "out of range"},
	{"unknown flag of a group's subcommand", []string{"emulate", "kk", "--nett", "SE(2)"}, "--nett: no such flag (run 'commcost emulate kk -h'"},
	// A run is never cut short: one longer than --max-time plus --timeout
	// at the least is refused before the calibration.
	{"a multigrid run past its budget", []string{"app", "multigrid", "--backend", "local", "--np", "2", "--n", "63", "--cycles", "1000000", "--max-time", "0.1", "--timeout", "5"},
		"--cycles 1000000 --iterations 10 --n 63: one run of multigrid on 2 ranks takes at least 119 s (its first run computes the serial oracle), more than --max-time 0.1 s plus --timeout 5 s; lower --cycles, --iterations or --n, or raise --timeout"},
	{"a multigrid run past its budget through --iterations", []string{"app", "multigrid", "--backend", "local", "--np", "3", "--n", "255", "--iterations", "1000000", "--timeout", "30"},
		"--cycles 1 --iterations 1000000 --n 255: one run of multigrid on 3 ranks takes at least 260 s"},
	// kaccess's -h is its hot-spot fraction: its messages point to --help.
	{"unknown flag where -h is a flag", []string{"kaccess", "--bogus"}, "--bogus: no such flag (run 'commcost kaccess --help' for the flags)"},
	{"an argument where -h is a flag", []string{"kaccess", "extra"}, "unexpected argument \"extra\" (flags only: commcost kaccess --help lists them)"},
	// Duplicates are refused the same way in every list flag.
	{"sizes repeated", []string{"pingpong", "--sizes", "1K,1024"}, "--sizes 1K,1024: 1024 is listed twice"},
	{"k repeated", []string{"kkaccess", "--k", "1,2,2"}, "--k 1,2,2: 2 is listed twice"},
	{"k repeated through a range", []string{"kkaccess", "--k", "4,1:8"}, "4 is listed twice"},
	{"r repeated", []string{"kkaccess", "--r", "0.5,1,0.50"}, "--r 0.5,1,0.50: 0.5 is listed twice"},
	{"op repeated", []string{"kkaccess", "--op", "read,read"}, "read is listed twice"},
	{"block with distinct", []string{"kkaccess", "--block", "--distinct"}, "--block and --distinct exclude each other"},
	{"h repeated", []string{"kaccess", "--h", "0.5,.5"}, "0.5 is listed twice"},
	{"delay repeated", []string{"prtt", "--delay", "auto,auto"}, "auto is listed twice"},
	{"delay with n 1 only", []string{"prtt", "--n", "1", "--delay", "0.001"}, "--delay with --n: it is read only by exchanges of n > 1 messages, and --n gives only n = 1"},
	{"server with n 1 only", []string{"prtt", "--n", "1", "--server=false"}, "--server with --n: it is read only by exchanges of n > 1 messages"},
	{"ops repeated", []string{"aggregate", "--ops", "bcast,bcast"}, "bcast is listed twice"},
	{"n repeated", []string{"sched", "count", "--n", "4,4"}, "--n 4,4: 4 is listed twice"},
	{"strategies repeated", []string{"dsm", "check", "--strategies", "fixed-home,fixed-home"}, "fixed-home is listed twice"},
	{"emulate op repeated", []string{"emulate", "kk", "--net", "SE(2)", "--op", "write,write"}, "write is listed twice"},
	{"versions repeated", []string{"emulate", "split", "--net", "SE(2)", "--versions", "1,1"}, "1 is listed twice"},
	// An empty list is an error, not the default.
	{"empty sizes", []string{"pingpong", "--sizes", ""}, `--sizes "": empty list`},
	{"empty k", []string{"kkaccess", "--k="}, `--k "": empty list`},
	{"empty ranks", []string{"alltoall", "--ranks="}, `--ranks "": empty list`},
	{"empty pairs", []string{"pairwise", "--pairs="}, `--pairs "": empty list`},
	{"empty item", []string{"kkaccess", "--l", "64,,1K"}, "--l 64,,1K: empty item"},
	{"empty optimize k", []string{"optimize", "--D", "4K", "--k="}, `--k "": empty list`},
	// Negative counts must be positive, not "not a size".
	{"negative k", []string{"kkaccess", "--k", "-1"}, "--k -1: k = -1: must be positive"},
	{"zero k", []string{"kkaccess", "--k", "0,1"}, "--k 0,1: k = 0: must be positive"},
	{"negative l", []string{"kkaccess", "--l", "-5"}, "--l -5: l = -5: must not be negative"},
	{"negative size", []string{"pingpong", "--sizes", "-5"}, "-5 is negative"},
	{"negative iters", []string{"pingpong", "--iters", "-5"}, "--iters -5: must be positive"},
	{"negative count", []string{"permutations", "--count", "-3"}, "--count -3: count = -3: must be positive"},
	{"negative slots", []string{"dsm", "check", "--slots", "-1"}, "--slots -1: must be positive"},
	{"negative window", []string{"bandwidth", "--window", "-64"}, "--window -64: window = -64: must be positive"},
	// A record holds at most results.MaxRecordElements samples.
	{"max-reps beyond a record's samples", []string{"pingpong", "--max-reps", "1048577"}, "--max-reps 1048577: must be at most 1048576, the most repetitions a record holds"},
	{"min-reps beyond a record's samples, max-reps left at its default", []string{"pingpong", "--min-reps", "2000000"}, "--min-reps 2000000: must be at most 1048576, the most repetitions a record holds"},
	{"min-reps above the default max-reps", []string{"pingpong", "--min-reps", "2000"}, "--min-reps with --max-reps: the fewest repetitions, 2000, are more than the most, 1000: raise --max-reps or lower --min-reps"},
	{"max-reps below the default min-reps", []string{"pingpong", "--max-reps", "5"}, "--min-reps with --max-reps: the fewest repetitions, 10, are more than the most, 5: raise --max-reps or lower --min-reps"},
	{"count beyond a record's samples", []string{"permutations", "--count", "1048577"}, "--count 1048577: count = 1048577: must be an integer from 1 to 1048576"},
	// Every count of repetitions has the same bound (patterns.MaxCount):
	// each one is progress, so the watchdog would never end 1e12 of them.
	{"dsm reps beyond the bound", []string{"dsm", "bitonic", "--backend", "local", "--np", "4", "--reps", "1000000000000"}, "--reps 1000000000000: must be at most 1048576 repetitions"},
	{"dsm bitonic max-time not positive", []string{"dsm", "bitonic", "--backend", "local", "--np", "4", "--max-time", "0"}, "--max-time 0: must be a positive number of seconds"},
	{"dsm matsquare max-time not a number", []string{"dsm", "matsquare", "--backend", "local", "--np", "4", "--max-time", "NaN"}, "--max-time NaN: must be a positive number of seconds"},
	{"dsm barneshut max-time beyond the bound", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--max-time", "1e10"}, "--max-time 1e10: must be a positive number of seconds"},
	{"dsm matsquare reps beyond the bound", []string{"dsm", "matsquare", "--backend", "local", "--np", "4", "--reps", "1048577"}, "--reps 1048577: must be at most 1048576 repetitions"},
	{"dsm warmup beyond the bound", []string{"dsm", "bitonic", "--backend", "local", "--np", "4", "--warmup", "1000000000000"}, "--warmup 1000000000000: must be at most 1048576 untimed runs"},
	{"dsm batches beyond the bound", []string{"dsm", "overhead", "--backend", "local", "--np", "4", "--batches", "1000000000000"}, "--batches 1000000000000: must be at most 1048576 batches"},
	{"dsm bitonic np beside meshes", []string{"dsm", "bitonic", "--backend", "local", "--meshes", "2x2", "--np", "8"}, "--meshes with --np: the local backend runs each world of --meshes on its mesh's ranks (2x2 has 4, not 8): leave out --np"},
	{"dsm matsquare np beside meshes", []string{"dsm", "matsquare", "--backend", "local", "--meshes", "2x2", "--np", "8"}, "--meshes with --np: the local backend runs each world of --meshes on its mesh's ranks (2x2 has 4, not 8)"},
	{"dsm barneshut np beside two meshes", []string{"dsm", "barneshut", "--backend", "local", "--meshes", "2x2,4x4", "--np", "4"}, "--meshes with --np: the local backend runs each world of --meshes on its mesh's ranks (4x4 has 16, not 4)"},
	{"dsm barneshut dt zero", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--dt", "0"}, "--dt 0: must be in (0, 1] model time units"},
	{"dsm barneshut dt negative", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--dt", "-0.1"}, "--dt -0.1: must be in (0, 1] model time units"},
	{"dsm barneshut dt NaN", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--dt", "NaN"}, "--dt NaN: must be in (0, 1]"},
	{"dsm barneshut dt beyond a dynamical time", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--dt", "100"}, "--dt 100: must be in (0, 1]"},
	{"dsm barneshut eps zero", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--eps", "0"}, "--eps 0: must be in (0, 1] model length units"},
	{"dsm barneshut eps infinite", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--eps", "Inf"}, "--eps Inf: must be in (0, 1]"},
	{"dsm barneshut eps beyond the model", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--eps", "1e300"}, "--eps 1e300: must be in (0, 1]"},
	{"dsm barneshut cells per body beyond the bound", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--cells-per-body", "1e4"}, "--cells-per-body 1e4: must be a number in (0, 1024], e.g. 2"},
	{"dsm barneshut cells per body NaN", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--cells-per-body", "NaN"}, "--cells-per-body NaN: must be a number in (0, 1024]"},
	{"dsm steps beyond the bound", []string{"dsm", "barneshut", "--backend", "local", "--np", "4", "--steps", "1000000000000"}, "--steps 1000000000000: must be at most 1048576 time steps"},
	{"app warmup beyond the bound", []string{"app", "gauss", "--backend", "local", "--np", "2", "--n", "64", "--warmup", "1000000000000"}, "--warmup 1000000000000: must be at most 1048576 warm-up repetitions"},
	{"emulate warmup beyond the bound", []string{"emulate", "kk", "--net", "SE(1)", "--np", "4", "--backend", "local", "--warmup", "1000000000000"}, "--warmup 1000000000000: must be at most 1048576 warm-up repetitions"},
	{"sched warmup beyond the bound", []string{"sched", "comm", "--backend", "local", "--np", "2", "--warmup", "1000000000000"}, "--warmup 1000000000000: must be at most 1048576 warm-up repetitions"},
	{"pattern warmup beyond the bound", []string{"collective", "--backend", "local", "--np", "2", "--warmup", "1048577"}, "--warmup 1048577: must be at most 1048576 warm-up repetitions"},
	{"multigrid cycles beyond the bound", []string{"app", "multigrid", "--backend", "local", "--np", "2", "--cycles", "1000000000000"}, "--cycles 1000000000000: must be at most 1048576 V-cycles per iteration"},
	{"multigrid iterations beyond the bound", []string{"app", "multigrid", "--backend", "local", "--np", "2", "--iterations", "1000000000000"}, "--iterations 1000000000000: must be at most 1048576 iterations"},
	// The store list names the networks, which register after the family.
	{"store list names the networks", []string{"app", "samplesort", "--backend", "local", "--np", "2", "--store", "bogus"}, "emulate:NET (NET one of SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC), the only store of a run)"},
	// A spelling a store family owns is refused with that family's forms
	// alone, not with every store's after them.
	{"store of an unknown network", []string{"app", "matmul", "--backend", "local", "--np", "2", "--store", "emulate:bogus"}, `--store emulate:bogus: topology "bogus": unknown network "bogus"; accepted: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)` + "\n"},
	{"store of an unsupported tree", []string{"app", "samplesort", "--backend", "local", "--np", "2", "--store", "direct,tree-3"}, `--store direct,tree-3: tree degree "3" is not supported: accepted are 2, 4, 16 (l-ary) and L-K with L in {2,4} and K >= L (l-k-ary, e.g. 2-4, 4-16)` + "\n"},
	// An order left at its default that the rank count does not divide
	// names --np, all the user gave; a given --n is named itself.
	{"checkerboard default n on 3 ranks", []string{"app", "checkerboard", "--backend", "local", "--np", "3"}, "--np 3: the default --n 128 is not divisible by checkerboard's 1x3 grid; give --n a multiple of 3 or another number of ranks"},
	{"matmul default n on 3 ranks", []string{"app", "matmul", "--backend", "local", "--np", "3"}, "--np 3: the default --n 256 is not divisible by matmul's 3 ranks; give --n a multiple of 3 or another number of ranks"},
	{"gauss default n on 3 ranks", []string{"app", "gauss", "--backend", "local", "--np", "3"}, "--np 3: the default --n 128 is not divisible by gauss's 3 ranks"},
	{"cannon default n on 9 ranks", []string{"app", "cannon", "--backend", "local", "--np", "9"}, "--np 9: the default --n 128 is not divisible by cannon's 3x3 grid; give --n a multiple of 3"},
	{"checkerboard default n on a given grid", []string{"app", "checkerboard", "--backend", "local", "--np", "6", "--grid", "2x3"}, "--grid 2x3: the default --n 128 is not divisible by checkerboard's 2x3 grid; give --n a multiple of 6 or another grid"},
	{"checkerboard given n", []string{"app", "checkerboard", "--backend", "local", "--np", "3", "--n", "100"}, "--n 100: not divisible by the 1x3 grid (n must be a multiple of both 1 and 3)"},
	// Sizes in the flag's units.
	{"size too large", []string{"pingpong", "--sizes", "3G"}, "3G is more than 2147483647 bytes (2G less 1)"},
	// A list of ints is bounded in the flag's terms: k is packets, not bytes.
	{"app k too large", []string{"app", "matmul", "--k", "1000000000000"}, "--k 1000000000000: --k (send hot spots k (packets in flight per rank)) is at most 2147483647 (2G less 1): 1000000000000 is more"},
	{"app cal-k too large", []string{"app", "matmul", "--cal-k", "1,2,99999999999"}, "--cal-k (calibration sweep (without --model): send hot spots k) is at most 2147483647 (2G less 1): 99999999999 is more"},
	{"kkaccess k range too large", []string{"kkaccess", "--k", "1:3G"}, "a range of --k (send hot spots k (packets per accessing rank)) ends at most at 2147483647 (2G less 1)"},
	// A number of seconds has both its bounds: 1e300 is positive.
	{"app cal-max-time beyond a duration", []string{"app", "gauss", "--cal-max-time", "1e300"}, "--cal-max-time 1e300: must be a positive number of seconds, at most 1e+09 (about 32 years)"},
	{"store app cal-max-time beyond a duration", []string{"app", "matmul", "--cal-max-time", "1e300"}, "--cal-max-time 1e300: must be a positive number of seconds, at most 1e+09"},
	{"max-time beyond a duration", []string{"pingpong", "--max-time", "1e300"}, "--max-time 1e300: must be a positive number of seconds, at most 1e+09"},
	{"max-time infinite", []string{"kkaccess", "--max-time", "inf"}, "--max-time inf: must be a positive number of seconds, at most 1e+09"},
	// A number is echoed as given, not reformatted.
	{"stall echoed as given", []string{"emulate", "kk", "--net", "HC(2)", "--np", "8", "--backend", "local", "--stall", "9.3e9"}, "--stall 9.3e9: must be a positive number of seconds, at most 1e+09"},
	{"cal-max-time echoed as given", []string{"app", "gauss", "--cal-max-time", "1000000001"}, "--cal-max-time 1000000001: must be a positive number of seconds"},
	// Network names echoed whole, and half a name refused.
	{"net unclosed", []string{"emulate", "info", "--net", "BF(2"}, `--net BF(2: topology "BF(2"`},
	{"net unopened", []string{"emulate", "info", "--net", "BF2)"}, `topology "BF2)"`},
	{"net unknown", []string{"emulate", "info", "--net", "butterfly-ish(2)"}, `topology "butterfly-ish(2)"`},
	// Binary input is escaped.
	{"binary net", []string{"emulate", "info", "--net", "B\x01F\xff(2)"}, `--net B\x01F\xff(2)`},
	{"binary flag value", []string{"pingpong", "--iters", "\x1b[2J"}, `--iters \x1b[2J: want an integer`},
	// A flag given that none of the selected operations reads is refused,
	// naming the ops selected and those that read it, not ignored.
	{"collective root without a rooted op", []string{"collective", "--ops", "allreduce", "--root", "7"},
		"--root with --ops: none of the ops selected (allreduce) reads it; it is read by bcast, reduce, gather, gatherv, scatter and scatterv only"},
	{"collective type without a reduction", []string{"collective", "--ops", "bcast,alltoall", "--type", "double"},
		"--type with --ops: none of the ops selected (bcast,alltoall) reads it; it is read by reduce, allreduce, reduce_scatter_block and reduce_scatter only"},
	{"collective reduction without a reduction", []string{"collective", "--ops", "barrier", "--reduction", "max"}, "--reduction with --ops: none of the ops selected (barrier) reads it"},
	{"nonblocking reduction without a reduction", []string{"nonblocking", "--ops", "bcast", "--reduction", "sum"},
		"--reduction with --ops: none of the ops selected (bcast) reads it; it is read by reduce and allreduce only"},
	{"nonblocking root without a rooted op", []string{"nonblocking", "--ops", "alltoall", "--root", "0"}, "--root with --ops: none of the ops selected (alltoall) reads it"},
	{"onesided type without a typed call", []string{"onesided", "--ops", "put", "--type", "double"},
		"--type with --ops: none of the ops selected (put) reads it; it is read by acc, get_acc, fop and cas only"},
	{"onesided window without a window loop", []string{"onesided", "--ops", "put", "--modes", "lat", "--window", "8"},
		"--window with --modes: none of the modes selected (lat) reads it; it is read by bw and bibw only"},
	{"aggregate q without qshift", []string{"aggregate", "--ops", "bcast", "--q", "2"}, "--q with --ops: none of the ops selected (bcast) reads it; it is read by qshift only"},
	{"aggregate root without a rooted op", []string{"aggregate", "--ops", "alltoall", "--root", "1"}, "--root with --ops: none of the ops selected (alltoall) reads it; it is read by bcast and scatter only"},
	// The check-only mode refuses as a run would, before measuring.
	{"check-flags of a bad kkaccess flag", []string{"--check-flags", "kkaccess", "--k", "0"}, "--k 0: k = 0: must be positive"},
	{"check-flags of an unknown kkaccess flag", []string{"--check-flags", "kkaccess", "--sizes", "8"}, "--sizes: no such flag (run 'commcost kkaccess -h' for the flags)"},
	{"check-flags of a command without the mode", []string{"--check-flags", "predict", "m.json"}, "--check-flags predict: predict has no check-only mode; accepted: aggregate, "},
	{"check-flags without a command", []string{"--check-flags"}, "--check-flags needs a subcommand and its flags"},
	{"check-flags of an unknown command", []string{"--check-flags", "nope"}, "--check-flags nope: unknown subcommand"},
	{"aggregate grid without news", []string{"aggregate", "--ops", "qshift", "--grid", "2x2"}, "--grid with --ops: none of the ops selected (qshift) reads it; it is read by news only"},
}

func TestOneMessage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range messageCases {
		t.Run(tc.name, func(t *testing.T) {
			checkUsageError(t, dir, tc.args, tc.want)
			_, _, errs := runCLI(t, tc.args...)
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 {
				t.Errorf("message spans %d lines, want one:\n%s", n+1, errs)
			}
			for _, c := range errs {
				if c < ' ' && c != '\n' {
					t.Errorf("control character %q echoed raw: %q", c, errs)
				}
			}
		})
	}
}

// TestStoreAcceptedOnce: every refused --store value says what is
// accepted at most once, whichever family's spelling it is.
func TestStoreAcceptedOnce(t *testing.T) {
	for _, store := range []string{"bogus", "direct,bogus", "emulate:bogus", "emulate:BF(2", "emulate:BF(x)", "tree-3", "tree-9-4"} {
		t.Run(store, func(t *testing.T) {
			code, _, errs := runCLI(t, "app", "matmul", "--backend", "local", "--np", "2", "--store", store)
			if code != 2 || strings.Count(errs, "accepted") > 1 || !strings.Contains(errs, "--store "+store+": ") {
				t.Errorf("exit %d, want 2 and one message naming --store %s and what is accepted once: %q", code, store, errs)
			}
		})
	}
}

// TestHelpStillPrintsUsage: -h prints the flags and exits 0, also where a
// flag is named h (kaccess's hot spots, set by --h N) and -h or --h comes
// with no value; a flag error does not print them.
func TestHelpStillPrintsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pingpong", "-h"}, "-sizes"},
		{[]string{"kaccess", "-h"}, "receive hot spots h"},
		{[]string{"kaccess", "--h"}, "receive hot spots h"},
		{[]string{"kaccess", "-h", "--k", "2"}, "receive hot spots h"},
		{[]string{"emulate", "kaccess", "-h"}, "receive hot spots h"},
		{[]string{"emulate", "kaccess", "--net", "BF(2)", "--h"}, "receive hot spots h"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		usage := "usage: commcost " + tc.args[0]
		if tc.args[0] == "emulate" {
			usage += " " + tc.args[1]
		}
		if code != 0 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, usage) {
			t.Errorf("%v: exit %d, stderr:\n%s", tc.args, code, errs)
		}
	}
	_, _, errs := runCLI(t, "pingpong", "--bogus")
	if strings.Contains(errs, "usage:") || strings.Contains(errs, "-sizes") {
		t.Errorf("a flag error printed the usage:\n%s", errs)
	}
}

// TestMessageOncePerLaunch: under a launcher (its rank variables set, as
// mpirun and srun set them before MPI starts), bad input found before MPI
// is said by rank 0 at once; another rank says it only after
// job.UsageGrace, by when rank 0's exit has ended the launch (here no
// launcher ends it); every rank exits 2.
func TestMessageOncePerLaunch(t *testing.T) {
	saved := job.UsageGrace
	t.Cleanup(func() { job.UsageGrace = saved })
	job.UsageGrace = 300 * time.Millisecond
	for _, env := range [][2]string{{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}} {
		for rank := range 4 {
			t.Run(env[0]+"="+string(rune('0'+rank)), func(t *testing.T) {
				t.Setenv(env[0], string(rune('0'+rank)))
				t.Setenv(env[1], "4")
				start := time.Now()
				code, out, errs := runCLI(t, "pingpong", "--sizes", "8,8")
				took := time.Since(start)
				if code != 2 || out != "" {
					t.Fatalf("exit %d, stdout %q", code, out)
				}
				if got := strings.Count(errs, "commcost:"); got != 1 {
					t.Errorf("rank %d printed %d messages, want 1: %q", rank, got, errs)
				}
				if waited := took >= job.UsageGrace; waited != (rank > 0) {
					t.Errorf("rank %d said it after %v; want after the grace of %v only on ranks other than 0", rank, took, job.UsageGrace)
				}
			})
		}
	}
}

// TestLocalBackendUnderLauncher: --backend local started by mpirun or srun
// with more than one process is refused (each process would run the
// whole local world), with one message.
func TestLocalBackendUnderLauncher(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	t.Setenv("OMPI_COMM_WORLD_RANK", "0")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	checkUsageError(t, dir, []string{"pingpong", "--backend", "local", "--sizes", "8", "--out", out}, "--backend local: the local backend runs all its ranks in one process, but the launcher started 2 processes")
	checkUsageError(t, dir, []string{"info", "--backend", "local"}, "--backend local")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	if code, _, errs := runCLI(t, "info", "--backend", "local", "--np", "2"); code != 0 {
		t.Errorf("one process under a launcher: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written", out)
	}
}

// TestFitNamesTheModel: a derived kind's refusal names the kind asked for,
// not the one it is reduced from.
func TestFitNamesTheModel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pp.jsonl")
	if code, _, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8", "--iters", "5", "--min-reps", "3", "--max-reps", "3", "--out", path, "--format", "csv"); code != 0 {
		t.Fatalf("pingpong: %s", errs)
	}
	for _, kind := range []string{"loggp", "logp", "postal"} {
		checkUsageError(t, dir, []string{"fit", kind, path}, "no records: "+kind+" needs prtt records")
	}
}

// TestRanksBeforeRanges: when a pattern is given too few ranks and also a
// range that exceeds them, the message names the rank count, the cause,
// not the range that follows from it.
func TestRanksBeforeRanges(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		args      []string
		want, not string
	}{
		{"kkaccess k beyond one rank", []string{"kkaccess", "--backend", "local", "--np", "1", "--k", "8"}, "kkaccess needs at least 2 ranks, got 1", "--k"},
		{"alltoall ranks beyond one rank", []string{"alltoall", "--backend", "local", "--np", "1", "--ranks", "8"}, "alltoall needs at least 2 ranks, got 1", "--ranks"},
		{"pairwise pairs beyond one rank", []string{"pairwise", "--backend", "local", "--np", "1", "--pairs", "8"}, "pairwise needs an even number of ranks, got 1", "--pairs"},
		{"pairwise pairs beyond three ranks", []string{"pairwise", "--backend", "local", "--np", "3", "--pairs", "8"}, "pairwise needs an even number of ranks, got 3", "--pairs"},
		{"pingpong three ranks", []string{"pingpong", "--backend", "local", "--np", "3", "--sizes", "8"}, "pingpong needs exactly 2 ranks, got 3", "--sizes"},
		{"prtt one rank", []string{"prtt", "--backend", "local", "--np", "1", "--n", "4"}, "prtt needs at least 2 ranks, got 1", "--n"},
		{"permutations one rank", []string{"permutations", "--backend", "local", "--np", "1", "--count", "3"}, "permutations need at least 2 ranks, got 1", "--count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkUsageError(t, dir, tc.args, tc.want)
			if _, _, errs := runCLI(t, tc.args...); strings.Contains(errs, tc.not) {
				t.Errorf("message names %s, not the rank count first: %s", tc.not, errs)
			}
		})
	}
}

// TestRefusesSmallAddressLimit: under an address-space limit the Go
// runtime and the MPI library cannot start in, the binary refuses it
// before the runtime starts (one message, exit 2), not with a runtime
// stack dump; at the advised limit it runs.
func TestRefusesSmallAddressLimit(t *testing.T) {
	bin := commcostBinary(t)
	for _, tc := range []struct {
		kb   int
		code int
	}{{1000000, 2}, {2000000, 2}, {2200000, 0}} {
		r := runCmd(t, exec.Command("sh", "-c", fmt.Sprintf("ulimit -v %d && exec %s help", tc.kb, bin)))
		want := fmt.Sprintf("commcost: the address-space limit (ulimit -v) of %d kB is below the 2097152 kB the Go runtime and the MPI library need to start", tc.kb)
		if r.code != tc.code || (tc.code == 2 && (!strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1)) {
			t.Errorf("ulimit -v %d: exit %d, stderr %q; want %d and one line %q...", tc.kb, r.code, r.stderr, tc.code, want)
		}
	}
}
