//go:build mpich

package mpirun

// linked mirrors mpi/native/cgo_mpich.go: the mpich tag links MPICH.
const linked = ImplMPICH
