package patterns

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchKKAccess is the bench name of k-k-access records (KKAccess.Params);
// the trilinear models read them.
const BenchKKAccess = "kkaccess"

// KKAccess configures the k-k-access of paper 000 (Fischer, Rethmann,
// Wachsmann, file 000_fafed09b0c9c663f.txt), Definition 2: a routing
// function f in F_k (Definition 1) such that for every step j the map
// f_j(i) = f(i, j) is a permutation of the ranks; with only a portion r of
// the ranks accessing, each f_j is a partial permutation (the Note after
// Definition 2). Every accessing rank sends k packets of l bytes, packet j
// to rank f_j(i), which accesses its global variable and answers (read:
// the l bytes come back; write: the l bytes are stored and an
// acknowledgement comes back); the k packets of a rank leave one after
// another (the send hot spot k). access.go describes the messages.
//
// The time of one k-k-access is the maximum over the accessing ranks of the
// time from the start until a rank has all its k answers; the paper models
// it with the trilinear function of section 4,
//
//	T(k, l, r) = c7 klr + c6 kr + c5 kl + c4 lr + c3 k + c2 l + c1 r + c0,
//
// fitted "by measuring the runtimes for several different k-k-accesses"
// with "k permutations chosen at random" for each: every repetition draws
// fresh permutations and a fresh set of accessing ranks from the seeded
// random source, identically on every rank.
//
// By default a rank never targets itself: in the paper application
// processor i and memory module i are distinct nodes of the service network
// (section 1), whereas an MPI message to oneself is a memory copy. The
// permutations are then uniform random derangements; Self allows fixed
// points.
type KKAccess struct {
	K  int     // packets per accessing rank (send hot spot), >= 1
	L  int     // bytes per packet, >= 0
	R  float64 // portion of ranks accessing, in (0, 1]; AccessingRanks rounds r p
	Op AccessOp
	// Distinct makes each rank's k targets pairwise distinct (the setting
	// of paper 000, section 7: an access split over k distinct memory
	// modules); it needs k <= p-1 (k <= p with Self). The permutations are
	// then f_j(i) = s^-1(s(i) + d_j mod p) for a random relabelling s and k
	// distinct random shifts d_j.
	Distinct bool
	Self     bool // allow f_j(i) = i
	// Block draws one permutation per access and uses it for every step,
	// f_j = f_0 (still Definition 2: each f_j is a permutation): an
	// accessing rank sends all k of its packets to one module, as a
	// program does that reads or writes a block of k l bytes of a variable
	// kept on one home (the direct store's placement, globalvar). The
	// paper's fits draw the k permutations independently, so a rank's
	// packets spread over up to k modules; on a switched network the two
	// differ for writes, whose blocks meet one receiver's link. Excludes
	// Distinct.
	Block bool
	// A is the number of k-k-accesses one repetition runs back to back,
	// each with its own draw and none waiting for the others (paper 000's
	// asynchrony a of section 5, which its k-access has and Definition 2
	// leaves at one); the sample is the repetition's time divided by A.
	// 0 or 1: one access per repetition, a barrier before each, as the
	// paper fits T(k, l, r); 0 leaves param a out of the record (read as
	// 1), any other value is recorded. A program reads a large block as
	// ceil(D/(k l)) accesses one after another, and an access after a
	// barrier rides the link's idle state (a token bucket's burst, a core
	// just freed) that such a sequence does not find.
	A        int
	Seed     int64 // seed of the random permutations (record it in Meta.Seed)
	Validate bool
	Reps     Reps
}

// ErrTooManyTargets is returned when a pattern asks for more distinct
// targets or ranks than the communicator has.
var ErrTooManyTargets = errors.New("more targets asked for than ranks exist")

// Check reports a configuration that cannot run on p ranks.
func (kk KKAccess) Check(p int) error {
	switch {
	case kk.K < 1 || kk.K > maxAccessIndex:
		return fmt.Errorf("k = %d: the send hot spot must be in 1..%d", kk.K, maxAccessIndex)
	case kk.L < 0:
		return fmt.Errorf("l = %d: the packet size must be >= 0 bytes", kk.L)
	case !(kk.R > 0 && kk.R <= 1):
		return fmt.Errorf("r = %v: the portion of accessing ranks must be in (0, 1]", kk.R)
	case p < 2 && !kk.Self:
		return fmt.Errorf("k-k-access needs at least 2 ranks (a rank does not target itself), got %d", p)
	case kk.A < 0 || kk.A > maxAccessIndex:
		return fmt.Errorf("a = %d: the k-k-accesses back to back must be in 1..%d", kk.A, maxAccessIndex)
	}
	if kk.Distinct {
		most := p - 1
		if kk.Self {
			most = p
		}
		if kk.K > most {
			return fmt.Errorf("%w: k = %d distinct targets per rank, but only %d other ranks", ErrTooManyTargets, kk.K, most)
		}
		if kk.Block {
			return errors.New("block (every packet of an access to one module) and distinct (k different modules) exclude each other")
		}
	}
	return kk.Reps.Validate()
}

// Counters specific to the access patterns, next to CountersOf's.
const (
	CounterAccessingRanks = "accessing_ranks" // ranks that access
	CounterRRealised      = "r_realised"      // accessing_ranks / p
	CounterHotRanks       = "hot_ranks"       // ranks hitting one module in one step
	CounterHRealised      = "h_realised"      // largest portion of ranks hitting one module in one step
	CounterRAsked         = "r_asked"         // the portion r asked for, next to the realised r in params
	CounterHAsked         = "h_asked"         // the hot spot h asked for, next to the realised h in params
)

// Run measures the k-k-access on every rank of c (collective). The sample of
// a repetition is the maximum over accessing ranks (ReduceMax, or the latest
// end on the synchronised clock with SyncWindow), in seconds.
func (kk KKAccess) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := kk.Check(p); err != nil {
		return Measurement{}, err
	}
	rng := newRand(kk.Seed)
	m := AccessingRanks(kk.R, p)
	a := max(kk.A, 1)
	draw := func() *accessPlan {
		pl := newAccessPlan(p, kk.K, a)
		for x := range a {
			drawKK(rng, pl, x, m, kk.Distinct, kk.Self, kk.Block)
		}
		return pl
	}
	eng, err := newAccessEngine(c, kk.Op, kk.K, kk.L, a, kk.Validate)
	if err != nil {
		return Measurement{}, err
	}
	defer eng.close()
	meas, reps, err := eng.measure(kk.Reps, draw)
	if err != nil {
		return Measurement{}, err
	}
	return finish(c, meas.Scaled(1/float64(a)), eng.counts, reps, map[string]float64{
		CounterAccessingRanks: float64(m),
		CounterRRealised:      float64(m) / float64(p),
	})
}

// Params are the record parameters of the k-k-access on p ranks: k, l, the
// realised portion r = AccessingRanks(R, p)/p (r p rounded to whole ranks,
// what the trilinear model needs; the asked R is counter r_asked of the
// record) and op; "distinct", "self" and "block" are added, true, when
// set, so that a record says how its targets were drawn.
func (kk KKAccess) Params(p int) results.Params {
	params := results.Params{"k": kk.K, "l": kk.L, "r": RRealised(kk.R, p), "op": kk.Op.String()}
	if kk.Distinct {
		params["distinct"] = true
	}
	if kk.Self {
		params["self"] = true
	}
	if kk.Block {
		params["block"] = true
	}
	if kk.A > 0 {
		params["a"] = kk.A
	}
	return params
}

// Bench is the bench name of the records.
func (KKAccess) Bench() string { return BenchKKAccess }

// Record is the k-k-access record of m: Params on all the ranks measured,
// with counter r_asked next to the traffic counters.
func (kk KKAccess) Record(m Measurement, meta results.Meta) results.Record {
	return withCounter(m.Record(BenchKKAccess, kk.Params(m.CommSize), m.CommSize, meta), CounterRAsked, kk.R)
}

// drawKK fills access x of pl with one random k-k-access: a random set of
// m accessing ranks and, for each step j, a random (partial) permutation
// f_j restricted to them (paper 000, Definition 2 and its Note); with
// block one permutation serves every step (KKAccess.Block).
func drawKK(rng *rand.Rand, pl *accessPlan, x, m int, distinct, self, block bool) {
	p, k := pl.p, pl.k
	t := pl.targets[x]
	for i := range t {
		t[i] = -1
	}
	ranks := rng.Perm(p)[:m] // the accessing ranks
	perm := make([]int, p)
	if distinct {
		// Relabel by s, shift by k distinct d_j: row i gets k distinct
		// targets, each step a permutation, no fixed point unless d_j = 0.
		s := rng.Perm(p)
		inv := make([]int, p)
		for i, v := range s {
			inv[v] = i
		}
		var shifts []int
		if self {
			shifts = rng.Perm(p)[:k]
		} else {
			shifts = rng.Perm(p - 1)[:k]
			for j := range shifts {
				shifts[j]++
			}
		}
		for j, d := range shifts {
			for _, i := range ranks {
				t[i*k+j] = inv[(s[i]+d)%p]
			}
		}
		return
	}
	for j := 0; j < k; j++ {
		if j == 0 || !block {
			derangement(rng, perm, self)
		}
		for _, i := range ranks {
			t[i*k+j] = perm[i]
		}
	}
}

// RRealised is the portion of ranks that actually access for asked r.
func RRealised(r float64, p int) float64 {
	return float64(AccessingRanks(r, p)) / float64(p)
}

// KKSweep is the sweep of 'commcost kkaccess': the k-k-access of paper 000
// (Definition 2) over the grid op x k x l x r x a.
type KKSweep struct {
	RepFlags
	RepWarmup
	SyncFlags
	SeedFlag
	K        opts.Ints   `flag:"k" default:"1,2,4,8" param:"k" usage:"send hot spots k (packets per accessing rank): a list (1,2,4,8) or a power-of-two range (1:8)"`
	L        opts.Ints   `flag:"l" default:"64,1K,16K" param:"l" usage:"packet sizes l in bytes: a list (64,1K,16K) or a power-of-two range (64:16K); K = 1024"`
	R        opts.Floats `flag:"r" default:"0.25,0.5,1" param:"r" usage:"portions r of accessing ranks, each in (0, 1]: a list (0.25,0.5,0.75,1); r p is rounded to whole ranks (at least 1), and records carry the realised r"`
	Op       []AccessOp  `flag:"op" default:"read" usage:"access kinds: read (the l bytes come back), write (they are stored, an ack comes back), or read,write"`
	A        opts.Ints   `flag:"a" default:"1" param:"a" usage:"k-k-accesses back to back per repetition (a list or a power-of-two range); a record is the time of one, and a list with a > 1 records param a: 1 is paper 000's single access after a barrier, more is how a program reads a large block (ceil(D/(k l)) accesses in a row)"`
	Distinct bool        `flag:"distinct" usage:"each rank's k targets are distinct ranks (paper 000, section 7); needs k <= ranks-1"`
	Self     bool        `flag:"self" usage:"let a rank access its own memory through MPI (off: targets are derangements)"`
	Block    bool        `flag:"block" usage:"each rank sends all k packets of an access to one rank (one permutation per access, used for every packet): a block of k l bytes on one home, as the direct store keeps a variable; off: the paper's k independent permutations"`
	Set      opts.Given
}

// RealisedPortions are the portions rs on p ranks with one of every
// realised r (RRealised): two values whose r p rounds to the same whole
// ranks measure one point twice. Listed by the user (given), the second
// is refused, naming both and the r they realise; from a default list,
// it is left out.
func RealisedPortions(field string, rs []float64, p int, given bool) ([]float64, error) {
	first := map[int]float64{}
	var out []float64
	for _, r := range rs {
		m := AccessingRanks(r, p)
		if r0, dup := first[m]; dup {
			if given {
				ranks := "ranks"
				if m == 1 {
					ranks = "rank"
				}
				return nil, opts.Item(field, r, "%v and %v both realise r = %d/%d = %v on %d ranks (r p rounds to %d accessing %s), one point measured twice; list one of them", r0, r, m, p, RRealised(r, p), p, m, ranks)
			}
			continue
		}
		first[m] = r
		out = append(out, r)
	}
	return out, nil
}

func init() {
	Register(Def{Name: "kkaccess", Summary: "k-k-access of paper 000 (Def. 2): k packets of l bytes per accessing rank, portion r",
		New: func() Sweep { return new(KKSweep) }, Defaults: map[string]string{"max-time": "1"}})
}

// Validate checks the grid against the parameters' specs (KKAccess's
// record parameters) and the flags that exclude each other.
func (s *KKSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.RepWarmup.Check, s.SyncFlags.Check, s.SeedFlag.Check,
		func() error {
			return CheckRunValues("K", BenchKKAccess, "k", s.K, maxAccessIndex, "the send hot spot k")
		},
		func() error { return CheckValues("L", BenchKKAccess, "l", s.L) },
		func() error { return CheckValues("R", BenchKKAccess, "r", s.R) },
		func() error {
			return CheckRunValues("A", BenchKKAccess, "a", s.A, maxAccessIndex, "the k-k-accesses a per repetition")
		},
		func() error {
			if s.Block && s.Distinct {
				return opts.Badf("{Block} and {Distinct} exclude each other: {Block} sends a rank's k packets to one rank, {Distinct} to k different ones")
			}
			return nil
		})
}

// Plan lists the instances: op x k x l x r x a, in that order.
func (s *KKSweep) Plan(p int) ([]Pattern, error) {
	if p < 2 && !s.Self {
		return nil, opts.Badf("kkaccess needs at least 2 ranks, got %d (a rank does not access itself unless {Self})", p)
	}
	if s.Distinct {
		most := p - 1
		if s.Self {
			most = p
		}
		if k := slices.Max(s.K); k > most {
			return nil, opts.Field("K", k, "with {Distinct}: more targets asked for than ranks exist (%d distinct targets per rank with %d ranks)", most, p)
		}
	}
	// Records carry param a only when a > 1 is asked for (then every
	// record of the run, a = 1 too, so a CSV's columns hold).
	portions, err := RealisedPortions("R", s.R, p, s.Set.Has("R"))
	if err != nil {
		return nil, err
	}
	recordA := slices.ContainsFunc(s.A, func(a int) bool { return a > 1 })
	reps := s.SyncFlags.Reps(s.RepWarmup.Reps(s.RepFlags.Reps()))
	var out []Pattern
	for _, op := range s.Op {
		for _, k := range s.K {
			for _, l := range s.L {
				for _, r := range portions {
					for _, a := range s.A {
						if !recordA {
							a = 0
						}
						out = append(out, KKAccess{K: k, L: l, R: r, Op: op, Distinct: s.Distinct, Self: s.Self, Block: s.Block, A: a,
							Seed: s.Seed, Validate: s.Verify, Reps: reps})
					}
				}
			}
		}
	}
	return out, nil
}
