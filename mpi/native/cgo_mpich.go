//go:build mpich

package native

// Build with -tags mpich to link MPICH instead (libmpich-dev provides mpich.pc).

// #cgo pkg-config: mpich
import "C"
