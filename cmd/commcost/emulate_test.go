package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestEmulateBadInput: every bad input of the emulate subcommands is a usage
// error (exit 2) with one message naming the flag, and nothing is written.
func TestEmulateBadInput(t *testing.T) {
	dir, out := badInputDir(t)
	local := []string{"--backend", "local", "--out", out, "--min-reps", "1", "--max-reps", "1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"emulate"}, "emulate needs a subcommand: info, kk, kaccess, split or selftest"},
		{"unknown subcommand", []string{"emulate", "route"}, `emulate "route": unknown subcommand`},
		{"wrong rank count", append([]string{"emulate", "kk", "--net", "BF(2)", "--np", "8"}, local...), "--np 8: --net BF(2) needs 4 application + 12 service ranks = 16; give --np 16"},
		{"rank count names --np and --net as given", append([]string{"emulate", "kk", "--net", "se(1)", "--np", "3"}, local...), "--np 3: --net se(1) needs 2 application + 2 service ranks = 4; give --np 4"},
		{"rank count above the network's", append([]string{"emulate", "kk", "--net", "SE(1)", "--np", "5"}, local...), "--np 5: --net SE(1) needs 2 application + 2 service ranks = 4; give --np 4"},
		{"rank count of the default network", append([]string{"emulate", "kaccess", "--np", "3"}, local...), "--np 3: --net BF(2) needs 4 application + 12 service ranks = 16; give --np 16"},
		{"store network's rank count", append([]string{"app", "samplesort", "--np", "3", "--store", "emulate:SE(1)"}, local...), "--store emulate:SE(1): on --np 3: the network needs 2 application + 2 service ranks = 4"},
		{"stall beyond a duration", append([]string{"emulate", "kk", "--net", "HC(2)", "--np", "8", "--stall", "1e10"}, local...), "--stall 1e10: must be a positive number of seconds, at most 1e+09"},
		{"wrong rank count BF(3)", []string{"emulate", "selftest", "--net", "BF(3)", "--np", "16", "--backend", "local"}, "--np 16: --net BF(3) needs 8 application + 32 service ranks = 40; give --np 40"},
		{"info wrong rank count", []string{"emulate", "info", "--net", "SE(3)", "--np", "8"}, "--np 8: --net SE(3) needs 8 application + 8 service ranks = 16"},
		{"unknown topology", append([]string{"emulate", "kk", "--net", "ring(4)"}, local...), `--net ring(4)`},
		{"dimension too large", append([]string{"emulate", "kk", "--net", "BF(12)"}, local...), "dimension out of range; accepted 1..9"},
		{"dimension too small", append([]string{"emulate", "kaccess", "--net", "CCC(1)"}, local...), "dimension out of range; accepted 2..9"},
		{"mesh sides", []string{"emulate", "info", "--net", "mesh(0x3)"}, "sides out of range"},
		{"info format not a table", []string{"emulate", "info", "--format", "csv"}, "--format csv: emulate info prints tables: accepted are table and markdown"},
		{"variable larger than a module", append([]string{"emulate", "kk", "--net", "SE(2)", "--l", "2M", "--module-mem", "1M"}, local...), "does not fit in a module's memory"},
		{"split variable larger than a module", append([]string{"emulate", "split", "--net", "SE(2)", "--ints", "16,1M", "--module-mem", "1M", "--versions", "1,2"}, local...), "--ints 16,1M"},
		{"packet length 0", append([]string{"emulate", "kk", "--net", "SE(2)", "--l", "0"}, local...), "--l 0: packet length 0"},
		{"packet length 0 in a list", append([]string{"emulate", "kaccess", "--net", "SE(2)", "--l", "64,0"}, local...), "packet length 0"},
		{"version-2 packet 0", append([]string{"emulate", "split", "--net", "SE(2)", "--packet", "0"}, local...), "--packet 0"},
		{"calibration packet 0", append([]string{"emulate", "split", "--net", "SE(2)", "--cal-l", "0,64"}, local...), "--cal-l 0,64"},
		{"r out of range", append([]string{"emulate", "kk", "--net", "SE(2)", "--r", "0,1"}, local...), "--r 0,1"},
		{"h below 1/p", append([]string{"emulate", "kaccess", "--net", "BF(2)", "--h", "0.1"}, local...), "below 1/p; accepted: [1/p, 1] = [0.25, 1] for BF(2)"},
		{"es not boolean", append([]string{"emulate", "kaccess", "--net", "BF(2)", "--es", "maybe"}, local...), "--es maybe"},
		{"op unknown", append([]string{"emulate", "kk", "--net", "SE(2)", "--op", "swap"}, local...), "--op swap"},
		{"version unknown", append([]string{"emulate", "split", "--net", "SE(2)", "--versions", "1,4"}, local...), "--versions 1,4"},
		{"placement unknown", append([]string{"emulate", "kk", "--net", "SE(2)", "--placement", "random"}, local...), "--placement random"},
		{"module memory zero", append([]string{"emulate", "kk", "--net", "SE(2)", "--module-mem", "0"}, local...), "--module-mem 0"},
		{"sync unknown", append([]string{"emulate", "kk", "--net", "SE(2)", "--sync", "clock"}, local...), "--sync clock"},
		{"link slots zero", append([]string{"emulate", "kk", "--net", "SE(2)", "--link-slots", "0"}, local...), "--link-slots 0"},
		{"fit file missing", append([]string{"emulate", "split", "--net", "SE(2)", "--fit", filepath.Join(dir, "none.jsonl")}, local...), "--fit"},
		{"calibration too small", append([]string{"emulate", "split", "--net", "SE(2)", "--cal-r", "1"}, local...), "needs at least 2 levels"},
		// A repeated level is one level: refused before anything is
		// measured, as optimize refuses it, not after the sweep by the fit.
		{"calibration r repeated", append([]string{"emulate", "split", "--net", "SE(2)", "--cal-r", "1,1"}, local...), "--cal-r 1,1: 1 is listed twice"},
		{"calibration r one level", append([]string{"emulate", "split", "--net", "SE(2)", "--cal-r", "1"}, local...), "--cal-r 1: the trilinear fit needs at least 2 levels"},
		{"calibration k repeated", append([]string{"emulate", "split", "--net", "SE(2)", "--cal-k", "2,2,2"}, local...), "--cal-k 2,2,2: 2 is listed twice"},
		{"fit without version 3", append([]string{"emulate", "split", "--net", "SE(2)", "--versions", "1,2", "--fit", filepath.Join(dir, "none.jsonl")}, local...), "--versions 1,2 leaves it out"},
		{"calibration without version 3", append([]string{"emulate", "split", "--net", "SE(2)", "--versions", "2", "--cal-k", "1,2,4"}, local...), "--cal-k: the calibration sweep is not measured with --versions 2"},
		{"fit with calibration flags", append([]string{"emulate", "split", "--net", "SE(2)", "--fit", filepath.Join(dir, "none.jsonl"), "--cal-r", "0.5,1"}, local...), "--cal-r: the calibration sweep is not measured with --fit"},
		// Flags the emulation does not read are not offered (the emulated
		// accesses carry no check pattern; a repetition is one instance).
		{"validate", append([]string{"emulate", "kk", "--net", "SE(2)", "--validate"}, local...), "--validate: no such flag"},
		{"iters", append([]string{"emulate", "kaccess", "--net", "SE(2)", "--iters", "5"}, local...), "--iters: no such flag"},
		{"warmup negative", append([]string{"emulate", "kk", "--net", "SE(2)", "--warmup", "-1"}, local...), "--warmup -1"},
		{"seed zero", append([]string{"emulate", "kk", "--net", "SE(2)", "--seed", "0"}, local...), "--seed 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// TestEmulateFlags: the measuring emulate subcommands bind the pattern
// sweeps' repetition flags with the emulation's defaults, and --np
// defaults to the ranks the network needs.
func TestEmulateFlags(t *testing.T) {
	def := patterns.Reps{MinReps: patterns.DefaultMinReps, MaxReps: emulate.DefaultMaxReps, MaxTime: emulate.DefaultMaxTime, RelCI: patterns.DefaultRelCI, ResyncSec: patterns.DefaultResyncSec}
	tests := []struct {
		name string
		args []string
		want func(r patterns.Reps) patterns.Reps
		np   int
	}{
		{"defaults", nil, func(r patterns.Reps) patterns.Reps { return r }, 16},
		{"no warm-up, window start", []string{"--warmup", "0", "--sync", "window", "--np", "16"},
			func(r patterns.Reps) patterns.Reps { r.Warmup, r.Sync = -1, patterns.SyncWindow; return r }, 16},
		{"repetitions", []string{"--warmup", "3", "--min-reps", "4", "--max-reps", "9", "--max-time", "0.5", "--rel-ci", "0.1", "--net", "SE(3)"},
			func(r patterns.Reps) patterns.Reps {
				r.Warmup, r.MinReps, r.MaxReps, r.MaxTime, r.RelCI = 3, 4, 9, 0.5, 0.1
				return r
			}, 16},
		{"mesh", []string{"--net", "mesh(2x3)"}, func(r patterns.Reps) patterns.Reps { return r }, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j emulate.KKJob
			var launch job.Launch
			var out job.Output
			if _, err := bindEmulate(cli.NewFlagSet("emulate kk", io.Discard), &j, &launch, &out, tt.args); err != nil {
				t.Fatal(err)
			}
			if got, want := j.Bench(results.Meta{}).Reps, tt.want(def); got != want || launch.NP != tt.np || j.Seed != 1 {
				t.Errorf("reps %+v np %d seed %d, want %+v np %d seed 1", got, launch.NP, j.Seed, want, tt.np)
			}
		})
	}
}

// TestEmulateNetworkListings: the emulate group's usage and every
// subcommand's --net help list the network registry's forms.
func TestEmulateNetworkListings(t *testing.T) {
	forms := emulate.NetworkForms()
	code, out, _ := runCLI(t, "help", "emulate")
	if code != 0 || !strings.Contains(out, "Networks: "+forms+".") {
		t.Errorf("emulate usage (exit %d) does not list %q:\n%s", code, forms, out)
	}
	for _, leaf := range cli.Lookup("emulate").Leaves() {
		code, out, _ := runCLI(t, append([]string{"help"}, strings.Fields(leaf.Name)...)...)
		if code != 0 || !strings.Contains(out, "service network: "+forms+" (default") {
			t.Errorf("%s --help (exit %d) does not list %q under --net:\n%s", leaf.Name, code, forms, out)
		}
	}
}

// TestEmulateInfoGolden: the partition and the network's figures; nothing
// in it depends on the machine.
func TestEmulateInfoGolden(t *testing.T) {
	for _, tc := range []struct{ name, net string }{
		{"emulate_info_bf2", "BF(2)"},
		{"emulate_info_se3", "SE(3)"},
	} {
		code, out, errs := runCLI(t, "emulate", "info", "--net", tc.net, "--np", "16")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.net, code, errs)
		}
		golden(t, tc.name, out)
	}
	code, out, _ := runCLI(t, "emulate", "info", "--net", "SE(2)", "--routes")
	if code != 0 || !strings.Contains(out, "routing tables") {
		t.Fatalf("--routes: exit %d\n%s", code, out)
	}
}

// TestEmulateLocal runs each measuring subcommand on the local backend (an
// exercise of the CLI path, not a network measurement) and checks what it
// writes.
func TestEmulateLocal(t *testing.T) {
	dir := t.TempDir()
	quick := []string{"--backend", "local", "--min-reps", "3", "--max-reps", "3", "--warmup", "0", "--format", "jsonl"}

	kk := filepath.Join(dir, "kk.jsonl")
	code, _, errs := runCLI(t, append([]string{"emulate", "kk", "--net", "SE(2)", "--k", "1,2", "--l", "64,128", "--r", "0.5,1", "--sync", "window", "--out", kk}, quick...)...)
	if code != 0 {
		t.Fatalf("kk: exit %d: %s", code, errs)
	}
	recs := emuRecords(t, kk)
	if len(recs) != 8 {
		t.Fatalf("kk: %d records, want 2 k x 2 l x 2 r = 8", len(recs))
	}
	for _, r := range recs {
		if r.Bench != "kkaccess" || r.Params["network"] != "SE(2)" || r.Params["op"] != "read" || r.Counters["packets"] <= 0 || r.Reduction != results.ReductionWindowLatestEnd {
			t.Fatalf("kk record: %+v", r)
		}
	}

	ka := filepath.Join(dir, "ka.jsonl")
	code, _, errs = runCLI(t, append([]string{"emulate", "kaccess", "--net", "BF(2)", "--k", "4", "--l", "64", "--h", "1/p,1", "--a", "1,16", "--es", "false,true", "--out", ka}, quick...)...)
	if code != 0 {
		t.Fatalf("kaccess: exit %d: %s", code, errs)
	}
	// es=false: 2 h x 2 a; es=true: a = 1 is skipped (nothing to keep the
	// same), so 2 more.
	if recs := emuRecords(t, ka); len(recs) != 6 || fmt.Sprint(recs[0].Params["h"]) != "0.25" ||
		fmt.Sprint(recs[5].Params["h"]) != "1" || fmt.Sprint(recs[5].Params["a"]) != "16" || recs[5].Params["es"] != true {
		t.Fatalf("kaccess: %d records, first %v, last %v", len(recs), recs[0].Params, recs[len(recs)-1].Params)
	}

	sp := filepath.Join(dir, "split.jsonl")
	code, _, errs = runCLI(t, append([]string{"emulate", "split", "--net", "BF(2)", "--ints", "16,2K", "--cal-k", "1,2,4", "--cal-l", "64,256,1K", "--cal-r", "0.5,1", "--out", sp}, quick...)...)
	if code != 0 {
		t.Fatalf("split: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "trilinear model of BF(2)") {
		t.Errorf("split: stderr does not show the fitted model: %q", errs)
	}
	var split []results.Record
	for _, r := range emuRecords(t, sp) {
		if r.Bench == "packetsplit" {
			split = append(split, r)
		}
	}
	if len(split) != 6 {
		t.Fatalf("split: %d packetsplit records, want 2 sizes x 3 versions", len(split))
	}
	if _, ok := split[4].Derived["speedup_v2_over_v1"]; !ok || fmt.Sprint(split[4].Params["version"]) != "2" {
		t.Fatalf("split: version-2 record lacks its speedup: %+v", split[4])
	}
	if _, ok := split[5].Derived["speedup_total"]; !ok {
		t.Fatalf("split: version-3 record lacks the total speedup: %+v", split[5])
	}

	// Version 3 from a fitted file: the kk records of SE(2) above are too few
	// for eight coefficients, and the error says so.
	code, _, errs = runCLI(t, append([]string{"emulate", "split", "--net", "SE(2)", "--fit", kk}, quick...)...)
	if code != 2 || !strings.Contains(errs, "--fit") {
		t.Fatalf("split --fit with 8 cells: exit %d: %s", code, errs)
	}

	code, out, errs := runCLI(t, "emulate", "selftest", "--backend", "local", "--net", "CCC(2)")
	if code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("selftest: exit %d\n%s%s", code, out, errs)
	}
}

// TestEmulateSplitCSV: the records of a split with its calibration are of
// two benches, printed as one CSV table with the union of their columns.
func TestEmulateSplitCSV(t *testing.T) {
	code, out, errs := runCLI(t, "emulate", "split", "--backend", "local", "--net", "SE(2)", "--ints", "16", "--versions", "1,3",
		"--cal-k", "1,2,4", "--cal-l", "64,256,1K", "--cal-r", "0.5,1", "--min-reps", "3", "--max-reps", "3", "--warmup", "0", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 1+18+2 || !slices.Contains(rows[0], "param_version") || !slices.Contains(rows[0], "param_r") {
		t.Fatalf("%d CSV rows (%v), want a header, 18 kkaccess and 2 packetsplit records:\n%s", len(rows), err, out)
	}
}

func emuRecords(t *testing.T, path string) []results.Record {
	t.Helper()
	recs, err := results.ReadJSONLFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestMPIRunEmulate runs the emulation under real mpirun: BF(2) on
// 4 application + 12 service ranks (oversubscribed on a small machine).
// The selftest checks that reads return what was written, barriers hold,
// a hot spot (h = 1, a = 16) does not hang, and no message is lost; a small
// k-k-access sweep and a hot-spot k-access sweep write records.
func TestMPIRunEmulate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the mpirun integration test")
	}
	bin := commcostBinary(t)
	dir := t.TempDir()
	run := func(np int, args ...string) cmdResult {
		t.Helper()
		limit := mpirun.HangLimit(3*time.Minute, np)
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		cmd, err := mpirun.Command(ctx, np, bin, args...)
		if err != nil {
			t.Skip(err)
		}
		r := runCmd(t, cmd)
		if ctx.Err() != nil {
			t.Fatalf("%v: hung (killed after %v)\n%s%s", args, limit, r.stdout, r.stderr)
		}
		return r
	}
	r := run(16, "emulate", "selftest", "--net", "BF(2)")
	if r.code != 0 || !strings.Contains(r.stdout, "PASS") {
		t.Fatalf("selftest BF(2): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The sweeps' records are checked for their number and fields, not
	// their precision: --max-reps 10 keeps each point from repeating up
	// to the default 1000 times within --max-time.
	out := filepath.Join(dir, "emu.jsonl")
	r = run(16, "emulate", "kk", "--net", "BF(2)", "--k", "1,4", "--l", "64,1K", "--r", "0.5,1",
		"--min-reps", "3", "--max-reps", "10", "--max-time", "0.5", "--out", out)
	if r.code != 0 {
		t.Fatalf("kk BF(2): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(16, "emulate", "kaccess", "--net", "BF(2)", "--k", "4", "--l", "256", "--h", "1", "--a", "16", "--es", "true",
		"--min-reps", "3", "--max-reps", "10", "--max-time", "0.5", "--out", out)
	if r.code != 0 {
		t.Fatalf("kaccess h=1 a=16 BF(2): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs := emuRecords(t, out)
	if len(recs) != 9 {
		t.Fatalf("%d records, want 8 kkaccess + 1 kaccess", len(recs))
	}
	for _, rec := range recs {
		if rec.Meta.Backend != "native" || rec.Params["network"] != "BF(2)" || rec.Ranks != 4 || !(rec.Median > 0) {
			t.Fatalf("record: %+v", rec)
		}
	}
	// Figure 14 with its own calibration: the model is fitted on rank 0 and
	// broadcast to the application ranks (optsplit), reported once.
	split := filepath.Join(dir, "split.jsonl")
	r = run(16, "emulate", "split", "--net", "BF(2)", "--ints", "16,1K", "--cal-k", "1,2,4", "--cal-l", "64,256,1K", "--cal-r", "0.5,1",
		"--min-reps", "3", "--max-reps", "10", "--max-time", "0.3", "--out", split)
	if r.code != 0 || strings.Count(r.stderr, "trilinear model of BF(2)") != 1 {
		t.Fatalf("split BF(2): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var cells, versions int
	for _, rec := range emuRecords(t, split) {
		switch {
		case rec.Bench == "kkaccess" && rec.Meta.Backend == "native":
			cells++
		case rec.Bench == "packetsplit" && rec.Ranks == 4 && rec.Median > 0 && rec.Derived[optsplit.DerivedPredicted] != 0:
			versions++
		default:
			t.Errorf("split record: %+v", rec)
		}
	}
	if cells != 18 || versions != 6 {
		t.Errorf("split: %d calibration and %d version records, want 18 and 2 sizes x 3 versions", cells, versions)
	}
	// A wrong rank count is a usage error on every rank, and nothing is
	// written.
	bad := filepath.Join(dir, "bad.jsonl")
	r = run(8, "emulate", "kk", "--net", "BF(2)", "--out", bad)
	if r.code != 2 || !strings.Contains(r.stderr, "mpirun -np 8: --net BF(2) needs 4 application + 12 service ranks = 16 (run: mpirun -np 16") {
		t.Fatalf("8 ranks for BF(2): exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("%s written on bad input", bad)
	}
}
