package patterns

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// TestCollectiveRun runs every collective with validation on goroutine
// ranks, powers of two and not, the root last: every rank gets the same
// summary, OSU's figure lies between its minimum and maximum, and the
// record's parameters pass the bench's spec.
func TestCollectiveRun(t *testing.T) {
	for _, p := range []int{2, 3, 5} {
		for _, op := range mpi.CollOps() {
			types := []mpi.Datatype{mpi.Float32}
			if op.Reduces() {
				types = mpi.Datatypes
			}
			for _, dt := range types {
				k := Collective{Op: op, Bytes: 24, Type: dt, Reduce: mpi.OpMax, Root: p - 1, Iters: 2, Validate: true, Reps: quickReps}
				t.Run(fmt.Sprintf("p%d_%v_%v", p, op, dt), func(t *testing.T) {
					rs := runRanks(t, p, func(c mpi.Comm) (Measurement, error) { return k.Run(c) })
					checkMeasured(t, rs, quickReps.MinReps)
					s := rs[0].RankMean
					if !(s.Min > 0 && s.Min <= s.Avg && s.Avg <= s.Max) {
						t.Errorf("OSU figure %+v: want 0 < min <= avg <= max", s)
					}
					rec := k.Record(rs[0], results.Meta{})
					if err := CheckParams(BenchCollective, rec.Params, true); err != nil {
						t.Error(err)
					}
					if rec.Derived[DerivedOSUAvg] != s.Avg || rec.Ranks != p {
						t.Errorf("record derived %v ranks %d", rec.Derived, rec.Ranks)
					}
				})
			}
		}
	}
}

// corrupting is a Comm whose reductions and broadcasts deliver one wrong
// byte, to show that validation catches a library's wrong result.
type corrupting struct {
	mpi.Comm
}

func (c corrupting) Bcast(buf []byte, root int) error {
	err := c.Comm.Bcast(buf, root)
	if c.Rank() != root && len(buf) > 0 {
		buf[len(buf)-1] ^= 1
	}
	return err
}

func (c corrupting) Reduce(send, recv []byte, dt mpi.Datatype, op mpi.Op, root int) error {
	return c.Comm.(mpi.Reducer).Reduce(send, recv, dt, op, root)
}

func (c corrupting) Allreduce(send, recv []byte, dt mpi.Datatype, op mpi.Op) error {
	err := c.Comm.(mpi.Reducer).Allreduce(send, recv, dt, op)
	if c.Rank() == 1 {
		mpi.PutElement(recv, dt, 0, mpi.Element(recv, dt, 0)+1)
	}
	return err
}

func (c corrupting) ReduceScatterBlock(send, recv []byte, dt mpi.Datatype, op mpi.Op) error {
	return c.Comm.(mpi.Reducer).ReduceScatterBlock(send, recv, dt, op)
}

func (c corrupting) ReduceScatter(send, recv []byte, counts []int, dt mpi.Datatype, op mpi.Op) error {
	return c.Comm.(mpi.Reducer).ReduceScatter(send, recv, counts, dt, op)
}

func (c corrupting) ReduceLocal(in, inout []byte, dt mpi.Datatype, op mpi.Op) error {
	return c.Comm.(mpi.Reducer).ReduceLocal(in, inout, dt, op)
}

// TestForcedAlgorithm: Open MPI's forced coll/tuned algorithm (by number
// or name, only with dynamic rules on) and MPICH's CVAR name the record's
// algorithm; anything else is the library's default.
func TestForcedAlgorithm(t *testing.T) {
	tests := []struct {
		name string
		op   mpi.CollOp
		env  map[string]string
		want string
	}{
		{"none", mpi.CollAllreduce, nil, ""},
		{"ompi number", mpi.CollAllreduce, map[string]string{"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "6"}, "rabenseifner"},
		{"ompi name", mpi.CollBcast, map[string]string{"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_bcast_algorithm": "binomial"}, "binomial"},
		{"ompi without dynamic rules", mpi.CollAllreduce, map[string]string{"OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}, ""},
		{"ompi ignore", mpi.CollAllreduce, map[string]string{"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "0"}, ""},
		{"ompi other op", mpi.CollBcast, map[string]string{"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}, ""},
		{"ompi reduce_scatter_block", mpi.CollReduceScatterBlock, map[string]string{"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm": "3"}, "recursive_halving"},
		{"mpich", mpi.CollAllreduce, map[string]string{"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling"}, "recursive_doubling"},
		{"mpich auto", mpi.CollAllreduce, map[string]string{"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "auto"}, ""},
		{"mpich unknown value", mpi.CollAllreduce, map[string]string{"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "nosuch"}, ""},
		{"mpich another op's algorithm", mpi.CollBcast, map[string]string{"MPIR_CVAR_BCAST_INTRA_ALGORITHM": "ring"}, ""},
	}
	for _, tt := range tests {
		if got := ForcedAlgorithm(tt.op, func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCollectiveValidationCatches: a wrong element of an allreduce and a
// wrong byte of a broadcast fail the run with ErrValidation on the rank
// that got it (and ErrPeerFailed on the others).
func TestCollectiveValidationCatches(t *testing.T) {
	for _, op := range []mpi.CollOp{mpi.CollAllreduce, mpi.CollBcast} {
		t.Run(op.String(), func(t *testing.T) {
			k := Collective{Op: op, Bytes: 16, Type: mpi.Int32, Reduce: mpi.OpSum, Validate: true, Reps: quickReps}
			errs := make([]error, 3)
			_ = local.Run(3, func(c mpi.Comm) error {
				_, err := k.Run(corrupting{c})
				errs[c.Rank()] = err
				return nil
			})
			if !errors.Is(errs[1], ErrValidation) {
				t.Errorf("rank 1: %v, want a validation error", errs[1])
			}
		})
	}
}

// TestOSUCollCounts: OSU 6.1 switches to its large counts above 8192 of
// its size variable, which counts floats in the reduction benchmarks.
func TestOSUCollCounts(t *testing.T) {
	tests := []struct {
		op          mpi.CollOp
		bytes       int
		iters, skip int
	}{
		{mpi.CollBcast, 8192, 1000, 100},
		{mpi.CollBcast, 16384, 100, 10},
		{mpi.CollAllreduce, 32768, 1000, 100}, // 8192 floats
		{mpi.CollAllreduce, 65536, 100, 10},
		{mpi.CollReduceScatter, 32768, 1000, 100},
		{mpi.CollAlltoall, 16384, 100, 10},
		{mpi.CollBarrier, 0, 1000, 100},
	}
	for _, tt := range tests {
		if it, sk := OSUCollCounts(tt.op, tt.bytes); it != tt.iters || sk != tt.skip {
			t.Errorf("%v %d B: %d iterations after %d, want %d after %d", tt.op, tt.bytes, it, sk, tt.iters, tt.skip)
		}
	}
}

// TestOSUReduceScatterCounts: osu_reduce_scatter's split of n elements.
func TestOSUReduceScatterCounts(t *testing.T) {
	tests := []struct {
		n, p int
		want []int
	}{
		{1, 4, []int{1, 0, 0, 0}},
		{3, 4, []int{1, 1, 1, 0}},
		{8, 4, []int{2, 2, 2, 2}},
		{10, 4, []int{3, 3, 2, 2}},
		{262144, 3, []int{87382, 87381, 87381}},
	}
	for _, tt := range tests {
		if got := OSUReduceScatterCounts(tt.n, tt.p); !slices.Equal(got, tt.want) {
			t.Errorf("%d over %d: %v, want %v", tt.n, tt.p, got, tt.want)
		}
	}
}

// TestCollectiveSweepRefuses: the sweep's bad inputs name the field.
func TestCollectiveSweepRefuses(t *testing.T) {
	base := func() *CollectiveSweep {
		s := new(CollectiveSweep)
		opts.FillDefaults(s)
		return s
	}
	tests := []struct {
		name  string
		edit  func(s *CollectiveSweep)
		p     int
		field string
		want  string
	}{
		{"one rank", func(*CollectiveSweep) {}, 1, "", "at least 2 ranks"},
		{"root", func(s *CollectiveSweep) { s.Root = 4 }, 4, "Root", "ranks are 0..3"},
		{"size of floats", func(s *CollectiveSweep) { s.Sizes = opts.Sizes{4, 6} }, 4, "Sizes", "multiples of 4"},
		{"size of doubles", func(s *CollectiveSweep) { s.Sizes = opts.Sizes{4}; s.Type = mpi.Float64 }, 4, "Sizes", "multiples of 8"},
		{"osu and iters", func(s *CollectiveSweep) { s.OSU = true; s.Set = opts.Given{"Iters": true} }, 4, "Iters", "OSU 6.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(s)
			err := s.Validate()
			if err == nil {
				_, err = s.Plan(tt.p)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if tt.field != "" && !strings.Contains(fmt.Sprintf("%#v", err), tt.field) {
				t.Errorf("error %#v does not name field %s", err, tt.field)
			}
		})
	}
	// Sizes that are not whole elements are fine when no reduction runs.
	s := base()
	s.Ops, s.Sizes = []mpi.CollOp{mpi.CollBcast, mpi.CollGather}, opts.Sizes{3}
	if err := s.Validate(); err != nil {
		t.Errorf("bcast and gather of 3 bytes: %v", err)
	}
}

// TestCollectiveOpsListed: the --ops default and help list exactly the
// registry's collectives (mpi.CollOps), in its order.
func TestCollectiveOpsListed(t *testing.T) {
	f, ok := reflect.TypeFor[CollectiveSweep]().FieldByName("Ops")
	if !ok {
		t.Fatal("no Ops field")
	}
	names := collOpNames()
	if got := strings.Split(f.Tag.Get("default"), ","); !slices.Equal(got, names) {
		t.Errorf("--ops default %v, want %v", got, names)
	}
	if usage := f.Tag.Get("usage"); !strings.Contains(usage, strings.Join(names, ", ")) {
		t.Errorf("--ops help %q does not list %v", usage, names)
	}
}

// TestPointToPointOSU runs the bidirectional, multi-pair bandwidth and
// multi-pair latency patterns with validation on goroutine ranks, odd rank
// counts included (a rank outside the pairs waits), and checks their
// records: OSU's figures from rank 0's mean, the message rate, bandwidth
// in B/s.
func TestPointToPointOSU(t *testing.T) {
	tests := []struct {
		name string
		p    int
		pat  Pattern
		keys []string
	}{
		{"bibw", 2, Bibw{Bytes: 100, Window: 5, Iters: 2, Warmup: 1, Validate: true, Reps: quickReps}, []string{"rep_time_s"}},
		{"mbwmr p4", 4, MultiBandwidth{Bytes: 100, Window: 4, Iters: 2, Validate: true, Reps: quickReps}, []string{DerivedRate, DerivedOSUBw, DerivedOSURate}},
		{"mbwmr p5 one pair", 5, MultiBandwidth{Bytes: 64, Pairs: 1, Validate: true, Reps: quickReps}, []string{DerivedRate, DerivedOSUBw}},
		{"multilat p5", 5, MultiLatency{Bytes: 33, Iters: 3, Validate: true, Reps: quickReps}, []string{DerivedOSULatSec}},
		{"multilat osu", 2, MultiLatency{Bytes: 8, OSU: true, Reps: quickReps}, []string{DerivedOSULatSec}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := runRanks(t, tt.p, tt.pat.Run)
			n := quickReps.MinReps
			if ml, ok := tt.pat.(MultiLatency); ok && ml.OSU {
				n = OSUItersSmall // osu_multi_lat's 10000 round trips, one per repetition
			}
			checkMeasured(t, rs, n)
			rec := tt.pat.Record(rs[0], results.Meta{})
			if err := CheckParams(tt.pat.Bench(), rec.Params, true); err != nil {
				t.Error(err)
			}
			for _, k := range tt.keys {
				if !(rec.Derived[k] > 0) {
					t.Errorf("derived %s = %v, want > 0 (derived %v)", k, rec.Derived[k], rec.Derived)
				}
			}
			if tt.pat.Bench() != BenchMultiLatency && rec.Unit != results.UnitBytesPerSec {
				t.Errorf("unit %q, want B/s", rec.Unit)
			}
		})
	}
}

// TestMultiPairRefuses: a pair count above ranks/2 and one rank are bad
// input naming the field.
func TestMultiPairRefuses(t *testing.T) {
	s := new(MultiBandwidthSweep)
	opts.FillDefaults(s)
	s.Pairs = 3
	if _, err := s.Plan(5); err == nil || !strings.Contains(fmt.Sprintf("%#v", err), "Pairs") || !strings.Contains(err.Error(), "ranks/2 = 2") {
		t.Errorf("3 pairs on 5 ranks: %v", err)
	}
	if _, err := new(MultiLatencySweep).Plan(1); err == nil || !strings.Contains(err.Error(), "at least 2 ranks") {
		t.Errorf("multilat on 1 rank: %v", err)
	}
	err := local.Run(4, func(c mpi.Comm) error {
		_, err := MultiBandwidth{Bytes: 8, Pairs: 3, Reps: quickReps}.Run(c)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "3 pairs on 4 ranks") {
		t.Errorf("Run with 3 pairs on 4 ranks: %v", err)
	}
}

// TestNonBlockingRun runs every non-blocking collective with validation on
// goroutine ranks, with and without MPI_Test probes, and checks the
// overlap record: OSU's figures and commcost's, all present and finite.
func TestNonBlockingRun(t *testing.T) {
	keys := []string{DerivedOSUOverall, DerivedOSUCompute, DerivedOSUTest, DerivedOSUComm, DerivedOSUCommMin,
		DerivedOSUCommMax, DerivedOSUOverlap, DerivedComm, DerivedOverlap}
	for _, p := range []int{2, 3} {
		for _, op := range mpi.CollOps() {
			if !op.NonBlocking() {
				continue
			}
			k := NonBlocking{Op: op, Bytes: 16, Type: mpi.Int64, Reduce: mpi.OpSum, Root: p - 1, Probes: p - 2, Validate: true, Reps: quickReps}
			t.Run(fmt.Sprintf("p%d_%s", p, k.OpName()), func(t *testing.T) {
				rs := runRanks(t, p, k.Run)
				checkMeasured(t, rs, quickReps.MinReps)
				rec := k.Record(rs[0], results.Meta{})
				if err := CheckParams(BenchNonBlocking, rec.Params, true); err != nil {
					t.Error(err)
				}
				for _, key := range keys {
					v, ok := rec.Derived[key]
					if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Errorf("derived %s = %v (present %v)", key, v, ok)
					}
				}
				if !(rec.Derived[DerivedOSUComm] > 0 && rec.Derived[DerivedOSUOverall] > 0) {
					t.Errorf("derived %v", rec.Derived)
				}
			})
		}
	}
}

// TestOverlapPct: OSU's formula, max(0, 100 - 100 (overall - compute) /
// comm), on exact cases.
func TestOverlapPct(t *testing.T) {
	tests := []struct {
		overall, compute, comm, want float64
	}{
		{10, 10, 10, 100}, // the call cost nothing beyond the compute
		{20, 10, 10, 0},   // none of it overlapped
		{15, 10, 10, 50},
		{30, 10, 10, 0}, // worse than serial: clipped at 0
		{12, 10, 8, 75},
		{5, 0, 0, 0}, // no communication measured
	}
	for _, tt := range tests {
		if got := OverlapPct(tt.overall, tt.compute, tt.comm); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("OverlapPct(%v, %v, %v) = %v, want %v", tt.overall, tt.compute, tt.comm, got, tt.want)
		}
	}
}

// TestOneSidedRun runs every loop OSU has, with every synchronisation it
// runs with, on goroutine ranks with validation: the window's data, the
// gets' results and the accumulated sums are checked after every
// repetition.
func TestOneSidedRun(t *testing.T) {
	syncs := []mpi.RMASync{mpi.SyncFlush, mpi.SyncLock, mpi.SyncLockAll, mpi.SyncFence, mpi.SyncPSCW}
	for _, op := range mpi.RMAOps() {
		for _, mode := range []mpi.RMAMode{mpi.RMALatency, mpi.RMABandwidth, mpi.RMABibw} {
			for _, sync := range syncs {
				if !OSUHas(op, mode, sync) {
					continue
				}
				dt := OSUType(op)
				if op == mpi.RMACompareAndSwap {
					dt = mpi.Int32
				}
				k := OneSided{Op: op, Mode: mode, Sync: sync, Bytes: 12, Window: 3, Type: dt, Iters: 4, Warmup: 2, Validate: true, Reps: quickReps}
				t.Run(fmt.Sprintf("%v_%v_%v", op, mode, sync), func(t *testing.T) {
					rs := runRanks(t, 2, k.Run)
					checkMeasured(t, rs, quickReps.MinReps)
					rec := k.Record(rs[0], results.Meta{})
					if err := CheckParams(BenchOneSided, rec.Params, true); err != nil {
						t.Error(err)
					}
					if !(rec.Derived["rep_time_s"] > 0) {
						t.Errorf("derived %v", rec.Derived)
					}
				})
			}
		}
	}
}

// TestOneSidedCheck: the validation of a loop fails on a window or result
// that is not what the calls must have left.
func TestOneSidedCheck(t *testing.T) {
	tests := []struct {
		name   string
		op     mpi.RMAOp
		target bool // the rank that checks is the target (else the origin)
		spoil  func(b mpi.RMABuffers)
	}{
		{"put", mpi.RMAPut, true, func(b mpi.RMABuffers) { b.Mem[5] ^= 1 }},
		{"get", mpi.RMAGet, false, func(b mpi.RMABuffers) { b.Result[0] ^= 1 }},
		{"acc", mpi.RMAAccumulate, true, func(b mpi.RMABuffers) { b.Mem[1]++ }},
		{"fop", mpi.RMAFetchAndOp, true, func(b mpi.RMABuffers) { b.Mem[0]++ }},
		{"cas", mpi.RMACompareAndSwap, true, func(b mpi.RMABuffers) { b.Mem[0]++ }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := OneSided{Op: tt.op, Mode: mpi.RMALatency, Sync: mpi.SyncFlush, Bytes: 8, Type: OSUType(tt.op)}
			me := 0
			if tt.target {
				me = 1
			}
			sp := k.spec(me)
			n := sp.Bytes() * sp.Calls()
			s := &rmaSide{k: k, spec: sp, bufs: mpi.RMABuffers{Origin: make([]byte, n), Result: make([]byte, n), Compare: make([]byte, n), Mem: make([]byte, n)}}
			s.prepare()
			// What the calls of 2 iterations leave when all goes well.
			other := &rmaSide{k: k, spec: k.spec(1 - me), bufs: mpi.RMABuffers{Origin: make([]byte, n), Result: make([]byte, n), Compare: make([]byte, n), Mem: make([]byte, n)}}
			other.prepare()
			switch tt.op {
			case mpi.RMAPut:
				copy(s.bufs.Mem, other.bufs.Origin)
			case mpi.RMAGet:
				copy(s.bufs.Result, other.bufs.Mem)
			case mpi.RMACompareAndSwap:
				copy(s.bufs.Mem, other.bufs.Origin)
			default:
				for range 2 {
					mpi.ReduceInto(s.bufs.Mem, other.bufs.Origin, sp.Type, mpi.OpSum)
				}
			}
			if err := s.check(2); err != nil {
				t.Fatalf("check of a correct repetition: %v", err)
			}
			tt.spoil(s.bufs)
			if err := s.check(2); !errors.Is(err, ErrValidation) {
				t.Errorf("check of a spoilt repetition: %v, want a validation error", err)
			}
		})
	}
}
