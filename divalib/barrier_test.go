package divalib_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storetest"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestBarrierKinds: every barrier algorithm separates phases (what a rank
// wrote before the barrier is what every rank reads after it, over 20
// epochs), passes the conformance suite, and sends the messages its
// algorithm defines: the dissemination barrier P*ceil(log2 P).
func TestBarrierKinds(t *testing.T) {
	for _, kind := range []divalib.BarrierKind{divalib.BarrierTree, divalib.BarrierCentral, divalib.BarrierDissemination} {
		for _, np := range []int{1, 2, 3, 7, 16} {
			cfg := divalib.Config{Strategy: divalib.FixedHome, Barrier: kind, Seed: 5}
			t.Run(fmt.Sprintf("%s/np%d", kind, np), func(t *testing.T) {
				err := local.Run(np, func(c mpi.Comm) error {
					s, err := divalib.New(c, cfg)
					if err != nil {
						return err
					}
					vars := make([]globalvar.Var, np)
					for r := range vars {
						if vars[r], err = s.Create(fmt.Sprint("v", r), 8); err != nil {
							return err
						}
					}
					buf := make([]byte, 8)
					for epoch := 1; epoch <= 20; epoch++ {
						buf[0] = byte(epoch)
						if err := s.Write(vars[c.Rank()], 0, buf); err != nil {
							return err
						}
						if err := s.Barrier(); err != nil {
							return err
						}
						for r, v := range vars {
							if err := s.Read(v, 0, buf); err != nil {
								return err
							}
							if buf[0] != byte(epoch) {
								return fmt.Errorf("epoch %d: read %d from rank %d's variable after the barrier", epoch, buf[0], r)
							}
						}
						if err := s.Barrier(); err != nil {
							return err
						}
					}
					s.Traffic().Reset()
					if err := s.Barrier(); err != nil {
						return err
					}
					g, err := s.CongestionReport() // one more barrier, also counted
					if err != nil {
						return err
					}
					if kind == divalib.BarrierDissemination {
						rounds := 0
						for 1<<rounds < np {
							rounds++
						}
						if want := int64(2 * np * rounds); g.Startups != want {
							return fmt.Errorf("two dissemination barriers sent %d messages, want 2 P ceil(log2 P) = %d", g.Startups, want)
						}
					} else if want := int64(2 * 2 * (np - 1)); g.Startups != want {
						// One arrival and one release per edge between
						// ranks, early release or not.
						return fmt.Errorf("two %s barriers sent %d messages, want 2 (2 (P-1)) = %d", kind, g.Startups, want)
					}
					return s.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
			})
			if np == 16 {
				t.Run(fmt.Sprintf("%s/conformance", kind), func(t *testing.T) {
					storetest.Run(t, local.Run, func(c mpi.Comm) (globalvar.Store, error) { return divalib.New(c, cfg) }, storetest.Options{Ranks: 7})
				})
			}
		}
	}
}

// TestBarrierSums: the tree and flat barriers' reduction (Close's
// termination detection) delivers the sums over all ranks to every rank,
// whichever rank enters first: rank e mod P enters epoch e last, so at
// 2 ranks the root releases its remote child early in every other epoch
// and in the normal order in the others (sync.go, arrive).
func TestBarrierSums(t *testing.T) {
	for _, kind := range []divalib.BarrierKind{divalib.BarrierTree, divalib.BarrierCentral} {
		for _, np := range []int{1, 2, 3, 7, 16} {
			t.Run(fmt.Sprintf("%s/np%d", kind, np), func(t *testing.T) {
				err := local.Run(np, func(c mpi.Comm) error {
					s, err := divalib.New(c, divalib.Config{Strategy: divalib.FixedHome, Barrier: kind, Seed: 3})
					if err != nil {
						return err
					}
					me := c.Rank()
					for e := 0; e < 12; e++ {
						if e%np == me {
							time.Sleep(2 * time.Millisecond)
						}
						sum, err := divalib.BarrierSums(s, int64(me+e), 1)
						if err != nil {
							return err
						}
						if want := [2]int64{int64(np*(np-1)/2 + np*e), int64(np)}; sum != want {
							return fmt.Errorf("rank %d, epoch %d: sums %v, want %v", me, e, sum, want)
						}
					}
					return s.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
