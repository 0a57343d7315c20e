package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/results"
)

// appSmall are small sizes of each application, for runs under mpirun.
var appSmall = map[string][]string{
	"matmul":     {"--n", "64", "--k", "2", "--l", "256"},
	"concomp":    {"--n", "256", "--k", "2", "--l", "128"},
	"bitonic":    {"--n", "1K", "--k", "2", "--l", "256"},
	"samplesort": {"--n", "1K", "--k", "2", "--l", "256"},
}

// TestMPIRunApps runs paper 000's four applications under real mpirun: on
// 4 ranks over the direct store and every divalib strategy, and on the 16
// ranks of the emulated butterfly BF(2) (4 application ranks), each
// verifying its result (a failed check exits 1), with --model files; every
// store and phase must be in the records, the communication phases
// predicted.
func TestMPIRunApps(t *testing.T) {
	bin := commcostBinary(t)
	dir := t.TempDir()
	rd, wr := triModels(t, dir)
	quick := []string{"--min-reps", "3", "--max-reps", "3", "--warmup", "0", "--model", rd, "--model", wr, "--format", "csv"}
	for _, tc := range []struct {
		np     int
		stores []string
	}{
		{4, []string{"direct", "fixed-home", "tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16"}},
		{16, []string{"BF(2)"}},
	} {
		for _, name := range []string{"matmul", "concomp", "bitonic", "samplesort"} {
			t.Run(fmt.Sprintf("%s/%s", name, tc.stores[0]), func(t *testing.T) {
				out := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", name, tc.np))
				store := strings.Join(tc.stores, ",")
				if tc.np == 16 {
					store = "emulate:" + store
				}
				args := append(append([]string{"app", name}, appSmall[name]...), quick...)
				args = append(args, "--store", store, "--out", out)
				r := underMPI(t, tc.np, bin, args...)
				if r.code != 0 {
					t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				recs, err := results.ReadJSONLFile(out)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for _, rec := range recs {
					st, _ := rec.Params["store"].(string)
					seen[st] = true
					if rec.Meta.Backend != "native" || rec.Ranks != 4 || rec.N != 3 || !(rec.Median > 0) {
						t.Errorf("record %v: backend %s ranks %d n %d median %g", rec.Params, rec.Meta.Backend, rec.Ranks, rec.N, rec.Median)
					}
					if rec.Params["kind"] == apps.KindComm && !(rec.Derived["pred_trilinear_s"] > 0) {
						t.Errorf("%s %v: no prediction", st, rec.Params["phase"])
					}
				}
				for _, st := range tc.stores {
					if !seen[st] {
						t.Errorf("no record of store %s (have %v)", st, slices.Sorted(maps.Keys(seen)))
					}
				}
			})
		}
	}
}
