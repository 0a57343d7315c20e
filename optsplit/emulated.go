package optsplit

import (
	"errors"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/mpi"
)

// RunEmulated runs the emulated network of cfg on the ranks of world
// (emulate.Run) and body on its application ranks, so that a collective
// verdict ends the run in order: when body returns a *ModelError (which
// every application rank reaches together, see the package doc), the store
// is closed collectively, shutting the service ranks down as after a
// success, instead of being aborted as after a failure. The *ModelError is
// then returned on every application rank, nil on the service ranks, so a
// caller can agree the verdict over world without MPI_Abort. Other errors
// are emulate.Run's.
func RunEmulated(world mpi.Comm, cfg emulate.Config, body func(s *emulate.Store) error) error {
	return emulate.Run(world, cfg, func(s *emulate.Store) error {
		err := body(s)
		if errors.As(err, new(*ModelError)) {
			if cerr := s.Close(); cerr != nil {
				return cerr
			}
		}
		return err
	})
}
