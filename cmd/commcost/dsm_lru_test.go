package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestDSMCheckLRU: dsm check covers LRU replacement when --memory bounds
// the copies (by default it runs unbounded, and no copy is ever replaced):
// with the smallest bound the suite accepts, every strategy replaces
// copies during the suite, every workload passes, and every record names
// the bound.
func TestDSMCheckLRU(t *testing.T) {
	strategies := []string{"fixed-home", "tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16"}
	var mu sync.Mutex
	evictions := map[string]int64{}
	counting := func(ccfg storecheck.CoherenceConfig, seed int64) []divalib.CheckWorkload {
		var out []divalib.CheckWorkload
		for _, w := range divalib.CheckWorkloads(ccfg, seed) {
			out = append(out, divalib.CheckWorkload{Name: w.Name, Run: func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
				rep, err := w.Run(c, s)
				if st, ok := s.(*divalib.Store); ok {
					mu.Lock()
					evictions[st.Config().Name()] += st.Stats().Evictions
					mu.Unlock()
				}
				return rep, err
			}})
		}
		return out
	}
	def, ok := lookupDSM("check")
	if !ok {
		t.Fatal("dsm check is not registered")
	}
	k := def.Config().(*dsmexp.Check)
	out := filepath.Join(t.TempDir(), "check.jsonl")
	k.Backend, k.NP, k.Ops, k.Strategies, k.Out, k.Memory, k.Workloads = "local", 4, 2000, strategies, out, 512, counting
	if err := k.Validate(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := k.Run(dsmexp.IO{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("dsm check --memory 512: %v\n%s", err, stderr.String())
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(strategies) * len(divalib.CheckWorkloads(storecheck.CoherenceConfig{}, 1)); len(recs) != want {
		t.Fatalf("%d records, want %d (every workload over every strategy)", len(recs), want)
	}
	for _, rec := range recs {
		if mb := fmt.Sprint(rec.Params["memory_bytes"]); mb != "512" {
			t.Errorf("%v: memory_bytes %v, want 512", rec.Params, rec.Params["memory_bytes"])
		}
	}
	t.Logf("copies replaced per strategy: %v", evictions)
	for _, s := range strategies {
		if evictions[s] == 0 {
			t.Errorf("%s: no copy replaced under a 512-byte bound (evictions per strategy: %v)", s, evictions)
		}
	}
}
