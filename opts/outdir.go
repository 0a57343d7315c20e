package opts

import (
	"os"

	"github.com/commcost/commcost/internal/fskind"
)

// NotDir says what path is when it exists as something other than a
// directory ("a regular file", "a named pipe (FIFO)", ...), for a flag that
// names an output directory, new or existing; and, for a directory or a
// new path, when it is (or would be created) on one of the kernel's
// interface filesystems (/proc, /sys, /dev's devtmpfs: "on the kernel's
// proc filesystem, not a place for data"), so that no command writes a
// temporary file there first. "" when path is a directory or does not
// exist (the command makes it) anywhere else.
func NotDir(path string) string {
	fi, err := os.Stat(path)
	if err == nil && !fi.IsDir() {
		return fskind.Name(fi.Mode())
	}
	if kfs := fskind.KernelPath(path); kfs != "" {
		return "on the kernel's " + kfs + " filesystem, not a place for data"
	}
	return ""
}
