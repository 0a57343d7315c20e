package optsplit

import (
	"errors"
	"testing"
	"time"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/mpi"
)

// TestRunEmulated: a verdict every application rank reaches shuts the
// network down in order (no abort, no hang): the application ranks return
// the *ModelError, rank 0 as its reporter, and the service ranks nil; a
// body without error ends alike with nil everywhere.
func TestRunEmulated(t *testing.T) {
	top, err := emulate.Parse("BF(2)")
	if err != nil {
		t.Fatal(err)
	}
	verdict := errors.New("no interior optimum")
	tests := []struct {
		name    string
		verdict bool
	}{
		{"model error on every application rank", true},
		{"success", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := emulate.Config{Topology: top, StallTimeout: 20 * time.Second}
			_, errs := perRank(t, top.Ranks(), func(c mpi.Comm) (struct{}, error) {
				return struct{}{}, RunEmulated(c, cfg, func(s *emulate.Store) error {
					if !tt.verdict {
						return nil
					}
					return &ModelError{Err: verdict, Reporter: s.Rank() == 0}
				})
			})
			for rank, err := range errs {
				role := top.RoleOf(rank)
				var me *ModelError
				switch {
				case !tt.verdict || role.App < 0:
					if err != nil {
						t.Errorf("rank %d (application %d): %v, want nil", rank, role.App, err)
					}
				case !errors.As(err, &me) || !errors.Is(err, verdict):
					t.Errorf("application rank %d: %v, want the *ModelError", role.App, err)
				case me.Reporter != (role.App == 0):
					t.Errorf("application rank %d: Reporter %v", role.App, me.Reporter)
				}
			}
		})
	}
}
