package appexp

import (
	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"

	// The store strategies register themselves (globalvar.RegisterFamily).
	_ "github.com/commcost/commcost/directstore"
	_ "github.com/commcost/commcost/divalib"
	_ "github.com/commcost/commcost/emulate"
)

// openStore opens strategy st over c and runs fn on the application ranks
// with the store in its Env (globalvar.Strategy.Open).
func openStore(c mpi.Comm, st globalvar.Strategy, seed int64, fn func(env apps.Env) error) error {
	return st.Open(c, func(app mpi.Comm, s globalvar.Store) error {
		return fn(apps.Env{Comm: app, Store: s, Seed: seed})
	})
}

// mpiStore is the strategy of a run over the communicator itself (no
// store; records' store "mpi").
type mpiStore struct{}

func (mpiStore) Name() string           { return "mpi" }
func (mpiStore) WorldSize() int         { return 0 }
func (mpiStore) AppRanks(world int) int { return world }
func (mpiStore) Open(c mpi.Comm, fn func(mpi.Comm, globalvar.Store) error) error {
	return fn(c, nil)
}
