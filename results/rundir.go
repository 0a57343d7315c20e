package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Names inside a run directory (README.md "Run directories").
const (
	RecordsFile = "records.jsonl" // every record, the source of everything else
	ReportFile  = "report.md"     // rendered tables, regenerable from RecordsFile
	PlotsDir    = "plots"         // PNG plots, regenerable from RecordsFile
)

// RunDirTimeLayout is the time stamp in run directory names, in UTC.
const RunDirTimeLayout = "20060102-150405"

// NewRunDir creates base/<host>-<YYYYMMDD-HHMMSS> (now in UTC, so names sort
// by time whatever the cluster's time zone) with its plots/ subdirectory,
// creating base if needed, and returns the run directory's path. host is
// reduced to letters, digits, '.', '-' and '_' (others become '_'; empty
// becomes "unknown-host") so that it is one path element. It refuses to
// reuse an existing run directory: two suites started in the same second
// on one host would otherwise mix their records.
func NewRunDir(base, host string, now time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("results: creating run directory base %s: %w", base, err)
	}
	dir := filepath.Join(base, safeHost(host)+"-"+now.UTC().Format(RunDirTimeLayout))
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("results: run directory %s already exists (another run started in the same second?)", dir)
		}
		return "", fmt.Errorf("results: creating run directory: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return "", fmt.Errorf("results: creating %s: %w", filepath.Join(dir, PlotsDir), err)
	}
	return dir, nil
}

func safeHost(host string) string {
	if host == "" {
		return "unknown-host"
	}
	// The time stamp suffix keeps even "." or ".." from naming a parent.
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, host)
}
