package apps

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestAppRecordValuesChecked: application records as Measure and
// Annotate write them are read back; edited so that a kind, store,
// derived value or counter is none the writers write (a comm phase
// marked sync, a store no family parses, a measured median other than
// the median, a phase count of another program, an envelope beyond
// ranks x the fastest repetition, sample sort's counters beyond their
// definitions), they are refused naming the value.
func TestAppRecordValuesChecked(t *testing.T) {
	gauss := `"params":{"app":"gauss","phase":"pivotbcast","kind":"comm","n":12,"matrix":"dd","variant":"async"}`
	matmul := `"params":{"app":"matmul","phase":"mm","kind":"comm","n":12,"k":1,"l":8,"sync":false,"store":"direct"}`
	ss := `"params":{"app":"samplesort","phase":"splitter","kind":"comm","n":128,"k":1,"l":8,"store":"direct"}`
	mg := `"params":{"app":"multigrid","phase":"exchange","kind":"comm","n":7,"iters":1,"variant":"async","cycles":1,"plane_bytes":392}`
	line := func(params, rest string) string {
		return withWorkload(`{"schema":1,"bench":"app",` + params + `,"ranks":4,"unit":"s","n":3,"min":2e-4,"median":3e-4,"mean":3e-4,"max":4e-4,"ci95":[2e-4,4e-4],"meta":{}` + rest + "}\n")
	}
	gaussDerived := func(d string) string { return line(gauss, `,"derived":{"run_phases":4,"envelope_s":2.5e-4`+d+`}`) }
	tests := []struct{ name, line, want string }{
		{"gauss as written", gaussDerived(`,"measured_s":3e-4,"measured_median_s":3e-4`), ""},
		{"gauss on the envelope", gaussDerived(`,"measured_s":2.5e-4,"measured_envelope_s":2.5e-4`), ""},
		{"matmul over an emulated network", line(strings.Replace(matmul, `"direct"`, `"mesh(2x2)"`, 1), ""), ""},
		{"matmul over a network of other ranks", line(strings.Replace(matmul, `"direct"`, `"mesh(64x64)"`, 1), ""),
			`store = "mesh(64x64)" names no store a run on these ranks had: accepted are direct, fixed-home`},
		{"matmul over a network of sides beyond emulation", line(strings.Replace(matmul, `"direct"`, `"mesh(8589934605x545761658833005647)"`, 1), ""),
			"as a network: network = \"mesh(8589934605x545761658833005647)\""},
		{"matmul over a network in capitals", line(strings.Replace(matmul, `"direct"`, `"MESH(2x2)"`, 1), ""), `the emulation writes this network "mesh(2x2)"`},
		{"matmul over a network with spaces", line(strings.Replace(matmul, `"direct"`, `"mesh(2 x 2)"`, 1), ""), `the emulation writes this network "mesh(2x2)"`},
		{"matmul over a network as its --store spelling", line(strings.Replace(matmul, `"direct"`, `"emulate:mesh(2x2)"`, 1), ""), `store = "emulate:mesh(2x2)": a run on this store writes it "mesh(2x2)"`},
		{"matmul over a tree as written", line(strings.Replace(matmul, `"direct"`, `"tree-2-4"`, 1), ""), ""},
		{"samplesort as written", line(ss, `,"counters":{"expansion":1.25,"sample_keys":2}`), ""},
		{"mm_store", line(strings.Replace(matmul, `"direct"`, `"nosuch"`, 1), ""), `matmul: store = "nosuch" names no store a run on these ranks had: accepted are direct, fixed-home`},
		{"ga_kind", line(strings.Replace(gauss, `"comm"`, `"sync"`, 1), ""), `gauss: kind = "sync", but phase pivotbcast is a comm phase`},
		{"measured_median_s", gaussDerived(`,"measured_s":7.003,"measured_median_s":7.003`), "derived measured_median_s = 7.003 disagrees with the median = 0.0003"},
		{"measured_s", gaussDerived(`,"measured_s":7.003,"measured_median_s":3e-4`), "derived measured_s = 7.003 disagrees with measured_median_s = 0.0003, the statistic it names"},
		{"measured_fastest_s", gaussDerived(`,"measured_fastest_s":3e-4`), "derived measured_fastest_s = 0.0003 disagrees with the fastest repetition (min) = 0.0002"},
		{"run_phases", line(gauss, `,"derived":{"run_phases":47}`), "derived run_phases = 47, but a run of these parameters times 4 phases (pivotbcast, eliminate, xbcast, backsolve)"},
		{"envelope_s", line(gauss, `,"derived":{"envelope_s":7}`), "derived envelope_s = 7 is more than ranks x the fastest repetition = 4 x 0.0002 = 0.0008"},
		{"expansion", line(ss, `,"counters":{"expansion":20.28,"sample_keys":2}`), "counters expansion = 20.28: the largest bucket over n = 128 is in [1, 2]"},
		{"sample_keys", line(ss, `,"counters":{"expansion":1.25,"sample_keys":17}`), "counters sample_keys = 17 disagrees with n / 64 = 128 / 64 = 2"},
		{"app_ctr_bogus", line(matmul, `,"counters":{"bogus":1e18}`), "counters bogus = 1e+18: a matmul record has no such counter (its program writes none)"},
		{"one iteration's residuals", line(mg, `,"counters":{"residual_first":0.5,"residual_last":0.25}`), "counters residual_first = 0.5 and residual_last = 0.25 differ, but iters = 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(tc.line))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
}
