package apps

import (
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestBitonicVerify: the distributed check passes the sorted input in
// wire order and refuses a block out of order, blocks out of order with
// each other, and a sorted output of other keys, on every rank alike.
func TestBitonicVerify(t *testing.T) {
	const p, m, seed = 4, 64, 7
	cfg := BitonicConfig{Keys: m, Wires: []int{2, 0, 3, 1}} // wire w on rank Wires[w]
	var all []uint32
	for w := 0; w < p; w++ {
		all = append(all, bitonicKeys(seed, w, m)...)
	}
	slices.Sort(all)
	block := func(w int) []uint32 { return slices.Clone(all[m*w : m*(w+1)]) }
	tests := []struct {
		name string
		edit func(blocks [][]uint32) // blocks by wire
		want string
	}{
		{"sorted input passes", func([][]uint32) {}, ""},
		{"a block out of order", func(b [][]uint32) { b[1][3], b[1][4] = b[1][4], b[1][3] }, "bitonic: rank 0 keys 3 and 4"},
		{"blocks out of order", func(b [][]uint32) { b[1], b[2] = b[2], b[1] }, "rank 3 (block 2) starts with"},
		{"other keys, sorted", func(b [][]uint32) { b[3][m-1]++ }, "keys lost, added or changed"},
		{"a key of one wire moved into another", func(b [][]uint32) {
			b[0][m-1] = b[1][0] // sorted, in order, but one key lost and one doubled
		}, "keys lost, added or changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks := make([][]uint32, p)
			for w := range blocks {
				blocks[w] = block(w)
			}
			tc.edit(blocks)
			errs := make([]error, p)
			if err := local.Run(p, func(c mpi.Comm) error {
				errs[c.Rank()] = bitonicVerify(c, cfg, seed, blocks[cfg.wireOf(c.Rank())], nil)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// Every rank fails alike; the rank that found it says what.
			named := false
			for r, err := range errs {
				if (err == nil) != (tc.want == "") {
					t.Errorf("rank %d: %v, want %q", r, err, tc.want)
				}
				named = named || err != nil && strings.Contains(err.Error(), tc.want)
			}
			if tc.want != "" && !named {
				t.Errorf("no rank says %q: %v", tc.want, errs)
			}
		})
	}
}
