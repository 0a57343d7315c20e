package directstore

import (
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The direct store registers itself as the strategy "direct".
func init() {
	globalvar.RegisterFamily(globalvar.Family{Name: "direct", Forms: []string{"direct"}, Order: 0,
		Parse: func(s string, _ int64) (globalvar.Strategy, error) {
			if s != "direct" {
				return nil, globalvar.ErrNotMine
			}
			return Strategy{}, nil
		}})
}

// Strategy is the plain direct store as a globalvar.Strategy: every access
// to the variable's home rank, the k-k-access kernel's own protocol.
type Strategy struct{ Config Config }

func (Strategy) Name() string           { return "direct" }
func (Strategy) WorldSize() int         { return 0 }
func (Strategy) AppRanks(world int) int { return world }

// Open opens a direct store over c and runs fn on every rank.
func (st Strategy) Open(c mpi.Comm, fn func(mpi.Comm, globalvar.Store) error) error {
	s, err := New(c, st.Config)
	if err != nil {
		return err
	}
	if err := fn(c, s); err != nil {
		return err
	}
	return s.Close()
}

// CheckKK accepts every k-k-access: the direct store's protocol is the
// pattern's, blocks and accesses back to back included.
func (Strategy) CheckKK(patterns.KKAccess) error { return nil }

// MeasureKK measures a k-k-access of the store's protocol: the pattern
// itself over the application ranks, so the records are those of
// 'commcost kkaccess'.
func (Strategy) MeasureKK(app mpi.Comm, _ globalvar.Store, kk patterns.KKAccess, meta results.Meta) (results.Record, error) {
	m, err := kk.Run(app)
	if err != nil {
		return results.Record{}, err
	}
	return kk.Record(m, meta), nil
}
