// Package mpi defines the message-passing interface every commcost pattern,
// library and application is written against (docs/ARCHITECTURE.md, contract 1).
//
// Two backends implement Comm:
//   - mpi/native: a cgo binding to the system MPI (Open MPI or MPICH), run
//     under mpirun or srun. Every time commcost reports as a network
//     measurement comes from it.
//   - mpi/local: n goroutine ranks inside one process, for unit tests (with
//     -race) and count-based studies at scale. Its times are never network
//     measurements; records name the backend they came from.
//
// Units: buffers are bytes, counts in Status are bytes, times are seconds.
//
// Semantics follow MPI: point-to-point messages between one (source, tag,
// communicator) triple are non-overtaking; AnySource and AnyTag match any
// sender or tag; a receive buffer longer than the message is legal (Status
// tells the received byte count), shorter is an error (MPI_ERR_TRUNCATE).
// Buffers passed to non-blocking calls must not be touched until the request
// completes; the backends keep them alive and pinned until then.
//
// Errors: every failure is returned as *Error (operation, MPI error class and
// the library's error string); no call aborts the job on bad arguments.
//
// Concurrency: a Comm is used by one goroutine at a time, like an MPI
// communicator under MPI_THREAD_SERIALIZED. Each rank of mpi/local is its
// own goroutine.
package mpi

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Wildcards for receive and probe.
const (
	AnySource = -1
	AnyTag    = -1
)

// MaxCount is the largest element count one MPI call can carry (the C int
// count argument). Larger buffers are rejected with ErrCount, never truncated.
const MaxCount = 1<<31 - 1

// Op is a reduction operation.
type Op int

// Reduction operations supported by the typed reductions.
const (
	OpSum Op = iota
	OpMin
	OpMax
)

func (o Op) String() string {
	switch o {
	case OpSum:
		return "sum"
	case OpMin:
		return "min"
	case OpMax:
		return "max"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Status describes a received or probed message.
type Status struct {
	Source int // rank of the sender in the communicator
	Tag    int
	Count  int // bytes
}

// Request is an outstanding non-blocking operation.
type Request interface {
	// Wait blocks until the operation completes.
	Wait() (Status, error)
	// Test reports whether the operation has completed, without blocking.
	Test() (done bool, st Status, err error)
}

// Comm is a communicator.
type Comm interface {
	Rank() int
	Size() int
	// Backend names the implementation: "native" or "local".
	Backend() string

	// Wtime is a wall clock in seconds (MPI_Wtime); Wtick its resolution.
	Wtime() float64
	Wtick() float64

	Barrier() error

	// Point-to-point. dest/source are ranks in this communicator.
	Send(buf []byte, dest, tag int) error
	Ssend(buf []byte, dest, tag int) error
	Recv(buf []byte, source, tag int) (Status, error)
	Sendrecv(sendBuf []byte, dest, sendTag int, recvBuf []byte, source, recvTag int) (Status, error)
	Isend(buf []byte, dest, tag int) (Request, error)
	Irecv(buf []byte, source, tag int) (Request, error)
	Probe(source, tag int) (Status, error)
	Iprobe(source, tag int) (found bool, st Status, err error)

	// Collectives on bytes. Sizes follow MPI: Gather's recv at the root holds
	// Size()*len(send) bytes, rank i's block at offset i*len(send); the v
	// variants take per-rank byte counts and displacements.
	Bcast(buf []byte, root int) error
	Gather(send, recv []byte, root int) error
	Gatherv(send, recv []byte, counts, displs []int, root int) error
	Allgather(send, recv []byte) error
	Allgatherv(send, recv []byte, counts, displs []int) error
	Scatter(send, recv []byte, root int) error
	Scatterv(send []byte, counts, displs []int, recv []byte, root int) error
	Alltoall(send, recv []byte) error
	Alltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) error

	// Typed reductions. recv is only read at the root for Reduce.
	ReduceFloat64s(send, recv []float64, op Op, root int) error
	AllreduceFloat64s(send, recv []float64, op Op) error
	ReduceInt64s(send, recv []int64, op Op, root int) error
	AllreduceInt64s(send, recv []int64, op Op) error

	// Split and Dup create new communicators (collective); Free releases one.
	// A color < 0 (Undefined) yields a nil Comm for that rank.
	Split(color, key int) (Comm, error)
	Dup() (Comm, error)
	Free() error
}

// Undefined is the color for Split that excludes the caller (MPI_UNDEFINED).
const Undefined = -1

// Waitall waits for every request and returns their statuses. It waits for
// all of them even after an error, and returns the first error.
func Waitall(reqs []Request) ([]Status, error) {
	sts := make([]Status, len(reqs))
	var first error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		st, err := r.Wait()
		sts[i] = st
		if err != nil && first == nil {
			first = err
		}
	}
	return sts, first
}

// AnyWaiter is implemented by the requests of a backend that can wait for
// the first of several requests in one call (native: MPI_Waitany), which
// Waitany then uses instead of polling.
type AnyWaiter interface {
	// WaitanyOf is Waitany for reqs; ok is false when some request of reqs
	// belongs to another backend, and then nothing was waited for.
	WaitanyOf(reqs []Request) (index int, st Status, err error, ok bool)
}

// Waitany waits until one of reqs completes and returns its index, status
// and error (MPI_Waitany). Nil entries are skipped; a request that completed
// earlier is returned at once, so set an entry to nil once it has been
// returned. With no non-nil entry it returns index -1 and no error (MPI's
// MPI_UNDEFINED). Requests of a backend implementing AnyWaiter are waited
// for in one call; otherwise Waitany polls Test, yielding between rounds.
func Waitany(reqs []Request) (int, Status, error) {
	first := -1
	for i, r := range reqs {
		if r != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return -1, Status{}, nil
	}
	if aw, ok := reqs[first].(AnyWaiter); ok {
		if i, st, err, ok := aw.WaitanyOf(reqs); ok {
			return i, st, err
		}
	}
	for {
		for i, r := range reqs {
			if r == nil {
				continue
			}
			done, st, err := r.Test()
			if err != nil || done {
				return i, st, err
			}
		}
		runtime.Gosched()
	}
}

// Error is an MPI failure: the operation, the MPI error class and code, and
// the library's text for it (MPI_Error_string).
type Error struct {
	Op    string // e.g. "MPI_Send"
	Class int    // MPI error class (ErrRank, ...), or 0 when not an MPI error
	Code  int    // the raw code returned by the library
	Msg   string // MPI_Error_string text or a description
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (class %d, code %d)", e.Op, e.Msg, e.Class, e.Code)
}

// Is lets errors.Is match on the error class: errors.Is(err, &Error{Class: ErrRank}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Class == e.Class
}

// Error classes. The numbering is commcost's own (it happens to be Open
// MPI's); the libraries differ (MPICH 4.0.2 has ROOT 7, TRUNCATE 14), so
// mpi/native translates each library class to these by name.
const (
	ErrSuccess  = 0
	ErrBuffer   = 1
	ErrCount    = 2
	ErrType     = 3
	ErrTag      = 4
	ErrComm     = 5
	ErrRank     = 6
	ErrRequest  = 7
	ErrRoot     = 8
	ErrGroup    = 9
	ErrOp       = 10
	ErrTopology = 11
	ErrDims     = 12
	ErrArg      = 13
	ErrUnknown  = 14
	ErrTruncate = 15
	ErrOther    = 16
	ErrIntern   = 17
)

var classNames = [...]string{
	ErrSuccess: "MPI_SUCCESS", ErrBuffer: "MPI_ERR_BUFFER", ErrCount: "MPI_ERR_COUNT",
	ErrType: "MPI_ERR_TYPE", ErrTag: "MPI_ERR_TAG", ErrComm: "MPI_ERR_COMM",
	ErrRank: "MPI_ERR_RANK", ErrRequest: "MPI_ERR_REQUEST", ErrRoot: "MPI_ERR_ROOT",
	ErrGroup: "MPI_ERR_GROUP", ErrOp: "MPI_ERR_OP", ErrTopology: "MPI_ERR_TOPOLOGY",
	ErrDims: "MPI_ERR_DIMS", ErrArg: "MPI_ERR_ARG", ErrUnknown: "MPI_ERR_UNKNOWN",
	ErrTruncate: "MPI_ERR_TRUNCATE", ErrOther: "MPI_ERR_OTHER", ErrIntern: "MPI_ERR_INTERN",
}

// ClassName is the standard name of an error class ("MPI_ERR_TRUNCATE"),
// or "MPI error class N" outside the table. Messages name the class so
// that they read the same whichever library produced them: Open MPI's
// MPI_Error_string starts with it, MPICH's does not.
func ClassName(class int) string {
	if class >= 0 && class < len(classNames) {
		return classNames[class]
	}
	return fmt.Sprintf("MPI error class %d", class)
}

// Float64Bytes views a []float64 as bytes without copying (same host
// representation on every rank is assumed, as MPI_BYTE transfer would).
func Float64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// Int64Bytes views a []int64 as bytes without copying.
func Int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// SendFloat64s sends float64 values.
func SendFloat64s(c Comm, v []float64, dest, tag int) error {
	return c.Send(Float64Bytes(v), dest, tag)
}

// RecvFloat64s receives float64 values into v; Status.Count is in bytes.
func RecvFloat64s(c Comm, v []float64, source, tag int) (Status, error) {
	return c.Recv(Float64Bytes(v), source, tag)
}

// SendInt64s sends int64 values.
func SendInt64s(c Comm, v []int64, dest, tag int) error { return c.Send(Int64Bytes(v), dest, tag) }

// RecvInt64s receives int64 values into v; Status.Count is in bytes.
func RecvInt64s(c Comm, v []int64, source, tag int) (Status, error) {
	return c.Recv(Int64Bytes(v), source, tag)
}

// BcastFloat64s broadcasts float64 values from root.
func BcastFloat64s(c Comm, v []float64, root int) error { return c.Bcast(Float64Bytes(v), root) }

// BcastInt64s broadcasts int64 values from root.
func BcastInt64s(c Comm, v []int64, root int) error { return c.Bcast(Int64Bytes(v), root) }

// AllgatherFloat64s gathers len(send) values from every rank into recv on all ranks.
func AllgatherFloat64s(c Comm, send, recv []float64) error {
	return c.Allgather(Float64Bytes(send), Float64Bytes(recv))
}

// AllgatherInt64s gathers len(send) values from every rank into recv on all ranks.
func AllgatherInt64s(c Comm, send, recv []int64) error {
	return c.Allgather(Int64Bytes(send), Int64Bytes(recv))
}

// GatherFloat64s gathers len(send) values from every rank at root.
func GatherFloat64s(c Comm, send, recv []float64, root int) error {
	return c.Gather(Float64Bytes(send), Float64Bytes(recv), root)
}

// AlltoallInt64s exchanges len(send)/Size() values with every rank.
func AlltoallInt64s(c Comm, send, recv []int64) error {
	return c.Alltoall(Int64Bytes(send), Int64Bytes(recv))
}

// Kernels is implemented by backends that run the micro-benchmark inner
// loops inside the MPI library's language, one foreign call per timed batch
// (MEASURE.md: a cgo crossing costs about half a shared-memory ping-pong).
// Patterns use it when present and fall back to Go loops otherwise.
type Kernels interface {
	// PingPong runs iters blocking round trips of len(send) bytes with
	// peer. The initiator sends first. Both ranks send from send and
	// receive into recv (len(recv) >= len(send)), separate buffers as in
	// OSU's s_buf/r_buf: receiving into the buffer just sent from costs
	// about 50% more at 1 MiB on shared memory. It returns the elapsed
	// seconds measured on this rank around the whole loop (Wtime).
	PingPong(send, recv []byte, peer, tag, iters int, initiator bool) (float64, error)
	// Bandwidth runs iters windows: the sender posts window Isends of
	// len(buf) bytes and waits for a 4-byte ack; the receiver posts window
	// Irecvs, waits, and sends the ack. Elapsed seconds on this rank.
	Bandwidth(buf []byte, peer, tag, window, iters int, sender bool) (float64, error)
}

// PRTTKernel is implemented by backends that run netgauge's PRTT(n, d, s)
// exchanges (patterns.PRTT, the LogGP measurement) in the MPI library's
// language, so the overheads o_s and o_r it measures are MPI's and not the
// binding's per-call cost.
type PRTTKernel interface {
	// PRTT runs iters exchanges with peer: the client sends n messages of
	// len(buf) bytes, waiting delay seconds (busy, on Wtime) between
	// consecutive sends, and receives one answer of len(buf) bytes; the
	// server receives n, waiting delay before each after the first when
	// serverDelay, and answers. It returns the elapsed seconds on this
	// rank around the loop and, on the server, the sum over exchanges of
	// the time from the first message's arrival to the last's.
	PRTT(buf []byte, peer, tag, n int, delay float64, iters int, client, serverDelay bool) (elapsed, arrivals float64, err error)
}

// AllToAllKernel is implemented by backends that run the point-to-point
// personalised all-to-all of patterns.AllToAll (paper 001's all-to-all)
// in the MPI library's language, one foreign call per batch.
type AllToAllKernel interface {
	// AllToAllPt2Pt runs iters exchanges among ranks 0..n-1 (only they
	// call it): block bytes from send[d*block:] to every other rank d,
	// into recv[s*block:] from every other rank s, receives and sends
	// posted in the order me-1, me-2, ... and me+1, me+2, ..., then
	// waited for together. It returns the seconds around the loop.
	AllToAllPt2Pt(send, recv []byte, block, n, tag, iters int) (float64, error)
}

// AccessKernel is implemented by backends that run one repetition of paper
// 000's global-variable access engine (package patterns, access.go) inside
// the MPI library's language, one foreign call per repetition, so the time
// of a k-k-access or k-access is MPI's and not the binding's (a Go request
// costs several times what MPI takes per message). Patterns use it when
// present and fall back to the same protocol in Go otherwise.
type AccessKernel interface {
	// NewAccess allocates the buffers of the protocol described by spec;
	// Close releases them.
	NewAccess(spec AccessSpec) (AccessRunner, error)
}

// AccessSpec fixes the shape of an access engine on one rank.
type AccessSpec struct {
	Write    bool // write access: the request carries L bytes, an ack comes back
	K, L     int  // packets per access, packet bytes
	Slots    int  // slots of L bytes in this rank's global variable
	MaxSteps int  // accesses per repetition at most (the a of a k-access)
	// KeepReplies gives every access of a repetition its own answer
	// buffers (MaxSteps*K of them), so all answers can be checked after
	// the repetition; otherwise the K buffers are reused by every access.
	KeepReplies bool
	ReqTag      int // tag of requests
	ReplyTag    int // tag of answers
}

// AccessHeaderBytes is the request header: the slot (uint64) and the
// sequence number (uint64), little endian. An answer to a write is the
// request's header.
const AccessHeaderBytes = 16

// AccessBuffers are a runner's buffers, owned by the runner until Close.
type AccessBuffers struct {
	Mem     []byte // the global variable: Slots*L bytes
	ReqMsgs []byte // K requests of AccessHeaderBytes (+L for a write) each
	Replies []byte // answers: K (or MaxSteps*K) of L (or AccessHeaderBytes) bytes each
}

// AccessServed is one request a rank served, in serving order.
type AccessServed struct {
	Source int
	Slot   uint64
	Seq    uint64
}

// AccessRun is one repetition on one rank.
type AccessRun struct {
	// Targets has one row of K ranks per access; a row starting with -1
	// means this rank does not access in that step.
	Targets  []int
	Slot     int    // this rank's slot at its targets (written into every header)
	Incoming int    // requests this rank serves in the repetition
	Rep      uint64 // sequence numbers are Rep<<32 | access<<16 | packet
	// CheckSlot makes a served request addressing another slot than its
	// source's own (source mod Slots) a fault, and a request or answer of
	// the wrong length (validation). Without it the lengths are not
	// checked, as a benchmark of the protocol in C would not; slots are
	// checked against Slots either way.
	CheckSlot bool
}

// AccessRunner runs repetitions of one AccessSpec.
type AccessRunner interface {
	Buffers() AccessBuffers
	// Run performs one repetition and returns this rank's own time: from
	// the call until the answers of its last access are in (0 when it
	// accesses nothing). It returns once it has served Incoming requests
	// and all its messages are complete. A protocol violation is returned
	// as an *AccessFault; after any error the runner must not be used.
	Run(run AccessRun) (float64, error)
	// Served lists the requests served in the last Run.
	Served() []AccessServed
	Close()
}

// AccessFaultKind is what an access kernel found wrong.
type AccessFaultKind int

const (
	FaultRequestLength AccessFaultKind = iota + 1 // a request of the wrong length
	FaultAnswerLength                             // an answer of the wrong length
	FaultSlotRange                                // a request for a slot >= Slots
	FaultSlotOwn                                  // with CheckSlot: a request for another rank's slot
)

// AccessFault is a protocol violation seen by an access kernel.
type AccessFault struct {
	Kind        AccessFaultKind
	Rank        int    // the peer: source of the request or of the answer
	Count, Want int    // message bytes received and expected (length faults)
	Slot        uint64 // the slot asked for (slot faults)
}

func (f *AccessFault) Error() string {
	switch f.Kind {
	case FaultRequestLength:
		return fmt.Sprintf("request of %d bytes from rank %d, want %d", f.Count, f.Rank, f.Want)
	case FaultAnswerLength:
		return fmt.Sprintf("answer of %d bytes from rank %d, want %d", f.Count, f.Rank, f.Want)
	case FaultSlotRange:
		return fmt.Sprintf("rank %d asked for slot %d of %d", f.Rank, f.Slot, f.Want)
	case FaultSlotOwn:
		return fmt.Sprintf("rank %d addressed slot %d, want its own slot %d", f.Rank, f.Slot, f.Want)
	}
	return fmt.Sprintf("access fault %d from rank %d", f.Kind, f.Rank)
}

// StoreKernel is implemented by backends that serve a direct
// global-variable store (package directstore) with the access protocol of
// AccessKernel inside the MPI library's language: per packet, a request of
// AccessHeaderBytes (plus the data for a write) to the home rank, answered
// with the data (read) or an acknowledgement of AccessHeaderBytes (write),
// the packets of a group in flight at once. Unlike an AccessRunner's
// repetition, a store does not know how many requests a rank will serve, so
// the request receive stays posted between calls and every wait (Batch,
// WaitAny) serves whatever has arrived. directstore runs the same protocol
// in Go on backends without the kernel.
type StoreKernel interface {
	NewStoreServer(spec StoreSpec) (StoreServer, error)
}

// StoreSpec fixes the tags and the largest packet of a StoreServer.
type StoreSpec struct {
	ReqTag, ReplyTag int
	// MaxPacket is the most data bytes one request may carry (write) or
	// ask for (read); the posted request receive holds a header and this
	// many bytes.
	MaxPacket int
}

// Store request header (AccessHeaderBytes, little endian): word 0 is the
// byte offset in the home's memory; word 1 is the data length in its low 32
// bits with the flags below.
const (
	StoreWrite   = 1 << 63 // a write: the data follows the header
	StoreClose   = 1 << 62 // a rank's request to itself that ends its server
	StoreLenMask = 1<<32 - 1
)

// StoreBatch is one batched access: packet j has Bufs[j] (read into, or
// written from) at byte Offs[j] of rank Targets[j]'s home memory. The
// packets leave in groups of K; a group's packets are in flight at once and
// the next group leaves when all answers of the previous are in.
type StoreBatch struct {
	Write   bool
	K       int
	Targets []int
	Offs    []int
	Bufs    [][]byte
}

// StoreServer serves one rank's home memory and issues its batches. A
// protocol violation is returned as an *AccessFault; after any error the
// server must not be used (it may keep buffers that MPI still holds).
type StoreServer interface {
	// Mem is this rank's home memory; the view is valid until Grow.
	Mem() []byte
	// Grow makes the home memory at least n bytes (new bytes zero),
	// keeping its contents. No request may be in flight to this rank (the
	// caller separates Grow from accesses by a barrier).
	Grow(n int) error
	// Batch runs b, serving requests while it waits, and returns when every
	// answer is in and every answer it sent is complete.
	Batch(b StoreBatch) error
	// WaitAny serves requests until one of reqs (requests of the same
	// backend) completes, and returns its index and status as Waitany does
	// (-1 and no error when every entry is nil).
	WaitAny(reqs []Request) (int, Status, error)
	// Poll serves the requests that have arrived and returns without
	// waiting for more.
	Poll() error
	// Served counts the read and write requests served so far.
	Served() (reads, writes int64)
	// Close ends serving: the rank sends itself a StoreClose request,
	// which completes the posted receive, and frees the buffers. No request
	// of another rank may be in flight (call it after a barrier).
	Close() error
}

// Info describes the process's MPI environment; both backends provide it
// through the optional Describer interface.
type Info struct {
	Library        string // e.g. "Open MPI v4.1.4, ..." (MPI_Get_library_version, first line)
	Version        string // MPI standard version, e.g. "3.1"
	Processor      string // MPI_Get_processor_name
	ThreadLevel    string // provided thread level
	Implementation string // "openmpi", "mpich", "local", ...
}

// Describer is implemented by backends that can describe their library.
type Describer interface {
	Info() Info
}
