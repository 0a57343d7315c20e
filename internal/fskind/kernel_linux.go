package fskind

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tmpfsMagic is the statfs type of tmpfs, which devtmpfs shares: a
// devtmpfs is told apart by its device number in the mount table.
const tmpfsMagic = 0x01021994

// kernelMagics are the statfs types of the kernel's interface
// filesystems: their files are not data (some block a read forever, a
// write sets a kernel parameter), and no output belongs there.
var kernelMagics = map[int64]string{
	0x9fa0:     "proc",
	0x62656572: "sysfs",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0x27e0eb:   "cgroup",
	0x63677270: "cgroup2",
	0x1cd1:     "devpts",
	0x19800202: "mqueue",
	0x62656570: "configfs",
	0xcafe4a11: "bpf",
	0x6165676c: "pstore",
	0xde5e81e4: "efivarfs",
	0x42494e4d: "binfmt_misc",
	0x65735543: "fusectl",
	0xf97cff8c: "selinuxfs",
}

// KernelFD names the filesystem of the open file fd when it is one of the
// kernel's interfaces (/proc, /sys, /dev and their kin) or lies under
// their directories (kernelTree), "" otherwise.
func KernelFD(fd uintptr) string {
	var sfs syscall.Statfs_t
	var st syscall.Stat_t
	if syscall.Fstatfs(int(fd), &sfs) != nil || syscall.Fstat(int(fd), &st) != nil {
		return ""
	}
	if name := kernelName(int64(sfs.Type), st.Dev); name != "" {
		return name
	}
	target, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	if err != nil {
		return ""
	}
	return kernelTree(target)
}

// kernelTree names the kernel interface under whose directory the
// resolved absolute path p lies (/proc, /sys, /dev but /dev/shm), whatever
// filesystem is mounted there: a container may mount a tmpfs at
// /sys/fs/cgroup, whose files are still the kernel's, not data.
func kernelTree(p string) string {
	under := func(dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	switch {
	case under("/proc"):
		return "proc"
	case under("/sys"):
		return "sysfs"
	case under("/dev/shm"):
		return ""
	case under("/dev"):
		return "devtmpfs"
	}
	return ""
}

// KernelPath names the kernel interface filesystem path is on, as
// KernelFD; a path that does not exist is judged by the nearest directory
// above it that does (where it would be created). A place under /proc,
// /sys or /dev (but /dev/shm) counts whatever is mounted there.
func KernelPath(path string) string {
	p := Nearest(path)
	var sfs syscall.Statfs_t
	var st syscall.Stat_t
	if syscall.Statfs(p, &sfs) != nil || syscall.Stat(p, &st) != nil {
		return ""
	}
	if name := kernelName(int64(sfs.Type), st.Dev); name != "" {
		return name
	}
	// By place too, after symbolic links (/tmp/x -> /sys/fs/cgroup).
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return kernelTree(abs)
}

func kernelName(magic int64, dev uint64) string {
	if name, ok := kernelMagics[magic]; ok {
		return name
	}
	if magic == tmpfsMagic && (devtmpfs(dev) || devMount(dev)) {
		return "devtmpfs"
	}
	return ""
}

// devtmpfs reports whether dev is the device number of a devtmpfs mount
// (/proc/self/mountinfo: "ID PARENT MAJOR:MINOR ROOT MOUNT ... - TYPE ...").
func devtmpfs(dev uint64) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	want := strconv.FormatUint(major(dev), 10) + ":" + strconv.FormatUint(minor(dev), 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[2] != want {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "devtmpfs" {
				return true
			}
		}
	}
	return false
}

// devMount reports whether dev is the filesystem mounted at /dev (a
// container's /dev is often a plain tmpfs): the device files' directory,
// whatever its type. /dev/shm, a mount of its own, has another number.
func devMount(dev uint64) bool {
	var d, root syscall.Stat_t
	if syscall.Stat("/dev", &d) != nil || syscall.Stat("/", &root) != nil {
		return false
	}
	return d.Dev != root.Dev && d.Dev == dev
}

// major and minor split a Linux device number (glibc's gnu_dev_major
// and gnu_dev_minor).
func major(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&0xfffff000 }
func minor(dev uint64) uint64 { return dev&0xff | (dev>>12)&0xffffff00 }
