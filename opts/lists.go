package opts

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSize is the largest size a size value names: one MPI call carries at
// most 2^31-1 elements.
const MaxSize = 1<<31 - 1

// sizeUnits are binary multipliers: 1K = 1024 bytes, as OSU prints sizes.
var sizeUnits = map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}

// maxSizeText is MaxSize as a size value may be typed (2G-1 is no size
// the flags accept), then in their units.
var maxSizeText = fmt.Sprintf("%d bytes (2G less 1), the most one MPI call carries", MaxSize)

// MaxSizeText is MaxSize as the size flags' messages word it ("2147483647
// bytes (2G less 1), the most one MPI call carries"), for a size flag
// that is a plain int.
func MaxSizeText() string { return maxSizeText }

// The accepted forms, for messages.
const (
	SizesForm  = "LO:HI (LO doubled up to HI, HI included: 1:4M gives the powers of two) or a list (e.g. 8,1K,1M)"
	IntsForm   = "a list (1,2,4,8) or a power-of-two range (64:16K)"
	FloatsForm = "a comma list such as 0.25,0.5,1"
	BoolsForm  = "a list of false and true"
)

// ParseSignedSize parses a byte count such as 8, 1K, 4M or 1G, or a
// negative one (-8), which the caller refuses in its own terms: a
// positive count is at most MaxSize, a negative one anything an int holds,
// so that the caller's lower bound ("must be positive") words every
// negative, however large.
func ParseSignedSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty value")
	}
	mult := int64(1)
	if u, ok := sizeUnits[t[len(t)-1]&^0x20]; ok && (t[len(t)-1] < '0' || t[len(t)-1] > '9') {
		mult = u
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && n > 0:
		return 0, &beyondMPIError{s}
	case errors.Is(err, strconv.ErrRange) || n < math.MinInt/mult:
		return 0, fmt.Errorf("%s is beyond the integers (at least %d)", Echo(s), math.MinInt)
	case err != nil:
		return 0, fmt.Errorf("%s is not a whole number (digits with an optional K, M or G, K = 1024)", Echo(s))
	case n > MaxSize/mult:
		return 0, &beyondMPIError{s}
	}
	return n * mult, nil
}

// beyondMPIError is ParseSignedSize's value beyond what one MPI call
// carries; ParseInts words it for values that are counts as well as sizes.
type beyondMPIError struct{ s string }

func (e *beyondMPIError) Error() string {
	return fmt.Sprintf("%s is more than %s", Echo(e.s), maxSizeText)
}

// ParseSize parses a byte count such as 8, 1K, 4M or 1G.
func ParseSize(s string) (int, error) {
	n, err := ParseSignedSize(s)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%s is negative; a size is 0 or more bytes", Echo(s))
	}
	return int(n), nil
}

// Items splits a comma list into trimmed items, refusing an empty list or
// an empty item; form is the accepted form for the message.
func Items(s, form string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list; accepted form: %s", form)
	}
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, fmt.Errorf("empty item in the list; accepted form: %s", form)
		}
	}
	return items, nil
}

// Distinct refuses a value listed twice; show prints a value.
func Distinct[T comparable](vals []T, show func(T) string) error {
	seen := make(map[T]bool, len(vals))
	for _, v := range vals {
		if seen[v] {
			return fmt.Errorf("%s is listed twice; list each value once", show(v))
		}
		seen[v] = true
	}
	return nil
}

// ParseList splits a comma list and parses every item, under the list
// rule; an item's error is followed by the accepted form.
func ParseList[T comparable](s, form string, parse func(string) (T, error)) ([]T, error) {
	items, err := Items(s, form)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		v, err := parse(it)
		if err != nil {
			return nil, fmt.Errorf("%v; accepted form: %s", err, form)
		}
		out = append(out, v)
	}
	if err := Distinct(out, func(v T) string { return fmt.Sprint(v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// ParseSizes parses LO:HI (LO, then powers of two up to HI, HI itself
// included; 0:HI means 0, 1, 2, 4, ...) or a comma list of sizes in the
// order given, each once.
func ParseSizes(s string) ([]int, error) {
	bad := func(why error) error { return fmt.Errorf("%w; accepted forms: %s", why, SizesForm) }
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 2 {
			return nil, bad(errors.New("a range has exactly one ':'"))
		}
		lo, err := ParseSize(parts[0])
		if err != nil {
			return nil, bad(err)
		}
		hi, err := ParseSize(parts[1])
		if err != nil {
			return nil, bad(err)
		}
		if lo > hi {
			return nil, bad(errors.New("the range must not decrease"))
		}
		var out []int
		v := lo
		if v == 0 {
			out = append(out, 0)
			v = 1
		}
		for ; v <= hi; v *= 2 {
			out = append(out, v)
			if v > math.MaxInt32/2 {
				break
			}
		}
		if out[len(out)-1] < hi {
			out = append(out, hi) // HI off the doubling ladder: the sweep covers it
		}
		return out, nil
	}
	items, err := Items(s, SizesForm)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(items))
	for _, f := range items {
		n, err := ParseSize(f)
		if err != nil {
			return nil, bad(err)
		}
		out = append(out, n)
	}
	return out, Distinct(out, strconv.Itoa)
}

// ParseInts parses a grid of integers: a comma list (1,2,4,8), power-of-two
// ranges (64:16K, sizes allowed) or both (1,4:16), in the order given and
// each value once. Negative values parse; their range is the
// configuration's to check.
func ParseInts(s string) ([]int, error) {
	return parseIntList(s, func(f string) (int, error) {
		v, err := ParseSignedSize(f)
		if b := (*beyondMPIError)(nil); errors.As(err, &b) {
			err = &IntBoundError{s: b.s}
		}
		return int(v), err
	})
}

// IntBoundError is an item of a list of ints (ParseInts, or a range of
// ParseCounts) beyond 2G-1. Such a list holds counts (k packets, n pairs)
// as well as sizes (l bytes), so the item's error cannot say which; a
// bound flag's error names the flag and what it holds instead.
type IntBoundError struct {
	s string
	// Range says the item is a range's end (LO:HI), which every list
	// bounds by 2G-1, whatever its plain items may be.
	Range bool
}

func (e *IntBoundError) Error() string {
	return fmt.Sprintf("%s is more than %d (2G less 1)", Echo(e.s), MaxSize)
}

// Value is the item as typed.
func (e *IntBoundError) Value() string { return e.s }

// ParseCounts parses counts (a matrix order, keys, vertices) in the forms
// of ParseInts. A plain item is not bounded by what one MPI call carries
// but only by an int: the program that takes it checks its own range,
// which depends on the ranks, and names it.
func ParseCounts(s string) ([]int, error) { return parseIntList(s, parseCount) }

// parseIntList parses the list forms of ParseInts, each plain item with
// item, each range as ParseSizes does.
func parseIntList(s string, item func(string) (int, error)) ([]int, error) {
	items, err := Items(s, IntsForm)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range items {
		if strings.Contains(f, ":") {
			v, err := ParseSizes(f)
			if b := (*beyondMPIError)(nil); errors.As(err, &b) {
				// A range's end beyond 2G-1, in the list's terms, not in bytes.
				return nil, fmt.Errorf("%w; accepted forms: %s", &IntBoundError{s: b.s, Range: true}, IntsForm)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
			continue
		}
		v, err := item(f)
		if err != nil {
			return nil, fmt.Errorf("%w; accepted forms: %s", err, IntsForm)
		}
		out = append(out, v)
	}
	return out, Distinct(out, strconv.Itoa)
}

// parseCount parses one count: digits with an optional K, M or G (K =
// 1024), within an int.
func parseCount(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if t != "" {
		if u, ok := sizeUnits[t[len(t)-1]&^0x20]; ok && (t[len(t)-1] < '0' || t[len(t)-1] > '9') {
			mult, t = u, t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is not a whole number (digits with an optional K, M or G, K = 1024)", Echo(s))
	}
	if n < 0 && (err != nil || n < math.MinInt/mult) {
		return 0, fmt.Errorf("%s is beyond the integers (at least %d)", Echo(s), math.MinInt)
	}
	if err != nil || n > math.MaxInt/mult {
		return 0, fmt.Errorf("%s is beyond the integers (at most %d)", Echo(s), math.MaxInt)
	}
	return int(n * mult), nil
}

// ParseFloats parses a comma list of finite numbers.
func ParseFloats(s string) ([]float64, error) {
	return ParseList(s, FloatsForm, func(f string) (float64, error) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is not a number", Echo(f))
		}
		return v, nil
	})
}

// ParseBools parses a comma list of booleans (false,true).
func ParseBools(s string) ([]bool, error) {
	return ParseList(s, BoolsForm, func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	})
}

// Sizes is a list of message sizes in bytes (ParseSizes). *Sizes is a
// flag.Value.
type Sizes []int

// Ints is a grid of integers (ParseInts). *Ints is a flag.Value.
type Ints []int

// Counts is a list of counts (ParseCounts): a program's size parameter,
// not bytes. *Counts is a flag.Value.
type Counts []int

// Floats is a list of numbers (ParseFloats). *Floats is a flag.Value.
type Floats []float64

// Bools is a list of booleans (ParseBools). *Bools is a flag.Value.
type Bools []bool

// Strings is a list of words under the list rule. *Strings is a flag.Value.
type Strings []string

// Bytes is one size in bytes (ParseSize: 8, 64K, 1G). *Bytes is a
// flag.Value.
type Bytes int

func (v *Sizes) Set(s string) (err error)   { *v, err = ParseSizes(s); return }
func (v *Ints) Set(s string) (err error)    { *v, err = ParseInts(s); return }
func (v *Counts) Set(s string) (err error)  { *v, err = ParseCounts(s); return }
func (v *Floats) Set(s string) (err error)  { *v, err = ParseFloats(s); return }
func (v *Bools) Set(s string) (err error)   { *v, err = ParseBools(s); return }
func (v *Strings) Set(s string) (err error) { *v, err = ParseList(s, "a comma list", ident); return }
func (v *Bytes) Set(s string) error {
	n, err := ParseSize(s)
	*v = Bytes(n)
	return err
}

func ident(s string) (string, error) { return s, nil }

func (v *Sizes) String() string   { return joinInts(derefOr(v)) }
func (v *Ints) String() string    { return joinInts(derefOr(v)) }
func (v *Counts) String() string  { return joinInts(derefOr(v)) }
func (v *Floats) String() string  { return join(derefOr(v), fmtFloat) }
func (v *Bools) String() string   { return join(derefOr(v), strconv.FormatBool) }
func (v *Strings) String() string { return strings.Join(derefOr(v), ",") }
func (v *Bytes) String() string {
	if v == nil {
		return "0"
	}
	return strconv.Itoa(int(*v))
}

// The list values print as strings in usage texts.
func (*Sizes) IsString() bool   { return true }
func (*Ints) IsString() bool    { return true }
func (*Counts) IsString() bool  { return true }
func (*Floats) IsString() bool  { return true }
func (*Bools) IsString() bool   { return true }
func (*Strings) IsString() bool { return true }
func (*Bytes) IsString() bool   { return true }

func derefOr[S ~[]E, E any](v *S) []E {
	if v == nil {
		return nil
	}
	return *v
}

func joinInts[S ~[]int](v S) string { return join(v, strconv.Itoa) }

func join[S ~[]E, E any](v S, show func(E) string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = show(x)
	}
	return strings.Join(s, ",")
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Echo renders input for a message: as typed when it is printable text,
// quoted with escapes otherwise, so binary input never reaches a terminal
// raw and an empty value is visible. A value longer than MaxEcho bytes
// keeps its beginning and end with what was left out counted between
// them (a list's items, else its characters): a message names the item it
// refuses itself, and a 5000-item list echoed whole made a 30 KB message.
func Echo(s string) string {
	if s == "" {
		return `""`
	}
	if len(s) > MaxEcho {
		head, tail := cutRunes(s, echoHead, true), cutRunes(s, echoTail, false)
		middle := s[len(head) : len(s)-len(tail)]
		what := fmt.Sprintf("%d characters", utf8.RuneCountInString(middle))
		if left, all := itemsWithin(s, len(head), len(s)-len(tail)); all > 1 && left > 0 {
			what = fmt.Sprintf("%d of %d items", left, all)
		}
		return echo(head) + " ... (" + what + " left out) ... " + echo(tail)
	}
	return echo(s)
}

// MaxEcho is the longest value Echo repeats whole; longer ones keep
// their first echoHead and last echoTail bytes.
const (
	MaxEcho  = 160
	echoHead = 80
	echoTail = 40
)

// echo quotes s when it holds what a terminal would not show as text.
func echo(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || unicode.IsSpace(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Files is a repeatable flag: every occurrence adds one value (a path),
// none is refused. *Files is a flag.Value.
type Files []string

func (v *Files) Set(s string) error {
	if s == "" {
		return errors.New("empty file name")
	}
	*v = append(*v, s)
	return nil
}

func (v *Files) String() string { return strings.Join(derefOr(v), ",") }
func (*Files) IsString() bool   { return true }

// itemsWithin counts the items of the comma list s that lie wholly in
// s[from:to], and all of its items.
func itemsWithin(s string, from, to int) (within, all int) {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ',' {
			continue
		}
		all++
		if start >= from && i <= to {
			within++
		}
		start = i + 1
	}
	return within, all
}

// cutRunes returns at most n bytes of s from its start (or end), cut at a
// rune boundary.
func cutRunes(s string, n int, fromStart bool) string {
	if fromStart {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return s[:i]
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
