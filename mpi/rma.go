package mpi

import "fmt"

// One-sided communication (MPI-3 RMA): an optional interface, as the typed
// reductions and the non-blocking collectives are.

// WindowAllocator is implemented by backends with MPI-3 windows.
//
// Both backends check every communication call's target and range against
// the window sizes they learn at allocation (the ranks' sizes are gathered
// then), before any communication: a rank outside the communicator is
// ErrRank, bytes outside the target's window ErrArg; element counts as
// for the typed reductions (CheckTyped).
type WindowAllocator interface {
	// AllocateWindow is MPI_Win_allocate (collective): size bytes on this
	// rank, zeroed, with a displacement unit of one byte; sizes may differ
	// between ranks. The memory belongs to the backend (the MPI library's,
	// in mpi/native) until Free.
	AllocateWindow(size int) (Window, error)
}

// RMAFaulty is implemented by windows whose MPI library is known to crash
// the process in some call (a crash that no error handler reports): Fault
// says why a call of op on dt elements must not be made on the window, nil
// when it may.
type RMAFaulty interface {
	Fault(op RMAOp, dt Datatype) error
}

// RMAFault is w's Fault, nil for a window that knows of none.
func RMAFault(w Window, op RMAOp, dt Datatype) error {
	if f, ok := w.(RMAFaulty); ok {
		return f.Fault(op, dt)
	}
	return nil
}

// Window is one RMA window. Communication calls name the target rank and a
// byte displacement in the target's memory; they must be inside an access
// epoch (Lock/Unlock, LockAll/UnlockAll, Fence, Start/Complete), and their
// origin and result buffers must not be touched until the synchronisation
// call that completes them (Flush, Unlock, UnlockAll, Fence, Complete)
// returns. Errors are *Error as everywhere in this package.
type Window interface {
	// Mem is this rank's window memory; read or write it only outside
	// exposure epochs or under a lock of one's own rank.
	Mem() []byte

	// Put is MPI_Put of len(origin) bytes to target's window at disp.
	Put(origin []byte, target, disp int) error
	// Get is MPI_Get of len(origin) bytes from target's window at disp.
	Get(origin []byte, target, disp int) error
	// Accumulate is MPI_Accumulate: target[disp:] = target op origin,
	// element by element.
	Accumulate(origin []byte, target, disp int, dt Datatype, op Op) error
	// GetAccumulate is MPI_Get_accumulate: result receives the target's
	// elements before the accumulate (len(result) = len(origin)).
	GetAccumulate(origin, result []byte, target, disp int, dt Datatype, op Op) error
	// FetchAndOp is MPI_Fetch_and_op of one element: result = target;
	// target = target op origin.
	FetchAndOp(origin, result []byte, target, disp int, dt Datatype, op Op) error
	// CompareAndSwap is MPI_Compare_and_swap of one element: result =
	// target; if target == compare then target = origin.
	CompareAndSwap(origin, compare, result []byte, target, disp int, dt Datatype) error

	// Passive target synchronisation.
	Lock(target int, exclusive bool) error // MPI_Win_lock
	Unlock(target int) error               // MPI_Win_unlock
	LockAll() error                        // MPI_Win_lock_all (shared)
	UnlockAll() error                      // MPI_Win_unlock_all
	Flush(target int) error                // MPI_Win_flush

	// Active target synchronisation.
	Fence() error            // MPI_Win_fence (collective)
	Post(group []int) error  // MPI_Win_post: expose to the origins in group
	Start(group []int) error // MPI_Win_start: access the targets in group
	Complete() error         // MPI_Win_complete: end the access epoch
	Wait() error             // MPI_Win_wait: end the exposure epoch
	Free() error             // MPI_Win_free (collective)
}

// CheckRMA checks one communication call on a window whose ranks' sizes
// are sizes: the target, and n bytes at disp inside the target's window.
func CheckRMA(op string, sizes []int, target, disp, n int) error {
	switch {
	case target < 0 || target >= len(sizes):
		return &Error{Op: op, Class: ErrRank, Msg: fmt.Sprintf("%s: target %d outside [0, %d)", ClassName(ErrRank), target, len(sizes))}
	case disp < 0 || n < 0 || n > MaxCount || disp > sizes[target]-n:
		return &Error{Op: op, Class: ErrArg, Msg: fmt.Sprintf("%s: %d bytes at displacement %d outside rank %d's window of %d bytes", ClassName(ErrArg), n, disp, target, sizes[target])}
	}
	return nil
}

// CheckGroup checks the ranks of a PSCW group on size ranks: each in
// range, none twice.
func CheckGroup(op string, group []int, size int) error {
	seen := map[int]bool{}
	for _, r := range group {
		if r < 0 || r >= size || seen[r] {
			return &Error{Op: op, Class: ErrGroup, Msg: fmt.Sprintf("%s: group %v: ranks must be distinct and in [0, %d)", ClassName(ErrGroup), group, size)}
		}
		seen[r] = true
	}
	return nil
}

// RMAOp is a one-sided communication call, as OSU's benchmarks name it.
type RMAOp uint8

// The calls, with the names of OSU 6.1's benchmarks of them.
const (
	RMAPut            RMAOp = iota + 1 // MPI_Put (osu_put_latency, osu_put_bw, osu_put_bibw)
	RMAGet                             // MPI_Get (osu_get_latency, osu_get_bw)
	RMAAccumulate                      // MPI_Accumulate, sum (osu_acc_latency)
	RMAGetAccumulate                   // MPI_Get_accumulate, sum (osu_get_acc_latency)
	RMAFetchAndOp                      // MPI_Fetch_and_op of one element, sum (osu_fop_latency)
	RMACompareAndSwap                  // MPI_Compare_and_swap of one element (osu_cas_latency)
	rmaOpEnd
)

var rmaOpNames = [...]string{RMAPut: "put", RMAGet: "get", RMAAccumulate: "acc", RMAGetAccumulate: "get_acc",
	RMAFetchAndOp: "fop", RMACompareAndSwap: "cas"}

func (o RMAOp) String() string {
	if o > 0 && o < rmaOpEnd {
		return rmaOpNames[o]
	}
	return fmt.Sprintf("RMAOp(%d)", int(o))
}

// RMAOps lists every call.
func RMAOps() []RMAOp {
	var out []RMAOp
	for o := RMAPut; o < rmaOpEnd; o++ {
		out = append(out, o)
	}
	return out
}

// Atomic reports whether o moves one element (fetch-and-op,
// compare-and-swap) rather than a buffer.
func (o RMAOp) Atomic() bool { return o == RMAFetchAndOp || o == RMACompareAndSwap }

// Typed reports whether o combines elements of a Datatype.
func (o RMAOp) Typed() bool { return o >= RMAAccumulate && o < rmaOpEnd }

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (o *RMAOp) UnmarshalText(b []byte) error {
	for v := RMAPut; v < rmaOpEnd; v++ {
		if rmaOpNames[v] == string(b) {
			*o = v
			return nil
		}
	}
	return fmt.Errorf("one-sided call %q: accepted values are put, get, acc, get_acc, fop and cas", b)
}

// MarshalText implements encoding.TextMarshaler.
func (o RMAOp) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// RMASync is how a one-sided loop synchronises (OSU's -s).
type RMASync uint8

// The synchronisations; SyncFlush is OSU's default.
const (
	SyncFlush   RMASync = iota + 1 // one shared lock around the loop, MPI_Win_flush after each iteration
	SyncLock                       // MPI_Win_lock and MPI_Win_unlock around each iteration
	SyncLockAll                    // MPI_Win_lock_all and MPI_Win_unlock_all around each iteration
	SyncFence                      // MPI_Win_fence epochs, both ranks
	SyncPSCW                       // post-start-complete-wait, both ranks
	rmaSyncEnd
)

var rmaSyncNames = [...]string{SyncFlush: "flush", SyncLock: "lock", SyncLockAll: "lock_all", SyncFence: "fence", SyncPSCW: "pscw"}

func (s RMASync) String() string {
	if s > 0 && s < rmaSyncEnd {
		return rmaSyncNames[s]
	}
	return fmt.Sprintf("RMASync(%d)", int(s))
}

// Active reports whether both ranks take part in every epoch.
func (s RMASync) Active() bool { return s == SyncFence || s == SyncPSCW }

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (s *RMASync) UnmarshalText(b []byte) error {
	for v := SyncFlush; v < rmaSyncEnd; v++ {
		if rmaSyncNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("synchronisation %q: accepted values are flush, lock, lock_all, fence and pscw", b)
}

// MarshalText implements encoding.TextMarshaler.
func (s RMASync) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// RMAMode is the shape of a one-sided loop: one call per iteration
// (latency), a window of calls from rank 0 (bandwidth), or windows both
// ways (bidirectional bandwidth).
type RMAMode uint8

// The shapes.
const (
	RMALatency RMAMode = iota + 1
	RMABandwidth
	RMABibw
	rmaModeEnd
)

var rmaModeNames = [...]string{RMALatency: "lat", RMABandwidth: "bw", RMABibw: "bibw"}

func (m RMAMode) String() string {
	if m > 0 && m < rmaModeEnd {
		return rmaModeNames[m]
	}
	return fmt.Sprintf("RMAMode(%d)", int(m))
}

// UnmarshalText implements encoding.TextUnmarshaler (flags).
func (m *RMAMode) UnmarshalText(b []byte) error {
	for v := RMALatency; v < rmaModeEnd; v++ {
		if rmaModeNames[v] == string(b) {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("one-sided mode %q: accepted values are lat, bw and bibw", b)
}

// MarshalText implements encoding.TextMarshaler.
func (m RMAMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// RMASpec is one rank's side of an OSU one-sided loop between two ranks.
type RMASpec struct {
	Op     RMAOp
	Sync   RMASync
	Mode   RMAMode
	Count  int      // elements per call (bytes for put and get; 1 for fop and cas)
	Type   Datatype // element type of acc, get_acc, fop and cas
	Window int      // calls per iteration (bw, bibw)
	Peer   int      // the other rank
	First  bool     // the origin of lat and bw (OSU's rank 0)
}

// Bytes is the size of one call's data.
func (s RMASpec) Bytes() int {
	if s.Op.Typed() {
		return s.Count * s.Type.Size()
	}
	return s.Count
}

// Calls is the calls of one iteration.
func (s RMASpec) Calls() int {
	if s.Mode == RMALatency {
		return 1
	}
	return s.Window
}

// RMABuffers are a runner's buffers, owned by the backend until Close:
// Origin, Result and Compare hold Calls() blocks of Bytes() (the j-th call
// of an iteration uses block j, and block j of the target's window), Mem
// is this rank's window (Calls() blocks).
type RMABuffers struct {
	Origin, Result, Compare, Mem []byte
}

// RMAKernels is implemented by backends that run OSU's one-sided loops in
// the MPI library's language, a batch of repetitions per foreign call (the
// harness of BatchKernels).
type RMAKernels interface {
	// NewRMA allocates the window (collective over both ranks of the
	// communicator) and the buffers of spec.
	NewRMA(spec RMASpec) (RMARunner, error)
}

// RMARunner runs batches of one rank's side of a one-sided loop.
type RMARunner interface {
	Buffers() RMABuffers
	// Batch runs iters iterations per repetition: OSU's loop for the
	// spec's synchronisation, each rank's time around its iterations (0
	// on the target of a passive-target loop, which takes no part).
	Batch(b Batch, iters int) error
	// Close frees the window (collective).
	Close() error
}
