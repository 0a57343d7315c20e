package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/commcost/commcost/results"
)

// Table draws one box-drawn table, headers as given, every column
// left-aligned.
func Table(w io.Writer, header []string, rows [][]string) error {
	return TableAligned(w, header, rows, 0)
}

// TableAligned is Table with the first numeric columns right-aligned, as
// the record tables of package results align numbers.
func TableAligned(w io.Writer, header []string, rows [][]string, numeric int) error {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i < numeric {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(printable(header))
	for _, r := range rows {
		if err := t.Append(printable(r)); err != nil {
			return err
		}
	}
	return t.Render()
}

// printable escapes what a terminal would not show in every cell
// (results.Printable): cells may carry strings of a records file.
func printable(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = results.Printable(c)
	}
	return out
}

// MarkdownTable draws one GitHub-flavoured markdown table, with the
// characters that would split a cell or start emphasis escaped.
func MarkdownTable(w io.Writer, header []string, rows [][]string) error {
	esc := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = results.EscapeMarkdown(results.Printable(c))
		}
		return out
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(esc(header))
	for _, r := range rows {
		if err := t.Append(esc(r)); err != nil {
			return err
		}
	}
	return t.Render()
}

// TitledTable writes a title line and a table: bold and a markdown table
// with markdown, a plain line and a box-drawn table without.
func TitledTable(w io.Writer, title string, header []string, rows [][]string, markdown bool) error {
	if markdown {
		if _, err := fmt.Fprintf(w, "**%s**\n\n", results.EscapeMarkdown(results.Printable(title))); err != nil {
			return err
		}
		return MarkdownTable(w, header, rows)
	}
	if _, err := fmt.Fprintln(w, results.Printable(title)); err != nil {
		return err
	}
	return Table(w, header, rows)
}

// writeNotes writes notes under tables: a markdown list, or plain lines.
func writeNotes(w io.Writer, notes []string, markdown bool) error {
	for _, n := range notes {
		n = results.Printable(n)
		if markdown {
			n = "- " + results.EscapeMarkdown(n)
		}
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}
