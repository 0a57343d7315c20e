// Package fskind names the type of a file for messages: "a directory",
// "a named pipe (FIFO)", ... where a command wanted a regular file or a
// directory.
package fskind

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Name names the type bits of mode, with its article ("a directory"); a
// regular file is "a regular file".
func Name(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// Nearest is path itself when it exists (symbolic links followed), else
// the nearest directory above it that does: where path would be created.
func Nearest(path string) string {
	p := filepath.Clean(path)
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(p)
		if up == p {
			return p
		}
		p = up
	}
}
