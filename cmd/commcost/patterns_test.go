package main

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/results"
)

// quickFlags make a pattern run on goroutine ranks short and its stop
// reason fixed: three timed repetitions, one warm-up, every byte checked.
var quickFlags = []string{"--backend", "local", "--np", "4", "--min-reps", "3", "--max-reps", "3", "--validate"}

// patternCase is one subcommand of the papers' patterns, its record
// convention (the parameter names the model layer reads) and its ranks.
type patternCase struct {
	name   string
	args   []string
	bench  string
	params []string
	ranks  int    // Record.Ranks
	seed   bool   // Meta.Seed set
	count  int    // records
	format string // output format for the golden file
}

var patternCases = []patternCase{
	{"kkaccess", []string{"kkaccess", "--k", "1,3", "--l", "0,64", "--r", "0.5,1", "--op", "read,write", "--seed", "5"},
		"kkaccess", []string{"k", "l", "op", "r"}, 4, true, 16, "table"},
	{"kkaccess_distinct", []string{"kkaccess", "--k", "3", "--l", "1K", "--r", "1", "--distinct", "--sync", "window"},
		"kkaccess", []string{"distinct", "k", "l", "op", "r"}, 4, true, 1, "csv"},
	{"kkaccess_a", []string{"kkaccess", "--k", "2", "--l", "64", "--r", "1", "--a", "1,4"},
		"kkaccess", []string{"a", "k", "l", "op", "r"}, 4, true, 2, "csv"}, // a on every record of a run that asks for a > 1
	{"kkaccess_block", []string{"kkaccess", "--k", "4", "--l", "64", "--r", "1", "--a", "2", "--block", "--op", "write"},
		"kkaccess", []string{"a", "block", "k", "l", "op", "r"}, 4, true, 1, "csv"},
	{"kaccess", []string{"kaccess", "--k", "2", "--l", "256", "--h", "1/p,1", "--a", "1,3"},
		"kaccess", []string{"a", "es", "h", "k", "l", "op"}, 4, true, 6, "table"},
	{"kaccess_write", []string{"kaccess", "--k", "2", "--l", "256", "--h", "1", "--a", "2", "--op", "write"},
		"kaccess", []string{"a", "es", "h", "k", "l", "op"}, 4, true, 2, "csv"},
	{"roundtrip", []string{"roundtrip", "--sizes", "0,1K", "--iters", "20"},
		"roundtrip", []string{"bytes"}, 2, false, 2, "table"},
	{"alltoall", []string{"alltoall", "--sizes", "8,4K", "--ranks", "3,4", "--sync", "window"},
		"alltoall", []string{"bytes"}, 0, false, 4, "table"},
	{"pairwise", []string{"pairwise", "--sizes", "0,64K", "--pairs", "1,2", "--iters", "10"},
		"pairwise", []string{"bytes"}, 0, false, 4, "table"},
	{"rowcontention", []string{"rowcontention", "--sizes", "16", "--iters", "10", "--format", "csv"},
		"rowcontention", []string{"bytes"}, 4, false, 1, "csv"},
	{"prtt", []string{"prtt", "--sizes", "1,1K", "--n", "1,4", "--delay", "0,auto", "--iters", "10"},
		"prtt", []string{"bytes", "delay_s", "n", "side"}, 2, false, 8, "csv"},
	{"permutations", []string{"permutations", "--sizes", "16,1K", "--count", "20"},
		"permutations", []string{"bytes", "count"}, 4, true, 2, "table"},
	{"aggregate", []string{"aggregate", "--sizes", "8,1K", "--q", "1,3"},
		"aggregate", []string{"bytes", "impl", "neighbors", "op", "q"}, 4, false, 28, "csv"},
}

// TestPatternGolden runs every pattern subcommand on goroutine ranks,
// checks the shape of its output against testdata/<name>.golden, and checks
// the records it appends: the bench name, exactly the parameters the model
// layer reads, the ranks, the seed where there is one, and a time.
func TestPatternGolden(t *testing.T) {
	for _, pc := range patternCases {
		t.Run(pc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.jsonl")
			args := append(slices.Clone(pc.args), quickFlags...)
			args = append(args, "--out", out)
			if pc.format != "table" && !slices.Contains(args, "--format") {
				args = append(args, "--format", pc.format)
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			golden(t, "pattern_"+pc.name, shape(stdout))
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != pc.count {
				t.Fatalf("%d records, want %d", len(recs), pc.count)
			}
			for _, r := range recs {
				var keys []string
				for k := range r.Params {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if r.Bench != pc.bench || !slices.Equal(keys, pc.params) || r.Unit != "s" {
					t.Errorf("record %s %v unit %q, want %s with params %v in s", r.Bench, r.Params, r.Unit, pc.bench, pc.params)
				}
				if pc.ranks > 0 && r.Ranks != pc.ranks {
					t.Errorf("%v: ranks %d, want %d", r.Params, r.Ranks, pc.ranks)
				}
				if pc.seed != (r.Meta.Seed != 0) || r.Meta.Backend != job.Local {
					t.Errorf("%v: seed %d, backend %q", r.Params, r.Meta.Seed, r.Meta.Backend)
				}
				if r.N < 1 || !(r.Median > 0) || len(r.Counters) == 0 {
					t.Errorf("%v: n %d median %g counters %v", r.Params, r.N, r.Median, r.Counters)
				}
			}
			switch pc.name {
			case "alltoall", "pairwise":
				// Ranks is the paper's n (alltoall) or 2n (pairwise).
				want := map[int]bool{3: true, 4: true}
				if pc.name == "pairwise" {
					want = map[int]bool{2: true, 4: true}
				}
				for _, r := range recs {
					if !want[r.Ranks] {
						t.Errorf("%s: ranks %d", pc.name, r.Ranks)
					}
				}
			case "permutations":
				for _, r := range recs {
					if r.N != 20 || r.Stop != "fixed" || r.Derived["max_over_ave"] < 1 || r.Derived["min_over_ave"] > 1 {
						t.Errorf("permutations record: n %d stop %s derived %v", r.N, r.Stop, r.Derived)
					}
				}
			case "kaccess":
				for _, r := range recs {
					h := num(r.Params["h"])
					if h != 0.25 && h != 1 {
						t.Errorf("kaccess h = %v, want 1/p = 0.25 or 1", h)
					}
					if r.Counters["h_realised"] != h {
						t.Errorf("kaccess h %v realised as %v", r.Params["h"], r.Counters["h_realised"])
					}
				}
			}
		})
	}
}

// TestPatternBadInput: every bad input of the issue (r outside (0,1], h
// outside [1/p,1], k or a below 1, l negative, pairwise with an odd number
// of ranks, more targets than ranks, q-shift with q >= p) and the other
// malformed flags exit 2 with one message naming the flag, and write
// nothing.
func TestPatternBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	local := func(np string, args ...string) []string {
		return append(args, "--backend", "local", "--np", np, "--out", out)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"r zero", local("4", "kkaccess", "--r", "0"), "--r 0"},
		{"r above 1", local("4", "kkaccess", "--r", "0.5,1.5"), "--r 0.5,1.5"},
		{"r not a number", local("4", "kkaccess", "--r", "half"), "--r half"},
		{"k zero", local("4", "kkaccess", "--k", "0,1"), "--k 0,1"},
		{"k negative", local("4", "kaccess", "--k", "-2"), "--k -2"},
		{"l negative", local("4", "kkaccess", "--l", "-64"), "--l -64"},
		{"kaccess l negative", local("4", "kaccess", "--l", "-1"), "--l -1"},
		{"op unknown", local("4", "kkaccess", "--op", "read,delete"), "--op read,delete"},
		{"kkaccess iters", local("4", "kkaccess", "--iters", "5"), "--iters"},
		{"kkaccess one rank", local("1", "kkaccess"), "at least 2 ranks, got 1"},
		{"distinct more targets than ranks", local("4", "kkaccess", "--k", "2,4", "--distinct"), "more targets asked for than ranks exist"},
		{"h below 1/p", local("4", "kaccess", "--h", "0.1"), "--h 0.1"},
		{"h above 1", local("4", "kaccess", "--h", "1.5"), "--h 1.5"},
		{"h zero", local("4", "kaccess", "--h", "0"), "--h 0"},
		{"a zero", local("4", "kaccess", "--a", "0"), "--a 0"},
		{"kkaccess k beyond a run's", local("4", "kkaccess", "--k", "1,70000"), "--k 70000: must be at most 65535 (the send hot spot k of a run)"},
		{"kaccess k beyond a run's", local("4", "kaccess", "--k", "65536"), "--k 65536: must be at most 65535"},
		{"kaccess a beyond a run's", local("4", "kaccess", "--a", "4,65536"), "--a 65536: must be at most 65535 (the k-accesses a between synchronisations of a run)"},
		{"emulated kaccess a beyond a run's", []string{"emulate", "kaccess", "--backend", "local", "--net", "BF(1)", "--a", "70000", "--out", out}, "--a 70000: must be at most 65535"},
		{"es not a bool", local("4", "kaccess", "--es", "maybe"), "--es maybe"},
		{"kaccess op", local("4", "kaccess", "--op", "rmw"), "--op rmw"},
		{"sync unknown", local("4", "kaccess", "--sync", "clock"), "--sync clock"},
		{"seed zero", local("4", "permutations", "--seed", "0"), "--seed 0"},
		{"pairwise odd ranks", local("3", "pairwise", "--sizes", "8"), "even number of ranks, got 3"},
		{"rowcontention odd ranks", local("5", "rowcontention", "--sizes", "8"), "even number of ranks, got 5"},
		{"pairwise more pairs than ranks", local("4", "pairwise", "--pairs", "3"), "--pairs 3: more ranks asked for than exist"},
		{"alltoall more ranks than exist", local("4", "alltoall", "--ranks", "2,8"), "--ranks 8: more ranks asked for than exist"},
		{"alltoall one rank", local("4", "alltoall", "--ranks", "1"), "--ranks 1"},
		{"roundtrip peer beyond ranks", local("4", "roundtrip", "--peer", "4"), "--peer 4"},
		{"roundtrip peer zero", local("4", "roundtrip", "--peer", "0"), "--peer 0"},
		{"prtt negative delay", local("2", "prtt", "--delay", "0,-1e-6"), "--delay 0,-1e-6"},
		{"prtt n zero", local("2", "prtt", "--n", "0"), "--n 0"},
		{"prtt server beyond ranks", local("2", "prtt", "--peer", "2"), "--peer 2"},
		{"permutations count zero", local("4", "permutations", "--count", "0"), "--count 0"},
		{"permutations one rank", local("1", "permutations"), "at least 2 ranks, got 1"},
		{"qshift q = p", local("4", "aggregate", "--ops", "qshift", "--q", "1,4"), "--q 4"},
		{"aggregate root beyond ranks", local("4", "aggregate", "--ops", "bcast", "--root", "4"), "--root 4"},
		{"aggregate grid", local("4", "aggregate", "--ops", "news", "--grid", "3x3"), "--grid 3x3"},
		{"aggregate grid form", local("4", "aggregate", "--grid", "3by3"), "--grid 3by3"},
		// rows x cols = 6 modulo 2^64: a side beyond the ranks is refused
		// before any product is taken.
		{"aggregate grid wrapping around", local("6", "aggregate", "--ops", "news", "--grid", "8589934603x457357290657760722"),
			"--grid 8589934603x457357290657760722: each side is at most 16777216, the most ranks a run has"},
		{"aggregate op unknown", local("4", "aggregate", "--ops", "reduce"), "--ops reduce"},
		{"aggregate impl unknown", local("4", "aggregate", "--impl", "vendor"), "--impl vendor"},
		{"sizes malformed", local("4", "alltoall", "--sizes", "1:x"), "--sizes 1:x"},
		{"bandwidth of 0 bytes", local("2", "bandwidth", "--sizes", "0:8"), "--sizes 0:8: bytes = 0: must be positive"},
		{"bibw of 0 bytes", local("2", "bibw", "--sizes", "0"), "--sizes 0: bytes = 0: must be positive"},
		{"mbwmr of 0 bytes", local("4", "mbwmr", "--sizes", "0,1"), "--sizes 0,1: bytes = 0: must be positive"},
		{"onesided bandwidth of 0 bytes", local("2", "onesided", "--sizes", "0", "--ops", "get", "--modes", "lat,bw"), "--sizes 0: a bandwidth loop (--modes bw, bibw) moves at least 1 byte per call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// num reads a numeric parameter (int or float64 after a JSON round trip).
func num(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return -1
}
