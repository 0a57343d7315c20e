package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/cli"
)

// TestCommandTree checks the registered tree: every node was registered (no
// placeholder left by a child whose group never registered), a leaf runs and
// has no children, a group has children and no run, every node says what it
// does; and every usage text is the tree's: a group's usage and its "needs a
// subcommand" error name every child, and every leaf's -h (through 'help')
// names its own path.
func TestCommandTree(t *testing.T) {
	cli.Root.Walk(func(n *cli.Node) {
		t.Run(strings.ReplaceAll(n.Name, " ", "_"), func(t *testing.T) {
			switch {
			case !n.Registered():
				t.Fatalf("%q is a placeholder: its group was never registered", n.Name)
			case n.Summary == "":
				t.Errorf("%q has no summary", n.Name)
			case n.Run == nil && len(n.Names()) == 0:
				t.Fatalf("%q neither runs nor has subcommands", n.Name)
			}
			path := strings.Fields(n.Name)
			if n.Run != nil {
				code, stdout, stderr := runCLI(t, append([]string{"help"}, path...)...)
				if code != 0 || !strings.HasPrefix(stdout, "usage: commcost "+n.Name+" ") || stderr != "" {
					t.Errorf("help %s: exit %d, stdout starts %q, stderr %q", n.Name, code, head(stdout), stderr)
				}
				return
			}
			var usage bytes.Buffer
			n.Usage(&usage)
			code, stdout, stderr := runCLI(t, path...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, usage.String()) {
				t.Errorf("%s without a subcommand: exit %d, stdout %q, stderr does not start with the usage:\n%s", n.Name, code, stdout, stderr)
			}
			for _, child := range n.Names() {
				if !strings.Contains(usage.String(), "\n  "+child+" ") {
					t.Errorf("usage of %s lacks %q:\n%s", n.Name, child, usage.String())
				}
				if !strings.Contains(stderr, child) {
					t.Errorf("error of %s without a subcommand lacks %q: %s", n.Name, child, stderr)
				}
			}
		})
	})
}

func head(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestGroupUsageGolden: the usage of each group and of one leaf, from the
// tree: help prints them on stdout, --help (of a group as of a leaf) on
// stderr.
func TestGroupUsageGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr bool
	}{
		{"help_emulate", []string{"emulate", "help"}, false},
		{"help_dsm", []string{"help", "dsm"}, false},
		{"help_sched", []string{"sched", "--help"}, true},
		{"help_dsm_check", []string{"help", "dsm", "check"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if tc.stderr {
				out, errs = errs, out
			}
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, the other stream %q", code, errs)
			}
			golden(t, tc.name, out)
		})
	}
}

// TestDocCommentsNameTheirFunction: by Go convention a function's doc
// comment begins with its name; a comment that names another function
// (left behind by a rename) misleads.
func TestDocCommentsNameTheirFunction(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			if words := strings.Fields(fd.Doc.Text()); len(words) > 0 && words[0] != fd.Name.Name {
				t.Errorf("%s: the doc comment of %s begins with %q", fset.Position(fd.Pos()), fd.Name.Name, words[0])
			}
		}
	}
}
