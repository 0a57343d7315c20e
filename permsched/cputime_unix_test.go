//go:build unix

package permsched_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system, every
// thread, GC included). Benchmarks report it per op next to wall time: on a
// shared machine wall time per op swings with the load, CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
