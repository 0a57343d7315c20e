package apps

import (
	"fmt"
	"math"
	"sync"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Multigrid is the test application of paper 001, section 4: time-parallel
// multigrid in the limit of pure time parallelism, p ranks working at once
// on p time planes of an N x N spatial grid, multigrid in space only (no
// time coarsening), whole planes moving between neighbouring time levels
// every iteration.
//
// The PDE is the heat equation with an oscillating lid, a scalar stand-in
// for the paper's lid-driven cavity (incompressible Navier-Stokes) that
// keeps its communication structure:
//
//	u_t = u_xx + u_yy on (0,1)^2,  u = sin(2 pi t / Period) sin(pi x) on
//	the lid y = 1,  u = 0 on the other sides and at t = 0,
//
// discretised with the 5-point Laplacian (h = 1/(N+1)) and backward Euler
// (step Dt), so plane i (t_i = (i+1) Dt) satisfies
//
//	(I/Dt - Lap_h) u_i = u_{i-1}/Dt + lid terms,  u_{-1} = 0.
//
// All planes are solved at once by block Jacobi in time: in iteration k
// every rank i sends its plane u_i^k to rank i+1 and receives u_{i-1}^k
// from rank i-1 (phase "exchange"; the first plane only sends, the last
// only receives, so interior ranks send and receive, paper 001's
// "bi-directional" case), then forms its residual and applies V-cycles to
// it ("vcycle": red-black Gauss-Seidel smoothing, full weighting,
// bilinear prolongation, rediscretised coarse operators down to one
// point). The exchange is whole planes, O(N^2), the same order as the
// O(N^2) stencil work, which is why the paper chose this code.
//
// Variants (paper 001, section 4.3): asynchronous (the program as it
// runs: each rank starts its exchange when its own work is done) and
// synchronous (a barrier before every exchange, phase "barrier", so all
// transfers start together as the hyperbolic model assumes).
//
// The exchange of one iteration is one "chainshift" point (ranks = p,
// bytes = 8 N^2): p-1 concurrent messages of a plane along the chain of
// ranks, which the hyperbolic model reduces with paper 001's Table 1; the
// point-to-point view is one message. The residual history (global 2-norm
// of the residual at every iteration) and the final planes are checked
// against a serial run of the same solver on all p planes.
type Multigrid struct {
	// N is the number of interior grid points per side, 2^k - 1 (3, 7,
	// 15, ..., 127, 255, ...) so that every level halves exactly.
	N int
	// Iters is the number of block-Jacobi iterations (exchanges).
	Iters int
	// Sync selects the synchronous variant.
	Sync bool
	// Cycles is the number of V-cycles per iteration; 0 means 1.
	Cycles int
	// Dt is the time step; 0 means 1/64. Period is the lid's period; 0
	// means 16 Dt.
	Dt, Period float64

	mu     sync.Mutex
	serial map[int]*mgSerial // oracle per plane count
}

type mgSerial struct {
	history []float64   // residual 2-norm per iteration, all planes
	planes  [][]float64 // final interior planes
}

// Name implements App.
func (m *Multigrid) Name() string { return "multigrid" }

func (m *Multigrid) variant() string {
	if m.Sync {
		return "sync"
	}
	return "async"
}

// Params implements App.
func (m *Multigrid) Params() results.Params {
	return results.Params{"n": m.N, "iters": m.Iters, "variant": m.variant(), "cycles": m.cycles(), "plane_bytes": m.PlaneBytes()}
}

func (m *Multigrid) cycles() int { return max(m.Cycles, 1) }

func (m *Multigrid) dt() float64 {
	if m.Dt == 0 {
		return 1.0 / 64
	}
	return m.Dt
}

func (m *Multigrid) period() float64 {
	if m.Period == 0 {
		return 16 * m.dt()
	}
	return m.Period
}

// PlaneBytes is the size of one plane message, 8 N^2.
func (m *Multigrid) PlaneBytes() int { return 8 * m.N * m.N }

// Check implements App.
func (m *Multigrid) Check(p int) error {
	switch {
	case m.N < 1 || (m.N+1)&m.N != 0:
		return fmt.Errorf("--n %d: want 2^k - 1 interior points per side (3, 7, 15, 31, 63, 127, 255, ...), so every multigrid level halves exactly", m.N)
	case m.Iters < 1:
		return fmt.Errorf("--iters %d: want at least 1 iteration", m.Iters)
	case m.Cycles < 0:
		return fmt.Errorf("--cycles %d: want at least 1 V-cycle per iteration", m.Cycles)
	case !(m.Dt >= 0) || math.IsInf(m.Dt, 0) || !(m.Period >= 0) || math.IsInf(m.Period, 0):
		return fmt.Errorf("time step %v and period %v: want positive numbers", m.Dt, m.Period)
	case product(8, m.N, m.N) > mpi.MaxCount:
		return fmt.Errorf("--n %d: a plane of %s bytes exceeds one MPI message (%d bytes)", m.N, results.FormatCount(product(8, m.N, m.N)), mpi.MaxCount)
	}
	return nil
}

// minPointCycleSec bounds from below the time of one grid point in one
// V-cycle: the finest level's smoothing alone updates every point (a
// few flops and loads each), which takes longer than 1 ns on any core.
const minPointCycleSec = 1e-9

// MinRunSec implements MinRunner: the first run computes the serial
// oracle, p planes each iterated Iters times by cycles V-cycles of N^2
// points on one core, besides its own plane.
func (m *Multigrid) MinRunSec(p int) float64 {
	return float64(p+1) * float64(m.Iters) * float64(m.cycles()) * float64(m.N) * float64(m.N) * minPointCycleSec
}

// Workload returns the phases' communication on p ranks.
func (m *Multigrid) Workload(p int) map[string][]results.WorkItem {
	var w workload
	if p > 1 {
		x := m.PlaneBytes()
		w.add(results.WorkItem{Count: float64(m.Iters), Bench: patterns.BenchChainShift, Params: results.Params{"bytes": x}, Ranks: p, View: ViewContention})
		w.add(p2pItems(float64(m.Iters), []int{x})...)
	}
	return map[string][]results.WorkItem{"exchange": w.list()}
}

const tagPlane = 730

// Run implements App.
func (m *Multigrid) Run(env Env) (Outcome, error) {
	c := env.Comm
	p, me := c.Size(), c.Rank()
	if err := m.Check(p); err != nil {
		return Outcome{}, err
	}
	oracle := m.oracle(p)
	s := newMGSolver(m.N, m.dt())
	n2 := m.N * m.N
	u := make([]float64, n2)    // this plane's iterate
	prev := make([]float64, n2) // u_{i-1}: received, or the initial condition
	hist := make([]float64, m.Iters)

	var out Outcome
	for k := 0; k < m.Iters; k++ {
		if m.Sync {
			if err := out.Phases.Time(c, "barrier", KindSync, c.Barrier); err != nil {
				return out, err
			}
		}
		if err := out.Phases.Time(c, "exchange", KindComm, func() error {
			var reqs []mpi.Request
			if me > 0 {
				r, err := c.Irecv(mpi.Float64Bytes(prev), me-1, tagPlane)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			if me < p-1 {
				r, err := c.Isend(mpi.Float64Bytes(u), me+1, tagPlane)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			_, err := mpi.Waitall(reqs)
			return err
		}); err != nil {
			return out, err
		}
		_ = out.Phases.Time(c, "vcycle", KindComp, func() error {
			hist[k] = s.iterate(u, prev, m.lid(me), m.cycles())
			return nil
		})
	}
	if p == 1 {
		out.Phases.Add("exchange", KindComm, 0)
	}
	verr := m.verify(c, oracle, u, hist)
	if err := AgreeErr(c, verr); err != nil {
		return out, collective(err)
	}
	out.Workload = m.Workload(p)
	out.Counters = map[string]float64{"residual_first": oracle.history[0], "residual_last": oracle.history[m.Iters-1]}
	return out, nil
}

// lid returns the lid boundary values g(x_j, t_i) for plane i.
func (m *Multigrid) lid(i int) []float64 {
	t := float64(i+1) * m.dt()
	g := make([]float64, m.N)
	h := 1 / float64(m.N+1)
	for j := range g {
		g[j] = math.Sin(2*math.Pi*t/m.period()) * math.Sin(math.Pi*float64(j+1)*h)
	}
	return g
}

// verify compares this rank's residual history (reduced over ranks to the
// global 2-norm) and final plane with the serial run. Both run the same
// floating-point operations in the same order, so they agree to rounding
// of the reduction; 1e-10 relative leaves room for the reduction order.
func (m *Multigrid) verify(c mpi.Comm, o *mgSerial, u, hist []float64) error {
	sq := make([]float64, len(hist))
	for i, r := range hist {
		sq[i] = r * r
	}
	sum := make([]float64, len(hist))
	if err := c.AllreduceFloat64s(sq, sum, mpi.OpSum); err != nil {
		return err
	}
	const tol = 1e-10
	for k, s := range sum {
		got, want := math.Sqrt(s), o.history[k]
		if math.Abs(got-want) > tol*math.Max(want, 1e-300) {
			return fmt.Errorf("multigrid: iteration %d: residual norm %.17g, the serial run has %.17g", k+1, got, want)
		}
	}
	want := o.planes[c.Rank()]
	var scale float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for j, v := range u {
		if math.Abs(v-want[j]) > tol*math.Max(scale, 1e-300) {
			return fmt.Errorf("multigrid: rank %d: final plane point %d = %.17g, the serial run has %.17g", c.Rank(), j, v, want[j])
		}
	}
	return nil
}

// oracle runs the same solver serially on p planes (once per p): in
// iteration k plane i uses plane i-1's iterate from iteration k, exactly
// what the exchange delivers.
func (m *Multigrid) oracle(p int) *mgSerial {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.serial[p]; ok {
		return o
	}
	s := newMGSolver(m.N, m.dt())
	n2 := m.N * m.N
	u := make([][]float64, p)
	old := make([][]float64, p)
	for i := range u {
		u[i] = make([]float64, n2)
		old[i] = make([]float64, n2)
	}
	zero := make([]float64, n2)
	o := &mgSerial{history: make([]float64, m.Iters)}
	for k := 0; k < m.Iters; k++ {
		for i := range u {
			copy(old[i], u[i])
		}
		var sum float64
		for i := range u {
			prev := zero
			if i > 0 {
				prev = old[i-1]
			}
			r := s.iterate(u[i], prev, m.lid(i), m.cycles())
			sum += r * r
			// A plane iterated is progress of the run whose first
			// repetition computes the oracle.
			patterns.Installed().Progress()
		}
		o.history[k] = math.Sqrt(sum)
	}
	o.planes = u
	if m.serial == nil {
		m.serial = map[int]*mgSerial{}
	}
	m.serial[p] = o
	return o
}

// mgLevel is one grid of the hierarchy: n interior points per side,
// stored with a boundary ring ((n+2)^2 values), and the operator
// c0 u - (sum of neighbours - 4u)/h^2 with c0 = 1/Dt.
type mgLevel struct {
	n       int
	h2      float64 // 1/h^2
	u, r, f []float64
}

type mgSolver struct {
	levels []*mgLevel
	c0     float64
}

func newMGSolver(n int, dt float64) *mgSolver {
	s := &mgSolver{c0: 1 / dt}
	for ; n >= 1; n = (n - 1) / 2 {
		h := 1 / float64(n+1)
		sz := (n + 2) * (n + 2)
		s.levels = append(s.levels, &mgLevel{n: n, h2: 1 / (h * h), u: make([]float64, sz), r: make([]float64, sz), f: make([]float64, sz)})
		if n == 1 {
			break
		}
	}
	return s
}

// iterate performs one block-Jacobi iteration on one plane: it forms the
// residual r = u_prev/Dt + lid terms - A u (returning its 2-norm, scaled
// by h so that it approximates the continuous L2 norm), then applies
// cycles V-cycles to A e = r and adds e to u. u and prev are interior
// planes (N^2 values, row-major, row 0 next to y = 0).
func (s *mgSolver) iterate(u, prev, lid []float64, cycles int) float64 {
	L := s.levels[0]
	n, w := L.n, L.n+2
	// Load u with its boundary ring (zero except the lid row y = 1).
	clear(L.u)
	for i := 0; i < n; i++ {
		copy(L.u[(i+1)*w+1:(i+1)*w+1+n], u[i*n:(i+1)*n])
	}
	copy(L.u[(n+1)*w+1:(n+1)*w+1+n], lid)
	// Right-hand side of plane i: u_{i-1}/Dt (the lid enters through the
	// boundary ring of the operator).
	clear(L.f)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			L.f[(i+1)*w+j+1] = prev[i*n+j] * s.c0
		}
	}
	s.residual(L)
	var norm float64
	for _, v := range L.r {
		norm += v * v
	}
	norm = math.Sqrt(norm) / float64(n+1)
	// Correction: solve A e = r with zero boundary by V-cycles.
	e := make([]float64, len(L.u))
	copy(L.f, L.r)
	clear(L.u)
	for range cycles {
		s.vcycle(0)
		// A V-cycle is progress: --cycles in the millions keeps one
		// plane's iteration going for minutes.
		patterns.Installed().Progress()
	}
	copy(e, L.u)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			u[i*n+j] += e[(i+1)*w+j+1]
		}
	}
	return norm
}

// residual sets L.r = L.f - A L.u on the interior.
func (s *mgSolver) residual(L *mgLevel) {
	n, w := L.n, L.n+2
	d := s.c0 + 4*L.h2
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			k := i*w + j
			L.r[k] = L.f[k] - (d*L.u[k] - L.h2*(L.u[k-1]+L.u[k+1]+L.u[k-w]+L.u[k+w]))
		}
	}
}

// smooth runs red-black Gauss-Seidel sweeps on L.
func (s *mgSolver) smooth(L *mgLevel, sweeps int) {
	n, w := L.n, L.n+2
	d := s.c0 + 4*L.h2
	for range sweeps {
		for color := 0; color < 2; color++ {
			for i := 1; i <= n; i++ {
				for j := 1 + (i+color)%2; j <= n; j += 2 {
					k := i*w + j
					L.u[k] = (L.f[k] + L.h2*(L.u[k-1]+L.u[k+1]+L.u[k-w]+L.u[k+w])) / d
				}
			}
		}
	}
}

// vcycle: two pre- and two post-smoothing sweeps, full weighting,
// bilinear prolongation, exact solve on the one-point grid.
func (s *mgSolver) vcycle(l int) {
	L := s.levels[l]
	if l == len(s.levels)-1 {
		s.smooth(L, 1) // one point: one Gauss-Seidel step solves it
		return
	}
	s.smooth(L, 2)
	s.residual(L)
	C := s.levels[l+1]
	n, w, cw := L.n, L.n+2, C.n+2
	clear(C.f)
	clear(C.u)
	for I := 1; I <= C.n; I++ {
		for J := 1; J <= C.n; J++ {
			k := (2*I)*w + 2*J
			C.f[I*cw+J] = (4*L.r[k] + 2*(L.r[k-1]+L.r[k+1]+L.r[k-w]+L.r[k+w]) +
				L.r[k-w-1] + L.r[k-w+1] + L.r[k+w-1] + L.r[k+w+1]) / 16
		}
	}
	s.vcycle(l + 1)
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			// Fine point (i, j) lies between coarse points (i/2, j/2) and
			// ((i+1)/2, (j+1)/2); boundary values of C.u are zero.
			i0, i1 := i/2, (i+1)/2
			j0, j1 := j/2, (j+1)/2
			L.u[i*w+j] += (C.u[i0*cw+j0] + C.u[i0*cw+j1] + C.u[i1*cw+j0] + C.u[i1*cw+j1]) / 4
		}
	}
	s.smooth(L, 2)
}

func init() {
	RegisterProgram(Program{Name: "multigrid", Paper: "001 sec. 4",
		Summary: "time-parallel multigrid: one time plane per rank, whole planes to the next level every iteration",
		New:     func() Config { return new(MultigridConfig) },
		Phases: func(p results.Params) []string {
			return withSync(p, []string{"exchange", "vcycle"}, 0, "barrier")
		}})
}

// MultigridConfig is the configuration of 'commcost app multigrid'.
type MultigridConfig struct {
	N          int `flag:"n" default:"127" usage:"interior grid points per side of a time plane, 2^k - 1 (a plane message is 8 n^2 bytes)"`
	Iterations int `flag:"iterations" default:"10" usage:"block-Jacobi iterations in time (each moves every plane to the next time level)"`
	Cycles     int `flag:"cycles" default:"1" usage:"V-cycles per iteration"`
	Variants
}

// Apps are the runs, one per variant.
func (c *MultigridConfig) Apps() ([]App, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"N", c.N}, {"Iterations", c.Iterations}, {"Cycles", c.Cycles}} {
		if err := positive(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if err := patterns.Checks(
		func() error { return patterns.CheckCount("Iterations", c.Iterations, 1, "iterations") },
		func() error { return patterns.CheckCount("Cycles", c.Cycles, 1, "V-cycles per iteration") }); err != nil {
		return nil, err
	}
	var out []App
	for _, v := range c.Variant {
		out = append(out, &Multigrid{N: c.N, Iters: c.Iterations, Cycles: c.Cycles, Sync: v == "sync"})
	}
	return out, nil
}
