package job

import (
	"bytes"
	"io"
	"testing"
)

// TestMeterOnlyOnTerminal: a pipe, a file or a buffer gets no progress,
// and --quiet silences a terminal; a nil meter is safe to use.
func TestMeterOnlyOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	if m := NewMeter(&buf, false, "x", 1); m != nil {
		t.Error("a meter on a buffer")
	}
	defer func(f func(io.Writer) bool) { IsTerminal = f }(IsTerminal)
	IsTerminal = func(io.Writer) bool { return true }
	if m := NewMeter(&buf, true, "x", 1); m != nil {
		t.Error("a meter with --quiet")
	}
	m := NewMeter(&buf, false, "x", 1)
	if m == nil {
		t.Fatal("no meter on a terminal")
	}
	m.Finish()
	var none *Meter
	none.Step()
	none.Finish()
}
