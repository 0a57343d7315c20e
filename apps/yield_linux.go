//go:build linux

package apps

import "syscall"

// osYield gives the processor to another runnable process (sched_yield),
// which runtime.Gosched cannot do for a one-goroutine MPI rank.
func osYield() { _, _, _ = syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
