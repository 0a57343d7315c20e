package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The benchmarks of MPI's collectives and the other OSU 6.1 counterparts:
// golden output and records on goroutine ranks, bad input, and short runs
// under real mpirun with every result checked.

// collCase is one subcommand run of these benchmarks on goroutine ranks:
// its arguments, the bench and parameters of its records, their number and
// the derived values every record carries.
type collCase struct {
	name    string
	args    []string
	bench   string
	params  []string
	count   int
	derived []string
}

var collCases = []collCase{
	{"collective", []string{"collective", "--sizes", "8,1K", "--ops", "barrier,bcast,allreduce,alltoallv,reduce_scatter", "--root", "2"},
		patterns.BenchCollective, []string{"alg", "bytes", "iters", "op", "reduction", "root", "type"}, 9,
		[]string{patterns.DerivedOSUAvg, patterns.DerivedOSUMax, patterns.DerivedOSUMin}},
	{"collective_int", []string{"collective", "--sizes", "24", "--ops", "reduce,reduce_scatter_block", "--type", "int", "--reduction", "max", "--iters", "3"},
		patterns.BenchCollective, []string{"alg", "bytes", "iters", "op", "reduction", "root", "type"}, 2,
		[]string{patterns.DerivedOSUAvg, patterns.DerivedOSUMax, patterns.DerivedOSUMin}},
	{"mbwmr", []string{"mbwmr", "--sizes", "8,4K", "--window", "8"},
		patterns.BenchMultiBandwidth, []string{"bytes", "iters", "pairs", "window"}, 2,
		[]string{patterns.DerivedRate, patterns.DerivedOSUBw, patterns.DerivedOSURate, "rep_time_s"}},
	{"nonblocking", []string{"nonblocking", "--sizes", "8,1K", "--ops", "barrier,allreduce,alltoallv", "--probes", "2"},
		patterns.BenchNonBlocking, []string{"bytes", "op", "probes", "reduction", "root", "type"}, 5,
		[]string{patterns.DerivedComm, patterns.DerivedOSUComm, patterns.DerivedOSUCommMax, patterns.DerivedOSUCommMin,
			patterns.DerivedOSUCompute, patterns.DerivedOSUOverall, patterns.DerivedOSUOverlap, patterns.DerivedOSUTest, patterns.DerivedOverlap}},
	{"onesided", []string{"onesided", "--sizes", "8,1K", "--iters", "5", "--window", "4", "--type", "int"},
		patterns.BenchOneSided, []string{"bytes", "iters", "mode", "op", "sync", "type", "window"}, 16,
		[]string{"rep_time_s"}},
	{"reducelocal", []string{"reducelocal", "--sizes", "8,1K", "--iters", "5", "--type", "double"},
		patterns.BenchReduceLocal, []string{"bytes", "iters", "reduction", "type"}, 2, nil},
	{"multilat", []string{"multilat", "--sizes", "0,1K", "--iters", "4"},
		patterns.BenchMultiLatency, []string{"bytes", "iters", "pairs"}, 2,
		[]string{patterns.DerivedOSULatSec}},
}

// TestCollectivesGolden runs each case on 4 goroutine ranks with
// validation, checks the shape of the CSV against
// testdata/pattern_<name>.golden and the records: bench, exactly the
// parameters, ranks, backend, a time, OSU's figure.
func TestCollectivesGolden(t *testing.T) {
	for _, cc := range collCases {
		t.Run(cc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.jsonl")
			args := append(slices.Clone(cc.args), quickFlags...)
			if cc.bench == patterns.BenchOneSided {
				args = append(args, "--np", "2") // the last --np counts
			}
			args = append(args, "--out", out, "--format", "csv")
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			golden(t, "pattern_"+cc.name, shape(stdout))
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != cc.count {
				t.Fatalf("%d records, want %d", len(recs), cc.count)
			}
			for _, r := range recs {
				var keys, derived []string
				for k := range r.Params {
					keys = append(keys, k)
				}
				for k := range r.Derived {
					derived = append(derived, k)
				}
				sort.Strings(keys)
				sort.Strings(derived)
				unit, ranks := "s", 4
				if cc.bench == patterns.BenchMultiBandwidth || cc.bench == patterns.BenchOneSided && r.Params["mode"] != "lat" {
					unit = "B/s"
				}
				if cc.bench == patterns.BenchOneSided {
					ranks = 2
				}
				if r.Bench != cc.bench || !slices.Equal(keys, cc.params) || r.Unit != unit || r.Ranks != ranks || r.Meta.Backend != "local" {
					t.Errorf("record %s %v unit %q ranks %d backend %s", r.Bench, r.Params, r.Unit, r.Ranks, r.Meta.Backend)
				}
				if r.N != 3 || !(r.Median > 0) || !slices.Equal(derived, slices.Sorted(slices.Values(cc.derived))) && len(cc.derived)+len(derived) > 0 {
					t.Errorf("%v: n %d median %g derived %v", r.Params, r.N, r.Median, r.Derived)
				}
			}
		})
	}
}

// TestCollectivesBadInput: sizes that are not whole elements of a
// reduction, a root or pair count beyond the ranks, one rank, an unknown
// collective, --osu with a count it fixes, and buffers beyond memory exit 2
// with one message naming the flag, writing nothing.
func TestCollectivesBadInput(t *testing.T) {
	dir, out := badInputDir(t)
	local := func(np string, args ...string) []string {
		return append(args, "--backend", "local", "--np", np, "--out", out)
	}
	checkBadInputs(t, dir, []badInput{
		{"sizes not whole floats", local("4", "collective", "--ops", "allreduce", "--sizes", "6"), "--sizes 6: the reductions move whole 4-byte float elements"},
		{"sizes not whole doubles", local("4", "collective", "--ops", "reduce", "--type", "double", "--sizes", "12"), "--sizes 12"},
		{"root beyond ranks", local("3", "collective", "--ops", "bcast", "--root", "3"), "--root 3: more ranks asked for than exist (ranks are 0..2)"},
		{"one rank", local("1", "collective", "--ops", "allreduce"), "collective needs at least 2 ranks, got 1"},
		{"unknown collective", local("2", "collective", "--ops", "allreduce,alltoallw"), "--ops"},
		{"unknown type", local("2", "collective", "--type", "half"), "--type half"},
		{"osu with iters", local("2", "collective", "--osu", "--iters", "5"), "--iters"},
		{"buffers beyond memory", local("4", "collective", "--ops", "alltoall", "--sizes", "1G"), "--sizes"},
		{"pairs above ranks/2", local("5", "mbwmr", "--pairs", "3"), "--pairs 3: more pairs than ranks/2 = 2"},
		{"pairs zero", local("4", "mbwmr", "--pairs", "0"), "--pairs 0: must be positive"},
		{"mbwmr one rank", local("1", "mbwmr"), "mbwmr needs at least 2 ranks, got 1"},
		{"multilat one rank", local("1", "multilat"), "multilat needs at least 2 ranks, got 1"},
		{"bibw three ranks", local("3", "bibw"), "bibw needs exactly 2 ranks, got 3"},
		{"bibw window", local("2", "bibw", "--window", "0"), "--window 0"},
		{"bibw osu with iters", local("2", "bibw", "--osu", "--iters", "3"), "--iters"},
		{"nonblocking reduce_scatter", local("2", "nonblocking", "--ops", "allreduce,reduce_scatter"), "--ops reduce_scatter: has no non-blocking form"},
		{"nonblocking probes", local("2", "nonblocking", "--probes", "-1"), "--probes -1"},
		{"nonblocking one rank", local("1", "nonblocking"), "nonblocking needs at least 2 ranks, got 1"},
		{"nonblocking sizes", local("2", "nonblocking", "--ops", "ireduce"), "--ops"},
		{"onesided three ranks", local("3", "onesided"), "onesided needs exactly 2 ranks, got 3"},
		{"onesided bibw with lock", local("2", "onesided", "--modes", "bibw", "--sync", "lock"), "--sync lock: put bibw runs with fence or pscw only"},
		{"onesided no loop", local("2", "onesided", "--ops", "fop,cas", "--modes", "bw,bibw"), "--ops and --modes name no loop OSU has"},
		{"onesided unknown sync", local("2", "onesided", "--sync", "lockall"), "--sync lockall"},
		{"onesided validate char sums", local("2", "onesided", "--ops", "acc", "--validate"), "--validate: validating acc of char needs at most 42 iterations"},
		{"onesided sizes of ints", local("2", "onesided", "--ops", "acc", "--type", "int", "--sizes", "6"), "--sizes 6: acc moves whole 4-byte int elements"},
		{"reducelocal sizes", local("2", "reducelocal", "--type", "long", "--sizes", "12"), "--sizes 12: a reduction moves whole 8-byte long elements"},
		{"reducelocal iters", local("2", "reducelocal", "--iters", "0"), "--iters 0: must be positive"},
		{"reducelocal validate char", local("2", "reducelocal", "--type", "char", "--validate"), "--validate: validating sums of char needs at most 20 calls"},
	})
}

// TestMPIRunOSUBenchmarks runs bibw on 2 ranks, the multi-pair
// benchmarks on 2, 3 (a rank outside the pairs) and 4 (oversubscribed)
// and the non-blocking collectives on 2 and 4 ranks
// under real mpirun, checking every message.
func TestMPIRunOSUBenchmarks(t *testing.T) {
	bin := commcostBinary(t)
	short := []string{"--validate", "--max-time", "0.1", "--min-reps", "5", "--max-reps", "20"}
	tests := []struct {
		name string
		np   int
		args []string
		unit string
	}{
		{"bibw", 2, []string{"bibw", "--sizes", "1,64K", "--iters", "2"}, "B/s"},
		{"mbwmr np=4", 4, []string{"mbwmr", "--sizes", "1,64K"}, "B/s"},
		{"mbwmr np=3", 3, []string{"mbwmr", "--sizes", "8"}, "B/s"},
		{"multilat np=4", 4, []string{"multilat", "--sizes", "0,64K", "--iters", "5"}, "s"},
		{"multilat np=2", 2, []string{"multilat", "--sizes", "8"}, "s"},
		{"nonblocking np=2", 2, []string{"nonblocking", "--sizes", "8,16K", "--ops", "allreduce,alltoallv"}, "s"},
		{"nonblocking np=4", 4, []string{"nonblocking", "--sizes", "4K", "--probes", "3"}, "s"},
		{"onesided lat", 2, []string{"onesided", "--modes", "lat", "--ops", "put,get,acc,get_acc,fop", "--sizes", "8,64K", "--iters", "20"}, "s"},
		{"onesided lat int cas", 2, []string{"onesided", "--modes", "lat", "--ops", "cas", "--type", "int", "--iters", "20"}, "s"},
		{"onesided lat fence", 2, []string{"onesided", "--modes", "lat", "--ops", "put,acc", "--sync", "fence", "--sizes", "64", "--iters", "20"}, "s"},
		{"onesided lat pscw", 2, []string{"onesided", "--modes", "lat", "--ops", "get,fop", "--sync", "pscw", "--sizes", "64", "--iters", "20"}, "s"},
		{"onesided bw lock_all", 2, []string{"onesided", "--modes", "bw", "--sync", "lock_all", "--sizes", "64", "--iters", "5"}, "B/s"},
		{"onesided bibw", 2, []string{"onesided", "--modes", "bibw", "--sizes", "8,64K", "--iters", "5"}, "B/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.jsonl")
			args := append(slices.Clone(tt.args), short...)
			r := underMPI(t, tt.np, bin, append(args, "--out", out, "--format", "csv")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil || len(recs) == 0 {
				t.Fatalf("%d records, %v", len(recs), err)
			}
			for _, rec := range recs {
				if rec.Meta.Backend != "native" || rec.Ranks != tt.np || rec.N < 3 || !(rec.Median > 0) || rec.Unit != tt.unit {
					t.Errorf("bad record %s %v: backend %s ranks %d n %d median %g unit %s", rec.Bench, rec.Params, rec.Meta.Backend, rec.Ranks, rec.N, rec.Median, rec.Unit)
				}
			}
		})
	}
}

// TestMPIRunCollectives runs the collectives under real mpirun on 2 and 4
// ranks (oversubscribed) at small sizes, checking every result, and the
// records they append: one per point, native backend, OSU's figure.
func TestMPIRunCollectives(t *testing.T) {
	bin := commcostBinary(t)
	short := []string{"--validate", "--max-time", "0.1", "--min-reps", "5", "--max-reps", "20"}
	for _, np := range []int{2, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "c.jsonl")
			args := append([]string{"collective", "--sizes", "4,4K", "--root", "1"}, short...)
			r := underMPI(t, np, bin, append(args, "--out", out, "--format", "csv")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := 1 + 13*2; len(recs) != want {
				t.Fatalf("%d records, want %d", len(recs), want)
			}
			for _, rec := range recs {
				if rec.Meta.Backend != "native" || rec.Ranks != np || rec.N < 3 || !(rec.Median > 0) || !(rec.Derived[patterns.DerivedOSUAvg] > 0) {
					t.Errorf("bad record %v: backend %s ranks %d n %d median %g derived %v", rec.Params, rec.Meta.Backend, rec.Ranks, rec.N, rec.Median, rec.Derived)
				}
			}
		})
	}
}

// TestMPIRunCollectiveFails: a failing MPI call mid-run (rank 1 expects a
// shorter broadcast than the root sends at the second point, MPMD) exits
// 1 with one message naming the point, the call and the MPI error, and the
// finished point's record is in the file, whole.
func TestMPIRunCollectiveFails(t *testing.T) {
	bin := commcostBinary(t)
	t.Setenv(job.AllowMPMDEnv, "1")
	out := filepath.Join(t.TempDir(), "f.jsonl")
	common := []string{"--ops", "bcast", "--max-time", "0.2", "--out", out, "--format", "csv"}
	r := underMPI(t, 1, bin, append(append([]string{"collective", "--sizes", "8,64"}, common...),
		append([]string{":", "-np", "1", bin, "collective", "--sizes", "8,32"}, common...)...)...)
	if r.code != 1 || strings.Count(r.stderr, "commcost:") != 1 ||
		!strings.Contains(r.stderr, "collective alg=default bytes=32 iters=1 op=bcast") || !strings.Contains(r.stderr, "MPI_Bcast: MPI_ERR_TRUNCATE") {
		t.Errorf("exit %d, want 1 with one message naming the point, MPI_Bcast and MPI_ERR_TRUNCATE; stderr:\n%s", r.code, r.stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil || len(recs) != 1 || num(recs[0].Params["bytes"]) != 8 {
		t.Errorf("records %v, %v: want the 8-byte point's, whole", recs, err)
	}
}

// TestDSMBarrierMPIOnLocal: divalib's MPI_Ibarrier barrier runs on the
// local backend now that it has the non-blocking collectives (the dsm
// bad-input tables refused it there before).
func TestDSMBarrierMPIOnLocal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.jsonl")
	code, _, stderr := runCLI(t, "dsm", "check", "--barrier", "mpi", "--backend", "local", "--np", "4", "--ops", "200", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}
