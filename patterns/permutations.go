package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// Permutations configures the random-permutation measurement of paper 002
// (Ranka, Wang, Fox, file 002_43788f4bf8178574.txt), section 5, Table 1
// ("Communication cost for one permutation on a 32-node CM-5"): Count
// random permutations (the paper: 1000) "in which each node sends a data
// to a random, but different node" (section 2.2), each rank sending Bytes
// bytes to pi(i) and receiving from pi^-1(i). The paper reports, per
// message size, the average, maximum and minimum cost and the ratios
// max/ave and min/ave, which show how little the cost depends on the
// permutation; the record's summary is over the Count permutations (mean =
// ave) and its Derived values hold the two ratios.
//
// Every repetition is one fresh permutation, a uniformly random
// derangement drawn from the seeded source identically on every rank, and
// its sample is the maximum over ranks of the time from the start until a
// rank has sent and received (the permutation is complete when the last
// rank is). There are exactly Count repetitions (no adaptive stopping)
// unless Reps.MaxTime ends them first.
type Permutations struct {
	Bytes    int
	Count    int   // permutations; 0 means DefaultPermutations
	Iters    int   // times each permutation runs back to back per repetition; 0 means 1
	Seed     int64 // seed of the permutations (record it in Meta.Seed)
	Validate bool
	Reps     Reps // MinReps, MaxReps and RelCI are set from Count
}

// BenchPermutations is the bench name of permutation records: params bytes
// and count, derived ave_s, max_over_ave and min_over_ave (Table 1).
const BenchPermutations = "permutations"

// DefaultPermutations is the paper's number of random permutations (Table 1).
const DefaultPermutations = 1000

const permutationTag = 350

func (pm Permutations) count() int {
	if pm.Count == 0 {
		return DefaultPermutations
	}
	return pm.Count
}

// Check reports a configuration that cannot run on p ranks.
func (pm Permutations) Check(p int) error {
	switch {
	case p < 2:
		return fmt.Errorf("permutations need at least 2 ranks (each rank sends to a different one), got %d", p)
	case pm.count() < 1:
		return fmt.Errorf("count = %d: the number of permutations must be >= 1", pm.Count)
	case pm.Bytes < 0:
		return fmt.Errorf("bytes = %d: must be >= 0", pm.Bytes)
	case pm.Iters < 0:
		return fmt.Errorf("iters = %d: must be >= 1", pm.Iters)
	}
	return pm.Reps.Validate()
}

// Run measures Count random permutations (collective over c).
func (pm Permutations) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := pm.Check(p); err != nil {
		return Measurement{}, err
	}
	me := c.Rank()
	x := pm.Bytes
	iters := max(pm.Iters, 1)
	rng := newRand(pm.Seed)
	perm := make([]int, p)
	// A permutation is this rank's program: one MPI_Sendrecv of x bytes
	// to pi(me) and from pi^-1(me).
	perms := ahead[[]mpi.Step]{draw: func() []mpi.Step {
		derangement(rng, perm, false)
		src := 0
		for i, v := range perm {
			if v == me {
				src = i
			}
		}
		return []mpi.Step{{Op: mpi.StepSendrecv, Send: mpi.Span{Buf: 0, Len: x}, Recv: mpi.Span{Buf: 1, Len: x},
			Peer: perm[me], From: src, Tag: permutationTag}}
	}}
	send := make([]byte, x)
	recv := make([]byte, x)
	var counts Counts
	calls := 0
	kernel := programKernel(c, [][]byte{send, recv}, iters, &counts, &calls)
	perms.refill()
	cfg := pm.Reps
	cfg.MinReps, cfg.MaxReps = pm.count(), pm.count()
	cfg.Reduction = ReduceMax
	m, err := MeasureBatch(c, cfg, pm.Validate, func(b mpi.Batch) error {
		progs := perms.take(b.Reps())
		if pm.Validate { // one repetition per batch
			fillBlock(send, me, progs[0][0].Peer)
		}
		if err := kernel(b, progs); err != nil {
			return err
		}
		if pm.Validate {
			if err := checkBlock(recv, progs[0][0].From, me, "permutation"); err != nil {
				return err
			}
			clear(recv)
		}
		perms.refill() // the next permutation, outside the timed region
		return nil
	})
	if err != nil {
		return Measurement{}, err
	}
	m = m.Scaled(1 / float64(iters))
	if m.Stop != results.StopMaxTime && m.Summary.N == pm.count() {
		m.Stop = results.StopFixed
	}
	return finish(c, m, counts, calls, nil)
}

// Params are the record parameters: the message size x and the number of
// permutations asked for.
func (pm Permutations) Params(int) results.Params {
	return results.Params{"bytes": pm.Bytes, "count": pm.count()}
}

// Bench is the bench name of the records.
func (Permutations) Bench() string { return BenchPermutations }

// Record is the permutations record of m with Table 1's rows as derived
// values: ave_s (the mean), max_over_ave and min_over_ave.
func (pm Permutations) Record(m Measurement, meta results.Meta) results.Record {
	rec := m.Record(BenchPermutations, pm.Params(m.CommSize), m.CommSize, meta)
	hi, lo := PermutationRatios(m)
	rec.Derived = map[string]float64{"ave_s": m.Summary.Mean, "max_over_ave": hi, "min_over_ave": lo}
	return rec
}

// PermutationRatios are paper 002's Table 1 rows max/ave and min/ave of a
// permutations measurement.
func PermutationRatios(m Measurement) (maxOverAve, minOverAve float64) {
	if m.Summary.Mean == 0 {
		return 0, 0
	}
	return m.Summary.Max / m.Summary.Mean, m.Summary.Min / m.Summary.Mean
}

// PermutationsSweep is the sweep of 'commcost permutations': paper 002's
// Table 1, Count random permutations per size.
type PermutationsSweep struct {
	RepFlags
	Iters
	RepWarmup
	SyncFlags
	SeedFlag
	Sizes opts.Sizes `flag:"sizes" default:"16,64,256,1K,4K,16K,64K,256K" param:"bytes" usage:"message sizes x: a list or LO:HI doubling; K = 1024"`
	Count int        `flag:"count" default:"1000" usage:"random permutations N per size (the paper: 1000); every one is a repetition"`
}

func init() {
	Register(Def{Name: "permutations", Summary: "paper 002 Table 1: N random permutations of x bytes; ave, max, min, max/ave, min/ave",
		New:   func() Sweep { return new(PermutationsSweep) },
		Usage: map[string]string{"iters": "runs of the same permutation back to back per timed repetition (default: 1)"}})
}

// Validate checks the sweep's settings.
func (s *PermutationsSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Iters.Check, s.RepWarmup.Check, s.SyncFlags.Check, s.SeedFlag.Check,
		func() error { return CheckValues("Sizes", BenchPermutations, "bytes", s.Sizes) },
		func() error { return CheckValues("Count", BenchPermutations, "count", []int{s.Count}) })
}

// Plan lists one point per size.
func (s *PermutationsSweep) Plan(p int) ([]Pattern, error) {
	if p < 2 {
		return nil, opts.Badf("permutations need at least 2 ranks, got %d (each rank sends to a different one)", p)
	}
	reps := s.SyncFlags.Reps(s.RepWarmup.Reps(s.RepFlags.Reps()))
	var out []Pattern
	for _, x := range s.Sizes {
		out = append(out, Permutations{Bytes: x, Count: s.Count, Iters: s.IterCount(), Seed: s.Seed, Validate: s.Verify, Reps: reps})
	}
	return out, nil
}
