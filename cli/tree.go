package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/commcost/commcost/opts"
)

// Command is one node of the subcommand tree: a leaf runs, a group (Run
// nil) dispatches to its children. Each registers itself from its own
// file's init with a path name: Register(Command{Name: "dsm check", ...})
// puts "check" under the group "dsm", in any order of the files.
type Command struct {
	Name    string // path from the top: "pingpong", "dsm", "dsm check"
	Summary string // what it does, one paragraph (wrapped when printed)
	// Run gets the arguments after the subcommand's path. Bad input is
	// reported by returning bad input (opts.IsBadInput, exit status 2).
	// Nil for a group.
	Run func(args []string, stdout, stderr io.Writer) error
	// More is printed in a group's usage after its list of subcommands:
	// what the children share, examples.
	More string
	// Check, when set, parses and validates the arguments exactly as Run
	// does before it measures, and returns: 'commcost --check-flags NAME
	// ARGS...' calls it, so a script checks flags it was handed before it
	// spends a job's time on the steps ahead of them.
	Check func(args []string, stderr io.Writer) error
}

// CheckFlags is the hidden global flag of the check-only mode (Check).
const CheckFlags = "--check-flags"

// Node is a command in the tree.
type Node struct {
	Command
	registered bool
	children   map[string]*Node
	order      []string // children's names as registered
}

// Root is the tree of every subcommand; its own name is empty.
var Root = NewTree()

// NewTree returns an empty tree (Root is the program's; tests make their own).
func NewTree() *Node { return &Node{children: map[string]*Node{}} }

// Register adds c to Root (from an init function).
func Register(c Command) { Root.Register(c) }

// Register puts c at its path below n, creating the groups on the way as
// placeholders that their own registration fills in; a path registered
// twice is a programming error (panic).
func (n *Node) Register(c Command) {
	path := strings.Fields(c.Name)
	if len(path) == 0 {
		panic("cli: command without a name")
	}
	for i, p := range path {
		child := n.children[p]
		if child == nil {
			child = &Node{Command: Command{Name: strings.Join(path[:i+1], " ")}, children: map[string]*Node{}}
			n.children[p] = child
			n.order = append(n.order, p)
		}
		n = child
	}
	if n.registered {
		panic("cli: command registered twice: " + c.Name)
	}
	c.Name = strings.Join(path, " ")
	n.Command, n.registered = c, true
}

// Lookup finds the node of a path ("dsm check") below Root, or nil.
func Lookup(name string) *Node { return Root.Lookup(name) }

// Lookup finds the node of a path below n, or nil.
func (n *Node) Lookup(name string) *Node {
	for _, p := range strings.Fields(name) {
		if n = n.children[p]; n == nil {
			return nil
		}
	}
	return n
}

// Names are the children's names: a group's in the order its file
// registers them (an experiment's steps read in order), the top level's
// sorted (they come from many files).
func (n *Node) Names() []string {
	if n.Name == "" {
		return slices.Sorted(slices.Values(n.order))
	}
	return n.order
}

// Child is the child called name, or nil.
func (n *Node) Child(name string) *Node { return n.children[name] }

// Leaves lists every runnable command below n, depth first in Names order.
func (n *Node) Leaves() []*Node {
	var out []*Node
	for _, name := range n.Names() {
		c := n.children[name]
		if c.Run != nil {
			out = append(out, c)
		}
		out = append(out, c.Leaves()...)
	}
	return out
}

// Dispatch runs the leaf that args name below n. A node that runs may
// have subcommands too ("trace" runs a program, "trace summary" reads
// its files): a first argument naming a child goes to it.
func (n *Node) Dispatch(args []string, stdout, stderr io.Writer) error {
	if n.Run != nil {
		if len(args) > 0 && n.children[args[0]] != nil {
			return n.children[args[0]].Dispatch(args[1:], stdout, stderr)
		}
		return n.Run(args, stdout, stderr)
	}
	if len(args) == 0 {
		n.Usage(stderr)
		if n.Name == "" {
			return opts.Badf("no subcommand given")
		}
		return opts.Badf("%s needs a subcommand: %s", n.Name, orList(n.Names()))
	}
	switch args[0] {
	case CheckFlags:
		if n.Name == "" {
			return n.checkOnly(args[1:], stderr)
		}
	case "help":
		return n.Help(args[1:], stdout)
	case "-h", "--help":
		// As a leaf's flags: --help answers on stderr, help on stdout.
		return n.Help(args[1:], stderr)
	}
	c, ok := n.children[args[0]]
	if !ok {
		if n.Name == "" {
			return opts.Badf("unknown subcommand %q (run 'commcost help' for the list)", args[0])
		}
		return opts.Badf("%s %q: unknown subcommand; accepted: %s", n.Name, args[0], strings.Join(n.Names(), ", "))
	}
	return c.Dispatch(args[1:], stdout, stderr)
}

// checkOnly runs the Check of the command that args name below n with
// the arguments after its path: exit status 0 for flags a run accepts, 2
// for bad input, and nothing measured.
func (n *Node) checkOnly(args []string, stderr io.Writer) error {
	top := n
	var path []string
	for len(args) > 0 && n.children[args[0]] != nil {
		n = n.children[args[0]]
		path = append(path, args[0])
		args = args[1:]
	}
	var checkable []string
	top.Walk(func(c *Node) {
		if c.Check != nil {
			checkable = append(checkable, c.Name)
		}
	})
	switch {
	case len(path) == 0 && len(args) == 0:
		return opts.Badf("%s needs a subcommand and its flags (commcost %s kkaccess --k 1,2); accepted: %s", CheckFlags, CheckFlags, strings.Join(checkable, ", "))
	case len(path) == 0:
		return opts.Badf("%s %s: unknown subcommand (run 'commcost help' for the list)", CheckFlags, opts.Echo(args[0]))
	case n.Check == nil:
		return opts.Badf("%s %s: %s has no check-only mode; accepted: %s", CheckFlags, n.Name, n.Name, strings.Join(checkable, ", "))
	}
	return n.Check(args, stderr)
}

// Help prints the usage of the command that path names below n on stdout:
// a group's list, or a leaf's flags.
func (n *Node) Help(path []string, stdout io.Writer) error {
	start := strings.Fields(n.Name)
	for i, p := range path {
		c, ok := n.children[p]
		if !ok {
			return opts.Badf("help %s: no such subcommand (run 'commcost help' for the list)", strings.Join(append(start, path[:i+1]...), " "))
		}
		n = c
	}
	if n.Run == nil {
		n.Usage(stdout)
		return nil
	}
	// A leaf prints its flags when asked with --help (on its stderr, then
	// flag.ErrHelp); asked through help, that is the output. Not -h: the
	// k-access patterns have a flag --h.
	if err := n.Run([]string{"--help"}, stdout, stdout); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

// UsageWidth is the width usage text is wrapped to.
const UsageWidth = 80

// Usage prints a group's usage: its summary, its subcommands with theirs
// (a group's own children named after its summary), and its more text.
func (n *Node) Usage(w io.Writer) {
	if n.Name == "" {
		fmt.Fprintln(w, "usage: commcost <subcommand> [flags]   (run under mpirun or srun)")
	} else {
		fmt.Fprintf(w, "usage: commcost %s <subcommand> [flags]\n\n", n.Name)
		fmt.Fprint(w, Wrap(n.Summary, "", UsageWidth))
	}
	fmt.Fprintln(w, "\nsubcommands:")
	names := n.Names()
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		c := n.children[name]
		summary := c.Summary
		if c.Run == nil {
			summary += ": " + strings.Join(c.Names(), ", ")
		}
		indent := strings.Repeat(" ", 2+width+2)
		text := Wrap(summary, indent, UsageWidth)
		fmt.Fprintf(w, "  %-*s  %s", width, name, strings.TrimPrefix(text, indent))
	}
	if n.More != "" {
		fmt.Fprintf(w, "\n%s", n.More)
	}
	if n.Name == "" {
		fmt.Fprintln(w, "\n'commcost <subcommand> --help' lists a subcommand's flags;")
		fmt.Fprintln(w, "'commcost help <subcommand>...' prints the same on stdout.")
	} else {
		fmt.Fprintf(w, "\n'commcost %s <subcommand> --help' lists its flags.\n", n.Name)
	}
}

// Wrap breaks text into lines of at most width columns (a longer word gets
// a line of its own), each starting with indent and ending in a newline.
func Wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Registered reports whether n was registered (not a placeholder left by a
// child whose group never registered).
func (n *Node) Registered() bool { return n.registered }

// Walk calls f on every node below n, depth first in Names order.
func (n *Node) Walk(f func(*Node)) {
	for _, name := range n.Names() {
		c := n.children[name]
		f(c)
		c.Walk(f)
	}
}

// Unregister removes the child called name of n (for tests that add a
// command of their own).
func (n *Node) Unregister(name string) {
	delete(n.children, name)
	n.order = slices.DeleteFunc(n.order, func(s string) bool { return s == name })
}
