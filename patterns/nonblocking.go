package patterns

import (
	"fmt"
	"math"
	"slices"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchNonBlocking is the bench name of the records of MPI-3's non-blocking
// collectives (NonBlocking): params op (iallreduce, ...), bytes, type,
// reduction, root and probes, unit s.
const BenchNonBlocking = "nonblocking"

// Derived values of non-blocking records: OSU's figures (osu_util_mpi.c
// calculate_and_print_stats: the average over ranks of each rank's mean)
// and commcost's own.
const (
	DerivedOSUOverall = "osu_overall_s"   // the overlapped call: start, compute, wait
	DerivedOSUCompute = "osu_compute_s"   // the dummy compute inside it, MPI_Test calls excluded
	DerivedOSUTest    = "osu_test_s"      // the MPI_Test calls inside it
	DerivedOSUComm    = "osu_comm_s"      // pure communication: start and wait at once
	DerivedOSUCommMin = "osu_comm_min_s"  // its minimum over ranks
	DerivedOSUCommMax = "osu_comm_max_s"  // its maximum over ranks
	DerivedOSUOverlap = "osu_overlap_pct" // OSU's overlap in percent
	DerivedComm       = "comm_s"          // commcost's pure communication: median of the max over ranks
	DerivedOverlap    = "overlap_pct"     // commcost's overlap, from its medians
)

// NonBlocking configures one of MPI-3's non-blocking collectives, measured
// as OSU 6.1's non-blocking benchmarks do (osu_iallreduce.c and its
// siblings), with the buffers of the blocking form (Collective).
//
// Two measurements per point, each a barrier before every call:
//
//  1. pure communication: start the call and wait at once; each rank's
//     mean is its communication time t_comm(r);
//  2. overlap: start the call, compute t_comm(r) seconds with OSU's dummy
//     kernel (mpi.DummyDim; MPI_Test after each of Probes parts when
//     Probes > 0), wait; the whole is the overall time.
//
// OSU's overlap (osu_util_mpi.c print_stats_nbc) is, from the averages
// over ranks of each rank's mean overall time T, compute time C (its
// MPI_Test calls included), test time X and communication time t_comm:
//
//	overlap = max(0, 100 - 100 (T - (C - X)) / t_comm)
//
// so 100% means the call cost nothing beyond the computation. The record's
// summary is the overall time, commcost's figure (the median over
// repetitions of the maximum over ranks); comm_s is the pure
// communication's, and overlap_pct the same formula on these two medians
// and the median over ranks of each rank's median compute time (tests
// excluded), robust to the interruptions a mean takes in.
type NonBlocking struct {
	Op       mpi.CollOp
	Bytes    int
	Type     mpi.Datatype
	Reduce   mpi.Op
	Root     int
	Probes   int // MPI_Test calls during the compute (OSU's -t); 0 = none
	OSU      bool
	Validate bool
	Reps     Reps
}

func (k NonBlocking) blocking() Collective {
	return Collective{Op: k.Op, Bytes: k.Bytes, Type: k.Type, Reduce: k.Reduce, Root: k.Root}
}

// OpName is the call's name: "i" and the blocking collective's.
func (k NonBlocking) OpName() string { return "i" + k.Op.String() }

// Check reports an instance no run could measure on p ranks.
func (k NonBlocking) Check(p int) error {
	if !k.Op.NonBlocking() {
		return fmt.Errorf("collective %v has no non-blocking form", k.Op)
	}
	return k.blocking().Check(p)
}

// overlapAcc collects one rank's compute and test times of the timed
// repetitions.
type overlapAcc struct {
	on        bool
	cpu, test []float64
}

// overlapBatch is the batch of one measurement: the backend's kernel
// (mpi.OverlapKernels), else the calls through the Comm in Go.
func overlapBatch(c mpi.Comm, call mpi.CollCall, compute float64, probes int, acc *overlapAcc) BatchRep {
	keep := func(cpu, test []float64) {
		if acc.on {
			acc.cpu = append(acc.cpu, cpu...)
			acc.test = append(acc.test, test...)
		}
	}
	if ok, isK := c.(mpi.OverlapKernels); isK {
		return func(b mpi.Batch) error {
			cpu, test := make([]float64, len(b.Own)), make([]float64, len(b.Own))
			err := ok.OverlapBatch(b, call, compute, probes, cpu, test)
			if err == nil {
				keep(cpu, test)
			}
			return err
		}
	}
	nb := c.(mpi.NonBlockingCollectives)
	return SerialBatch(c, func() (float64, error) {
		t0 := c.Wtime()
		q, err := call.Start(nb)
		if err != nil {
			return 0, err
		}
		cpu, test := goDummyCompute(c, q, compute, probes)
		if _, err := q.Wait(); err != nil {
			return 0, err
		}
		t := c.Wtime() - t0
		keep([]float64{cpu}, []float64{test})
		return t, nil
	})
}

// dummy is the state of the Go form of OSU's dummy kernel.
type dummy struct {
	a    [mpi.DummyDim][mpi.DummyDim]float32
	x, y [mpi.DummyDim]float32
}

func newDummy() *dummy {
	d := new(dummy)
	for i := range d.x {
		d.x[i], d.y[i] = 1, 1
		for j := range d.a[i] {
			d.a[i][j] = 2
		}
	}
	return d
}

func (d *dummy) step() {
	for i := range d.x {
		for j := range d.y {
			d.x[i] = d.x[i] + d.a[i][j]*d.a[j][i] + d.y[j]
		}
	}
}

// goDummyCompute is OSU's do_compute_and_probe in Go: compute seconds,
// in probes parts with a Test after each when probes > 0. It returns the
// compute time (tests included) and the test time.
func goDummyCompute(c mpi.Comm, q mpi.Request, seconds float64, probes int) (cpu, test float64) {
	if seconds <= 0 {
		return 0, 0
	}
	d := newDummy() // a rank's own: the local backend's ranks are goroutines
	run := func(target float64) {
		for elapsed := 0.0; elapsed < target; {
			t1 := c.Wtime()
			d.step()
			elapsed += c.Wtime() - t1
		}
	}
	t0 := c.Wtime()
	if probes <= 0 {
		run(seconds)
		return c.Wtime() - t0, 0
	}
	for range probes {
		run(seconds / float64(probes))
		t1 := c.Wtime()
		_, _, _ = q.Test() // an error shows again at Wait
		test += c.Wtime() - t1
	}
	return c.Wtime() - t0, test
}

// warmBatch runs n untimed repetitions of batch, synchronised as timed
// ones are; the ranks agree on failure.
func warmBatch(c mpi.Comm, n int, batch BatchRep) error {
	if n <= 0 {
		return nil
	}
	err := batch(mpi.Batch{Own: make([]float64, n), Samples: make([]float64, n), Sync: true})
	return collectiveFailure(c, err)
}

// Run measures the non-blocking collective on every rank of c
// (collective): pure communication, then the overlapped calls.
func (k NonBlocking) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := k.Check(p); err != nil {
		return Measurement{}, err
	}
	if err := collNeeds(c, k.Op, true); err != nil {
		return Measurement{}, err
	}
	d := newCollData(k.blocking(), p, c.Rank())
	d.prepare()
	reps := k.Reps
	if k.OSU {
		reps = osuCollReps(k.Op, k.Bytes, reps)
	}
	reps.Reduction = ReduceMax
	warm := reps.withDefaults().Warmup
	reps.Warmup = -1 // run below, so that the compute times kept are the timed ones'
	measure := func(compute float64, acc *overlapAcc) (Measurement, error) {
		batch := overlapBatch(c, d.call, compute, k.Probes, acc)
		if k.Validate {
			batch = checked(batch, d.prepare, d.check)
		}
		if err := warmBatch(c, warm, batch); err != nil {
			return Measurement{}, err
		}
		acc.on = true
		return MeasureBatch(c, reps, k.Validate, batch)
	}
	comm, err := measure(0, &overlapAcc{})
	if err != nil {
		return Measurement{}, err
	}
	acc := &overlapAcc{}
	m, err := measure(comm.OwnMeans[c.Rank()], acc)
	if err != nil {
		return Measurement{}, err
	}
	// OSU's compute time: the average over ranks of each rank's mean;
	// commcost's: the median over ranks of each rank's median.
	mine := []float64{mean(acc.cpu), mean(acc.test), results.Median(diffs(acc.cpu, acc.test))}
	all := make([]float64, 3*p)
	if err := mpi.AllgatherFloat64s(c, mine, all); err != nil {
		return Measurement{}, err
	}
	var cpu, test float64
	meds := make([]float64, p)
	for r := range p {
		cpu, test, meds[r] = cpu+all[3*r], test+all[3*r+1], all[3*r+2]
	}
	cpu, test = cpu/float64(p), test/float64(p)
	m.Extra = map[string]float64{
		DerivedOSUOverall: m.RankMean.Avg, DerivedOSUCompute: cpu - test, DerivedOSUTest: test,
		DerivedOSUComm: comm.RankMean.Avg, DerivedOSUCommMin: comm.RankMean.Min, DerivedOSUCommMax: comm.RankMean.Max,
		DerivedOSUOverlap: OverlapPct(m.RankMean.Avg, cpu-test, comm.RankMean.Avg),
		DerivedComm:       comm.Summary.Median, DerivedOverlap: OverlapPct(m.Summary.Median, results.Median(meds), comm.Summary.Median),
	}
	return m, nil
}

// OverlapPct is OSU's overlap in percent of an overlapped call of overall
// seconds that computed compute seconds, against pure communication of
// comm seconds: max(0, 100 - 100 (overall - compute) / comm), at most
// 100 (a call that took less than its computation, in the noise of the
// medians, hid all of its communication, not more).
func OverlapPct(overall, compute, comm float64) float64 {
	if !(comm > 0) {
		return 0
	}
	return math.Min(100, math.Max(0, 100-100*(overall-compute)/comm))
}

// diffs is a - b element by element.
func diffs(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Params are the record parameters: those of the blocking form (its
// Params, op renamed) and probes; iters is always 1 and left out.
func (k NonBlocking) Params(p int) results.Params {
	params := k.blocking().Params(p)
	delete(params, "iters")
	delete(params, "alg") // the forced algorithms are the blocking ones' (coll/tuned)
	params["op"] = k.OpName()
	params["probes"] = k.Probes
	return params
}

// Bench is the bench name of the records.
func (NonBlocking) Bench() string { return BenchNonBlocking }

// Record is the overall time's record with the overlap derived.
func (k NonBlocking) Record(m Measurement, meta results.Meta) results.Record {
	rec := m.Record(BenchNonBlocking, k.Params(m.CommSize), m.CommSize, meta)
	rec.Derived = map[string]float64{}
	for key, v := range m.Extra {
		rec.Derived[key] = v
	}
	return rec
}

// minProbeSec bounds below the time of one probe of an overlapped call:
// a step of the dummy kernel (DummyDim^2 multiply-adds, at least one
// step per part of a positive compute time) and an MPI_Test.
const minProbeSec = minMessageSec

// Demand of a non-blocking collective: the blocking form's buffers, and
// two measurements of at least one message per call; an overlapped call
// with probes makes Probes of them (minProbeSec each).
func (k NonBlocking) Demand(p int) Demand {
	d := Collective{Op: k.Op, Bytes: k.Bytes, OSU: k.OSU}.Demand(p)
	d.RepParam = "--sizes"
	if k.Probes > 0 {
		d.RepWaitSec = float64(k.Probes) * minProbeSec
		d.RepWait = fmt.Sprintf("%s of >= %g ns, a dummy-kernel step and an MPI_Test each", countText(float64(k.Probes), "probe"), minProbeSec*1e9)
		d.RepParam = "--probes"
	}
	return d
}

// NonBlockingSweep is the sweep of 'commcost nonblocking': MPI-3's
// non-blocking collectives, op x size, pure communication and overlap as
// OSU 6.1 measures them.
type NonBlockingSweep struct {
	RepFlags
	RepWarmup
	Ops       []mpi.CollOp `flag:"ops" default:"barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv,alltoall,alltoallv" usage:"collectives whose non-blocking form (ibarrier, ibcast, ...) runs: a list of barrier, bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv"`
	Sizes     opts.Sizes   `flag:"sizes" default:"4:1M" param:"bytes" usage:"message sizes (OSU's size column, as for 'commcost collective'): a list or LO:HI doubling; K = 1024"`
	Type      mpi.Datatype `flag:"type" default:"float" usage:"element type of the reductions: float (OSU's), double, int, long or char (a signed byte)"`
	Reduction mpi.Op       `flag:"reduction" default:"sum" usage:"operation of the reductions: sum (OSU's), min or max"`
	Root      int          `flag:"root" usage:"root rank of ibcast, ireduce, igather(v) and iscatter(v)"`
	Probes    int          `flag:"probes" usage:"MPI_Test calls on the request during the compute, in equal parts (OSU's -t); 0: none"`
	OSU       bool         `flag:"osu" usage:"OSU 6.1's repetition counts for both measurements: 1000 timed calls after 100 untimed up to 8K (8K floats for the reductions), 100 after 10 above"`
	Set       opts.Given
}

func init() {
	Register(Def{Name: "nonblocking", Summary: "MPI-3 non-blocking collectives (iallreduce, ...): pure communication, compute and overlap as OSU 6.1",
		New: func() Sweep { return new(NonBlockingSweep) }, Defaults: map[string]string{"max-time": "1"}})
}

// The flags only some of the non-blocking collectives read are those of
// the blocking ones (collReads), checked against the non-blocking forms.

// Validate checks the sweep's settings.
func (s *NonBlockingSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.RepWarmup.Check, func() error { return checkOSUColl(s.OSU, s.Set) },
		func() error { return CheckValues("Sizes", BenchNonBlocking, "bytes", s.Sizes) },
		func() error {
			for _, op := range s.Ops {
				if !op.NonBlocking() {
					return opts.Item("Ops", op, "has no non-blocking form (MPI-3 has none of the reduce-scatters here)")
				}
			}
			if err := CheckCount("Probes", s.Probes, 0, "MPI_Test calls in each call's compute"); err != nil {
				return err
			}
			if err := collReads.Check(s.Set, "Ops", "ops", s.Ops, nbOps()); err != nil {
				return err
			}
			return checkCollSweep(s.Ops, s.Sizes, s.Type, s.Root)
		})
}

// nbOps are the collectives with a non-blocking form.
func nbOps() []mpi.CollOp {
	return slices.DeleteFunc(mpi.CollOps(), func(o mpi.CollOp) bool { return !o.NonBlocking() })
}

// Plan lists the instances, op by op and size by size (ibarrier once).
func (s *NonBlockingSweep) Plan(p int) ([]Pattern, error) {
	if err := planCollSweep("nonblocking", p, s.Ops, s.Root); err != nil {
		return nil, err
	}
	reps := s.RepWarmup.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, op := range s.Ops {
		for _, m := range collSizes(op, s.Sizes) {
			out = append(out, NonBlocking{Op: op, Bytes: m, Type: s.Type, Reduce: s.Reduction, Root: s.Root,
				Probes: s.Probes, OSU: s.OSU, Validate: s.Verify, Reps: reps})
		}
	}
	return out, nil
}

// nbOpNames are the non-blocking calls' names, for the parameter spec.
func nbOpNames() []string {
	var out []string
	for _, o := range mpi.CollOps() {
		if o.NonBlocking() {
			out = append(out, "i"+o.String())
		}
	}
	return out
}
