package appexp

import (
	"fmt"
	"io"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Suite is the main job ('commcost suite', make run): ping-pong and
// bandwidth sweeps over two ranks (the first two when there are more), a
// k-k-access sweep over all ranks (the trilinear model's calibration),
// small instances of paper 000's four programs on the direct store, and of
// the message-passing programs with the calibration their models need.
// Every record goes to one run directory's records.jsonl, from which the
// report is rendered.
type Suite struct {
	patterns.RepFlags
	patterns.Loop
	Sizes  opts.Sizes `flag:"sizes" default:"1:4M" param:"bytes" usage:"message sizes for ping-pong and bandwidth: LO:HI or a list"`
	RunDir string     `flag:"rundir" default:"results/runs" value:"directory" usage:"base directory of run directories"`
	MPApps bool       `flag:"mp-apps" default:"true" usage:"also run small instances of the message-passing applications (commcost app multigrid, cannon, checkerboard, gauss) with the calibration they need, and rank the models on them"`
}

// The suite's k-k-access grid: every k and l level the trilinear model
// needs, and every realisable portion r = j/p of up to four levels. Every
// power of two in l, so each protocol regime of the piecewise trilinear
// model (eager up to 2 KiB, rendezvous from 4 KiB on shared memory) holds
// the three sizes a segment needs.
var (
	SuiteKK = []int{1, 2, 4, 8}
	SuiteKL = []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// SuiteSeed fixes the suite's random instances, so runs are comparable.
const SuiteSeed = 1

// SuiteRs are the portions r = j/p of the suite's k-k-access sweep.
func SuiteRs(p int) []float64 {
	var rs []float64
	for j := 1; j <= p; j++ {
		if p <= 4 || j*4%p == 0 { // at most four levels: p/4, p/2, 3p/4, p
			rs = append(rs, float64(j)/float64(p))
		}
	}
	return rs
}

// Validate checks the settings.
func (s *Suite) Validate() error {
	return patterns.Checks(s.RepFlags.Check, s.Loop.Check,
		func() error { return patterns.CheckValues("Sizes", patterns.BenchPingPong, "bytes", s.Sizes) })
}

func (s *Suite) pair() (patterns.PingPongSweep, patterns.BandwidthSweep) {
	return patterns.PingPongSweep{RepFlags: s.RepFlags, Loop: s.Loop, Sizes: s.Sizes},
		patterns.BandwidthSweep{RepFlags: s.RepFlags, Loop: s.Loop, Sizes: s.Sizes, Window: patterns.OSUWindow}
}

// Plan is the two-rank points, whose demand is checked before the run.
func (s *Suite) Plan(int) []patterns.Pattern {
	pp, bw := s.pair()
	return append(pp.Points(), bw.Points()...)
}

// Points is the number of progress steps on p ranks: a record per
// two-rank and k-k-access point, a step per program of paper 000.
func (s *Suite) Points(p int) int {
	programs, _ := SuiteStorePrograms(p)
	return 2*len(s.Sizes) + len(SuiteKK)*len(SuiteKL)*len(SuiteRs(p)) + len(programs)
}

// Check refuses a world of fewer than two ranks.
func (s *Suite) Check(c mpi.Comm) error {
	return job.NeedRanks(c, "suite", func(n int) bool { return n >= 2 }, "at least 2 ranks")
}

// Run measures the suite on every rank of c (collective). emit writes a
// record (rank 0); step counts progress (Points): a pattern record, a
// finished program; the programs the rank count leaves out are named on
// stderr.
func (s *Suite) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, step func(), stderr io.Writer) error {
	programEmit := emit
	emit = func(rec results.Record) error {
		err := programEmit(rec)
		step()
		return err
	}
	// The two-party benchmarks run on ranks 0 and 1; others wait.
	color := mpi.Undefined
	if c.Rank() < 2 {
		color = 0
	}
	pair, err := c.Split(color, c.Rank())
	if err == nil && pair != nil {
		pp, bw := s.pair()
		err = job.MeasurePoints(pair, emit, append(pp.Points(), bw.Points()...), meta)
		if ferr := pair.Free(); err == nil {
			err = ferr
		}
	}
	if err := job.Agree(c, err); err != nil {
		return err
	}
	// The k-k-access sweep runs on every rank (paper 000, Def. 2).
	kkMeta := meta
	kkMeta.Seed = SuiteSeed
	for _, k := range SuiteKK {
		for _, l := range SuiteKL {
			for _, r := range SuiteRs(c.Size()) {
				kk := patterns.KKAccess{K: k, L: l, R: r, Op: patterns.AccessRead, Seed: SuiteSeed, Validate: s.Verify, Reps: s.Reps()}
				if _, err := job.MeasurePoint(c, emit, kk, kkMeta); err != nil {
					return err
				}
			}
		}
	}
	// Paper 000's four programs on the direct store, which the trilinear
	// fit of that sweep predicts; the meter counts programs.
	if _, skipped := SuiteStorePrograms(c.Size()); len(skipped) > 0 && c.Rank() == 0 {
		fmt.Fprintf(stderr, "commcost: suite: on %d ranks, not run: %v\n", c.Size(), skipped)
	}
	agreed := func(rec results.Record) error { return job.EmitRecord(c, programEmit, rec) }
	if err := SuiteStoreSweep(c, s.Reps(), SuiteSeed, meta, agreed, step); err != nil {
		return err
	}
	if !s.MPApps {
		return nil
	}
	return SuiteMP(c, s.Reps(), SuiteSeed, s.Verify, meta, emit)
}
