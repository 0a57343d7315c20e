package apps

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
	"gonum.org/v1/gonum/mat"
)

// Gauss is the Gaussian elimination case study of paper 003 (slides "Case
// Studies: Gaussian Elimination" and "- Performance"): Ax = b for an n x n
// matrix with row-wise block partitioning, rank r owning rows
// [r n/p, (r+1) n/p) of A and b.
//
//   - Elimination, steps i = 0 .. n-2: the pivot row i (the n-i numbers
//     a_ii .. a_i,n-1 and b_i) goes to every rank by the slides' two-step
//     broadcast, "one-to-all personalized, followed by an all-to-all
//     broadcast" (phase "pivotbcast": a binomial scatter of p pieces of
//     ceil((n-i+1)/p) numbers from the owner, then the all-to-all broadcast
//     of the pieces); every rank then eliminates x_i from its rows below
//     row i ("eliminate").
//   - Back-substitution, blocks k = p-1 .. 0: rank k solves its triangle
//     for x_k (n/p numbers) with the contributions of later blocks already
//     subtracted ("backsolve"), broadcasts x_k (binomial tree, "xbcast"),
//     and every rank subtracts U_{.,k} x_k from its right-hand side.
//
// The slides' algorithm picks the pivot on the diagonal (no row
// exchanges, which would cost a reduction per step the slides do not
// count), so the matrix must not need pivoting: the default input is
// diagonally dominant. A pivot below PivotTol ||A||_max, met during the
// run, is an error every rank reports alike (all of them hold the pivot
// row). Before any run, Check factors A serially with partial pivoting
// (gonum's LU, an oracle independent of this code) and refuses a singular
// or near-singular matrix (estimated 1-norm condition number above
// MaxCond). After the run every rank holds x and checks the backward error
// max_i |A_i x - b_i| / (||A||_inf ||x||_inf + ||b||_inf) and the distance
// to the oracle's solution.
//
// Slides' cost (words, hypercube): the two-step broadcast of m numbers
// costs 2(t_s log p + t_w m), so elimination communicates
// 2 sum_i (n-i) t_w = t_w n^2 plus 2 t_s n log p.
//
// Variants, as the matrix products': asynchronous, the program as it runs,
// and synchronous (Sync), a barrier (phase "barrier", kind sync) before
// every pivot-row broadcast and every x_k broadcast, so that each
// communication phase starts on all ranks together as the models assume.
// Row-wise elimination is unbalanced: from step i on, the ranks owning
// rows above i have nothing left to eliminate, and in the asynchronous
// variant they wait inside the next broadcast for the last rank's
// elimination of its n/p rows; the synchronous variant times that wait
// apart.
type Gauss struct {
	// N is the order; p must divide it.
	N int
	// Matrix is the input: "dd" (default: uniform [-1, 1) entries plus n
	// on the diagonal, strictly diagonally dominant), "random" (uniform
	// entries: usually well conditioned, but elimination without pivoting
	// may meet a small pivot during the run), "hilbert" (a_ij = 1/(i+j+1),
	// near-singular from n = 12 on), "singular" (the last row repeats the
	// first) or "zeropivot" (dd with a_00 = 0: well conditioned, but
	// elimination without pivoting stops at its first step, during the run).
	Matrix string
	// Sync selects the synchronous variant.
	Sync bool

	mu     sync.Mutex // guards the cached oracle (local ranks share g)
	oracle *gaussOracle
	oerr   error
	oseed  int64
}

// Matrix kinds Gauss accepts.
var GaussMatrices = []string{"dd", "random", "hilbert", "singular", "zeropivot"}

const (
	// MaxCond is the largest condition number (1-norm estimate) Gauss
	// accepts: beyond it a double-precision solve keeps fewer than about 4
	// correct digits.
	MaxCond = 1e12
	// PivotTol: a pivot below PivotTol ||A||_max ends the elimination.
	PivotTol = 1e-12
)

type gaussOracle struct {
	normMax float64 // max |a_ij|
	normInf float64 // max row sum of |a_ij|
	cond    float64
	x       []float64
}

// Name implements App.
func (g *Gauss) Name() string { return "gauss" }

func (g *Gauss) matrix() string {
	if g.Matrix == "" {
		return "dd"
	}
	return g.Matrix
}

// Params implements App.
func (g *Gauss) Params() results.Params {
	return results.Params{"n": g.N, "matrix": g.matrix(), "variant": variantName(g.Sync)}
}

// a returns element (i, j) of A; b(i) is the right-hand side.
func (g *Gauss) a(seed int64, i, j int) float64 {
	switch g.matrix() {
	case "hilbert":
		return 1 / float64(i+j+1)
	case "singular":
		if i == g.N-1 {
			i = 0
		}
	}
	v := entry(seed, 'G', i, j)
	switch g.matrix() {
	case "dd":
		if i == j {
			v += float64(g.N)
		}
	case "zeropivot":
		if i == 0 && j == 0 {
			return 0
		}
		if i == j {
			v += float64(g.N)
		}
	}
	return v
}

func (g *Gauss) b(seed int64, i int) float64 { return entry(seed, 'b', i, 0) }

// Check implements App. The input matrix itself is checked by Input.
func (g *Gauss) Check(p int) error {
	known := false
	for _, k := range GaussMatrices {
		known = known || k == g.matrix()
	}
	switch {
	case !known:
		return fmt.Errorf("--matrix %s: accepted values are dd, random, hilbert, singular and zeropivot", g.Matrix)
	case g.N < 2:
		return fmt.Errorf("--n %d: the order must be >= 2", g.N)
	case g.N%p != 0:
		return &DivideError{Program: "gauss", N: g.N, By: fmt.Sprintf("%d ranks", p), Multiple: p,
			Why: "row-wise partitioning gives every rank n/p rows"}
	case 8*(g.N+1) > mpi.MaxCount:
		return fmt.Errorf("--n %d: a pivot row exceeds one MPI message", g.N)
	}
	return nil
}

// Input factors the matrix generated from seed serially (LU with partial
// pivoting) and refuses a singular or near-singular one, so that a caller
// can reject it as bad input before any rank starts. Run does the same
// (every rank reaches the same verdict) and uses the solution as its
// oracle; the factorisation is kept for later runs with the same seed.
func (g *Gauss) Input(seed int64) error {
	_, err := g.oracleFor(seed)
	return err
}

func (g *Gauss) oracleFor(seed int64) (*gaussOracle, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if (g.oracle != nil || g.oerr != nil) && g.oseed == seed {
		return g.oracle, g.oerr
	}
	g.oracle, g.oerr, g.oseed = nil, nil, seed
	// The factorisation is one call without progress in between, so it
	// runs as a point of its own under the process's watchdog
	// (patterns.Watchdog): one that outlasts --timeout ends the job with
	// a message naming it, instead of running for minutes before any
	// watched point (n = 8192 is 3.7e11 flops). Inside a measured run
	// (the first Run) it is part of that run's point.
	end := patterns.Installed().Begin(fmt.Sprintf("app gauss n=%d matrix=%s: the serial oracle (an LU of the %d x %d matrix on one core, %.2g flops; a larger --timeout lets a larger n finish)",
		g.N, g.matrix(), g.N, g.N, g.OracleFlops()), 0)
	defer end()
	// The oracle's matrix is allocated here, before any rank's check
	// could: refuse one the process cannot hold instead of dying in the
	// runtime's out-of-memory error.
	if need := g.OracleDemand(); need.Bytes > 0 {
		if avail, src, ok := availableMemory(); ok && need.Bytes > float64(avail) {
			g.oerr = fmt.Errorf("--n %d: %s needs about %s in this process; %s", g.N, need.What, sysmem.Format(need.Bytes), sysmem.Allows(need.Bytes, avail, src))
			return nil, g.oerr
		}
	}
	func() {
		n := g.N
		a := mat.NewDense(n, n, nil)
		rhs := mat.NewVecDense(n, nil)
		o := &gaussOracle{}
		for i := 0; i < n; i++ {
			var row float64
			for j := 0; j < n; j++ {
				v := g.a(seed, i, j)
				a.Set(i, j, v)
				o.normMax = math.Max(o.normMax, math.Abs(v))
				row += math.Abs(v)
			}
			o.normInf = math.Max(o.normInf, row)
			rhs.SetVec(i, g.b(seed, i))
		}
		var lu mat.LU
		lu.Factorize(a)
		o.cond = lu.Cond()
		if math.IsInf(o.cond, 1) || math.IsNaN(o.cond) {
			g.oerr = fmt.Errorf("--matrix %s, --n %d: the matrix is singular (LU with partial pivoting meets a zero pivot)", g.matrix(), n)
			return
		}
		if o.cond > MaxCond {
			g.oerr = fmt.Errorf("--matrix %s, --n %d: the matrix is near-singular (condition number about %.2g > %.0g); Gaussian elimination would lose every significant digit", g.matrix(), n, o.cond, MaxCond)
			return
		}
		var x mat.VecDense
		if err := lu.SolveVecTo(&x, false, rhs); err != nil {
			g.oerr = fmt.Errorf("--matrix %s, --n %d: serial solve: %v", g.matrix(), n, err)
			return
		}
		o.x = x.RawVector().Data
		g.oracle = o
	}()
	return g.oracle, g.oerr
}

// pieceBytes is the piece of pivot row i each rank receives in the
// scatter: ceil((n-i+1)/p) numbers (the row a_ii..a_i,n-1 and b_i, padded
// to p equal pieces).
func (g *Gauss) pieceBytes(i, p int) int { return 8 * ((g.N - i + 1 + p - 1) / p) }

// Workload returns the phases' communication on p ranks.
func (g *Gauss) Workload(p int) map[string][]results.WorkItem {
	var piv, xb workload
	if p > 1 {
		for i := 0; i < g.N-1; i++ {
			s := g.pieceBytes(i, p)
			piv.add(aggItem(1, "scatter", s, p, 0), aggItem(1, "allgather", s, p, 0))
		}
		for i := 0; i < g.N-1; i++ {
			s := g.pieceBytes(i, p)
			piv.add(p2pItems(1, scatterRounds(p, s))...)
			piv.add(p2pItems(1, allgatherRounds(p, s))...)
		}
		xbytes := 8 * g.N / p
		xb.add(aggItem(float64(p), "bcast", xbytes, p, 0))
		xb.add(p2pItems(float64(p), bcastRounds(p, xbytes))...)
	}
	return map[string][]results.WorkItem{"pivotbcast": piv.list(), "xbcast": xb.list()}
}

const tagGauss = 720

// Run implements App.
func (g *Gauss) Run(env Env) (Outcome, error) {
	c := env.Comm
	p, me := c.Size(), c.Rank()
	if err := g.Check(p); err != nil {
		return Outcome{}, err
	}
	orc, err := g.oracleFor(env.Seed)
	if err != nil {
		return Outcome{}, collective(err) // every rank factors the same matrix
	}
	n, nl := g.N, g.N/p
	r0 := me * nl
	w := n + 1 // augmented row: a_i0 .. a_i,n-1, b_i
	rows := make([]float64, nl*w)
	for i := 0; i < nl; i++ {
		for j := 0; j < n; j++ {
			rows[i*w+j] = g.a(env.Seed, r0+i, j)
		}
		rows[i*w+n] = g.b(env.Seed, r0+i)
	}
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	grp := newGroup(c, all, tagGauss)
	maxPiece := g.pieceBytes(0, p) / 8
	send := make([]float64, p*maxPiece)
	tmp := make([]byte, 8*p*maxPiece)
	recvPiece := make([]float64, maxPiece)
	pivot := make([]float64, p*maxPiece)

	var out Outcome
	for i := 0; i < n-1; i++ {
		owner := i / nl
		L := n - i + 1
		s := (L + p - 1) / p
		if err := syncPoint(c, &out.Phases, g.Sync); err != nil {
			return out, err
		}
		err := out.Phases.Time(c, "pivotbcast", KindComm, func() error {
			if me == owner {
				li := i - r0
				copy(send, rows[li*w+i:li*w+w])
				clear(send[L : p*s])
			}
			if p == 1 {
				copy(pivot, send[:L])
				return nil
			}
			sb := mpi.Float64Bytes(send[:p*s])
			if err := grp.scatter(sb, mpi.Float64Bytes(recvPiece[:s]), tmp, 8*s, owner); err != nil {
				return err
			}
			copy(pivot[me*s:(me+1)*s], recvPiece[:s])
			return grp.allgather(mpi.Float64Bytes(pivot[:p*s]), 8*s)
		})
		if err != nil {
			return out, err
		}
		piv := pivot[0]
		if !(math.Abs(piv) > PivotTol*orc.normMax) {
			// Every rank holds the pivot row, so every rank stops here
			// with the same message: a collective error, no abort needed.
			return out, collective(fmt.Errorf("gauss: elimination step %d: pivot a_%d,%d = %.3g is below %.0g ||A||_max; the matrix needs pivoting, which the slides' row-wise algorithm does not do (use --matrix dd)", i, i, i, piv, PivotTol))
		}
		_ = out.Phases.Time(c, "eliminate", KindComp, func() error {
			for li := max(i+1-r0, 0); li < nl; li++ {
				row := rows[li*w : (li+1)*w]
				f := row[i] / piv
				if f == 0 {
					continue
				}
				row[i] = 0
				for j := 1; j < L; j++ {
					row[i+j] -= f * pivot[j]
				}
			}
			return nil
		})
	}

	x := make([]float64, n)
	var verr error
	for k := p - 1; k >= 0; k-- {
		xk := x[k*nl : (k+1)*nl]
		if me == k {
			_ = out.Phases.Time(c, "backsolve", KindComp, func() error {
				for li := nl - 1; li >= 0; li-- {
					row := rows[li*w : (li+1)*w]
					gi := r0 + li
					s := row[n]
					for j := gi + 1; j < (k+1)*nl; j++ {
						s -= row[j] * x[j]
					}
					if !(math.Abs(row[gi]) > PivotTol*orc.normMax) && verr == nil {
						verr = fmt.Errorf("gauss: back-substitution: pivot u_%d,%d = %.3g is below %.0g ||A||_max; the matrix needs pivoting or is singular", gi, gi, row[gi], PivotTol)
					}
					x[gi] = s / row[gi]
				}
				return nil
			})
		}
		if err := syncPoint(c, &out.Phases, g.Sync); err != nil {
			return out, err
		}
		if err := out.Phases.Time(c, "xbcast", KindComm, func() error {
			if p == 1 {
				return nil
			}
			return grp.bcast(mpi.Float64Bytes(xk), k)
		}); err != nil {
			return out, err
		}
		_ = out.Phases.Time(c, "backsolve", KindComp, func() error {
			if me < k {
				for li := 0; li < nl; li++ {
					row := rows[li*w : (li+1)*w]
					for j, xv := range xk {
						row[n] -= row[k*nl+j] * xv
					}
				}
			}
			return nil
		})
	}
	if verr == nil {
		verr = g.verify(env.Seed, orc, x, r0, nl)
		if verr != nil {
			verr = fmt.Errorf("gauss: rank %d: %w", me, verr)
		}
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, collective(err)
	}
	out.Workload = g.Workload(p)
	return out, nil
}

// verify checks this rank's rows of the original system: the backward
// error max_i |A_i x - b_i| / (||A||_inf ||x||_inf + ||b||_inf) within
// 64 n ulps (Higham, Accuracy and Stability, eq. 7.2 and section 9.3, for
// a stable elimination), and x against the oracle within cond times that.
func (g *Gauss) verify(seed int64, o *gaussOracle, x []float64, r0, nl int) error {
	n := g.N
	var xinf, binf float64
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("x_%d = %v", i, v)
		}
		xinf = math.Max(xinf, math.Abs(v))
		binf = math.Max(binf, math.Abs(g.b(seed, i)))
	}
	tol := 64 * float64(n) * 0x1p-52
	for i := r0; i < r0+nl; i++ {
		s := -g.b(seed, i)
		for j := 0; j < n; j++ {
			s += g.a(seed, i, j) * x[j]
		}
		if be := math.Abs(s) / (o.normInf*xinf + binf); be > tol {
			return fmt.Errorf("row %d: backward error |A x - b| / (|A| |x| + |b|) = %.3g > %.3g: elimination without pivoting was unstable for this matrix (use --matrix dd)", i, be, tol)
		}
	}
	var xref float64
	for _, v := range o.x {
		xref = math.Max(xref, math.Abs(v))
	}
	for i := r0; i < r0+nl; i++ {
		if d := math.Abs(x[i] - o.x[i]); d > tol*o.cond*xref {
			return fmt.Errorf("x_%d = %.17g, the serial LU solve gives %.17g (difference %.3g > cond * %.3g)", i, x[i], o.x[i], d, tol*xref)
		}
	}
	return nil
}

func init() {
	RegisterProgram(Program{Name: "gauss", Paper: "003",
		Summary: "Gaussian elimination, row-wise: the pivot row by a two-step broadcast, back-substitution",
		New:     func() Config { return new(GaussConfig) },
		Phases: func(p results.Params) []string {
			return withSync(p, []string{"pivotbcast", "eliminate", "xbcast", "backsolve"}, 0, "barrier")
		}})
}

// GaussConfig is the configuration of 'commcost app gauss'.
type GaussConfig struct {
	N      int    `flag:"n" default:"128" usage:"matrix order (a multiple of the rank count)"`
	Matrix string `flag:"matrix" default:"dd" usage:"input: dd (diagonally dominant), random, hilbert (near-singular), singular, zeropivot (needs pivoting: fails during the run)"`
	Variants
}

// Apps are the runs, one per variant.
func (c *GaussConfig) Apps() ([]App, error) {
	if err := positive("N", c.N); err != nil {
		return nil, err
	}
	if !slices.Contains(GaussMatrices, c.Matrix) {
		return nil, opts.Field("Matrix", c.Matrix, "%s", opts.OneOf(GaussMatrices))
	}
	var out []App
	for _, v := range c.Variant {
		out = append(out, &Gauss{N: c.N, Matrix: c.Matrix, Sync: v == "sync"})
	}
	return out, nil
}
