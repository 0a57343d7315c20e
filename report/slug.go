package report

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// maxSlugBytes keeps a slug, its hash and an extension within a file
// name's 255 bytes with room to spare.
const maxSlugBytes = 96

// Slug makes s, a name taken from records (a bench, an application, a
// label), into one safe path element for a file name: ASCII letters,
// digits, '.', '-' and '_' are kept, every other byte becomes '_', a
// leading '.' (a hidden file, or ".." naming the parent) becomes '_', and
// the result is at most maxSlugBytes long. A name that had to change gets
// a short hash of the original appended, so two names that differ only in
// what was replaced ("a/b" and "a_b") still get two files. An empty name
// becomes "unnamed".
func Slug(s string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		case c == '.' && i > 0:
			b.WriteByte(c)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	out := b.String()
	if len(out) > maxSlugBytes {
		out, changed = out[:maxSlugBytes], true
	}
	if out == "" {
		return "unnamed"
	}
	if changed {
		h := fnv.New32a()
		h.Write([]byte(s))
		out = fmt.Sprintf("%s-%08x", out, h.Sum32())
	}
	return out
}
