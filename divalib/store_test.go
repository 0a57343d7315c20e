package divalib_test

import (
	"fmt"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/divalib/storetest"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// allConfigs is every strategy and variant the acceptance list names.
var allConfigs = []divalib.Config{
	{Strategy: divalib.FixedHome},
	{Variant: divalib.Tree2},
	{Variant: divalib.Tree4},
	{Variant: divalib.Tree16},
	{Variant: divalib.Tree2_4},
	{Variant: divalib.Tree4_16},
}

func TestConformance(t *testing.T) {
	for _, cfg := range allConfigs {
		t.Run(cfg.Name(), func(t *testing.T) {
			cfg := cfg
			cfg.Seed = 7
			storetest.Run(t, local.Run, func(c mpi.Comm) (globalvar.Store, error) {
				return divalib.New(c, cfg)
			}, storetest.Options{})
		})
	}
}

// TestCoherenceFullSize is the acceptance run: 10^5 random operations on 64
// goroutine ranks, for every strategy and variant, with zero stale, torn or
// unknown reads (about 0.4 to 1.5 s each on 2 cores).
func TestCoherenceFullSize(t *testing.T) {
	ops := 100000
	if testing.Short() {
		ops = 10000
	}
	for _, cfg := range allConfigs {
		t.Run(cfg.Name(), func(t *testing.T) {
			cfg := cfg
			cfg.Seed = 3
			rep, err := storetest.RunWorkload(local.Run, 64, func(c mpi.Comm) (globalvar.Store, error) { return divalib.New(c, cfg) },
				func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
					return storecheck.Coherence(c, s, storecheck.CoherenceConfig{Ops: ops, Seed: 3})
				})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if rep.Ops != ops {
				t.Fatalf("checked %d operations, want %d", rep.Ops, ops)
			}
			t.Logf("%d ops (%d reads, %d writes): 0 stale, 0 torn, %.2f s", rep.Ops, rep.Reads, rep.Writes, rep.ElapsedSec)
		})
	}
}

// TestZeroSizeVariable: a variable of no bytes is written by its home and
// by another rank and read by both, under every strategy, and each rank's
// list of copies stays a list (a zero-byte value once came back nil, "no
// copy", and the copy joined the list twice).
func TestZeroSizeVariable(t *testing.T) {
	for _, cfg := range allConfigs {
		t.Run(cfg.Name(), func(t *testing.T) {
			err := local.Run(2, func(c mpi.Comm) error {
				s, err := divalib.New(c, cfg)
				if err != nil {
					return err
				}
				z, err := s.Create("z", 0)
				if err != nil {
					return err
				}
				home, err := s.Home(z)
				if err != nil {
					return err
				}
				me := c.Rank()
				for round := 0; round < 3; round++ {
					for _, writer := range []int{home, 1 - home} {
						if me == writer {
							if err := s.Write(z, 0, nil); err != nil {
								return err
							}
						}
						if err := s.Barrier(); err != nil {
							return err
						}
						if err := s.Read(z, 0, nil); err != nil {
							return err
						}
						if err := s.Barrier(); err != nil {
							return err
						}
						if err := divalib.CheckLRU(s); err != nil {
							return fmt.Errorf("rank %d, round %d, after rank %d's write: %w", me, round, writer, err)
						}
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
