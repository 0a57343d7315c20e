package main

import (
	"path/filepath"
	"testing"

	"github.com/commcost/commcost/job"
)

// Ask for what the machine has before allocating, and
// refuse counts that cannot finish in the time budget. The machine is
// made small (job.AvailableMemory) so that the refusals are tested without
// allocating anything large; every case must exit 2 with one message
// naming the flag, the need and what is available, and write nothing.
func TestAskBeforeAllocating(t *testing.T) {
	const gib = 1 << 30
	defer func(f func() (int64, string, bool)) { job.AvailableMemory = f }(job.AvailableMemory)
	job.AvailableMemory = func() (int64, string, bool) { return gib, "a test's 1 GiB", true }
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	local := []string{"--backend", "local", "--out", out}
	with := func(args ...string) []string { return append(args, local...) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		// memory
		{"pingpong of 1 GiB", with("pingpong", "--sizes", "8,1G"), "--sizes 8,1G: pingpong bytes=1073741824 iters=100 needs 3.0 GiB per rank (buffers 2.0 GiB, messages in flight 1.0 GiB), 6.0 GiB for the 2 local ranks (--np 2) in this process; available: 1.0 GiB"},
		{"bandwidth window in flight", with("bandwidth", "--sizes", "64M"), "--sizes 64M: bandwidth bytes=67108864"},
		{"bandwidth names what is available", with("bandwidth", "--sizes", "64M"), "available: 1.0 GiB (a test's 1 GiB)"},
		{"kkaccess large packets", with("kkaccess", "--np", "4", "--k", "8", "--l", "512M", "--r", "1"), "--l 512M: kkaccess k=8 l=536870912"},
		{"alltoall of many ranks", with("alltoall", "--np", "16", "--sizes", "16M"), "--sizes 16M: alltoall bytes=16777216 needs"},
		{"aggregate scatter", with("aggregate", "--np", "8", "--ops", "scatter", "--impl", "mpi", "--sizes", "64M"), "--sizes 64M: aggregate bytes=67108864"},
		{"permutations", with("permutations", "--np", "4", "--sizes", "512M"), "--sizes 512M: permutations bytes=536870912"},
		{"dsm check ops", with("dsm", "check", "--np", "2", "--ops", "1000000000000"), "--ops 1000000000000: dsm check's log of 1000000000000 operations"},
		{"dsm check slots", with("dsm", "check", "--np", "4", "--slots", "100000000"), "--slots 100000000: dsm check's 16 variables"},
		{"dsm bitonic keys", with("dsm", "bitonic", "--np", "16", "--keys", "4194304"), "--keys 4194304 with --np 16: bitonic's blocks of 4194304 keys on each of the local backend's 16 ranks (about 112.2 MiB each) needs about 1.8 GiB in this process; available: 1.0 GiB"},
		{"dsm barneshut bodies per rank", with("dsm", "barneshut", "--np", "4", "--bodies-per-rank", "10000000"), "--bodies-per-rank 10000000 with --np 4: barneshut's 40000000 bodies on 4 ranks"},
		// An app's calibration sweep reaches twice its largest message.
		{"app cannon's calibration", with("app", "cannon", "--np", "4", "--n", "3662"), "--n 3662: the calibration's prtt bytes=67108864 delay_s=0 n=4 side=client on 4 ranks needs 320.2 MiB per rank (buffers 64.0 MiB, messages in flight 256.0 MiB), 1.3 GiB for the 4 local ranks (--np 4) in this process; available: 1.0 GiB"},
		{"app checkerboard's calibration", with("app", "checkerboard", "--np", "4", "--n", "3418"), "--n 3418: the calibration's prtt bytes=67108864"},
		// Paper 000's programs: their arrays and the store's copies of
		// their variables, before the calibration runs.
		{"app matmul's submatrices", with("app", "matmul", "--np", "4", "--n", "46340", "--sync", "false"), "--n 46340: matmul's submatrices of 11585 x 46340 on 4 ranks (A, B, C and the oracle's C), with the store variables of all 4 configurations on store direct needs"},
		{"app concomp over divalib", with("app", "concomp", "--np", "4", "--n", "65536", "--k", "4", "--l", "1K", "--store", "fixed-home"), "--n 65536: concomp's 65536-vertex graph on 4 ranks (adjacency rows, search lists, forests, rank 0's oracle) on store fixed-home needs"},
		{"app multigrid at the integers' end", with("app", "multigrid", "--np", "2", "--n", "9223372036854775807"), "needs 9.44e+21 EiB per rank (buffers 8.85e+21 EiB, messages in flight 5.9e+20 EiB), 1.89e+22 EiB for the 2 local ranks"},
		{"sched count n", []string{"sched", "count", "--n", "65536", "--d", "65535", "--out", out}, "--n 65536: scheduling a matrix of n = 65536 ranks and 4294901760 messages (its copies and the schedulers' n x n arrays) needs about"},
		// sched comm names --sizes as typed, as pingpong does.
		{"sched comm sizes 1G", with("sched", "comm", "--np", "4", "--d", "3", "--sizes", "1G"), "--sizes 1G: the exchange of d = 3 messages of 1073741824 bytes per rank needs"},
		{"sched comm sizes 8,512M", with("sched", "comm", "--np", "4", "--d", "3", "--sizes", "8,512M"), "--sizes 8,512M: the exchange of d = 3 messages of 536870912 bytes per rank needs"},
		// counts beyond the time budget
		{"iters", with("pingpong", "--sizes", "8", "--iters", "1000000000"), "pingpong bytes=8 iters=1000000000: one repetition needs at least 40.2 s"},
		{"iters names the flag", with("pingpong", "--sizes", "8", "--iters", "1000000000"), "lower --iters or raise --max-time"},
		// A need beyond any --max-time names only what can be lowered.
		{"delay beyond any budget", with("prtt", "--delay", "1e8", "--max-time", "1e9"), "more than the time budget of 1e+09 s per point; lower --iters, --n or --delay\n"},
		{"warmup", with("pingpong", "--sizes", "8", "--warmup", "2000000000"), "the warm-up needs at least 80.3 s (4000000000 messages per rank), more than the time budget of 10 s per point; lower --warmup"},
		{"window", with("bandwidth", "--sizes", "8", "--window", "1048576", "--iters", "100000"), "lower --iters or --window"},
		{"k", with("kkaccess", "--np", "4", "--k", "100000000", "--l", "8", "--r", "1"), "--k 100000000: must be at most 65535 (the send hot spot k of a run)"},
		{"kkaccess a", with("kkaccess", "--np", "4", "--k", "1", "--l", "32M", "--r", "1", "--a", "65535"), "lower --k or --a or raise --max-time"},
		{"a and k", with("kaccess", "--np", "4", "--a", "65535", "--k", "65535"), "lower --k or --a"},
		{"prtt delays", with("prtt", "--sizes", "8", "--n", "1000", "--delay", "1"), "(2.8 hours)"},
		{"alltoall iters", with("alltoall", "--np", "4", "--sizes", "8", "--iters", "1000000000"), "lower --iters"},
		{"aggregate iters", with("aggregate", "--np", "4", "--sizes", "8", "--iters", "1000000000"), "lower --iters"},
		{"permutations iters", with("permutations", "--np", "4", "--sizes", "8", "--iters", "1000000000"), "lower --iters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
	// The local backend's own ranks, on a machine of 100 MiB.
	job.AvailableMemory = func() (int64, string, bool) { return 100 << 20, "a test's 100 MiB", true }
	t.Run("local ranks", func(t *testing.T) {
		checkUsageError(t, dir, []string{"info", "--backend", "local", "--np", "4096"}, "--np 4096: the local backend's 4096 ranks (about 256.0 KiB each) needs about 1.0 GiB in this process; available: 100.0 MiB")
	})
	t.Run("dsm sweep of meshes", func(t *testing.T) {
		checkUsageError(t, dir, with("dsm", "barneshut", "--meshes", "2x2,32x32"), "--bodies 2000 with --meshes 2x2,32x32: barneshut's 2000 bodies on 1024 ranks (home and cached copies) on each of mesh 32x32's 1024 ranks")
	})
	// What fits runs.
	job.AvailableMemory = func() (int64, string, bool) { return gib, "a test's 1 GiB", true }
	t.Run("fits", func(t *testing.T) {
		code, _, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8,1M", "--iters", "2", "--min-reps", "3", "--max-reps", "3", "--format", "csv")
		if code != 0 {
			t.Errorf("exit %d: %s", code, errs)
		}
	})
}
