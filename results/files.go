package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/commcost/commcost/internal/fskind"
)

// MaxLineBytes bounds one line of a records file: a record with a million
// raw samples is about 25 MB, so 64 MiB leaves room for any record commcost
// writes while a file that is one endless line (a device, a binary file, a
// runaway writer) is refused before it exhausts memory.
const MaxLineBytes = 64 << 20

// NotRegularError is a path that names something other than a regular file
// (a named pipe, a device, a socket, a directory). Reading a FIFO or a
// character device blocks until a writer appears or never ends; commcost
// reads and appends to regular files only.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, fskind.Name(e.Mode))
}

// OpenRegular opens path for reading and fails unless it is a regular file
// (symbolic links are followed) outside the kernel's interface
// filesystems (/proc, /sys). The open does not block on a FIFO that has
// no writer (O_NONBLOCK), and the type is checked on the opened file, so a
// path swapped between the check and the read cannot slip through.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if fs := fskind.KernelFD(f.Fd()); fs != "" {
		f.Close()
		return nil, fmt.Errorf("%s is a file of the kernel's %s filesystem, not data a program wrote (a read of some waits forever)", path, fs)
	}
	return f, nil
}

// ErrTooLarge marks input larger than its reader's bound.
var ErrTooLarge = errors.New("too large")

// ReadRegularFile is os.ReadFile for a regular file of at most max bytes:
// a FIFO, a device or a directory is refused (OpenRegular), and so is a
// file larger than max (an error wrapping ErrTooLarge), before it is read
// into memory. Model files, matrix files and calibration files are read
// through it.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: more than %s", path, ErrTooLarge, byteCount(max))
	}
	return data, nil
}

// byteCount formats n bytes with a binary prefix, for messages.
func byteCount(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// DistinctFiles refuses a list of input files that names one file twice,
// however it is spelt (a second path, a symbolic link, a hard link:
// os.SameFile): its records would count twice, as if measured twice. Paths
// that cannot be stat'ed are left to the reader's error.
func DistinctFiles(paths []string) error {
	a, b, ok := SameFileTwice(paths)
	switch {
	case !ok:
		return nil
	case a == b:
		return fmt.Errorf("%s is given twice: its records would count as two runs", a)
	}
	return fmt.Errorf("%s and %s are the same file: its records would count as two runs", a, b)
}

// SameFileTwice returns the first two paths of the list that name one
// file (os.SameFile), and whether there are any. Paths that cannot be
// stat'ed are skipped: their reader says why.
func SameFileTwice(paths []string) (first, second string, ok bool) {
	type seen struct {
		path string
		info fs.FileInfo
	}
	var got []seen
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, s := range got {
			if os.SameFile(s.info, st) {
				return s.path, p, true
			}
		}
		got = append(got, seen{p, st})
	}
	return "", "", false
}
