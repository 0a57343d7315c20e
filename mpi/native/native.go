package native

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// ThreadLevel is an MPI thread support level (MPI_THREAD_*).
type ThreadLevel int

// Thread levels, in increasing order of support. See the package comment
// for what each level allows and why commcost uses ThreadSingle.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// state is what Start learned; written once by Start, read-only afterwards
// until Stop.
var state struct {
	sync.Mutex
	started  bool
	stopped  bool
	provided ThreadLevel
	initTID  int // OS thread that called MPI_Init_thread
	world    *Comm
	info     mpi.Info
}

// minProcs is the GOMAXPROCS Start ensures; see keepSpareP.
const minProcs = 2

// keepSpareP raises GOMAXPROCS to minProcs when it is lower, which is what
// Go picks when mpirun binds a rank to one core. A cgo call is a system
// call to Go's scheduler; with a single P, the monitor thread (sysmon,
// waking every 20 us) takes the P away from any call that lasts longer
// and starts another thread to run it, on the rank's own core, and the
// call's return must win it back: more than one context switch per
// kernel call of tens of microseconds (perf counts them; the same loop in
// C has few), which scripts/bench_vs_c.sh's k-k-access cells show as a
// ratio well above 1. With an idle second P the monitor leaves calls of
// up to 10 ms alone.
// The second P only runs when there is Go work, e.g. garbage collection.
// A GOMAXPROCS set in the environment is respected.
func keepSpareP() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < minProcs {
		runtime.GOMAXPROCS(minProcs)
	}
}

// Start initialises MPI (MPI_Init_thread) requesting level, sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF, and locks the
// calling goroutine to its OS thread; call Stop from the same goroutine.
// It returns an error if MPI is already initialised or finalised, if
// initialisation fails, or if the library provides a lower level than
// requested; in the last case MPI stays initialised (call Stop or Abort).
// It raises GOMAXPROCS to 2 unless the environment sets it (keepSpareP).
func Start(level ThreadLevel) error {
	if level < ThreadSingle || level > ThreadMultiple {
		return fmt.Errorf("native.Start: thread level %d outside [%d, %d]", int(level), ThreadSingle, ThreadMultiple)
	}
	state.Lock()
	defer state.Unlock()
	if state.started || C.cc_initialized() != 0 {
		return errors.New("native.Start: MPI is already initialised (Start may be called once per process)")
	}
	if C.cc_finalized() != 0 {
		return errors.New("native.Start: MPI was finalised; it cannot be initialised again")
	}
	if err := setYieldWhenIdle(); err != nil {
		return fmt.Errorf("native.Start: %w", err)
	}
	runtime.LockOSThread()
	keepSpareP()
	r := C.cc_init_thread(C.int(level))
	if r.rc != 0 {
		runtime.UnlockOSThread()
		return newError("MPI_Init_thread", r.rc)
	}
	state.started = true
	state.provided = ThreadLevel(r.provided)
	state.initTID = syscall.Gettid()
	checkConcurrency.Store(state.provided < ThreadMultiple)

	w, err := newComm("MPI_Comm_rank", C.cc_comm_setup(C.cc_comm_world()))
	if err != nil {
		return err
	}
	w.world = true
	state.world = w
	state.info = mpi.Info{
		Library:        firstLine(LibraryVersion()),
		Version:        mpiVersion(),
		Processor:      ProcessorName(),
		ThreadLevel:    state.provided.String(),
		Implementation: Implementation(),
	}
	if state.provided < level {
		return fmt.Errorf("native.Start: requested %v, the library provides %v", level, state.provided)
	}
	return nil
}

// Stop finalises MPI (MPI_Finalize) and unlocks the goroutine Start locked.
// Every rank must call it after its last MPI call. Requests still outstanding
// stay pinned (MPI may no longer complete them).
func Stop() error {
	state.Lock()
	defer state.Unlock()
	if !state.started {
		return errors.New("native.Stop: MPI was not started with native.Start")
	}
	if state.stopped {
		return errors.New("native.Stop: MPI is already finalised")
	}
	if state.provided < ThreadSerialized && syscall.Gettid() != state.initTID {
		return wrongThread("MPI_Finalize")
	}
	if err := enter("MPI_Finalize"); err != nil {
		return err
	}
	finalized.Store(true)
	rc := C.cc_finalize()
	leave()
	state.stopped = true
	if syscall.Gettid() == state.initTID {
		// Same thread, so (being locked) the goroutine that called Start.
		runtime.UnlockOSThread()
	}
	if rc != 0 {
		return newError("MPI_Finalize", rc)
	}
	return nil
}

// Initialized reports whether MPI is initialised and not yet finalised.
func Initialized() bool {
	return C.cc_initialized() != 0 && C.cc_finalized() == 0
}

// Abort terminates every process of MPI_COMM_WORLD with the given exit code
// (MPI_Abort). Without an initialised MPI it exits this process.
func Abort(code int) {
	if Initialized() {
		C.cc_abort(C.int(code))
	}
	os.Exit(code)
}

// World returns MPI_COMM_WORLD. It panics if Start has not succeeded (a
// programming error: there is no world to return).
func World() mpi.Comm {
	return world()
}

func world() *Comm {
	state.Lock()
	defer state.Unlock()
	if state.world == nil {
		panic("native.World: MPI not initialised; call native.Start first")
	}
	return state.world
}

// WorldRank is this process's rank in MPI_COMM_WORLD (panics before Start).
func WorldRank() int { return world().rank }

// WorldSize is the number of processes in MPI_COMM_WORLD (panics before Start).
func WorldSize() int { return world().size }

// Provided is the thread level the library provided at Start.
func Provided() ThreadLevel {
	state.Lock()
	defer state.Unlock()
	return state.provided
}

// LibraryVersion is MPI_Get_library_version (callable before Start).
func LibraryVersion() string {
	buf := make([]byte, 8192)
	if rc := C.cc_library_version((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf))); rc != 0 {
		return ""
	}
	return strings.TrimRight(cString(buf), "\n")
}

// ProcessorName is MPI_Get_processor_name; before Start (or after Stop) it
// falls back to os.Hostname, since MPI may not be called then.
func ProcessorName() string {
	if !Initialized() {
		h, _ := os.Hostname()
		return h
	}
	buf := make([]byte, C.MPI_MAX_PROCESSOR_NAME+1)
	if rc := C.cc_processor_name((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf))); rc != 0 {
		return ""
	}
	return cString(buf)
}

// Implementation is "openmpi" or "mpich": the library this binary is linked
// against (known at compile time, so it is valid before Start).
func Implementation() string { return C.GoString(C.cc_implementation()) }

func mpiVersion() string {
	var major, minor C.int
	if C.cc_version(&major, &minor) != 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", int(major), int(minor))
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// firstLine is the first line of s with runs of white space made single
// spaces (MPICH's version line has a tab), for one-line tables.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

// checkConcurrency is true when the provided level forbids overlapping MPI
// calls; inCall is 1 while a goroutine is inside one. finalized is set by
// Stop: a call after MPI_Finalize would abort the process in the library.
var (
	checkConcurrency atomic.Bool
	inCall           atomic.Int32
	finalized        atomic.Bool
)

// enter marks the start of an MPI call, or reports that another goroutine
// is inside one, which every level below MPI_THREAD_MULTIPLE forbids (the library would
// corrupt its queues silently). One CAS costs a few ns, well under the cgo
// crossing around it.
func enter(op string) error { return enterPeer(op, -1) }

// enterPeer is enter for a call that waits for one peer rank (a send, a
// receive, a kernel's exchange); peer -1 means all ranks of the
// communicator or several.
func enterPeer(op string, peer int) error {
	check := checkConcurrency.Load()
	noteCall(op, peer, !check)
	if finalized.Load() {
		return classError(op, mpi.ErrOther, "MPI is finalised (native.Stop was called)")
	}
	if !check {
		return nil
	}
	if inCall.CompareAndSwap(0, 1) {
		return nil
	}
	return &mpi.Error{Op: op, Class: mpi.ErrOther, Code: int(C.cc_native_class(C.int(mpi.ErrOther))),
		Msg: "another goroutine is inside an MPI call: under " + state.provided.String() +
			" MPI calls must not overlap (hand the Comm over with Go synchronisation, or Start with ThreadMultiple)"}
}

// leave marks the end of the call. Where calls are checked, inCall is
// also the flag Blocked reads (blocked.inside stays false): one atomic
// store here and one CAS in enter per crossing, where a second flag cost
// two more locked instructions (BenchmarkGuard).
func leave() {
	if checkConcurrency.Load() {
		inCall.Store(0)
		return
	}
	blocked.inside.Store(false)
}

// blocked is the MPI call this process is inside, for a watchdog that
// finds the rank stuck (Blocked). The name is a string constant of the
// calling function, kept as its data pointer and length so that noting a
// call costs a few atomic stores and no allocation; seq is odd while a
// call is being noted, so a reader on another goroutine sees the name
// and the peer of one call.
var blocked struct {
	seq    atomic.Uint64
	op     atomic.Pointer[byte]
	opLen  atomic.Int64
	peer   atomic.Int64
	inside atomic.Bool
}

// noteCall records op and peer for Blocked, and sets the inside flag
// unless inCall serves as it (setInside false; see leave).
func noteCall(op string, peer int, setInside bool) {
	p := unsafe.StringData(op)
	if blocked.op.Load() != p || blocked.opLen.Load() != int64(len(op)) || blocked.peer.Load() != int64(peer) {
		// A new call. The call noted last again (a loop over one kind of
		// call: the store's engine, a kernel) needs no note: the name
		// and peer a reader sees are right already, and a note is two
		// read-modify-writes and three stores, each a locked instruction
		// on amd64, on every crossing of the engine's hot path.
		blocked.seq.Add(1)
		blocked.op.Store(p)
		blocked.opLen.Store(int64(len(op)))
		blocked.peer.Store(int64(peer))
		blocked.seq.Add(1)
	}
	if setInside {
		blocked.inside.Store(true)
	}
}

// Blocked reports the MPI call this process is inside, if any: its name
// (MPI_Recv, PingPong, ...) and the rank it waits for, or -1 for a
// collective (every rank of the communicator) or a call with several
// peers. It may be called from any goroutine; a watchdog calls it when a
// rank has made no progress, to say what the rank was waiting for.
func Blocked() (op string, peer int, inside bool) {
	for range 100 {
		s1 := blocked.seq.Load()
		if s1%2 == 1 {
			continue
		}
		p, n, r, in := blocked.op.Load(), blocked.opLen.Load(), blocked.peer.Load(), blocked.inside.Load() || inCall.Load() != 0
		if blocked.seq.Load() != s1 {
			continue
		}
		if p == nil || !in {
			return "", -1, false
		}
		return unsafe.String(p, int(n)), int(r), true
	}
	return "", -1, false
}

// wrongThread is the error of a call made, under a thread-bound level
// (ThreadSingle, ThreadFunneled), from another OS thread than the one that
// called Start; the C side refused it without entering MPI.
func wrongThread(op string) error {
	return &mpi.Error{Op: op, Class: mpi.ErrOther, Code: int(C.cc_native_class(C.int(mpi.ErrOther))),
		Msg: "called from another OS thread than the one that initialised MPI under " + state.provided.String() +
			": only the goroutine that called native.Start may use MPI (Start locked it to its thread); " +
			"Start with ThreadSerialized to call MPI from other goroutines"}
}

// newError converts a non-success return code of op into *mpi.Error.
func newError(op string, rc C.int) error {
	if rc == C.CC_ERR_WRONG_THREAD {
		return wrongThread(op)
	}
	e := &mpi.Error{Op: op, Code: int(rc), Class: mpi.ErrOther}
	if cls := int(C.cc_error_class_std(rc)); cls >= 0 {
		e.Class = cls
	}
	e.Msg = classMessage(e.Class, errorString(rc))
	return e
}

// classMessage puts the class name in front of the library's message
// unless it starts with it (Open MPI's do, MPICH's do not: "Message
// truncated, error stack: ..."), so that errors name their class under
// either library.
func classMessage(class int, msg string) string {
	name := mpi.ClassName(class)
	if strings.HasPrefix(msg, name) {
		return msg
	}
	return name + ": " + msg
}

// classError builds the error MPI would return for a standard class, for
// arguments checked on the Go side; detail says what was wrong.
func classError(op string, class int, detail string) error {
	code := C.cc_native_class(C.int(class))
	msg := classMessage(class, errorString(code))
	if detail != "" {
		msg += ": " + detail
	}
	return &mpi.Error{Op: op, Class: class, Code: int(code), Msg: msg}
}

func errorString(code C.int) string {
	if finalized.Load() {
		// MPI_Error_string may not be called after MPI_Finalize.
		return fmt.Sprintf("MPI error code %d", int(code))
	}
	buf := make([]byte, C.MPI_MAX_ERROR_STRING+1)
	if C.cc_error_string(code, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf))) != 0 {
		return fmt.Sprintf("MPI error code %d", int(code))
	}
	return cString(buf)
}

// cgoNoop is one cgo crossing into an empty C function, to measure the
// binding's own overhead.
func cgoNoop() { C.cc_noop() }

// errorFromCode is newError for callers without cgo (the tests).
func errorFromCode(op string, code int) error { return newError(op, C.int(code)) }
