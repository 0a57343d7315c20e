package optsplit

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
)

// TestRunAgreed: a verdict all application ranks reach (ModelError) ends
// every world rank alike: the reporting rank with the message (agreed),
// the others quiet, all with exit status 1 and none aborting the job; the
// network is shut down in order.
func TestRunAgreed(t *testing.T) {
	top, err := emulate.Parse("SE(2)")
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, top.Ranks())
	err = local.RunWith(local.Options{Timeout: time.Minute}, top.Ranks(), func(c mpi.Comm) error {
		errs[c.Rank()] = RunAgreed(c, emulate.Config{Topology: top}, "emulate split", func(s *emulate.Store) error {
			return &ModelError{Err: errors.New("no fit"), Reporter: s.Rank() == 0}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range errs {
		code := job.ExitCode(err, io.Discard, cli.Printable)
		switch {
		case !job.Collective(err) || code != 1:
			t.Errorf("rank %d: %v: collective %v, exit %d; want a collective verdict, exit 1", r, err, job.Collective(err), code)
		case r == 0 && (!job.IsReported(err) || err.Error() != "emulate split: no fit"):
			t.Errorf("rank 0: %v (%T), want the agreed message", err, err)
		case r > 0 && !job.IsQuiet(err):
			t.Errorf("rank %d: %v (%T), want a quiet error", r, err, err)
		}
	}
}

// TestModelVerdict: Run's collective verdict becomes the job's: the
// reporting rank's message (with the caller's hint) printed once and
// agreed, the other ranks quiet, all exit 1 and collective (no
// MPI_Abort); other errors pass as job.PatternErr leaves them.
func TestModelVerdict(t *testing.T) {
	why := func(err error) error { return fmt.Errorf("optimize: %w (hint)", err) }
	fit := errors.New("trilinear fit: k has 1 level(s)")
	tests := []struct {
		name       string
		err        error
		collective bool
		printed    string // what the exit prints; "" for nothing
	}{
		{"reporter", &ModelError{Err: fit, Reporter: true}, true, "commcost: optimize: trilinear fit: k has 1 level(s) (hint)\n"},
		{"other rank", &ModelError{Err: fit}, true, ""},
		{"peer failed", fmt.Errorf("k-k-access: %w", patterns.ErrPeerFailed), true, ""},
		{"own failure", errors.New("MPI_Send: truncated"), false, "commcost: MPI_Send: truncated\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ModelVerdict(tt.err, why)
			var printed strings.Builder
			if code := job.ExitCode(err, &printed, cli.Printable); code != 1 || job.Collective(err) != tt.collective || printed.String() != tt.printed {
				t.Errorf("exit %d, collective %v, printed %q; want 1, %v, %q", code, job.Collective(err), printed.String(), tt.collective, tt.printed)
			}
		})
	}
}
