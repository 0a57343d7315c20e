package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
)

// command is one subcommand. Each lives in its own file and registers itself
// from init, so subcommands can be added without touching the dispatcher.
type command struct {
	name    string
	summary string
	// run gets the arguments after the subcommand name. Bad input is
	// reported by returning a *usageError (exit status 2).
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("commcost: command registered twice: " + c.name)
	}
	commands[c.name] = c
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
	fmt.Fprintln(stderr, "commcost:", err)
	if isUsage(err) {
		return 2
	}
	return 1
}

// run is the whole program: main only maps its error to an exit status.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usagef("no subcommand given")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		return usagef("unknown subcommand %q (run 'commcost help' for the list)", args[0])
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: commcost <subcommand> [flags]   (run under mpirun or srun)")
	fmt.Fprintln(w, "\nsubcommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n'commcost <subcommand> -h' lists a subcommand's flags.")
}

// newFlagSet returns a flag set whose errors are returned, not printed and
// exited on, so that bad flags become usage errors (exit 2).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("commcost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and turns flag errors into usage errors; positional
// arguments are refused unless allowArgs.
func parseFlags(fs *flag.FlagSet, args []string, allowArgs bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if !allowArgs && fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags only: %s -h lists them)", fs.Arg(0), fs.Name())
	}
	return nil
}
