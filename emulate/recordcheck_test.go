package emulate

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestRecordNetwork: an emulated record's network is one --net accepts,
// serving the record's ranks, with the service ranks and mean hops a run
// on it has; a record as the driver writes it passes.
func TestRecordNetwork(t *testing.T) {
	rec := func(network string, ranks int, hops, service float64) results.Record {
		return results.Record{Bench: BenchKKAccess, Ranks: ranks, Unit: results.UnitSeconds,
			Params:  results.Params{"k": 1, "l": 64, "r": 0.5, "op": "read", "network": network},
			Summary: results.Summarize([]float64{3e-6, 9e-6, 3e-5}),
			Derived: map[string]float64{"hops_mean": hops}, Counters: map[string]float64{"service_ranks": service, "r_asked": 0.5}}
	}
	// A calibration of an application's store names the store.
	store := func(name string) results.Record {
		r := rec(name, 4, 0, 0)
		r.Derived, r.Counters = nil, map[string]float64{"accessing_ranks": 2, "r_realised": 0.5, "r_asked": 0.5}
		return r
	}
	tests := []struct {
		name string
		rec  results.Record
		want string // "" accepted
	}{
		{"mesh(1x2) as measured", rec("mesh(1x2)", 2, 1.52, 2), ""},
		{"torus(4x4) as measured", rec("torus(4x4)", 16, 2.9, 16), ""},
		{"emu_netbad", rec("nosuch(9)", 2, 1.5, 2), `network = "nosuch(9)": topology "nosuch(9)": unknown network "nosuch"; accepted: SE(d)`},
		{"emu_net13", rec("mesh(1x3)", 2, 1.5, 3), `network = "mesh(1x3)" on ranks = 2: the network serves 3 application ranks`},
		{"emu_net_huge", rec("mesh(8589934605x545761658833005647)", 2, 1.5, 2), "sides out of range; accepted 1..64"},
		{"emu_hops", rec("mesh(1x2)", 2, 1e300, 2), "derived hops_mean = 1e+300: a request on mesh(1x2) crosses 1 to 2 links (its application link included), so their mean is in [1, 2]"},
		{"hops below one link", rec("mesh(1x2)", 2, 0.5, 2), "derived hops_mean = 0.5"},
		{"service ranks of another network", rec("mesh(1x2)", 2, 1.5, 9), "counters service_ranks = 9 disagrees with the 2 service nodes of mesh(1x2)"},
		{"an application's store, fixed-home", store("fixed-home"), ""},
		{"an application's store, tree-4", store("tree-4"), ""},
		{"a network without parentheses on the wrong ranks", store("bf3"), `network = "bf3" on ranks = 4: the network serves 8 application ranks`},
		{"an unknown network of the emulation's counters", rec("nosuch", 2, 1.5, 2), `network = "nosuch": topology "nosuch": unknown network "nosuch"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rec.CheckValues()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}
