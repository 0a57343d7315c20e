package apps

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The Barnes-Hut N-body simulation of paper 004 (Krick, Meyer auf der
// Heide, Räcke, Vöcking, Westermann), section 3.3, after the
// SPLASH-2 BARNES program (Singh, Weber, Gupta, SPLASH, Computer
// Architecture News 20(1), 1992; Barnes and Hut, Nature 324, 1986) adapted
// to global variables: every body and every cell of the octree is a global
// variable. Every time step runs the paper's six phases, separated by store
// barriers:
//
//  1. load the bodies into the octree (rank 0 empties the root, a barrier,
//     then every rank inserts its bodies: it descends from the root, and
//     to change a cell, locks it, re-reads it and either hangs the body
//     into an empty octant or replaces the body found there by a new cell
//     holding it; a lock per cell);
//  2. the upward pass: centres of mass and costs, SPLASH-2 style. Each rank
//     sums the bodies of the cells it created and adds them to the cell
//     under its lock; the rank whose addition completes a cell (all its
//     non-empty children counted) finishes its centre of mass and adds the
//     cell to its parent the same way;
//  3. costzones partitioning (Singh et al., J. Parallel Distrib. Comput.
//     27, 1995): the bodies in the tree's depth-first order (octants in
//     Morton order), cut into P zones of equal total cost, the cost of a
//     body being its interactions in the previous force phase; zone z goes
//     to rank Zones[z], the processors along the leaves of the mesh
//     decomposition (paper 004, section 3.3), so that bodies close in
//     space land on processors close in the mesh;
//  4. forces: for each of its bodies a rank walks the tree from the root
//     and interacts with a cell of side s whose centre of mass lies at
//     distance d when s < theta d (and the body is outside the cell's
//     box), otherwise opens it; softened gravity, G = 1,
//     a = sum m (x_j - x) / (|x_j - x|^2 + eps^2)^(3/2). The walk (global
//     reads) and the interactions (local computation) are timed apart,
//     the paper's Figure 10 "time spent in local computations". No global
//     variable is written in this phase (paper: "the force computation
//     phase does not include write accesses");
//  5. advance: leapfrog, kick-drift-kick with the acceleration of this
//     step (SPLASH-2: the previous step's last half kick is corrected by
//     (a_new - a_old) dt/2 first), then the body is written back;
//  6. the new size of space: every rank merges its bodies' bounding box
//     into one global variable under its lock.
//
// The initial bodies are SPLASH-2's Plummer model (Aarseth, Henon,
// Wielen, Astron. Astrophys. 37, 1974), total mass 1, drawn per body from
// the seed. Defaults follow SPLASH-2: dt = 0.025, eps = 0.05, theta = 1;
// the paper runs 7 steps and measures the last 5.
//
// Verification (every run): every body lands in exactly one zone in every
// step; the root's mass and cost equal the sums over the bodies; after the
// last step the tree accelerations of a sample of bodies are compared with
// direct summation over all bodies (error limits in bhForceLimits); the
// total energy is computed every step and its drift reported.

// Barnes-Hut phases (record param "phase"). BHForce is the tree walk with
// its global reads; BHForceComp the interactions computed from the walk's
// list (local computation).
const (
	BHLoad      = "load"
	BHCofm      = "cofm"
	BHPartition = "partition"
	BHForce     = "force"
	BHForceComp = "force-comp"
	BHAdvance   = "advance"
	BHSize      = "size"
)

// BarnesHutConfig configures the simulation. Zero values take the
// defaults.
type BarnesHutConfig struct {
	Bodies   int     // N (>= 1)
	Theta    float64 // opening criterion, in (0, 2] (default 1, SPLASH-2's tol)
	Steps    int     // time steps (default 7)
	Measured int     // the last Measured steps are measured (default 5; 0 = all)
	Dt       float64 // time step (default 0.025)
	Eps      float64 // softening length (default 0.05)
	// CellsPerBody sizes each rank's pool of cell variables:
	// ceil(CellsPerBody N / P) + 16 (default 2, SPLASH-2's fcells). The
	// octree of the Plummer model with one body per leaf has about 0.49 N
	// cells; once the zones are local, the rank that creates the most
	// makes about 0.56 N / P (N = 200 P, P = 16 and 64), but in the first
	// step, with bodies dealt out by index, the ranks that reach the empty
	// tree first build its top: 1 cell per body ran out at N = 4000 on 64
	// ranks. The counters cells and cells_max_per_rank report the last
	// step's tree.
	CellsPerBody float64
	// Zones maps zone z to the rank that gets it (a permutation of
	// 0..P-1); nil means zone z on rank z.
	Zones []int
	// Sample is how many bodies the forces are checked for against direct
	// summation (default 64, at most N).
	Sample int
	// Probe, if set, is entered at each phase of a measured step ("" for
	// unmeasured steps, set-up and verification). The phases are entered
	// as BHLoad, BHCofm, BHPartition, BHForce (walk and interactions),
	// BHAdvance, BHSize.
	Probe Probe
}

func (c BarnesHutConfig) withDefaults() BarnesHutConfig {
	if c.Theta == 0 {
		c.Theta = 1
	}
	if c.Steps == 0 {
		c.Steps = 7
	}
	if c.Measured == 0 {
		c.Measured = min(5, c.Steps)
	}
	if c.Dt == 0 {
		c.Dt = 0.025
	}
	if c.Eps == 0 {
		c.Eps = 0.05
	}
	if c.CellsPerBody == 0 {
		c.CellsPerBody = DefaultCellsPerBody
	}
	if c.Sample == 0 {
		c.Sample = 64
	}
	c.Sample = min(c.Sample, c.Bodies)
	return c
}

// Check reports a configuration that cannot run on p ranks.
func (c BarnesHutConfig) Check(p int) error {
	d := c.withDefaults()
	switch {
	case d.Bodies < 1:
		return fmt.Errorf("bodies N = %d: must be >= 1", d.Bodies)
	case !(d.Theta > 0 && d.Theta <= 2):
		return fmt.Errorf("opening criterion theta = %v: must be in (0, 2]", d.Theta)
	case d.Steps < 1:
		return fmt.Errorf("time steps = %d: must be >= 1", d.Steps)
	case d.Measured < 0 || d.Measured > d.Steps:
		return fmt.Errorf("measured steps = %d: must be in 0..%d (the steps)", d.Measured, d.Steps)
	case !(d.Dt > 0 && d.Dt <= MaxDt):
		return fmt.Errorf("time step dt = %v: must be in (0, %g]", d.Dt, MaxDt)
	case !(d.Eps > 0 && d.Eps <= MaxEps):
		return fmt.Errorf("softening eps = %v: must be in (0, %g]", d.Eps, MaxEps)
	case !(d.CellsPerBody > 0 && d.CellsPerBody <= MaxCellsPerBody):
		return fmt.Errorf("cells per body = %v: must be in (0, %d]", d.CellsPerBody, MaxCellsPerBody)
	case d.Sample < 0:
		return fmt.Errorf("force sample = %d: must be >= 0", d.Sample)
	}
	if d.Zones != nil {
		if len(d.Zones) != p {
			return fmt.Errorf("zone placement lists %d ranks, want %d", len(d.Zones), p)
		}
		seen := make([]bool, p)
		for z, r := range d.Zones {
			if r < 0 || r >= p || seen[r] {
				return fmt.Errorf("zone placement is not a permutation of the ranks (zone %d on rank %d)", z, r)
			}
			seen[r] = true
		}
	}
	if n := d.variables(p); n > math.MaxInt32 {
		if d.CellsTooMany(p) {
			return fmt.Errorf("cells per body = %v with N = %d bodies on %d ranks: %d variables do not fit the cell references (int32); want cells per body <= %s", d.CellsPerBody, d.Bodies, p, n, FormatCells(d.MaxCellsPerBody(p)))
		}
		return fmt.Errorf("bodies N = %d on %d ranks: %d variables do not fit the cell references (int32); want N <= %d", d.Bodies, p, n, d.MaxBodies(p))
	}
	return nil
}

// DefaultCellsPerBody is CellsPerBody's default.
const DefaultCellsPerBody = 2

// The ranges of the simulation's physical parameters, in the Plummer
// model's units (total mass 1, scale radius 9 pi / 16, about 1.77, and so
// a dynamical time rsc^1.5, about 2.4):
//   - the time step dt is in (0, MaxDt]: 40 of SPLASH-2's 0.025; a step
//     near a dynamical time no longer follows an orbit;
//   - the softening eps is in (0, MaxEps] (0 in a BarnesHutConfig is its
//     default): 20 of SPLASH-2's 0.05; near the scale radius it smooths
//     the model's gravity away;
//   - the cells per body are in (0, MaxCellsPerBody]: the whole tree has
//     about 0.5 cells per body, so a rank's pool of 1024 N / P cells
//     holds the whole tree for up to 2048 ranks; the bound keeps the
//     pools within a fixed multiple of the bodies' memory.
const (
	MaxDt           = 1.0
	MaxEps          = 1.0
	MaxCellsPerBody = 1024
)

// CellsTooMany reports whether the cells per body, not N, keep a run on
// p ranks out of the cell references: no N fits with them, or N would fit
// with the default.
func (c BarnesHutConfig) CellsTooMany(p int) bool {
	d := c.withDefaults()
	if d.variables(p) <= math.MaxInt32 {
		return false
	}
	if d.MaxBodies(p) < 1 {
		return true
	}
	def := d
	def.CellsPerBody = DefaultCellsPerBody
	return d.CellsPerBody > DefaultCellsPerBody && def.variables(p) <= math.MaxInt32
}

// MaxCellsPerBody is the largest cells per body (to 6 digits, rounded
// down) whose variables for N bodies on p ranks the cell references
// address, 0 if none does: each rank's pool, ceil(c N / p) + 16, may hold
// at most q = floor((2G-1 - N - 2) / p) - 16 cells. It is at most the
// range's bound, the package's MaxCellsPerBody.
func (c BarnesHutConfig) MaxCellsPerBody(p int) float64 {
	return min(c.maxCellsPerBody(p), MaxCellsPerBody)
}

func (c BarnesHutConfig) maxCellsPerBody(p int) float64 {
	d := c.withDefaults()
	q := (int64(math.MaxInt32)-int64(d.Bodies)-2)/int64(p) - 16
	if q < 1 {
		return 0
	}
	v := float64(q) * float64(p) / float64(d.Bodies)
	digits := 5 - int(math.Floor(math.Log10(v)))
	scale := math.Pow(10, float64(digits))
	// Printed back through 'f' so that the bound reads as typed (20.4748,
	// not 20.474800000000002).
	r, _ := strconv.ParseFloat(strconv.FormatFloat(math.Floor(v*scale)/scale, 'f', max(digits, 0), 64), 64)
	return r
}

// FormatCells prints a cells per body bound in plain digits.
func FormatCells(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// variables is the number of store variables of a run on p ranks: the
// bodies, two more, and every rank's pool of cells; a cell reference
// (int32) addresses them all.
func (c BarnesHutConfig) variables(p int) int64 {
	return int64(c.Bodies) + 2 + int64(p)*int64(c.pool(p))
}

// MaxBodies is the largest N whose variables on p ranks the cell
// references address.
func (c BarnesHutConfig) MaxBodies(p int) int {
	d := c.withDefaults()
	lo, hi := 0, math.MaxInt32 // lo fits (or is 0), hi+1 does not
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		d.Bodies = mid
		if d.variables(p) <= math.MaxInt32 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// pool is the number of cell variables of each rank.
func (c BarnesHutConfig) pool(p int) int {
	cells := math.Ceil(c.CellsPerBody * float64(c.Bodies) / float64(p))
	// Past the references' range the count saturates there, so that a
	// cells per body such as 1e300 is refused by Check instead of
	// wrapping to a negative pool.
	return int(min(cells, math.MaxInt32)) + 16
}

// BarnesHut is the application over a global-variable store.
type BarnesHut struct {
	BarnesHutConfig
}

// NewBarnesHut returns the application.
func NewBarnesHut(cfg BarnesHutConfig) *BarnesHut { return &BarnesHut{BarnesHutConfig: cfg} }

func (b *BarnesHut) Name() string { return "barneshut" }

func (b *BarnesHut) Params() results.Params {
	d := b.withDefaults()
	// dt and eps change the orbits, so runs of two time steps or
	// softenings are two points, not one (compare, report).
	return results.Params{"bodies": d.Bodies, "theta": d.Theta, "steps": d.Steps, "measured_steps": d.Measured, "dt": d.Dt, "eps": d.Eps}
}

// Check reports a configuration that cannot run on p ranks.
func (b *BarnesHut) Check(p int) error { return b.BarnesHutConfig.Check(p) }

// Setup creates the variables (collective; apps.Setupper): the N bodies,
// the root and every rank's pool of cells, and the size of space, in that
// order; every run of one measurement uses them.
func (b *BarnesHut) Setup(env Env) (any, error) {
	if err := needStore(env, b.Name()); err != nil {
		return nil, err
	}
	cfg := b.withDefaults()
	p := env.Comm.Size()
	if err := cfg.Check(p); err != nil {
		return nil, err
	}
	n := cfg.Bodies
	ncell := 1 + p*cfg.pool(p)
	// One list of handles for all the goroutine ranks of mpi/local
	// (createVars): N + 2N + 16P handles per rank were most of the memory
	// of a large count-based run.
	return createVars(env, n+ncell+1, func(i int) string {
		switch {
		case i < n:
			return fmt.Sprintf("bh/%d/b%d", n, i)
		case i < n+ncell:
			return fmt.Sprintf("bh/%d/c%d", n, i-n)
		}
		return fmt.Sprintf("bh/%d/space", n)
	}, func(i int) int {
		switch {
		case i < n:
			return bhBodyBytes
		case i < n+ncell:
			return bhCellBytes
		}
		return bhSpaceBytes
	})
}

// bhRun is one rank's state during a run.
type bhRun struct {
	cfg   BarnesHutConfig
	c     mpi.Comm
	s     globalvar.Store
	bodyV []globalvar.Var
	cellV []globalvar.Var
	space globalvar.Var
	me, p int
	zone  int
	pool  int   // cells per rank
	base  int   // this rank's first pool cell (cell 0 is the root)
	used  int   // pool cells used in this step
	mine  []int // bodies this rank owns (loads, computes, advances)
	buf   []byte

	rmin  [3]float64 // space of this step: the cube [rmin, rmin + rsize)
	rsize float64

	// Results of the force phase for mine (parallel slices).
	acc    [][3]float64
	phi    []float64
	work   []float64
	forceP [][3]float64 // positions the forces were computed at
	forceM []float64    // and the bodies' masses

	list [][4]float64 // interaction list of the body being computed
}

// Run simulates once (collective over env.Comm and env.Store).
func (b *BarnesHut) Run(env Env) (Outcome, error) {
	var out Outcome
	c, s := env.Comm, env.Store
	if err := needStore(env, b.Name()); err != nil {
		return out, err
	}
	cfg := b.withDefaults()
	p := c.Size()
	if err := cfg.Check(p); err != nil {
		return out, err
	}
	n := cfg.Bodies
	pool := cfg.pool(p)
	ncell := 1 + p*pool
	vars, err := stateOf[[]globalvar.Var](&env, b)
	if err != nil {
		return out, err
	}
	if len(vars) != n+ncell+1 {
		return out, fmt.Errorf("barneshut: Env.State holds %d variables, this configuration has %d (the state of another configuration?)", len(vars), n+ncell+1)
	}
	r := &bhRun{cfg: cfg, c: c, s: s, bodyV: vars[:n], cellV: vars[n : n+ncell], space: vars[n+ncell],
		me: c.Rank(), p: p, pool: pool, buf: make([]byte, bhBodyBytes)}
	r.zone = r.me
	if cfg.Zones != nil {
		r.zone = slices.Index(cfg.Zones, r.me)
	}
	r.base = 1 + r.me*pool
	if err := r.setup(env.Seed); err != nil {
		return out, err
	}
	kin := make([]float64, cfg.Steps)
	pot := make([]float64, cfg.Steps)
	zoned := make([]float64, cfg.Steps) // bodies per zone, summed to N below
	rootMass := make([]float64, cfg.Steps)
	var interactions float64
	first := cfg.Steps - cfg.Measured
	for step := 0; step < cfg.Steps; step++ {
		measured := step >= first
		section := func(name string) {
			if measured {
				enter(cfg.Probe, name)
			} else {
				enter(cfg.Probe, "")
			}
		}
		timed := func(name, kind string, fn func() error) error {
			if measured {
				return out.Phases.Time(c, name, kind, fn)
			}
			return fn()
		}
		section(BHLoad)
		if err := timed(BHLoad, KindComm, func() error { return r.load(step) }); err != nil {
			return out, err
		}
		section(BHCofm)
		if err := timed(BHCofm, KindComm, r.upward); err != nil {
			return out, err
		}
		section(BHPartition)
		if err := timed(BHPartition, KindComm, func() error {
			m, err := r.costzones()
			rootMass[step] = m
			return err
		}); err != nil {
			return out, err
		}
		zoned[step] = float64(len(r.mine))
		section(BHForce)
		walkSec, compSec, inter, err := r.forces()
		if err != nil {
			return out, err
		}
		if measured {
			out.Phases.Add(BHForce, KindComm, walkSec)
			out.Phases.Add(BHForceComp, KindComp, compSec)
			interactions += inter
		}
		section(BHAdvance)
		if err := timed(BHAdvance, KindComm, func() error {
			k, pe, err := r.advance(step)
			kin[step], pot[step] = k, pe
			return err
		}); err != nil {
			return out, err
		}
		section(BHSize)
		if err := timed(BHSize, KindComm, func() error { return r.newSpace(int64(step) + 2) }); err != nil {
			return out, err
		}
	}
	enter(cfg.Probe, "")
	return r.verify(out, kin, pot, zoned, rootMass, interactions)
}

func (r *bhRun) readBody(i int, b *bhBody) error {
	if err := r.s.Read(r.bodyV[i], 0, r.buf[:bhBodyBytes]); err != nil {
		return err
	}
	b.get(r.buf)
	return nil
}

func (r *bhRun) writeBody(i int, b *bhBody) error {
	b.put(r.buf)
	return r.s.Write(r.bodyV[i], 0, r.buf[:bhBodyBytes])
}

func (r *bhRun) readCell(i int, c *bhCell) error {
	if err := r.s.Read(r.cellV[i], 0, r.buf[:bhCellBytes]); err != nil {
		return err
	}
	c.get(r.buf)
	return nil
}

func (r *bhRun) writeCell(i int, c *bhCell) error {
	c.put(r.buf)
	return r.s.Write(r.cellV[i], 0, r.buf[:bhCellBytes])
}

// setup draws the Plummer model (each rank its block of bodies, then the
// centre-of-mass correction from global sums), writes the bodies (the
// owner holds the only copy) and computes the first size of space.
func (r *bhRun) setup(seed int64) error {
	n := r.cfg.Bodies
	lo, hi := r.zone*n/r.p, (r.zone+1)*n/r.p
	r.mine = r.mine[:0]
	bodies := make([]bhBody, 0, hi-lo)
	var sum [7]float64 // mass, mass*pos, mass*vel
	for i := lo; i < hi; i++ {
		b := plummerBody(seed, i, n)
		bodies = append(bodies, b)
		sum[0] += b.mass
		for d := 0; d < 3; d++ {
			sum[1+d] += b.mass * b.pos[d]
			sum[4+d] += b.mass * b.vel[d]
		}
		r.mine = append(r.mine, i)
	}
	tot := make([]float64, len(sum))
	if err := r.c.AllreduceFloat64s(sum[:], tot, mpi.OpSum); err != nil {
		return err
	}
	for k := range bodies {
		for d := 0; d < 3; d++ {
			bodies[k].pos[d] -= tot[1+d] / tot[0]
			bodies[k].vel[d] -= tot[4+d] / tot[0]
		}
		if err := r.writeBody(lo+k, &bodies[k]); err != nil {
			return err
		}
	}
	if err := r.s.Barrier(); err != nil {
		return err
	}
	return r.newSpace(1)
}

// newSpace is phase 6: merge this rank's bounding box into the space
// variable under its lock; the first rank to arrive with a new stamp
// replaces the old box.
func (r *bhRun) newSpace(stamp int64) error {
	if len(r.mine) > 0 {
		var mn, mx [3]float64
		for d := range mn {
			mn[d], mx[d] = math.Inf(1), math.Inf(-1)
		}
		var b bhBody
		for _, i := range r.mine {
			if err := r.readBody(i, &b); err != nil {
				return err
			}
			for d := 0; d < 3; d++ {
				mn[d], mx[d] = math.Min(mn[d], b.pos[d]), math.Max(mx[d], b.pos[d])
			}
		}
		if err := r.s.Lock(r.space); err != nil {
			return err
		}
		var sp bhSpace
		if err := r.s.Read(r.space, 0, r.buf[:bhSpaceBytes]); err != nil {
			return err
		}
		sp.get(r.buf)
		if sp.stamp != stamp {
			sp = bhSpace{stamp: stamp, min: mn, max: mx}
		} else {
			for d := 0; d < 3; d++ {
				sp.min[d], sp.max[d] = math.Min(sp.min[d], mn[d]), math.Max(sp.max[d], mx[d])
			}
		}
		sp.put(r.buf)
		if err := r.s.Write(r.space, 0, r.buf[:bhSpaceBytes]); err != nil {
			return err
		}
		if err := r.s.Unlock(r.space); err != nil {
			return err
		}
	}
	return r.s.Barrier()
}

// load is phase 1: read the size of space, empty the root (rank 0), and
// insert this rank's bodies.
func (r *bhRun) load(step int) error {
	var sp bhSpace
	if err := r.s.Read(r.space, 0, r.buf[:bhSpaceBytes]); err != nil {
		return err
	}
	sp.get(r.buf)
	if sp.stamp != int64(step)+1 {
		return fmt.Errorf("barneshut: step %d: the size of space carries stamp %d, want %d (phase 6 incomplete)", step, sp.stamp, step+1)
	}
	// A cube around the bounding box, slightly larger so that no body
	// sits on its upper faces (SPLASH-2: 1.00002 x the largest side).
	side := 0.0
	for d := 0; d < 3; d++ {
		side = math.Max(side, sp.max[d]-sp.min[d])
	}
	r.rsize = math.Max(side*1.00002, 1e-9)
	for d := 0; d < 3; d++ {
		r.rmin[d] = (sp.min[d]+sp.max[d])/2 - r.rsize/2
	}
	// Every rank reads the same space, so all stop here alike when the
	// integration has diverged (a time step far too large sends bodies to
	// infinity, and an octree of infinite space never separates them).
	if !(r.rsize < math.MaxFloat64) || math.IsNaN(r.rmin[0]+r.rmin[1]+r.rmin[2]) {
		return fmt.Errorf("barneshut: step %d: the bodies left finite space (bounding box %v to %v): the integration diverged; lower the time step --dt (SPLASH-2: 0.025)", step, sp.min, sp.max)
	}
	if r.me == 0 {
		root := bhCell{parent: -1}
		if err := r.writeCell(0, &root); err != nil {
			return err
		}
	}
	if err := r.s.Barrier(); err != nil {
		return err
	}
	r.used = 0
	var b bhBody
	for _, i := range r.mine {
		if err := r.readBody(i, &b); err != nil {
			return err
		}
		if err := r.insert(i, b.pos); err != nil {
			return err
		}
	}
	return r.s.Barrier()
}

// octant returns the child index of pos in a cell centred at ctr and the
// child's centre (half = the child's half side).
func octant(pos, ctr [3]float64, half float64) (int, [3]float64) {
	k := 0
	c := ctr
	for d := 0; d < 3; d++ {
		if pos[d] >= ctr[d] {
			k |= 1 << d
			c[d] += half
		} else {
			c[d] -= half
		}
	}
	return k, c
}

// insert hangs body i at pos into the tree (SPLASH loadtree with a lock
// per cell).
func (r *bhRun) insert(i int, pos [3]float64) error {
	node := 0
	half := r.rsize / 2
	var ctr [3]float64
	for d := range ctr {
		ctr[d] = r.rmin[d] + half
	}
	var cell bhCell
	for {
		if err := r.readCell(node, &cell); err != nil {
			return err
		}
		oct, cctr := octant(pos, ctr, half/2)
		if ch := cell.child[oct]; ch < 0 {
			node, ctr, half = ch.cell(), cctr, half/2
			continue
		}
		// The octant is empty or holds a body: change the cell under its
		// lock, after reading it again.
		if err := r.s.Lock(r.cellV[node]); err != nil {
			return err
		}
		if err := r.readCell(node, &cell); err != nil {
			return err
		}
		ch := cell.child[oct]
		switch {
		case ch < 0: // another rank subdivided it meanwhile
			if err := r.s.Unlock(r.cellV[node]); err != nil {
				return err
			}
			node, ctr, half = ch.cell(), cctr, half/2
			continue
		case ch == 0:
			cell.child[oct] = bodyRef(i)
			cell.nkids++
			if err := r.writeCell(node, &cell); err != nil {
				return err
			}
			return r.s.Unlock(r.cellV[node])
		}
		// A body is there: a new cell of this rank takes it.
		if cell.level+1 >= bhMaxLevel {
			_ = r.s.Unlock(r.cellV[node])
			return fmt.Errorf("barneshut: bodies %d and %d coincide (the octree reached depth %d)", i, ch.body(), bhMaxLevel)
		}
		if r.used >= r.pool {
			_ = r.s.Unlock(r.cellV[node])
			return fmt.Errorf("barneshut: rank %d used all %d cells of its pool; raise the cells per body (now %v)", r.me, r.pool, r.cfg.CellsPerBody)
		}
		nc := r.base + r.used
		r.used++
		var other bhBody
		if err := r.readBody(ch.body(), &other); err != nil {
			return err
		}
		sub := bhCell{parent: int32(node), level: cell.level + 1, nkids: 1}
		o2, _ := octant(other.pos, cctr, half/4)
		sub.child[o2] = ch
		if err := r.writeCell(nc, &sub); err != nil {
			return err
		}
		cell.child[oct] = cellRef(nc)
		if err := r.writeCell(node, &cell); err != nil {
			return err
		}
		if err := r.s.Unlock(r.cellV[node]); err != nil {
			return err
		}
		node, ctr, half = nc, cctr, half/2
	}
}

// myCells are the cells this rank created in this step (the root belongs
// to rank 0).
func (r *bhRun) myCells() []int {
	out := make([]int, 0, r.used+1)
	for k := r.used - 1; k >= 0; k-- {
		out = append(out, r.base+k)
	}
	if r.me == 0 {
		out = append(out, 0)
	}
	return out
}

// upward is phase 2 (see the type's documentation).
func (r *bhRun) upward() error {
	var cell bhCell
	var b bhBody
	for _, ci := range r.myCells() {
		if err := r.readCell(ci, &cell); err != nil {
			return err
		}
		var m, cost float64
		var mx [3]float64
		var count int32
		for _, ch := range cell.child {
			if ch <= 0 {
				continue
			}
			if err := r.readBody(ch.body(), &b); err != nil {
				return err
			}
			m += b.mass
			cost += b.cost
			for d := 0; d < 3; d++ {
				mx[d] += b.mass * b.pos[d]
			}
			count++
		}
		if count > 0 {
			if err := r.contribute(ci, m, mx, cost, count); err != nil {
				return err
			}
		}
	}
	return r.s.Barrier()
}

// contribute adds mass m with first moment mx and cost to cell ci, as
// count of its children; the contributor that completes the cell finishes
// its centre of mass and goes on with the parent.
func (r *bhRun) contribute(ci int, m float64, mx [3]float64, cost float64, count int32) error {
	var cell bhCell
	for {
		v := r.cellV[ci]
		if err := r.s.Lock(v); err != nil {
			return err
		}
		if err := r.readCell(ci, &cell); err != nil {
			return err
		}
		cell.mass += m
		cell.cost += cost
		for d := 0; d < 3; d++ {
			cell.cm[d] += mx[d]
		}
		cell.got += count
		if cell.got > cell.nkids {
			_ = r.s.Unlock(v)
			return fmt.Errorf("barneshut: cell %d counted %d contributions for %d children", ci, cell.got, cell.nkids)
		}
		done := cell.got == cell.nkids
		if done {
			m = cell.mass
			mx = cell.cm
			for d := 0; d < 3; d++ {
				cell.cm[d] /= cell.mass
			}
			cost = cell.cost
		}
		if err := r.writeCell(ci, &cell); err != nil {
			return err
		}
		if err := r.s.Unlock(v); err != nil {
			return err
		}
		if !done || cell.parent < 0 {
			return nil
		}
		ci, count = int(cell.parent), 1
	}
}

// costzones is phase 3: this rank's zone of the bodies in tree order. It
// returns the root's mass (checked against the bodies' at the end).
func (r *bhRun) costzones() (float64, error) {
	var root bhCell
	if err := r.readCell(0, &root); err != nil {
		return 0, err
	}
	if root.got != root.nkids {
		return 0, fmt.Errorf("barneshut: the upward pass left the root with %d of %d children counted", root.got, root.nkids)
	}
	total := root.cost
	lo := total * float64(r.zone) / float64(r.p)
	hi := total * float64(r.zone+1) / float64(r.p)
	r.mine = r.mine[:0]
	x := 0.0
	var walk func(ci int, cell *bhCell) error
	walk = func(ci int, cell *bhCell) error {
		var b bhBody
		var sub bhCell
		for _, ch := range cell.child {
			if x >= hi {
				return nil
			}
			switch {
			case ch > 0:
				if err := r.readBody(ch.body(), &b); err != nil {
					return err
				}
				if x >= lo {
					r.mine = append(r.mine, ch.body())
				}
				x += b.cost
			case ch < 0:
				if err := r.readCell(ch.cell(), &sub); err != nil {
					return err
				}
				if x+sub.cost <= lo {
					x += sub.cost
					continue
				}
				if err := walk(ch.cell(), &sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(0, &root); err != nil {
		return 0, err
	}
	return root.mass, r.s.Barrier()
}

// forces is phase 4 for this rank's bodies: the tree walk (global reads)
// builds each body's interaction list, the interactions are computed from
// it. It returns the seconds of both parts and the interactions.
func (r *bhRun) forces() (walkSec, compSec, interactions float64, err error) {
	n := len(r.mine)
	r.acc = make([][3]float64, n)
	r.phi = make([]float64, n)
	r.work = make([]float64, n)
	r.forceP = make([][3]float64, n)
	r.forceM = make([]float64, n)
	theta2 := r.cfg.Theta * r.cfg.Theta
	eps2 := r.cfg.Eps * r.cfg.Eps
	type item struct {
		ref  bhRef
		ctr  [3]float64
		half float64
	}
	var stack []item
	var b, o bhBody
	var cell bhCell
	var rootCtr [3]float64
	for d := range rootCtr {
		rootCtr[d] = r.rmin[d] + r.rsize/2
	}
	for k, bi := range r.mine {
		t0 := r.c.Wtime()
		if err := r.readBody(bi, &b); err != nil {
			return 0, 0, 0, err
		}
		pos := b.pos
		r.forceP[k], r.forceM[k] = pos, b.mass
		r.list = r.list[:0]
		stack = append(stack[:0], item{cellRef(0), rootCtr, r.rsize / 2})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if it.ref > 0 {
				j := it.ref.body()
				if j == bi {
					continue
				}
				if err := r.readBody(j, &o); err != nil {
					return 0, 0, 0, err
				}
				r.list = append(r.list, [4]float64{o.mass, o.pos[0], o.pos[1], o.pos[2]})
				continue
			}
			if err := r.readCell(it.ref.cell(), &cell); err != nil {
				return 0, 0, 0, err
			}
			side := 2 * it.half
			dx, dy, dz := cell.cm[0]-pos[0], cell.cm[1]-pos[1], cell.cm[2]-pos[2]
			inside := math.Abs(pos[0]-it.ctr[0]) <= it.half && math.Abs(pos[1]-it.ctr[1]) <= it.half && math.Abs(pos[2]-it.ctr[2]) <= it.half
			if !inside && side*side < theta2*(dx*dx+dy*dy+dz*dz) {
				r.list = append(r.list, [4]float64{cell.mass, cell.cm[0], cell.cm[1], cell.cm[2]})
				continue
			}
			for oct, ch := range cell.child {
				if ch == 0 {
					continue
				}
				ctr := it.ctr
				q := it.half / 2
				for d := 0; d < 3; d++ {
					if oct>>d&1 == 1 {
						ctr[d] += q
					} else {
						ctr[d] -= q
					}
				}
				stack = append(stack, item{ch, ctr, q})
			}
		}
		t1 := r.c.Wtime()
		var a [3]float64
		var phi float64
		for _, e := range r.list {
			dx, dy, dz := e[1]-pos[0], e[2]-pos[1], e[3]-pos[2]
			d2 := dx*dx + dy*dy + dz*dz + eps2
			inv := 1 / math.Sqrt(d2)
			f := e[0] * inv * inv * inv
			a[0] += f * dx
			a[1] += f * dy
			a[2] += f * dz
			phi -= e[0] * inv
		}
		r.acc[k], r.phi[k] = a, phi
		r.work[k] = float64(len(r.list))
		interactions += float64(len(r.list))
		t2 := r.c.Wtime()
		walkSec += t1 - t0
		compSec += t2 - t1
	}
	t0 := r.c.Wtime()
	err = r.s.Barrier()
	walkSec += r.c.Wtime() - t0
	return walkSec, compSec, interactions, err
}

// advance is phase 5: leapfrog with this step's accelerations; it returns
// this rank's kinetic and potential energy at the force phase's time.
func (r *bhRun) advance(step int) (kin, pot float64, err error) {
	dt := r.cfg.Dt
	var b bhBody
	for k, bi := range r.mine {
		if err := r.readBody(bi, &b); err != nil {
			return 0, 0, err
		}
		a := r.acc[k]
		if step > 0 {
			// The previous step's last half kick used the old
			// acceleration; SPLASH-2 corrects it with the new one.
			for d := 0; d < 3; d++ {
				b.vel[d] += (a[d] - b.acc[d]) * dt / 2
			}
		}
		v2 := b.vel[0]*b.vel[0] + b.vel[1]*b.vel[1] + b.vel[2]*b.vel[2]
		kin += b.mass * v2 / 2
		pot += b.mass * r.phi[k] / 2
		for d := 0; d < 3; d++ {
			b.vel[d] += a[d] * dt / 2
			b.pos[d] += b.vel[d] * dt
			b.vel[d] += a[d] * dt / 2
		}
		b.acc, b.phi = a, r.phi[k]
		b.cost = math.Max(1, r.work[k])
		if err := r.writeBody(bi, &b); err != nil {
			return 0, 0, err
		}
	}
	return kin, pot, r.s.Barrier()
}
