package patterns

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
)

// TestCheckTimeText: the time floor's message counts messages and bytes
// in words, one message singular, whole counts in digits with the
// bytes' binary size, huge counts in three digits.
func TestCheckTimeText(t *testing.T) {
	tests := []struct {
		name string
		d    Demand
		want string
	}{
		{"allgather of 1 GiB", Demand{RepMessages: 1, RepBytes: 1 << 30, RepParam: "--iters"},
			"(1 message and 1073741824 bytes (1.0 GiB) per rank at >= 20 ns a message"},
		{"pingpong of 8 bytes", Demand{RepMessages: 2000, RepBytes: 16000, RepParam: "--iters"},
			"(2000 messages and 16000 bytes (15.6 KiB) per rank"},
		{"no bytes", Demand{RepMessages: 9223372036854775807, RepParam: "--iters"},
			"(9.22e+18 messages and 0 bytes per rank"},
		{"one byte", Demand{RepMessages: 5e8, RepBytes: 1, RepParam: "--iters"},
			"(500000000 messages and 1 byte per rank"},
		{"warm-up", Demand{WarmupMessages: 4e9, WarmupParam: "--warmup"},
			"the warm-up needs at least 80 s (4000000000 messages per rank)"},
		{"nb_probes", NonBlocking{Op: mpi.CollBcast, Bytes: 8, Probes: 1 << 20}.Demand(3),
			"at least 0.021 s (1 message and 8 bytes per rank at >= 20 ns a message and <= 100 GB/s, and 1048576 probes of >= 20 ns, a dummy-kernel step and an MPI_Test each), more than the time budget of 1e-06 s per point; lower --probes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.CheckTime(1e-6)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant it to contain %s", err, tt.want)
			}
		})
	}
}

// TestNonBlockingProbesBounded: --probes is a count, bounded as every
// count flag is, so a huge one is refused before anything runs.
func TestNonBlockingProbesBounded(t *testing.T) {
	for _, tc := range []struct {
		probes int
		want   string // "" accepted
	}{
		{0, ""},
		{MaxCount, ""},
		{-1, "must not be negative"},
		{MaxCount + 1, "Probes = 1048577: must be at most 1048576 MPI_Test calls in each call's compute"},
		{9223372036854775807, "Probes = 9223372036854775807: must be at most 1048576"},
	} {
		s := new(NonBlockingSweep)
		opts.FillDefaults(s)
		s.Probes = tc.probes
		err := s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("probes %d: %v, want %q", tc.probes, err, tc.want)
		}
	}
}
