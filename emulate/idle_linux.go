//go:build linux

package emulate

import (
	"syscall"
	"time"
)

// osYield gives the processor to another runnable process (sched_yield),
// which runtime.Gosched cannot do for a one-goroutine MPI rank.
func osYield() { _, _, _ = syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// osSleep sleeps d with nanosleep, whose resolution is microseconds.
func osSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
