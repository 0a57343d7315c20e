//go:build !mpich

package mpirun

// linked mirrors mpi/native/cgo_ompi.go: without the mpich tag the binary
// links Open MPI.
const linked = ImplOpenMPI
