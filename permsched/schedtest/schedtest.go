// Package schedtest is the conformance suite every permsched scheduler
// passes: one test body, in the manner of testing/fstest.TestFS and gonum's
// blas/testblas, run against each implementation on fixed and fuzzed
// instances. A new scheduler's test is one line:
//
//	func TestMine(t *testing.T) { schedtest.Run(t, Mine{}, schedtest.Options{Maximal: true}) }
package schedtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/commcost/commcost/permsched"
)

// Options states what a scheduler promises beyond a valid schedule.
type Options struct {
	// Async: the schedule is a list of posting rounds (AC), not
	// permutations.
	Async bool
	// Optimal: exactly D = MaxDegree phases, none empty (EXACT).
	Optimal bool
	// Maximal: every phase is a maximal matching of the messages not yet
	// sent (GM, CGM), hence at most 2D-1 phases.
	Maximal bool
	// MaxPhases, when set, bounds the phase count of an instance (LP:
	// (P-1) times the largest multiplicity, plus self steps).
	MaxPhases func(m *permsched.Matrix) int
	// FuzzInstances is the number of random instances beyond the fixed
	// table; 0 means 300.
	FuzzInstances int
}

// Instance is one named matrix of the suite.
type Instance struct {
	Name string
	M    *permsched.Matrix
}

// Instances returns the suite's matrices: edge cases by name, generator
// outputs at awkward sizes, and fuzz random multigraphs drawn from seed.
func Instances(fuzz int, seed uint64) []Instance {
	var out []Instance
	add := func(name string, m *permsched.Matrix, err error) {
		if err != nil {
			panic(fmt.Sprintf("schedtest: building %s: %v", name, err))
		}
		out = append(out, Instance{name, m})
	}
	mk := func(name string, n int, r [][]int32) {
		m, err := permsched.NewMatrix(n, r)
		add(name, m, err)
	}

	mk("n=1 empty", 1, nil)
	mk("n=1 one self-send", 1, [][]int32{{0}})
	mk("n=1 three self-sends", 1, [][]int32{{0, 0, 0}})
	mk("n=7 empty", 7, nil)
	mk("n=2 exchange", 2, [][]int32{{1}, {0}})
	mk("n=3 zero rows", 3, [][]int32{nil, {0, 2}, nil})
	hotRecv := make([][]int32, 9)
	for i := 1; i < 9; i++ {
		hotRecv[i] = []int32{0}
	}
	mk("n=9 all send to 0 (in 8, out 1)", 9, hotRecv)
	hotSend := [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	mk("n=11 0 sends to all (out 10, in 1)", 11, hotSend)
	dense := make([][]int32, 6)
	for i := range dense {
		for j := 0; j < 6; j++ {
			dense[i] = append(dense[i], int32(j))
		}
	}
	mk("n=6 all-to-all with self", 6, dense)
	mk("n=5 parallel edges 4x(0->1) 3x(1->0)", 5, [][]int32{{1, 1, 1, 1}, {0, 0, 0}})
	mk("n=4 out 3 in 1 plus multi", 4, [][]int32{{1, 2, 3}, {2, 2}, {2}, {2}})
	for _, c := range []struct {
		gen  string
		n, d int
	}{
		{permsched.GenFig7, 1, 0}, {permsched.GenFig7, 2, 1}, {permsched.GenFig7, 13, 5},
		{permsched.GenFig7, 32, 31}, {permsched.GenFig7, 100, 7}, {permsched.GenFig7, 64, 16},
		{permsched.GenFig7NoSelf, 10, 3}, {permsched.GenFig7NoSelf, 33, 32},
		{permsched.GenUniform, 17, 4}, {permsched.GenUniform, 50, 9}, {permsched.GenUniform, 6, 5},
		{permsched.GenSkewed, 40, 3}, {permsched.GenSkewed, 96, 12}, {permsched.GenSkewed, 5, 4},
	} {
		m, err := permsched.Generate(c.gen, c.n, c.d, seed+uint64(c.n*131+c.d))
		add(fmt.Sprintf("%s n=%d d=%d", c.gen, c.n, c.d), m, err)
	}
	m, err := permsched.SampleSortTrace(12, 200, seed)
	add("samplesort trace n=12 (weighted, self)", m, err)

	if fuzz == 0 {
		fuzz = 300
	}
	r := rand.New(rand.NewPCG(seed, 0x66757a7a))
	for f := 0; f < fuzz; f++ {
		out = append(out, Instance{fmt.Sprintf("fuzz#%d", f), RandomMultigraph(r)})
	}
	return out
}

// RandomMultigraph draws a small matrix whose shape varies the way real
// traffic does: n from 1 to 48 (mostly not powers of two), some ranks
// silent, multiplicities up to 4, self-sends, optional hot receivers and
// senders (max in-degree != max out-degree), and sizes on some instances.
func RandomMultigraph(r *rand.Rand) *permsched.Matrix {
	n := 1 + r.IntN(48)
	rows := make([][]int32, n)
	density := r.Float64()
	maxMult := 1 + r.IntN(4)
	selfOK := r.IntN(2) == 0
	hot := -1
	if r.IntN(3) == 0 {
		hot = r.IntN(n)
	}
	for i := range rows {
		if r.IntN(5) == 0 {
			continue // silent rank
		}
		for j := 0; j < n; j++ {
			if j == i && !selfOK {
				continue
			}
			p := density * 0.5
			if j == hot {
				p = 0.9
			}
			if i == hot {
				p = 0.95
			}
			if r.Float64() < p {
				for c := 1 + r.IntN(maxMult); c > 0; c-- {
					rows[i] = append(rows[i], int32(j))
				}
			}
		}
		// Row order is the input's business; schedulers must not assume
		// sorted rows.
		r.Shuffle(len(rows[i]), func(a, b int) { rows[i][a], rows[i][b] = rows[i][b], rows[i][a] })
	}
	if r.IntN(4) == 0 {
		sizes := make([][]int64, n)
		for i := range rows {
			for range rows[i] {
				sizes[i] = append(sizes[i], int64(r.IntN(5000)))
			}
		}
		m, err := permsched.NewWeighted(n, rows, sizes)
		if err != nil {
			panic(err)
		}
		return m
	}
	m, err := permsched.NewMatrix(n, rows)
	if err != nil {
		panic(err)
	}
	return m
}

// Run checks s on every instance with seeds 1 and 2.
func Run(t *testing.T, s permsched.Scheduler, opt Options) {
	t.Helper()
	for _, in := range Instances(opt.FuzzInstances, 1) {
		for _, seed := range []uint64{1, 2} {
			if err := Check(s, in.M, seed, opt); err != nil {
				t.Errorf("%s on %s (n=%d, %d messages, D=%d), seed %d: %v",
					s.Name(), in.Name, in.M.N(), in.M.Len(), in.M.MaxDegree(), seed, err)
			}
		}
	}
}

// Check runs s on m with seed and verifies everything Options promises:
// Validate passes, the matrix is unchanged, a second run with the same seed
// returns the same schedule, and the Async, Optimal, Maximal and MaxPhases
// properties hold.
func Check(s permsched.Scheduler, m *permsched.Matrix, seed uint64, opt Options) error {
	before := m.Dense()
	sc, err := s.Schedule(m, seed)
	if err != nil {
		return fmt.Errorf("Schedule: %v", err)
	}
	if sc.M != m {
		return fmt.Errorf("schedule refers to another matrix")
	}
	if err := permsched.Validate(sc); err != nil {
		return err
	}
	if after := m.Dense(); !equalDense(before, after) {
		return fmt.Errorf("Schedule modified the matrix")
	}
	if sc.Async != opt.Async {
		return fmt.Errorf("Async = %v, want %v", sc.Async, opt.Async)
	}
	again, err := s.Schedule(m, seed)
	if err != nil {
		return fmt.Errorf("second Schedule: %v", err)
	}
	if !sameSchedule(sc, again) {
		return fmt.Errorf("not deterministic: two runs with seed %d differ", seed)
	}
	d := m.MaxDegree()
	if opt.Optimal {
		if err := permsched.ValidateOptimal(sc); err != nil {
			return err
		}
	}
	if opt.Maximal {
		if lim := max(2*d-1, 0); sc.Phases() > lim {
			return fmt.Errorf("%d phases > 2D-1 = %d", sc.Phases(), lim)
		}
		if err := checkMaximal(sc); err != nil {
			return err
		}
	}
	if opt.MaxPhases != nil {
		if lim := opt.MaxPhases(m); sc.Phases() > lim {
			return fmt.Errorf("%d phases > bound %d", sc.Phases(), lim)
		}
	}
	if !opt.Async && sc.Phases() < d {
		return fmt.Errorf("%d phases < D = %d: Validate should have failed", sc.Phases(), d)
	}
	return nil
}

// checkMaximal verifies that no message could have joined an earlier phase:
// in every phase before its own, its sender or its receiver was busy.
func checkMaximal(sc *permsched.Schedule) error {
	m := sc.M
	n := m.N()
	phaseOf := make([]int, m.Len())
	for k := 0; k < sc.Phases(); k++ {
		for _, id := range sc.Phase(k) {
			phaseOf[id] = k
		}
	}
	sendBusy := make([][]bool, sc.Phases())
	recvBusy := make([][]bool, sc.Phases())
	for k := range sendBusy {
		sendBusy[k] = make([]bool, n)
		recvBusy[k] = make([]bool, n)
		for _, id := range sc.Phase(k) {
			sendBusy[k][m.Src(int(id))] = true
			recvBusy[k][m.Dst(int(id))] = true
		}
	}
	for id := 0; id < m.Len(); id++ {
		for k := 0; k < phaseOf[id]; k++ {
			if !sendBusy[k][m.Src(id)] && !recvBusy[k][m.Dst(id)] {
				return fmt.Errorf("phase %d is not maximal: message %d (%d -> %d, sent in phase %d) fits in it",
					k, id, m.Src(id), m.Dst(id), phaseOf[id])
			}
		}
	}
	return nil
}

func sameSchedule(a, b *permsched.Schedule) bool {
	if a.Phases() != b.Phases() || a.Async != b.Async {
		return false
	}
	for k := 0; k < a.Phases(); k++ {
		if !slices.Equal(a.Phase(k), b.Phase(k)) {
			return false
		}
	}
	return true
}

func equalDense(a, b [][]int64) bool {
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}
