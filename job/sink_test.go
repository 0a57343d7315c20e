package job

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
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

// TestSinkMixedCSV: records of two benches print as one CSV table with the
// union of their columns when the output is Mixed; a CSV stream refuses
// the second bench's columns.
func TestSinkMixedCSV(t *testing.T) {
	recs := []results.Record{
		{Bench: "pingpong", Params: results.Params{"bytes": 8}, Ranks: 2, Unit: results.UnitSeconds, Summary: results.Summary{N: 1, Median: 1e-6}},
		{Bench: "bandwidth", Params: results.Params{"bytes": 8, "window": 64}, Ranks: 2, Unit: results.UnitBytesPerSec, Summary: results.Summary{N: 1, Median: 1e9}},
	}
	for _, mixed := range []bool{true, false} {
		var out bytes.Buffer
		err := local.Run(1, func(c mpi.Comm) error {
			s, err := OpenSink(c, Output{Format: results.FormatCSV, Mixed: mixed}, &out)
			if err != nil {
				return err
			}
			for _, r := range recs {
				if err := s.Write(r); err != nil {
					s.Close()
					return err
				}
			}
			return s.Close()
		})
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		switch {
		case mixed && (err != nil || len(lines) != 3 || !strings.Contains(lines[0], "param_window")):
			t.Errorf("mixed: %v, %d lines:\n%s", err, len(lines), out.String())
		case !mixed && err == nil:
			t.Errorf("a CSV stream took a second bench's columns:\n%s", out.String())
		}
	}
}
