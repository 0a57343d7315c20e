package results

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestRenderTableGolden(t *testing.T) {
	tests := []struct {
		golden string
		opt    TableOptions
	}{
		{"table.golden", TableOptions{}},
		{"table-wide.golden", TableOptions{Wide: true}},
		{"table.md.golden", TableOptions{Markdown: true}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderTable(&buf, testRecords(), tc.opt); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, buf.Bytes())
		})
	}
}

func TestRenderTableEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderTable(&buf, nil, TableOptions{}); err != nil || buf.String() != "(no records)\n" {
		t.Errorf("RenderTable(nil) = %q, %v", buf.String(), err)
	}
}

func TestMarkdownEscapesCells(t *testing.T) {
	r := testRecords()[0]
	r.Params = Params{"mode": "a|b_c*"}
	var buf bytes.Buffer
	if err := RenderTable(&buf, []Record{r}, TableOptions{Markdown: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `a\|b\_c\*`) {
		t.Errorf("cell not escaped:\n%s", buf.String())
	}
}

func TestHumanUnits(t *testing.T) {
	var notes noteSet
	tests := []struct {
		unit string
		v    float64
		want string
	}{
		{UnitSeconds, 1.52e-6, "1.52 us"},
		{UnitSeconds, 123.4e-9, "123 ns"},
		{UnitSeconds, 0.5e-9, "0.50 ns"},
		{UnitSeconds, 12.34e-3, "12.3 ms"},
		{UnitSeconds, 2.5, "2.50 s"},
		{UnitSeconds, 4500, "4500 s"},
		{UnitSeconds, 0, "0 ns"},
		{UnitBytesPerSec, 9.87e9, "9870 MB/s"},
		{UnitBytesPerSec, 1.234e6, "1.23 MB/s"},
		{UnitCount, 4096, "4096"},
		{UnitCount, 0.123456, "0.1235"},
		{"widgets", 3, "3 widgets"},
		{UnitSeconds, math.Inf(1), "+Inf s"},
	}
	for _, tc := range tests {
		if got := scaleFor(tc.unit, tc.v, &notes).format(tc.v); got != tc.want {
			t.Errorf("%v %s = %q; want %q", tc.v, tc.unit, got, tc.want)
		}
	}
	sizes := []struct {
		v    any
		want string
	}{
		{8, "8"}, {1000, "1000"}, {1024, "1K"}, {1536, "1536"}, {65536, "64K"}, {1 << 20, "1M"},
		{3 << 30, "3G"}, {float64(1 << 20), "1M"}, {0.5, "0.5"}, {"big", "big"}, {0, "0"},
	}
	for _, tc := range sizes {
		if got := formatSize(tc.v, &notes); got != tc.want {
			t.Errorf("formatSize(%v) = %q; want %q", tc.v, got, tc.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0"},
		{"small", 8, "8"},
		{"one K", 1024, "1K"},
		{"not a multiple", 1536, "1536"},
		{"64K", 64 << 10, "64K"},
		{"1M", 1 << 20, "1M"},
		{"3M not 3072K", 3 << 20, "3M"},
		{"1G", 1 << 30, "1G"},
		{"K multiple above M", (1 << 20) + 1024, "1025K"},
		{"fraction", 0.5, "0.5"},
		{"negative", -2048, "-2K"},
		{"large odd", 1e15 + 1, "1000000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatBytes(tt.in); got != tt.want {
				t.Errorf("FormatBytes(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A duration parameter prints as a time, and a parameter named n keeps its
// name while the sample count becomes reps (prtt's table showed
// 7.647784999999996e-07 under delay_s and two columns named n).
func TestTableDurationParamAndCountLabel(t *testing.T) {
	r := testRecords()[0]
	r.Params = Params{"delay_s": 7.647784999999996e-07, "n": 10}
	var buf bytes.Buffer
	if err := RenderTable(&buf, []Record{r}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"765 ns", " reps "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "e-07") {
		t.Errorf("raw float in the table:\n%s", out)
	}
}
