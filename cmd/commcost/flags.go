package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are binary multipliers: 1K = 1024 bytes, as OSU prints sizes.
var sizeUnits = map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}

// maxSizeBytes bounds one message size given on the command line: one MPI
// call carries at most 2^31-1 elements (mpi.MaxCount).
const maxSizeBytes = 1<<31 - 1

// List flags (--sizes, --k, --r, --op, ...) follow one rule everywhere:
// items are separated by commas and measured in the order given; an empty
// list, an empty item or a value listed twice (also when two spellings
// name it, 1K and 1024) is refused with a message naming the flag; a
// list never falls back to the default.

// listItems splits the comma list s of flag flagName into trimmed items,
// refusing an empty list or item; form is the accepted form for messages.
func listItems(flagName, s, form string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--%s %s: empty list; accepted form: %s", flagName, echo(s), form)
	}
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, usagef("--%s %s: empty item in the list; accepted form: %s", flagName, echo(s), form)
		}
	}
	return items, nil
}

// distinct refuses a value listed twice in list flag flagName (given as
// s); show prints a value for the message.
func distinct[T comparable](flagName, s string, vals []T, show func(T) string) error {
	seen := make(map[T]bool, len(vals))
	for _, v := range vals {
		if seen[v] {
			return usagef("--%s %s: %s is listed twice; list each value once", flagName, echo(s), show(v))
		}
		seen[v] = true
	}
	return nil
}

// mustBePositive is the refusal of a count below 1 given to flag flagName.
func mustBePositive(flagName string, v int) error {
	return usagef("--%s %d: must be positive (an integer >= 1)", flagName, v)
}

// mustNotBeNegative is the refusal of a negative count given to flag
// flagName where 0 means none.
func mustNotBeNegative(flagName string, v int) error {
	return usagef("--%s %d: must not be negative (an integer >= 0)", flagName, v)
}

// parseSignedSize parses a byte count such as 8, 1K, 4M or 1G, or a
// negative one (-8), which the caller refuses in the flag's own terms.
func parseSignedSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty value")
	}
	mult := int64(1)
	if u, ok := sizeUnits[t[len(t)-1]&^0x20]; ok && (t[len(t)-1] < '0' || t[len(t)-1] > '9') {
		mult = u
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number (digits with an optional K, M or G, K = 1024)", echo(s))
	}
	if n > maxSizeBytes/mult || n < -maxSizeBytes/mult {
		return 0, fmt.Errorf("%s is more than %s", echo(s), maxSizeText)
	}
	return n * mult, nil
}

// maxSizeText is maxSizeBytes in the units of the size flags.
var maxSizeText = fmt.Sprintf("2G-1 = %d bytes, the most one MPI call carries", maxSizeBytes)

// parseSize parses a byte count such as 8, 1K, 4M or 1G.
func parseSize(s string) (int, error) {
	n, err := parseSignedSize(s)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%s is negative; a size is 0 or more bytes", echo(s))
	}
	return int(n), nil
}

// parseSizes parses the --sizes form: LO:HI (LO, then powers of two up to
// HI; 0:HI means 0, 1, 2, 4, ...), or a comma list of sizes (8,1K,1M) in
// the order given, each once.
func parseSizes(flagName, s string) ([]int, error) {
	const form = "LO:HI for powers of two (e.g. 1:4M) or a list (e.g. 8,1K,1M)"
	bad := func(why string) error {
		return usagef("--%s %s: %s; accepted forms: %s", flagName, echo(s), why, form)
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 2 {
			return nil, bad("a range has exactly one ':'")
		}
		lo, err := parseSize(parts[0])
		if err != nil {
			return nil, bad(err.Error())
		}
		hi, err := parseSize(parts[1])
		if err != nil {
			return nil, bad(err.Error())
		}
		if lo > hi {
			return nil, bad("the range must not decrease")
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
			// HI is off the doubling ladder from LO: include it so the
			// sweep covers what was asked for.
			out = append(out, hi)
		}
		return out, nil
	}
	items, err := listItems(flagName, s, form)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range items {
		n, err := parseSize(f)
		if err != nil {
			return nil, bad(err.Error())
		}
		out = append(out, n)
	}
	if err := distinct(flagName, s, out, strconv.Itoa); err != nil {
		return nil, err
	}
	return out, nil
}

// parseIntGrid parses a grid of integers for sweep flags: a comma list
// (1,2,4,8), a power-of-two range (64:16K, sizes allowed), or both mixed
// (1,4:16), in the order given and each value once. Values must be >= min:
// for min 1 the message says "must be positive".
func parseIntGrid(flagName, s string, min int) ([]int, error) {
	const form = "a list (1,2,4,8) or a power-of-two range (64:16K)"
	items, err := listItems(flagName, s, form)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range items {
		var vals []int
		if strings.Contains(f, ":") {
			v, err := parseSizes(flagName, f)
			if err != nil {
				return nil, err
			}
			vals = v
		} else {
			v, err := parseSignedSize(f)
			if err != nil {
				return nil, usagef("--%s %s: %v; accepted forms: %s", flagName, echo(s), err, form)
			}
			vals = []int{int(v)}
		}
		for _, v := range vals {
			if v < min {
				return nil, usagef("--%s %s: %d %s", flagName, echo(s), v, atLeast(min))
			}
		}
		out = append(out, vals...)
	}
	if err := distinct(flagName, s, out, strconv.Itoa); err != nil {
		return nil, err
	}
	return out, nil
}

// atLeast says that a count must be >= min, in words for the usual minima.
func atLeast(min int) string {
	switch min {
	case 1:
		return "is not positive; the value must be positive (an integer >= 1)"
	case 0:
		return "is negative; the value must be 0 or more"
	}
	return fmt.Sprintf("is below the minimum %d", min)
}

// parseFloatList parses a comma list of numbers, each checked by ok; why
// describes the accepted range for the message.
func parseFloatList(flagName, s string, ok func(float64) bool, why string) ([]float64, error) {
	form := "a comma list such as 0.25,0.5,1"
	items, err := listItems(flagName, s, form)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, f := range items {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usagef("--%s %s: %s is not a number; accepted form: %s", flagName, echo(s), echo(f), form)
		}
		if !ok(v) {
			return nil, usagef("--%s %s: %v is outside the accepted range %s", flagName, echo(s), v, why)
		}
		out = append(out, v)
	}
	if err := distinct(flagName, s, out, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }); err != nil {
		return nil, err
	}
	return out, nil
}

// flagsSet is the set of flags given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// portion accepts a portion of ranks, in (0, 1], for parseFloatList.
func portion(v float64) bool { return v > 0 && v <= 1 }
