package emulate

import (
	"fmt"
	"math/rand/v2"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Bench names of the records the drivers produce. The access patterns are
// paper 000's, so their records are the patterns package's (same bench,
// same parameters from patterns.KKAccess.Params and patterns.KAccess.Params)
// with the network added: a model fitted to either reads both.
const (
	BenchKKAccess = patterns.BenchKKAccess // params k, l, realised r, op, network; counter r_asked
	BenchKAccess  = patterns.BenchKAccess  // params k, l, realised h, a, es, op, network; counter h_asked
	BenchSplit    = "packetsplit"          // params ints, bytes, version, op, network
)

// IntBytes is the size of the paper's "integer" (32-bit Transputer word),
// used to turn the variable sizes of Fig. 14 (16 ... 64K integers) into bytes.
const IntBytes = 4

// KKPoint is one k-k-access (paper 000, Definition 2): a portion R of the
// application ranks each access K variables on K distinct modules, with
// packets of L bytes; in each of the K steps the accessing ranks' modules
// form a partial permutation. Op is "read" or "write".
type KKPoint struct {
	K, L int
	R    float64
	Op   string
}

// KAPoint is one k-access series (paper 000, sections 5.1-5.3): A
// successive k-accesses without synchronisation, each with K packets of L
// bytes per rank, in which a portion H of the ranks hits one module in one of
// the K steps (H = 1/p is a k-k-access). With ES the hot module is the same
// in all A k-accesses ("es" in the paper's figures), otherwise it changes.
type KAPoint struct {
	K, L int
	H    float64
	A    int
	ES   bool
}

// SplitPoint is one access of Fig. 14: every application rank reads (or
// writes) Ints integers of a variable on a distinct module (r = 1), cut into
// packets by Version.
type SplitPoint struct {
	Ints    int
	Version SplitVersion
	Op      string
}

// BenchConfig configures the drivers.
type BenchConfig struct {
	Reps patterns.Reps // repetitions; zero value = patterns defaults
	Seed int64         // seeds the access patterns (same on every rank)
	Meta results.Meta  // copied into every record
}

// BenchVars returns the drivers' variables: one per module of at least size
// bytes, variable m on module m (direct placement), created collectively on
// first need. A sweep should call it once with its largest size first, so
// that growing sizes do not leave smaller sets behind in the modules.
func (s *Store) BenchVars(size int) ([]globalvar.Var, error) {
	if len(s.bench) > 0 && s.benchSize >= size {
		return s.bench, nil
	}
	size = max(size, s.benchSize, 64)
	vars := make([]globalvar.Var, s.Apps())
	for m := range vars {
		v, err := s.CreateAt(fmt.Sprintf("emulate.bench.%d.%d", len(s.vars), m), size, m)
		if err != nil {
			return nil, err
		}
		vars[m] = v
	}
	s.bench, s.benchSize = vars, size
	return vars, nil
}

// pointRNG gives the same generator on every rank for one repetition of one
// point.
func pointRNG(seed int64, point, rep uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x5eed, point*1_000_003+rep))
}

// kkDestinations draws a k-k-access: the accessing ranks (a random subset
// of max(1, round(r p)) ranks) and, for each of the k steps, a partial
// permutation of modules over them. dest[i] is nil for a rank that does not
// access, else its k modules.
func kkDestinations(rng *rand.Rand, p, k int, r float64) [][]int {
	n := accessing(p, r)
	who := rng.Perm(p)[:n]
	dest := make([][]int, p)
	for _, i := range who {
		dest[i] = make([]int, k)
	}
	for j := range k {
		perm := rng.Perm(p)
		for x, i := range who {
			dest[i][j] = perm[x]
		}
	}
	return dest
}

// accessing is the number of ranks taking part for portion r (or hot spot
// h): the patterns' rounding, so the realised r and h in the records are
// those of the drawn accesses.
func accessing(p int, r float64) int { return patterns.AccessingRanks(r, p) }

// kDestinations draws the a k-accesses of a KAPoint: in each, one step j*
// sends a hot group of max(1, round(h p)) ranks to one module m_t, the other
// ranks of that step to distinct other modules, and every other step is a
// permutation. m_t is the same for all t with es, else it moves on by one
// module per access. dest[t][i] are rank i's k modules in access t.
func kDestinations(rng *rand.Rand, p int, pt KAPoint) [][][]int {
	hot := accessing(p, pt.H)
	m0 := rng.IntN(p)
	dest := make([][][]int, pt.A)
	for t := range pt.A {
		dest[t] = make([][]int, p)
		for i := range p {
			dest[t][i] = make([]int, pt.K)
		}
		m := m0
		if !pt.ES {
			m = (m0 + t) % p
		}
		jStar := rng.IntN(pt.K)
		for j := range pt.K {
			if j != jStar {
				for i, v := range rng.Perm(p) {
					dest[t][i][j] = v
				}
				continue
			}
			ranks := rng.Perm(p)
			others := rng.Perm(p)
			o := 0
			for x, i := range ranks {
				if x < hot {
					dest[t][i][j] = m
					continue
				}
				for others[o] == m {
					o++
				}
				dest[t][i][j] = others[o]
				o++
			}
		}
	}
	return dest
}

// meanHops is the mean number of links (application link included) the
// requests of dest cross: the data locality the trilinear model leaves out
// (paper 000, section 6.5).
func meanHops(t *Topology, dest [][]int) float64 {
	s, n := 0, 0
	for i, ms := range dest {
		for _, m := range ms {
			s += t.AccessDistance(i, m)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(s) / float64(n)
}

// measure runs one point: patterns.Measure over the application ranks,
// with the network counters of the timed repetitions collected by
// application rank 0. The record is complete on rank 0; other ranks get the
// same summary without counters.
func (s *Store) measure(bench string, params results.Params, bc BenchConfig, rep patterns.Rep) (results.Record, error) {
	if err := s.app.Barrier(); err != nil {
		return results.Record{}, err
	}
	// Warm-up is done by Measure; the counters are zeroed just before it
	// (warm-up included), then read after the last repetition.
	if s.me == 0 {
		if _, err := s.Stats(true); err != nil {
			return results.Record{}, err
		}
	}
	m, err := patterns.Measure(s.app, bc.Reps, rep)
	if err != nil {
		return results.Record{}, err
	}
	params["network"] = s.t.Name()
	rec := m.Record(bench, params, s.Apps(), bc.Meta)
	if err := s.app.Barrier(); err != nil {
		return rec, err
	}
	if s.me == 0 {
		st, err := s.Stats(false)
		if err != nil {
			return rec, err
		}
		rec.Counters = Counters(st)
		rec.Counters["service_ranks"] = float64(s.t.Nodes())
		rec.Counters["reps_counted"] = float64(bc.Reps.Defaults().Warmup + len(m.Samples))
	}
	return rec, nil
}

// opKind parses "read" or "write".
func opKind(op string) (bool, error) {
	switch op {
	case "read", "":
		return false, nil
	case "write":
		return true, nil
	}
	return false, fmt.Errorf("emulate: op %q: accepted read and write", op)
}

// KKAccess measures one k-k-access point through the emulated network
// (paper 000, section 4). Collective over the application ranks. A
// repetition's time is the slowest accessing rank's time from the barrier
// to its last reply (max over ranks). Derived "hops_mean" is the mean
// number of links per request.
func KKAccess(s *Store, pt KKPoint, bc BenchConfig) (results.Record, error) {
	write, err := opKind(pt.Op)
	if err != nil {
		return results.Record{}, err
	}
	if pt.K < 1 || pt.L < 0 || !(pt.R > 0 && pt.R <= 1) {
		return results.Record{}, fmt.Errorf("emulate: k-k-access k=%d l=%d r=%v: need k >= 1, l >= 0, 0 < r <= 1", pt.K, pt.L, pt.R)
	}
	vars, err := s.BenchVars(pt.L)
	if err != nil {
		return results.Record{}, err
	}
	p := s.Apps()
	buf := make([]byte, pt.K*pt.L)
	ops := make([]Op, 0, pt.K)
	point := pointKey(BenchKKAccess, pt.K, pt.L, int(pt.R*1e6), boolInt(write))
	var rep uint64
	hops, nh := 0.0, 0
	pat := patterns.KKAccess{K: pt.K, L: pt.L, R: pt.R, Op: accessOp(write)}
	rec, err := s.measure(BenchKKAccess, pat.Params(p), bc, func() (float64, error) {
		rep++
		dest := kkDestinations(pointRNG(bc.Seed, point, rep), p, pt.K, pt.R)
		hops += meanHops(s.t, dest)
		nh++
		if dest[s.me] == nil {
			return 0, nil
		}
		ops = ops[:0]
		for j, m := range dest[s.me] {
			ops = append(ops, Op{Write: write, Var: vars[m], Buf: buf[j*pt.L : (j+1)*pt.L]})
		}
		t0 := s.app.Wtime()
		if err := s.AccessSplit(ops, SplitOne); err != nil {
			return 0, err
		}
		return s.app.Wtime() - t0, nil
	})
	if err != nil {
		return rec, err
	}
	rec.Derived = map[string]float64{"hops_mean": hops / float64(max(nh, 1))}
	if rec.Counters != nil { // rank 0
		rec.Counters[patterns.CounterRAsked] = pt.R
	}
	return rec, nil
}

// KAccess measures a series of A k-accesses with hot spot H (paper 000,
// section 5): every rank performs its A k-accesses one after the other
// without synchronisation; a repetition's time is the slowest rank's time
// for all A, and the record's value is that time divided by A, the
// amortised time of one k-access (Figs. 10, 11). Derived "total_s" is the
// median time of the whole series. Reads.
func KAccess(s *Store, pt KAPoint, bc BenchConfig) (results.Record, error) {
	if pt.K < 1 || pt.L < 0 || pt.A < 1 || !(pt.H > 0 && pt.H <= 1) {
		return results.Record{}, fmt.Errorf("emulate: k-access k=%d l=%d h=%v a=%d: need k >= 1, l >= 0, 0 < h <= 1, a >= 1", pt.K, pt.L, pt.H, pt.A)
	}
	vars, err := s.BenchVars(pt.L)
	if err != nil {
		return results.Record{}, err
	}
	p := s.Apps()
	buf := make([]byte, pt.K*pt.L)
	pk := make([]globalvar.Packet, 0, pt.A*pt.K)
	point := pointKey(BenchKAccess, pt.K, pt.L, int(pt.H*1e6), pt.A, boolInt(pt.ES))
	var rep uint64
	pat := patterns.KAccess{K: pt.K, L: pt.L, H: pt.H, A: pt.A, ES: pt.ES, Op: patterns.AccessRead}
	rec, err := s.measure(BenchKAccess, pat.Params(p), bc, func() (float64, error) {
		rep++
		dest := kDestinations(pointRNG(bc.Seed, point, rep), p, pt)
		// The a successive k-accesses are one batch of a k packets in
		// groups of k (globalvar.Batcher).
		pk = pk[:0]
		for t := range pt.A {
			for j, m := range dest[t][s.me] {
				pk = append(pk, globalvar.Packet{Var: vars[m], Buf: buf[j*pt.L : (j+1)*pt.L]})
			}
		}
		t0 := s.app.Wtime()
		if err := s.batch(false, pk, pt.K); err != nil {
			return 0, err
		}
		return (s.app.Wtime() - t0) / float64(pt.A), nil
	})
	if err != nil {
		return rec, err
	}
	rec.Derived = map[string]float64{"total_s": rec.Median * float64(pt.A), "hot_ranks": float64(accessing(p, pt.H))}
	if rec.Counters != nil { // rank 0
		rec.Counters[patterns.CounterHAsked] = pt.H
	}
	return rec, nil
}

// SplitAccess measures one access of Fig. 14: every rank accesses Ints
// integers of a variable on the module given by a random permutation
// (r = 1), cut into packets by the splitting version. Derived "k" and "l"
// are the packets and packet length used.
func SplitAccess(s *Store, pt SplitPoint, bc BenchConfig) (results.Record, error) {
	write, err := opKind(pt.Op)
	if err != nil {
		return results.Record{}, err
	}
	d := pt.Ints * IntBytes
	if pt.Ints < 1 || pt.Version < SplitOne || pt.Version > SplitModel {
		return results.Record{}, fmt.Errorf("emulate: split access of %d integers, version %d: need >= 1 integer and version 1, 2 or 3", pt.Ints, pt.Version)
	}
	if pt.Version == SplitModel && s.cfg.SplitFunc == nil {
		return results.Record{}, fmt.Errorf("emulate: split version 3 needs a fitted model (Store.SetSplitFunc)")
	}
	vars, err := s.BenchVars(d)
	if err != nil {
		return results.Record{}, err
	}
	p := s.Apps()
	buf := make([]byte, d)
	point := pointKey(BenchSplit, pt.Ints, int(pt.Version), boolInt(write))
	var rep uint64
	rec, err := s.measure(BenchSplit, results.Params{"ints": pt.Ints, "bytes": d, "version": int(pt.Version), "op": accessOp(write).String()}, bc, func() (float64, error) {
		rep++
		m := pointRNG(bc.Seed, point, rep).Perm(p)[s.me]
		t0 := s.app.Wtime()
		if err := s.AccessSplit([]Op{{Write: write, Var: vars[m], Buf: buf}}, pt.Version); err != nil {
			return 0, err
		}
		return s.app.Wtime() - t0, nil
	})
	if err != nil {
		return rec, err
	}
	k, l := splitAccess(d, pt.Version, s.cfg)
	rec.Derived = map[string]float64{"k": float64(k), "l": float64(l)}
	return rec, nil
}

func pointKey(bench string, xs ...int) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range []byte(bench) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	for _, x := range xs {
		h = (h ^ uint64(x)) * 1099511628211
	}
	return h
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// accessOp is the patterns' access kind of a read or write.
func accessOp(write bool) patterns.AccessOp {
	if write {
		return patterns.AccessWrite
	}
	return patterns.AccessRead
}
