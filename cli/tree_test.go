package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
)

// TestRegister: a subcommand registered before its group (files initialise
// in name order) lands under the group once the group registers; children
// keep their registration order; a path registered twice panics.
func TestRegister(t *testing.T) {
	tree := NewTree()
	var ran []string
	leaf := func(name string) Command {
		return Command{Name: name, Summary: "leaf " + name, Run: func(args []string, _, _ io.Writer) error {
			ran = append(ran, name+" "+strings.Join(args, " "))
			return nil
		}}
	}
	tree.Register(leaf("grp zeta"))
	tree.Register(Command{Name: "grp", Summary: "a group"})
	tree.Register(leaf("grp alpha"))
	tree.Register(leaf("top"))
	if got := strings.Join(tree.Names(), ","); got != "grp,top" {
		t.Errorf("top level %s, want grp,top (sorted)", got)
	}
	g := tree.Child("grp")
	if !g.Registered() || g.Summary != "a group" || strings.Join(g.Names(), ",") != "zeta,alpha" {
		t.Fatalf("group %+v, children %v; want registered, in registration order zeta,alpha", g.Command, g.Names())
	}
	if err := tree.Dispatch([]string{"grp", "alpha", "--x", "1"}, io.Discard, io.Discard); err != nil || len(ran) != 1 || ran[0] != "grp alpha --x 1" {
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
		err := tree.Dispatch(tt.args, io.Discard, io.Discard)
		if !opts.IsBadInput(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering grp alpha twice did not panic")
		}
	}()
	tree.Register(leaf("grp alpha"))
}

// TestPrintableShortensWords: a word of any length that reached a message
// keeps its beginning and end, the rest counted; short words and the
// message's spacing stay as they are.
func TestPrintableShortensWords(t *testing.T) {
	long := strings.Repeat("a,", 5000) + "end"
	got := Printable("compare --by " + long + ": want a list\nof keys")
	if len(got) > 400 || !strings.HasPrefix(got, "compare --by a,a,") || !strings.Contains(got, "left out") || !strings.HasSuffix(got, "a,end: want a list\nof keys") {
		t.Errorf("Printable of a 10 KB word: %d bytes, %q", len(got), got)
	}
	if msg := "a short message\twith\ttabs"; Printable(msg) != msg {
		t.Errorf("Printable(%q) = %q", msg, Printable(msg))
	}
}
