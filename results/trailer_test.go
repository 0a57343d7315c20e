package results

import (
	"bytes"
	"errors"
	"testing"
)

func TestWriteReport(t *testing.T) {
	tests := []struct {
		name           string
		format         Format
		report         string
		stdout, stderr string
	}{
		{"table: after the tables, blank line first", FormatTable, "verdict\n", "\nverdict\n", ""},
		{"markdown: as table", FormatMarkdown, "verdict\n", "\nverdict\n", ""},
		{"jsonl: stderr, stdout untouched", FormatJSONL, "verdict\n", "", "verdict\n"},
		{"csv: stderr", FormatCSV, "verdict\n", "", "verdict\n"},
		{"gobench: stderr", FormatGoBench, "verdict\n", "", "verdict\n"},
		{"empty report: nothing, not even the blank line", FormatTable, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			if err := WriteReport(&out, &errw, tt.format, []byte(tt.report)); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.stdout || errw.String() != tt.stderr {
				t.Errorf("stdout %q stderr %q, want %q and %q", out.String(), errw.String(), tt.stdout, tt.stderr)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteReportError(t *testing.T) {
	for _, f := range []Format{FormatTable, FormatJSONL} {
		if err := WriteReport(failWriter{}, failWriter{}, f, []byte("x")); err == nil {
			t.Errorf("%v: a failed write returned nil", f)
		}
	}
}
