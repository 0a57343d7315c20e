package report

import (
	"math"
	"strconv"
	"strings"
)

// Value formats v in a unit people read and returns the unit it used:
// seconds as us, seconds per byte as ns/B, bytes per second as MB/s
// (10^6 bytes), others unchanged, with four significant digits (Num).
func Value(v float64, unit string) (string, string) {
	switch unit {
	case "s":
		return Num(v * 1e6), "us"
	case "s/B":
		return Num(v * 1e9), "ns/B"
	case "B/s":
		return Num(v / 1e6), "MB/s"
	}
	return Num(v), unit
}

// Num prints four significant digits, without an exponent for values
// people read as plain numbers (74580, not 7.458e+04).
func Num(v float64) string {
	if a := math.Abs(v); a >= 1e4 && a < 1e12 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Pct prints a fraction as a percentage with two decimals.
func Pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" }

// Floats joins values with ", " in their shortest exact form.
func Floats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ", ")
}
