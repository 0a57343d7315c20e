package divalib_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestExperimentDemands: the matrix square's and the overhead's needs
// per rank cover what a small run allocates (within a factor: the run
// also allocates the store's protocol state and the local backend's
// message copies), and at sizes no machine holds they name the flag.
func TestExperimentDemands(t *testing.T) {
	alloc := func(p int, run func(c mpi.Comm) error) float64 {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		if err := local.Run(p, run); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / float64(p)
	}
	none := func(results.Record) error { return nil }
	ms := divalib.MatSquareExperiment{Strategies: []string{"hand", "tree-4"}, Store: divalib.Config{Seed: 5}, Blocks: []int{64 * 64}, Kernel: divalib.KernelSum, Reps: 1, Verify: true}
	ov := divalib.OverheadExperiment{Strategies: []string{"fixed-home"}, Store: divalib.Config{Seed: 2}, Iters: 10, Batches: 2, ReadSizes: []int{64 << 10}, Reads: 200}
	tests := []struct {
		name  string
		need  sysmem.Need
		run   func(c mpi.Comm) error
		field string
	}{
		{"matsquare blocks of 4096 ints", ms.Demand(4), func(c mpi.Comm) error { return divalib.RunMatSquare(c, ms, results.Meta{}, none) }, "blocks"},
		{"overhead reads of 64 KiB", ov.Demand(), func(c mpi.Comm) error { return divalib.RunOverhead(c, ov, results.Meta{}, none) }, "sizes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := alloc(4, tc.run)
			est := tc.need.Bytes + tc.need.InFlight
			t.Logf("need %.0f, allocated %.0f per rank (%.2f)", est, got, est/got)
			if tc.need.Field != tc.field || est < 0.3*got || est > 10*got {
				t.Errorf("need %+v against %.0f bytes allocated per rank: want field %q and within [0.3, 10] times", tc.need, got, tc.field)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		need  sysmem.Need
		min   float64
		field string
	}{
		{"matsquare --blocks 1e9", divalib.MatSquareExperiment{Blocks: []int{1e9}}.Demand(16), 4e9 * 14, "blocks"},
		{"overhead --reads 1e12", divalib.OverheadExperiment{ReadSizes: []int{8}, Reads: 1e12}.Demand(), 8e12, "reads"},
		{"overhead --sizes 1G", divalib.OverheadExperiment{ReadSizes: []int{1 << 30}, Reads: 10}.Demand(), 100 << 30, "sizes"},
	} {
		if tc.need.Bytes < tc.min || tc.need.Field != tc.field {
			t.Errorf("%s: need %+v, want at least %.3g bytes for %q", tc.name, tc.need, tc.min, tc.field)
		}
	}
}

// TestDSMRecordParamsChecked: the dsm records read from a file (dsm plot,
// compare, report) must name possible points: a mesh of ROWSxCOLS, a
// positive block.
func TestDSMRecordParamsChecked(t *testing.T) {
	line := func(bench, params string) string {
		return `{"schema":1,"bench":"` + bench + `","params":` + params + `,"ranks":4,"unit":"s","n":1,"min":1e-3,"median":1e-3,"max":1e-3,"ci95":[1e-3,1e-3],"meta":{}}` + "\n"
	}
	tests := []struct{ name, bench, params, want string }{
		{"matsquare", divalib.BenchMatSquare, `{"strategy":"tree-4","mesh":"2x2","block_ints":16,"kernel":"sum"}`, ""},
		{"matsquare mesh 0x4", divalib.BenchMatSquare, `{"strategy":"tree-4","mesh":"0x4","block_ints":16}`, `mesh = "0x4": accepted form is ROWSxCOLS with positive integers`},
		{"matsquare mesh garbage", divalib.BenchMatSquare, `{"strategy":"tree-4","mesh":"big","block_ints":16}`, `mesh = "big"`},
		{"matsquare block -16", divalib.BenchMatSquare, `{"strategy":"tree-4","mesh":"2x2","block_ints":-16}`, "block_ints = -16"},
		{"overhead without mesh", divalib.BenchOverhead, `{"strategy":"fixed-home","op":"cached-read","bytes":8}`, "mesh is missing"},
		{"check of -1 ops", divalib.BenchCheck, `{"strategy":"fixed-home","workload":"coherence","mesh":"2x2","ops":-1}`, "ops = -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(line(tc.bench, tc.params)))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
}
