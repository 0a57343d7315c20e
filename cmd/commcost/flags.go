package main

import (
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

// parseSize parses a byte count such as 8, 1K, 4M or 1G.
func parseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	if u, ok := sizeUnits[t[len(t)-1]&^0x20]; ok && (t[len(t)-1] < '0' || t[len(t)-1] > '9') {
		mult = u
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (a non-negative integer with optional K, M or G)", s)
	}
	if n > maxSizeBytes/mult {
		return 0, fmt.Errorf("%q is larger than %d bytes", s, maxSizeBytes)
	}
	return int(n * mult), nil
}

// parseSizes parses the --sizes form: LO:HI (LO, then powers of two up to
// HI; 0:HI means 0, 1, 2, 4, ...), or a comma list of sizes (8,1K,1M).
// The result is increasing and free of duplicates.
func parseSizes(flagName, s string) ([]int, error) {
	bad := func(why string) error {
		return usagef("--%s %s: %s; accepted forms: LO:HI for powers of two (e.g. 1:4M) or a list (e.g. 8,1K,1M)", flagName, s, why)
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
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := parseSize(f)
		if err != nil {
			return nil, bad(err.Error())
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, bad("list sizes in increasing order without repeats")
		}
		out = append(out, n)
	}
	return out, nil
}

// parseIntGrid parses a grid of integers for sweep flags: a comma list
// (1,2,4,8), a power-of-two range (64:16K, sizes allowed), or both mixed
// (1,4:16). Values must be >= min.
func parseIntGrid(flagName, s string, min int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		var vals []int
		if strings.Contains(f, ":") {
			v, err := parseSizes(flagName, f)
			if err != nil {
				return nil, err
			}
			vals = v
		} else {
			v, err := parseSize(f)
			if err != nil {
				return nil, usagef("--%s %s: %v; accepted forms: a list (1,2,4,8) or a power-of-two range (64:16K)", flagName, s, err)
			}
			vals = []int{v}
		}
		for _, v := range vals {
			if v < min {
				return nil, usagef("--%s %s: %d is below the minimum %d", flagName, s, v, min)
			}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// parseFloatList parses a comma list of numbers, each checked by ok; why
// describes the accepted range for the message.
func parseFloatList(flagName, s string, ok func(float64) bool, why string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usagef("--%s %s: %q is not a number; accepted form: a comma list such as 0.25,0.5,1", flagName, s, f)
		}
		if !ok(v) {
			return nil, usagef("--%s %s: %v is outside the accepted range %s", flagName, s, v, why)
		}
		out = append(out, v)
	}
	return out, nil
}
