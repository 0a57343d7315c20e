package report

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestTrustFromMeta: with the host's cores and load average in the
// records, the summary says plainly when ranks shared cores and when other
// work loaded the machine, and says neither on a quiet machine with a core
// per rank.
func TestTrustFromMeta(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cores, rpn  int
		load        float64
		want, avoid []string
	}{
		{"quiet, a core each", 2, 2, 0.3, []string{"do not exceed the host's 2 cores", "no sign of other work"}, []string{"Oversubscribed", "Loaded machine"}},
		{"oversubscribed", 2, 4, 0.5, []string{"**Oversubscribed**: 4 ranks ran on a host of 2 cores"}, []string{"Loaded machine"}},
		{"loaded", 2, 2, 7.5, []string{"**Loaded machine**: the one-minute load average was 7.5 on 2 cores"}, []string{"Oversubscribed"}},
	} {
		rec := results.Record{Schema: results.SchemaVersion, Bench: "pingpong", Params: results.Params{"bytes": 8}, Ranks: 2, Unit: results.UnitSeconds,
			Summary: results.Summarize([]float64{1e-6, 1.1e-6, 1.2e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6}), Stop: results.StopRelCI,
			Meta: results.Meta{Backend: "native", Cores: tc.cores, Load1: tc.load, RanksPerHost: []int{tc.rpn}, Hosts: []string{"h"}}}
		got := strings.Join(trustChecks([]results.Record{rec}), "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, got)
			}
		}
		for _, a := range tc.avoid {
			if strings.Contains(got, a) {
				t.Errorf("%s: %q in\n%s", tc.name, a, got)
			}
		}
	}
}
