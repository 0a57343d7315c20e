package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/native"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/runguard"
)

// A hung peer ends the job (issue 18, class 3): a rank stopped by a
// signal, a frozen node or a rank that runs another command leaves its
// peers waiting inside MPI, which has no timeouts. Every run on a
// backend is watched (patterns.Watchdog): each measurement point must
// make progress within --timeout seconds and end within its budget plus
// --timeout; the rank that sees a point stuck says which point and which
// call and peer it waits in, and ends the job with MPI_Abort (exit 1).
// Records written before the point are in the --out file already, each
// whole (results.JSONLWriter).

// defaultTimeoutSec is --timeout's default: longer than any repetition
// commcost makes on its own (CapIters keeps them near --max-time/20) and
// than MPI start-up on a few hundred nodes.
const defaultTimeoutSec = 60.0

// invocation is what the current run was asked to do: the arguments of
// run, for the check that every rank runs the same command, and the
// watchdog's --timeout (measureFlags sets it; other subcommands keep the
// default).
var invocation struct {
	sync.Mutex
	args       []string
	timeoutSec float64
}

func setInvocation(args []string) {
	invocation.Lock()
	invocation.args = append([]string(nil), args...)
	invocation.timeoutSec = defaultTimeoutSec
	invocation.Unlock()
}

func currentInvocation() ([]string, float64) {
	invocation.Lock()
	defer invocation.Unlock()
	return invocation.args, invocation.timeoutSec
}

func setTimeout(sec float64) {
	invocation.Lock()
	invocation.timeoutSec = sec
	invocation.Unlock()
}

// checkTimeout validates a --timeout value.
func checkTimeout(sec float64) error {
	if !(sec > 0) || math.IsInf(sec, 0) {
		return usagef("--timeout %v: must be a positive number of seconds", sec)
	}
	return nil
}

// watch installs a watchdog with the given timeout for the duration of a
// run and returns its removal.
func watch(timeoutSec float64) func() {
	if timeoutSec <= 0 {
		timeoutSec = defaultTimeoutSec
	}
	return runguard.Watch(time.Duration(timeoutSec*float64(time.Second)), expireJob)
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
	native.Abort(1)
	os.Exit(1)
}

// stallMessage describes a stuck point from this rank's view.
func stallMessage(s patterns.Stall) string {
	w := runguard.Where{Rank: -1, LauncherRank: launcherRank()}
	if native.Initialized() {
		w.Rank, w.Size = native.WorldRank(), native.WorldSize()
	}
	w.Op, w.Peer, w.Inside = native.Blocked()
	return runguard.StallMessage(s, w)
}

// allowMPMDEnv, set to any value, lets the ranks of a launch run
// different arguments: for tests that make one rank fail on purpose (a
// ping-pong whose peer sends more than it receives), never for
// measurements.
const allowMPMDEnv = "COMMCOST_ALLOW_MPMD"

// sameCommand refuses a launch whose ranks run different commands (an
// MPMD launch, 'mpirun -np 1 commcost pingpong : -np 1 commcost
// bandwidth', or arguments that differ per rank): their collectives would
// not match and the job would hang (runguard.SameCommand). It is the first
// collective of every run on the native backend. Rank 0 names the ranks
// that differ; the verdict is agreed, so the message appears once and
// every rank exits 2.
func sameCommand(c mpi.Comm, args []string) error {
	mm, err := runguard.SameCommand(c, args)
	if err != nil || mm == nil {
		return err
	}
	var mine error
	if c.Rank() == 0 {
		differ := make([]string, len(mm.Differ))
		for i, r := range mm.Differ {
			differ[i] = fmt.Sprint(r)
		}
		mine = usagef("the ranks do not all run the same command: rank 0 runs 'commcost %s', rank(s) %s run something else (an MPMD launch, or arguments that differ per rank); every rank must run the same subcommand with the same arguments",
			strings.Join(args, " "), strings.Join(differ, ", "))
	}
	return agree(c, mine)
}

// pointName names a pattern instance as its record does: bench and
// parameters.
func pointName(pat patterns.Pattern, p int) string {
	return pat.Bench() + " " + report.ParamList(pat.Params(p))
}
