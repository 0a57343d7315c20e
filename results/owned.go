package results

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/commcost/commcost/opts"
)

// CheckOwn refuses, as bad input, to replace path with commcost's output
// when path holds something commcost did not write: anything but a
// regular file, or a regular file whose first n bytes ours does not
// recognise as commcost's own output of that kind (what names it). A
// missing path, and an empty file, are free to write. Outputs whose names
// commcost chooses inside a user's directory (plots, trace files, SimGrid
// files) are checked so before anything is written: a user's file of the
// same name is never overwritten.
func CheckOwn(path, what string, n int, ours func(head []byte) bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return opts.Badf("%v: commcost writes its %s there (move it away and run again)", &NotRegularError{Path: path, Mode: fi.Mode()}, what)
	case fi.Size() == 0:
		return nil
	}
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if !ours(head[:k]) {
		return opts.Badf("%s exists and is not a %s commcost wrote: commcost would replace it with its own (move it away, or write into another directory, and run again)", path, what)
	}
	return nil
}
