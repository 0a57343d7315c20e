package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestMPIRunPatterns runs every pattern of the papers under real mpirun with
// 4 ranks (oversubscribed on 2 cores), small grids and short repetitions,
// validating every byte, and checks the JSON Lines they append: one record
// per parameter point, native backend, the pattern's ranks and a time.
func TestMPIRunPatterns(t *testing.T) {
	bin := commcostBinary(t)
	short := []string{"--validate", "--max-time", "0.2", "--min-reps", "5", "--max-reps", "50"}
	tests := []struct {
		name  string
		args  []string
		count int
		ranks []int // allowed Record.Ranks
	}{
		{"kkaccess", []string{"kkaccess", "--k", "1,4", "--l", "64,4K", "--r", "0.5,1", "--op", "read,write"}, 16, []int{4}},
		{"kkaccess_window", []string{"kkaccess", "--k", "2", "--l", "16K", "--r", "0.75", "--distinct", "--sync", "window"}, 1, []int{4}},
		{"kkaccess_a", []string{"kkaccess", "--k", "2", "--l", "4K", "--r", "0.5,1", "--a", "1,8", "--op", "read,write"}, 8, []int{4}},
		{"kaccess", []string{"kaccess", "--k", "2", "--l", "256", "--h", "1/p,0.5,1", "--a", "1,4", "--op", "read,write"}, 18, []int{4}},
		{"roundtrip", []string{"roundtrip", "--sizes", "0,64K", "--iters", "50"}, 2, []int{2}},
		{"alltoall", []string{"alltoall", "--sizes", "8,64K", "--ranks", "2,4"}, 4, []int{2, 4}},
		{"pairwise", []string{"pairwise", "--sizes", "8,64K", "--iters", "20", "--sync", "window"}, 2, []int{4}},
		{"rowcontention", []string{"rowcontention", "--sizes", "8,64K", "--iters", "20"}, 2, []int{4}},
		{"prtt", []string{"prtt", "--sizes", "8,4K,64K", "--n", "1,8", "--iters", "10"}, 12, []int{2}},
		{"permutations", []string{"permutations", "--sizes", "16,64K", "--count", "50"}, 2, []int{4}},
		{"aggregate", []string{"aggregate", "--sizes", "8,16K", "--q", "1,3"}, 28, []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.name+".jsonl")
			args := append(slices.Clone(tt.args), short...)
			args = append(args, "--out", out, "--format", "csv")
			r := underMPI(t, 4, bin, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tt.count {
				t.Fatalf("%d records, want %d", len(recs), tt.count)
			}
			for _, rec := range recs {
				if rec.Meta.Backend != "native" || !slices.Contains(tt.ranks, rec.Ranks) || rec.N < 3 || !(rec.Median > 0) {
					t.Errorf("bad record %s %v: backend %s ranks %d n %d median %g", rec.Bench, rec.Params, rec.Meta.Backend, rec.Ranks, rec.N, rec.Median)
				}
				if !strings.Contains(rec.Meta.MPILibrary, "MPI") {
					t.Errorf("metadata incomplete: %+v", rec.Meta)
				}
			}
		})
	}
}

// TestMPIRunPatternsBatched runs the patterns under real mpirun with 4
// ranks without validation, so the native backend runs many repetitions
// per batch (mpi.BatchKernels): every point gets exactly the repetitions
// asked for, positive times, and the traffic counters of one repetition.
func TestMPIRunPatternsBatched(t *testing.T) {
	bin := commcostBinary(t)
	const reps = 25
	fixed := []string{"--min-reps", "25", "--max-reps", "25", "--max-time", "60"}
	tests := []struct {
		name string
		args []string
		msgs float64 // msgs_total per repetition, 0: not checked
	}{
		{"kkaccess", []string{"kkaccess", "--k", "2", "--l", "64", "--r", "1"}, 4 * 2 * 2},
		{"kaccess", []string{"kaccess", "--k", "2", "--l", "64", "--h", "1/p", "--a", "3", "--es", "false"}, 4 * 2 * 2 * 3},
		{"prtt", []string{"prtt", "--sizes", "8", "--n", "4", "--delay", "0", "--iters", "10"}, 10 * 5},
		{"alltoall", []string{"alltoall", "--sizes", "8"}, 4 * 3},
		{"pairwise", []string{"pairwise", "--sizes", "8", "--iters", "20"}, 2 * 20 * 2},
		{"permutations", []string{"permutations", "--sizes", "16", "--count", "25"}, 4},
		{"aggregate textbook", []string{"aggregate", "--sizes", "8", "--impl", "textbook", "--ops", "alltoall"}, 0}, // its record counts rounds, not messages
		{"aggregate mpi", []string{"aggregate", "--sizes", "8", "--impl", "mpi", "--ops", "bcast,news"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "b.jsonl")
			args := append(slices.Clone(tt.args), fixed...)
			r := underMPI(t, 4, bin, append(args, "--out", out, "--format", "csv")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil || len(recs) == 0 {
				t.Fatalf("%d records, %v", len(recs), err)
			}
			for _, rec := range recs {
				if rec.N != reps || !(rec.Min > 0) {
					t.Errorf("%s %v: n %d min %g, want %d repetitions", rec.Bench, rec.Params, rec.N, rec.Min, reps)
				}
				if tt.msgs > 0 && rec.Counters[patterns.CounterMsgsTotal] != tt.msgs {
					t.Errorf("%s %v: %v messages per repetition, want %v", rec.Bench, rec.Params, rec.Counters[patterns.CounterMsgsTotal], tt.msgs)
				}
			}
		})
	}
}

// TestMPIRunPatternBadInput: under mpirun a bad input found once the ranks
// are known (pairwise on an odd number of ranks, h below 1/p) prints one
// message, exits 2 and writes nothing.
func TestMPIRunPatternBadInput(t *testing.T) {
	bin := commcostBinary(t)
	out := filepath.Join(t.TempDir(), "x.jsonl")
	r := underMPI(t, 3, bin, "pairwise", "--sizes", "8", "--out", out)
	if r.code != 2 || strings.Count(r.stderr, "commcost: pairwise needs an even number of ranks, got 3") != 1 {
		t.Errorf("pairwise on 3 ranks: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = underMPI(t, 4, bin, "kaccess", "--h", "0.2", "--out", out)
	if r.code != 2 || strings.Count(r.stderr, "commcost: --h 0.2") != 1 {
		t.Errorf("kaccess h = 0.2 on 4 ranks: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// A network whose application ranks the program refuses: the
	// message says so, with no launch line (it would be refused in turn);
	// one the program runs on names the launch that fits it.
	r = underMPI(t, 2, bin, "app", "bitonic", "--n", "64", "--store", "emulate:mesh(1x3)", "--out", out)
	if want := "commcost: --store emulate:mesh(1x3): app bitonic needs a power-of-two number of ranks (2, 4, 8, 16, ...); the network has 3 application ranks\n"; r.code != 2 || strings.Count(r.stderr, want) != 1 || strings.Contains(r.stderr, "run:") {
		t.Errorf("bitonic on mesh(1x3): exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = underMPI(t, 2, bin, "app", "bitonic", "--store", "emulate:mesh(1x4)", "--out", out)
	if want := "the network needs 4 application + 4 service ranks = 8 (run: mpirun -np 8 commcost app bitonic --store 'emulate:mesh(1x4)'"; r.code != 2 || strings.Count(r.stderr, want) != 1 {
		t.Errorf("bitonic on mesh(1x4) with 2 ranks: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if recs, _ := results.ReadJSONLFile(out); len(recs) != 0 {
		t.Errorf("%s was written", out)
	}
}
