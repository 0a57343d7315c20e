package results

import "io"

// RenderGrid draws a table of preformatted cells in the style of
// RenderTable (terminal, or markdown when markdown is set): numeric-looking
// columns right-aligned, header text as given. For tables that are not
// one record per row, such as a model-ranking table.
func RenderGrid(w io.Writer, header []string, rows [][]string, markdown bool) error {
	return renderCells(w, header, rows, markdown)
}

// FormatSeconds shows a time as the tables do: three significant digits
// in s, ms, us or ns, e.g. "1.52 ms".
func FormatSeconds(v float64) string {
	return scaleFor(UnitSeconds, v, &noteSet{}).format(v)
}
