//go:build !unix

package results

// openNonblock: other systems have no FIFOs that block an open.
const openNonblock = 0
