package main

import (
	"io"

	"github.com/commcost/commcost/progress"
)

// Progress of long sweeps (package progress draws the line): it appears
// only when stderr is a terminal (a log file or a pipe gets nothing, so
// batch output stays clean), never on stdout or in --out, and --quiet
// silences it. Rank 0 prints it.

// isTerminal decides whether a line belongs on w; a variable so tests can
// pretend.
var isTerminal = progress.IsTerminal

// meter is the progress line of a run, nil when there is none.
type meter struct{ line *progress.Meter }

// newMeter starts a progress line for label on w when w is a terminal
// and quiet is false, else returns nil (every method of a nil meter does
// nothing). total is the number of points, 0 when unknown.
func newMeter(w io.Writer, quiet bool, label string, total int) *meter {
	if quiet || w == nil || !isTerminal(w) {
		return nil
	}
	return &meter{progress.Start(w, label, total)}
}

// step records one finished point.
func (m *meter) step() {
	if m != nil {
		m.line.Step()
	}
}

// finish ends the line; calls after the first do nothing.
func (m *meter) finish() {
	if m != nil {
		m.line.Finish()
	}
}
