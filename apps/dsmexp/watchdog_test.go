package dsmexp

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
)

// TestSweepUnderWatchdog: every strategy's run of bitonic and Barnes-Hut
// is a point under the process's watchdog. Healthy runs keep ending phases
// and never trip it; a rank that stops answering after its first result
// (as under SIGSTOP) leaves the next strategy's point idle, and the
// watchdog fires once, naming the application.
func TestSweepUnderWatchdog(t *testing.T) {
	const timeout = time.Second
	s := Setup{Strategies: []string{Hand, "tree-4"}, Seed: 1}
	bitonic := func(c mpi.Comm, each func()) error {
		return Bitonic(c, s, []int{32}, func(Result, *Result) error { each(); return nil })
	}
	barneshut := func(c mpi.Comm, each func()) error {
		bs := Setup{Strategies: []string{"fixed-home", "tree-4"}, Seed: 1}
		return BarnesHut(c, bs, apps.BarnesHutConfig{Steps: 2, Measured: 1}, []int{64}, func(Result) error { each(); return nil })
	}
	tests := []struct {
		name     string
		run      func(c mpi.Comm, each func()) error
		stopRank int
		point    string
	}{
		{"bitonic healthy", bitonic, -1, ""},
		{"bitonic, rank 1 stops", bitonic, 1, "dsm-bitonic keys="},
		{"barneshut healthy", barneshut, -1, ""},
		{"barneshut, rank 2 stops", barneshut, 2, "dsm-barneshut bodies="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fired := make(chan patterns.Stall, 2)
			release := make(chan struct{})
			var once, stop sync.Once
			w := patterns.NewWatchdog(timeout, func(st patterns.Stall) {
				fired <- st
				once.Do(func() { close(release) })
			})
			defer w.Stop()
			patterns.Install(w)
			defer patterns.Install(nil)
			err := local.Run(4, func(c mpi.Comm) error {
				return tc.run(c, func() {
					if c.Rank() == tc.stopRank {
						stop.Do(func() { <-release })
					}
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case st := <-fired:
				if tc.point == "" {
					t.Fatalf("fired on a healthy run: %v", st)
				}
				if !strings.Contains(st.String(), tc.point) {
					t.Errorf("stall %q, want it to name %q", st, tc.point)
				}
			default:
				if tc.point != "" {
					t.Fatal("the watchdog did not fire")
				}
			}
		})
	}
}
