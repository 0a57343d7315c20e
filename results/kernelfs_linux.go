package results

import "syscall"

// kernelFS names the filesystem of f when it is one of the kernel's
// interfaces (/proc, /sys and their kin), "" otherwise. Their "regular"
// files are not data: some block a read forever (/proc/kmsg, a size 0
// file that waits for the next kernel message), others are endless.
func kernelFS(fd uintptr) string {
	var st syscall.Statfs_t
	if syscall.Fstatfs(int(fd), &st) != nil {
		return ""
	}
	switch uint64(st.Type) {
	case 0x9fa0:
		return "proc"
	case 0x62656572:
		return "sysfs"
	case 0x64626720:
		return "debugfs"
	case 0x74726163:
		return "tracefs"
	case 0x73636673:
		return "securityfs"
	case 0x27e0eb:
		return "cgroup"
	case 0x63677270:
		return "cgroup2"
	}
	return ""
}
