package results

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for i, name := range strings.Split(FormatNames, "|") {
		f, err := ParseFormat(name)
		if err != nil || int(f) != i || f.String() != name {
			t.Errorf("ParseFormat(%q) = %v (%d), %v", name, f, int(f), err)
		}
	}
	for _, bad := range []string{"", "JSONL", "json", "md"} {
		_, err := ParseFormat(bad)
		if err == nil {
			t.Errorf("ParseFormat(%q) accepted", bad)
			continue
		}
		for _, want := range []string{"table", "jsonl", "csv", "gobench", "markdown", `"` + bad + `"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseFormat(%q) error %q does not list %s", bad, err, want)
			}
		}
	}
	if Format(99).String() != "Format(99)" {
		t.Errorf("out-of-range String = %q", Format(99).String())
	}
}

func TestFormatIsFlagValue(t *testing.T) {
	var f Format
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	fs.Var(&f, "format", "output format: "+FormatNames)
	if err := fs.Parse([]string{"-format", "gobench"}); err != nil || f != FormatGoBench {
		t.Errorf("-format gobench: %v, %v", f, err)
	}
	if err := fs.Parse([]string{"-format", "xml"}); err == nil || !strings.Contains(err.Error(), "accepted") {
		t.Errorf("-format xml: %v", err)
	}
}

// TestFormatWriters checks that every format's writer takes the test
// records and produces what the format's own writer does.
func TestFormatWriters(t *testing.T) {
	recs := testRecords()
	direct := map[Format]func() []byte{
		FormatJSONL:   func() []byte { return writeJSONL(t, recs) },
		FormatGoBench: func() []byte { return writeGoBench(t, GoBenchOptions{}, recs) },
		FormatCSV: func() []byte {
			var b bytes.Buffer
			w := NewCSVWriter(&b)
			for _, r := range recs[:2] { // one bench: a stream fixes its columns
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			return b.Bytes()
		},
		FormatTable: func() []byte {
			var b bytes.Buffer
			if err := RenderTable(&b, recs, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		},
		FormatMarkdown: func() []byte {
			var b bytes.Buffer
			if err := RenderTable(&b, recs, TableOptions{Markdown: true}); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		},
	}
	for f, want := range direct {
		t.Run(f.String(), func(t *testing.T) {
			in := recs
			if f == FormatCSV {
				in = recs[:2]
			}
			var b bytes.Buffer
			w := f.NewWriter(&b, TableOptions{})
			for _, r := range in {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w := want(); !bytes.Equal(b.Bytes(), w) {
				t.Errorf("Format %s writer output differs\n got %s\nwant %s", f, b.Bytes(), w)
			}
		})
	}
}
