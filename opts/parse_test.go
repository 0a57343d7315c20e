package opts

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseSizesTable(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "1:8", want: []int{1, 2, 4, 8}},
		{in: "0:4", want: []int{0, 1, 2, 4}},
		{in: "1K:4K", want: []int{1024, 2048, 4096}},
		{in: "1:4M", want: func() []int {
			var v []int
			for s := 1; s <= 4<<20; s *= 2 {
				v = append(v, s)
			}
			return v
		}()},
		{in: "3:16", want: []int{3, 6, 12, 16}},
		{in: "8,1K,1M", want: []int{8, 1024, 1 << 20}},
		{in: "8", want: []int{8}},
		{in: "0", want: []int{0}},
		{in: "2k", want: []int{2048}},
		{in: "1:abc", bad: true},
		{in: "4K:1K", bad: true},
		{in: "1:2:3", bad: true},
		{in: "-1", bad: true},
		{in: "8,4", want: []int{8, 4}}, // lists run in the order given
		{in: "1K,1024", bad: true},     // one size spelt twice
		{in: "8,", bad: true},
		{in: " ", bad: true},
		{in: "8,8", bad: true},
		{in: "", bad: true},
		{in: "3G", bad: true},
		{in: "1.5K", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("parseSizes(%q) = %v, %v; want a usage error", tt.in, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseIntGrid(t *testing.T) {
	got, err := ParseInts("64:256,1K")
	if err != nil || !reflect.DeepEqual(got, []int{64, 128, 256, 1024}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseInts("1,x"); err == nil {
		t.Fatal("x accepted")
	}
	// A list of ints holds counts as well as sizes: its item's bound names
	// no unit (a bound flag names what the flag holds), and neither does a
	// range's end.
	for _, in := range []string{"1,1000000000000", "1:3G"} {
		_, err := ParseInts(in)
		var ib *IntBoundError
		if !errors.As(err, &ib) || !strings.Contains(err.Error(), "is more than 2147483647 (2G less 1)") || strings.Contains(err.Error(), "bytes") {
			t.Errorf("%s beyond 2G-1: %v", in, err)
		}
	}
}

// TestParseNegativeInts: a negative int of any size an int holds parses,
// for its configuration to refuse in its own terms ("must be positive");
// only one beyond an int is refused here, as beyond the integers.
func TestParseNegativeInts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"-5", []int{-5}, ""},
		{"-9223372036854775808", []int{math.MinInt64}, ""},
		{"1,-8G", []int{1, -8 << 30}, ""},
		{"-9223372036854775809", nil, "-9223372036854775809 is beyond the integers (at least -9223372036854775808)"},
		{"-9000000000000000G", nil, "-9000000000000000G is beyond the integers (at least -9223372036854775808)"},
	} {
		got, err := ParseInts(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "more") {
				t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseSizes("-9223372036854775808"); err == nil || !strings.Contains(err.Error(), "-9223372036854775808 is negative; a size is 0 or more bytes") {
		t.Errorf("a negative size: %v", err)
	}
}

// TestParseCounts: a count is bounded by an int, not by what one MPI
// call carries, so the program that takes it can name its own range.
func TestParseCounts(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{"46340", []int{46340}, ""},
		{"4000000000000", []int{4000000000000}, ""},
		{"16K,1M", []int{16 << 10, 1 << 20}, ""},
		{"64:256", []int{64, 128, 256}, ""},
		{"99999999999999999999", nil, "is beyond the integers"},
		{"9000000000000000G", nil, "is beyond the integers"},
		{"x", nil, "is not a whole number"},
		{"-99999999999999999999", nil, "-99999999999999999999 is beyond the integers (at least -9223372036854775808)"},
	}
	for _, tc := range tests {
		got, err := ParseCounts(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "bytes") {
				t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestCheckSeconds: a number of seconds is positive and at most
// MaxSeconds, and the message gives both bounds.
func TestCheckSeconds(t *testing.T) {
	for _, v := range []float64{0.001, 1, MaxSeconds} {
		if err := CheckSeconds("T", v); err != nil {
			t.Errorf("%v refused: %v", v, err)
		}
	}
	for _, v := range []float64{0, -1, 1e300, math.Inf(1), math.NaN()} {
		err := CheckSeconds("T", v)
		if err == nil || !strings.Contains(err.Error(), "must be a positive number of seconds, at most 1e+09") {
			t.Errorf("%v: %v", v, err)
		}
	}
}

// TestStatedBoundAccepted: a size bound is stated first in a spelling the
// flag takes (2147483647, not 2G-1, which the flag refuses), so a user
// can type the bound the message names.
func TestStatedBoundAccepted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) ([]int, error)
		in    string
		after string // the words the bound follows
	}{
		{"a size", ParseSizes, "3G", "more than "},
		{"a range of sizes", ParseSizes, "1:3G", "more than "},
		{"an int", ParseInts, "1,3G", "more than "},
		{"a range of ints", ParseInts, "1:3G", "more than "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse(tc.in)
			if err == nil {
				t.Fatalf("%s accepted", tc.in)
			}
			_, rest, ok := strings.Cut(err.Error(), tc.after)
			if !ok {
				t.Fatalf("error %v states no bound after %q", err, tc.after)
			}
			bound, _, _ := strings.Cut(rest, " ")
			if got, err := tc.parse(bound); err != nil || !slices.Equal(got, []int{MaxSize}) {
				t.Errorf("the bound as stated, %q, reads as %v, %v; want %d", bound, got, err, MaxSize)
			}
		})
	}
}
