package patterns

import (
	"errors"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestPingPongPatterns runs roundtrip, pairwise and rowcontention on
// goroutine ranks with validation and checks who talks: the ranks of the
// pattern send and receive Iters messages per repetition, the others none.
func TestPingPongPatterns(t *testing.T) {
	const iters = 5
	tests := []struct {
		name   string
		p      int
		active []bool
		run    func(c mpi.Comm) (Measurement, error)
	}{
		{"roundtrip_last", 4, []bool{true, false, false, true},
			func(c mpi.Comm) (Measurement, error) {
				return RoundTrip{Bytes: 100, Iters: iters, Warmup: 2, Validate: true, Reps: quickReps}.Run(c)
			}},
		{"roundtrip_peer1", 3, []bool{true, true, false},
			func(c mpi.Comm) (Measurement, error) {
				return RoundTrip{Bytes: 0, Peer: 1, Iters: iters, Validate: true, Reps: quickReps}.Run(c)
			}},
		{"pairwise_all", 4, []bool{true, true, true, true},
			func(c mpi.Comm) (Measurement, error) {
				return Pairwise{Bytes: 33, Iters: iters, Validate: true, Reps: quickReps}.Run(c)
			}},
		{"pairwise_1of3", 6, []bool{true, true, false, false, false, false},
			func(c mpi.Comm) (Measurement, error) {
				return Pairwise{Bytes: 8, Pairs: 1, Iters: iters, Validate: true, Reps: quickReps}.Run(c)
			}},
		{"rowcontention_2of3", 6, []bool{true, true, true, true, false, false},
			func(c mpi.Comm) (Measurement, error) {
				return RowContention{Bytes: 1000, Pairs: 2, Iters: iters, Validate: true, Reps: quickReps}.Run(c)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := runRanks(t, tt.p, tt.run)
			checkMeasured(t, rs, quickReps.MinReps)
			for r, res := range rs {
				want := 0.0
				if tt.active[r] {
					want = iters
				}
				if res.Mine.MsgsSent != want || res.Mine.MsgsRecv != want {
					t.Errorf("rank %d: %+v per repetition, want %v messages each way", r, res.Mine, want)
				}
			}
		})
	}
}

// TestPairPartners checks the rank pairs of the two contention patterns
// of paper 001: i <-> n+i (section 3.3) and i <-> 2n-1-i (section 3.4,
// Figure 5, numbered from 0), one initiator per pair, ranks from 2n idle.
func TestPairPartners(t *testing.T) {
	tests := []struct {
		name string
		f    func(n int) pairFunc
		want func(i, n int) int // partner of initiator i < n
	}{
		{"pairwise", pairwisePairs, func(i, n int) int { return n + i }},
		{"rowcontention", rowPairs, func(i, n int) int { return 2*n - 1 - i }},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 2, 3, 8} {
			pair := tt.f(n)
			for r := 0; r < 2*n+2; r++ {
				q, init, ok := pair(r)
				if r >= 2*n {
					if ok {
						t.Errorf("%s n=%d: rank %d takes part", tt.name, n, r)
					}
					continue
				}
				back, binit, bok := pair(q)
				if !ok || !bok || back != r || init == binit {
					t.Errorf("%s n=%d: rank %d -> %d (%v), back %d (%v)", tt.name, n, r, q, init, back, binit)
				}
				if init != (r < n) || (init && q != tt.want(r, n)) {
					t.Errorf("%s n=%d: rank %d paired with %d (initiator %v)", tt.name, n, r, q, init)
				}
			}
		}
	}
}

func TestAllToAllRun(t *testing.T) {
	tests := []struct {
		name     string
		p, ranks int
		bytes    int
	}{
		{"all4", 4, 0, 64},
		{"3of5", 5, 3, 17},
		{"zero_bytes", 3, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := runRanks(t, tt.p, func(c mpi.Comm) (Measurement, error) {
				return AllToAll{Bytes: tt.bytes, Ranks: tt.ranks, Iters: 2, Validate: true, Reps: quickReps}.Run(c)
			})
			checkMeasured(t, rs, quickReps.MinReps)
			n := tt.ranks
			if n == 0 {
				n = tt.p
			}
			for r, res := range rs {
				want := Counts{}
				if r < n {
					m := float64(2 * (n - 1)) // two exchanges per repetition
					want = Counts{m, m, m * float64(tt.bytes), m * float64(tt.bytes)}
				}
				if res.Mine != want {
					t.Errorf("rank %d: %+v, want %+v", r, res.Mine, want)
				}
			}
		})
	}
}

func TestHyperbolicChecks(t *testing.T) {
	tests := []struct {
		name string
		err  error
		is   error
	}{
		{"pairwise odd", Pairwise{}.Check(5), ErrOddRanks},
		{"rowcontention odd", RowContention{}.Check(3), ErrOddRanks},
		{"pairwise too many pairs", Pairwise{Pairs: 3}.Check(4), ErrTooManyTargets},
		{"rowcontention too many pairs", RowContention{Pairs: 4}.Check(6), ErrTooManyTargets},
		{"alltoall too many ranks", AllToAll{Ranks: 5}.Check(4), ErrTooManyTargets},
		{"roundtrip peer out of range", RoundTrip{Peer: 4}.Check(4), ErrTooManyTargets},
		{"roundtrip one rank", RoundTrip{}.Check(1), nil},
		{"alltoall one rank", AllToAll{}.Check(1), nil},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if tt.is != nil && !errors.Is(tt.err, tt.is) {
			t.Errorf("%s: %v is not %v", tt.name, tt.err, tt.is)
		}
	}
}
