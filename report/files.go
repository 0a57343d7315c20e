package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/commcost/commcost/results"
)

// WriteFile writes data to path whole or not at all: into a temporary
// file in the same directory, synced, then renamed over path (a rename
// within one file system is atomic). On failure the temporary file is
// removed, path keeps what it held, and the error names path.
func WriteFile(path string, data []byte) error {
	commit, _, err := stageFile(path, data)
	if err != nil {
		return err
	}
	return commit()
}

// stageFile writes data to a temporary file beside path and returns the
// rename that puts it in place (commit) and the removal that drops it
// (abort); the caller calls exactly one. Whatever fails removes the
// temporary file, and every error names path.
func stageFile(path string, data []byte) (commit func() error, abort func(), err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, nil, fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, nil, fail(err)
	}
	if err := f.Close(); err != nil {
		return nil, nil, fail(err)
	}
	// CreateTemp makes the file 0600; a report is for reading.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return nil, nil, fail(err)
	}
	return func() error {
		if err := os.Rename(tmp, path); err != nil {
			return fail(err)
		}
		return nil
	}, func() { os.Remove(tmp) }, nil
}

// ParamList formats params as k=v pairs sorted by key, as points are
// named in tables and errors.
func ParamList(p results.Params) string { return results.ParamList(p) }
