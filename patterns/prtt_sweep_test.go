package patterns

import (
	"fmt"
	"slices"
	"testing"
)

// TestPRTTSweep: the order netgauge measures in (PRTT(1,0,s) first for
// each size), the auto delay taken from that size's own round trip, the
// server sides after each client point with d > 0, PRTT(1,0,s) written only
// when n = 1 is asked for, and Records counting exactly the writes.
func TestPRTTSweep(t *testing.T) {
	rtt := map[int]float64{8: 2e-6, 1024: 5e-6} // PRTT(1,0,s) medians the fake returns
	tests := []struct {
		name string
		sw   PRTTSweep
		want []string // "n/d/side" of each measured point, * when written
	}{
		{"netgauge default", PRTTSweep{Sizes: []int{8, 1024}, N: []int{1, 10}, Delays: []PRTTDelay{{Sec: 0}, {Auto: true}}, Server: true},
			[]string{"8 1/0/client*", "8 10/0/client*", "8 10/2e-06/client*", "8 10/2e-06/server*",
				"1024 1/0/client*", "1024 10/0/client*", "1024 10/5e-06/client*", "1024 10/5e-06/server*"}},
		{"no n=1: the round trip only feeds auto", PRTTSweep{Sizes: []int{8}, N: []int{4}, Delays: []PRTTDelay{{Auto: true}, {Sec: 1e-5}}},
			[]string{"8 1/0/client", "8 4/2e-06/client*", "8 4/1e-05/client*"}},
		{"server sides skip d = 0", PRTTSweep{Sizes: []int{8}, N: []int{2}, Delays: []PRTTDelay{{Sec: 0}, {Sec: 1e-6}}, Server: true},
			[]string{"8 1/0/client", "8 2/0/client*", "8 2/1e-06/client*", "8 2/1e-06/server*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			writes := 0
			err := tc.sw.Run(func(p PRTT, write bool) (Measurement, error) {
				side := "client"
				if p.Server {
					side = "server"
				}
				s := fmt.Sprintf("%d %d/%g/%s", p.Bytes, p.N, p.DelaySec, side)
				if write {
					s += "*"
					writes++
				}
				got = append(got, s)
				var m Measurement
				if p.N == 1 {
					m.Summary.Median = rtt[p.Bytes]
				}
				return m, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("points:\n got %q\nwant %q", got, tc.want)
			}
			if n := tc.sw.Records(); n != writes {
				t.Errorf("Records() = %d; Run wrote %d", n, writes)
			}
			for _, p := range tc.sw.Plan() {
				if p.(PRTT).Server {
					t.Errorf("Plan holds a server point %+v", p)
				}
			}
		})
	}
}

// TestPRTTSweepStops: the first failing point ends the sweep with its
// error.
func TestPRTTSweepStops(t *testing.T) {
	sw := PRTTSweep{Sizes: []int{8, 16}, N: []int{1, 10}, Delays: []PRTTDelay{{Sec: 0}}}
	calls := 0
	boom := fmt.Errorf("boom")
	err := sw.Run(func(p PRTT, write bool) (Measurement, error) {
		calls++
		if calls == 2 {
			return Measurement{}, boom
		}
		return Measurement{}, nil
	})
	if err != boom || calls != 2 {
		t.Errorf("Run = %v after %d calls; want boom after 2", err, calls)
	}
}
