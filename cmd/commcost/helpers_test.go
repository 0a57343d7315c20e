package main

import (
	"path/filepath"
	"testing"
)

// badInputDir is the set-up of the bad-input tests: a temporary directory
// and the records file in it (--out) that a refused invocation must leave
// unwritten.
func badInputDir(t *testing.T) (dir, out string) {
	t.Helper()
	dir = t.TempDir()
	return dir, filepath.Join(dir, "x.jsonl")
}
