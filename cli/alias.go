package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/commcost/commcost/job"
)

// Alias defines old as a deprecated spelling of flag target of fs, kept
// for one release: given, it prints one warning line on fs's output
// ("commcost: warning: --markdown is deprecated; use --format markdown")
// and sets target. With a value, old is a boolean flag that sets target to
// value (--markdown for --format markdown, --keep-samples for --samples
// true, told as --samples); without, old passes its own
// argument (--samples 300 for --matrices 300). The usage text leaves it
// out. Under a launcher only the launch's first process warns, as only it
// reports bad input found before MPI starts.
func Alias(fs *flag.FlagSet, old, target, value string) {
	if fs.Lookup(target) == nil {
		panic("cli: Alias of an undefined flag --" + target)
	}
	fs.Var(&alias{fs: fs, w: fs.Output(), old: old, target: target, value: value}, old, "deprecated: use --"+target)
}

// Warn prints one warning line on w ("commcost: warning: ...", escaped as
// every message is: Printable) on the launch's first process only, or
// alone when no launcher started it.
func Warn(w io.Writer, msg string) {
	if job.LauncherRank() <= 0 {
		fmt.Fprintln(w, "commcost: warning:", Printable(msg))
	}
}

// alias is the flag.Value of a deprecated spelling.
type alias struct {
	fs                 *flag.FlagSet
	w                  io.Writer // the flag set's output when defined (Parse swaps it)
	old, target, value string
	warned             bool
}

func (a *alias) Set(s string) error {
	if !a.warned {
		use := "--" + a.target
		if a.value != "" && a.value != "true" {
			use += " " + a.value
		}
		Warn(a.w, fmt.Sprintf("--%s is deprecated; use %s", a.old, use))
	}
	a.warned = true
	if a.value == "" {
		return a.fs.Set(a.target, s)
	}
	on, err := strconv.ParseBool(s)
	if err != nil || !on {
		return err
	}
	return a.fs.Set(a.target, a.value)
}

func (a *alias) String() string { return "" }

// IsBoolFlag makes an alias with a value a flag without an argument.
func (a *alias) IsBoolFlag() bool { return a.value != "" }

// Get is the target's value, so that a refused argument is told in the
// target's terms ("want an integer").
func (a *alias) Get() any {
	if a.value != "" {
		return false
	}
	if g, ok := a.fs.Lookup(a.target).Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}
