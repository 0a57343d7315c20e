package patterns

import (
	"errors"
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchPairwise is the bench name of pairwise records: param bytes, ranks 2n.
const BenchPairwise = "pairwise"

// Pairwise configures the third pattern of paper 001 (file
// 001_f25f9102f0478dfd.txt), section 3.3 (IBM SP2): of 2n ranks, rank i of
// the first half exchanges messages with rank n + i of the second half
// (i = 0..n-1; the paper numbers nodes from 1), all n pairs at once. The
// hyperbolic model reduces it to eq. 8,
//
//	a(n) = 2 a_p + n a_c,   b(n) = max{b_p, n b_c},
//
// whose limits over n give the network block (eqs. 9-10).
//
// T(x, n), "the service time required to deliver a message of size x from
// node 1 to node n + 1", is measured as in OSU's latency test: every pair
// runs blocking round trips concurrently with the others, and a sample is
// half the round-trip time (the maximum over ranks of one repetition's
// elapsed time divided by 2 Iters), so the n messages of each direction
// contend as the pattern intends. Ranks beyond 2n wait.
type Pairwise struct {
	Bytes    int
	Pairs    int // n; 0 means p/2
	Iters    int // round trips per repetition; 0 = OSU-derived (Iterations), capped by CapIters
	Warmup   int // untimed round trips; 0 = OSU default, negative = none
	Validate bool
	Reps     Reps
}

// ErrOddRanks is returned by patterns made of rank pairs started on an odd
// number of ranks.
var ErrOddRanks = errors.New("needs an even number of ranks")

// checkPairs validates n pairs on p ranks for the named pattern.
func checkPairs(what string, pairs, p int) error {
	if p%2 != 0 {
		return fmt.Errorf("%s %w, got %d", what, ErrOddRanks, p)
	}
	if pairs < 0 || 2*pairs > p {
		return fmt.Errorf("%w: %s with %d pairs needs %d ranks, got %d", ErrTooManyTargets, what, pairs, 2*pairs, p)
	}
	return nil
}

func pairsOrAll(pairs, p int) int {
	if pairs == 0 {
		return p / 2
	}
	return pairs
}

// Check reports a configuration that cannot run on p ranks.
func (pw Pairwise) Check(p int) error { return pw.checkAs("pairwise", p) }

func (pw Pairwise) checkAs(what string, p int) error {
	if err := checkPairs(what, pw.Pairs, p); err != nil {
		return err
	}
	if pw.Bytes < 0 {
		return fmt.Errorf("bytes = %d: must be >= 0", pw.Bytes)
	}
	return pw.Reps.Validate()
}

// Run measures T(Bytes, n) (collective over c); Ranks of the record is 2n.
func (pw Pairwise) Run(c mpi.Comm) (Measurement, error) {
	if err := pw.Check(c.Size()); err != nil {
		return Measurement{}, err
	}
	n := pairsOrAll(pw.Pairs, c.Size())
	return concurrentPingPongs(c, pw.Bytes, pw.Iters, pw.Warmup, pairwisePairs(n), pw.Validate, pw.Reps)
}

// Params are the record parameters: the message size x (2n is the record's
// Ranks).
func (pw Pairwise) Params(int) results.Params { return results.Params{"bytes": pw.Bytes} }

// Bench is the bench name of the records.
func (Pairwise) Bench() string { return BenchPairwise }

// Record is the pairwise record of m; its Ranks is 2n.
func (pw Pairwise) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchPairwise, pw.Params(m.CommSize), 2*pairsOrAll(pw.Pairs, m.CommSize), meta)
}

// pairwisePairs pairs rank i < n with rank n + i; ranks from 2n on wait.
func pairwisePairs(n int) pairFunc {
	return func(r int) (int, bool, bool) {
		switch {
		case r < n:
			return n + r, true, true
		case r < 2*n:
			return r - n, false, true
		}
		return 0, false, false
	}
}

// concurrentPingPongs runs pingPongPairs and reports half round trips.
func concurrentPingPongs(c mpi.Comm, bytes, iters, warmup int, pair pairFunc, validate bool, reps Reps) (Measurement, error) {
	capped := iters <= 0
	iters, warmup = Iterations(bytes, iters, warmup)
	res, iters, err := pingPongPairs(c, bytes, iters, warmup, capped, pair, validate, reps, ReduceMax)
	if err != nil {
		return Measurement{}, err
	}
	res = res.Scaled(1 / float64(2*iters))
	return res, nil
}

// PairsSweep is the sweep of 'commcost pairwise' and 'commcost
// rowcontention' (paper 001, sections 3.3 and 3.4): n concurrent pairs per
// n and size.
type PairsSweep struct {
	RepFlags
	Loop
	SyncFlags
	Sizes opts.Sizes `flag:"sizes" default:"0:1M" param:"bytes" usage:"message sizes x: LO:HI doubling (0:1M) or a list (0,1K,1M); K = 1024"`
	Pairs opts.Ints  `flag:"pairs" usage:"numbers n of pairs (2n ranks take part): a list or a power-of-two range (default: ranks/2)"`
	// Row pairs rank i with 2n-1-i (row contention) instead of n+i.
	Row bool
}

func init() {
	for _, row := range []bool{false, true} {
		name, summary := "pairwise", "paper 001 sec. 3.3: rank i <-> n+i of 2n ranks, concurrent ping-pongs"
		if row {
			name, summary = "rowcontention", "paper 001 sec. 3.4: rank i <-> 2n-1-i (nested pairs), concurrent ping-pongs"
		}
		Register(Def{Name: name, Summary: summary,
			New: func() Sweep { return &PairsSweep{Row: row} }, Defaults: map[string]string{"max-time": "1"},
			Usage: map[string]string{"iters": "round trips per timed repetition (default: OSU counts / 10: 1000 up to 8K, 100 above)"}})
	}
}

func (s *PairsSweep) name() string {
	if s.Row {
		return "rowcontention"
	}
	return "pairwise"
}

// Validate checks the sweep's settings.
func (s *PairsSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check, s.SyncFlags.Check,
		func() error { return CheckValues("Sizes", BenchPairwise, "bytes", s.Sizes) },
		func() error {
			for _, n := range s.Pairs {
				if n < 1 {
					return opts.Field("Pairs", n, "is not positive; the value must be positive (an integer >= 1)")
				}
			}
			return nil
		})
}

// Plan lists n x size; it needs an even rank count and at most p/2 pairs.
func (s *PairsSweep) Plan(p int) ([]Pattern, error) {
	if p%2 != 0 || p < 2 {
		return nil, opts.Badf("%s needs an even number of ranks, got %d (every rank has a partner)", s.name(), p)
	}
	ns := s.Pairs
	for _, n := range ns {
		if 2*n > p {
			return nil, opts.Item("Pairs", n, "more ranks asked for than exist (%d pairs need %d ranks, got %d)", n, 2*n, p)
		}
	}
	if len(ns) == 0 {
		ns = opts.Ints{p / 2}
	}
	reps := s.SyncFlags.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, n := range ns {
		for _, x := range s.Sizes {
			if s.Row {
				out = append(out, RowContention{Bytes: x, Pairs: n, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: reps})
			} else {
				out = append(out, Pairwise{Bytes: x, Pairs: n, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: reps})
			}
		}
	}
	return out, nil
}
