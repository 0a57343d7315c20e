package sysmem

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitHeap: the collector gets the memory the process may take as
// its soft limit, unless GOMEMLIMIT (or another caller) set one, and none
// when the available memory is unknown or nothing; the previous limit is
// put back afterwards.
func TestLimitHeap(t *testing.T) {
	const gib = 1 << 30
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	tests := []struct {
		name   string
		preset int64 // limit before (math.MaxInt64: none, as without GOMEMLIMIT)
		avail  int64 // available memory; < 0: unknown
		want   int64
	}{
		{"available memory", math.MaxInt64, 20 * gib, 20 * gib},
		{"GOMEMLIMIT stands", 5 * gib, 20 * gib, 5 * gib},
		{"GOMEMLIMIT above the available memory stands", 40 * gib, 20 * gib, 40 * gib},
		{"unknown: no limit", math.MaxInt64, -1, math.MaxInt64},
		{"nothing available: no limit", math.MaxInt64, 0, math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(tc.preset)
			got, restore := LimitHeap(max(tc.avail, 0), tc.avail >= 0)
			if got != tc.want {
				t.Errorf("LimitHeap() = %d, want %d", got, tc.want)
			}
			if rt := debug.SetMemoryLimit(-1); rt != tc.want {
				t.Errorf("the runtime's limit is %d, want %d", rt, tc.want)
			}
			restore()
			if rt := debug.SetMemoryLimit(-1); rt != tc.preset {
				t.Errorf("after the run the runtime's limit is %d, want the previous %d", rt, tc.preset)
			}
		})
	}
}
