package mpitest

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

func TestCasesWellFormed(t *testing.T) {
	name := regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	seen := map[string]bool{}
	for _, tc := range Cases() {
		if !name.MatchString(tc.Name) || seen[tc.Name] {
			t.Errorf("case name %q is not a unique Go identifier-like name", tc.Name)
		}
		seen[tc.Name] = true
		if tc.MinRanks < 1 || tc.Run == nil {
			t.Errorf("%s: MinRanks %d, Run nil: %v", tc.Name, tc.MinRanks, tc.Run == nil)
		}
	}
	for n := range sizeIndependent {
		if !seen[n] {
			t.Errorf("sizeIndependent names unknown case %q", n)
		}
	}
}

// TestOutcomeIsAgreed: a failure or panic on one rank is counted on every
// rank, and each rank keeps its own error.
func TestOutcomeIsAgreed(t *testing.T) {
	const n = 3
	for _, tc := range []struct {
		name string
		run  func(c mpi.Comm) error
		want string
	}{
		{"Error", func(c mpi.Comm) error {
			if c.Rank() == 1 {
				return errors.New("wrong value")
			}
			return nil
		}, "wrong value"},
		{"Panic", func(c mpi.Comm) error {
			if c.Rank() == 1 {
				panic("bad index")
			}
			return nil
		}, "panic: bad index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := local.Run(n, func(c mpi.Comm) error {
				failed, err, aerr := outcome(c, Case{Name: tc.name, MinRanks: 1, Run: tc.run})
				if aerr != nil {
					return aerr
				}
				if failed != 1 {
					return errors.New("failure count is not 1")
				}
				if (c.Rank() == 1) != (err != nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
					return errors.New("rank error: " + errString(err))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
