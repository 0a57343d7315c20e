package appexp

import (
	"fmt"
	"strings"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// Store kinds (Store.Kind): how a store is opened and how its k-k-access
// calibration is measured (apps.KKCalibration.Run).
const (
	// StoreDirect is the plain direct store: every access goes to the
	// variable's home rank, the k-k-access kernel's own protocol.
	StoreDirect = "direct"
	// StoreDivalib is one of divalib's strategies (paper 004).
	StoreDivalib = "divalib"
	// StoreEmulate is paper 000's emulated service network.
	StoreEmulate = "emulate"
)

// StoreForms is the accepted form of a store list, for usage messages.
const StoreForms = "a comma list of direct, fixed-home, tree-2, tree-4, tree-16, tree-2-4, tree-4-16, or one emulate:NET such as emulate:BF(2)"

// Store is one global-variable store the applications run over.
type Store struct {
	// Name is the records' "store" parameter: direct, fixed-home, tree-4,
	// BF(2), ...
	Name string
	Kind string // StoreDirect, StoreDivalib or StoreEmulate
	Diva divalib.Config
	Net  *emulate.Topology // the network of an emulated store
}

// ParseStore reads one store name: "direct", a divalib strategy
// (divalib.ParseStrategy: fixed-home, tree-2, tree-4-16, ...), or
// "emulate:NET" with NET a network of emulate.Parse (BF(2), mesh(4x4),
// ...). seed seeds a divalib store's random choices.
func ParseStore(s string, seed int64) (Store, error) {
	switch {
	case s == StoreDirect:
		return Store{Name: s, Kind: StoreDirect}, nil
	case strings.HasPrefix(s, "emulate:"):
		t, err := emulate.Parse(strings.TrimPrefix(s, "emulate:"))
		if err != nil {
			return Store{}, err
		}
		return Store{Name: t.Name(), Kind: StoreEmulate, Net: t}, nil
	}
	st, v, err := divalib.ParseStrategy(s)
	if err != nil {
		return Store{}, fmt.Errorf("%q is not a store", s)
	}
	cfg := divalib.Config{Strategy: st, Variant: v, Seed: seed}
	return Store{Name: cfg.Name(), Kind: StoreDivalib, Diva: cfg}, nil
}

// AppRanks is the number of ranks applications run on over st in a world
// of world ranks: the network's application ranks for an emulated store
// (the others route), else all of them.
func (st Store) AppRanks(world int) int {
	if st.Kind == StoreEmulate {
		return st.Net.Apps()
	}
	return world
}

// Open opens st over c, runs fn on the application ranks with the store in
// its Env, and closes the store. Collective over c. An error of fn is
// returned without closing the store: closing is collective, and a rank
// that failed cannot count on the others reaching it.
func (st Store) Open(c mpi.Comm, seed int64, fn func(env apps.Env) error) error {
	switch st.Kind {
	case StoreEmulate:
		cfg := emulate.Config{Topology: st.Net, Seed: seed}
		return emulate.Run(c, cfg, func(s *emulate.Store) error {
			return fn(apps.Env{Comm: s.AppComm(), Store: s, Seed: seed})
		})
	case StoreDirect, StoreDivalib:
		var s globalvar.Store
		var err error
		if st.Kind == StoreDirect {
			s, err = directstore.New(c, directstore.Config{})
		} else {
			s, err = divalib.New(c, st.Diva)
		}
		if err != nil {
			return fmt.Errorf("store %s: %w", st.Name, err)
		}
		if err := fn(apps.Env{Comm: c, Store: s, Seed: seed}); err != nil {
			return err
		}
		return s.Close()
	}
	return fmt.Errorf("store %s: unknown kind %q", st.Name, st.Kind)
}
