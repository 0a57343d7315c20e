package apps

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Cannon is Cannon's matrix multiplication (L. E. Cannon 1969; Kumar,
// Grama, Gupta, Karypis, "Introduction to Parallel Computing", section
// 8.2.2), the classic alternative to paper 003's checkerboard algorithm:
// C = A B for n x n matrices on a q x q process grid (p = q^2 ranks), rank
// (r, c) owning the (n/q) x (n/q) blocks A_rc, B_rc, C_rc.
//
//  1. Alignment ("align"): row r shifts its A blocks r places left and
//     column c its B blocks c places up, so that rank (r, c) holds
//     A_{r,r+c} and B_{r+c,c} (indices mod q); each rank sends at most one
//     block of each matrix, directly to its destination.
//  2. q steps of C_rc += A B on the held blocks ("multiply"), with a
//     circular shift of A one place left along the rows and of B one place
//     up along the columns between steps ("shift"; q-1 shifts).
//
// Communication: 2(q-1) block shifts of m = 8 n^2/p bytes plus the
// alignment, each stated as the "aggregate" qshift point that performs
// exactly that permutation. A row shift is q concurrent circular 1-shifts
// of q ranks (the qshift point on q ranks with q-param q-1, the left
// shift); a column shift is one circular shift of all p ranks by p - q
// (rank i sends to i - q), the qshift point on p ranks with that q. In
// the alignment every row and every column is its own circular shift
// (row r by r, column c by c), concurrently: one qshift on q ranks for A
// and one for B (a rank sends at most one block of each, although row 0
// and column 0 do not move). The grid view ("gridshift" steps, read by the
// gridstep model) states each shift as the program runs it: all rows (or
// all columns) shifting at once on the whole grid, the alignment as one
// step in which each row r shifts by r and then, without waiting for the
// other rows, each column c by c (patterns.GridAlongBoth: row 0 has
// nothing to move in the row step, so its ranks send their B blocks while
// the other rows still exchange A, and the two steps overlap).
// A shift step's row and column exchanges are priced apart: every rank
// takes part in both, so little runs ahead; stated as one row+col step
// the shift was not predicted better (docs/findings/applications.md), and
// apart it shares the checkerboard's steps in Cannon's calibration. The point-to-point view
// counts the messages along the critical path: two per shift step and two
// for the alignment (rank (q-1, q-1) moves both blocks). The A and B
// shifts run one after the other, so their times add, as the workload's
// sum does. The result is checked against a serial triple-loop product.
//
// Variants (as multigrid's, paper 001 section 4.3): asynchronous, the
// program as it runs, and synchronous (Sync), a barrier (phase "barrier",
// kind sync) before the alignment and before every shift, so that each
// communication phase starts on all ranks together as the models assume,
// and the wait for the slowest rank's multiply (with more ranks than
// cores, a time slice) is timed apart instead of inside the next shift.
type Cannon struct {
	// N is the matrix order; q must divide it.
	N int
	// Sync selects the synchronous variant.
	Sync bool
}

// variantName is "sync" or "async".
func variantName(sync bool) string {
	if sync {
		return "sync"
	}
	return "async"
}

// syncPoint times a barrier as the phase "barrier" in the synchronous
// variant of an application; in the asynchronous one it does nothing.
func syncPoint(c mpi.Comm, ph *Phases, sync bool) error {
	if !sync {
		return nil
	}
	return ph.Time(c, "barrier", KindSync, c.Barrier)
}

// Name implements App.
func (m Cannon) Name() string { return "cannon" }

// Params implements App.
func (m Cannon) Params() results.Params {
	return results.Params{"n": m.N, "variant": variantName(m.Sync)}
}

// product is the product of sizes as a float64: a byte count compared
// with a bound that an int product of large factors could wrap around
// (8 (n/q)^2 at n = 2^32 is 2^67), exact below 2^53.
func product(factors ...int) float64 {
	x := 1.0
	for _, f := range factors {
		x *= float64(f)
	}
	return x
}

// Check implements App.
func (m Cannon) Check(p int) error {
	g, ok := SquareGrid(p)
	switch {
	case m.N < 1:
		return fmt.Errorf("--n %d: the matrix order must be >= 1", m.N)
	case !ok:
		return &RanksError{What: "Cannon's algorithm", Want: "a square number of ranks for its q x q process grid (4, 9, 16, 25, ...)", Ranks: p}
	case m.N%g.Rows != 0:
		return &DivideError{Program: "cannon", N: m.N, By: g.String() + " grid", Multiple: g.Rows,
			Why: fmt.Sprintf("n must be a multiple of %d", g.Rows)}
	case product(8, m.N/g.Rows, m.N/g.Rows) > mpi.MaxCount:
		return fmt.Errorf("--n %d: a block of %s bytes exceeds one MPI message (%d bytes)", m.N, results.FormatCount(product(8, m.N/g.Rows, m.N/g.Rows)), mpi.MaxCount)
	}
	return nil
}

// BlockBytes is the size of one block on p ranks.
func (m Cannon) BlockBytes(p int) int {
	g, _ := SquareGrid(p)
	b := m.N / g.Rows
	return 8 * b * b
}

// Workload returns the phases' communication on p ranks.
func (m Cannon) Workload(p int) map[string][]results.WorkItem {
	g, _ := SquareGrid(p)
	q := g.Rows
	blk := m.BlockBytes(p)
	var align, shift workload
	if q > 1 {
		// The grid view: the steps as the program runs them, every row
		// (column) shifting at once; a left (up) shift by one sends to
		// member i + q - 1.
		// The alignment is one row+col step: the two exchanges overlap
		// (row 0 idles in A's and starts B's at once), which the two
		// steps measured apart do not contain (patterns.GridShift).
		align.add(gridItem(1, g, blk, patterns.GridAlongBoth, patterns.GridModeAlign, 0))
		shift.add(gridItem(float64(q-1), g, blk, patterns.GridAlongRow, patterns.GridModeShift, q-1),
			gridItem(float64(q-1), g, blk, patterns.GridAlongCol, patterns.GridModeShift, q-1))
		align.add(aggItem(2, "qshift", blk, q, q-1))
		align.add(p2pItems(2, []int{blk})...)
		steps := float64(q - 1)
		shift.add(aggItem(steps, "qshift", blk, q, q-1), aggItem(steps, "qshift", blk, p, p-q))
		shift.add(p2pItems(2*steps, []int{blk})...)
	}
	return map[string][]results.WorkItem{"align": align.list(), "shift": shift.list()}
}

// Run implements App.
func (m Cannon) Run(env Env) (Outcome, error) {
	c := env.Comm
	p := c.Size()
	if err := m.Check(p); err != nil {
		return Outcome{}, err
	}
	g, _ := SquareGrid(p)
	q := g.Rows
	r, col := g.coords(c.Rank())
	b := m.N / q
	blk := b * b
	a, bb := make([]float64, blk), make([]float64, blk)
	ta, tb := make([]float64, blk), make([]float64, blk)
	fillBlock(a, env.Seed, 'A', r*b, col*b, b, b)
	fillBlock(bb, env.Seed, 'B', r*b, col*b, b, b)
	rows := newGroup(c, g.row(r), tagRow) // member index = column
	cols := newGroup(c, g.col(col), tagCol)

	// shiftA moves A by d places left along the row, shiftB moves B by d
	// places up along the column (d = 0: nothing to move).
	shiftA := func(d int) error {
		if d%q == 0 {
			return nil
		}
		if err := rows.exchange(mpi.Float64Bytes(a), col-d, mpi.Float64Bytes(ta), col+d); err != nil {
			return err
		}
		a, ta = ta, a
		return nil
	}
	shiftB := func(d int) error {
		if d%q == 0 {
			return nil
		}
		if err := cols.exchange(mpi.Float64Bytes(bb), r-d, mpi.Float64Bytes(tb), r+d); err != nil {
			return err
		}
		bb, tb = tb, bb
		return nil
	}

	var out Outcome
	if err := syncPoint(c, &out.Phases, m.Sync); err != nil {
		return out, err
	}
	if err := out.Phases.Time(c, "align", KindComm, func() error {
		if err := shiftA(r); err != nil {
			return err
		}
		return shiftB(col)
	}); err != nil {
		return out, err
	}
	cblk := make([]float64, blk)
	for k := 0; k < q; k++ {
		_ = out.Phases.Time(c, "multiply", KindComp, func() error {
			gemm(b, b, b, a, bb, cblk)
			return nil
		})
		if k == q-1 {
			break
		}
		if err := syncPoint(c, &out.Phases, m.Sync); err != nil {
			return out, err
		}
		if err := out.Phases.Time(c, "shift", KindComm, func() error {
			if err := shiftA(1); err != nil {
				return err
			}
			return shiftB(1)
		}); err != nil {
			return out, err
		}
	}
	if q == 1 {
		// Time an empty shift phase too, so every configuration has the
		// same phases (Measure requires every rank to time every phase).
		out.Phases.Add("shift", KindComm, 0)
		if m.Sync {
			out.Phases.Add("barrier", KindSync, 0)
		}
	}
	verr := checkProduct(cblk, env.Seed, m.N, r*b, col*b, b, b, productTol(m.N))
	if verr != nil {
		verr = fmt.Errorf("cannon: rank %d: %w", c.Rank(), verr)
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, collective(err)
	}
	out.Workload = m.Workload(p)
	return out, nil
}

func init() {
	RegisterProgram(Program{Name: "cannon", Paper: "003; Cannon 1969",
		Summary: "Cannon's matrix product on a q x q grid: alignment, q-1 shifts of A and B",
		New:     func() Config { return new(CannonConfig) },
		Phases: func(p results.Params) []string {
			return withSync(p, []string{"align", "multiply", "shift"}, 0, "barrier")
		}})
}

// CannonConfig is the configuration of 'commcost app cannon'.
type CannonConfig struct {
	N int `flag:"n" default:"128" usage:"matrix order (a multiple of q on a q x q grid)"`
	Variants
}

// Apps are the runs, one per variant.
func (c *CannonConfig) Apps() ([]App, error) {
	if err := positive("N", c.N); err != nil {
		return nil, err
	}
	var out []App
	for _, v := range c.Variant {
		out = append(out, Cannon{N: c.N, Sync: v == "sync"})
	}
	return out, nil
}
