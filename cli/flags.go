package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/commcost/commcost/opts"
)

// NewFlagSet returns a flag set whose errors are returned, not printed and
// exited on, so that bad flags become bad input (exit 2). Its usage text is
// the command's summary from Root, then the flags (PrintDefaults).
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("commcost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: commcost %s [flags]\n\n", name)
		if n := Lookup(name); n != nil && n.Summary != "" {
			fmt.Fprint(w, Wrap(n.Summary, "", UsageWidth))
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "flags:")
		PrintDefaults(fs)
	}
	return fs
}

// PrintDefaults prints the flags of fs as flag.PrintDefaults does, except
// that the list values of package opts read as strings: "-k string ...
// (default "1,2,4,8")", as they are typed; deprecated spellings (Alias)
// are left out.
func PrintDefaults(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(*alias); ok {
			return
		}
		v := f.Value
		if u, ok := v.(interface{ Unwrap() flag.Value }); ok {
			v = u.Unwrap() // a bound field's own type decides its zero and name
		}
		str, isStr := v.(interface{ IsString() bool })
		typed, isTyped := v.(interface{ TypeName() string })
		if !(isStr && str.IsString()) && !isTyped {
			one := flag.NewFlagSet("", flag.ContinueOnError)
			one.SetOutput(fs.Output())
			one.Var(v, f.Name, f.Usage)
			one.Lookup(f.Name).DefValue = f.DefValue
			one.PrintDefaults()
			return
		}
		name, usage := flag.UnquoteUsage(f)
		if name == "value" {
			name = "string"
			if isTyped {
				name = typed.TypeName()
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s %s\n    \t%s", f.Name, name, strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch {
		case f.DefValue == "":
		case isTyped:
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		default:
			fmt.Fprintf(&b, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(fs.Output(), b.String())
	})
}

// Parse parses args and turns flag errors into bad input; positional
// arguments are refused unless allowArgs. A bad flag is one line that
// names it and points to -h (the flag package would print the whole usage
// after it, burying the message); the usage is printed when asked for,
// with -h or --help (flag.ErrHelp).
func Parse(fs *flag.FlagSet, args []string, allowArgs bool) error {
	out := fs.Output()
	if bareH(fs, args) {
		fs.Usage()
		return flag.ErrHelp
	}
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = out.Write(buf.Bytes())
			return err
		}
		return opts.Badf("%s (run '%s %s' for the flags)", flagMessage(fs, err), fs.Name(), HelpFlag(fs))
	}
	if !allowArgs && fs.NArg() > 0 {
		return opts.Badf("unexpected argument %q (flags only: %s %s lists them)", fs.Arg(0), fs.Name(), HelpFlag(fs))
	}
	return nil
}

// bareH reports whether args ask for help through -h or --h where fs has a
// flag named h (kaccess's hot spots): one with no value after it (the last
// argument, or followed by another flag) is the help every subcommand
// gives for -h, as --h N stays the flag.
func bareH(fs *flag.FlagSet, args []string) bool {
	if fs.Lookup("h") == nil {
		return false
	}
	for i, a := range args {
		if a == "--" {
			return false
		}
		if a != "-h" && a != "--h" {
			continue
		}
		if i+1 == len(args) || isFlag(args[i+1]) {
			return true
		}
	}
	return false
}

// isFlag reports whether a looks like a flag (-x, --name), not a value
// such as -1 or -.5.
func isFlag(a string) bool {
	name := strings.TrimLeft(a, "-")
	return len(a) > len(name) && name != "" && (unicode.IsLetter(rune(name[0])))
}

// HelpFlag is the flag that prints fs's usage: -h, or --help where a
// flag of fs is named h (kaccess's hot-spot fraction), which -h N sets
// (a bare -h prints the usage there too: bareH).
func HelpFlag(fs *flag.FlagSet) string {
	if fs.Lookup("h") != nil {
		return "--help"
	}
	return "-h"
}

// ParseInterspersed parses flags that may come before, between or after
// the positional arguments (commcost fit hockney run.jsonl --plot x.png),
// which the flag package alone stops at, and returns the positional ones.
// After "--" everything is positional.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := Parse(fs, args, true); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// Given is the set of flags given on the command line.
func Given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
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
	return fmt.Sprintf("--%s %s: %s", name, opts.Echo(value), want)
}

// Printable escapes what a terminal would not show as text (control
// characters, invalid UTF-8) in a message, so binary input that reaches a
// message through any path is never echoed raw; newlines and tabs stay.
// A word longer than opts.MaxEcho (a path, a list, an argument of any
// length that reached the message whole) keeps its beginning and end, as
// opts.Echo does for a flag's value.
func Printable(msg string) string {
	msg = shortenWords(msg)
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

// shortenWords passes every run of non-space characters longer than
// opts.MaxEcho through opts.Echo.
func shortenWords(msg string) string {
	if len(msg) <= opts.MaxEcho {
		return msg
	}
	var b strings.Builder
	for len(msg) > 0 {
		i := strings.IndexAny(msg, " \n\t")
		if i < 0 {
			i = len(msg)
		}
		if w := msg[:i]; len(w) > opts.MaxEcho {
			b.WriteString(opts.Echo(w))
		} else {
			b.WriteString(w)
		}
		if i < len(msg) {
			b.WriteByte(msg[i])
			i++
		}
		msg = msg[i:]
	}
	return b.String()
}

// Bound is one or more configurations bound to one flag set (opts.Bind):
// a run's own configuration and the shared ones (job.Launch, job.Output).
type Bound struct {
	FS       *flag.FlagSet
	bindings []*opts.Binding
	cfgs     []any
}

// Bind binds the tagged fields of every cfg to fs.
func Bind(fs *flag.FlagSet, cfgs ...any) *Bound {
	b := &Bound{FS: fs, cfgs: cfgs}
	for _, c := range cfgs {
		b.bindings = append(b.bindings, opts.Bind(fs, c))
	}
	return b
}

// Check parses args into the bound configurations and validates them
// (Validate), telling a field's error by its flag.
func (b *Bound) Check(args []string, allowArgs bool) error {
	if err := Parse(b.FS, args, allowArgs); err != nil {
		return err
	}
	return b.Validate()
}

// Validate fills each configuration's given fields (opts.Given) and
// validates each that is an opts.Validator, in the order bound.
func (b *Bound) Validate() error {
	for i, c := range b.cfgs {
		b.bindings[i].Finish()
		if v, ok := c.(opts.Validator); ok {
			if err := b.bindings[i].Err(v.Validate()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Err tells err in the flags' terms of whichever configuration names its
// field (opts.Binding.Err).
func (b *Bound) Err(err error) error {
	for _, bd := range b.bindings {
		if e := bd.Err(err); e != err {
			return e
		}
	}
	return err
}

// Binding is the binding of the i-th configuration.
func (b *Bound) Binding(i int) *opts.Binding { return b.bindings[i] }

// FlagText is "--name value" for flag name with its value as given
// (opts.Binding.FlagText: "--sizes 1G", not "--sizes 1073741824"), or ""
// when no bound field has that flag.
func (b *Bound) FlagText(name string) string {
	for _, bd := range b.bindings {
		if t := bd.FlagTextOfFlag(name); t != "" {
			return t
		}
	}
	return ""
}

// Default changes the default of flag name after binding: its value and
// the default its help shows (a run whose default differs from the shared
// one, such as a slower pattern's --max-time).
func Default(fs *flag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli: Default of an undefined flag --" + name)
	}
	if err := f.Value.Set(value); err != nil {
		panic(fmt.Sprintf("cli: default %q of --%s: %v", value, name, err))
	}
	f.DefValue = value
}

// Usage changes the help of flag name.
func Usage(fs *flag.FlagSet, name, usage string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli: Usage of an undefined flag --" + name)
	}
	f.Usage = usage
}
