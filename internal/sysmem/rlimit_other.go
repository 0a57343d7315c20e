//go:build !unix

package sysmem

// rlimitAS: no address-space limit outside Unix.
func rlimitAS() (uint64, bool) { return 0, false }
