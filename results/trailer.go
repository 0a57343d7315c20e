package results

import (
	"fmt"
	"io"
)

// Human reports whether f is written for people (FormatTable,
// FormatMarkdown) rather than for programs (JSON Lines, CSV, gobench).
func (f Format) Human() bool { return f == FormatTable || f == FormatMarkdown }

// WriteReport writes a prose report (a verdict, a comparison of measured
// with predicted) that follows the records of a run written in format f.
// With a human format the report follows the tables on stdout after a
// blank line; with a machine format it goes to stderr, so that stdout
// stays a file a program can parse. An empty report writes nothing.
func WriteReport(stdout, stderr io.Writer, f Format, report []byte) error {
	if len(report) == 0 {
		return nil
	}
	w := stderr
	if f.Human() {
		w = stdout
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	_, err := w.Write(report)
	return err
}
