package job

import (
	"sync"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/mpirun"
)

// NativeMPI is the binding to the system MPI (mpi/native), which the
// program installs with UseNative: this package cannot import it, since
// only mpi/native imports "C".
type NativeMPI interface {
	// Start initialises MPI (MPI_THREAD_SINGLE) and locks the calling
	// goroutine to its thread; World is then MPI_COMM_WORLD.
	Start() error
	World() mpi.Comm
	// Initialized reports whether MPI is initialised and not finalised.
	Initialized() bool
	Stop() error
	// Abort ends every process of the job (MPI_Abort).
	Abort(code int)
	WorldRank() int
	WorldSize() int
	// Blocked says which MPI call this rank is inside, if any, and the
	// peer it waits for (< 0: none named).
	Blocked() (op string, peer int, inside bool)
}

var native struct {
	sync.Mutex
	mpi     NativeMPI
	started bool
	err     error
}

// starting serialises MPI initialisation. It is held across MPI_Init, which
// may block for as long as a peer does not start; native's own lock is not,
// so that the watchdog, which reads native (live) when a rank stalls in
// start-up, is never blocked behind MPI_Init.
var starting sync.Mutex

// UseNative installs the binding (from the program's main package).
func UseNative(n NativeMPI) {
	native.Lock()
	native.mpi = n
	native.Unlock()
}

// startNative initialises the system MPI once per process. MPI can be
// initialised only once, so the CLI tests that run several subcommands in
// one process share one initialisation; it is finalised at exit (Stop).
// Until MPI_Init returns, live reports no MPI.
func startNative() (mpi.Comm, error) {
	starting.Lock()
	defer starting.Unlock()
	native.Lock()
	n, started, err := native.mpi, native.started, native.err
	native.Unlock()
	if n == nil {
		return nil, errNoNative
	}
	if !started {
		err = n.Start()
		native.Lock()
		native.started, native.err = true, err
		native.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return n.World(), nil
}

var errNoNative = errorString("the native backend is not built into this program (job.UseNative)")

type errorString string

func (e errorString) Error() string { return string(e) }

// MPIStarted reports whether this process initialised MPI.
func MPIStarted() bool {
	native.Lock()
	defer native.Unlock()
	return native.started && native.err == nil
}

// live is the binding when MPI is up in this process, else nil.
func live() NativeMPI {
	native.Lock()
	defer native.Unlock()
	if native.started && native.err == nil && native.mpi != nil && native.mpi.Initialized() {
		return native.mpi
	}
	return nil
}

// Stop finalises MPI if this process started it. MPI requires every
// process that initialised it to finalise before exiting, whatever the
// outcome; otherwise mpirun reports an abnormal termination.
func Stop() {
	if n := live(); n != nil {
		_ = n.Stop()
	}
}

// Abort ends the whole job with MPI_Abort (exit status code) if this
// process initialised MPI and has not finalised it; otherwise it does
// nothing.
func Abort(code int) {
	if n := live(); n != nil {
		n.Abort(code)
	}
}

// RunLine is the command that starts commcost args on np ranks with the
// MPI this binary links, for the hints of messages: Open MPI's mpirun with
// its oversubscription flags, or MPICH's mpiexec (mpirun.LaunchLine).
func RunLine(np int, args ...string) string {
	return mpirun.LaunchLine(mpirun.Linked(), np, "commcost", args...)
}
