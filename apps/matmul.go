package apps

import (
	"fmt"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// MatMul is the matrix multiplication of paper 000, section 6.1: C = A B of
// two n x n matrices on p processors, p dividing n. Module i holds A_i and
// C_i (n/p rows) and B_i (n/p columns). Program of processor i:
//
//	read submatrix A_i
//	for j := i+1 to i+p do
//	    synchronize all application processors   (*)
//	    read submatrix B_(j mod p)
//	    compute C_(i, j mod p) = A_i B_(j mod p)
//	write submatrix C_i
//
// Line (*) runs when Sync is set. Every submatrix is n^2/p integers, read or
// written p+2 times, each as ceil((4 n^2/p)/(k l)) k-k-accesses at r = 1:
//
//	T_MM(k, l) = (p + 2) ceil((n^2/p)/(l k)) T_kk(k, l, r = 1)
//
// (the paper's formula, with sizes in bytes). Elements are uint32 and the
// arithmetic is modulo 2^32, so the product is exact and is checked
// against a serial product of the same matrices.
//
// Phases: "mm" (communication: the p+2 submatrix accesses), "compute" (the
// local products) and, with Sync, "sync" (line (*)).
//
// The workload of "mm" is the paper's formula over the accesses that cross
// the network: (p+1) ceil(...) reads and ceil(...) writes where every
// submatrix lives on another node (the paper's machine, whose processor i
// and module i are distinct nodes; the emulated networks), fewer on a store
// that keeps a submatrix on the reading rank (globalvar.Keeps). On the
// direct store module j is rank p-1-j (Module), so rank i reads its own
// B_(p-1-i) once in the loop: p+1 of the p+2 accesses cross the network,
// and the paper's count would price (p+2)/(p+1) of the time, 6/5 at p = 4
// (section 6.5, data locality). The count is the largest over the ranks,
// as a phase's time is the slowest rank's.
type MatMul struct {
	N int // matrix order
	Access
	Sync bool // synchronise before every read of B, line (*)
}

// Phase names of MatMul.
const (
	PhaseMM      = "mm"
	PhaseCompute = "compute"
	PhaseSync    = "sync"
)

func (m MatMul) Name() string { return "matmul" }

func (m MatMul) Params() results.Params {
	return results.Params{"n": m.N, "k": m.K, "l": m.L, "sync": m.Sync}
}

func (m MatMul) Check(p int) error {
	if m.N < 1 {
		return fmt.Errorf("--n %d: the matrix order must be an integer >= 1", m.N)
	}
	if p < 1 {
		return fmt.Errorf("--n %d on %d ranks: the ranks must divide the matrix order (p | n)", m.N, p)
	}
	if m.N%p != 0 {
		return &DivideError{Program: "matmul", N: m.N, By: fmt.Sprintf("%d ranks", p), Multiple: p,
			Why: "the ranks must divide the matrix order: p | n"}
	}
	sub := func(n int) int { return MatMul{N: n}.subBytes(p) }
	if err := checkVolume(m.N, p, sub, "submatrix of n^2/p integers", fmt.Sprintf("on %d ranks", p)); err != nil {
		return err
	}
	return m.Access.check(m.subBytes(p), "submatrix of n^2/p integers")
}

// subBytes is the size of a submatrix A_i, B_i or C_i.
func (m MatMul) subBytes(p int) int { return m.N * m.N / p * IntBytes }

type matMulState struct {
	a, b, c []globalvar.Var
	want    []uint32 // C_i by the serial oracle
	// reads and writes are the submatrix accesses that cross the network,
	// the most of any rank (the workload of "mm").
	reads, writes int
}

// crossing counts rank i's submatrix accesses that cross the network (all
// but those to a submatrix the store keeps on rank i) and keeps the
// largest counts over the ranks in st (collective).
func (st *matMulState) crossing(s globalvar.Store, c mpi.Comm, i int) error {
	n := []float64{remote(s, st.a[i]), remote(s, st.c[i])} // A_i read, C_i written
	for j := i + 1; j <= i+len(st.b); j++ {
		n[0] += remote(s, st.b[j%len(st.b)])
	}
	if err := maxOverRanks(c, n); err != nil {
		return err
	}
	st.reads, st.writes = int(n[0]), int(n[1])
	return nil
}

// matElem is element (r, c) of matrix which (0 = A, 1 = B): a function of
// the seed, so every rank generates any part of the input alone.
func matElem(seed int64, which, n, r, c int) uint32 {
	z := uint64(seed)*0x9e3779b97f4a7c15 + uint64(which)<<62 + uint64(r*n+c)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return uint32(z ^ (z >> 31))
}

// Setup creates A, B and C (one variable per processor on its module),
// writes this rank's A_i and B_i, and computes the oracle's C_i.
func (m MatMul) Setup(env Env) (any, error) {
	if err := needStore(env, m.Name()); err != nil {
		return nil, err
	}
	s, p, i := env.Store, env.Comm.Size(), env.Comm.Rank()
	if err := m.Check(p); err != nil {
		return nil, err
	}
	n, R := m.N, m.N/p
	var st matMulState
	var err error
	size := m.subBytes(p)
	if st.a, err = blocks(s, varName(m, "A"), size, p); err != nil {
		return nil, err
	}
	if st.b, err = blocks(s, varName(m, "B"), size, p); err != nil {
		return nil, err
	}
	if st.c, err = blocks(s, varName(m, "C"), size, p); err != nil {
		return nil, err
	}
	ai := make([]uint32, R*n) // rows i R .. (i+1) R - 1
	bi := make([]uint32, n*R) // columns i R .., stored row by row
	for r := range R {
		for c := range n {
			ai[r*n+c] = matElem(env.Seed, 0, n, i*R+r, c)
		}
	}
	for t := range n {
		for c := range R {
			bi[t*R+c] = matElem(env.Seed, 1, n, t, i*R+c)
		}
	}
	if err := m.Access.write(s, st.a[i], 0, u32Bytes(ai)); err != nil {
		return nil, err
	}
	if err := m.Access.write(s, st.b[i], 0, u32Bytes(bi)); err != nil {
		return nil, err
	}
	// The oracle: C_i = A_i B from the generator, serially.
	st.want = make([]uint32, R*n)
	brow := make([]uint32, n)
	for t := range n {
		for c := range n {
			brow[c] = matElem(env.Seed, 1, n, t, c)
		}
		for r := range R {
			a := ai[r*n+t]
			row := st.want[r*n : (r+1)*n]
			for c, b := range brow {
				row[c] += a * b
			}
		}
	}
	if err := s.Barrier(); err != nil {
		return nil, err
	}
	// Every rank's writes are in, so no rank waits on a home that sits in
	// this reduction.
	if err := st.crossing(s, env.Comm, i); err != nil {
		return nil, err
	}
	return &st, nil
}

// Run runs the program once and checks C_i in the store against the oracle.
func (m MatMul) Run(env Env) (Outcome, error) {
	var out Outcome
	st, err := stateOf[*matMulState](&env, m)
	if err != nil {
		return out, err
	}
	s, c := env.Store, env.Comm
	p, i := c.Size(), c.Rank()
	n, R := m.N, m.N/p
	ai := make([]uint32, R*n)
	bj := make([]uint32, n*R)
	ci := make([]uint32, R*n)
	pl := &poller{s: s}
	comm := func(fn func() error) error { return out.Phases.Time(c, PhaseMM, KindComm, fn) }
	if err := comm(func() error { return m.Access.read(s, st.a[i], 0, u32Bytes(ai)) }); err != nil {
		return out, err
	}
	for j := i + 1; j <= i+p; j++ {
		jj := j % p
		if m.Sync {
			if err := out.Phases.Time(c, PhaseSync, KindSync, s.Barrier); err != nil {
				return out, err
			}
		}
		if err := comm(func() error { return m.Access.read(s, st.b[jj], 0, u32Bytes(bj)) }); err != nil {
			return out, err
		}
		_ = out.Phases.Time(c, PhaseCompute, KindComp, func() error {
			// C_(i, jj): rows of A_i times the n/p columns of B_jj.
			for r := range R {
				crow := ci[r*n+jj*R : r*n+jj*R+R]
				clear(crow)
				arow := ai[r*n : (r+1)*n]
				for t, a := range arow {
					brow := bj[t*R : (t+1)*R]
					for x, b := range brow {
						crow[x] += a * b
					}
				}
				pl.poll()
			}
			return nil
		})
		if pl.err != nil {
			return out, pl.err
		}
	}
	if err := comm(func() error { return m.Access.write(s, st.c[i], 0, u32Bytes(ci)) }); err != nil {
		return out, err
	}
	// The program ends here. Check what the store holds, once every rank's
	// writes are in (and before any rank leaves for a collective that would
	// stop it from serving).
	if err := s.Barrier(); err != nil {
		return out, err
	}
	got := make([]uint32, R*n)
	if err := m.Access.read(s, st.c[i], 0, u32Bytes(got)); err != nil {
		return out, err
	}
	if err := s.Barrier(); err != nil {
		return out, err
	}
	var verr error
	for x, w := range st.want {
		if got[x] != w {
			verr = fmt.Errorf("%w: matmul: C[%d][%d] is %d, the serial product gives %d", errVerify, i*R+x/n, x%n, got[x], w)
			break
		}
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, err
	}
	d := m.subBytes(p)
	out.Workload = map[string][]results.WorkItem{
		PhaseMM: append(m.Access.items(st.reads, d, 1, opRead, p), m.Access.items(st.writes, d, 1, opWrite, p)...),
	}
	return out, nil
}

// accessBounds is the workload of "mm" on p ranks (accessBounder) where
// the fewest and where all of its accesses cross: a rank reads A_i and
// the p blocks B_j, each on its own home, so at least p - 1 of them cross
// and at most all p + 1; it writes C_i once, which may stay on it.
func (m MatMul) accessBounds(p int) (lo, hi map[string][]results.WorkItem) {
	d := m.subBytes(p)
	ws := func(reads, writes int) map[string][]results.WorkItem {
		return map[string][]results.WorkItem{PhaseMM: append(m.Access.items(reads, d, 1, opRead, p), m.Access.items(writes, d, 1, opWrite, p)...)}
	}
	return ws(max(p-1, 0), 0), ws(p+1, 1)
}

func init() {
	RegisterProgram(Program{Name: "matmul", Paper: "000 sec. 6.1", OverStore: true,
		Summary: "C = A B by p+2 submatrix accesses, with and without the sync of line (*)",
		New:     func() Config { return new(MatMulConfig) },
		Phases: func(p results.Params) []string {
			return withSync(p, []string{PhaseMM, PhaseCompute}, 1, PhaseSync)
		}})
}

// MatMulConfig is the configuration of 'commcost app matmul'.
type MatMulConfig struct {
	N opts.Counts `flag:"n" default:"256" usage:"matrix order n (p must divide it): a list"`
	AccessFlags
	Sync opts.Bools `flag:"sync" default:"false,true" usage:"synchronise before every read of B (line (*)): a list of false and true"`
}

// Apps are the runs: every n x k x l x sync.
func (c *MatMulConfig) Apps() ([]App, error) {
	return c.each(c.N, func(n int, acc Access) []App {
		var out []App
		for _, s := range c.Sync {
			out = append(out, MatMul{N: n, Access: acc, Sync: s})
		}
		return out
	})
}
