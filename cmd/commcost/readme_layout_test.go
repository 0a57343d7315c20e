package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayout: README's Layout table names every Go package of the
// repository (internal helpers and test-only packages apart) and only
// directories that exist; it once named packages that did not exist and
// omitted model, emulate, divalib and permsched.
func TestReadmeLayout(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "\n## Layout")
	if i < 0 {
		t.Fatal("README has no Layout section")
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)` \\|").FindAllStringSubmatch(s, -1) {
		named[m[1]] = true
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README Layout names %s, which does not exist", m[1])
		}
	}
	covered := func(dir string) bool {
		for d := dir; d != "."; d = filepath.Dir(d) {
			if named[d] {
				return true
			}
		}
		return false
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "internal" || d.Name() == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(rel)
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || dir == "." {
			return nil
		}
		// A package of test helpers only (storetest, schedtest) belongs to
		// its parent's entry.
		if strings.HasSuffix(dir, "test") && named[filepath.Dir(dir)] {
			return nil
		}
		if !named[dir] && !covered(dir) {
			t.Errorf("package %s is not in README's Layout table", dir)
			named[dir] = true // once
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
