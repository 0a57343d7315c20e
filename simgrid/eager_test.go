package simgrid

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
)

// TestEagerBounded: --eager is a message size, from 0 to what one MPI call
// carries, as every other size flag; beyond that it is refused, not
// written into smpi.cfg.
func TestEagerBounded(t *testing.T) {
	for _, tc := range []struct {
		eager int
		want  string // "" accepted
	}{
		{0, ""},
		{65536, ""},
		{opts.MaxSize, ""},
		{opts.MaxSize + 1, "want a size of at most 2147483647 bytes (2G less 1), the most one MPI call carries"},
		{1<<63 - 1, "want a size of at most 2147483647 bytes (2G less 1)"},
		{-1, "want a size >= 0"},
	} {
		err := Export{Hosts: 4, Eager: opts.Bytes(tc.eager)}.Validate()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--eager %d: %v, want %q", tc.eager, err, tc.want)
		}
	}
}
