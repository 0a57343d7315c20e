package results

import (
	"fmt"
	"io"
	"strings"
)

// Format is an output format for records. The zero value is FormatTable.
// *Format implements flag.Value, so a CLI can declare
//
//	var f results.Format
//	fs.Var(&f, "format", "output `format`: "+results.FormatNames)
type Format int

// The formats, in the order FormatNames lists them.
const (
	FormatTable    Format = iota // box-drawn terminal tables (RenderTable)
	FormatJSONL                  // JSON Lines, the canonical format (JSONLWriter)
	FormatCSV                    // CSV with a header (CSVWriter)
	FormatGoBench                // Go benchmark format for benchstat (GoBenchWriter)
	FormatMarkdown               // markdown tables (RenderTable with Markdown)
)

// FormatNames lists the accepted format names in Format order, for usage
// messages.
const FormatNames = "table|jsonl|csv|gobench|markdown"

var formatNames = strings.Split(FormatNames, "|")

// ParseFormat parses one of FormatNames (case-sensitive). The error lists the
// accepted values.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (accepted: %s)", s, strings.Join(formatNames, ", "))
}

// String returns the format's name.
func (f Format) String() string {
	if f < 0 || int(f) >= len(formatNames) {
		return fmt.Sprintf("Format(%d)", int(f))
	}
	return formatNames[f]
}

// Set parses s into f (flag.Value).
func (f *Format) Set(s string) error {
	v, err := ParseFormat(s)
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// NewWriter returns a RecordWriter for the format. The streaming formats
// (jsonl, csv, gobench) write each record as it arrives; the tables need
// every record to size their columns, so they render on Close. Close never
// closes w. opt applies to the table formats only (Markdown is implied by
// FormatMarkdown).
func (f Format) NewWriter(w io.Writer, opt TableOptions) RecordWriter {
	switch f {
	case FormatJSONL:
		return NewJSONLWriter(w)
	case FormatCSV:
		return NewCSVWriter(w)
	case FormatGoBench:
		return NewGoBenchWriter(w, GoBenchOptions{})
	case FormatMarkdown:
		opt.Markdown = true
	}
	return &tableWriter{w: w, opt: opt}
}

// tableWriter collects records and renders them as tables on Close.
type tableWriter struct {
	w    io.Writer
	opt  TableOptions
	recs []Record
}

func (t *tableWriter) Write(rec Record) error {
	if rec.Schema == 0 {
		rec.Schema = SchemaVersion
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	t.recs = append(t.recs, rec)
	return nil
}

func (t *tableWriter) Close() error { return RenderTable(t.w, t.recs, t.opt) }
