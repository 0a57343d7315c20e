package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestAlias: a deprecated spelling sets its target (to a value, or to its
// own argument), warns once on the flag set's output, is refused in the
// target's terms and is left out of the usage text.
func TestAlias(t *testing.T) {
	tests := []struct {
		name, args         string
		format, matrices   string
		warning, errorPart string
	}{
		{"bool alias", "--markdown", "markdown", "300", "--markdown is deprecated; use --format markdown", ""},
		{"bool alias false", "--markdown=false", "table", "300", "--markdown is deprecated", ""},
		{"value alias", "--samples 7", "table", "7", "--samples is deprecated; use --matrices", ""},
		{"given twice warns once", "--samples 7 --samples 8", "table", "8", "--samples is deprecated; use --matrices", ""},
		{"value refused as the target's", "--samples x", "table", "300", "--samples is deprecated", "--samples x: want an integer"},
		{"new spellings do not warn", "--format markdown --matrices 5", "markdown", "5", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			fs := NewFlagSet("sched count", &stderr)
			format := fs.String("format", "table", "tables")
			matrices := fs.Int("matrices", 300, "matrices per cell")
			Alias(fs, "markdown", "format", "markdown")
			Alias(fs, "samples", "matrices", "")
			err := Parse(fs, strings.Fields(tt.args), false)
			switch {
			case tt.errorPart == "" && err != nil:
				t.Fatalf("parse: %v", err)
			case tt.errorPart != "" && (err == nil || !strings.Contains(err.Error(), tt.errorPart)):
				t.Fatalf("error %v, want one holding %q", err, tt.errorPart)
			}
			if err == nil && (*format != tt.format || (tt.matrices != "" && fs.Lookup("matrices").Value.String() != tt.matrices)) {
				t.Errorf("format %q matrices %d, want %q %s", *format, *matrices, tt.format, tt.matrices)
			}
			warnings := strings.Count(stderr.String(), "commcost: warning:")
			if want := min(1, len(tt.warning)); warnings != want || !strings.Contains(stderr.String(), tt.warning) {
				t.Errorf("stderr %q: want %d warning holding %q", stderr.String(), want, tt.warning)
			}
			var usage bytes.Buffer
			fs.SetOutput(&usage)
			PrintDefaults(fs)
			if strings.Contains(usage.String(), "markdown") || strings.Contains(usage.String(), "samples") || !strings.Contains(usage.String(), "-matrices") {
				t.Errorf("usage lists a deprecated spelling or lacks --matrices:\n%s", usage.String())
			}
		})
	}
}
