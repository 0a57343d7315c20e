package apps

import (
	"fmt"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// runMP runs app once on p local ranks and returns every rank's outcome
// and error.
func runMP(t *testing.T, p int, app App, seed int64) ([]Outcome, []error) {
	t.Helper()
	outs := make([]Outcome, p)
	errs := make([]error, p)
	_ = local.Run(p, func(c mpi.Comm) error {
		outs[c.Rank()], errs[c.Rank()] = app.Run(Env{Comm: c, Seed: seed})
		return nil
	})
	if errs[0] == nil {
		if err := registeredPhases(app, outs[0]); err != nil {
			t.Error(err)
		}
	}
	return outs, errs
}

func TestMatmulVerifies(t *testing.T) {
	for _, tc := range []struct {
		p   int
		app App
	}{
		{1, Cannon{N: 12}},
		{4, Cannon{N: 12}},
		{9, Cannon{N: 18}},
		{16, Cannon{N: 32}},
		{1, Checkerboard{N: 12}},
		{4, Checkerboard{N: 12}},
		{6, Checkerboard{N: 12, Grid: Grid{2, 3}}},
		{6, Checkerboard{N: 12, Grid: Grid{3, 2}}},
		{9, Checkerboard{N: 18}},
		{16, Checkerboard{N: 32}},
		{8, Checkerboard{N: 16, Grid: Grid{1, 8}}},
		{1, Cannon{N: 12, Sync: true}},
		{9, Cannon{N: 18, Sync: true}},
		{6, Checkerboard{N: 12, Grid: Grid{2, 3}, Sync: true}},
	} {
		t.Run(fmt.Sprintf("%s/p=%d/%v", tc.app.Name(), tc.p, tc.app.Params()), func(t *testing.T) {
			outs, errs := runMP(t, tc.p, tc.app, 42)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if len(outs[0].Workload) == 0 {
				t.Error("no workload")
			}
			// The synchronous variant times its barriers apart, as a
			// sync phase; the asynchronous one has none.
			sync := tc.app.Params()["variant"] == "sync"
			if got := outs[0].Phases.Kind("barrier"); (got == KindSync) != sync {
				t.Errorf("variant %v: phase barrier has kind %q", tc.app.Params()["variant"], got)
			}
		})
	}
}

func TestMatmulCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    int
		app  App
		want string
	}{
		{"cannon not square", 6, Cannon{N: 12}, "square"},
		{"cannon n not divisible", 4, Cannon{N: 13}, "not divisible"},
		{"cannon n zero", 4, Cannon{N: 0}, "--n 0"},
		{"checkerboard grid wrong size", 4, Checkerboard{N: 12, Grid: Grid{2, 3}}, "6 places"},
		{"checkerboard n not divisible", 6, Checkerboard{N: 10, Grid: Grid{2, 3}}, "not divisible"},
		{"checkerboard n negative", 4, Checkerboard{N: -4}, "--n -4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.app.Check(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check(%d) = %v, want an error containing %q", tc.p, err, tc.want)
			}
		})
	}
}
