package patterns

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestKKTargetsArePermutations checks Definition 2 of paper 000 on drawn
// instances: for every step j the targets of the accessing ranks are
// distinct (f_j is a partial permutation), exactly m ranks access, no rank
// targets itself unless allowed, and with Distinct each rank's k targets
// differ; with Block each rank sends all k to one module, and the
// draws of a rank's module differ between repetitions.
func TestKKTargetsArePermutations(t *testing.T) {
	tests := []struct {
		p, k, m               int
		distinct, self, block bool
		seed                  int64
	}{
		{2, 1, 2, false, false, false, 1},
		{2, 3, 1, false, false, false, 2},
		{4, 8, 4, false, false, false, 3},
		{4, 8, 1, false, false, false, 4},
		{4, 3, 4, true, false, false, 5},
		{4, 4, 2, true, true, false, 6},
		{5, 2, 3, false, true, false, 7},
		{7, 6, 7, true, false, false, 8},
		{64, 16, 48, false, false, false, 9},
		{1024, 4, 1024, false, false, false, 10},
		{1024, 8, 256, true, false, false, 11},
		{4, 4, 4, false, false, true, 12},
		{5, 3, 2, false, true, true, 13},
		{64, 8, 64, false, false, true, 14},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("p%d_k%d_m%d_distinct%v_self%v_block%v", tt.p, tt.k, tt.m, tt.distinct, tt.self, tt.block), func(t *testing.T) {
			rng := newRand(tt.seed)
			var prev []int
			moved := false // some rank's module changed between repetitions (block)
			for rep := 0; rep < 5; rep++ {
				pl := newAccessPlan(tt.p, tt.k, 1)
				drawKK(rng, pl, 0, tt.m, tt.distinct, tt.self, tt.block)
				if got := pl.accessingRanks(0); got != tt.m {
					t.Fatalf("%d accessing ranks, want %d", got, tt.m)
				}
				for j := 0; j < tt.k; j++ {
					seen := map[int]bool{}
					for i := 0; i < tt.p; i++ {
						v := pl.row(0, i)[j]
						if v < 0 {
							continue
						}
						if v >= tt.p {
							t.Fatalf("target %d out of range", v)
						}
						if seen[v] {
							t.Fatalf("step %d: target %d hit twice: f_%d is not a permutation", j, v, j)
						}
						seen[v] = true
						if v == i && !tt.self {
							t.Fatalf("rank %d targets itself", i)
						}
					}
				}
				for i := 0; i < tt.p; i++ {
					row := pl.row(0, i)
					if (row[0] < 0) != slices.Contains(row, -1) {
						t.Fatalf("rank %d accesses in some steps only: %v", i, row)
					}
					if tt.block && row[0] >= 0 && slices.ContainsFunc(row, func(v int) bool { return v != row[0] }) {
						t.Fatalf("block: rank %d targets %v, want one module for all %d packets", i, row, tt.k)
					}
					if tt.block && prev != nil && row[0] >= 0 && prev[i*tt.k] >= 0 && prev[i*tt.k] != row[0] {
						moved = true
					}
					if tt.distinct && row[0] >= 0 {
						s := slices.Clone(row)
						slices.Sort(s)
						if len(slices.Compact(s)) != tt.k {
							t.Fatalf("rank %d targets %v are not distinct", i, row)
						}
					}
				}
				if pl.maxShare() > 1/float64(tt.p)+1e-12 {
					t.Fatalf("h = %v, a k-k-access has h = 1/p", pl.maxShare())
				}
				if tt.p >= 4 && !tt.block && slices.Equal(prev, pl.targets[0]) { // block at p = 4 has 9 draws
					t.Fatalf("repetition %d drew the same permutations as the one before", rep)
				}
				prev = slices.Clone(pl.targets[0])
			}
			if tt.block && tt.m > 1 && !moved {
				t.Error("block: every rank kept its module over five repetitions; each access draws its permutation")
			}
		})
	}
}

// TestDerangement: uniform shuffles without fixed points, every value once.
func TestDerangement(t *testing.T) {
	rng := newRand(42)
	for _, p := range []int{2, 3, 5, 1024} {
		perm := make([]int, p)
		for rep := 0; rep < 20; rep++ {
			derangement(rng, perm, false)
			s := slices.Clone(perm)
			slices.Sort(s)
			for i, v := range s {
				if v != i {
					t.Fatalf("p=%d: %v is not a permutation", p, perm)
				}
			}
			for i, v := range perm {
				if v == i {
					t.Fatalf("p=%d: fixed point %d in %v", p, i, perm)
				}
			}
		}
	}
}

// TestKKAccessRun runs k-k-accesses on goroutine ranks with validation and
// checks the traffic: each accessing rank sends k requests and gets k
// answers, every request is answered once.
func TestKKAccessRun(t *testing.T) {
	tests := []struct {
		name string
		p    int
		kk   KKAccess
	}{
		{"read_r1", 4, KKAccess{K: 2, L: 64, R: 1, Op: AccessRead}},
		{"write_r1", 4, KKAccess{K: 3, L: 100, R: 1, Op: AccessWrite}},
		{"read_r05", 4, KKAccess{K: 4, L: 16, R: 0.5, Op: AccessRead}},
		{"write_distinct", 5, KKAccess{K: 4, L: 8, R: 0.4, Op: AccessWrite, Distinct: true}},
		{"write_l0", 2, KKAccess{K: 1, L: 0, R: 1, Op: AccessWrite}},
		{"read_self", 3, KKAccess{K: 5, L: 32, R: 1, Op: AccessRead, Self: true}},
		{"read_a4", 4, KKAccess{K: 2, L: 64, R: 1, Op: AccessRead, A: 4}},
		{"write_block_a2", 4, KKAccess{K: 4, L: 48, R: 1, Op: AccessWrite, Block: true, A: 2}},
		{"read_block_r05", 5, KKAccess{K: 3, L: 16, R: 0.6, Op: AccessRead, Block: true}},
		{"write_r05_a3", 4, KKAccess{K: 1, L: 32, R: 0.5, Op: AccessWrite, A: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kk := tt.kk
			kk.Seed, kk.Validate, kk.Reps = 7, true, quickReps
			rs := runRanks(t, tt.p, func(c mpi.Comm) (Measurement, error) { return kk.Run(c) })
			checkMeasured(t, rs, quickReps.MinReps)
			m := AccessingRanks(kk.R, tt.p)
			req, ans := float64(accessHeaderBytes), float64(kk.L)
			if kk.Op == AccessWrite {
				req, ans = float64(accessHeaderBytes+kk.L), accessHeaderBytes
			}
			ctr := rs[0].Counters
			// A repetition runs a accesses back to back (A: 0 is one).
			a := max(kk.A, 1)
			wantMsgs := float64(2 * m * kk.K * a)
			if !near(ctr[CounterMsgsTotal], wantMsgs) || !near(ctr[CounterBytesTotal], float64(m*kk.K*a)*(req+ans)) {
				t.Errorf("totals per repetition: %v messages, %v bytes; want %v, %v", ctr[CounterMsgsTotal], ctr[CounterBytesTotal], wantMsgs, float64(m*kk.K*a)*(req+ans))
			}
			if got, _ := kk.Params(tt.p)["block"].(bool); got != kk.Block {
				t.Errorf("params %v: block recorded %v, want %v", kk.Params(tt.p), got, kk.Block)
			}
			if _, ok := kk.Params(tt.p)["a"]; ok != (kk.A > 0) {
				t.Errorf("params %v: a recorded %v, want %v", kk.Params(tt.p), ok, kk.A > 0)
			}
			if ctr[CounterAccessingRanks] != float64(m) || !near(ctr[CounterRRealised], float64(m)/float64(tt.p)) {
				t.Errorf("accessing ranks %v (r %v), want %d", ctr[CounterAccessingRanks], ctr[CounterRRealised], m)
			}
			var sent, recv float64
			for r, res := range rs {
				sent += res.Mine.MsgsSent
				recv += res.Mine.MsgsRecv
				if kk.R == 1 {
					// Everyone accesses: k requests out, k answers in, and
					// (f_j permutations) k requests in, k answers out.
					if !near(res.Mine.MsgsSent, float64(2*kk.K*a)) || !near(res.Mine.MsgsRecv, float64(2*kk.K*a)) ||
						!near(res.Mine.BytesSent, float64(kk.K*a)*(req+ans)) {
						t.Errorf("rank %d: %+v per repetition, want %d messages each way", r, res.Mine, 2*kk.K*a)
					}
				}
			}
			if !near(sent, wantMsgs) || !near(recv, wantMsgs) {
				t.Errorf("messages sent %v, received %v; want %v each", sent, recv, wantMsgs)
			}
		})
	}
}

func TestKKAccessCheck(t *testing.T) {
	tests := []struct {
		name string
		p    int
		kk   KKAccess
		is   error
	}{
		{"k0", 4, KKAccess{K: 0, L: 1, R: 1}, nil},
		{"l negative", 4, KKAccess{K: 1, L: -1, R: 1}, nil},
		{"r0", 4, KKAccess{K: 1, L: 1, R: 0}, nil},
		{"r above 1", 4, KKAccess{K: 1, L: 1, R: 1.5}, nil},
		{"one rank", 1, KKAccess{K: 1, L: 1, R: 1}, nil},
		{"a negative", 4, KKAccess{K: 1, L: 1, R: 1, A: -1}, nil},
		{"a too large", 4, KKAccess{K: 1, L: 1, R: 1, A: maxAccessIndex + 1}, nil},
		{"distinct too many", 4, KKAccess{K: 4, L: 1, R: 1, Distinct: true}, ErrTooManyTargets},
		{"distinct self too many", 4, KKAccess{K: 5, L: 1, R: 1, Distinct: true, Self: true}, ErrTooManyTargets},
		{"distinct and block", 4, KKAccess{K: 2, L: 1, R: 1, Distinct: true, Block: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.kk.Check(tt.p)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v is not %v", err, tt.is)
			}
		})
	}
	if err := (KKAccess{K: 3, L: 1, R: 1, Distinct: true}).Check(4); err != nil {
		t.Errorf("k = p-1 distinct: %v", err)
	}
}

// TestAccessValidationDetects: the checks see a wrong byte.
func TestAccessValidationDetects(t *testing.T) {
	e := &accessEngine{l: 4, slots: 2, op: AccessRead, replies: [][]byte{make([]byte, 4)}}
	for i := range e.replies[0] {
		e.replies[0][i] = memByte(1, 4+i)
	}
	if err := e.checkReads([]int{1}, 1, e.replies); err != nil {
		t.Fatalf("correct answer: %v", err)
	}
	e.replies[0][2] ^= 1
	if err := e.checkReads([]int{1}, 1, e.replies); !errors.Is(err, ErrValidation) {
		t.Errorf("corrupt answer: %v", err)
	}
	w := &accessEngine{l: 3, slots: 2, op: AccessWrite, rep: 5, mem: make([]byte, 6), writers: make([]writer, 2)}
	w.writers[1] = writer{src: 3, seq: packSeq(5, 0, 2), rep: 5}
	for i := 0; i < 3; i++ {
		w.mem[3+i] = writeByte(3, 5, 2, i)
	}
	if err := w.checkWrites(); err != nil {
		t.Fatalf("correct write: %v", err)
	}
	w.mem[4] ^= 0x80
	if err := w.checkWrites(); !errors.Is(err, ErrValidation) {
		t.Errorf("corrupt write: %v", err)
	}
}
