package fskind

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ownMount reports whether dir is on another filesystem than its parent.
func ownMount(dir string) bool {
	var d, up syscall.Stat_t
	return syscall.Stat(dir, &d) == nil && syscall.Stat(filepath.Dir(dir), &up) == nil && d.Dev != up.Dev
}

// TestKernelPath: the kernel's filesystems are told by path, a new path by
// the directory it would be created in; /dev's devtmpfs (whose statfs type
// is tmpfs's) is one of them, while /tmp and /dev/shm (plain tmpfs
// mounts) stay places for data.
func TestKernelPath(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{tmp, ""},
		{filepath.Join(tmp, "new", "deeper"), ""},
		{"/proc/self", "proc"},
		{"/proc/self/none.jsonl", "proc"},
		{"/sys/kernel", "sysfs"},
		{"/dev", "devtmpfs"},
		{"/dev/commcost-none/deeper", "devtmpfs"},
		{"/dev/pts", "devpts"},
		{"/dev/shm", ""},
	} {
		if _, err := os.Stat(Nearest(tc.path)); err != nil {
			t.Logf("%s: %v; skipped", tc.path, err)
			continue
		}
		if tc.path == "/dev/shm" && !ownMount("/dev/shm") {
			continue // not a mount of its own here: a directory of /dev
		}
		if got := KernelPath(tc.path); got != tc.want {
			t.Errorf("KernelPath(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestKernelPathByPlace: under /sys, /proc and /dev a path is the kernel's
// whatever is mounted there (a container's tmpfs at /sys/fs/cgroup), also
// through a symbolic link.
func TestKernelPathByPlace(t *testing.T) {
	link := filepath.Join(t.TempDir(), "cg")
	if err := os.Symlink("/sys/fs/cgroup", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/sys/fs/cgroup/x.jsonl", filepath.Join(link, "x.jsonl"), "/sys/x/y.jsonl"} {
		if _, err := os.Stat(Nearest(p)); err != nil {
			continue
		}
		if got := KernelPath(p); got == "" {
			t.Errorf("KernelPath(%s) = \"\", want the kernel's", p)
		}
	}
	f, err := os.Open("/sys/fs/cgroup")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if got := KernelFD(f.Fd()); got == "" {
		t.Errorf("KernelFD(/sys/fs/cgroup) = \"\", want the kernel's")
	}
}
