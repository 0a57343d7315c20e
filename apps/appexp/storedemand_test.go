package appexp

import (
	"math"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
)

// TestStoreRunDemand: the need per rank of each store program, by hand
// from the formulas of apps/storedemand.go and StoreRun.storeDemand, on
// the direct store (homes, the 4 MiB request receive) and on divalib
// (homes and copies, a variable whole in flight), on ranks that are not
// powers of two where the program allows them.
func TestStoreRunDemand(t *testing.T) {
	fh := divalib.Config{Strategy: divalib.FixedHome}
	tree := divalib.Config{Strategy: divalib.AccessTree}
	const req = 4<<20 + 16 // the direct store's request receive
	mm := apps.MatMul{N: 600, Access: apps.Access{K: 4, L: 1024}}
	mmSync := mm
	mmSync.Sync = true
	// S = 600^2/3 * 4 = 480000; arrays S + 2 x 4S, 469 packets of 104 B.
	const s, mmArrays = 480000.0, 9*480000.0 + 469*104
	// K = 25600: 3K kept, runs of 9K + K/64 + 12K/64, 200 + 6 packets.
	const ssK = 25600.0
	ssArrays := 3*ssK + 2*(9*ssK+ssK/64+12*ssK/64) + 206*104
	// n = 1024, p = 4: A = 65536, F = 4096, 6553.6 edges.
	ccRun := 65536 + 3*4096 + 16384 + (1.5*8*6553.6 + 24*1024 + 1024 + 4096)
	ccArrays := 4096 + 2*ccRun + 256*104
	tests := []struct {
		name     string
		configs  []apps.App
		store    globalvar.Strategy
		p        int
		cal      *apps.KKCalibration // nil: given models, no calibration
		bytes    float64
		inFlight float64
		field    string
	}{
		{"matmul direct p=3", []apps.App{mm}, nil, 3, nil, req + 3*s + mmArrays, 4096, "n"},
		{"matmul fixed-home p=3", []apps.App{mm}, fh, 3, nil, 3*s + 5*s + mmArrays, s, "n"},
		{"matmul two configs keep both", []apps.App{mm, mmSync}, nil, 3, nil, req + 6*s + mmArrays, 4096, "n"},
		{"samplesort direct p=6", []apps.App{apps.SampleSort{N: 6400, Access: apps.Access{K: 1, L: 256}}}, nil, 6, nil,
			req + 2*ssK + 400 + 24 + ssArrays, 256, "n"},
		{"samplesort tree-4 p=6", []apps.App{apps.SampleSort{N: 6400, Access: apps.Access{K: 1, L: 256}}}, tree, 6, nil,
			7*(2*ssK+400+24) + ssArrays, 2 * ssK, "n"},
		{"concomp direct p=4", []apps.App{apps.ConnComp{N: 1024, Access: apps.Access{K: 1, L: 256}}}, nil, 4, nil,
			req + 65536 + 4096 + ccArrays, 256, "n"},
		{"concomp p=3 refused by Check", []apps.App{apps.ConnComp{N: 1024, Access: apps.Access{K: 1, L: 256}}}, nil, 3, nil, 0, 0, ""},
		{"bitonic tree-4 p=8", []apps.App{apps.BitonicSort{N: 1000, Access: apps.Access{K: 4, L: 256}}}, tree, 8, nil,
			4000 + 4*4000 + 9*4000 + 16*104, 4000, "n"},
		// The sweep's largest point (k = 4, l = 4M writes: 3 slots, 4
		// requests of 16 + l, 4 answers) outgrows the program.
		{"matmul direct calibration l=4M", []apps.App{mm}, nil, 3,
			&apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1, 2}, L: []int{64, 4 << 20}, R: []float64{0.5, 1}}},
			req + 3*s + 3*(4<<20) + 4*(16+4<<20) + 4*16, 4 * (4<<20 + 32), "l"},
		// StoreKKAccess keeps each point's modules: 3 l a rank, its own
		// copy and min(k, 3) it accesses on a caching store.
		{"matmul fixed-home calibration kept", []apps.App{mm}, fh, 3,
			&apps.KKCalibration{KKGrid: patterns.KKGrid{K: []int{1}, L: []int{64}, R: []float64{1}}},
			2*(576+9216+960+15360) + 8*s + mmArrays, s, "n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := StoreRun{Configs: tc.configs}
			if tc.store != nil {
				r.Stores = []globalvar.Strategy{tc.store}
			}
			if tc.cal != nil {
				r.Calibration = *tc.cal
			} else {
				r.Models = []model.Model{nil}
			}
			got := r.Demand(tc.p)
			if math.Abs(got.Bytes-tc.bytes) > 1e-6*tc.bytes+1 || math.Abs(got.InFlight-tc.inFlight) > 1 || got.Field != tc.field {
				t.Errorf("Demand(%d) = %.1f bytes, %.1f in flight, field %q; want %.1f, %.1f, %q (%s)",
					tc.p, got.Bytes, got.InFlight, got.Field, tc.bytes, tc.inFlight, tc.field, got.What)
			}
		})
	}
}
