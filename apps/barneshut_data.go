package apps

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// The data of the Barnes-Hut program (barneshut.go) in its global
// variables, and its initial bodies.

// Body and cell layouts in their global variables (little-endian).
const (
	bhBodyBytes  = 96 // pos[3] vel[3] acc[3] mass cost phi, float64
	bhCellBytes  = 88 // child[8] parent nkids got level int32; mass cm[3] cost float64
	bhSpaceBytes = 56 // stamp int64; min[3] max[3] float64
	bhMaxLevel   = 60 // deeper means coinciding bodies
)

type bhBody struct {
	pos, vel, acc   [3]float64
	mass, cost, phi float64
}

func (b *bhBody) put(buf []byte) {
	v := [12]float64{b.pos[0], b.pos[1], b.pos[2], b.vel[0], b.vel[1], b.vel[2], b.acc[0], b.acc[1], b.acc[2], b.mass, b.cost, b.phi}
	for i, f := range v {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(f))
	}
}

func (b *bhBody) get(buf []byte) {
	f := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])) }
	b.pos = [3]float64{f(0), f(1), f(2)}
	b.vel = [3]float64{f(3), f(4), f(5)}
	b.acc = [3]float64{f(6), f(7), f(8)}
	b.mass, b.cost, b.phi = f(9), f(10), f(11)
}

// A child reference: 0 empty, k > 0 body k-1, k < 0 cell -k-1.
type bhRef int32

func bodyRef(i int) bhRef { return bhRef(i + 1) }
func cellRef(i int) bhRef { return bhRef(-i - 1) }
func (r bhRef) body() int { return int(r) - 1 }
func (r bhRef) cell() int { return int(-r) - 1 }

type bhCell struct {
	child             [8]bhRef
	parent            int32 // cell index, -1 at the root
	nkids, got, level int32
	mass              float64
	cm                [3]float64 // during the upward pass: sum of mass * position
	cost              float64
}

func (c *bhCell) put(buf []byte) {
	le := binary.LittleEndian
	for i, r := range c.child {
		le.PutUint32(buf[4*i:], uint32(r))
	}
	le.PutUint32(buf[32:], uint32(c.parent))
	le.PutUint32(buf[36:], uint32(c.nkids))
	le.PutUint32(buf[40:], uint32(c.got))
	le.PutUint32(buf[44:], uint32(c.level))
	for i, f := range [5]float64{c.mass, c.cm[0], c.cm[1], c.cm[2], c.cost} {
		le.PutUint64(buf[48+8*i:], math.Float64bits(f))
	}
}

func (c *bhCell) get(buf []byte) {
	le := binary.LittleEndian
	for i := range c.child {
		c.child[i] = bhRef(int32(le.Uint32(buf[4*i:])))
	}
	c.parent = int32(le.Uint32(buf[32:]))
	c.nkids = int32(le.Uint32(buf[36:]))
	c.got = int32(le.Uint32(buf[40:]))
	c.level = int32(le.Uint32(buf[44:]))
	f := func(i int) float64 { return math.Float64frombits(le.Uint64(buf[48+8*i:])) }
	c.mass, c.cm, c.cost = f(0), [3]float64{f(1), f(2), f(3)}, f(4)
}

type bhSpace struct {
	stamp    int64
	min, max [3]float64
}

func (s *bhSpace) put(buf []byte) {
	binary.LittleEndian.PutUint64(buf, uint64(s.stamp))
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint64(buf[8+8*i:], math.Float64bits(s.min[i]))
		binary.LittleEndian.PutUint64(buf[32+8*i:], math.Float64bits(s.max[i]))
	}
}

func (s *bhSpace) get(buf []byte) {
	s.stamp = int64(binary.LittleEndian.Uint64(buf))
	for i := 0; i < 3; i++ {
		s.min[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8+8*i:]))
		s.max[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[32+8*i:]))
	}
}

// plummerBody draws body i of the N-body Plummer model as SPLASH-2's
// testdata does (before the centre-of-mass correction): radius from the
// cumulative mass profile cut at 0.999 of the mass, speed by von Neumann
// rejection from g(q) = q^2 (1 - q^2)^(7/2), isotropic directions, in
// units where the total mass is 1 and the scale radius 9 pi / 16.
func plummerBody(seed int64, i, n int) bhBody {
	const mfrac = 0.999
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)+0x62617273))
	rsc := 9 * math.Pi / 16
	vsc := math.Sqrt(1 / rsc)
	var b bhBody
	b.mass = 1 / float64(n)
	b.cost = 1
	r := 1 / math.Sqrt(math.Pow(rng.Float64()*mfrac, -2.0/3)-1)
	b.pos = shell(rng, rsc*r)
	var x, y float64
	for {
		x, y = rng.Float64(), 0.1*rng.Float64()
		if y <= x*x*math.Pow(1-x*x, 3.5) {
			break
		}
	}
	v := math.Sqrt2 * x / math.Pow(1+r*r, 0.25)
	b.vel = shell(rng, vsc*v)
	return b
}

// shell is a uniformly random vector of length r.
func shell(rng *rand.Rand, r float64) [3]float64 {
	for {
		v := [3]float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1}
		s := v[0]*v[0] + v[1]*v[1] + v[2]*v[2]
		if s > 0 && s <= 1 {
			f := r / math.Sqrt(s)
			return [3]float64{v[0] * f, v[1] * f, v[2] * f}
		}
	}
}
