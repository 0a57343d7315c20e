package divalib_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestLRU runs many variables through a memory bound far smaller than the
// data: the bound must hold on every rank (only a last copy may exceed it,
// by one variable, when a timing leaves nothing else to replace), copies
// must actually be replaced, and every read must return the latest value:
// no data is ever lost.
func TestLRU(t *testing.T) {
	const (
		np     = 16
		nvars  = 64
		size   = 256
		bound  = 14 * size
		reads  = 300
		rounds = 2
	)
	for _, cfg := range allConfigs {
		t.Run(cfg.Name(), func(t *testing.T) {
			cfg := cfg
			cfg.MemoryBytes, cfg.Seed = bound, 9
			err := local.Run(np, func(c mpi.Comm) error {
				s, err := divalib.New(c, cfg)
				if err != nil {
					return err
				}
				vars := make([]globalvar.Var, nvars)
				for i := range vars {
					if vars[i], err = s.Create(fmt.Sprintf("v%d", i), size); err != nil {
						return err
					}
				}
				value := func(v, gen int) []byte {
					b := make([]byte, size)
					for o := 0; o < size; o += 8 {
						binary.LittleEndian.PutUint64(b[o:], uint64(v)<<32|uint64(gen))
					}
					return b
				}
				rng := rand.New(rand.NewPCG(9, uint64(c.Rank())))
				buf := make([]byte, size)
				for gen := 1; gen <= rounds; gen++ {
					for v := c.Rank(); v < nvars; v += np {
						if err := s.Write(vars[v], 0, value(v, gen)); err != nil {
							return err
						}
					}
					if err := s.Barrier(); err != nil {
						return err
					}
					for k := 0; k < reads; k++ {
						v := rng.IntN(nvars)
						off := 8 * rng.IntN(size/8)
						if err := s.Read(vars[v], off, buf[:8]); err != nil {
							return err
						}
						if got, want := binary.LittleEndian.Uint64(buf), uint64(v)<<32|uint64(gen); got != want {
							return fmt.Errorf("rank %d: var %d gen %d: read %#x, want %#x", c.Rank(), v, gen, got, want)
						}
					}
					if err := s.Barrier(); err != nil {
						return err
					}
				}
				// A last copy is kept even when it does not fit: when every
				// copy resident on a rank is a last one or in use by an
				// access (a timing of the goroutine ranks), one more goes
				// over the bound by one variable, by design. More than that
				// is a replacement that does not work.
				st := s.Stats()
				if st.PeakResidentBytes > bound+size || st.OverflowBytes > size {
					return fmt.Errorf("rank %d: peak %d bytes, overflow %d, bound %d (and one variable of %d)", c.Rank(), st.PeakResidentBytes, st.OverflowBytes, bound, size)
				}
				if st.OverflowBytes > 0 {
					t.Logf("rank %d: a last copy went over the bound by %d bytes", c.Rank(), st.OverflowBytes)
				}
				ev := []int64{st.Evictions}
				if err := c.AllreduceInt64s(ev, ev, mpi.OpSum); err != nil {
					return err
				}
				if ev[0] == 0 {
					return fmt.Errorf("no copy was ever replaced: the bound was not exercised")
				}
				if c.Rank() == 0 {
					t.Logf("%d evictions over %d ranks; rank 0 peak %d of %d bytes", ev[0], np, st.PeakResidentBytes, bound)
				}
				return s.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBadInput covers the configuration errors: a mesh that does not match
// the rank count, an unsupported tree degree, a memory bound smaller than
// one variable.
func TestBadInput(t *testing.T) {
	err := local.Run(4, func(c mpi.Comm) error {
		for _, tc := range []struct {
			name string
			cfg  divalib.Config
		}{
			{"mesh 3x3 for 4 ranks", divalib.Config{Rows: 3, Cols: 3}},
			{"tree degree 3", divalib.Config{Variant: divalib.Variant{Arity: 3}}},
			{"tree 16-32", divalib.Config{Variant: divalib.Variant{Arity: 16, Leaf: 32}}},
			{"tree 4-2", divalib.Config{Variant: divalib.Variant{Arity: 4, Leaf: 2}}},
		} {
			if _, err := divalib.New(c, tc.cfg); err == nil {
				return fmt.Errorf("%s: New accepted it", tc.name)
			}
		}
		s, err := divalib.New(c, divalib.Config{MemoryBytes: 100})
		if err != nil {
			return err
		}
		if _, err := s.Create("big", 101); !errors.Is(err, divalib.ErrMemory) {
			return fmt.Errorf("variable larger than the bound: got %v, want ErrMemory", err)
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
