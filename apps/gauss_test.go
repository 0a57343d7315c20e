package apps

import (
	"fmt"
	"strings"
	"testing"
)

func TestGaussVerifies(t *testing.T) {
	for _, tc := range []struct {
		p, n   int
		matrix string
		sync   bool
	}{
		{1, 8, "dd", false}, {2, 8, "dd", false}, {3, 9, "dd", true}, {4, 16, "dd", false}, {4, 64, "dd", true},
		{8, 64, "dd", false}, {9, 27, "dd", false}, {16, 64, "dd", true}, {4, 16, "random", false},
	} {
		t.Run(fmt.Sprintf("p=%d/n=%d/%s/sync=%v", tc.p, tc.n, tc.matrix, tc.sync), func(t *testing.T) {
			g := &Gauss{N: tc.n, Matrix: tc.matrix, Sync: tc.sync}
			if err := g.Input(7); err != nil {
				t.Fatal(err)
			}
			outs, errs := runMP(t, tc.p, g, 7)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			// The synchronous variant has a barrier before each of the
			// n-1 pivot-row broadcasts and the p x_k broadcasts.
			want := 0
			if tc.sync {
				want = tc.n - 1 + tc.p
			}
			if got := len(outs[0].Phases.inst["barrier"]); got != want {
				t.Errorf("%d barriers timed, want %d", got, want)
			}
		})
	}
}

func TestGaussRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		g     *Gauss
		p     int
		check string // error from Check
		input string // error from Input
	}{
		{"n not divisible", &Gauss{N: 10}, 4, "not divisible", ""},
		{"n too small", &Gauss{N: 1}, 1, "--n 1", ""},
		{"unknown matrix", &Gauss{N: 8, Matrix: "magic"}, 2, "--matrix magic", ""},
		{"singular", &Gauss{N: 8, Matrix: "singular"}, 2, "", "singular"},
		{"hilbert near-singular", &Gauss{N: 16, Matrix: "hilbert"}, 2, "", "near-singular"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Check(tc.p)
			if tc.check != "" {
				if err == nil || !strings.Contains(err.Error(), tc.check) {
					t.Errorf("Check = %v, want %q", err, tc.check)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check = %v", err)
			}
			if err := tc.g.Input(1); err == nil || !strings.Contains(err.Error(), tc.input) {
				t.Errorf("Input = %v, want %q", err, tc.input)
			}
		})
	}
}

// TestGaussPivotDuringRun: a matrix the oracle accepts but elimination
// without pivoting cannot factor fails on every rank with the same error.
func TestGaussPivotDuringRun(t *testing.T) {
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			g := &Gauss{N: 16, Matrix: "zeropivot"}
			if err := g.Input(3); err != nil {
				t.Fatalf("Input = %v; the matrix is well conditioned", err)
			}
			_, errs := runMP(t, p, g, 3)
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), "step 0") || err.Error() != errs[0].Error() {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}
