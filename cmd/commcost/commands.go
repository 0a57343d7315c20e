package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// command is one node of the subcommand tree: a leaf runs, a group (run
// nil) dispatches to its children. Each registers itself from its own
// file's init with a path name: register(command{name: "dsm check", ...})
// puts "check" under the group "dsm", in any order of the files. The
// dispatcher and every usage text are made from the tree, so the usage
// lines list exactly the subcommands that run.
type command struct {
	name    string // path from the top: "pingpong", "dsm", "dsm check"
	summary string // what it does, one paragraph (wrapped when printed)
	// run gets the arguments after the subcommand's path. Bad input is
	// reported by returning a *usageError (exit status 2). nil for a group.
	run func(args []string, stdout, stderr io.Writer) error
	// more is printed in a group's usage after its list of subcommands:
	// what the children share, examples.
	more string
}

// node is a command in the tree.
type node struct {
	command
	registered bool
	children   map[string]*node
	order      []string // children's names as registered
}

// root is the tree of every subcommand; its own name is empty.
var root = newTree()

func newTree() *node { return &node{children: map[string]*node{}} }

// register adds c to the tree of subcommands (from an init function).
func register(c command) { root.register(c) }

// register puts c at its path below n, creating the groups on the way as
// placeholders that their own registration fills in; a path registered twice
// is a programming error (panic).
func (n *node) register(c command) {
	path := strings.Fields(c.name)
	if len(path) == 0 {
		panic("commcost: command without a name")
	}
	for i, p := range path {
		child := n.children[p]
		if child == nil {
			// A placeholder until its own registration, which may come
			// from a file initialised later.
			child = &node{command: command{name: strings.Join(path[:i+1], " ")}, children: map[string]*node{}}
			n.children[p] = child
			n.order = append(n.order, p)
		}
		n = child
	}
	if n.registered {
		panic("commcost: command registered twice: " + c.name)
	}
	c.name = strings.Join(path, " ")
	n.command, n.registered = c, true
}

// lookup finds the node of a path ("dsm check"), or nil.
func lookup(name string) *node {
	n := root
	for _, p := range strings.Fields(name) {
		if n = n.children[p]; n == nil {
			return nil
		}
	}
	return n
}

// names are the children's names: a group's in the order its file
// registers them (an experiment's steps read in order), the top level's
// sorted (they come from many files).
func (n *node) names() []string {
	if n.name == "" {
		return slices.Sorted(slices.Values(n.order))
	}
	return n.order
}

// dispatch runs the leaf that args name below n.
func (n *node) dispatch(args []string, stdout, stderr io.Writer) error {
	if n.run != nil {
		return n.run(args, stdout, stderr)
	}
	if len(args) == 0 {
		n.usage(stderr)
		if n.name == "" {
			return usagef("no subcommand given")
		}
		return usagef("%s needs a subcommand: %s", n.name, orList(n.names()))
	}
	switch args[0] {
	case "help", "-h", "--help":
		return n.help(args[1:], stdout)
	}
	c, ok := n.children[args[0]]
	if !ok {
		if n.name == "" {
			return usagef("unknown subcommand %q (run 'commcost help' for the list)", args[0])
		}
		return usagef("%s %q: unknown subcommand; accepted: %s", n.name, args[0], strings.Join(n.names(), ", "))
	}
	return c.dispatch(args[1:], stdout, stderr)
}

// help prints the usage of the command that path names below n on stdout:
// a group's list, or a leaf's flags.
func (n *node) help(path []string, stdout io.Writer) error {
	start := strings.Fields(n.name)
	for i, p := range path {
		c, ok := n.children[p]
		if !ok {
			return usagef("help %s: no such subcommand (run 'commcost help' for the list)", strings.Join(append(start, path[:i+1]...), " "))
		}
		n = c
	}
	if n.run == nil {
		n.usage(stdout)
		return nil
	}
	// A leaf prints its flags when asked with --help (on its stderr, then
	// flag.ErrHelp); asked through help, that is the output. Not -h: the
	// k-access patterns have a flag --h.
	if err := n.run([]string{"--help"}, stdout, stdout); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

// usageWidth is the width usage text is wrapped to.
const usageWidth = 80

// usage prints a group's usage: its summary, its subcommands with theirs
// (a group's own children named after its summary), and its more text.
func (n *node) usage(w io.Writer) {
	if n.name == "" {
		fmt.Fprintln(w, "usage: commcost <subcommand> [flags]   (run under mpirun or srun)")
	} else {
		fmt.Fprintf(w, "usage: commcost %s <subcommand> [flags]\n\n", n.name)
		fmt.Fprint(w, wrap(n.summary, "", usageWidth))
	}
	fmt.Fprintln(w, "\nsubcommands:")
	names := n.names()
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		c := n.children[name]
		summary := c.summary
		if c.run == nil {
			summary += ": " + strings.Join(c.names(), ", ")
		}
		indent := strings.Repeat(" ", 2+width+2)
		text := wrap(summary, indent, usageWidth)
		fmt.Fprintf(w, "  %-*s  %s", width, name, strings.TrimPrefix(text, indent))
	}
	if n.more != "" {
		fmt.Fprintf(w, "\n%s", n.more)
	}
	if n.name == "" {
		fmt.Fprintln(w, "\n'commcost <subcommand> --help' lists a subcommand's flags;")
		fmt.Fprintln(w, "'commcost help <subcommand>...' prints the same on stdout.")
	} else {
		fmt.Fprintf(w, "\n'commcost %s <subcommand> --help' lists its flags.\n", n.name)
	}
}

// wrap breaks text into lines of at most width columns (a longer word gets
// a line of its own), each starting with indent and ending in a newline.
func wrap(text, indent string, width int) string {
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

// usageError is bad user input: the message names the flag and the accepted
// form; the process exits with status 2 and writes nothing.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// isUsage reports whether err is bad input (exit status 2).
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u) || errors.Is(err, flag.ErrHelp)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 2
	}
	var q *quietError
	if errors.As(err, &q) {
		// Another rank printed the message.
		if q.usage {
			return 2
		}
		return 1
	}
	usage := isUsage(err)
	// Bad input found before MPI is started (a flag, an argument) is found
	// the same way by every rank of the launch: only the first says it.
	if !(usage && !mpiStarted() && launcherRank() > 0) {
		fmt.Fprintln(stderr, "commcost:", printable(err.Error()))
	}
	if usage {
		return 2
	}
	return 1
}

// run is the whole program: main only maps its error to an exit status.
func run(args []string, stdout, stderr io.Writer) error {
	setInvocation(args)
	return root.dispatch(args, stdout, stderr)
}

// newFlagSet returns a flag set whose errors are returned, not printed and
// exited on, so that bad flags become usage errors (exit 2).
// Its usage text is the command's summary from the tree, then the flags.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("commcost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: commcost %s [flags]\n\n", name)
		if n := lookup(name); n != nil && n.summary != "" {
			fmt.Fprint(w, wrap(n.summary, "", usageWidth))
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors; positional
// arguments are refused unless allowArgs. A bad flag is one line that names
// it and points to -h (the flag package would print the whole usage after
// it, burying the message); the usage is printed when asked for, with -h
// or --help.
func parseFlags(fs *flag.FlagSet, args []string, allowArgs bool) error {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = out.Write(buf.Bytes())
			return err
		}
		return usagef("%s (run '%s -h' for the flags)", flagMessage(fs, err), fs.Name())
	}
	if !allowArgs && fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags only: %s -h lists them)", fs.Arg(0), fs.Name())
	}
	return nil
}

// flagErrorRE matches the flag package's message for a value its parser
// refuses.
var flagErrorRE = regexp.MustCompile(`^invalid (?:boolean )?value "((?s).*)" for (?:flag )?-([^:]+): (.*)$`)

// flagMessage rewrites the flag package's errors in the form of every
// other message: the flag with two dashes and its value, then what is
// wrong with it in the flag's own terms.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	m := flagErrorRE.FindStringSubmatch(msg)
	if m == nil {
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			return fmt.Sprintf("--%s: no such flag", strings.TrimLeft(name, "-"))
		}
		if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
			return fmt.Sprintf("--%s: needs a value", strings.TrimLeft(name, "-"))
		}
		return msg
	}
	value, name, why := m[1], m[2], m[3]
	want := why
	if f := fs.Lookup(name); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case int, int64, uint, uint64:
				want = "want an integer"
			case float64:
				want = "want a number"
			case bool:
				want = "want true or false"
			case time.Duration:
				want = "want a duration such as 500ms, 2s or 1m"
			}
		}
		if why == "value out of range" {
			want = "out of range; " + want
		}
	}
	return fmt.Sprintf("--%s %s: %s", name, echo(value), want)
}

// printable escapes what a terminal would not show as text (control
// characters, invalid UTF-8) in a message, so binary input that reaches a
// message through any path is never echoed raw; newlines and tabs stay.
func printable(msg string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(msg); i += w {
		r, size := utf8.DecodeRuneInString(msg[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", msg[i])
		case r == '\n' || r == '\t' || unicode.IsGraphic(r):
			b.WriteRune(r)
		default:
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
	}
	return b.String()
}

// echo renders user input for a message: as typed when it is printable
// text, quoted with escapes otherwise, so binary input never reaches the
// terminal raw and an empty value is visible.
func echo(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || unicode.IsSpace(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}
