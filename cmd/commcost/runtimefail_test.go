package main

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
)

// addTestCommand puts a leaf below the root for one test and removes it
// afterwards, so the help listing of other tests is unchanged.
func addTestCommand(t *testing.T, name string, run func(args []string, stdout, stderr io.Writer) error) {
	t.Helper()
	if cli.Root.Child(name) != nil {
		t.Fatalf("command %q already exists", name)
	}
	cli.Register(cli.Command{Name: name, Summary: "test only", Run: run})
	t.Cleanup(func() { cli.Root.Unregister(name) })
}

// A runtime failure exits 1, never 2 (the status of bad
// input), whether the panic happens in the subcommand itself, in a rank of
// the local backend, or is Go's refusal of an allocation that cannot be
// made. (Go's "fatal error: runtime: out of memory" cannot be recovered
// in-process; the subcommands' memory checks before allocating, tested in
// demand_test.go, keep it from being reached.)
func TestRuntimeFailureExitsOne(t *testing.T) {
	huge := int(math.MaxInt64 / 8)
	tests := []struct {
		name string
		run  func(args []string, stdout, stderr io.Writer) error
		want string // in stderr
	}{
		{"panic in the subcommand", func([]string, io.Writer, io.Writer) error {
			panic("broken invariant")
		}, "internal error: broken invariant"},
		{"nil map write", func([]string, io.Writer, io.Writer) error {
			var m map[string]int
			m["x"] = 1
			return nil
		}, "assignment to entry in nil map"},
		{"allocation refused", func([]string, io.Writer, io.Writer) error {
			n := huge
			b := make([]float64, n)
			_ = b
			return nil
		}, "makeslice: len out of range"},
		{"panic in a local rank", func([]string, io.Writer, io.Writer) error {
			return job.World(job.Local, 2, func(c mpi.Comm) error {
				if c.Rank() == 1 {
					panic("rank 1 broke")
				}
				return nil
			})
		}, "rank 1 broke"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "runtime-failure-" + string(rune('a'+i))
			addTestCommand(t, name, tc.run)
			var out, errb bytes.Buffer
			code := mainCode([]string{name}, &out, &errb)
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr:\n%s", code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr does not name %q:\n%s", tc.want, errb.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out.String())
			}
		})
	}
}
