package divalib_test

import (
	"reflect"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/results"
)

// TestRecords: the library builds the records of commcost dsm (the CLI only
// writes them), with the documented rank reduction and stop values, the
// mesh named once ("RxC"), ranks = the mesh's processors, and records that
// every writer accepts.
func TestRecords(t *testing.T) {
	mesh := divalib.Mesh{Rows: 2, Cols: 3}
	meta := results.Meta{Backend: "local", Seed: 7}
	hand := divalib.MatSquareResult{Strategy: "hand", Mesh: mesh, BlockInts: 16,
		Congestion: divalib.Congestion{MaxLinkBytes: 100}, CommSec: []float64{1, 2, 3}}
	tree := divalib.MatSquareResult{Strategy: "tree-4", Mesh: mesh, BlockInts: 16, Verified: true,
		Congestion: divalib.Congestion{MaxLinkBytes: 250, Startups: 9}, CommSec: []float64{4, 4, 5}}
	ovh := divalib.Overhead{CachedReadSec: []float64{1e-7}, CachedWriteSec: []float64{2e-7},
		BarrierSec: []float64{1e-5}, MPIBarrierSec: []float64{5e-6}}
	rep := storecheck.Report{Ops: 40, Reads: 30, Writes: 10, StaleReads: 1}
	recs := []results.Record{
		divalib.CheckRecord("tree-4", "coherence", mesh, 4096, rep, 0.25, meta),
		divalib.CheckRecord("fixed-home", "errors", mesh, 0, storecheck.Report{}, 0.5, meta),
		tree.Record(divalib.MatSquareConfig{Kernel: divalib.KernelSum}, &hand, meta),
		hand.Record(divalib.MatSquareConfig{Kernel: divalib.KernelMul}, nil, meta),
	}
	recs = append(recs, ovh.Records("fixed-home", divalib.BarrierCentral, mesh, meta)...)
	recs = append(recs, divalib.RemoteReadRecord("fixed-home", 4096, mesh, []float64{3e-6, 2e-6, 4e-6}, [2]int64{200, 200}, meta))
	tests := []struct {
		name      string
		bench     string
		params    results.Params
		reduction string
		median    float64
		counters  map[string]float64
		derived   map[string]float64
	}{
		{"check with memory bound", divalib.BenchCheck,
			results.Params{"strategy": "tree-4", "workload": "coherence", "mesh": "2x3", "ops": 40, "memory_bytes": 4096},
			results.ReductionRank0Wall, 0.25, map[string]float64{"ops": 40, "reads": 30, "writes": 10, "stale_reads": 1}, nil},
		{"check unbounded", divalib.BenchCheck,
			results.Params{"strategy": "fixed-home", "workload": "errors", "mesh": "2x3", "ops": 0},
			results.ReductionRank0Wall, 0.5, map[string]float64{"mismatches": 0}, nil},
		{"matsquare against hand", divalib.BenchMatSquare,
			results.Params{"strategy": "tree-4", "mesh": "2x3", "block_ints": 16, "kernel": "sum"},
			results.ReductionMaxOverRanks, 4, map[string]float64{"congestion_bytes": 250, "startups": 9, "verified": 1},
			map[string]float64{"congestion_ratio": 2.5, "time_ratio": 2}},
		{"matsquare hand", divalib.BenchMatSquare,
			results.Params{"strategy": "hand", "mesh": "2x3", "block_ints": 16, "kernel": "mul"},
			results.ReductionMaxOverRanks, 2, map[string]float64{"congestion_bytes": 100}, map[string]float64{}},
		{"overhead cached read", divalib.BenchOverhead,
			results.Params{"strategy": "fixed-home", "op": "cached-read", "bytes": 8, "mesh": "2x3"}, results.ReductionRank0, 1e-7, nil, nil},
		{"overhead cached write", divalib.BenchOverhead,
			results.Params{"strategy": "fixed-home", "op": "cached-write", "bytes": 8, "mesh": "2x3"}, results.ReductionRank0, 2e-7, nil, nil},
		{"overhead store barrier", divalib.BenchOverhead,
			results.Params{"strategy": "fixed-home", "op": "barrier-central", "bytes": 0, "mesh": "2x3"}, results.ReductionMaxOverRanks, 1e-5, nil, nil},
		{"overhead MPI barrier", divalib.BenchOverhead,
			results.Params{"strategy": "fixed-home", "op": "mpi-barrier", "bytes": 0, "mesh": "2x3"}, results.ReductionMaxOverRanks, 5e-6, nil, nil},
		{"overhead remote read", divalib.BenchOverhead,
			results.Params{"strategy": "fixed-home", "op": "remote-read", "bytes": 4096, "mesh": "2x3"}, results.ReductionMaxOverRanks, 3e-6, nil, nil},
	}
	if len(recs) != len(tests) {
		t.Fatalf("%d records, want %d", len(recs), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recs[i]
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if r.Bench != tt.bench || r.Ranks != 6 || r.Unit != results.UnitSeconds || r.Reduction != tt.reduction || r.Stop != results.StopFixed {
				t.Errorf("bench %q ranks %d unit %q reduction %q stop %q", r.Bench, r.Ranks, r.Unit, r.Reduction, r.Stop)
			}
			if !reflect.DeepEqual(r.Params, tt.params) {
				t.Errorf("params %v, want %v", r.Params, tt.params)
			}
			if r.Median != tt.median || r.Meta.Seed != meta.Seed {
				t.Errorf("median %v (want %v), meta %+v", r.Median, tt.median, r.Meta)
			}
			for k, v := range tt.counters {
				if got, ok := r.Counters[k]; !ok || got != v {
					t.Errorf("counter %s = %v (present %v), want %v", k, got, ok, v)
				}
			}
			if tt.derived != nil && !reflect.DeepEqual(r.Derived, tt.derived) {
				t.Errorf("derived %v, want %v", r.Derived, tt.derived)
			}
		})
	}
}
