package patterns

import (
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestPRTTRun: the client sends n messages and gets one answer per
// exchange, the server the reverse, other ranks nothing; with Server the
// sample is the server's receive time, which includes the (n-1) delays.
func TestPRTTRun(t *testing.T) {
	const iters = 4
	tests := []struct {
		name string
		pr   PRTT
	}{
		{"n1", PRTT{Bytes: 8, N: 1}},
		{"n4_d0", PRTT{Bytes: 100, N: 4}},
		{"n3_delay", PRTT{Bytes: 10, N: 3, DelaySec: 200e-6}},
		{"n3_delay_server", PRTT{Bytes: 10, N: 3, DelaySec: 200e-6, Server: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := tt.pr
			pr.Iters, pr.Validate, pr.Reps = iters, true, quickReps
			rs := runRanks(t, 3, func(c mpi.Comm) (Measurement, error) { return pr.Run(c) })
			checkMeasured(t, rs, quickReps.MinReps)
			n, b := float64(pr.N*iters), float64(pr.Bytes)
			want := []Counts{
				{MsgsSent: n, MsgsRecv: iters, BytesSent: n * b, BytesRecv: iters * b},
				{},
				{MsgsSent: iters, MsgsRecv: n, BytesSent: iters * b, BytesRecv: n * b},
			}
			for r, res := range rs {
				if res.Mine != want[r] {
					t.Errorf("rank %d: %+v, want %+v", r, res.Mine, want[r])
				}
			}
			if pr.DelaySec > 0 {
				if min := float64(pr.N-1) * pr.DelaySec; rs[0].Summary.Min < min {
					t.Errorf("sample %v shorter than the delays %v", rs[0].Summary.Min, min)
				}
			}
		})
	}
	for _, bad := range []PRTT{{N: 0}, {N: 1, Server: true}, {N: 2, DelaySec: -1}, {N: 1, Peer: 3}} {
		if err := bad.Check(3); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
