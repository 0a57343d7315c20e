package divalib_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// worldHeap creates nvars variables on np goroutine ranks, each rank
// reading touch of them, and returns the heap the world holds then (bytes
// above the heap before it started) and rank 0's table form.
func worldHeap(t *testing.T, cfg divalib.Config, np, nvars, touch int) (heap int64, sparse bool, states int) {
	t.Helper()
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := local.Run(np, func(c mpi.Comm) error {
		s, err := divalib.New(c, cfg)
		if err != nil {
			return err
		}
		vars := make([]globalvar.Var, 0, touch)
		for i := 0; i < nvars; i++ {
			v, err := s.Create(fmt.Sprint("v", i), 8)
			if err != nil {
				return err
			}
			if i%(nvars/touch) == c.Rank()%(nvars/touch) && len(vars) < touch {
				vars = append(vars, v)
			}
		}
		buf := make([]byte, 8)
		for _, v := range vars {
			if err := s.Read(v, 0, buf); err != nil {
				return err
			}
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			runtime.GC()
			runtime.ReadMemStats(&during)
			sparse, states = divalib.TableForm(s)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return int64(during.HeapAlloc) - int64(before.HeapAlloc), sparse, states
}

// TestTableMemoryFlatInP: on goroutine ranks a rank's table of variable
// states must cost what the rank touched, not 8 bytes per variable: with
// the dense form the P tables of a process grew as P x variables (1.3 GB
// for Barnes-Hut at P = 512, N = 102,400). The world's heap with 8000
// variables, each rank touching 8, may grow by at most 16 KiB per added
// rank from 16 to 128 ranks; the dense form, forced by a large budget,
// adds 8 x 8000 bytes per rank and must fail that bound (the check can
// fail). The budget is scaled down (4 MiB instead of 64) so that the
// sparse form sets in at this small size.
func TestTableMemoryFlatInP(t *testing.T) {
	const (
		nvars, touch   = 8000, 8
		small, large   = 16, 128
		perRankAllowed = 16 << 10
	)
	tests := []struct {
		name   string
		cfg    divalib.Config
		budget int
		flat   bool
	}{
		{"fixed-home", divalib.Config{Strategy: divalib.FixedHome}, 4 << 20, true},
		{"tree-4", divalib.Config{Variant: divalib.Tree4}, 4 << 20, true},
		{"tree-4 dense forced", divalib.Config{Variant: divalib.Tree4}, 1 << 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer divalib.SetDenseBudget(tt.budget)()
			h16, _, _ := worldHeap(t, tt.cfg, small, nvars, touch)
			h128, sparse, states := worldHeap(t, tt.cfg, large, nvars, touch)
			growth := (h128 - h16) / (large - small)
			t.Logf("heap %.2f MB on %d ranks, %.2f MB on %d: %d bytes per added rank; rank 0 of %d: sparse %v, %d states",
				float64(h16)/1e6, small, float64(h128)/1e6, large, growth, large, sparse, states)
			if tt.flat {
				if !sparse {
					t.Errorf("the table of %d ranks x %d variables stayed dense", large, nvars)
				}
				// Rank 0 holds its touched variables and the homes its
				// reads made (its own variables are 8000/128 homes).
				if states > touch+2*nvars/large {
					t.Errorf("rank 0 holds %d variable states, want at most %d", states, touch+2*nvars/large)
				}
				if growth > perRankAllowed {
					t.Errorf("%d heap bytes per added rank, want at most %d", growth, perRankAllowed)
				}
			} else if growth <= perRankAllowed {
				t.Errorf("dense tables grew by only %d bytes per added rank: the bound cannot tell the forms apart", growth)
			}
		})
	}
}
