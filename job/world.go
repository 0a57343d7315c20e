package job

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Backends a run can use.
const (
	Native = "native" // the system MPI, under mpirun or srun
	Local  = "local"  // goroutine ranks in this process: counts, never network times
)

// MaxLocalRanks is the most ranks the local backend runs in one process.
const MaxLocalRanks = 4096

// CheckBackend validates a backend name and the local backend's rank
// count, as the fields Backend and NP of a configuration.
func CheckBackend(backend string, np int) error {
	if backend != Native && backend != Local {
		return opts.Field("Backend", backend, "accepted values are native (the system MPI, under mpirun) and local (goroutine ranks; not a network measurement)")
	}
	if np < 1 || np > MaxLocalRanks {
		return opts.Field("NP", np, "the local backend takes 1 to %d ranks", MaxLocalRanks)
	}
	return nil
}

// DefaultTimeoutSec is --timeout's default: longer than any repetition
// commcost makes on its own (CapIters keeps them near --max-time/20) and
// than MPI start-up on a few hundred nodes.
const DefaultTimeoutSec = 60.0

// MinTimeoutSec and MaxTimeoutSec bound --timeout. The watchdog watches
// start-up too (MPI_Init and the same-command check, World), so a timeout
// shorter than a start-up aborts MPI inside MPI_Init, where Open MPI's
// launcher has been seen to hang instead of ending the job; 5 s is well
// above a start-up on a few nodes (under 0.5 s for 2 ranks on one host),
// and the default covers a few hundred. The top is opts.MaxSeconds.
const (
	MinTimeoutSec = 5.0
	MaxTimeoutSec = opts.MaxSeconds
)

// CheckTimeout validates a timeout in seconds (the field Timeout): a
// number from MinTimeoutSec to MaxTimeoutSec.
func CheckTimeout(sec float64) error {
	if !(sec >= MinTimeoutSec && sec <= MaxTimeoutSec) {
		return opts.Field("Timeout", sec, "must be a number of seconds from %g to %g (about 32 years); the watchdog also watches MPI start-up, which a shorter timeout would abort", MinTimeoutSec, float64(MaxTimeoutSec))
	}
	return nil
}

// invocation is what the current run was asked to do: its arguments, for
// the check that every rank runs the same command, and the watchdog's
// timeout.
var invocation struct {
	sync.Mutex
	args       []string
	timeoutSec float64
}

// Begin records the arguments of the run (the command line after the
// program name) and resets the watchdog's timeout to its default.
func Begin(args []string) {
	invocation.Lock()
	invocation.args = append([]string(nil), args...)
	invocation.timeoutSec = DefaultTimeoutSec
	invocation.Unlock()
}

// SetTimeout sets the seconds a point may go without progress before the
// watchdog ends the job.
func SetTimeout(sec float64) {
	invocation.Lock()
	invocation.timeoutSec = sec
	invocation.Unlock()
}

func current() ([]string, float64) {
	invocation.Lock()
	defer invocation.Unlock()
	return invocation.args, invocation.timeoutSec
}

// launcherRanks are the environment variables in which the launchers
// commcost runs under (Open MPI's mpirun, MPICH's Hydra, PMIx, Slurm's
// srun) give a process its rank and the number of processes, before MPI is
// initialised.
var launcherRanks = [][2]string{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMIX_RANK", "PMIX_SIZE"}, // PMIx has no size variable; Open MPI and Slurm set their own
	{"PMI_RANK", "PMI_SIZE"},
	{"SLURM_PROCID", "SLURM_NTASKS"},
}

// LauncherRank is this process's rank in the launch according to the
// launcher's environment, or -1 when it was not started by one: it lets a
// process tell, without MPI, whether it is the one that reports what every
// process found alike.
func LauncherRank() int {
	for _, v := range launcherRanks {
		if r, err := strconv.Atoi(os.Getenv(v[0])); err == nil && r >= 0 {
			return r
		}
	}
	return -1
}

// LauncherSize is the number of processes of the launch according to the
// launcher's environment, or 0 when it does not say.
func LauncherSize() int {
	for _, v := range launcherRanks {
		if n, err := strconv.Atoi(os.Getenv(v[1])); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// RanksText names what set the number of ranks of c, for a refusal of
// that number: --np N on the local backend, the launcher's -np N on the
// native one (or N rank(s) started without a launcher).
func RanksText(c mpi.Comm) string {
	switch {
	case c.Backend() == Local:
		return fmt.Sprintf("--np %d", c.Size())
	case LauncherSize() > 0:
		return fmt.Sprintf("mpirun -np %d", c.Size())
	}
	return fmt.Sprintf("%d rank(s) without a launcher", c.Size())
}

// AllowMPMDEnv, set to any value, lets the ranks of a launch run different
// arguments: for tests that make one rank fail on purpose, never for
// measurements.
const AllowMPMDEnv = "COMMCOST_ALLOW_MPMD"

// World runs fn on every rank of the backend: for Native on this process's
// rank of MPI_COMM_WORLD, for Local on np goroutine ranks. The run is
// watched (Watch) with the timeout of SetTimeout. Errors of the ranks are
// combined; bad input on any rank stays bad input, reported once (by the
// lowest failing rank).
func World(backend string, np int, fn func(c mpi.Comm) error) error {
	args, timeout := current()
	defer watch(timeout)()
	switch backend {
	case Native:
		// Start-up is watched too: a rank that never reaches MPI_Init
		// (started with a subcommand that needs no MPI) stalls the others
		// inside it.
		end := patterns.Installed().Begin("start-up (MPI_Init and the check that every rank runs the same command)", 0)
		c, err := startNative()
		if err == nil && os.Getenv(AllowMPMDEnv) == "" {
			err = sameCommand(c, args)
		}
		end()
		if err != nil {
			return err
		}
		return fn(c)
	case Local:
		if n := LauncherSize(); n > 1 {
			// Every process of the launch would run its own world of np
			// goroutine ranks, and each print the same tables.
			return opts.Badf("--backend local: the local backend runs all its ranks in one process, but the launcher started %d processes; run it without mpirun or srun (--np sets its ranks), or use --backend native", n)
		}
		if np < 1 {
			return opts.Badf("--np %d: the local backend needs --np N with N >= 1", np)
		}
		if err := CheckInProcess(fmt.Sprintf("--np %d", np), fmt.Sprintf("the local backend's %d ranks (about %s each)", np, sysmem.Format(LocalRankBytes)), float64(np)*LocalRankBytes); err != nil {
			return err
		}
		// The goroutine ranks' heap is collected before it outgrows what
		// the process may take (sysmem.LimitHeap says why).
		avail, _, ok := AvailableMemory()
		_, restore := sysmem.LimitHeap(avail, ok)
		defer restore()
		errs := make([]error, np)
		runErr := local.Run(np, func(c mpi.Comm) error {
			errs[c.Rank()] = fn(c)
			return errs[c.Rank()]
		})
		// Report the error a rank meant to print (Agree makes exactly one
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
	return opts.Badf("--backend %q: accepted values are native (the system MPI, under mpirun) and local (goroutine ranks, needs --np)", backend)
}

// watch installs a watchdog with the given timeout for the duration of a
// run and returns its removal.
func watch(timeoutSec float64) func() {
	if timeoutSec <= 0 {
		timeoutSec = DefaultTimeoutSec
	}
	return Watch(time.Duration(timeoutSec*float64(time.Second)), expireJob)
}

// expireJob is the watchdog's verdict: one line on stderr naming the rank,
// the point and what the rank waits for, then the end of the job. It runs
// on the watchdog's goroutine while the rank's own goroutine is stuck in
// MPI, so it neither returns nor takes the locks that goroutine may hold.
func expireJob(s patterns.Stall) {
	fmt.Fprintln(os.Stderr, "commcost:", stallMessage(s))
	// MPI_Abort ends every process of the job (the stopped one too: the
	// launcher kills it); before MPI is up, exiting non-zero makes the
	// launcher end the others.
	Abort(1)
	os.Exit(1)
}

// stallMessage describes a stuck point from this rank's view.
func stallMessage(s patterns.Stall) string {
	w := Where{Rank: -1, LauncherRank: LauncherRank()}
	if n := live(); n != nil {
		w.Rank, w.Size = n.WorldRank(), n.WorldSize()
		w.Op, w.Peer, w.Inside = n.Blocked()
	}
	return StallMessage(s, w)
}

// sameCommand refuses a launch whose ranks run different commands (an MPMD
// launch, or arguments that differ per rank): their collectives would not
// match and the job would hang (SameCommand). It is the first collective
// of every run on the native backend. Rank 0 names the ranks that differ;
// the verdict is agreed, so the message appears once and every rank exits 2.
func sameCommand(c mpi.Comm, args []string) error {
	mm, err := SameCommand(c, args)
	if err != nil || mm == nil {
		return err
	}
	var mine error
	if c.Rank() == 0 {
		differ := make([]string, len(mm.Differ))
		for i, r := range mm.Differ {
			differ[i] = fmt.Sprint(r)
		}
		mine = opts.Badf("the ranks do not all run the same command: rank 0 runs 'commcost %s', rank(s) %s run something else (an MPMD launch, or arguments that differ per rank); every rank must run the same subcommand with the same arguments",
			strings.Join(args, " "), strings.Join(differ, ", "))
	}
	return Agree(c, mine)
}

// NewMeta fills the record metadata (collective: it gathers host names).
func NewMeta(c mpi.Comm) (results.Meta, error) {
	// Every record's metadata carries the launch identifier.
	if err := results.CheckLaunchEnv(); err != nil {
		return results.Meta{}, Agree(c, opts.Badf("%v", err))
	}
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

// ShortHost is the host part of run-directory names: the first host, and
// "+N" for N more.
func ShortHost(hosts []string) string {
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
