package results

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestWriteCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, testRecords()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "records.csv.golden", buf.Bytes())

	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(testRecords()) {
		t.Fatalf("%d rows; want header + %d", len(rows), len(testRecords()))
	}
	header := strings.Join(rows[0], ",")
	for _, col := range []string{"param_bytes", "param_window", "param_strategy", "derived_latency_s", "counter_messages", "ci95_lo", "ci95_hi"} {
		if !strings.Contains(header, col) {
			t.Errorf("header lacks %s: %s", col, header)
		}
	}
}

func TestCSVWriterColumnsFromFirstRecord(t *testing.T) {
	recs := testRecords()
	var buf bytes.Buffer
	w := NewCSVWriter(&buf)
	// pingpong has only "bytes"; bandwidth adds "window", which the header
	// fixed by the first record lacks.
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs[1]); err != nil {
		t.Fatal(err)
	}
	before := buf.Len()
	err := w.Write(recs[2])
	if err == nil || !strings.Contains(err.Error(), "param_window") {
		t.Fatalf("Write of a record with a new parameter: %v; want an error naming param_window", err)
	}
	if buf.Len() != before {
		t.Errorf("a refused record wrote %q", buf.String()[before:])
	}
	if got := strings.Count(buf.String(), "\n"); got != 3 {
		t.Errorf("%d lines; want header + 2 rows", got)
	}
}

func TestCSVWriterMissingColumnIsEmpty(t *testing.T) {
	recs := testRecords()
	var buf bytes.Buffer
	w := NewCSVWriterColumns(&buf, []string{"bytes", "window"}, []string{"latency_s"}, nil)
	if err := w.Write(recs[0]); err != nil { // no "window"
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	h, row := rows[0], rows[1]
	if h[len(h)-2] != "param_window" || row[len(row)-2] != "" || row[len(row)-1] != "7.6e-07" {
		t.Errorf("last cells %q under %q; want an empty param_window", row[len(row)-2:], h[len(h)-2:])
	}
}

func TestWriteCSVEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "schema,bench,") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("empty export = %q; want the header only", buf.String())
	}
}
