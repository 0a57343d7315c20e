package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// BenchGridShift is the bench name of grid-shift records: params bytes,
// rows, cols, along, mode, d; Ranks = rows x cols.
const BenchGridShift = "gridshift"

// GridShift is one exchange step of a 2-D process-grid algorithm, measured
// as the program runs it: on a Rows x Cols grid (rank r Cols + c at row r,
// column c), every line of the grid (every row, or every column) exchanges
// at the same time, each rank sending Bytes bytes to one member of its own
// line and receiving Bytes from another with one MPI_Sendrecv. With member
// index i along a line of n members (i = c along a row, n = Cols; i = r
// along a column, n = Rows) and k the line's own number (its row r, or its
// column c):
//
//	mode "shift": send to i + D, receive from i - D (mod n), 1 <= D < n:
//	              the circular shifts of Cannon's algorithm (D = n-1: one
//	              place left/up) and the steps of the ring all-to-all
//	              broadcast (D = 1);
//	mode "xor":   exchange with i XOR D, n a power of two, D < n a power
//	              of two: a round of the recursive-doubling all-to-all
//	              broadcast (paper 003's checkerboard multiplication);
//	mode "align": send to i - k, receive from i + k (mod n), D = 0:
//	              Cannon's alignment (row r shifts its A block r places
//	              left, column c its B block c places up); line 0 idles.
//
// Along "row+col" is the row step followed at once by the column step
// (same mode and D; each rank goes on to the second as soon as its own
// first is done, no barrier between them), as Cannon's alignment runs
// them. It is a step of its own because the two overlap: in the alignment
// the ranks of row 0 idle in the row step and start the column step while
// the others still exchange along the rows, so their blocks meet the row
// exchange on the receivers' links, and the combined step takes longer
// than its two steps measured apart.
//
// Why a pattern of its own: the point-to-point and aggregate descriptions
// of these steps price one message, or one operation on the first ranks of
// a sub-communicator, while the step moves one message per rank of every
// line at once, through every host's link in both directions and, between
// switches, across whatever the lines share. Measured on the whole grid,
// the step contains that contention as the application meets it (a
// line's exchange through a shared link takes a multiple of a lone
// message's time).
//
// A sample is the maximum over ranks of one repetition's time (a barrier
// before each, Iters exchanges back to back, divided by Iters), as
// aggregate operations are timed; every rank takes part.
type GridShift struct {
	Bytes      int
	Rows, Cols int    // the grid; Rows x Cols = the communicator's size
	Along      string // "row", "col" or "row+col": the lines that exchange
	Mode       string // "shift", "xor" or "align"
	D          int    // the shift or XOR distance; 0 for align
	Iters      int    // exchanges per repetition; 0 means 1
	Validate   bool
	Reps       Reps
}

// GridShift modes and directions.
const (
	GridAlongRow  = "row"
	GridAlongCol  = "col"
	GridAlongBoth = "row+col" // the row step, then the column step
	GridModeShift = "shift"
	GridModeXOR   = "xor"
	GridModeAlign = "align"
)

const gridShiftTag = 360

// Check reports a configuration that cannot run on p ranks.
func (g GridShift) Check(p int) error {
	if g.Rows < 1 || g.Cols < 1 || g.Rows > p || g.Cols > p || g.Rows*g.Cols != p { // a side beyond p first: the product may wrap around
		return fmt.Errorf("gridshift: a %dx%d grid does not hold %d ranks", g.Rows, g.Cols, p)
	}
	alongs, err := g.alongs()
	if err != nil {
		return err
	}
	switch g.Mode {
	case GridModeShift:
		for _, a := range alongs {
			if n := g.lineOf(a); n < 2 {
				return fmt.Errorf("gridshift: a shift along %s on a %dx%d grid: its lines of 1 rank have no other rank to shift to", a, g.Rows, g.Cols)
			} else if g.D < 1 || g.D >= n {
				return fmt.Errorf("gridshift: shift d = %d on lines of %d ranks: want 1 <= d < %d", g.D, n, n)
			}
		}
	case GridModeXOR:
		for _, a := range alongs {
			if n := g.lineOf(a); !isPow2(n) || !isPow2(g.D) || g.D >= n {
				return fmt.Errorf("gridshift: xor d = %d on lines of %d ranks: want a power of two below a power-of-two line", g.D, n)
			}
		}
	case GridModeAlign:
		if g.D != 0 {
			return fmt.Errorf("gridshift: align takes d = 0, got %d", g.D)
		}
	default:
		return fmt.Errorf("gridshift: mode %q: accepted values are shift, xor and align", g.Mode)
	}
	if g.Bytes < 0 || g.Bytes > mpi.MaxCount {
		return fmt.Errorf("gridshift: bytes = %d: want 0 to %d", g.Bytes, mpi.MaxCount)
	}
	if g.Iters < 0 {
		return fmt.Errorf("gridshift: iters = %d: must be >= 1", g.Iters)
	}
	return g.Reps.Validate()
}

// alongs returns the directions of the step's exchanges, in order.
func (g GridShift) alongs() ([]string, error) {
	switch g.Along {
	case GridAlongRow, GridAlongCol:
		return []string{g.Along}, nil
	case GridAlongBoth:
		return []string{GridAlongRow, GridAlongCol}, nil
	}
	return nil, fmt.Errorf("gridshift: along %q: accepted values are row, col and row+col", g.Along)
}

// lineOf returns the number of members of a line along a (row or col).
func (g GridShift) lineOf(a string) int {
	if a == GridAlongCol {
		return g.Rows
	}
	return g.Cols
}

// Canonical returns the step in the one form that names its permutation:
// an XOR by d on lines of n = 2d members is the circular shift by d (both
// pair member i with i + d mod 2d), so it becomes that shift, and records
// of either serve both (for row+col, when both directions' lines have 2d
// members).
func (g GridShift) Canonical() GridShift {
	alongs, err := g.alongs()
	if err != nil || g.Mode != GridModeXOR {
		return g
	}
	for _, a := range alongs {
		if g.lineOf(a) != 2*g.D {
			return g
		}
	}
	g.Mode = GridModeShift
	return g
}

// Partners returns the rank rank sends to and the one it receives from,
// or ok = false when it idles (align on line 0), in a step along one
// direction (row or col; for row+col, the row step: see PartnersAlong).
// The configuration must pass Check.
func (g GridShift) Partners(rank int) (dst, src int, ok bool) {
	a := g.Along
	if a == GridAlongBoth {
		a = GridAlongRow
	}
	return g.PartnersAlong(rank, a)
}

// PartnersAlong is Partners in the exchange along a (row or col) of the
// step.
func (g GridShift) PartnersAlong(rank int, a string) (dst, src int, ok bool) {
	r, c := rank/g.Cols, rank%g.Cols
	i, k, n := c, r, g.Cols
	at := func(j int) int { return r*g.Cols + ((j%n)+n)%n }
	if a == GridAlongCol {
		i, k, n = r, c, g.Rows
		at = func(j int) int { return (((j%n)+n)%n)*g.Cols + c }
	}
	switch g.Mode {
	case GridModeShift:
		return at(i + g.D), at(i - g.D), true
	case GridModeXOR:
		return at(i ^ g.D), at(i ^ g.D), true
	}
	if k%n == 0 {
		return rank, rank, false
	}
	return at(i - k), at(i + k), true
}

// Run measures the step (collective over c).
func (g GridShift) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := g.Check(p); err != nil {
		return Measurement{}, err
	}
	me := c.Rank()
	x := g.Bytes
	iters := max(g.Iters, 1)
	alongs, _ := g.alongs()
	// One Sendrecv per direction, each with its own send and receive
	// buffer and tag (as Cannon's row and column exchanges).
	var prog []mpi.Step
	var bufs [][]byte
	var srcs []int
	var recvs [][]byte
	for j, a := range alongs {
		dst, src, active := g.PartnersAlong(me, a)
		if !active {
			continue
		}
		send, recv := make([]byte, x), make([]byte, x)
		fillBlock(send, me, dst)
		prog = append(prog, mpi.Step{Op: mpi.StepSendrecv, Send: mpi.Span{Buf: len(bufs), Len: x}, Recv: mpi.Span{Buf: len(bufs) + 1, Len: x},
			Peer: dst, From: src, Tag: gridShiftTag + j})
		bufs = append(bufs, send, recv)
		srcs, recvs = append(srcs, src), append(recvs, recv)
	}
	if len(bufs) == 0 {
		bufs = [][]byte{make([]byte, x), make([]byte, x)} // an idle rank runs the empty program
	}
	var counts Counts
	calls := 0
	kernel := programKernel(c, bufs, iters, &counts, &calls)
	cfg := g.Reps
	cfg.Reduction = ReduceMax
	m, err := MeasureBatch(c, cfg, g.Validate, func(b mpi.Batch) error {
		if err := kernel(b, [][]mpi.Step{prog}); err != nil {
			return err
		}
		if g.Validate {
			for j, recv := range recvs {
				if err := checkBlock(recv, srcs[j], me, "gridshift"); err != nil {
					return err
				}
				clear(recv)
			}
		}
		return nil
	})
	if err != nil {
		return Measurement{}, err
	}
	m = m.Scaled(1 / float64(iters))
	return finish(c, m, counts, calls, nil)
}

// Params are the record parameters.
func (g GridShift) Params(int) results.Params {
	return results.Params{"bytes": g.Bytes, "rows": g.Rows, "cols": g.Cols, "along": g.Along, "mode": g.Mode, "d": g.D}
}

// Bench is the bench name of the records.
func (GridShift) Bench() string { return BenchGridShift }

// Record is the grid-shift record of m.
func (g GridShift) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchGridShift, g.Params(m.CommSize), m.CommSize, meta)
}
