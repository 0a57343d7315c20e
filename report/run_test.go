package report

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

func writeRecords(t *testing.T, path string, recs []results.Record) {
	t.Helper()
	w, err := results.AppendJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// dirFiles lists the names under dir (recursively, relative).
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildRun: the report fits every model kind the records feed, compares
// the models per bench, and depends on nothing but the records: the same
// records give the same bytes, and so do the records read back from JSON
// Lines (ints and floats in params, shortest float forms), which is what
// `commcost report DIR` reads.
func TestBuildRun(t *testing.T) {
	recs := runRecords()
	a, err := BuildRun(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	md := string(a.Markdown)
	for _, want := range []string{
		"# commcost run on node1, 2025-06-01T12:00:00Z",
		"105 records (records.jsonl): pingpong 21, kkaccess 84.",
		"MPI: Open MPI v4.1.4.",
		"## bsp model (kkaccess records)", "## hockney model (pingpong records)", "## hyperbolic model (pingpong records)",
		"## piecewise model (pingpong records)", "## trilinear model (kkaccess records)", "## trilinear-piecewise model (kkaccess records)",
		"held-out points, measured vs predicted", "![trilinear](plots/trilinear.png)",
		"## Models compared on pingpong records", "## Models compared on kkaccess records", "closest (*)",
		"## The papers' figures from these records", "Paper 000, Fig. 5", "![paper000-fig05-kk-l.png](plots/paper000-fig05-kk-l.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !bytes.HasSuffix(a.Markdown, a.Fits) {
		t.Error("report.md does not end with the fit part the suite prints")
	}
	var names []string
	for _, p := range a.Plots {
		names = append(names, p.Name)
	}
	if want := []string{"bsp.png", "bspstar.png", "c3.png", "cgm.png", "hockney.png", "hyperbolic.png", "piecewise.png", "qsm.png", "trilinear.png", "trilinear-piecewise.png",
		"paper000-fig05-kk-l.png", "paper000-fig06-kk-r.png", "paper000-fig07-kk-k.png", "paper000-fig08-kk-r1-rmin.png"}; !slices.Equal(names, want) {
		t.Errorf("plots %v, want %v", names, want)
	}
	path := filepath.Join(t.TempDir(), results.RecordsFile)
	writeRecords(t, path, recs)
	back, err := results.ReadJSONLFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildRun(back, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Markdown, b.Markdown) {
		t.Error("report.md from the records read back from JSON Lines differs from the in-memory one")
	}
	for i := range a.Plots {
		if !bytes.Equal(a.Plots[i].Data, b.Plots[i].Data) {
			t.Errorf("plot %s differs after the JSON Lines round trip", a.Plots[i].Name)
		}
	}
}

// TestRegenerateRunDir: report.md and plots/ rebuilt from records.jsonl
// alone are the same as before they were deleted; a stale plot goes.
func TestRegenerateRunDir(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, filepath.Join(dir, results.RecordsFile), runRecords())
	first, err := RegenerateRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	report1, _ := os.ReadFile(filepath.Join(dir, results.ReportFile))
	files1 := dirFiles(t, dir)
	if !bytes.Equal(report1, first.Markdown) {
		t.Fatal("report.md on disk is not the built one")
	}
	if err := os.RemoveAll(filepath.Join(dir, results.PlotsDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, results.ReportFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := RegenerateRunDir(dir); err != nil {
		t.Fatal(err)
	}
	report2, _ := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if !bytes.Equal(report1, report2) {
		t.Error("regenerated report.md differs")
	}
	if files2 := dirFiles(t, dir); !slices.Equal(files1, files2) {
		t.Errorf("files %v, regenerated %v", files1, files2)
	}
	stale := filepath.Join(dir, results.PlotsDir, "stale.png")
	os.WriteFile(stale, []byte("x"), 0o644)
	if _, err := RegenerateRunDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a plot the records do not make survived the regeneration")
	}
	if files3 := dirFiles(t, dir); !slices.Equal(files1, files3) {
		t.Errorf("files %v after regenerating over old plots, want %v", files3, files1)
	}
}

// TestWriteRunDirFails: a report.md that cannot be replaced (here a
// directory in its place) is an error naming it, and nothing of the new
// report is left behind: no temporary files, the old plots untouched.
func TestWriteRunDirFails(t *testing.T) {
	dir := t.TempDir()
	recs := runRecords()
	run, err := BuildRun(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	writeRecords(t, filepath.Join(dir, results.RecordsFile), recs)
	os.Mkdir(filepath.Join(dir, results.PlotsDir), 0o755)
	old := filepath.Join(dir, results.PlotsDir, "old.png")
	os.WriteFile(old, []byte("old"), 0o644)
	if err := os.MkdirAll(filepath.Join(dir, results.ReportFile, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := dirFiles(t, dir)
	err = WriteRunDir(dir, run)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, results.ReportFile)) {
		t.Fatalf("err = %v, want one naming %s", err, results.ReportFile)
	}
	if after := dirFiles(t, dir); !slices.Equal(before, after) {
		t.Errorf("files before %v, after the failed write %v", before, after)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.md")
	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(data) != "two" || st.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v", data, st.Mode())
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string // where the write happens
		path func(dir string) string
		data int // bytes written
	}{
		{"missing directory", func(*testing.T) string { return dir }, func(d string) string { return filepath.Join(d, "no", "b.md") }, 1},
		{"directory in the way", func(*testing.T) string { return dir }, func(d string) string { return d }, 1},
		// A plot larger than the file system: the temporary file fills
		// it and is removed; an old plot of that name keeps its content.
		{"file system full", func(t *testing.T) string {
			d := testfs.Tmpfs(t, 64<<10)
			os.WriteFile(filepath.Join(d, "plot.png"), []byte("old"), 0o644)
			return d
		}, func(d string) string { return filepath.Join(d, "plot.png") }, 256 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.dir(t)
			path := tc.path(d)
			before := dirFiles(t, d)
			old, _ := os.ReadFile(path)
			err := WriteFile(path, make([]byte, tc.data))
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want one naming %s", err, path)
			}
			if after := dirFiles(t, d); !slices.Equal(before, after) {
				t.Errorf("files before %v, after %v", before, after)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
				t.Errorf("%s changed to %d bytes", path, len(now))
			}
		})
	}
}

// TestReadRunDirTruncated: an interrupted run's last, cut-off record is
// left out and the report says so.
func TestReadRunDirTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, results.RecordsFile)
	writeRecords(t, path, runRecords())
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"schema":1,"bench":"pingpong","par`)
	f.Close()
	run, err := RegenerateRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Truncated || !strings.Contains(string(run.Markdown), "incomplete record") {
		t.Errorf("truncated %v; report does not say the last record was left out", run.Truncated)
	}
	if _, _, err := ReadRunDir(t.TempDir()); err == nil {
		t.Error("a directory without records.jsonl was read")
	}
}
