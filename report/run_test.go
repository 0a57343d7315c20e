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
		"## Summary", "Measured on node1: Open MPI v4.1.4, 8 ranks", "| latency at 8 B (half round trip) |",
		"| point-to-point (ping-pong, round trip) |", "| k-k-access (paper 000) ", "**Can these figures be trusted?**",
		"![Ping-pong latency", "## Every record",
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
	if !bytes.HasSuffix(a.Fits, a.Summary) || !bytes.HasSuffix(a.Markdown, a.Fits[:len(a.Fits)-len(a.Summary)-1]) {
		t.Error("report.md does not end with the fit part the suite prints, or what the suite prints does not end with the summary")
	}
	if i, j := bytes.Index(a.Markdown, a.Summary), bytes.Index(a.Markdown, []byte("## Every record")); i < 0 || i > j {
		t.Error("report.md does not open with the summary")
	}
	var names []string
	for _, p := range a.Plots {
		names = append(names, p.Name)
	}
	if want := []string{"bsp.png", "bspstar.png", "c3.png", "cgm.png", "hockney.png", "hyperbolic.png", "piecewise.png", "qsm.png", "trilinear.png", "trilinear-piecewise.png",
		"paper000-fig05-kk-l.png", "paper000-fig06-kk-r.png", "paper000-fig07-kk-k.png", "paper000-fig08-kk-r1-rmin.png", "latency.png"}; !slices.Equal(names, want) {
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
// alone are the same as before they were deleted; a stale plot of an
// earlier report (in the manifest) goes, a file of the user's stays.
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
	os.WriteFile(stale, markedPNG(t), 0o644) // a plot commcost drew earlier
	mf := filepath.Join(dir, results.PlotsDir, ManifestFile)
	listed, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(mf, append(listed, "stale.png\n"...), 0o644)
	mine := filepath.Join(dir, results.PlotsDir, "my-notes.txt")
	os.WriteFile(mine, []byte("mine"), 0o644)
	if _, err := RegenerateRunDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a plot of an earlier report that the records no longer make survived the regeneration")
	}
	if data, err := os.ReadFile(mine); err != nil || string(data) != "mine" {
		t.Errorf("the user's file in plots/: %q, %v", data, err)
	}
	os.Remove(mine)
	if files3 := dirFiles(t, dir); !slices.Equal(files1, files3) {
		t.Errorf("files %v after regenerating over old plots, want %v", files3, files1)
	}
}

// TestWriteRunDirFails: a report.md that cannot be replaced (here a
// directory in its place, refused before anything is staged) is an error
// naming it, and nothing of the new report is left behind: no temporary
// files, the old plots untouched.
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

// TestTrustChecks: the summary says when a run's figures cannot be
// trusted: more ranks on a host than the CPUs rank 0 could use, CIs that
// stopped on a cap; and that it cannot tell what the records lack.
func TestTrustChecks(t *testing.T) {
	rec := func(rpn int, binding, stop string, n int) results.Record {
		return results.Record{Bench: "pingpong", Params: results.Params{"bytes": 8}, Ranks: rpn, Unit: "s",
			Summary: results.Summary{N: n, Median: 1e-6}, Stop: stop,
			Meta: results.Meta{Hosts: []string{"h"}, RanksPerHost: []int{rpn}, Binding: binding, Backend: "native"}}
	}
	for _, tc := range []struct {
		name string
		recs []results.Record
		want []string
	}{
		{"oversubscribed", []results.Record{rec(4, "cpus=0-1 ompi_local_rank=0", results.StopRelCI, 20)},
			[]string{"**Oversubscribed**: 4 ranks ran on a host where rank 0 could use 2 CPUs", "every adaptively repeated record (1) reached"}},
		{"fits", []results.Record{rec(2, "cpus=0-3,6", results.StopRelCI, 20)},
			[]string{"do not exceed the CPUs rank 0 could use (5)"}},
		{"bound", []results.Record{rec(2, "cpus=1", results.StopMaxTime, 4)},
			[]string{"bound to one CPU", "cannot tell whether every rank had a core", "1 of 1 records stopped on their time or repetition cap (max-time 1, max-reps 0: pingpong 1)",
				"1 record has fewer than 6 repetitions", "The latency at 8 B stopped by max-time after 4 repetitions"}},
		{"nothing known", []results.Record{rec(2, "", "", 20)},
			[]string{"carry neither rank 0's CPUs nor the host's core count", "do not say why their repetitions stopped", "no load average"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(trustChecks(tc.recs), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("trust checks lack %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestRegenerateCommittedRunDir: the run directory the repository keeps,
// written by a commcost before the plots' manifest and mark, regenerates
// over its own plots (its report.md links them).
func TestRegenerateCommittedRunDir(t *testing.T) {
	srcs, err := filepath.Glob(filepath.Join("..", "results", "runs", "*"))
	if err != nil || len(srcs) == 0 {
		t.Skipf("no committed run directory: %v", err)
	}
	for _, src := range srcs {
		dir := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		if _, err := RegenerateRunDir(dir); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
