package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestMeterOnlyOnTerminal: a pipe, a file or a buffer gets no progress,
// and --quiet silences a terminal; a nil meter is safe to use.
func TestMeterOnlyOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	if m := newMeter(&buf, false, "x", 1); m != nil {
		t.Error("a meter on a buffer")
	}
	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	if m := newMeter(&buf, true, "x", 1); m != nil {
		t.Error("a meter with --quiet")
	}
	m := newMeter(&buf, false, "x", 1)
	if m == nil {
		t.Fatal("no meter on a terminal")
	}
	m.finish()
	var none *meter
	none.step()
	none.finish()
}

// TestProgressNotInData: a sweep with stderr not a terminal prints no
// progress anywhere, and with a terminal stderr the progress goes to
// stderr only: stdout holds the records' table and nothing else.
func TestProgressNotInData(t *testing.T) {
	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	for _, term := range []bool{false, true} {
		isTerminal = func(io.Writer) bool { return term }
		code, out, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8,1K", "--iters", "10", "--min-reps", "3", "--max-reps", "3", "--format", "csv")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if strings.Contains(out, "points") || strings.Contains(out, "\r") {
			t.Errorf("terminal=%v: progress in stdout: %q", term, out)
		}
		if !term && errs != "" {
			t.Errorf("stderr not a terminal, yet %q", errs)
		}
	}
}
