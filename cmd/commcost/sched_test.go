package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/permsched"
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
	code, stdout, stderr := runCLI(t, "sched", "count", "--n", "16,33", "--d", "2,5,8", "--matrices", "4", "--out", out)
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

// TestSchedTrace schedules a matrix file written by `sched gen`, of bytes
// (samplesort) or of message counts (the other generators), read as its
// header says without --entries, and with an --entries that agrees.
func TestSchedTrace(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name         string
		gen, entries []string // sched gen's flags; --entries, if given
	}{
		{"samplesort, entries bytes", []string{"--gen", "samplesort", "--keys", "50"}, nil},
		{"fig7, entries count", []string{"--gen", "fig7", "--d", "3"}, nil},
		{"fig7 with --entries count", []string{"--gen", "fig7", "--d", "2"}, []string{"--entries", "count"}},
		{"samplesort with --entries bytes", []string{"--gen", "samplesort", "--keys", "20"}, []string{"--entries", "bytes"}},
		{"uniform, entries count", []string{"--gen", "uniform", "--d", "5"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := tc.entries
			code, mtx, stderr := runCLI(t, append([]string{"sched", "gen", "--n", "8"}, tc.gen...)...)
			if code != 0 {
				t.Fatalf("gen failed: %s", stderr)
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".txt")
			if err := os.WriteFile(path, []byte(mtx), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, append([]string{"sched", "count", "--matrix", path, "--matrices", "3", "--quiet"}, entries...)...)
			if code != 0 || !strings.Contains(stdout, "trace") {
				t.Fatalf("count --matrix: exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = runCLI(t, append([]string{"sched", "comm", "--backend", "local", "--np", "8", "--matrix", path,
				"--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--quiet"}, entries...)...)
			if code != 0 || !strings.Contains(stdout, "Alltoallv") {
				t.Fatalf("comm --matrix: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// TestSchedCommBreakeven runs experiment 2 on goroutine ranks into a file,
// then experiment 3 from that file. The sizes reach 64 KiB so that phi's
// share of a permutation's time stands above goroutine ranks' noise: at
// 8 KiB and below a loaded machine fitted phi below 0.
func TestSchedCommBreakeven(t *testing.T) {
	out := filepath.Join(t.TempDir(), "comm.jsonl")
	code, stdout, stderr := runCLI(t, "sched", "comm", "--backend", "local", "--np", "6", "--d", "2,3,5",
		"--sizes", "16,8K,64K", "--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--out", out, "--quiet")
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
		if r.Meta.Backend != job.Local {
			t.Errorf("record %s backend %q", r.Bench, r.Meta.Backend)
			break
		}
	}
	code, stdout, stderr = runCLI(t, "sched", "breakeven", "--in", out, "--format", "markdown")
	if code != 0 {
		t.Fatalf("breakeven exit %d: %s", code, stderr)
	}
	for _, want := range []string{"C1", "C2", "C3", "eq. 5", "| 8K"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("breakeven lacks %q:\n%s", want, stdout)
		}
	}
	// A torn last line (an append cut short) costs that record only,
	// through the shared reader: the same table, one warning.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	torn := filepath.Join(filepath.Dir(out), "torn.jsonl")
	last := lines[len(lines)-1]
	os.WriteFile(torn, []byte(string(data)+last[:len(last)/2]), 0o644)
	code, tornOut, tornErr := runCLI(t, "sched", "breakeven", "--in", torn, "--format", "markdown")
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
	countHeader := write("count.txt", "# commcost permsched matrix: n = 2, entries = count\n0 1\n1 0\n")
	bytesHeader := write("bytes.txt", "# commcost permsched matrix: n = 4, entries = bytes\n0 8 0 0\n0 0 8 0\n0 0 0 8\n8 0 0 0\n")
	good := write("good.jsonl", "")
	perm1 := `{"schema":1,"bench":"sched.perm1","params":{"bytes":16},"ranks":%d,"unit":"s","n":1,"min":1e-5,"median":1e-5,"mean":1e-5,"max":1e-5,"p90":1e-5,"p99":1e-5,"ci95":[1e-5,1e-5],"stop":"max-reps"}` + "\n"
	oneRank := write("onerank.jsonl", fmt.Sprintf(perm1, 1))
	manyRanks := write("manyranks.jsonl", fmt.Sprintf(perm1, 8)+fmt.Sprintf(perm1, 1000000))
	// A permutation's times falling as its bytes grow: phi fits negative.
	perm1At := func(b int, v float64) string {
		return fmt.Sprintf(`{"schema":1,"bench":"sched.perm1","params":{"bytes":%d},"ranks":8,"unit":"s","n":1,"min":%g,"median":%g,"mean":%g,"max":%g,"p90":%g,"p99":%g,"ci95":[%g,%g],"stop":"max-reps"}`+"\n", b, v, v, v, v, v, v, v, v)
	}
	negPhi := write("negphi.jsonl", perm1At(16, 3e-5)+perm1At(1024, 2.5e-5)+perm1At(8192, 1e-5))
	// A permutation's record with a generator (which only the exchanges
	// have), one with an unknown top-level key and one with an unknown
	// meta key.
	negPhiCopy := write("negphi-copy.jsonl", perm1At(16, 3e-5)+perm1At(1024, 2.5e-5)+perm1At(8192, 1e-5))
	perm1Gen := write("perm1gen.jsonl", perm1At(16, 3e-5)+strings.Replace(perm1At(1024, 4e-5), `"bytes":1024`, `"bytes":1024,"gen":"uniform"`, 1))
	perm1Note := write("perm1note.jsonl", strings.Replace(perm1At(16, 3e-5), `"stop"`, `"note":"rerun","stop"`, 1))
	perm1Meta := write("perm1meta.jsonl", strings.Replace(perm1At(16, 3e-5), `"stop":"max-reps"`, `"stop":"max-reps","meta":{"backend":"native","host":"a"}`, 1))
	local := []string{"--backend", "local", "--np", "4", "--warmup", "0", "--min-reps", "2", "--max-reps", "2"}
	// A sched comm file of one matrix (schedule and exchange records): its
	// CGM exchange given a scheduling time of 1 s, which its schedule
	// record, beside it or in another file, measured as 51 us.
	comm, _, err := results.ReadRecordsFile(filepath.Join("testdata", "sched_comm_d2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var schedules, exchanges []results.Record
	for _, r := range comm {
		if r.Bench == "sched.comm" && r.Params["scheduler"] == "CGM" {
			r.Derived = map[string]float64{"sched_s": 1, "sched_over_comm": 1 / r.Median}
		}
		if r.Bench == "sched.schedule" {
			schedules = append(schedules, r)
		} else {
			exchanges = append(exchanges, r)
		}
	}
	schedLie := filepath.Join(dir, "schedlie.jsonl")
	writeJSONL(t, schedLie, append(append([]results.Record{}, schedules...), exchanges...))
	schedOnly, commOnly := filepath.Join(dir, "schedonly.jsonl"), filepath.Join(dir, "commonly.jsonl")
	writeJSONL(t, schedOnly, schedules)
	writeJSONL(t, commOnly, exchanges)
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
		{"matrices 0", []string{"sched", "count", "--matrices", "0"}, "--matrices 0"},
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
		{"breakeven in of a file and its copy", []string{"sched", "breakeven", "--in", negPhi + "," + negPhiCopy}, "--in " + negPhiCopy + ": " + negPhiCopy + " line 1 is the same record as " + negPhi + " line 1 (sched.perm1 bytes=16"},
		{"breakeven in of a perm1 with a generator", []string{"sched", "breakeven", "--in", perm1Gen}, perm1Gen + ": line 2: record sched.perm1: impossible parameter gen = \"uniform\": sched.perm1 records have no parameter gen (theirs: bytes)"},
		{"breakeven in of an unknown key", []string{"sched", "breakeven", "--in", perm1Note}, perm1Note + ": line 1: field note: no field of a record"},
		{"breakeven in of an unknown meta key", []string{"sched", "breakeven", "--in", perm1Meta}, perm1Meta + ": line 1: field meta.host: no field of a record's meta"},
		{"breakeven in of one rank", []string{"sched", "breakeven", "--in", oneRank}, "--in " + oneRank + ": line 1: sched.perm1 has ranks = 1; want 2..65536"},
		{"breakeven in of 1e6 ranks", []string{"sched", "breakeven", "--in", manyRanks}, "--in " + manyRanks + ": line 2: sched.perm1 has ranks = 1000000; want 2..65536"},
		{"breakeven_sched_s_lie", []string{"sched", "breakeven", "--in", schedLie},
			"--in " + schedLie + ": results: " + schedLie + ": line 4: record sched.comm bytes=16 d=2 gen=fig7 matrix=0 scheduler=CGM: derived sched_s = 1 disagrees with the median 5.0629999999999425e-05 of the sched.schedule record of its matrix, d and scheduler"},
		{"breakeven_sched_s_lie_across_files", []string{"sched", "breakeven", "--in", schedOnly + "," + commOnly},
			"--in " + commOnly + ": line 2: record sched.comm bytes=16 d=2 gen=fig7 matrix=0 scheduler=CGM: derived sched_s = 1 disagrees with the median"},
		{"breakeven_sched_s_unbacked", []string{"sched", "breakeven", "--in", commOnly},
			"--in " + commOnly + ": line 1: record sched.comm bytes=16 d=2 gen=fig7 matrix=0 scheduler=LP: derived sched_s = 5.0639499999997895e-05 has no sched.schedule record of its matrix, d and scheduler on 8 ranks to be the median of"},
		{"breakeven reuse", []string{"sched", "breakeven", "--reuse", "0.5"}, "--reuse"},
		{"breakeven in of a negative bandwidth", []string{"sched", "breakeven", "--in", negPhi},
			"--in " + negPhi + ": break-even: the sched.perm1 records fit phi = -2.264e-09 s/B ± 2e-10 (a bandwidth of -4.42e+08 B/s), which is not positive: these records do not determine a cost model"},
		{"gen d > n-1", []string{"sched", "gen", "--n", "8", "--d", "8"}, "--d 8"},
		{"gen unknown", []string{"sched", "gen", "--gen", "ring"}, "--gen ring"},
		{"gen samplesort with d", []string{"sched", "gen", "--gen", "samplesort", "--d", "2"}, "--d with --gen samplesort: the sample sort's messages follow from its keys (--keys), not from d"},
		{"gen keys without samplesort", []string{"sched", "gen", "--gen", "fig7", "--keys", "5"}, "--keys with --gen fig7: only the samplesort generator reads it"},
		{"positional", []string{"sched", "count", "extra"}, "unexpected argument"},
		{"n beyond the ranks a matrix holds", []string{"sched", "count", "--n", "16,70000"}, "--n 16,70000: n = 70000: must be an integer from 1 to 65536"},
		{"min-matrices 0", []string{"sched", "count", "--min-matrices", "0"}, "--min-matrices 0: must be positive"},
		{"min-matrices above matrices", []string{"sched", "count", "--min-matrices", "500", "--matrices", "10"}, "--min-matrices with --matrices: --min-matrices 500 is more than the 10 matrices --matrices gives each cell: give at most 10"},
		{"count format csv", []string{"sched", "count", "--format", "csv"}, "--format csv: accepted: table or markdown"},
		{"comm format jsonl", []string{"sched", "comm", "--format", "jsonl"}, "--format jsonl: accepted: table or markdown"},
		{"comm timeout 0", []string{"sched", "comm", "--timeout", "0"}, "--timeout 0: must be a number of seconds from 5 to 1e+09"},
		{"comm timeout shorter than a start-up", []string{"sched", "comm", "--timeout", "1"}, "--timeout 1: must be a number of seconds from 5 to 1e+09 (about 32 years); the watchdog also watches MPI start-up"},
		{"comm matrix with matrices", append([]string{"sched", "comm", "--matrix", five, "--matrices", "2"}, local...), "--matrix and --matrices exclude each other"},
		{"comm bad matrix", append([]string{"sched", "comm", "--matrix", ragged}, local...), "--matrix " + ragged + ": matrix file line 2"},
		{"breakeven no-perm1", append([]string{"sched", "breakeven", "--no-perm1"}, local...), "--no-perm1: breakeven needs the single-permutation times"},
		{"breakeven of one size", append([]string{"sched", "breakeven", "--sizes", "1K"}, local...), "--sizes 1K: breakeven fits tau and phi to one permutation's times at three or more message sizes, and this is 1; accepted: three or more sizes, a list (16,1K,64K) or LO:HI spanning them (16:64K)"},
		{"breakeven of two sizes", append([]string{"sched", "breakeven", "--sizes", "16:32"}, local...), "--sizes 16:32: breakeven fits tau and phi"},
		{"breakeven of densities below 2", append([]string{"sched", "breakeven", "--d", "0,1"}, local...), "--d 0,1: breakeven fits CGM's scheduling cost, d n ln d, to two or more schedules of a density d >= 2, and these are 0 (1 matrices per d); accepted: two or more d >= 2 (e.g. 2,3), or one with --matrices 2 or more"},
		{"breakeven of one schedule", append([]string{"sched", "breakeven", "--d", "1,3"}, local...), "--d 1,3: breakeven fits CGM's scheduling cost, d n ln d, to two or more schedules of a density d >= 2, and these are 1"},
		{"breakeven of a matrix file", append([]string{"sched", "breakeven", "--matrix", five}, local...), "--matrix: breakeven fits CGM's scheduling cost, d n ln d, to two or more schedules of a density d >= 2, and a matrix file is one schedule; accepted: generated matrices (--d, --matrices)"},
		{"breakeven on 2 ranks", []string{"sched", "breakeven", "--backend", "local", "--np", "2", "--warmup", "0", "--min-reps", "2", "--max-reps", "2"}, "breakeven on 2 ranks: the densities of 2 ranks, d = [1], give 0 schedules of a d >= 2"},
		{"breakeven on 3 ranks of one matrix per d", []string{"sched", "breakeven", "--backend", "local", "--np", "3", "--warmup", "0", "--min-reps", "2", "--max-reps", "2"}, "breakeven on 3 ranks: the densities of 3 ranks, d = [1 2], give 1 schedules of a d >= 2 (--matrices 1), and the fit of CGM's scheduling cost, d n ln d, needs two or more; run it on 4 or more ranks, or on 3 with --matrices 2"},
		{"count entries against the header", []string{"sched", "count", "--matrix", countHeader, "--entries", "bytes"}, "--entries bytes and --matrix " + countHeader + " disagree: the file's header (line 1) says entries = count; leave --entries out to read the file as its header says"},
		{"comm entries against the header", append([]string{"sched", "comm", "--matrix", bytesHeader, "--entries", "count"}, local...), "--entries count and --matrix " + bytesHeader + " disagree: the file's header (line 1) says entries = bytes"},
		{"header of no kind", []string{"sched", "count", "--matrix", write("nokind.txt", "# commcost permsched matrix: n = 2, entries = words\n0 1\n1 0\n")}, "the header says entries = words; want bytes or count"},
		{"breakeven in with backend", []string{"sched", "breakeven", "--in", good, "--backend", "local"}, "--in and --backend exclude each other"},
		{"breakeven in with samples", []string{"sched", "breakeven", "--in", good, "--samples"}, "--in and --samples exclude each other"},
		{"breakeven in twice", []string{"sched", "breakeven", "--in", good + "," + good}, "is listed twice"},
		{"gen n 0", []string{"sched", "gen", "--n", "0"}, "--n 0: must be an integer in 1..65536"},
		{"gen keys 0", []string{"sched", "gen", "--gen", "samplesort", "--keys", "0"}, "--keys 0: must be positive"},
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

// TestSchedDeprecatedSpellings: the spellings before the one flag
// vocabulary still work for one release: each sets its new flag and
// prints one warning line naming it; help lists only the new ones.
func TestSchedDeprecatedSpellings(t *testing.T) {
	dir := t.TempDir()
	small := []string{"sched", "count", "--n", "8", "--d", "2", "--quiet"}
	local := []string{"sched", "comm", "--backend", "local", "--np", "4", "--d", "2", "--sizes", "16", "--methods", "CGM",
		"--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--quiet"}
	with := func(base []string, args ...string) []string { return append(append([]string(nil), base...), args...) }
	tests := []struct {
		name    string
		args    []string
		warning string // "": none
		stdout  string // in stdout
		samples int    // -1: no --out; else 1 when the records must keep their samples, 0 when not
	}{
		{"count --samples is --matrices", with(small, "--samples", "3"), "--samples is deprecated; use --matrices", "3 matrices per d", -1},
		{"count --min-samples is --min-matrices", with(small, "--matrices", "2", "--min-samples", "1"), "--min-samples is deprecated; use --min-matrices", "2 matrices per d", -1},
		{"count --markdown is --format markdown", with(small, "--matrices", "2", "--markdown"), "--markdown is deprecated; use --format markdown", "| d ", -1},
		{"comm --keep-samples is --samples", with(local, "--keep-samples"), "--keep-samples is deprecated; use --samples", "d = 2", 1},
		{"comm --samples", with(local, "--samples"), "", "d = 2", 1},
		{"comm without --samples", local, "", "d = 2", 0},
		{"comm --markdown", with(local, "--markdown"), "--markdown is deprecated; use --format markdown", "| bytes", -1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			out := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
			if tt.samples >= 0 {
				args = with(args, "--out", out)
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := min(1, len(tt.warning)); strings.Count(stderr, "commcost: warning:") != want || !strings.Contains(stderr, tt.warning) {
				t.Errorf("stderr %q: want %d warning line holding %q", stderr, want, tt.warning)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if tt.samples < 0 {
				return
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil || len(recs) == 0 {
				t.Fatalf("%d records, %v", len(recs), err)
			}
			for _, r := range recs {
				if kept := len(r.Samples) == r.N; kept != (tt.samples == 1) {
					t.Fatalf("%s %v: %d samples of %d", r.Bench, r.Params, len(r.Samples), r.N)
				}
			}
		})
	}
	for cmd, old := range map[string][]string{"count": {"-samples ", "-min-samples ", "-markdown"}, "comm": {"-keep-samples", "-markdown"}, "breakeven": {"-keep-samples", "-markdown"}} {
		_, help, _ := runCLI(t, "help", "sched", cmd)
		for _, o := range old {
			if strings.Contains(help, "\n  "+o) {
				t.Errorf("help of sched %s lists the deprecated %s", cmd, o)
			}
		}
	}
}

// TestSchedListsFromRegistry: every list the sched subcommands print (in
// summaries, help texts and defaults) is permsched's: the schedulers, the
// methods, the generators, the paper's sizes.
func TestSchedListsFromRegistry(t *testing.T) {
	helpOf := func(cmd string) string {
		code, help, errs := runCLI(t, "help", "sched", cmd)
		if code != 0 {
			t.Fatalf("help sched %s: exit %d %s", cmd, code, errs)
		}
		return help
	}
	// flagText is the help line of --name.
	flagText := func(help, name string) string {
		lines := strings.Split(help, "\n")
		for i, l := range lines[:len(lines)-1] {
			if l == "  -"+name || strings.HasPrefix(l, "  -"+name+" ") {
				return strings.TrimSpace(lines[i+1])
			}
		}
		t.Fatalf("no --%s in\n%s", name, help)
		return ""
	}
	join := strings.Join
	gens, scheds, methods := join(permsched.GenKinds(), ", "), join(permsched.SchedulerNames(), ", "), join(permsched.DefaultMethods(), ", ")
	count, comm, be, gen := helpOf("count"), helpOf("comm"), helpOf("breakeven"), helpOf("gen")
	tests := []struct{ name, got, want string }{
		{"count summary", cli.Lookup("sched count").Summary, "time of " + scheds + " over"},
		{"count --sched", flagText(count, "sched"), "a comma list of " + scheds + ` (default "` + join(permsched.SchedulerNames(), ",") + `")`},
		{"count --gen", flagText(count, "gen"), "matrix generator: " + gens + ` (default "` + permsched.GenFig7 + `")`},
		{"comm --gen", flagText(comm, "gen"), "matrix generator: " + gens + ` (default "` + permsched.GenFig7 + `")`},
		{"comm --methods", flagText(comm, "methods"), "a comma list of " + methods + ` (default "` + join(permsched.DefaultMethods(), ",") + `")`},
		{"breakeven --methods", flagText(be, "methods"), "a comma list of " + methods + ` (default "LP,CGM")`},
		{"gen summary", cli.Lookup("sched gen").Summary, "write a matrix file for --matrix (" + join(permsched.MatrixKinds(), ", ") + ")"},
		{"gen --gen", flagText(gen, "gen"), "generator: " + join(permsched.MatrixKinds(), ", ") + ` (default "` + permsched.GenFig7 + `")`},
		{"comm --np", flagText(comm, "np"), "(default 8)"},
		{"count and comm --format", flagText(count, "format"), flagText(comm, "format")},
		{"count and comm --quiet", flagText(count, "quiet"), flagText(comm, "quiet")},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) {
			t.Errorf("%s: %q lacks %q", tt.name, tt.got, tt.want)
		}
	}
	_, def, _ := strings.Cut(flagText(comm, "sizes"), `(default "`)
	if sizes, err := opts.ParseSizes(strings.TrimSuffix(def, `")`)); err != nil || !slices.Equal(sizes, permsched.PaperCommSizes) {
		t.Errorf("--sizes default %q = %v (%v), want the paper's %v", def, sizes, err, permsched.PaperCommSizes)
	}
}
