//go:build unix

package sysmem

import "syscall"

// rlimitAS reads the soft RLIMIT_AS.
func rlimitAS() (uint64, bool) {
	var lim syscall.Rlimit
	// RLIM_INFINITY is all ones (its untyped constant -1 does not convert).
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur == ^uint64(0) {
		return 0, false
	}
	return uint64(lim.Cur), true
}
