package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestOSUMethodology: --osu runs OSU 5.3's loop once per size (10000
// round trips up to 8 KiB and 1000 above; 100 and 20 windows of 64) and
// records that one pass, n = 1.
func TestOSUMethodology(t *testing.T) {
	tests := []struct {
		bench string
		want  map[int]float64 // bytes -> iters
	}{
		{"pingpong", map[int]float64{8: 10000, 16384: 1000}},
		{"bandwidth", map[int]float64{8: 100, 16384: 20}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, tt.bench, "--backend", "local", "--osu", "--sizes", "8,16K", "--format", "jsonl")
		if code != 0 {
			t.Fatalf("%s --osu: exit %d: %s", tt.bench, code, stderr)
		}
		recs, err := results.ReadJSONL(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Fatalf("%s --osu: %d records, want 2", tt.bench, len(recs))
		}
		for _, rec := range recs {
			b, _ := strconv.ParseFloat(fmt.Sprint(rec.Params["bytes"]), 64)
			iters, _ := strconv.ParseFloat(fmt.Sprint(rec.Params["iters"]), 64)
			if iters != tt.want[int(b)] || rec.N != 1 || rec.Stop != results.StopMaxReps || !(rec.Median > 0) {
				t.Errorf("%s --osu %v B: iters %v n %d stop %q median %g, want iters %v and one repetition", tt.bench, b, iters, rec.N, rec.Stop, rec.Median, tt.want[int(b)])
			}
			if tt.bench == "bandwidth" && fmt.Sprint(rec.Params["window"]) != "64" {
				t.Errorf("bandwidth --osu: window %v, want 64", rec.Params["window"])
			}
		}
	}
}

// TestOSUBadInput: --osu fixes the loop, the repetitions and the window,
// so a flag that sets one of them with it is a usage error.
func TestOSUBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pingpong", "--osu", "--iters", "5"}, "--iters with --osu"},
		{[]string{"pingpong", "--osu", "--min-reps", "3"}, "--min-reps with --osu"},
		{[]string{"pingpong", "--osu", "--warmup", "0"}, "--warmup with --osu"},
		{[]string{"bandwidth", "--osu", "--window", "8"}, "--window with --osu"},
		{[]string{"bandwidth", "--osu", "--max-time", "1"}, "--max-time with --osu"},
	} {
		checkUsageError(t, dir, tt.args, tt.want)
	}
}
