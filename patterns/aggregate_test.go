package patterns

import (
	"errors"
	"fmt"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestAggregateRun runs every operation both ways on goroutine ranks with
// validation, on a power of two and on other rank counts (the textbook
// algorithms switch there), and checks the textbook message counts against
// the algorithms of paper 003's cost table.
func TestAggregateRun(t *testing.T) {
	const m = 24
	for _, p := range []int{4, 5, 6} {
		for _, op := range AggKinds {
			for _, impl := range []AggImpl{ImplMPI, ImplTextbook} {
				a := AggregateOp{Op: op, Impl: impl, Bytes: m, Root: p - 1, Q: 2, Iters: 2, Validate: true, Reps: quickReps}
				t.Run(fmt.Sprintf("p%d_%v_%v", p, op, impl), func(t *testing.T) {
					rs := runRanks(t, p, func(c mpi.Comm) (Measurement, error) { return a.Run(c) })
					checkMeasured(t, rs, quickReps.MinReps)
					ctr := rs[0].Counters
					if ctr[CounterVolumeBytes] != float64(a.VolumeBytes(p)) || ctr[CounterTextbookRounds] != float64(a.Rounds(p)) || len(ctr) != 2 {
						t.Errorf("counters %v, want volume %d and rounds %d", ctr, a.VolumeBytes(p), a.Rounds(p))
					}
					var sent, recv float64
					for _, r := range rs {
						sent += r.Mine.MsgsSent
						recv += r.Mine.MsgsRecv
					}
					want := 0.0 // an MPI collective's own messages are not visible
					if impl == ImplTextbook {
						want = 2 * textbookMessages(op, p) // two operations per repetition
					}
					if !near(sent, want) || !near(recv, want) {
						t.Errorf("%v messages sent, %v received per repetition, want %v", sent, recv, want)
					}
				})
			}
		}
	}
}

// textbookMessages is the number of messages one textbook operation sends
// in total on p ranks.
func textbookMessages(op AggKind, p int) float64 {
	lg := 0
	for 1<<lg < p {
		lg++
	}
	switch op {
	case AggBcast, AggScatter:
		return float64(p - 1) // a tree: one message into every rank but the root
	case AggAllgather:
		if isPow2(p) {
			return float64(p * lg)
		}
		return float64(p * (p - 1))
	case AggAlltoall:
		return float64(p * (p - 1))
	case AggQShift:
		return float64(p)
	}
	return float64(4 * p)
}

func TestAggregateNEWSGrid(t *testing.T) {
	tests := []struct {
		p         int
		grid      [2]int
		neighbors int
	}{
		{4, [2]int{2, 2}, 4},
		{6, [2]int{2, 3}, 4},
		{7, [2]int{1, 7}, 2},
		{16, [2]int{4, 4}, 4},
		{12, [2]int{3, 4}, 4},
	}
	for _, tt := range tests {
		a := AggregateOp{Op: AggNEWS}
		if g := Dims2(tt.p); g != tt.grid {
			t.Errorf("Dims2(%d) = %v, want %v", tt.p, g, tt.grid)
		}
		if n := a.Neighbors(tt.p); n != tt.neighbors {
			t.Errorf("p=%d: %d neighbours, want %d", tt.p, n, tt.neighbors)
		}
	}
	// A 1 x 3 grid has a column of one: north and south are the rank itself.
	rs := runRanks(t, 3, func(c mpi.Comm) (Measurement, error) {
		return AggregateOp{Op: AggNEWS, Impl: ImplMPI, Bytes: 5, Grid: [2]int{1, 3}, Validate: true, Reps: quickReps}.Run(c)
	})
	checkMeasured(t, rs, quickReps.MinReps)
}

func TestAggregateCheck(t *testing.T) {
	tests := []struct {
		name string
		a    AggregateOp
	}{
		{"qshift q = p", AggregateOp{Op: AggQShift, Q: 4}},
		{"qshift q = 0", AggregateOp{Op: AggQShift, Q: 0}},
		{"bcast root = p", AggregateOp{Op: AggBcast, Root: 4}},
		{"scatter root negative", AggregateOp{Op: AggScatter, Root: -1}},
		{"news grid", AggregateOp{Op: AggNEWS, Grid: [2]int{3, 3}}},
	}
	for _, tt := range tests {
		if err := tt.a.Check(4); !errors.Is(err, ErrTooManyTargets) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	for _, s := range []string{"bcast", "allgather", "scatter", "alltoall", "qshift", "news"} {
		k, err := ParseAggKind(s)
		if err != nil || k.String() != s {
			t.Errorf("ParseAggKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseAggImpl("vendor"); err == nil {
		t.Error("ParseAggImpl accepted vendor")
	}
}

// TestAggregateMesh runs the mesh columns' algorithms with validation on
// rings and meshes of several shapes (2x2, 1x5 where the 2-D mesh is a
// ring, 2x3, 3x3, 2x4), every root and several shifts, and checks their
// message counts and rounds against the algorithms' closed forms.
func TestAggregateMesh(t *testing.T) {
	const m = 16
	for _, p := range []int{4, 5, 6, 8, 9} {
		for _, impl := range []AggImpl{ImplMesh1D, ImplMesh2D} {
			for _, op := range AggKinds {
				cases := []AggregateOp{{Op: op, Root: p - 1, Q: 1}}
				switch op {
				case AggBcast, AggScatter:
					cases = append(cases, AggregateOp{Op: op, Root: p / 2})
				case AggQShift:
					cases = []AggregateOp{{Op: op, Q: 1}, {Op: op, Q: 2}, {Op: op, Q: p / 2}, {Op: op, Q: p - 2}, {Op: op, Q: p - 1}}
				}
				for _, a := range cases {
					a.Impl, a.Bytes, a.Iters, a.Validate, a.Reps = impl, m, 2, true, quickReps
					t.Run(fmt.Sprintf("p%d_%v_%v_root%d_q%d", p, impl, op, a.Root, a.Q), func(t *testing.T) {
						rs := runRanks(t, p, func(c mpi.Comm) (Measurement, error) { return a.Run(c) })
						checkMeasured(t, rs, quickReps.MinReps)
						var sent, recv float64
						for _, r := range rs {
							sent += r.Mine.MsgsSent
							recv += r.Mine.MsgsRecv
						}
						want := 2 * meshMessages(a, p) // two operations per repetition
						if !near(sent, want) || !near(recv, want) {
							t.Errorf("%v messages sent, %v received per repetition, want %v", sent, recv, want)
						}
						if got, want := rs[0].Counters[CounterTextbookRounds], float64(meshRoundsWant(a, p)); got != want {
							t.Errorf("rounds counter %v, want %v", got, want)
						}
					})
				}
			}
		}
	}
}

// meshMessages is the number of messages one mesh operation sends in
// total on p ranks (rows x cols = Dims2(p) for ImplMesh2D, 1 x p for the
// ring).
func meshMessages(a AggregateOp, p int) float64 {
	rows, cols := 1, p
	if a.Impl == ImplMesh2D {
		rows, cols = Dims2(p)[0], Dims2(p)[1]
	}
	steps := func(k, n int) int { return min(k%n, n-k%n) }
	switch a.Op {
	case AggBcast:
		return float64(p - 1)
	case AggAllgather, AggAlltoall:
		return float64(p*(cols-1) + p*(rows-1))
	case AggScatter:
		// The pipeline down the root's column, then along every row: t
		// senders in step t.
		return float64(rows*(rows-1)/2 + rows*cols*(cols-1)/2)
	case AggQShift:
		qc, qr := a.Q%cols, a.Q/cols
		n := p*steps(qc, cols) + p*steps(qr, rows)
		if qc > 0 && rows > 1 {
			n += rows * qc // the columns that wrapped
		}
		return float64(n)
	}
	return float64(4 * p)
}

// meshRoundsWant is the rounds of the mesh algorithms: the steps along
// the rows plus those along the columns.
func meshRoundsWant(a AggregateOp, p int) int {
	rows, cols := p, 1
	if a.Impl == ImplMesh2D {
		rows, cols = Dims2(p)[0], Dims2(p)[1]
	}
	lg := func(n int) int {
		l := 0
		for 1<<l < n {
			l++
		}
		return l
	}
	switch a.Op {
	case AggBcast:
		return lg(rows) + lg(cols)
	case AggAllgather, AggScatter, AggAlltoall:
		return rows + cols - 2
	case AggQShift:
		if a.Impl == ImplMesh1D {
			return min(a.Q, p-a.Q)
		}
		qc, qr := a.Q%cols, a.Q/cols
		n := min(qc, cols-qc) + min(qr, rows-qr)
		if qc > 0 && rows > 1 {
			n++
		}
		return n
	}
	return 4
}

// TestAggregateRootParam: a run of root r != 0 writes root r on its bcast
// and scatter records and root 0 on the others; a run of root 0 writes no
// root, as the records from before the param did.
func TestAggregateRootParam(t *testing.T) {
	for _, tc := range []struct {
		a    AggregateOp
		want any // nil: no root param
	}{
		{AggregateOp{Op: AggBcast, Bytes: 8, Root: 4}, 4},
		{AggregateOp{Op: AggScatter, Bytes: 8, Root: 2}, 2},
		{AggregateOp{Op: AggQShift, Bytes: 8, Q: 1, Root: 4}, 0},
		{AggregateOp{Op: AggBcast, Bytes: 8}, nil},
		{AggregateOp{Op: AggAlltoall, Bytes: 8}, nil},
	} {
		got, ok := tc.a.Params(5)["root"]
		if (tc.want == nil) == ok || ok && got != tc.want {
			t.Errorf("%v root %d: root param %v (present %v), want %v", tc.a.Op, tc.a.Root, got, ok, tc.want)
		}
	}
}
