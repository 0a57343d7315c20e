package apps

import (
	"fmt"

	"github.com/commcost/commcost/internal/sysmem"
)

// The memory the message-passing programs and Barnes-Hut ask of each rank,
// from their parameters, before anything is allocated (sysmem.Need: Bytes
// per rank, InFlight the payload a rank has in flight at once, which the
// local backend's queues hold again). The command checks them against
// what the machine has (job.MemNeedOf with the flag of Field) before the
// first world starts, so that `--n 65536` is refused with one message
// instead of ending in "fatal error: out of memory". A serial oracle that
// every rank process computes on its own (gauss, multigrid) counts on
// every rank; on the local backend, whose ranks share one oracle, that
// overstates the need by the oracle times (ranks - 1), on the safe side.

const float64Bytes = 8

// Barnes-Hut's memory per rank and variable of the store (N bodies and
// the cell pools), in Go's size classes and with the garbage the heap
// holds under GOGC=100. On the local backend (Demand) every rank holds
// the record, tree node and cached copy of most variables, bhLocalVarBytes
// each: the peak RSS of 4 goroutine ranks is 0.8-0.9 of the estimate.
// Ranks that are processes of their own (ProcessDemand) hold more: a
// variable costs bhVarBytes on every rank and bhHomeVarBytes more, shared
// out over the ranks, for its home state (owner's copy, sharers,
// versions); under mpirun these bound the peak RSS on 1 to 4 ranks
// (docs/findings/dsm.md gives the figures). bhRankBaseBytes is a rank's
// fixed part, bhProcessBaseBytes more in a process of its own (the MPI
// library's resident part).
const (
	bhLocalVarBytes = 600
	bhVarBytes      = 650
	bhHomeVarBytes  = 800
	bhRankBaseBytes = 8 << 20

	bhProcessBaseBytes = 16 << 20
)

// availableMemory is what this process may still allocate (sysmem); a
// variable for tests.
var availableMemory = sysmem.Available

// Demand is what Gauss asks of each of p ranks: its n/p augmented rows,
// the pivot row's pieces and buffers, the solution vector, and the serial
// oracle (OracleDemand), which every rank process computes.
func (g *Gauss) Demand(p int) sysmem.Need {
	n, fp := float64(g.N), float64(max(p, 1))
	rows := n / fp * (n + 1)
	pieces := 4 * fp * float64((g.N+1+p-1)/max(p, 1)) // send, tmp, pivot, recvPiece
	run := float64Bytes * (rows + pieces + n)
	o := g.OracleDemand()
	return sysmem.Need{Field: "n", Bytes: run + o.Bytes, InFlight: float64Bytes * (n + 1),
		What: fmt.Sprintf("gauss of order %d on %d ranks (its rows and the serial oracle's %d x %d LU)", g.N, p, g.N, g.N)}
}

// OracleDemand is the serial oracle's need (Input, and the first Run):
// the n x n matrix and its LU factors (gonum's mat.LU copies it), both
// dense float64, and the right-hand side and solution.
func (g *Gauss) OracleDemand() sysmem.Need {
	n := float64(g.N)
	return sysmem.Need{Field: "n", Bytes: float64Bytes * (2*n*n + 4*n),
		What: fmt.Sprintf("gauss's serial oracle (an LU of the %d x %d matrix)", g.N, g.N)}
}

// OracleFlops is the floating-point work of the serial oracle: 2n^3/3 for
// the LU factorisation (Golub and Van Loan, Matrix Computations, 3.2.6),
// about 2n^2 for the condition estimate and the two triangular solves.
func (g *Gauss) OracleFlops() float64 {
	n := float64(g.N)
	return 2*n*n*n/3 + 6*n*n
}

// Demand is what Multigrid asks of each of p ranks: its time plane and
// the one received (8 n^2 bytes each), the solver's hierarchy (three grids
// of (n+2)^2 per level, 4/3 of the finest in all), and the serial oracle,
// which every rank process computes for all p planes (two planes each and
// a solver).
func (m *Multigrid) Demand(p int) sysmem.Need {
	n2 := float64(m.N) * float64(m.N)
	ring := float64(m.N+2) * float64(m.N+2)
	solver := 3 * ring * 4 / 3
	iters := float64(max(m.Iters, 1))
	planes := 2*n2 + solver + float64(m.N) + 2*float64(max(p, 1))*n2 + solver + n2
	need := sysmem.Need{Field: "n", Bytes: float64Bytes * (planes + 2*iters), InFlight: float64Bytes * n2,
		What: fmt.Sprintf("multigrid's planes of %d x %d points on %d ranks (and the serial oracle's %d planes)", m.N, m.N, p, p)}
	// A value per iteration is kept by the run and by the oracle: when
	// those outweigh the planes, --iterations is what grows the need.
	if 2*iters > planes {
		need.Field = "iterations"
		need.What = fmt.Sprintf("multigrid's %d iterations (a value each kept by the run and by the oracle)", m.Iters)
	}
	return need
}

// Demand is what Cannon asks of each of p = q^2 ranks: the A and B blocks
// with their shift buffers and the C block (five blocks of (n/q)^2), the
// check's column panel of B (n/q columns of n), both shifts in flight.
func (m Cannon) Demand(p int) sysmem.Need {
	g, _ := SquareGrid(max(p, 1))
	q := max(g.Rows, 1)
	b := float64(m.N / q)
	n := float64(m.N)
	return sysmem.Need{Field: "n", Bytes: float64Bytes * (5*b*b + b*n + n), InFlight: 2 * float64Bytes * b * b,
		What: fmt.Sprintf("cannon's blocks of %d x %d on a %d x %d grid", m.N/q, m.N/q, q, q)}
}

// Demand is what Checkerboard asks of each of p ranks: its row panel of A
// and column panel of B (blocks of the whole row and column of the grid),
// the C block, the row panel laid out for the multiply, and the check's
// column panel of B; a panel is in flight in each broadcast.
func (m Checkerboard) Demand(p int) sysmem.Need {
	g := m.grid(max(p, 1))
	rows, cols := max(g.Rows, 1), max(g.Cols, 1)
	br, bc, n := float64(m.N/rows), float64(m.N/cols), float64(m.N)
	blk := br * bc
	bytes := float64Bytes * (float64(cols)*blk + float64(rows)*blk + blk + br*n + bc*n + n)
	return sysmem.Need{Field: "n", Bytes: bytes, InFlight: float64Bytes * float64(max(rows, cols)) * blk,
		What: fmt.Sprintf("checkerboard's panels of order %d on a %s grid", m.N, g)}
}

// Demand is what Barnes-Hut asks of each of p goroutine ranks of the
// local backend: per time step the energies, zone sizes and root masses
// kept for the verification and their reductions (eleven numbers a
// step), and for the bodies the DSM store's state of every variable (the
// N bodies and the P pools of cells): the force walk reads bodies and
// cells of every zone, so each rank comes to hold most variables,
// bhLocalVarBytes each, besides its bodies' forces and bhRankBaseBytes.
// Field is "steps" when the per-step figures dominate, else "cells" when
// cells beyond the default per body outnumber the bodies, else "bodies".
func (c BarnesHutConfig) Demand(p int) sysmem.Need { return c.demand(p, bhLocalVarBytes) }

// ProcessDemand is Demand for ranks that are processes (the native
// backend): a variable costs bhVarBytes on each rank and bhHomeVarBytes
// over p for its home state, and a rank bhProcessBaseBytes more.
func (c BarnesHutConfig) ProcessDemand(p int) sysmem.Need {
	need := c.demand(p, bhVarBytes+bhHomeVarBytes/float64(max(p, 1)))
	need.Bytes += bhProcessBaseBytes
	return need
}

// demand is the need of each of p ranks at perVar bytes per variable.
func (c BarnesHutConfig) demand(p int, perVar float64) sysmem.Need {
	d := c.withDefaults()
	fp := float64(max(p, 1))
	n := float64(d.Bodies)
	steps := 11 * float64Bytes * float64(d.Steps)
	cells := fp * float64(d.pool(max(p, 1)))
	vars := n + cells + 2
	bodies := vars*perVar + bhRankBaseBytes + n/fp*10*float64Bytes
	need := sysmem.Need{Field: "bodies", Bytes: steps + bodies,
		What: fmt.Sprintf("barneshut's %d bodies on %d ranks (home and cached copies)", d.Bodies, p)}
	if cells > n && d.CellsPerBody > DefaultCellsPerBody {
		// Pools raised beyond the default hold most of the variables.
		need.Field = "cells"
		need.What = fmt.Sprintf("barneshut's %d bodies and %.0f cells on %d ranks (home and cached copies)", d.Bodies, cells, p)
	}
	if steps > bodies {
		need.Field = "steps"
		need.What = fmt.Sprintf("barneshut's %d time steps (eleven figures a step kept for the check)", d.Steps)
	}
	return need
}
