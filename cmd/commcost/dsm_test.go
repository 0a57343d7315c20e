package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestDSMBadInput: every bad input of the dsm subcommands is a usage error
// (exit 2) with one message naming the flag and the accepted form, and
// nothing is written.
func TestDSMBadInput(t *testing.T) {
	dir, out := badInputDir(t)
	local := []string{"--backend", "local", "--out", out}
	users := filepath.Join(dir, "users")
	mine := filepath.Join(users, "fig3_matsquare_blocks.png")
	if err := os.MkdirAll(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if data, err := os.ReadFile(mine); err != nil || string(data) != "mine" {
			t.Errorf("the user's %s: %q, %v", mine, data, err)
		}
	}()
	checkBadInputs(t, dir, []badInput{
		{"no subcommand", []string{"dsm"}, "dsm needs a subcommand: check, matsquare, overhead, bitonic, barneshut or plot"},
		{"unknown subcommand", []string{"dsm", "sort"}, `dsm "sort": unknown subcommand`},
		{"mesh does not match ranks", append([]string{"dsm", "check", "--np", "16", "--mesh", "3x5"}, local...), "--mesh 3x5 has 15 processors but --np is 16"},
		{"mesh malformed", append([]string{"dsm", "check", "--mesh", "4by4"}, local...), "accepted form is ROWSxCOLS"},
		{"tree degree 3", append([]string{"dsm", "check", "--strategies", "tree-3"}, local...), `tree degree "3" is not supported`},
		{"tree 16-64", append([]string{"dsm", "matsquare", "--strategies", "tree-16-64"}, local...), "accepted are 2, 4, 16"},
		{"unknown strategy", append([]string{"dsm", "check", "--strategies", "home"}, local...), `strategy "home"`},
		{"hand in check", append([]string{"dsm", "check", "--strategies", "hand"}, local...), `strategy "hand"`},
		{"memory below one variable", append([]string{"dsm", "matsquare", "--np", "4", "--blocks", "4096", "--memory", "1K"}, local...), "--memory 1K: smaller than one block variable"},
		{"memory below check variable", append([]string{"dsm", "check", "--memory", "100"}, local...), "--memory 100: smaller than one variable"},
		{"block not square", append([]string{"dsm", "matsquare", "--blocks", "128"}, local...), "128 is not a perfect square"},
		{"mesh not square", append([]string{"dsm", "matsquare", "--np", "16", "--mesh", "2x8"}, local...), "--mesh 2x8: matsquare needs a square mesh"},
		{"kernel", append([]string{"dsm", "matsquare", "--kernel", "fma"}, local...), "--kernel fma"},
		{"ops", append([]string{"dsm", "check", "--ops", "0"}, local...), "--ops 0"},
		{"overhead batch beyond the timeout", append([]string{"dsm", "overhead", "--iters", "100000000000", "--timeout", "10"}, local...), "--iters 100000000000: a batch of that many cached accesses takes at least 500 s"},
		{"write fraction", append([]string{"dsm", "check", "--write-fraction", "1.5"}, local...), "--write-fraction 1.5"},
		// A refusal of the rank count names what set it: --np, or the mesh.
		{"bitonic ranks from --np", append([]string{"dsm", "bitonic", "--np", "3"}, local...), "--np 3: dsm bitonic needs a power-of-two number of ranks (one wire of the circuit each); e.g. 4, 16"},
		{"bitonic ranks from --mesh", append([]string{"dsm", "bitonic", "--np", "3", "--mesh", "1x3"}, local...), "--mesh 1x3: bitonic sorting needs a power-of-two number of ranks (one wire of the circuit each), got 3"},
		{"matsquare ranks from --np", append([]string{"dsm", "matsquare", "--np", "8"}, local...), "--np 8: dsm matsquare needs a square number of ranks for its sqrt(P) x sqrt(P) mesh; e.g. 4, 16"},
		// A memory demand names the flag that grows it.
		{"check vars beyond memory", append([]string{"dsm", "check", "--vars", "1000000000000"}, local...), "--vars 1000000000000: dsm check's 1000000000000 variables of 4 16-byte slots"},
		{"check slots beyond memory", append([]string{"dsm", "check", "--slots", "1000000000000"}, local...), "--slots 1000000000000: dsm check's 16 variables of 1000000000000 16-byte slots"},
		{"overhead batches beyond the count bound", append([]string{"dsm", "overhead", "--batches", "100000000000"}, local...), "--batches 100000000000: must be at most 1048576 batches"},
		{"barneshut cells beyond the cell references", append([]string{"dsm", "barneshut", "--np", "4", "--bodies", "3000000", "--cells-per-body", "1000"}, local...), "--cells-per-body 1000: barneshut on 4 ranks: N = 3000000 bodies with that many cells each do not fit the cell references (int32); want --cells-per-body <= 714.827 for N = 3000000 on 4 ranks"},
		{"barneshut cells beyond memory", append([]string{"dsm", "barneshut", "--np", "4", "--bodies", "200000", "--cells-per-body", "1000"}, local...), "--cells-per-body 1000 with --np 4: barneshut's 200000 bodies and 200000064 cells"},
		{"barrier", append([]string{"dsm", "check", "--barrier", "butterfly"}, local...), "--barrier butterfly"},
		// Figures: a run that cannot give one two points, and a figure's
		// name taken by the user's file, are refused before measuring.
		{"plot of one block size", append([]string{"dsm", "matsquare", "--np", "4", "--blocks", "16", "--plot", filepath.Join(dir, "figs")}, local...), "--plot with --blocks: no figure has two points in a run of one --blocks value on one mesh"},
		{"plot of one key count", append([]string{"dsm", "bitonic", "--np", "4", "--keys", "64", "--plot", filepath.Join(dir, "figs")}, local...), "--plot with --keys: no figure has two points"},
		{"plot of one body count", append([]string{"dsm", "barneshut", "--np", "4", "--bodies", "100", "--plot", filepath.Join(dir, "figs")}, local...), "--plot with --bodies: no figure has two points"},
		{"plot over a user's file", append([]string{"dsm", "matsquare", "--np", "4", "--blocks", "16,64", "--plot", users}, local...), filepath.Join(users, "fig3_matsquare_blocks.png") + " exists and is not a plot commcost wrote"},
		{"dsm plot over a user's file", []string{"dsm", "plot", "--plot", users, out}, filepath.Join(users, "fig3_matsquare_blocks.png") + " exists and is not a plot commcost wrote"},
		{"backend", []string{"dsm", "check", "--backend", "shm"}, "--backend"},
	})
}

// TestDSMLocal runs both subcommands on goroutine ranks and checks the
// records: zero violations, verified results, congestion ratios present.
func TestDSMLocal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "dsm.jsonl")
	code, stdout, errs := runCLI(t, "dsm", "check", "--backend", "local", "--np", "16", "--ops", "5000", "--strategies", "fixed-home,tree-4", "--out", out, "--format", "csv")
	if code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, errs)
	}
	code, stdout, errs = runCLI(t, "dsm", "matsquare", "--backend", "local", "--np", "16", "--blocks", "64", "--reps", "2", "--strategies", "hand,fixed-home,tree-4", "--out", out)
	if code != 0 {
		t.Fatalf("matsquare: exit %d\n%s%s", code, stdout, errs)
	}
	code, stdout, errs = runCLI(t, "dsm", "overhead", "--backend", "local", "--np", "16", "--iters", "100", "--batches", "2", "--strategies", "tree-4", "--out", out, "--format", "csv")
	if code != 0 {
		t.Fatalf("overhead: exit %d\n%s%s", code, stdout, errs)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkDSMRecords(t, recs, 10, 3, "local", 16)
	// Every kind of record names the virtual mesh alike, once: RxC.
	for _, rec := range recs {
		if rec.Params["mesh"] != "4x4" {
			t.Errorf("%s %v: mesh %q, want 4x4", rec.Bench, rec.Params, rec.Params["mesh"])
		}
	}
}

// TestDSMCheckViolation: a workload with violations (found on rank 0, which
// holds storecheck's verdict) fails dsm check on every rank alike: exit 1,
// the violation and the verdict each printed once, the records written, and
// a collective error, so that main finalises MPI instead of aborting the job.
func TestDSMCheckViolation(t *testing.T) {
	injected := func(ccfg storecheck.CoherenceConfig, seed int64) []divalib.CheckWorkload {
		return append(divalib.CheckWorkloads(ccfg, seed), divalib.CheckWorkload{Name: "injected", Run: func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			if err := s.Barrier(); err != nil {
				return storecheck.Report{}, err
			}
			if c.Rank() != 0 {
				return storecheck.Report{}, nil
			}
			return storecheck.Report{Ops: 1, Mismatches: 1, Problems: []string{"injected mismatch"}}, nil
		}})
	}
	// The command line's configuration of dsm check, with the workload
	// added (a field the flags do not reach).
	check := func(out string) *dsmexp.Check {
		def, ok := lookupDSM("check")
		if !ok {
			t.Fatal("dsm check is not registered")
		}
		k := def.Config().(*dsmexp.Check)
		k.Backend, k.NP, k.Ops, k.Strategies, k.Out, k.Workloads = "local", 4, 200, []string{"fixed-home"}, out, injected
		if err := k.Validate(); err != nil {
			t.Fatal(err)
		}
		return k
	}
	out := filepath.Join(t.TempDir(), "dsm.jsonl")
	var stdout, stderr bytes.Buffer
	err := check(out).Run(dsmexp.IO{Stdout: &stdout, Stderr: &stderr})
	code := exitCode(err, &stderr)
	if code != 1 || !job.Collective(err) {
		t.Fatalf("exit %d, collective %v (%v); want exit 1 from a verdict every rank shares", code, job.Collective(err), err)
	}
	for _, want := range []string{"dsm check fixed-home injected: storecheck: 1 violations", "dsm check: 1 workload(s) with violations"} {
		if n := strings.Count(stderr.String(), want); n != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, n, stderr.String())
		}
	}
	recs, rerr := results.ReadJSONLFile(out)
	if rerr != nil || len(recs) != 6 || recs[5].Counters["mismatches"] != 1 {
		t.Errorf("%d records (%v), want 5 workloads + the injected one with its mismatch", len(recs), rerr)
	}
	// Every rank returns the verdict, not only rank 0.
	k := check("")
	errs := make([]error, 4)
	lerr := local.Run(4, func(c mpi.Comm) error {
		errs[c.Rank()] = k.World(c, dsmexp.IO{}, results.Meta{}, func(results.Record) error { return nil })
		return nil
	})
	if lerr != nil {
		t.Fatal(lerr)
	}
	for r, e := range errs {
		if !job.Collective(e) || exitCode(e, io.Discard) != 1 {
			t.Errorf("rank %d: %v, want the collective verdict with exit 1", r, e)
		}
	}
}

// lookupDSM is the registered dsm subcommand name.
func lookupDSM(name string) (dsmexp.Def, bool) {
	for _, d := range dsmexp.Defs() {
		if d.Name == name {
			return d, true
		}
	}
	return dsmexp.Def{}, false
}

func checkDSMRecords(t *testing.T, recs []results.Record, wantChecks, wantSquares int, backend string, ranks int) {
	t.Helper()
	var checks, squares int
	for _, rec := range recs {
		if rec.Meta.Backend != backend || rec.Ranks != ranks {
			t.Errorf("record %s %v: backend %q ranks %d", rec.Bench, rec.Params, rec.Meta.Backend, rec.Ranks)
		}
		switch rec.Bench {
		case "dsm-check":
			checks++
			for _, k := range []string{"stale_reads", "torn_reads", "unknown_values", "future_reads", "mismatches"} {
				if rec.Counters[k] != 0 {
					t.Errorf("%v: %s = %v", rec.Params, k, rec.Counters[k])
				}
			}
		case "dsm-matsquare":
			squares++
			if rec.Counters["verified"] != 1 || rec.Counters["congestion_bytes"] <= 0 || rec.Derived["congestion_ratio"] <= 0 {
				t.Errorf("matsquare record %v: counters %v derived %v", rec.Params, rec.Counters, rec.Derived)
			}
		}
	}
	if checks != wantChecks || squares != wantSquares {
		t.Fatalf("%d check and %d matsquare records, want %d and %d", checks, squares, wantChecks, wantSquares)
	}
}

// TestMPIRunDSM runs the coherence suite at its full default size (10^5
// operations per strategy and variant) and a matrix square under real
// mpirun with 4 ranks (a 2x2 mesh). The matrix square's counts are those
// of the same run on goroutine ranks: under mpirun the C engine sends the
// barriers' messages and answers fixed-home reads itself (the store
// charges them), on mpi/local the store sends every message in Go.
func TestMPIRunDSM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the mpirun integration test")
	}
	bin := commcostBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "dsm.jsonl")
	run := func(args ...string) cmdResult { return mpirunCLI(t, bin, 4, 4*time.Minute, args...) }
	r := run("dsm", "check", "--out", out, "--format", "csv")
	if r.code != 0 {
		t.Fatalf("dsm check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run("dsm", "matsquare", "--blocks", "64,4096", "--reps", "3", "--out", out, "--format", "csv")
	if r.code != 0 {
		t.Fatalf("dsm matsquare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkDSMRecords(t, recs, 30, 14, "native", 4)
	localOut := filepath.Join(dir, "local.jsonl")
	if code, stdout, errs := runCLI(t, "dsm", "matsquare", "--backend", "local", "--np", "4", "--blocks", "64,4096", "--reps", "3", "--out", localOut); code != 0 {
		t.Fatalf("dsm matsquare --backend local: exit %d\n%s%s", code, stdout, errs)
	}
	localRecs, err := results.ReadJSONLFile(localOut)
	if err != nil {
		t.Fatal(err)
	}
	counts := func(recs []results.Record) map[string][3]float64 {
		m := map[string][3]float64{}
		for _, r := range recs {
			if r.Bench == "dsm-matsquare" {
				c := r.Counters
				m[fmt.Sprint(r.Params["strategy"], " ", r.Params["block_ints"])] = [3]float64{c["congestion_bytes"], c["load_bytes"], c["startups"]}
			}
		}
		return m
	}
	if native, loc := counts(recs), counts(localRecs); len(native) != 14 || !maps.Equal(native, loc) {
		t.Errorf("matsquare counts (congestion, load, startups) under mpirun %v, on goroutine ranks %v", native, loc)
	}
	for _, rec := range recs {
		if rec.Bench == "dsm-check" && rec.Params["workload"] == "coherence" && rec.Counters["ops"] != 100000 {
			t.Errorf("%v: %v operations, want 10^5", rec.Params, rec.Counters["ops"])
		}
	}
	// Variables of 4 KiB travel as separate bodies that MPI sends from the
	// value's own memory, which the fixed home then writes in place once
	// no send reads it (fhWritten, mpi.EngineSendTracker): coherence holds,
	// and the homes' invalidating 64 KiB writes between remote reads are
	// made in place (rank 0's, the record's counters).
	big := filepath.Join(dir, "big.jsonl")
	if r = run("dsm", "check", "--slots", "256", "--strategies", "fixed-home", "--out", big); r.code != 0 {
		t.Fatalf("dsm check --slots 256: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run("dsm", "overhead", "--strategies", "fixed-home", "--sizes", "64K", "--reads", "200", "--iters", "10", "--batches", "1", "--out", big); r.code != 0 {
		t.Fatalf("dsm overhead: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bigRecs, err := results.ReadJSONLFile(big)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, rec := range bigRecs {
		switch {
		case rec.Bench == "dsm-check":
			checked++
		case rec.Params["op"] == "remote-read":
			w, in := rec.Counters["writes"], rec.Counters["writes_in_place"]
			t.Logf("64 KiB remote reads: %v of rank 0's %v writes as a home in place", in, w)
			if w < 200 || in < 1 || in > w {
				t.Errorf("64 KiB remote reads: %v of rank 0's %v writes in place; want at least one, and at least 200 writes", in, w)
			}
			checked++
		case rec.Params["op"] == "cached-write":
			// 8-byte values travel inline, copied: no send ever reads
			// the owner's buffer, so every cached write is in place.
			if w, in := rec.Counters["writes"], rec.Counters["writes_in_place"]; w < 10 || in != w {
				t.Errorf("cached writes: %v of %v in place, want all (at least 10)", in, w)
			}
			checked++
		}
	}
	if checked != 7 {
		t.Errorf("%d records of dsm check (5 workloads), the cached write and the remote read, want 7", checked)
	}
	// A mesh that does not fit the world is refused on every rank with one
	// message, and nothing is written.
	bad := filepath.Join(dir, "bad.jsonl")
	r = run("dsm", "check", "--mesh", "3x3", "--out", bad)
	if r.code != 2 || strings.Count(r.stderr, "--mesh 3x3") != 1 {
		t.Fatalf("mesh 3x3 on 4 ranks: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("%s written on bad input", bad)
	}
}

// TestDSMStrategyListings: every text that lists divalib's strategies says
// what its registry says (divalib.Evaluated), in its order: the dsm
// group's help, each dsm subcommand's --strategies default, and the
// store lists of the applications (the store registry's, app's help).
func TestDSMStrategyListings(t *testing.T) {
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	list := divalib.StrategyList()
	_, help, _ := runCLI(t, "help", "dsm")
	_, appHelp, _ := runCLI(t, "help", "app")
	_, storeHelp, _ := runCLI(t, "help", "app", "matmul")
	for _, tc := range []struct{ name, text, want string }{
		{"dsm help", help, divalib.StrategyForms()},
		{"globalvar.FormsText", globalvar.FormsText(), list},
		{"app help", appHelp, list},
		{"app matmul --store", storeHelp, list},
	} {
		if !strings.Contains(flat(tc.text), tc.want) {
			t.Errorf("%s does not list %q:\n%s", tc.name, tc.want, tc.text)
		}
	}
	for _, d := range dsmexp.Defs() {
		for _, s := range strings.Split(d.Defaults["strategies"], ",") {
			if s != "" && s != dsmexp.Hand && !slices.Contains(divalib.Evaluated(), s) {
				t.Errorf("dsm %s: default strategy %s is not the registry's", d.Name, s)
			}
		}
	}
}
