package job

import (
	"strings"
	"testing"
)

// TestCheckProcesses: ranks that are processes share the host's memory
// but each has its own address-space limit, so a per-process limit bounds
// one rank's need, not the host's total.
func TestCheckProcesses(t *testing.T) {
	const mib = 1 << 20
	defer func(s, o func() (int64, string, bool)) { SharedMemory, OwnMemory = s, o }(SharedMemory, OwnMemory)
	need := MemNeed{PerRank: 600 * mib, Flag: "--sizes 300M", What: "the exchange"}
	tests := []struct {
		name        string
		shared, own int64 // MiB; 0: no such bound
		here        int
		want        string // "" when it runs
	}{
		{"fits both", 4096, 1024, 4, ""},
		{"per-process limit above one rank, below the host total", 8192, 1000, 4, ""},
		{"per-process limit below one rank", 8192, 500, 4, "needs 600.0 MiB in each rank's process; available: 500.0 MiB (the address-space limit (own))"},
		{"host total beyond what the ranks share", 2000, 0, 4, "needs 600.0 MiB per rank, 2.3 GiB for the 4 ranks on host h; available: 2.0 GiB (shared)"},
		{"no bound readable", 0, 0, 4, ""},
	}
	bound := func(mb int64, src string) func() (int64, string, bool) {
		return func() (int64, string, bool) { return mb * mib, src, mb > 0 }
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SharedMemory = bound(tt.shared, "shared")
			OwnMemory = bound(tt.own, "the address-space limit (own)")
			err := checkProcesses(need, tt.here, "h")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("accepted; want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("message %q; want %q", err, tt.want)
			}
			if err != nil {
				t.Logf("%v", err)
			}
		})
	}
}
