package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/internal/testfs"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
	"github.com/commcost/commcost/trace/tracetest"
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

// TestTraceOnFullDisk: a traced program whose --out file system fills up
// (before the header, at the first block, at a later one) is a runtime
// failure, exit 1, with one message naming the rank's file and the
// cause; the unfinished .part file is removed and a finished rank file
// already there is kept.
func TestTraceOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	lib, bins := tracetest.BuildLibrary(t, t.TempDir(), "trace/testdata/calls.c")
	for _, tc := range []struct {
		name         string
		size, filler int
		code         int
	}{
		// the finished file takes one 4 KiB page of each
		{"full before the header", 64 << 10, 60 << 10, 1},
		{"full at the first block", 64 << 10, 0, 1},
		{"full at a later block", 128 << 10, 0, 1},
		{"room enough", 1 << 20, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mnt := testfs.Tmpfs(t, tc.size)
			out := filepath.Join(mnt, "tr")
			writeTrace(t, out, 2, false, 0)
			finished := filepath.Join(out, trace.RankFile(1))
			kept, err := os.ReadFile(finished)
			if err != nil {
				t.Fatal(err)
			}
			if tc.filler > 0 {
				if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, tc.filler), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errs := runCLI(t, "trace", "--out", out, "--lib", lib, "--", bins[0], "400")
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errs)
			}
			part := filepath.Join(out, ".rank-0.cct.part")
			if tc.code != 0 && (strings.Count(errs, "commcost:") != 1 || !strings.Contains(errs, part+": no space left on device")) {
				t.Errorf("stderr should be one message naming %s and the cause:\n%s", part, errs)
			}
			if parts, _ := filepath.Glob(filepath.Join(out, "*.part")); len(parts) > 0 {
				t.Errorf("unfinished files left: %v", parts)
			}
			if got, err := os.ReadFile(finished); err != nil || !bytes.Equal(got, kept) {
				t.Errorf("the finished %s was not kept: %v", finished, err)
			}
			if _, err := os.Stat(filepath.Join(out, trace.RankFile(0))); (err == nil) != (tc.code == 0) {
				t.Errorf("%s written: %v, want %v", trace.RankFile(0), err == nil, tc.code == 0)
			}
		})
	}
}
