package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sortedKeys returns m's keys in increasing order, so every writer lists
// parameters, derived values and counters in the same, stable order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// formatParam renders a parameter value for names, cells and messages:
// integers in decimal (never 1.048576e+06), other numbers in the shortest
// form that reads back exactly, strings as they are.
func formatParam(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatFloatExact(x)
	case float32:
		return formatFloatExact(float64(x))
	case nil:
		return ""
	}
	return fmt.Sprint(v) // the integer kinds
}

// formatFloatExact prints integral values below 2^53 without an exponent and
// everything else in the shortest round-trip form.
func formatFloatExact(f float64) string { return FormatCount(f) }

// FormatCount writes a count or a size held as a float64 for a message:
// in digits while it is a whole number below 2^53 (exact), else in the
// shortest form that reads back (an overflowing product, 3.9e+27).
func FormatCount(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// formatValue prints a statistic for machine-readable text formats (CSV,
// Go benchmark format): the shortest form that reads back exactly.
func formatValue(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ParamList renders parameters as "k=v k=v" in key order, as messages and
// point names print an instance; a whole number read from JSON prints in
// digits (bytes=1000000, not 1e+06).
func ParamList(p Params) string {
	keys := sortedKeys(p)
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k + "=" + formatParam(p[k])
	}
	return strings.Join(s, " ")
}
