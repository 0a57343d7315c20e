package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/mpi/native"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Backends a subcommand can run on.
const (
	backendNative = "native" // the system MPI, under mpirun or srun
	backendLocal  = "local"  // goroutine ranks in this process: counts, never network times
)

var nativeOnce struct {
	sync.Mutex
	started bool
	err     error
}

// startNative initialises the system MPI once per process. MPI can be
// initialised only once, so the CLI tests that run several subcommands in one
// process share one initialisation; finalisation happens at process exit
// through stopNative.
//
// The level is MPI_THREAD_SINGLE, as MPI_Init gives OSU's benchmarks: every
// MPI call of commcost comes from the goroutine that runs the subcommand,
// which native.Start locks to its OS thread. Any higher level costs Open MPI
// 4.1 a third more 8-byte latency (0.20-0.25 us against 0.14-0.19 us for the
// same C ping-pong under FUNNELED or SERIALIZED; see mpi/native's doc).
func startNative() (mpi.Comm, error) {
	nativeOnce.Lock()
	defer nativeOnce.Unlock()
	if !nativeOnce.started {
		nativeOnce.started = true
		nativeOnce.err = native.Start(native.ThreadSingle)
	}
	if nativeOnce.err != nil {
		return nil, nativeOnce.err
	}
	return native.World(), nil
}

// mpiStarted reports whether this process initialised MPI.
func mpiStarted() bool {
	nativeOnce.Lock()
	defer nativeOnce.Unlock()
	return nativeOnce.started && nativeOnce.err == nil
}

// launcherRanks are the environment variables in which the launchers
// commcost runs under (Open MPI's mpirun, MPICH's Hydra, PMIx, Slurm's
// srun) give a process its rank and the number of processes, before MPI
// is initialised.
var launcherRanks = [][2]string{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMIX_RANK", "PMIX_SIZE"}, // PMIx has no size variable; Open MPI and Slurm set their own
	{"PMI_RANK", "PMI_SIZE"},
	{"SLURM_PROCID", "SLURM_NTASKS"},
}

// launcherRank is this process's rank in the launch according to the
// launcher's environment, or -1 when it was not started by one. It lets a
// process tell, without MPI, whether it is the one of the launch that
// reports what every process found alike.
func launcherRank() int {
	for _, v := range launcherRanks {
		if r, err := strconv.Atoi(os.Getenv(v[0])); err == nil && r >= 0 {
			return r
		}
	}
	return -1
}

// launcherSize is the number of processes of the launch according to the
// launcher's environment, or 0 when it does not say.
func launcherSize() int {
	for _, v := range launcherRanks {
		if n, err := strconv.Atoi(os.Getenv(v[1])); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// stopNative finalises MPI if this process started it.
func stopNative() {
	nativeOnce.Lock()
	defer nativeOnce.Unlock()
	if nativeOnce.started && nativeOnce.err == nil && native.Initialized() {
		_ = native.Stop()
	}
}

// withWorld runs fn on every rank of the chosen backend: for "native" on
// this process's rank of MPI_COMM_WORLD, for "local" on np goroutine ranks.
// Errors of the ranks are combined; a usage error on any rank stays a usage
// error, reported once (by the lowest failing rank).
func withWorld(backend string, np int, fn func(c mpi.Comm) error) error {
	args, timeout := currentInvocation()
	defer watch(timeout)()
	switch backend {
	case backendNative:
		// Start-up is watched too: a rank that never reaches MPI_Init
		// (started with a subcommand that needs no MPI) stalls the others
		// inside it.
		end := patterns.Installed().Begin("start-up (MPI_Init and the check that every rank runs the same command)", 0)
		c, err := startNative()
		if err == nil && os.Getenv(allowMPMDEnv) == "" {
			err = sameCommand(c, args)
		}
		end()
		if err != nil {
			return err
		}
		return fn(c)
	case backendLocal:
		if n := launcherSize(); n > 1 {
			// Every process of the launch would run its own world of np
			// goroutine ranks, and each print the same tables.
			return usagef("--backend local: the local backend runs all its ranks in one process, but the launcher started %d processes; run it without mpirun or srun (--np sets its ranks), or use --backend native", n)
		}
		if np < 1 {
			return usagef("--np %d: the local backend needs --np N with N >= 1", np)
		}
		if err := checkInProcess(fmt.Sprintf("--np %d", np), fmt.Sprintf("the local backend's %d ranks (about %s each)", np, sysmem.Format(localRankBytes)), float64(np)*localRankBytes); err != nil {
			return err
		}
		// The goroutine ranks' heap is collected before it outgrows what
		// the process may take (sysmem.LimitHeap says why).
		avail, _, ok := availableMemory()
		_, restore := sysmem.LimitHeap(avail, ok)
		defer restore()
		errs := make([]error, np)
		runErr := local.Run(np, func(c mpi.Comm) error {
			errs[c.Rank()] = fn(c)
			return errs[c.Rank()]
		})
		// Report the error a rank meant to print (agree makes exactly one
		// rank return a non-quiet error); fall back to the joined errors.
		var quiet error
		for _, e := range errs {
			var q *quietError
			switch {
			case e == nil:
			case errors.As(e, &q):
				if quiet == nil {
					quiet = e
				}
			default:
				return e
			}
		}
		if runErr != nil && quiet == nil {
			return runErr
		}
		return quiet
	}
	return usagef("--backend %q: accepted values are native (the system MPI, under mpirun) and local (goroutine ranks, needs --np)", backend)
}

// agreedError is the error agree returns on the lowest failing rank. Every
// rank returned from agree with this verdict, so MPI can be finalised.
type agreedError struct{ err error }

func (a *agreedError) Error() string { return a.err.Error() }
func (a *agreedError) Unwrap() error { return a.err }

// collective reports whether err is a verdict every rank reached (agree).
// Any other error may be this rank's alone, with peers blocked in a call it
// will never make; MPI_Finalize would then wait for them until mpirun's
// timeout (a ping-pong whose answer was truncated on one rank hung 30 s
// and more), so main aborts the job instead (abortNative).
func collective(err error) bool {
	var a *agreedError
	var q *quietError
	return errors.As(err, &a) || errors.As(err, &q)
}

// abortNative ends the whole job with MPI_Abort (exit status code) if this
// process initialised MPI and has not finalised it; otherwise it does
// nothing.
func abortNative(code int) {
	nativeOnce.Lock()
	started := nativeOnce.started && nativeOnce.err == nil
	nativeOnce.Unlock()
	if started && native.Initialized() {
		native.Abort(code)
	}
}

// quietError is an error already reported by another rank: it carries the
// exit status but prints nothing, so a bad input under mpirun -np 8 prints
// one message, not eight.
type quietError struct {
	err   error
	usage bool
}

func (q *quietError) Error() string { return q.err.Error() }
func (q *quietError) Unwrap() error { return q.err }

// agree makes every rank return the same verdict after a step that may fail
// on some ranks only (e.g. a rank-count check or opening the output file on
// rank 0). It is collective. The lowest failing rank returns its error, which
// main prints; the others return a quietError with the same exit status, so a
// bad input under mpirun -np 8 prints one message, not eight.
func agree(c mpi.Comm, err error) error {
	var flags [2]int64 // failed, usage
	lowest := []int64{int64(c.Size())}
	if err != nil {
		flags[0] = 1
		if isUsage(err) {
			flags[1] = 1
		}
		lowest[0] = int64(c.Rank())
	}
	var any [2]int64
	if aerr := c.AllreduceInt64s(flags[:], any[:], mpi.OpMax); aerr != nil {
		return errors.Join(err, aerr)
	}
	if any[0] == 0 {
		return nil
	}
	low := []int64{0}
	if aerr := c.AllreduceInt64s(lowest, low, mpi.OpMin); aerr != nil {
		return errors.Join(err, aerr)
	}
	if err != nil && low[0] == int64(c.Rank()) {
		return &agreedError{err}
	}
	if err == nil {
		err = fmt.Errorf("rank %d failed", low[0])
	}
	return &quietError{err: err, usage: any[1] == 1}
}

// newMeta fills the record metadata (collective: it gathers host names).
func newMeta(c mpi.Comm) (results.Meta, error) {
	m := results.NewMeta(c.Backend())
	if d, ok := c.(mpi.Describer); ok {
		inf := d.Info()
		m.MPILibrary = inf.Library
		m.MPIVersion = inf.Version
	}
	hosts, per, err := mpi.HostLayout(c)
	if err != nil {
		return m, err
	}
	m.Hosts, m.RanksPerHost = hosts, per
	return m, nil
}

// shortHost is the host part used in run-directory names.
func shortHost(hosts []string) string {
	if len(hosts) == 0 {
		return "unknown"
	}
	h := strings.SplitN(hosts[0], ".", 2)[0]
	if len(hosts) > 1 {
		s := append([]string(nil), hosts...)
		sort.Strings(s)
		h = fmt.Sprintf("%s+%d", h, len(hosts)-1)
	}
	return h
}
