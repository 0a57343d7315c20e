package results

import "io"

// RenderCells draws a table of ready-made cells (terminal, or markdown when
// markdown is set) in the style of RenderTable: text columns left-aligned,
// numeric columns right-aligned, headers as given. Libraries that build
// their own tables (apps' predicted-against-measured tables) use it so that
// every table of commcost looks alike.
func RenderCells(w io.Writer, header []string, rows [][]string, markdown bool) error {
	return renderCells(w, header, rows, markdown)
}
