package results

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeJSONL(t testing.TB, recs []Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestJSONLRoundTrip(t *testing.T) {
	want := testRecords()
	data := writeJSONL(t, want)
	if n := bytes.Count(data, []byte("\n")); n != len(want) {
		t.Fatalf("wrote %d lines for %d records", n, len(want))
	}
	got, err := ReadJSONL(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the records\n got %+v\nwant %+v", got, want)
	}
}

func TestJSONLFieldNames(t *testing.T) {
	// The JSON names are the schema; a rename must be a deliberate schema
	// change, not an accident.
	line := string(writeJSONL(t, testRecords()[:1]))
	for _, k := range []string{`"schema":1`, `"bench":"pingpong"`, `"params":{"bytes":8}`, `"ranks":2`, `"unit":"s"`,
		`"n":10`, `"min":`, `"median":`, `"mean":`, `"max":`, `"p90":`, `"p99":`, `"ci95":[`, `"aggregate":`, `"stop":`,
		`"derived":{"latency_s":`, `"samples":[`, `"meta":{"commit":`, `"mpi_library":`, `"mpi_version":`, `"hosts":`,
		`"ranks_per_host":`, `"gomaxprocs":`, `"binding":`, `"backend":`, `"date":`, `"command":`, `"goos":`, `"cpu":`} {
		if !strings.Contains(line, k) {
			t.Errorf("encoded record lacks %s:\n%s", k, line)
		}
	}
}

func TestJSONLWriterStampsSchemaAndRefusesBadRecords(t *testing.T) {
	r := testRecords()[0]
	r.Schema = 0
	got, err := ReadJSONL(bytes.NewReader(writeJSONL(t, []Record{r})))
	if err != nil || got[0].Schema != SchemaVersion {
		t.Fatalf("schema not stamped: %v %+v", err, got)
	}
	bad := map[string]func(*Record){
		"no bench":      func(r *Record) { r.Bench = "" },
		"no unit":       func(r *Record) { r.Unit = "" },
		"newer schema":  func(r *Record) { r.Schema = SchemaVersion + 1 },
		"NaN sample":    func(r *Record) { r.Samples = []float64{math.NaN()} },
		"nested param":  func(r *Record) { r.Params = Params{"x": []int{1}} },
		"NaN param":     func(r *Record) { r.Params = Params{"x": math.NaN()} },
		"negative rank": func(r *Record) { r.Ranks = -1 },
	}
	for name, mutate := range bad {
		var buf bytes.Buffer
		r := testRecords()[0]
		mutate(&r)
		if err := NewJSONLWriter(&buf).Write(r); err == nil {
			t.Errorf("%s: Write accepted the record", name)
		} else if buf.Len() != 0 {
			t.Errorf("%s: Write failed (%v) but wrote %q", name, err, buf.String())
		}
	}
}

func TestReadJSONLErrors(t *testing.T) {
	good := strings.TrimSuffix(string(writeJSONL(t, testRecords()[:1])), "\n")
	// Another record: a file holds each record once (the same line twice
	// is one run read twice).
	good2 := strings.TrimSuffix(string(writeJSONL(t, testRecords()[1:2])), "\n")
	tests := []struct {
		name      string
		input     string
		wantRecs  int
		wantLine  int
		wantTrunc bool
		wantText  string
	}{
		{"empty input", "", 0, 0, false, ""},
		{"blank lines skipped", "\n" + good + "\n\n" + good2 + "\n", 2, 0, false, ""},
		{"the same record twice", good + "\n" + good2 + "\n\n" + good + "\n", 0, 4, false, "line 4: the same record as line 1 (pingpong bytes=8, every field alike, its meta and samples too): a record read twice would count as two runs"},
		{"the same record twice, the copy unterminated", good + "\n" + good, 0, 2, false, "the same record as line 1"},
		{"unterminated but complete", good + "\n" + good2, 2, 0, false, ""},
		{"CRLF", good + "\r\n", 1, 0, false, ""},
		{"truncated last line", good + "\n" + good2 + "\n" + good[:len(good)/2], 2, 3, true, "truncated"},
		{"bad middle line", good + "\n{\"bench\":\n" + good + "\n", 0, 2, false, "line 2"},
		{"bad terminated last line", good + "\n" + good[:len(good)/2] + "\n", 0, 2, false, "not a JSON record"},
		{"newer schema", strings.Replace(good, `"schema":1`, `"schema":2`, 1) + "\n", 0, 1, false, "newer"},
		{"missing schema", strings.Replace(good, `"schema":1,`, ``, 1) + "\n", 0, 1, false, "no schema"},
		{"missing bench", strings.Replace(good, `"bench":"pingpong",`, ``, 1) + "\n", 0, 1, false, "no bench"},
		{"missing unit", strings.Replace(good, `"unit":"s",`, ``, 1) + "\n", 0, 1, false, "no unit"},
		{"two objects on a line", good + good + "\n", 0, 1, false, "extra data"},
		{"array param", strings.Replace(good, `{"bytes":8}`, `{"bytes":[8]}`, 1) + "\n", 0, 1, false, "array"},
		{"not an object", "[1,2]\n", 0, 1, false, "not a JSON record"},
		// A model file of `fit --format json` is one indented document.
		{"an indented document", "{\n  \"model\": \"hockney\",\n  \"params\": {}\n}\n", 0, 1, false, "line 1: not a JSON record: the line opens an object and nothing more; a JSON document over several lines (such as a model file from 'commcost fit --format json') is not JSON Lines"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ReadJSONL(strings.NewReader(tc.input))
			if len(recs) != tc.wantRecs {
				t.Errorf("got %d records; want %d", len(recs), tc.wantRecs)
			}
			if tc.wantLine == 0 {
				if err != nil {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.wantLine {
				t.Fatalf("error %v; want a LineError on line %d", err, tc.wantLine)
			}
			if errors.Is(err, ErrTruncated) != tc.wantTrunc {
				t.Errorf("errors.Is(err, ErrTruncated) = %v; want %v (%v)", !tc.wantTrunc, tc.wantTrunc, err)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not mention %q", err, tc.wantText)
			}
		})
	}
}

func TestReadJSONLLongLine(t *testing.T) {
	// 100k samples make a line far beyond bufio.Scanner's default limit.
	r := testRecords()[0]
	r.Samples = make([]float64, 100000)
	for i := range r.Samples {
		r.Samples[i] = 1.2345678901234e-6 + float64(i)*1e-12
	}
	r.Summary = Summarize(r.Samples)
	got, err := ReadJSONL(bytes.NewReader(writeJSONL(t, []Record{r})))
	if err != nil || len(got) != 1 || len(got[0].Samples) != len(r.Samples) {
		t.Fatalf("long line: %v, %d records", err, len(got))
	}
}

func TestParamsCanonicalNumbers(t *testing.T) {
	tests := []struct {
		json string
		want Params
	}{
		{`{"a":8}`, Params{"a": 8}},
		{`{"a":8.0}`, Params{"a": 8}},
		{`{"a":8e3}`, Params{"a": 8000}},
		{`{"a":-0}`, Params{"a": 0}},
		{`{"a":0.25}`, Params{"a": 0.25}},
		{`{"a":1e19}`, Params{"a": 1e19}},
		{`{"a":9223372036854775807}`, Params{"a": math.MaxInt64}},
		{`{"a":"x","b":true}`, Params{"a": "x", "b": true}},
		{`null`, nil},
	}
	for _, tc := range tests {
		var p Params
		if err := p.UnmarshalJSON([]byte(tc.json)); err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if !reflect.DeepEqual(p, tc.want) {
			t.Errorf("%s: got %#v; want %#v", tc.json, p, tc.want)
		}
	}
	for _, bad := range []string{`{"a":null}`, `{"a":{}}`, `{"a":[1]}`, `[1]`, `{"a":1e999}`} {
		var p Params
		if err := p.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s: accepted as %#v", bad, p)
		}
	}
}

func TestAppendJSONL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RecordsFile)
	recs := testRecords()
	// Two writers in turn: the second appends, it does not truncate.
	for _, part := range [][]Record{recs[:2], recs[2:]} {
		w, err := AppendJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			// Readable before Close: a run killed now keeps this record.
			if got, err := ReadJSONLFile(path); err != nil || !reflect.DeepEqual(got[len(got)-1], r) {
				t.Fatalf("record not in the file after Write: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadJSONLFile(path)
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Fatalf("appended file reads back as %d records, %v", len(got), err)
	}
}

func TestAppendJSONLFailsBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.jsonl")
	if err := os.WriteFile(truncated, []byte(`{"schema":1,"bench":"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnlyDir := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnlyDir, 0o555); err != nil {
		t.Fatal(err)
	}
	readOnlyFile := filepath.Join(dir, "ro.jsonl")
	if err := os.WriteFile(readOnlyFile, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	aFile := filepath.Join(dir, "file")
	if err := os.WriteFile(aFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A dangling link would have the open create its target, here
	// outside the directory named.
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	dangling, danglingRel := filepath.Join(dir, "dangling"), filepath.Join(dir, "dangling-rel")
	if err := os.Symlink(outside, dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.jsonl", danglingRel); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
		root             bool // permission checks do not bind root
	}{
		{"dangling symlink", dangling, dangling + " is a symbolic link to " + outside + ", which does not exist; commcost does not create a link's target", false},
		{"dangling relative symlink", danglingRel, danglingRel + " is a symbolic link to nowhere.jsonl (" + filepath.Join(dir, "nowhere.jsonl") + "), which does not exist", false},
		{"missing directory", filepath.Join(dir, "nope", RecordsFile), "does not exist", false},
		{"parent is a file", filepath.Join(aFile, RecordsFile), "not a directory", false},
		{"path is a directory", dir, "is a directory", false},
		{"truncated file", truncated, "truncated record", false},
		{"unwritable directory", filepath.Join(readOnlyDir, RecordsFile), "permission denied", true},
		{"unwritable file", readOnlyFile, "permission denied", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() == 0 {
				t.Skip("running as root: permissions are not enforced")
			}
			before, _ := os.ReadFile(tc.path)
			w, err := AppendJSONL(tc.path)
			if err == nil {
				w.Close()
				t.Fatalf("AppendJSONL(%s) succeeded", tc.path)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q should name %s and say %q", err, tc.path, tc.want)
			}
			if after, _ := os.ReadFile(tc.path); !bytes.Equal(before, after) {
				t.Errorf("file changed by a failed AppendJSONL")
			}
		})
	}
	if _, err := os.Lstat(outside); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// TestAppendJSONLThroughLink: a symbolic link to an existing records file
// is appended through, to the file it names.
func TestAppendJSONLThroughLink(t *testing.T) {
	dir := t.TempDir()
	path, link := filepath.Join(dir, RecordsFile), filepath.Join(dir, "link.jsonl")
	recs := testRecords()
	for i, p := range []string{path, link} {
		if i == 1 {
			if err := os.Symlink(RecordsFile, link); err != nil {
				t.Fatal(err)
			}
		}
		w, err := AppendJSONL(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := errors.Join(w.Write(recs[i]), w.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ReadJSONLFile(path); err != nil || !reflect.DeepEqual(got, recs[:2]) {
		t.Fatalf("the file reads back as %d records, %v", len(got), err)
	}
}

// FuzzReadJSONL: no input panics the reader, and whatever it accepts
// re-encodes and re-reads to the same records.
func FuzzReadJSONL(f *testing.F) {
	good := writeJSONL(f, testRecords())
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Add([]byte(`{"schema":1,"bench":"b","unit":"s","params":{"x":1.0,"y":"z"},"ci95":[1]}`))
	f.Add([]byte(`{"schema":1,"bench":"b","unit":"s","params":{"x":1e300},"meta":{"hosts":[]}}` + "\n\n"))
	f.Add([]byte(`{"schema":2,"bench":"b","unit":"s"}`))
	f.Add([]byte("\n\r\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadJSONL(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrTruncated) {
			if recs != nil {
				t.Fatalf("hard error %v returned %d records", err, len(recs))
			}
			return
		}
		var buf bytes.Buffer
		w := NewJSONLWriter(&buf)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatalf("accepted record does not re-encode: %v\n%+v", err, r)
			}
		}
		again, err := ReadJSONL(&buf)
		if err != nil {
			t.Fatalf("re-encoded records do not re-read: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(again, recs) {
			t.Fatalf("re-read differs\nfirst %+v\nagain %+v", recs, again)
		}
	})
}

func TestJSONLWriterFlushesEachRecord(t *testing.T) {
	// Through a bufio.Writer: each record must reach the underlying writer
	// before Write returns, not at Close.
	var under bytes.Buffer
	bw := bufio.NewWriterSize(&under, 1<<16)
	w := NewJSONLWriter(bw)
	for i, r := range testRecords() {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(under.Bytes(), []byte("\n")); got != i+1 {
			t.Fatalf("after record %d the destination holds %d lines", i+1, got)
		}
	}
	// Through a pipe, which cannot fsync (EINVAL): not an error.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go io.Copy(io.Discard, pr)
	if err := NewJSONLWriter(pw).Write(testRecords()[0]); err != nil {
		t.Errorf("Write to a pipe: %v", err)
	}
	pw.Close()
}
