package results

import "io"

// RenderCells draws a table of preformatted cells as RenderTable draws
// records (tablewriter, numbers right-aligned, text left-aligned; markdown
// with escaped cells), for tables that are not one row per record, such as
// the ratio tables of the paper-004 experiments (package dsmexp).
func RenderCells(w io.Writer, header []string, rows [][]string, markdown bool) error {
	return renderCells(w, header, rows, markdown)
}
