package opts

import (
	"os"

	"github.com/commcost/commcost/internal/fskind"
)

// NotDir says what path is when it exists as something other than a
// directory ("a regular file", "a named pipe (FIFO)", ...), for a flag that names an output
// directory, new or existing; "" when path is a directory or does not
// exist (the command makes it).
func NotDir(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return ""
	}
	return fskind.Name(fi.Mode())
}
