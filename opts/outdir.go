package opts

import (
	"io/fs"
	"os"
)

// NotDir says what path is when it exists as something other than a
// directory ("a file", "a FIFO", ...), for a flag that names an output
// directory, new or existing; "" when path is a directory or does not
// exist (the command makes it).
func NotDir(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return ""
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a file"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a directory"
}
