// Package testfs gives tests a small file system they can fill: a tmpfs
// of a given size, mounted for the test and unmounted after it. The
// record file's write discipline (a record is whole or
// absent even when the disk fills) is tested on it by package results and
// by the CLI.
package testfs

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory and
// returns the directory; it is unmounted when the test ends. The test is
// skipped when the process is not root or the mount is refused (a
// container without CAP_SYS_ADMIN).
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt
}
