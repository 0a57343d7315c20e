package native

import (
	"testing"

	"github.com/commcost/commcost/mpi/mpitest"
)

// TestConformance runs the suite every mpi.Comm backend passes, on
// MPI_COMM_WORLD of each mpirun child run (2 and 4 ranks).
func TestConformance(t *testing.T) {
	needMPI(t)
	mpitest.Run(t, World())
}
