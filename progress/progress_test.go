package progress

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the meter.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

// TestMeter: nothing before Delay; then points done of the total,
// the time elapsed and the estimate left (mean time per finished point
// times the points to go, less the time the current point has run); a
// newline at the end; nothing at all for a sweep that ends early.
func TestMeter(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var buf bytes.Buffer
	m := startMeter(&buf, "commcost pingpong", 10, clk.now, 0)
	clk.t = clk.t.Add(time.Second)
	m.Step()
	if buf.Len() != 0 {
		t.Fatalf("progress before %v: %q", Delay, buf.String())
	}
	clk.t = clk.t.Add(3 * time.Second) // 4 s, two points done: 2 s each
	m.Step()
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
	m.Finish()
	m.Finish() // idempotent
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("finish did not end the line once: %q", buf.String())
	}

	buf.Reset()
	short := startMeter(&buf, "x", 3, clk.now, 0)
	short.Step()
	short.Finish()
	if buf.Len() != 0 {
		t.Errorf("a short sweep printed %q", buf.String())
	}

	buf.Reset()
	unknown := startMeter(&buf, "x", 0, clk.now, 0)
	clk.t = clk.t.Add(3 * time.Second)
	unknown.Step()
	unknown.Finish()
	if got := buf.String(); !strings.Contains(got, "x: 1 points, 3s elapsed\x1b[K") || strings.Contains(got, "left") {
		t.Errorf("no total: %q", got)
	}
}

// TestRound: what a person reads.
func TestRound(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{1234 * time.Millisecond, 1200 * time.Millisecond},
		{9949 * time.Millisecond, 9900 * time.Millisecond},
		{10400 * time.Millisecond, 10 * time.Second},
		{95*time.Second + 600*time.Millisecond, 96 * time.Second},
	}
	for _, tt := range tests {
		if got := Round(tt.in); got != tt.want {
			t.Errorf("Round(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestStartRefreshes: a started line redraws on its own while a point
// runs, and Finish stops the goroutine (a nil Meter is safe).
func TestStartRefreshes(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var mu sync.Mutex
	var buf bytes.Buffer
	m := startMeter(lockedWriter{&mu, &buf}, "x", 4, func() time.Time { mu.Lock(); defer mu.Unlock(); return clk.t }, time.Millisecond)
	mu.Lock()
	clk.t = clk.t.Add(3 * time.Second)
	mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := buf.Len()
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no refresh within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	m.Finish()
	mu.Lock()
	got := buf.String()
	mu.Unlock()
	if !strings.Contains(got, "x: 0/4 points, 3s elapsed") || !strings.HasSuffix(got, "\n") {
		t.Errorf("line %q", got)
	}
	var none *Meter
	none.Step()
	none.Finish()
	if IsTerminal(&buf) {
		t.Error("a buffer is a terminal")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
