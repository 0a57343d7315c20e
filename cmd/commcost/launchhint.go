package main

import (
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/mpi/native"
)

// runLine is the command that starts commcost args on np ranks with the MPI
// this binary links, for the hints of usage errors: Open MPI's mpirun with
// its oversubscription flags, or MPICH's mpiexec, which needs none and
// rejects them (mpirun.LaunchLine).
func runLine(np int, args ...string) string {
	return mpirun.LaunchLine(mpirun.Impl(native.Implementation()), np, "commcost", args...)
}
