package patterns

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/commcost/commcost/opts"
)

// OpReads is a sweep's table of the fields that only some of its
// operations read, each with the test of an operation that reads it. A
// field given on the command line that none of the selected operations
// reads is refused (Check): accepted, it would be ignored in silence and
// the records would not say what was asked for.
type OpReads[O fmt.Stringer] map[string]func(O) bool

// Check refuses the first field of r (by name) given in set that no
// operation of selected reads, as a conflict with opsField, naming the
// operations selected and those of all that read it; what is their noun
// ("ops", "modes").
func (r OpReads[O]) Check(set opts.Given, opsField, what string, selected, all []O) error {
	for _, field := range slices.Sorted(maps.Keys(r)) {
		reads := r[field]
		if !set.Has(field) || slices.ContainsFunc(selected, reads) {
			continue
		}
		var readers []string
		for _, o := range all {
			if reads(o) {
				readers = append(readers, o.String())
			}
		}
		return opts.Conflict(field, opsField, "none of the %s selected (%s) reads it; it is read by %s only",
			what, strings.Join(opNames(selected), ","), andList(readers))
	}
	return nil
}

func opNames[O fmt.Stringer](ops []O) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.String()
	}
	return out
}

// andList is "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
