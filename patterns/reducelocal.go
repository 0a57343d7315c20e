package patterns

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchReduceLocal is the bench name of local reduction records: params
// bytes, type, reduction and iters, unit s per call.
const BenchReduceLocal = "reducelocal"

// ReduceLocal configures the local reduction of Bytes of Type
// (MPI_Reduce_local: inout = in op inout) that the MPI library's reducing
// collectives run at every combining step: its time per byte is the gamma
// of the collective algorithms' costs (model "collalg"; Thakur,
// Rabenseifner and Gropp 2005, section 2). Every rank reduces its own
// buffers at once, as in a collective's step; a repetition is Iters calls,
// and the sample the maximum over ranks, per call.
type ReduceLocal struct {
	Bytes    int
	Type     mpi.Datatype
	Reduce   mpi.Op
	Iters    int // calls per repetition; 0 = 100
	Validate bool
	Reps     Reps
}

// DefaultReduceLocalIters is the default calls per repetition.
const DefaultReduceLocalIters = 100

func (k ReduceLocal) iters() int {
	if k.Iters <= 0 {
		return DefaultReduceLocalIters
	}
	return k.Iters
}

// Check reports an instance no run could measure.
func (k ReduceLocal) Check() error {
	if k.Bytes%k.Type.Size() != 0 {
		return fmt.Errorf("reducelocal of %v: %d bytes is not a whole number of %d-byte elements", k.Type, k.Bytes, k.Type.Size())
	}
	if k.Validate && k.Reduce == mpi.OpSum && float64(k.iters())*6+6 > exactLimit(k.Type) {
		return fmt.Errorf("validating sums of %v needs at most %d calls per repetition (the sum must stay within %v), got %d: lower --iters or use --type int",
			k.Type, int((exactLimit(k.Type)-6)/6), k.Type, k.iters())
	}
	return nil
}

// Run measures the reduction on every rank of c (collective).
func (k ReduceLocal) Run(c mpi.Comm) (Measurement, error) {
	if err := k.Check(); err != nil {
		return Measurement{}, err
	}
	if err := mpi.Supports(c, mpi.FeatureReducer); err != nil {
		return Measurement{}, err
	}
	red := c.(mpi.Reducer)
	me, n, iters := c.Rank(), k.Bytes/k.Type.Size(), k.iters()
	in, inout := make([]byte, k.Bytes), make([]byte, k.Bytes)
	fill := func() {
		for i := range n {
			mpi.PutElement(in, k.Type, i, collValue(me, i))
			mpi.PutElement(inout, k.Type, i, collValue(me+1, i))
		}
	}
	fill()
	batch := SerialBatch(c, func() (float64, error) {
		t0 := c.Wtime()
		for range iters {
			if err := red.ReduceLocal(in, inout, k.Type, k.Reduce); err != nil {
				return 0, err
			}
		}
		return c.Wtime() - t0, nil
	})
	if lk, ok := c.(mpi.LocalReduceKernels); ok {
		batch = func(b mpi.Batch) error { return lk.ReduceLocalBatch(b, in, inout, k.Type, k.Reduce, iters) }
	}
	if k.Validate {
		batch = checked(batch, fill, func() error {
			for i := range n {
				a, b := collValue(me, i), collValue(me+1, i)
				want := b + float64(iters)*a
				switch k.Reduce {
				case mpi.OpMin:
					want = min(a, b)
				case mpi.OpMax:
					want = max(a, b)
				}
				if got := mpi.Element(inout, k.Type, i); got != want {
					return fmt.Errorf("reducelocal %v of %v: %w: element %d is %v after %d calls, want %v", k.Reduce, k.Type, ErrValidation, i, got, iters, want)
				}
			}
			return nil
		})
	}
	reps := k.Reps
	reps.Reduction = ReduceMax
	m, err := MeasureBatch(c, reps, k.Validate, batch)
	if err != nil {
		return Measurement{}, err
	}
	return m.Scaled(1 / float64(iters)), nil
}

// Params are the record parameters.
func (k ReduceLocal) Params(int) results.Params {
	return results.Params{"bytes": k.Bytes, "type": k.Type.String(), "reduction": k.Reduce.String(), "iters": k.iters()}
}

// Bench is the bench name of the records.
func (ReduceLocal) Bench() string { return BenchReduceLocal }

// Record is the reduction's record, seconds per call.
func (k ReduceLocal) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchReduceLocal, k.Params(m.CommSize), m.CommSize, meta)
}

// Demand of the reduction: two buffers; no messages, the bytes reduced
// per repetition bound its time from below.
func (k ReduceLocal) Demand(int) Demand {
	return Demand{BufferBytes: 2 * int64(k.Bytes), MemParam: "bytes",
		RepBytes: float64(k.iters()) * float64(k.Bytes), RepParam: "--iters"}
}

// ReduceLocalSweep is the sweep of 'commcost reducelocal'.
type ReduceLocalSweep struct {
	RepFlags
	RepWarmup
	Sizes     opts.Sizes   `flag:"sizes" default:"4:1M" param:"bytes" usage:"bytes reduced per call: a list or LO:HI doubling; K = 1024"`
	Type      mpi.Datatype `flag:"type" default:"float" usage:"element type: float (OSU's reductions), double, int, long or char"`
	Reduction mpi.Op       `flag:"reduction" default:"sum" usage:"operation: sum, min or max"`
	Iters     int          `flag:"iters" default:"100" usage:"MPI_Reduce_local calls per timed repetition"`
}

func init() {
	Register(Def{Name: "reducelocal", Summary: "MPI_Reduce_local per byte: the compute cost of a reducing collective's step (every rank at once)",
		New: func() Sweep { return new(ReduceLocalSweep) }, Defaults: map[string]string{"max-time": "0.5"}})
}

// Validate checks the sweep's settings.
func (s *ReduceLocalSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.RepWarmup.Check,
		func() error { return CheckValues("Sizes", BenchReduceLocal, "bytes", s.Sizes) },
		func() error {
			if s.Iters < 1 {
				return opts.Field("Iters", s.Iters, "must be positive (an integer >= 1)")
			}
			es := s.Type.Size()
			for _, m := range s.Sizes {
				if m%es != 0 {
					return opts.Item("Sizes", m, "a reduction moves whole %d-byte %v elements; use multiples of %d (or --type)", es, s.Type, es)
				}
			}
			if s.Verify {
				if err := (ReduceLocal{Type: s.Type, Reduce: s.Reduction, Iters: s.Iters, Validate: true}).Check(); err != nil {
					return opts.Badf("{Verify}: %v", err)
				}
			}
			return nil
		})
}

// Plan lists one reduction per size; any number of ranks.
func (s *ReduceLocalSweep) Plan(int) ([]Pattern, error) {
	reps := s.RepWarmup.Reps(s.RepFlags.Reps())
	var out []Pattern
	for _, m := range s.Sizes {
		out = append(out, ReduceLocal{Bytes: m, Type: s.Type, Reduce: s.Reduction, Iters: s.Iters, Validate: s.Verify, Reps: reps})
	}
	return out, nil
}
