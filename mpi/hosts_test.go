package mpi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// namedComm gives each rank the processor name its test case chooses.
type namedComm struct {
	mpi.Comm
	name string
}

func (n namedComm) Info() mpi.Info { return mpi.Info{Processor: n.name} }

// TestHostLayout: hosts in order of first appearance, ranks counted per
// host, and the same answer on every rank.
func TestHostLayout(t *testing.T) {
	tests := []struct {
		name      string
		names     []string
		wantHosts []string
		wantRanks []int
	}{
		{"one host", []string{"a", "a", "a"}, []string{"a"}, []int{3}},
		{"block placement", []string{"n1", "n1", "n2", "n2"}, []string{"n1", "n2"}, []int{2, 2}},
		{"round robin", []string{"n2", "n1", "n2", "n1", "n3"}, []string{"n2", "n1", "n3"}, []int{2, 2, 1}},
		{"tab in a name kept", []string{"odd\tname", "b"}, []string{"odd\tname", "b"}, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := local.Run(len(tc.names), func(c mpi.Comm) error {
				hosts, ranks, err := mpi.HostLayout(namedComm{c, tc.names[c.Rank()]})
				if err != nil {
					return err
				}
				if !slices.Equal(hosts, tc.wantHosts) || !slices.Equal(ranks, tc.wantRanks) {
					return fmt.Errorf("rank %d: HostLayout = %q %v; want %q %v", c.Rank(), hosts, ranks, tc.wantHosts, tc.wantRanks)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestProcessorNameFallback: a backend that names no processor gets the
// host name, never an empty string.
func TestProcessorNameFallback(t *testing.T) {
	err := local.Run(1, func(c mpi.Comm) error {
		if got := mpi.ProcessorName(namedComm{c, ""}); got == "" {
			return fmt.Errorf("ProcessorName of an unnamed processor is empty")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
