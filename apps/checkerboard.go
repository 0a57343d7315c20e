package apps

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Checkerboard is the dense matrix multiplication case study of paper 003
// (slides "Case Studies: Dense Matrix Multiplication" and "- Analysis"):
// C = A B for n x n matrices on a Rows x Cols process grid with 2-D
// checkerboard partitioning, rank (r, c) owning the (n/Rows) x (n/Cols)
// blocks A_rc, B_rc and C_rc. The algorithm:
//
//  1. all-to-all broadcast of A's blocks along each grid row (phase
//     "rowbcast"), so rank (r, c) holds the row panel A_r*;
//  2. all-to-all broadcast of B's blocks along each grid column
//     ("colbcast"), so it holds the column panel B_*c;
//  3. C_rc = A_r* B_*c locally ("multiply").
//
// The slides' analysis (square grid, words): both broadcasts are
// bisection-insensitive and move n^2/sqrt(p) data, so the communication
// costs 2 t_w n^2/sqrt(p) and the computation t_c n^3/p. The broadcasts run
// the textbook all-to-all broadcast (recursive doubling, or the ring when
// the row or column is not a power of two), so each is exactly an
// "aggregate" allgather point on Cols (Rows) ranks of m = 8 n^2/p bytes
// (or, among two ranks, the circular shift it then is; see Workload), and
// the point-to-point view lists its rounds. The result is checked against a
// serial triple-loop product of the same generated A and B. The grid view
// states each broadcast as its rounds on the whole grid, every row (or
// column) in the same round at once ("gridshift" steps, the gridstep
// model's).
type Checkerboard struct {
	// N is the matrix order; Rows and Cols must divide it.
	N int
	// Grid is the process grid; the zero value means NearSquareGrid(p).
	Grid Grid
	// Sync selects the synchronous variant: a barrier (phase "barrier",
	// kind sync) before each broadcast, as Cannon's.
	Sync bool
}

// Name implements App.
func (m Checkerboard) Name() string { return "checkerboard" }

// Params implements App.
func (m Checkerboard) Params() results.Params {
	ps := results.Params{"n": m.N, "variant": variantName(m.Sync)}
	if m.Grid != (Grid{}) {
		ps["grid"] = m.Grid.String()
		if m.N%m.Grid.Rows == 0 && m.N%m.Grid.Cols == 0 {
			ps["block_bytes"] = 8 * (m.N / m.Grid.Rows) * (m.N / m.Grid.Cols)
		}
	}
	return ps
}

func (m Checkerboard) grid(p int) Grid {
	if m.Grid == (Grid{}) {
		return NearSquareGrid(p)
	}
	return m.Grid
}

// Check implements App.
func (m Checkerboard) Check(p int) error {
	g := m.grid(p)
	switch {
	case m.N < 1:
		return fmt.Errorf("--n %d: the matrix order must be >= 1", m.N)
	case g.Rows > p || g.Cols > p || g.size() != p: // a side beyond p first: the product may wrap around
		return fmt.Errorf("--grid %s: a %s grid has %s places, but there are %d ranks", g, g, results.FormatCount(product(g.Rows, g.Cols)), p)
	case m.N%g.Rows != 0 || m.N%g.Cols != 0:
		e := &DivideError{Program: "checkerboard", N: m.N, By: g.String() + " grid", Multiple: lcm(g.Rows, g.Cols),
			Why: fmt.Sprintf("n must be a multiple of both %d and %d", g.Rows, g.Cols)}
		if m.Grid != (Grid{}) {
			e.Flag = "--grid " + g.String()
		}
		return e
	}
	panel := max(product(8, m.N/g.Rows, m.N), product(8, m.N, m.N/g.Cols))
	if panel > mpi.MaxCount {
		return fmt.Errorf("--n %d: a panel of %s bytes exceeds one MPI message (%d bytes)", m.N, results.FormatCount(panel), mpi.MaxCount)
	}
	return nil
}

// Workload returns the phases' communication on p ranks.
func (m Checkerboard) Workload(p int) map[string][]results.WorkItem {
	g := m.grid(p)
	blk := 8 * (m.N / g.Rows) * (m.N / g.Cols)
	// An all-to-all broadcast among two ranks is one exchange, which is a
	// circular shift: along a row of two, the 1-shift of the row's two
	// ranks; along a column of two (Rows = 2), rank (0, c) <-> (1, c) for
	// every c at once, which is exactly the circular shift of all p ranks
	// by Cols. Such phases name that qshift point, the permutation they
	// perform (and which the two-level model rightly charges to the
	// bisection); longer rows and columns name the allgather.
	phase := func(members int, shiftQ, shiftRanks int, along string) []results.WorkItem {
		var w workload
		w.add(allgatherSteps(g, along, members, blk)...)
		switch {
		case members == 2:
			w.add(aggItem(1, "qshift", blk, shiftRanks, shiftQ))
		case members > 2:
			w.add(aggItem(1, "allgather", blk, members, 0))
		}
		if members > 1 {
			w.add(p2pItems(1, allgatherRounds(members, blk))...)
		}
		return w.list()
	}
	return map[string][]results.WorkItem{"rowbcast": phase(g.Cols, 1, 2, patterns.GridAlongRow), "colbcast": phase(g.Rows, g.Cols, p, patterns.GridAlongCol)}
}

const (
	tagRow = 710
	tagCol = 711
)

// Run implements App.
func (m Checkerboard) Run(env Env) (Outcome, error) {
	c := env.Comm
	p := c.Size()
	if err := m.Check(p); err != nil {
		return Outcome{}, err
	}
	g := m.grid(p)
	r, col := g.coords(c.Rank())
	br, bc := m.N/g.Rows, m.N/g.Cols
	blk := br * bc
	apan := make([]float64, g.Cols*blk) // A_r0 .. A_r(Cols-1), block after block
	bpan := make([]float64, g.Rows*blk) // B_0c .. B_(Rows-1)c: the n x bc column panel
	fillBlock(apan[col*blk:(col+1)*blk], env.Seed, 'A', r*br, col*bc, br, bc)
	fillBlock(bpan[r*blk:(r+1)*blk], env.Seed, 'B', r*br, col*bc, br, bc)
	rows := newGroup(c, g.row(r), tagRow)
	cols := newGroup(c, g.col(col), tagCol)

	var out Outcome
	if err := syncPoint(c, &out.Phases, m.Sync); err != nil {
		return out, err
	}
	if err := out.Phases.Time(c, "rowbcast", KindComm, func() error {
		return rows.allgather(mpi.Float64Bytes(apan), 8*blk)
	}); err != nil {
		return out, err
	}
	if err := syncPoint(c, &out.Phases, m.Sync); err != nil {
		return out, err
	}
	if err := out.Phases.Time(c, "colbcast", KindComm, func() error {
		return cols.allgather(mpi.Float64Bytes(bpan), 8*blk)
	}); err != nil {
		return out, err
	}
	cblk := make([]float64, blk)
	_ = out.Phases.Time(c, "multiply", KindComp, func() error {
		// The row panel br x n from its blocks side by side; the column
		// panel is already n x bc row-major.
		a := make([]float64, br*m.N)
		for k := 0; k < g.Cols; k++ {
			for i := 0; i < br; i++ {
				copy(a[i*m.N+k*bc:i*m.N+(k+1)*bc], apan[k*blk+i*bc:k*blk+(i+1)*bc])
			}
		}
		gemm(br, bc, m.N, a, bpan, cblk)
		return nil
	})
	verr := checkProduct(cblk, env.Seed, m.N, r*br, col*bc, br, bc, productTol(m.N))
	if verr != nil {
		verr = fmt.Errorf("checkerboard: rank %d: %w", c.Rank(), verr)
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, collective(err)
	}
	out.Workload = m.Workload(p)
	return out, nil
}

// productTol bounds |C - serial| relative to sum_k |a_ik b_kj| for order
// n: the worst-case rounding of a sum of n products in any order is about
// n ulps (Higham, Accuracy and Stability, section 3.1); 4 n ulps is safe.
func productTol(n int) float64 { return 4 * float64(n) * 0x1p-52 }

func init() {
	RegisterProgram(Program{Name: "checkerboard", Paper: "003",
		Summary: "dense matrix product: A's blocks broadcast along grid rows, B's along columns",
		New:     func() Config { return new(CheckerboardConfig) },
		Phases: func(p results.Params) []string {
			return withSync(p, []string{"rowbcast", "colbcast", "multiply"}, 0, "barrier")
		}})
}

// CheckerboardConfig is the configuration of 'commcost app checkerboard'.
type CheckerboardConfig struct {
	N    int  `flag:"n" default:"128" usage:"matrix order (a multiple of the grid's rows and columns)"`
	Grid Grid `flag:"grid" usage:"process grid ROWSxCOLS with ROWS*COLS = ranks (default: the most nearly square)"`
	Variants
}

// Apps are the runs, one per variant.
func (c *CheckerboardConfig) Apps() ([]App, error) {
	if err := positive("N", c.N); err != nil {
		return nil, err
	}
	var out []App
	for _, v := range c.Variant {
		out = append(out, Checkerboard{N: c.N, Grid: c.Grid, Sync: v == "sync"})
	}
	return out, nil
}

// lcm is the least common multiple of a, b >= 1.
func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
