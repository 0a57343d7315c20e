package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchAllToAll is the bench name of the all-to-all records of paper 001:
// param bytes, ranks n.
const BenchAllToAll = "alltoall"

// AllToAll configures the second pattern of paper 001 (file
// 001_f25f9102f0478dfd.txt), section 3.1: "given n workstations, each
// workstation sends n - 1 messages of the same size to each other
// workstation, after which it waits to receive all the messages addressed
// to it". By rules 3 and 1 the hyperbolic model reduces it to eq. 4,
//
//	a(n) = 4(n-1) a_w + n(n-1) a_c,   b(n) = max{2(n-1) b_w, n(n-1) b_c},
//
// and eq. 5 takes a_c, b_c as limits over n.
//
// A rank's time runs "from the moment the first message is sent, until the
// last one is received": the rank posts its n-1 receives, sends its n-1
// messages (to i+1, i+2, ... so that not every rank starts with the same
// destination) without waiting, and waits for everything. The sample is the
// maximum over the n ranks (as on the SP2 and the Paragon); the paper
// averages over ranks on Ethernet, which the record keeps as rank_avg (the
// mean of the ranks' medians). Ranks beyond n wait; Ranks of the record is
// n. This is the paper's pattern, not MPI_Alltoall (aggregate.go has that).
type AllToAll struct {
	Bytes    int
	Ranks    int // n, the ranks taking part; 0 means all
	Iters    int // exchanges per repetition, each complete before the next; 0 means 1
	Validate bool
	Reps     Reps
}

const allToAllTag = 320

// Check reports a configuration that cannot run on p ranks.
func (a AllToAll) Check(p int) error {
	n := a.ranks(p)
	switch {
	case n < 2:
		return fmt.Errorf("alltoall needs at least 2 ranks, got %d", n)
	case n > p:
		return fmt.Errorf("%w: alltoall over %d ranks, but there are %d", ErrTooManyTargets, n, p)
	case a.Bytes < 0:
		return fmt.Errorf("bytes = %d: must be >= 0", a.Bytes)
	case a.Iters < 0:
		return fmt.Errorf("iters = %d: must be >= 1", a.Iters)
	}
	return a.Reps.Validate()
}

func (a AllToAll) ranks(p int) int {
	if a.Ranks == 0 {
		return p
	}
	return a.Ranks
}

// Run measures the all-to-all exchange (collective over c).
func (a AllToAll) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := a.Check(p); err != nil {
		return Measurement{}, err
	}
	n := a.ranks(p)
	me := c.Rank()
	on := me < n
	x := a.Bytes
	iters := max(a.Iters, 1)
	send := make([]byte, n*x) // block d goes to rank d
	recv := make([]byte, n*x) // block s comes from rank s
	for d := 0; d < n; d++ {
		fillBlock(send[d*x:(d+1)*x], me, d)
	}
	reqs := make([]mpi.Request, 0, 2*(n-1))
	var counts Counts
	calls := 0
	exchange := func() error {
		reqs = reqs[:0]
		for s := 1; s < n; s++ {
			src := (me - s + n) % n
			r, err := c.Irecv(recv[src*x:(src+1)*x], src, allToAllTag)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		for s := 1; s < n; s++ {
			d := (me + s) % n
			r, err := c.Isend(send[d*x:(d+1)*x], d, allToAllTag)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		_, err := mpi.Waitall(reqs)
		return err
	}
	cfg := a.Reps
	cfg.Reduction = ReduceMax
	batch := SerialBatch(c, func() (float64, error) {
		if !on {
			return 0, nil
		}
		t0 := c.Wtime()
		for i := 0; i < iters; i++ {
			if err := exchange(); err != nil {
				return 0, err
			}
		}
		return c.Wtime() - t0, nil
	})
	if bk, ok := c.(mpi.BatchKernels); ok {
		batch = func(b mpi.Batch) error { return bk.AllToAllBatch(b, send, recv, x, n, allToAllTag, iters) }
	}
	if a.Validate {
		batch = checked(batch, func() {}, func() error {
			if !on {
				return nil
			}
			for s := 0; s < n; s++ {
				if s == me {
					continue
				}
				if err := checkBlock(recv[s*x:(s+1)*x], s, me, "alltoall"); err != nil {
					return err
				}
			}
			clear(recv)
			return nil
		})
	}
	m, err := MeasureBatch(c, cfg, a.Validate, func(b mpi.Batch) error {
		if err := batch(b); err != nil {
			return err
		}
		if on {
			calls += b.Reps()
			k := iters * b.Reps() * (n - 1)
			counts.add(k, x, k, x)
		}
		return nil
	})
	if err != nil {
		return Measurement{}, err
	}
	return finish(c, m.Scaled(1/float64(iters)), counts, max(calls, 1), nil)
}

// Params are the record parameters: the message size x (n is the record's
// Ranks).
func (a AllToAll) Params(int) results.Params { return results.Params{"bytes": a.Bytes} }

// Bench is the bench name of the records.
func (AllToAll) Bench() string { return BenchAllToAll }

// Record is the all-to-all record of m; its Ranks is n, the ranks that
// took part.
func (a AllToAll) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchAllToAll, a.Params(m.CommSize), a.ranks(m.CommSize), meta)
}

// blockByte is byte i of the block rank src addresses to rank dst in the
// multi-rank patterns (alltoall, permutations, aggregate).
func blockByte(src, dst, i int) byte { return byte(src*37 + dst*11 + i*7 + 1) }

// fillBlock writes the block src addresses to dst.
func fillBlock(b []byte, src, dst int) {
	for i := range b {
		b[i] = blockByte(src, dst, i)
	}
}

// checkBlock checks a received block against the one src addressed to dst.
func checkBlock(b []byte, src, dst int, what string) error {
	for i := range b {
		if want := blockByte(src, dst, i); b[i] != want {
			return fmt.Errorf("%s: %w: block from rank %d to rank %d, byte %d is %#x, want %#x",
				what, ErrValidation, src, dst, i, b[i], want)
		}
	}
	return nil
}

// AllToAllSweep is the sweep of 'commcost alltoall': paper 001's all-to-all
// over the first n ranks, per n and size.
type AllToAllSweep struct {
	RepFlags
	Iters
	RepWarmup
	SyncFlags
	Sizes opts.Sizes `flag:"sizes" default:"0:256K" param:"bytes" usage:"message sizes x: LO:HI doubling (0:1M) or a list (0,1K,1M); K = 1024"`
	Ranks opts.Ints  `flag:"ranks" usage:"numbers n of ranks taking part (the first n): a list or a power-of-two range (default: all)"`
}

func init() {
	Register(Def{Name: "alltoall", Summary: "paper 001 sec. 3.1: every rank sends x bytes to every other, then receives all",
		New: func() Sweep { return new(AllToAllSweep) }, Defaults: map[string]string{"max-time": "1"},
		Usage: map[string]string{"iters": "exchanges (each complete before the next) per timed repetition (default: 1)"}})
}

// Validate checks the sweep's settings.
func (s *AllToAllSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, s.SyncFlags.Check,
		func() error { return CheckValues("Sizes", BenchAllToAll, "bytes", s.Sizes) },
		func() error {
			for _, n := range s.Ranks {
				if n < 2 {
					return opts.Field("Ranks", n, "is below the minimum 2")
				}
			}
			return nil
		})
}

// Plan lists n x size; n defaults to all ranks.
func (s *AllToAllSweep) Plan(p int) ([]Pattern, error) {
	if p < 2 {
		return nil, opts.Badf("alltoall needs at least 2 ranks, got %d", p)
	}
	ns := s.Ranks
	for _, n := range ns {
		if n > p {
			return nil, opts.Item("Ranks", n, "more ranks asked for than exist (%d)", p)
		}
	}
	if len(ns) == 0 {
		ns = opts.Ints{p}
	}
	reps := s.SyncFlags.Reps(s.RepWarmup.Reps(s.RepFlags.Reps()))
	var out []Pattern
	for _, n := range ns {
		for _, x := range s.Sizes {
			out = append(out, AllToAll{Bytes: x, Ranks: n, Iters: s.IterCount(), Validate: s.Verify, Reps: reps})
		}
	}
	return out, nil
}
