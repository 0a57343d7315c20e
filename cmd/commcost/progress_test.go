package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeClock is a settable clock for the meter.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

// TestMeter: nothing before progressDelay; then points done of the total,
// the time elapsed and the estimate left (mean time per finished point
// times the points to go, less the time the current point has run); a
// newline at the end; nothing at all for a sweep that ends early.
func TestMeter(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var buf bytes.Buffer
	m := startMeter(&buf, "commcost pingpong", 10, clk.now, 0)
	clk.t = clk.t.Add(time.Second)
	m.step()
	if buf.Len() != 0 {
		t.Fatalf("progress before %v: %q", progressDelay, buf.String())
	}
	clk.t = clk.t.Add(3 * time.Second) // 4 s, two points done: 2 s each
	m.step()
	want := "\rcommcost pingpong: 2/10 points, 4s elapsed, about 16s left\x1b[K"
	if buf.String() != want {
		t.Errorf("line %q, want %q", buf.String(), want)
	}
	buf.Reset()
	clk.t = clk.t.Add(5 * time.Second) // the third point has run 5 s
	m.mu.Lock()
	m.draw()
	m.mu.Unlock()
	if want := "\rcommcost pingpong: 2/10 points, 9s elapsed, about 11s left\x1b[K"; buf.String() != want {
		t.Errorf("refresh %q, want %q", buf.String(), want)
	}
	m.finish()
	m.finish() // idempotent
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("finish did not end the line once: %q", buf.String())
	}

	buf.Reset()
	short := startMeter(&buf, "x", 3, clk.now, 0)
	short.step()
	short.finish()
	if buf.Len() != 0 {
		t.Errorf("a short sweep printed %q", buf.String())
	}

	buf.Reset()
	unknown := startMeter(&buf, "x", 0, clk.now, 0)
	clk.t = clk.t.Add(3 * time.Second)
	unknown.step()
	unknown.finish()
	if got := buf.String(); !strings.Contains(got, "x: 1 points, 3s elapsed\x1b[K") || strings.Contains(got, "left") {
		t.Errorf("no total: %q", got)
	}
}

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
