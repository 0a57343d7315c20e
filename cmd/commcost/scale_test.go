package main

import (
	"runtime"
	"testing"
)

// allocPerRank is the heap bytes one CLI run allocates per local rank.
func allocPerRank(t *testing.T, np int, args ...string) float64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(np)
}

// TestLocalBackendScalesLinearly: the local backend's memory per rank must
// not grow with the rank count. `info` keeps every rank's host name and
// description on rank 0 only: gathered on every rank (two Allgathers of
// 256 bytes per rank) they take P^2 bytes in all, 8.5 GB at 4096 ranks,
// and 8x the allocation per rank at 2048 ranks against 256. Allocation
// per rank at 2048 ranks must stay within 2x of that at 256 ranks.
func TestLocalBackendScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2048 goroutine ranks")
	}
	for _, tc := range []struct {
		name string
		args func(np string) []string
	}{
		{"info", func(np string) []string { return []string{"info", "--backend", "local", "--np", np} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small := allocPerRank(t, 256, tc.args("256")...)
			large := allocPerRank(t, 2048, tc.args("2048")...)
			t.Logf("%s: %.0f bytes per rank at 256 ranks, %.0f at 2048", tc.name, small, large)
			if large > 2*small {
				t.Errorf("%s allocates %.0f bytes per rank at 2048 ranks against %.0f at 256: per-rank state grows with P", tc.name, large, small)
			}
		})
	}
}
