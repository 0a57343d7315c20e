package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPlotPath: a plot file SavePlot cannot write is refused with the
// reason.
func TestCheckPlotPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "fig.png"), ""},
		{filepath.Join(dir, "fig.SVG"), ""},
		{filepath.Join(dir, "fig.txt"), "ending in .png"},
		{filepath.Join(dir, "none", "fig.png"), "does not exist"},
		{filepath.Join(dir, "d.png"), "is a directory"},
	} {
		err := CheckPlotPath(tt.path)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckPlotPath(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
}
