package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictedText: a prediction prints in the tables' units with three
// significant digits and no exponent, an implausible one in seconds with
// its years, never as 1e+23 us.
func TestPredictedText(t *testing.T) {
	for _, tc := range []struct {
		v         float64
		unit      string
		val, want string
	}{
		{5.016e-7, "s", "502", "ns"},
		{1.361e-5, "s", "13.6", "us"},
		{0.4295, "s", "430", "ms"},
		{2.5, "s", "2.50", "s"},
		{12345.6, "s", "12300", "s"},
		{1e17, "s", "100000000000000000", "s (about 3170000000 years)"},
		{-1e4, "s", "-10000", "s"},
		{1e29, "s", "100000000000000000000000000000", "s (about 3170000000000000000000 years)"},
		{3.2e9, "B/s", "3200", "MB/s (10^6 B)"},
		{1.5e20, "B/s", "150000000000000", "MB/s (10^6 B)"},
	} {
		val, unit := predictedText(tc.v, tc.unit)
		if val != tc.val || unit != tc.want {
			t.Errorf("predictedText(%g, %s) = %q %q, want %q %q", tc.v, tc.unit, val, unit, tc.val, tc.want)
		}
	}
}

// TestPredictTableNumbers: the table of predict prints a whole-number
// parameter in digits and the time in a unit that suits it.
func TestPredictTableNumbers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "h.jsonl")
	writeJSONL(t, file, synthetic("hockney"))
	_, out, _ := runCLI(t, "fit", "hockney", file, "--format", "json")
	mfile := filepath.Join(dir, "h.json")
	if err := os.WriteFile(mfile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string // in the table's row, in order
	}{
		{[]string{"pingpong", "bytes=1000000"}, []string{"bytes=1000000", "200", "us"}},
		{[]string{"pingpong", "bytes=2147483647"}, []string{"bytes=2147483647", "ms"}},
		{[]string{"pingpong", "bytes=8"}, []string{"bytes=8", "ns"}},
	} {
		code, out, errs := runCLI(t, append([]string{"predict", mfile}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		row := strings.Split(out, "\n")[3]
		rest := row
		for _, w := range tc.want {
			i := strings.Index(rest, " "+w+" ")
			if i < 0 {
				t.Errorf("%v: row %q lacks %q (in order: %q)", tc.args, row, w, tc.want)
				break
			}
			rest = rest[i+len(w)+1:]
		}
	}
}
