package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walk calls f on every registered node below n, depth first.
func walk(n *node, f func(*node)) {
	for _, name := range n.names() {
		c := n.children[name]
		f(c)
		walk(c, f)
	}
}

// TestCommandTree checks the registered tree: every node was registered (no
// placeholder left by a child whose group never registered), a leaf runs and
// has no children, a group has children and no run, every node says what it
// does; and every usage text is the tree's: a group's usage and its "needs a
// subcommand" error name every child, and every leaf's -h (through 'help')
// names its own path.
func TestCommandTree(t *testing.T) {
	walk(root, func(n *node) {
		t.Run(strings.ReplaceAll(n.name, " ", "_"), func(t *testing.T) {
			switch {
			case !n.registered:
				t.Fatalf("%q is a placeholder: its group was never registered", n.name)
			case n.summary == "":
				t.Errorf("%q has no summary", n.name)
			case n.run != nil && len(n.children) > 0:
				t.Fatalf("%q runs and has subcommands %v", n.name, n.names())
			case n.run == nil && len(n.children) == 0:
				t.Fatalf("%q neither runs nor has subcommands", n.name)
			}
			path := strings.Fields(n.name)
			if n.run != nil {
				code, stdout, stderr := runCLI(t, append([]string{"help"}, path...)...)
				if code != 0 || !strings.HasPrefix(stdout, "usage: commcost "+n.name+" ") || stderr != "" {
					t.Errorf("help %s: exit %d, stdout starts %q, stderr %q", n.name, code, head(stdout), stderr)
				}
				return
			}
			var usage bytes.Buffer
			n.usage(&usage)
			code, stdout, stderr := runCLI(t, path...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, usage.String()) {
				t.Errorf("%s without a subcommand: exit %d, stdout %q, stderr does not start with the usage:\n%s", n.name, code, stdout, stderr)
			}
			for _, child := range n.names() {
				if !strings.Contains(usage.String(), "\n  "+child+" ") {
					t.Errorf("usage of %s lacks %q:\n%s", n.name, child, usage.String())
				}
				if !strings.Contains(stderr, child) {
					t.Errorf("error of %s without a subcommand lacks %q: %s", n.name, child, stderr)
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

// TestRegister: a subcommand registered before its group (files initialise
// in name order) lands under the group once the group registers; children
// keep their registration order; a path registered twice panics.
func TestRegister(t *testing.T) {
	tree := newTree()
	var ran []string
	leaf := func(name string) command {
		return command{name: name, summary: "leaf " + name, run: func(args []string, _, _ io.Writer) error {
			ran = append(ran, name+" "+strings.Join(args, " "))
			return nil
		}}
	}
	tree.register(leaf("grp zeta"))
	tree.register(command{name: "grp", summary: "a group"})
	tree.register(leaf("grp alpha"))
	tree.register(leaf("top"))
	if got := strings.Join(tree.names(), ","); got != "grp,top" {
		t.Errorf("top level %s, want grp,top (sorted)", got)
	}
	g := tree.children["grp"]
	if !g.registered || g.summary != "a group" || strings.Join(g.names(), ",") != "zeta,alpha" {
		t.Fatalf("group %+v, children %v; want registered, in registration order zeta,alpha", g.command, g.names())
	}
	if err := tree.dispatch([]string{"grp", "alpha", "--x", "1"}, io.Discard, io.Discard); err != nil || len(ran) != 1 || ran[0] != "grp alpha --x 1" {
		t.Errorf("dispatch: %v, ran %q", err, ran)
	}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no subcommand given"},
		{[]string{"grp"}, "grp needs a subcommand: zeta or alpha"},
		{[]string{"grp", "beta"}, `grp "beta": unknown subcommand; accepted: zeta, alpha`},
		{[]string{"nope"}, `unknown subcommand "nope"`},
		{[]string{"help", "grp", "beta"}, "help grp beta: no such subcommand"},
	}
	for _, tt := range tests {
		err := tree.dispatch(tt.args, io.Discard, io.Discard)
		if !isUsage(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering grp alpha twice did not panic")
		}
	}()
	tree.register(leaf("grp alpha"))
}

// TestGroupUsageGolden: the usage of each group and of one leaf, from the
// tree (help prints them on stdout).
func TestGroupUsageGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"help_emulate", []string{"emulate", "help"}},
		{"help_dsm", []string{"help", "dsm"}},
		{"help_sched", []string{"sched", "--help"}},
		{"help_dsm_check", []string{"help", "dsm", "check"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
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
