package divalib

import (
	"fmt"
	"strings"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// DIVA registers its strategies as the store family "divalib".
func init() {
	globalvar.RegisterFamily(globalvar.Family{Name: "divalib", Forms: Evaluated(), Order: 1,
		Parse: func(s string, seed int64) (globalvar.Strategy, error) {
			if s != FixedHomeName && !strings.HasPrefix(s, treePrefix) {
				return nil, globalvar.ErrNotMine
			}
			st, v, err := ParseStrategy(s)
			if err != nil {
				return nil, err
			}
			return Config{Strategy: st, Variant: v, Seed: seed}, nil
		}})
}

// WorldSize is 0: DIVA runs on any world.
func (Config) WorldSize() int { return 0 }

// AppRanks is every rank.
func (Config) AppRanks(world int) int { return world }

// Open opens a DIVA store of the configuration over c and runs fn on
// every rank (globalvar.Strategy).
func (cfg Config) Open(c mpi.Comm, fn func(mpi.Comm, globalvar.Store) error) error {
	s, err := New(c, cfg)
	if err != nil {
		return fmt.Errorf("store %s: %w", cfg.Name(), err)
	}
	if err := fn(c, s); err != nil {
		return err
	}
	return s.Close()
}

// CheckKK refuses a calibration of accesses back to back: they are
// measured on the direct store only.
func (cfg Config) CheckKK(kk patterns.KKAccess) error {
	if kk.A > 1 {
		return fmt.Errorf("a calibration of %d accesses back to back is measured on the direct store only, not on %s", kk.A, cfg.Name())
	}
	return nil
}
