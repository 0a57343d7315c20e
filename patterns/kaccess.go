package patterns

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchKAccess is the bench name of k-access records (KAccess.Params).
const BenchKAccess = "kaccess"

// KAccess configures the k-access with receive hot spot and asynchrony of
// paper 000 (file 000_fafed09b0c9c663f.txt), section 5. A k-access routes
// any f in F_k (Definition 1): every rank sends k packets, packet j to rank
// f(i, j). Two parameters are added to the k-k-access:
//
//   - h, the receive hot spot: "the maximal portion of application
//     processors which access in at least one of the k steps of a k-access
//     the same shared memory module", h in [1/p, 1]; h = 1/p is a
//     k-k-access. Here every step j has a hot module t_j that H = round(h p)
//     ranks address (HotRanks); the other ranks address distinct other
//     modules, so no module gets more than H packets of one step and the
//     realised h is exactly H/p (maxShare).
//   - a, the asynchrony: "the number of k-accesses between two successive
//     synchronizations". A repetition is a k-accesses one after another on
//     every rank with no synchronisation in between; its sample is the time
//     T_k of all a, and the record reports the amortised time T_k/a
//     (section 5, "Let the ratio T_k/a denote the amortized communication
//     time").
//
// ES selects the "es" scenario of section 5 ("Two scenarios"): the hot
// spots (the modules t_j and the ranks addressing them) are the same in all
// a k-accesses of a repetition; otherwise they change from one k-access to
// the next. The other ranks' targets are drawn afresh for every k-access in
// both scenarios, so the two differ only in the hot spot.
//
// All ranks access (r = 1). A rank does not address itself, except that a
// hot spot of all p ranks (H = p, h = 1) includes the hot module's own rank,
// which then reaches its own memory through MPI like the others.
type KAccess struct {
	K  int     // packets per rank and k-access, >= 1
	L  int     // bytes per packet, >= 0
	H  float64 // receive hot spot, in [1/p, 1]
	A  int     // k-accesses between synchronisations, >= 1
	ES bool    // same hot spots in all a k-accesses
	// Op is the kind of access; the CLI uses reads (a k-access sends back a
	// packet, Definition 1).
	Op       AccessOp
	Seed     int64
	Validate bool
	Reps     Reps
}

// hotSlack absorbs rounding when h = 1/p is given as a decimal.
const hotSlack = 1e-9

// HotRanks is the number of ranks H = round(h p) that address one module in
// one step, clamped to [1, p].
func HotRanks(h float64, p int) int {
	return min(p, max(1, int(math.Round(h*float64(p)))))
}

// Check reports a configuration that cannot run on p ranks.
func (ka KAccess) Check(p int) error {
	switch {
	case ka.K < 1 || ka.K > maxAccessIndex:
		return fmt.Errorf("k = %d: the send hot spot must be in 1..%d", ka.K, maxAccessIndex)
	case ka.A < 1 || ka.A > maxAccessIndex:
		return fmt.Errorf("a = %d: the k-accesses between synchronisations must be in 1..%d", ka.A, maxAccessIndex)
	case ka.L < 0:
		return fmt.Errorf("l = %d: the packet size must be >= 0 bytes", ka.L)
	case p < 1:
		return fmt.Errorf("k-access needs at least 1 rank")
	case !(ka.H >= 1/float64(p)-hotSlack && ka.H <= 1):
		return fmt.Errorf("h = %v: the receive hot spot must be in [1/p, 1] = [%.4g, 1] for p = %d", ka.H, 1/float64(p), p)
	}
	return ka.Reps.Validate()
}

// Run measures the k-access on every rank of c (collective). Samples are
// T_k/a, the amortised time of one k-access, in seconds.
func (ka KAccess) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := ka.Check(p); err != nil {
		return Measurement{}, err
	}
	rng := newRand(ka.Seed)
	hot := HotRanks(ka.H, p)
	share := 0.0
	draw := func() *accessPlan {
		pl := newAccessPlan(p, ka.K, ka.A)
		drawKAccess(rng, pl, hot, ka.ES)
		share = math.Max(share, pl.maxShare())
		return pl
	}
	eng, err := newAccessEngine(c, ka.Op, ka.K, ka.L, ka.A, ka.Validate)
	if err != nil {
		return Measurement{}, err
	}
	defer eng.close()
	meas, reps, err := eng.measure(ka.Reps, draw)
	if err != nil {
		return Measurement{}, err
	}
	return finish(c, meas.Scaled(1/float64(ka.A)), eng.counts, reps, map[string]float64{
		CounterHotRanks:  float64(hot),
		CounterHRealised: share,
	})
}

// Params are the record parameters of the k-access on p ranks: k, l, the
// realised hot spot h = HotRanks(H, p)/p (the drawn accesses realise
// exactly this share; counter h_realised is the share measured on them and
// counter h_asked the asked H), a, es and op.
func (ka KAccess) Params(p int) results.Params {
	return results.Params{"k": ka.K, "l": ka.L, "h": float64(HotRanks(ka.H, p)) / float64(p), "a": ka.A, "es": ka.ES, "op": ka.Op.String()}
}

// Bench is the bench name of the records.
func (KAccess) Bench() string { return BenchKAccess }

// Record is the k-access record of m (amortised times T_k/a), with counter
// h_asked next to the traffic counters.
func (ka KAccess) Record(m Measurement, meta results.Meta) results.Record {
	return withCounter(m.Record(BenchKAccess, ka.Params(m.CommSize), m.CommSize, meta), CounterHAsked, ka.H)
}

// hotSpot is the hot module of one step and the ranks that address it.
type hotSpot struct {
	module int
	ranks  []int
}

// drawHot picks a hot module and the hot ranks addressing it: hot ranks
// other than the module's own, or all p when hot = p.
func drawHot(rng *rand.Rand, p, hot int) hotSpot {
	h := hotSpot{module: rng.IntN(p)}
	if hot == p {
		h.ranks = rng.Perm(p)
		return h
	}
	cand := make([]int, 0, p-1)
	for i := 0; i < p; i++ {
		if i != h.module {
			cand = append(cand, i)
		}
	}
	rng.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
	h.ranks = cand[:hot]
	return h
}

// drawKAccess fills the a accesses of pl: per step a hot spot of hot ranks
// (the same in every access with es), and the other ranks sent to distinct
// modules other than the hot one and their own.
func drawKAccess(rng *rand.Rand, pl *accessPlan, hot int, es bool) {
	p, k := pl.p, pl.k
	var spots []hotSpot
	isHot := make([]bool, p)
	rest := make([]int, 0, p)
	avail := make([]int, 0, p)
	for x := range pl.targets {
		if x == 0 || !es {
			spots = spots[:0]
			for j := 0; j < k; j++ {
				spots = append(spots, drawHot(rng, p, hot))
			}
		}
		t := pl.targets[x]
		for j, h := range spots {
			clear(isHot)
			for _, i := range h.ranks {
				isHot[i] = true
				t[i*k+j] = h.module
			}
			rest, avail = rest[:0], avail[:0]
			for i := 0; i < p; i++ {
				if !isHot[i] {
					rest = append(rest, i)
				}
				if i != h.module {
					avail = append(avail, i)
				}
			}
			rng.Shuffle(len(avail), func(a, b int) { avail[a], avail[b] = avail[b], avail[a] })
			// rest[n] gets avail[n]; a rank drawn to itself swaps with an
			// unused module or, if none is left, with another rank (which
			// cannot create a new fixed point: the values are distinct).
			for n, i := range rest {
				if avail[n] != i {
					continue
				}
				if len(avail) > len(rest) {
					u := len(rest) + rng.IntN(len(avail)-len(rest))
					avail[n], avail[u] = avail[u], avail[n]
				} else if len(rest) > 1 {
					o := rng.IntN(len(rest) - 1)
					if o >= n {
						o++
					}
					avail[n], avail[o] = avail[o], avail[n]
				}
			}
			for n, i := range rest {
				t[i*k+j] = avail[n]
			}
		}
	}
}

// Hot is a receive hot spot h in (0, 1], or "1/p" (no hot spot, whatever
// the rank count).
type Hot struct {
	V    float64
	PerP bool
}

// UnmarshalText parses a number in (0, 1] or 1/p; 0.5 and .5 are one value.
func (h *Hot) UnmarshalText(b []byte) error {
	s := string(b)
	if strings.EqualFold(s, "1/p") {
		*h = Hot{PerP: true}
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number; accepted form: a list of numbers in [1/p, 1], where 1/p may be written as is (1/p,0.5,1)", s)
	}
	if !(x > 0 && x <= 1) {
		return fmt.Errorf("%v is outside [1/p, 1]", x)
	}
	*h = Hot{V: x}
	return nil
}

func (h Hot) String() string {
	if h.PerP {
		return "1/p"
	}
	return strconv.FormatFloat(h.V, 'g', -1, 64)
}

// On is the hot spot on p ranks.
func (h Hot) On(p int) float64 {
	if h.PerP {
		return 1 / float64(p)
	}
	return h.V
}

// KASweep is the sweep of 'commcost kaccess': paper 000's k-access with
// receive hot spot and asynchrony (section 5) over op x k x l x h x a x es.
type KASweep struct {
	RepFlags
	RepWarmup
	SyncFlags
	SeedFlag
	K  opts.Ints  `flag:"k" default:"1,4" param:"k" usage:"send hot spots k (packets per rank and k-access): a list or a power-of-two range"`
	L  opts.Ints  `flag:"l" default:"256" param:"l" usage:"packet sizes l in bytes: a list or a power-of-two range; K = 1024"`
	H  []Hot      `flag:"h" default:"1/p,0.5,1" usage:"receive hot spots h in [1/p, 1]: the portion of ranks addressing one module in a step; 1/p is none"`
	A  opts.Ints  `flag:"a" default:"1,4" param:"a" usage:"k-accesses between synchronisations a (asynchrony): a list or a power-of-two range"`
	ES opts.Bools `flag:"es" default:"false,true" usage:"same hot spots in all a k-accesses (the paper's \"es\" curves): false, true or false,true (true is skipped for a = 1)"`
	Op []AccessOp `flag:"op" default:"read" usage:"access kinds: read (the l bytes come back), write (they are stored, an ack comes back), or read,write"`
}

func init() {
	Register(Def{Name: "kaccess", Summary: "k-access of paper 000 (sec. 5): receive hot spot h, a accesses between syncs, es",
		New: func() Sweep { return new(KASweep) }, Defaults: map[string]string{"max-time": "1"}})
}

// Validate checks the grid against the parameters' specs.
func (s *KASweep) Validate() error {
	return Checks(s.RepFlags.Check, s.RepWarmup.Check, s.SyncFlags.Check, s.SeedFlag.Check,
		func() error {
			return CheckRunValues("K", BenchKAccess, "k", s.K, maxAccessIndex, "the send hot spot k")
		},
		func() error { return CheckValues("L", BenchKAccess, "l", s.L) },
		func() error {
			return CheckRunValues("A", BenchKAccess, "a", s.A, maxAccessIndex, "the k-accesses a between synchronisations")
		})
}

// Plan lists the instances; every h must be at least 1/p.
func (s *KASweep) Plan(p int) ([]Pattern, error) {
	for _, h := range s.H {
		if h.On(p) < 1/float64(p)-hotSlack {
			return nil, opts.Field("H", h, "h must be in [1/p, 1] = [%.4g, 1] with %d ranks", 1/float64(p), p)
		}
	}
	reps := s.SyncFlags.Reps(s.RepWarmup.Reps(s.RepFlags.Reps()))
	var out []Pattern
	for _, op := range s.Op {
		for _, k := range s.K {
			for _, l := range s.L {
				for _, h := range s.H {
					for _, a := range s.A {
						for _, es := range s.ES {
							if es && a == 1 && slices.Contains(s.ES, false) {
								continue // one k-access: the same with and without es
							}
							// The record's h is the realised hot spot H/p.
							out = append(out, KAccess{K: k, L: l, H: h.On(p), A: a, ES: es, Op: op, Seed: s.Seed, Validate: s.Verify, Reps: reps})
						}
					}
				}
			}
		}
	}
	return out, nil
}
