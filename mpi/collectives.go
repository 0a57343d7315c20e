package mpi

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Typed reductions on buffers of any element type, and the non-blocking
// collectives of MPI-3: optional interfaces, so that mpi.Comm keeps the
// calls every backend has and a pattern asks for these where it needs them
// (a type assertion; a backend without them is refused as bad input).

// Datatype is the element type of a typed reduction.
type Datatype int

// The element types. Float32 is MPI_FLOAT, the type of OSU's reduction
// benchmarks.
const (
	Float32 Datatype = iota // MPI_FLOAT
	Float64                 // MPI_DOUBLE
	Int32                   // MPI_INT32_T
	Int64                   // MPI_INT64_T
	Int8                    // MPI_SIGNED_CHAR: bytes as small integers (OSU's MPI_CHAR accumulates)
)

var datatypeNames = [...]string{Float32: "float", Float64: "double", Int32: "int", Int64: "long", Int8: "char"}

// Datatypes lists every element type, in the order of their names.
var Datatypes = []Datatype{Float32, Float64, Int32, Int64, Int8}

func (d Datatype) String() string {
	if d >= 0 && int(d) < len(datatypeNames) {
		return datatypeNames[d]
	}
	return fmt.Sprintf("Datatype(%d)", int(d))
}

// Valid reports whether d is one of Datatypes.
func (d Datatype) Valid() bool { return d >= 0 && int(d) < len(datatypeNames) }

// Size is the bytes of one element.
func (d Datatype) Size() int {
	switch d {
	case Float64, Int64:
		return 8
	case Int8:
		return 1
	}
	return 4
}

// ParseDatatype reads a type as String writes it.
func ParseDatatype(s string) (Datatype, error) {
	for i, n := range datatypeNames {
		if s == n {
			return Datatype(i), nil
		}
	}
	return 0, fmt.Errorf("element type %q: accepted values are float, double, int, long and char", s)
}

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (d *Datatype) UnmarshalText(b []byte) error {
	v, err := ParseDatatype(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Datatype) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// ParseOp reads an operation as Op.String writes it.
func ParseOp(s string) (Op, error) {
	for _, o := range []Op{OpSum, OpMin, OpMax} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("reduction %q: accepted values are sum, min and max", s)
}

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (o *Op) UnmarshalText(b []byte) error {
	v, err := ParseOp(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Reducer is implemented by backends that reduce byte buffers holding
// elements of any Datatype (MPI_Reduce, MPI_Allreduce,
// MPI_Reduce_scatter_block and MPI_Reduce_scatter); the typed methods of
// Comm reduce float64 and int64 slices only. A buffer's element count is
// its length divided by dt.Size(), which must divide it. Passing the same
// slice as send and recv (where recv is significant) reduces in place.
type Reducer interface {
	// Reduce is MPI_Reduce: recv (at least len(send) bytes) is written at
	// root only.
	Reduce(send, recv []byte, dt Datatype, op Op, root int) error
	// Allreduce is MPI_Allreduce.
	Allreduce(send, recv []byte, dt Datatype, op Op) error
	// ReduceScatterBlock is MPI_Reduce_scatter_block: send holds Size()
	// blocks of len(recv) bytes; rank i receives the reduction of every
	// rank's block i.
	ReduceScatterBlock(send, recv []byte, dt Datatype, op Op) error
	// ReduceScatter is MPI_Reduce_scatter: send holds sum(counts)
	// elements, rank i receives the reduction of the counts[i] elements
	// after the first counts[0]+...+counts[i-1] into recv (at least
	// counts[i] elements).
	ReduceScatter(send, recv []byte, counts []int, dt Datatype, op Op) error
	// ReduceLocal is MPI_Reduce_local: inout = in op inout, element by
	// element, on this rank alone (the library's own reduction, the
	// compute step of its reducing collectives).
	ReduceLocal(in, inout []byte, dt Datatype, op Op) error
}

// LocalReduceKernels is implemented by backends that time MPI_Reduce_local
// in the MPI library's language, a batch of repetitions per foreign call:
// the reduction's cost per byte (the gamma of the collective algorithms'
// costs) without a cgo crossing per call.
type LocalReduceKernels interface {
	// ReduceLocalBatch runs iters MPI_Reduce_local calls of in into inout
	// per repetition (ReduceLocal's arguments).
	ReduceLocalBatch(b Batch, in, inout []byte, dt Datatype, op Op, iters int) error
}

// NonBlockingCollectives is implemented by backends with MPI-3's
// non-blocking collectives. Each call starts the operation and returns its
// request; the buffers (and the counts and displacements of the v-forms)
// must not be touched until the request completes. A rank may start
// several before waiting for any; every rank starts them in the same order.
// The arguments are those of the blocking forms (Comm, Reducer).
type NonBlockingCollectives interface {
	Ibarrier() (Request, error)
	Ibcast(buf []byte, root int) (Request, error)
	Igather(send, recv []byte, root int) (Request, error)
	Igatherv(send, recv []byte, counts, displs []int, root int) (Request, error)
	Iscatter(send, recv []byte, root int) (Request, error)
	Iscatterv(send []byte, counts, displs []int, recv []byte, root int) (Request, error)
	Iallgather(send, recv []byte) (Request, error)
	Iallgatherv(send, recv []byte, counts, displs []int) (Request, error)
	Ialltoall(send, recv []byte) (Request, error)
	Ialltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) (Request, error)
	Ireduce(send, recv []byte, dt Datatype, op Op, root int) (Request, error)
	Iallreduce(send, recv []byte, dt Datatype, op Op) (Request, error)
}

// CheckTyped reports a buffer whose length is not a whole number of
// elements of dt, or a dt or op no backend knows, as the backends do
// before any communication.
func CheckTyped(opName string, dt Datatype, op Op, bufs ...[]byte) error {
	if !dt.Valid() {
		return &Error{Op: opName, Class: ErrType, Msg: ClassName(ErrType) + ": unknown element type " + dt.String()}
	}
	if op != OpSum && op != OpMin && op != OpMax {
		return &Error{Op: opName, Class: ErrOp, Msg: ClassName(ErrOp) + ": unsupported reduction " + op.String()}
	}
	for _, b := range bufs {
		if len(b)%dt.Size() != 0 {
			return &Error{Op: opName, Class: ErrCount, Msg: fmt.Sprintf("%s: a buffer of %d bytes is not a whole number of %d-byte %s elements", ClassName(ErrCount), len(b), dt.Size(), dt)}
		}
	}
	return nil
}

// ReduceInto folds src into acc element by element (acc = acc op src), both
// holding elements of dt in the host's byte order: the reduction of the
// backends without a library (mpi/local) and of patterns that compute an
// expected result. len(src) must be at least len(acc).
func ReduceInto(acc, src []byte, dt Datatype, op Op) {
	ne := binary.NativeEndian
	switch dt {
	case Float32:
		for i := 0; i+4 <= len(acc); i += 4 {
			a, b := math.Float32frombits(ne.Uint32(acc[i:])), math.Float32frombits(ne.Uint32(src[i:]))
			ne.PutUint32(acc[i:], math.Float32bits(fold(a, b, op)))
		}
	case Float64:
		for i := 0; i+8 <= len(acc); i += 8 {
			a, b := math.Float64frombits(ne.Uint64(acc[i:])), math.Float64frombits(ne.Uint64(src[i:]))
			ne.PutUint64(acc[i:], math.Float64bits(fold(a, b, op)))
		}
	case Int32:
		for i := 0; i+4 <= len(acc); i += 4 {
			a, b := int32(ne.Uint32(acc[i:])), int32(ne.Uint32(src[i:]))
			ne.PutUint32(acc[i:], uint32(fold(a, b, op)))
		}
	case Int64:
		for i := 0; i+8 <= len(acc); i += 8 {
			a, b := int64(ne.Uint64(acc[i:])), int64(ne.Uint64(src[i:]))
			ne.PutUint64(acc[i:], uint64(fold(a, b, op)))
		}
	case Int8:
		for i := range acc {
			acc[i] = byte(fold(int8(acc[i]), int8(src[i]), op))
		}
	}
}

func fold[T float32 | float64 | int8 | int32 | int64](a, b T, op Op) T {
	switch op {
	case OpMin:
		return min(a, b)
	case OpMax:
		return max(a, b)
	}
	return a + b
}

// PutElement stores v as element i of buf (elements of dt, host byte order).
func PutElement(buf []byte, dt Datatype, i int, v float64) {
	ne := binary.NativeEndian
	switch dt {
	case Float32:
		ne.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
	case Float64:
		ne.PutUint64(buf[8*i:], math.Float64bits(v))
	case Int32:
		ne.PutUint32(buf[4*i:], uint32(int32(v)))
	case Int64:
		ne.PutUint64(buf[8*i:], uint64(int64(v)))
	case Int8:
		buf[i] = byte(int8(v))
	}
}

// Element reads element i of buf (elements of dt, host byte order).
func Element(buf []byte, dt Datatype, i int) float64 {
	ne := binary.NativeEndian
	switch dt {
	case Float32:
		return float64(math.Float32frombits(ne.Uint32(buf[4*i:])))
	case Float64:
		return math.Float64frombits(ne.Uint64(buf[8*i:]))
	case Int32:
		return float64(int32(ne.Uint32(buf[4*i:])))
	case Int64:
		return float64(int64(ne.Uint64(buf[8*i:])))
	case Int8:
		return float64(int8(buf[i]))
	}
	return math.NaN()
}

// Feature is an optional capability of a backend: one of the optional
// interfaces, which a native backend has only when its MPI library
// provides the calls.
type Feature string

// The features patterns ask for.
const (
	FeatureReducer     Feature = "typed reductions (MPI_Reduce_scatter_block, MPI-2.2)"
	FeatureNonBlocking Feature = "non-blocking collectives (MPI-3)"
	FeatureWindows     Feature = "one-sided windows (MPI_Win_allocate, lock_all and flush: MPI-3)"
)

// Provider is implemented by backends whose features depend on the library
// they run on: Missing says why f is not available (nil when it is).
type Provider interface {
	Missing(f Feature) error
}

// Supports reports why c cannot provide f: it lacks the feature's
// interface, or its library lacks the calls (Provider). Nil means it can.
func Supports(c Comm, f Feature) error {
	var ok bool
	switch f {
	case FeatureReducer:
		_, ok = c.(Reducer)
	case FeatureNonBlocking:
		_, ok = c.(NonBlockingCollectives)
	case FeatureWindows:
		_, ok = c.(WindowAllocator)
	}
	if !ok {
		return fmt.Errorf("the %s backend has no %s", c.Backend(), f)
	}
	if p, isP := c.(Provider); isP {
		return p.Missing(f)
	}
	return nil
}
