package emulate

import (
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/divalib/storetest"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestConformance runs the globalvar.Store conformance suite on the
// application ranks of emulated networks: the suite's world is the
// application communicator, the service ranks run beside it.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		placement Placement
	}{
		{"BF(2)", PlaceHash},
		{"SE(3)", PlaceDirect},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			top, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Topology: top, Placement: tc.placement, Seed: 7, StallTimeout: 20 * time.Second}
			var stores sync.Map // application communicator -> *Store
			world := func(np int, fn func(c mpi.Comm) error) error {
				return local.RunWith(local.Options{Timeout: 60 * time.Second}, top.Ranks(), func(w mpi.Comm) error {
					return Run(w, cfg, func(s *Store) error {
						stores.Store(s.AppComm(), s)
						return fn(s.AppComm())
					})
				})
			}
			newStore := func(c mpi.Comm) (globalvar.Store, error) {
				s, _ := stores.Load(c)
				return s.(*Store), nil
			}
			storetest.Run(t, world, newStore, storetest.Options{Ranks: top.Apps(), CoherenceOps: 2000, Seed: 3})
		})
	}
}
