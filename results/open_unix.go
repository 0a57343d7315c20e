//go:build unix

package results

import "syscall"

// openNonblock keeps the open of a FIFO from waiting for its other end.
const openNonblock = syscall.O_NONBLOCK
