package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// TestWriteRunDirTouchesOnlyItsOwn: report DIR writes its plots into a
// plots/ directory of its own, removes only what its manifest lists, and
// refuses (as bad input, touching nothing) what is not its own.
func TestWriteRunDirTouchesOnlyItsOwn(t *testing.T) {
	run := &Run{Markdown: []byte("# report\n"), Plots: []PlotFile{{Name: "a.png", Data: []byte("A")}, {Name: "b.png", Data: []byte("B")}}}
	type file struct{ path, data string }
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // "" written; else the error
		keep  []file // files that must hold this afterwards
		gone  []string
	}{
		{"fresh directory", func(t *testing.T, dir string) {}, "", []file{{"plots/a.png", "A"}, {"plots/b.png", "B"}}, nil},
		{"user's file beside the plots", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/mine.txt", "mine")
		}, "", []file{{"plots/mine.txt", "mine"}, {"plots/a.png", "A"}}, nil},
		{"plot of the previous report no longer made", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/old.png", string(markedPNG(t)))
			mkfile(t, dir, "plots/"+ManifestFile, "old.png\na.png\n")
		}, "", []file{{"plots/a.png", "A"}}, []string{"plots/old.png"}},
		{"user's file saved over a listed plot no longer made", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/old.png", "the user's")
			mkfile(t, dir, "plots/"+ManifestFile, "old.png\na.png\n")
		}, "", []file{{"plots/a.png", "A"}, {"plots/old.png", "the user's"}}, nil},
		{"user's file saved over a listed plot", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", "the user's")
			mkfile(t, dir, "plots/"+ManifestFile, "a.png\nb.png\n")
		}, "plots/a.png exists and is not a plot commcost wrote", []file{{"plots/a.png", "the user's"}}, []string{"report.md"}},
		{"listed plots commcost drew", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", string(markedPNG(t)))
			mkfile(t, dir, "plots/"+ManifestFile, "a.png\nb.png\n")
		}, "", []file{{"plots/a.png", "A"}}, nil},
		{"no manifest, a plot commcost drew", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", string(markedPNG(t)))
			mkfile(t, dir, "plots/other.png", "other")
		}, "", []file{{"plots/a.png", "A"}, {"plots/other.png", "other"}}, nil},
		{"no manifest, an unmarked PNG its report links", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", string(plainPNG(t)))
			mkfile(t, dir, "report.md", "# commcost run old\n![a](plots/a.png)\n")
		}, "plots/a.png exists and is not a plot commcost wrote", []file{{"plots/a.png", string(plainPNG(t))}}, nil},
		{"no manifest, a linked name holding a user's text", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", "the user's")
			mkfile(t, dir, "report.md", "# commcost run old\n![a](plots/a.png)\n")
		}, "plots/a.png exists and is not a plot commcost wrote", []file{{"plots/a.png", "the user's"}}, nil},
		{"no manifest, a user's file with a plot's name", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", "the user's")
		}, "plots/a.png exists and is not a plot commcost wrote", []file{{"plots/a.png", "the user's"}}, []string{"report.md"}},
		{"no manifest, a user's PNG with a plot's name", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/b.png", string(plainPNG(t)))
		}, "plots/b.png exists and is not a plot commcost wrote", []file{{"plots/b.png", string(plainPNG(t))}}, []string{"report.md", "plots/a.png"}},
		{"plots is a symbolic link", func(t *testing.T, dir string) {
			mkfile(t, dir, "elsewhere/a.png", "precious")
			if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "plots")); err != nil {
				t.Fatal(err)
			}
		}, "plots is a symbolic link", []file{{"elsewhere/a.png", "precious"}}, []string{"report.md"}},
		{"plots is a file", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots", "a file")
		}, "plots is not a directory", []file{{"plots", "a file"}}, []string{"report.md"}},
		{"report.md is a directory", func(t *testing.T, dir string) {
			mkfile(t, dir, "report.md/notes.txt", "mine")
		}, "report.md is a directory, not a regular file", []file{{"report.md/notes.txt", "mine"}}, []string{"plots"}},
		{"user's file with a plot's name", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/a.png", "the user's")
			mkfile(t, dir, "plots/"+ManifestFile, "b.png\n")
		}, "plots/a.png is not a plot commcost wrote", []file{{"plots/a.png", "the user's"}}, []string{"report.md"}},
		{"a directory with a plot's name", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "plots", "a.png"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "a.png is not a regular file", nil, []string{"report.md"}},
		{"manifest naming a file not a plot", func(t *testing.T, dir string) {
			mkfile(t, dir, "plots/notes.txt", "mine")
			mkfile(t, dir, "plots/"+ManifestFile, "a.png\nnotes.txt\n")
		}, `"notes.txt" is not a file name in`, []file{{"plots/notes.txt", "mine"}}, []string{"report.md", "plots/a.png"}},
		{"report.md a user wrote", func(t *testing.T, dir string) {
			mkfile(t, dir, "report.md", "# my notes on this run\n")
		}, "report.md exists and is not a report commcost wrote", []file{{"report.md", "# my notes on this run\n"}}, []string{"plots"}},
		{"report.md a link", func(t *testing.T, dir string) {
			mkfile(t, dir, "elsewhere.md", "# commcost run x\n")
			if err := os.Symlink(filepath.Join(dir, "elsewhere.md"), filepath.Join(dir, "report.md")); err != nil {
				t.Fatal(err)
			}
		}, "report.md is a symbolic link", []file{{"elsewhere.md", "# commcost run x\n"}}, []string{"plots"}},
		{"report.md of an earlier commcost", func(t *testing.T, dir string) {
			mkfile(t, dir, "report.md", "# commcost run suite-1\n")
		}, "", []file{{"report.md", "# report\n"}, {"plots/a.png", "A"}}, nil},
		{"manifest naming a file outside plots", func(t *testing.T, dir string) {
			mkfile(t, dir, "victim", "precious")
			mkfile(t, dir, "plots/"+ManifestFile, "../victim\n")
		}, `"../victim" is not a file name in`, []file{{"victim", "precious"}}, []string{"report.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			err := WriteRunDir(dir, run)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			case tc.want != "" && !opts.IsBadInput(err):
				t.Errorf("%v is not bad input (exit 2)", err)
			}
			for _, f := range tc.keep {
				if data, err := os.ReadFile(filepath.Join(dir, f.path)); err != nil || string(data) != f.data {
					t.Errorf("%s: %q, %v; want %q", f.path, data, err, f.data)
				}
			}
			for _, g := range tc.gone {
				if _, err := os.Lstat(filepath.Join(dir, g)); err == nil {
					t.Errorf("%s exists", g)
				}
			}
			if tc.want == "" {
				listed, _ := os.ReadFile(filepath.Join(dir, "plots", ManifestFile))
				if !strings.Contains(string(listed), "\na.png\nb.png\n") {
					t.Errorf("manifest %q lacks the plots written", listed)
				}
			}
		})
	}
}

// plainPNG is a 1x1 PNG as any program writes it; markedPNG the same
// marked as commcost's own (MarkPNG).
func plainPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func markedPNG(t *testing.T) []byte { return MarkPNG(plainPNG(t)) }

// TestMarkPNG: the mark makes a PNG commcost's own (OwnPNG) and leaves a
// valid image; a plain PNG, a truncated one and other data are not.
func TestMarkPNG(t *testing.T) {
	marked := markedPNG(t)
	if _, err := png.Decode(bytes.NewReader(marked)); err != nil {
		t.Fatalf("the marked PNG does not decode: %v", err)
	}
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"marked", marked, true},
		{"marked, head only", marked[:pngMarkEnd], true},
		{"plain PNG", plainPNG(t), false},
		{"truncated mark", marked[:pngMarkEnd-1], false},
		{"text", []byte("Software\x00commcost"), false},
		{"empty", nil, false},
	} {
		if got := OwnPNG(tc.head); got != tc.want {
			t.Errorf("%s: OwnPNG = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := MarkPNG([]byte("not a png")); string(got) != "not a png" {
		t.Errorf("MarkPNG changed data that is no PNG: %q", got)
	}
}

func mkfile(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSlug: a name from records becomes one safe path element; names that
// had to change keep apart.
func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"compare-pingpong", "compare-pingpong"},
		{"compare-sched.comm", "compare-sched.comm"},
		{"../../../tmp/escaped", "_._.._.._tmp_escaped-"},
		{"..", "_.-"},
		{".hidden", "_hidden-"},
		{"a/b", "a_b-"},
		{"pp\x1b]0;PWNED\a\x1b[2J", "pp__0_PWNED___2J-"},
		{"", "unnamed"},
		{"名前", "______-"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		got := Slug(tc.in)
		if !strings.HasPrefix(got, tc.want) || strings.ContainsAny(got, "/\\\x00") || strings.HasPrefix(got, ".") || !safePlotName(got) {
			t.Errorf("Slug(%q) = %q, want %q...", tc.in, got, tc.want)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("Slug(%q) = Slug(%q) = %q", tc.in, prev, got)
		}
		seen[got] = tc.in
	}
	if a, b := Slug("a/b"), Slug("a_b"); a == b {
		t.Errorf("a/b and a_b share the file %s", a)
	}
	if long := Slug(strings.Repeat("x/", 300)); len(long) > maxSlugBytes+9 {
		t.Errorf("slug of %d bytes", len(long))
	}
}

// TestCompareHostileRecords: records with a bench name that climbs out of
// the plot directory, control sequences in names, and medians far apart
// neither place a file outside the directory, nor reach the table raw,
// nor panic in the plot.
func TestCompareHostileRecords(t *testing.T) {
	mk := func(label, bench string, v float64) Input {
		var recs []results.Record
		for _, b := range []int{8, 64, 1024, 65536} {
			recs = append(recs, results.Record{Schema: 1, Bench: bench, Params: results.Params{"bytes": b}, Ranks: 2, Unit: "s",
				Summary: results.Summary{N: 10, Min: v, Median: v, Max: v, Mean: v, CI95: [2]float64{v, v}},
				Samples: []float64{v, v, v, v, v, v, v, v, v, v}})
		}
		return Input{Label: label, Records: recs}
	}
	tests := []struct {
		name, bench string
		a, b        float64
	}{
		{"climbing bench name", "../../../tmp/escaped", 1e-6, 2e-6},
		{"escape sequences", "pp\x1b]0;PWNED\a\x1b[2J", 1e-6, 2e-6},
		{"medians 1e9 and 1e-300", "pingpong", 1e9, 1e-300},
		{"medians 1e-300 and 1e9", "pingpong", 1e-300, 1e9},
		{"medians 1e308 and 1e-6", "pingpong", 1e308, 1.7e-6},
		{"span of 1e200", "pingpong", 1, 1e-200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := CompareRuns([]Input{mk("a", tc.bench, tc.a), mk("b", tc.bench, tc.b)}, CompareOptions{Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := rc.Write(&out, OutputTable); err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(out.Bytes(), "\x1b\a") {
				t.Errorf("a control character reached the table:\n%q", out.String())
			}
			bc := rc.Benches[0]
			if name := rc.RatioPlotName(bc, ".png"); !safePlotName(name) {
				t.Errorf("plot file name %q is not one safe file name", name)
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("the plot panicked: %v", r)
					}
				}()
				rc.PlotRatios(bc, "png")
			}()
		})
	}
}

// TestTablesEscapeControlCharacters: every table writer escapes what a
// terminal would execute.
func TestTablesEscapeControlCharacters(t *testing.T) {
	cell := "x\x1b]0;title\a\x1b[2J\u202e"
	for _, tc := range []struct {
		name  string
		write func(w *bytes.Buffer) error
	}{
		{"Table", func(w *bytes.Buffer) error { return Table(w, []string{"h" + cell}, [][]string{{cell}}) }},
		{"MarkdownTable", func(w *bytes.Buffer) error { return MarkdownTable(w, []string{"h"}, [][]string{{cell}}) }},
		{"TitledTable", func(w *bytes.Buffer) error { return TitledTable(w, cell, []string{"h"}, [][]string{{cell}}, false) }},
		{"notes", func(w *bytes.Buffer) error { return writeNotes(w, []string{cell}, false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tc.write(&out); err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(out.Bytes(), "\x1b\a") || strings.Contains(out.String(), "\u202e") || !strings.Contains(out.String(), `\x1b`) {
				t.Errorf("not escaped: %q", out.String())
			}
		})
	}
}

// TestMarkdownEscapesRecordStrings: the strings a records file carries
// (hosts, library, CPU, command) reach report.md as text: no HTML a
// renderer would run, no backtick that ends the command's code span.
func TestMarkdownEscapesRecordStrings(t *testing.T) {
	r := results.Record{Schema: results.SchemaVersion, Bench: "pingpong", Ranks: 2, Unit: results.UnitSeconds,
		Meta: results.Meta{Hosts: []string{"<b>h</b>"}, MPILibrary: "<script>alert(2)</script>", CPU: "<img src=x onerror=alert(1)>",
			Command: []string{"bin/commcost", "pingpong", "`; rm -rf ~ #"}, Backend: "native"}}
	var b bytes.Buffer
	writeLaunch(&b, []results.Record{r})
	writeRunSummary(&b, []results.Record{r})
	out := b.String()
	for _, bad := range []string{"<b>", "<script>", "<img"} {
		if strings.Contains(out, bad) {
			t.Errorf("raw %q in the markdown:\n%s", bad, out)
		}
	}
	for _, want := range []string{"&lt;b&gt;h&lt;/b&gt;", "&lt;script&gt;", "CPU &lt;img src=x onerror=alert(1)&gt;", "Command: `` bin/commcost pingpong `; rm -rf ~ # ``."} {
		if !strings.Contains(out, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, out)
		}
	}
}
