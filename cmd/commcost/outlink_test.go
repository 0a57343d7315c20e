package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOutDanglingLink: --out naming a symbolic link whose target does not
// exist is bad input (exit 2) naming the flag and where the link points,
// and the target, outside the directory named, is not created; a link to
// an existing records file is appended through.
func TestOutDanglingLink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "created.jsonl")
	link := filepath.Join(dir, "dangl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	run := []string{"pingpong", "--backend", "local", "--sizes", "8", "--iters", "2", "--min-reps", "2", "--max-reps", "2", "--quiet"}
	for _, tc := range []struct{ name, out, want string }{
		{"absolute target", link, "--out " + link + ": results: cannot write " + link + ": " + link + " is a symbolic link to " + target + ", which does not exist; commcost does not create a link's target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkUsageError(t, dir, append(run, "--out", tc.out), tc.want)
		})
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--out %s created its target %s: %v", link, target, err)
	}
	// Through a link to a records file.
	file, good := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "good")
	if code, _, errs := runCLI(t, append(run, "--out", file)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := os.Symlink("r.jsonl", good); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, append(run, "--out", good)...); code != 0 {
		t.Fatalf("--out through a link: exit %d: %s", code, errs)
	}
}
