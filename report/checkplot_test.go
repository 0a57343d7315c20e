package report

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckPlotPath: a plot file SavePlot cannot write is refused with the
// reason.
func TestCheckPlotPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.png"), []byte("an earlier plot"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "old.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "fig.png"), ""},
		{filepath.Join(dir, "fig.SVG"), ""},
		{filepath.Join(dir, "fig.txt"), "ending in .png"},
		{filepath.Join(dir, "none", "fig.png"), "does not exist"},
		{filepath.Join(dir, "d.png"), "is a directory"},
		{filepath.Join(dir, "old.png"), ""}, // a file the user named is replaced
		{filepath.Join(dir, "fifo.png"), "is a named pipe (FIFO), not a regular file"},
		{filepath.Join(dir, "link.png"), "is a symbolic link, not a regular file"},
	} {
		err := CheckPlotPath(tt.path)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckPlotPath(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
}
