package results

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is s with everything a terminal would not show as text
// escaped: control characters (ESC starts the sequences that retitle a
// terminal or clear its screen), newlines and tabs (they would split a
// table's row), format characters (bidirectional overrides reorder what is
// shown) and invalid UTF-8, each as a Go escape (\x1b, \n, \u202e). Text
// without them comes back unchanged, so Printable is idempotent.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsGraphic(r):
			b.WriteRune(r)
		default:
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
	}
	return b.String()
}

// escapeStrings makes every string of a record read from a file
// Printable: bench, unit, parameter names and values, workload items,
// derived and counter names, and the metadata. A records file is input
// like any other; what it names reaches terminals, tables, report.md and
// plot titles, and none of them may receive raw control sequences.
// Records commcost writes hold none, so they read back unchanged.
func (r *Record) escapeStrings() {
	r.Bench, r.Unit = Printable(r.Bench), Printable(r.Unit)
	r.Reduction, r.Stop = Printable(r.Reduction), Printable(r.Stop)
	r.Params = printableParams(r.Params)
	r.Derived = printableKeys(r.Derived)
	r.Counters = printableKeys(r.Counters)
	for i := range r.Workload {
		w := &r.Workload[i]
		w.Bench, w.View = Printable(w.Bench), Printable(w.View)
		w.Params = printableParams(w.Params)
	}
	m := &r.Meta
	for _, p := range []*string{&m.Commit, &m.MPILibrary, &m.MPIVersion, &m.Binding, &m.Backend, &m.Date,
		&m.GOOS, &m.GOARCH, &m.GoVersion, &m.CPU, &m.Launch} {
		*p = Printable(*p)
	}
	for i := range m.Hosts {
		m.Hosts[i] = Printable(m.Hosts[i])
	}
	for i := range m.Command {
		m.Command[i] = Printable(m.Command[i])
	}
}

func printableParams(p Params) Params {
	if p == nil {
		return nil
	}
	out := make(Params, len(p))
	for k, v := range p {
		if s, ok := v.(string); ok {
			v = Printable(s)
		}
		out[Printable(k)] = v
	}
	return out
}

func printableKeys(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[Printable(k)] = v
	}
	return out
}
