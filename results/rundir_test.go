package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewRunDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "runs") // created on demand
	now := time.Date(2025, 6, 1, 14, 3, 9, 0, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		host, want string
	}{
		{"node01", "node01-20250601-120309"},
		{"login.cluster.example", "login.cluster.example-20250601-120309"},
		{"a/b c", "a_b_c-20250601-120309"},
		{"", "unknown-host-20250601-120309"},
		{"..", "..-20250601-120309"},
	}
	for _, tc := range tests {
		dir, err := NewRunDir(base, tc.host, now)
		if err != nil {
			t.Fatalf("NewRunDir(%q): %v", tc.host, err)
		}
		if dir != filepath.Join(base, tc.want) {
			t.Errorf("NewRunDir(%q) = %s; want %s", tc.host, dir, filepath.Join(base, tc.want))
		}
		if st, err := os.Stat(filepath.Join(dir, PlotsDir)); err != nil || !st.IsDir() {
			t.Errorf("%s has no %s directory: %v", dir, PlotsDir, err)
		}
	}
	// The same host and second again must not reuse the directory.
	if _, err := NewRunDir(base, "node01", now); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second NewRunDir in the same second: %v; want an 'already exists' error", err)
	}
}

func TestNewRunDirBadBase(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunDir(filepath.Join(file, "runs"), "h", time.Now()); err == nil {
		t.Errorf("NewRunDir under a file succeeded")
	}
}
