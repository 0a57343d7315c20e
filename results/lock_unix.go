//go:build unix

package results

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on f, waiting for
// other holders, and returns its release. Every commcost writer of a
// records file takes it around each record, so records from several
// processes never interleave and a failed append can be undone before
// anyone appends after it. A file system without flock support (ENOLCK,
// EOPNOTSUPP: some network file systems) is written without the lock:
// O_APPEND still places each record's single write at the end.
func lockFile(f *os.File) (func(), error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		switch {
		case err == nil:
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP):
			return func() {}, nil
		}
		return nil, err
	}
}
