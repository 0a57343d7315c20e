package main

import (
	"io"
	"strings"
	"testing"

	"github.com/commcost/commcost/job"
)

// TestProgressNotInData: a sweep with stderr not a terminal prints no
// progress anywhere, and with a terminal stderr the progress goes to
// stderr only: stdout holds the records' table and nothing else.
func TestProgressNotInData(t *testing.T) {
	defer func(f func(io.Writer) bool) { job.IsTerminal = f }(job.IsTerminal)
	for _, term := range []bool{false, true} {
		job.IsTerminal = func(io.Writer) bool { return term }
		code, out, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8,1K", "--iters", "10", "--min-reps", "3", "--max-reps", "3", "--format", "csv")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if strings.Contains(out, "points") || strings.Contains(out, "\r") {
			t.Errorf("terminal=%v: progress in stdout: %q", term, out)
		}
		if !term && errs != "" {
			t.Errorf("stderr not a terminal, yet %q", errs)
		}
	}
}
