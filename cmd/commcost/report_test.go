package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/internal/testfs"
	"github.com/commcost/commcost/results"
)

// runDirFiles returns report.md's bytes and the names in plots/.
func runDirFiles(t *testing.T, dir string) ([]byte, []string) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, results.PlotsDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return md, names
}

// localSuite runs the suite on goroutine ranks into a new run directory
// under base and returns the directory.
func localSuite(t *testing.T, base string) string {
	t.Helper()
	code, out, errs := runCLI(t, "suite", "--backend", "local", "--np", "2", "--sizes", "8,1K,64K", "--iters", "2",
		"--warmup", "0", "--min-reps", "3", "--max-reps", "3", "--rundir", base)
	if code != 0 {
		t.Fatalf("suite exit %d: %s", code, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(base, "*", results.RecordsFile))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	if !strings.Contains(out, "run directory: "+filepath.Dir(dirs[0])) {
		t.Errorf("suite does not say where the run is:\n%s", out)
	}
	return filepath.Dir(dirs[0])
}

// TestReportRegeneratesSuite: delete a suite's report.md and plots/,
// regenerate them with `commcost report DIR`, and get report.md byte for
// byte and the same plots.
func TestReportRegeneratesSuite(t *testing.T) {
	dir := localSuite(t, t.TempDir())
	md1, plots1 := runDirFiles(t, dir)
	for _, want := range []string{"## hockney model (pingpong", "## trilinear model (kkaccess records)", "## Models compared on kkaccess records",
		"## Applications", "Table 2", "matmul mm", "concomp bfs", "bitonic bitonic", "samplesort local-sort", "plots/apps.png",
		"## Message-passing applications: which model predicts each program", "checkerboard", "gauss", "multigrid"} {
		if !bytes.Contains(md1, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if len(plots1) == 0 {
		t.Fatal("no plots")
	}
	os.Remove(filepath.Join(dir, results.ReportFile))
	os.RemoveAll(filepath.Join(dir, results.PlotsDir))
	code, out, errs := runCLI(t, "report", dir)
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, errs)
	}
	if !strings.Contains(out, filepath.Join(dir, results.ReportFile)) {
		t.Errorf("report output %q does not name report.md", out)
	}
	md2, plots2 := runDirFiles(t, dir)
	if !bytes.Equal(md1, md2) {
		t.Errorf("regenerated report.md differs from the suite's")
	}
	if !slices.Equal(plots1, plots2) {
		t.Errorf("plots %v, regenerated %v", plots1, plots2)
	}
}

// TestReportWriteFails: a report that cannot be written (a run directory
// not writable, a full file system) exits 1 naming the file, and leaves no
// partial or temporary file behind. A report.md that is a directory is
// bad input (TestReportBadInput).
func TestReportWriteFails(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (dir, want string) // want: the path named
		cause string
	}{
		{"run directory not writable", func(t *testing.T) (string, string) {
			if os.Geteuid() == 0 {
				t.Skip("root writes into a read-only directory")
			}
			dir := t.TempDir()
			writeJSONL(t, filepath.Join(dir, results.RecordsFile), synthetic("hockney"))
			os.Chmod(dir, 0o555)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			return dir, dir
		}, "permission denied"},
		{"file system full", func(t *testing.T) (string, string) {
			dir := testfs.Tmpfs(t, 256<<10)
			writeJSONL(t, filepath.Join(dir, results.RecordsFile), synthetic("hockney"))
			// Fill what is left, so the first plot or report.md fails.
			f, err := os.Create(filepath.Join(dir, "filler"))
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := f.Write(make([]byte, 4096)); err != nil {
					break
				}
			}
			f.Close()
			return dir, dir
		}, "no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, want := tc.setup(t)
			before := listDir(t, dir)
			code, out, errs := runCLI(t, "report", dir)
			if code != 1 || out != "" || !strings.Contains(errs, want) || !strings.Contains(errs, tc.cause) || strings.Count(errs, "commcost:") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one message naming %s and %q", code, out, errs, want, tc.cause)
			}
			if after := listDir(t, dir); after != before {
				t.Errorf("files before %s, after %s", before, after)
			}
		})
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	blank := filepath.Join(dir, "blank")
	os.Mkdir(blank, 0o755)
	os.WriteFile(filepath.Join(blank, results.RecordsFile), nil, 0o644)
	garbage := filepath.Join(dir, "garbage")
	os.Mkdir(garbage, 0o755)
	os.WriteFile(filepath.Join(garbage, results.RecordsFile), []byte("{not json\n"), 0o644)
	mdDir := filepath.Join(dir, "mddir")
	os.MkdirAll(filepath.Join(mdDir, results.ReportFile), 0o755)
	writeJSONL(t, filepath.Join(mdDir, results.RecordsFile), synthetic("hockney")[:1])
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no directory", []string{"report"}, "report wants one run directory DIR, got 0"},
		{"two directories", []string{"report", empty, blank}, "got 2"},
		{"missing", []string{"report", filepath.Join(dir, "none")}, "not a directory"},
		{"a file", []string{"report", filepath.Join(blank, results.RecordsFile)}, "not a directory"},
		{"no records file", []string{"report", empty}, "no records.jsonl"},
		{"no records", []string{"report", blank}, "holds no records"},
		{"not JSON Lines", []string{"report", garbage}, "DIR " + garbage},
		{"unknown flag", []string{"report", "--bogus", empty}, "bogus"},
		{"report.md is a directory", []string{"report", mdDir}, filepath.Join(mdDir, results.ReportFile) + " is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
}
