package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/internal/testfs"
	"github.com/commcost/commcost/results"
)

// Through the CLI: a sweep whose --out file system
// fills up stops with exit 1 and one message naming the file and the
// cause; the records before it are whole and the file ends in a newline.
func TestRecordsOnFullDisk(t *testing.T) {
	mnt := testfs.Tmpfs(t, 64<<10)
	// Leave room for a few records with their samples.
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, 40<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(mnt, "records.jsonl")
	code, _, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "0:64K", "--iters", "2",
		"--min-reps", "200", "--max-reps", "200", "--samples", "--out", out, "--format", "csv")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errs)
	}
	if strings.Count(errs, "commcost:") != 1 || !strings.Contains(errs, out) || !strings.Contains(errs, "no space left on device") ||
		!strings.Contains(errs, "record not written") {
		t.Errorf("stderr should be one message naming %s and the cause:\n%s", out, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the file ends in a torn record")
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil || len(recs) == 0 {
		t.Errorf("records before the full disk: %d, %v", len(recs), err)
	}
	// A second run appends after them once there is room again.
	os.Remove(filepath.Join(mnt, "filler"))
	if code, _, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8", "--iters", "2", "--min-reps", "3", "--max-reps", "3", "--out", out, "--format", "csv"); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	if again, err := results.ReadJSONLFile(out); err != nil || len(again) != len(recs)+1 {
		t.Errorf("after the second run: %d records, %v; want %d", len(again), err, len(recs)+1)
	}
}
