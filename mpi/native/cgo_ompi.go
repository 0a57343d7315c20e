//go:build !mpich

package native

// Open MPI is the default library (Debian's libopenmpi-dev provides ompi-c.pc).

// #cgo pkg-config: ompi-c
import "C"
