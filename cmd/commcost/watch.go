package main

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/native"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
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
	wd := patterns.NewWatchdog(time.Duration(timeoutSec*float64(time.Second)), expireJob)
	patterns.Install(wd)
	return func() {
		patterns.Install(nil)
		wd.Stop()
	}
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
	who := "watchdog" // the local backend: every rank is in this process
	if native.Initialized() {
		who = fmt.Sprintf("rank %d of %d", native.WorldRank(), native.WorldSize())
	} else if r := launcherRank(); r >= 0 {
		who = fmt.Sprintf("rank %d", r)
	}
	msg := fmt.Sprintf("%s: %v", who, s)
	if op, peer, inside := native.Blocked(); inside {
		switch {
		case peer >= 0:
			msg += fmt.Sprintf("; it waits in %s for rank %d", op, peer)
		case native.WorldSize() == 2:
			// A collective of two ranks waits for the other one.
			msg += fmt.Sprintf("; it waits in %s for rank %d, the only other rank", op, 1-native.WorldRank())
		default:
			msg += fmt.Sprintf("; it waits in %s for a rank that has not reached it (a collective over the %d ranks, or a receive from any rank)", op, native.WorldSize())
		}
	}
	return msg + "; ending the job (MPI_Abort, exit status 1)"
}

// allowMPMDEnv, set to any value, lets the ranks of a launch run
// different arguments: for tests that make one rank fail on purpose (a
// ping-pong whose peer sends more than it receives), never for
// measurements.
const allowMPMDEnv = "COMMCOST_ALLOW_MPMD"

// commandHash is a hash of the arguments of a run (subcommand path and
// flags), the same on every rank that runs the same command.
func commandHash(args []string) int64 {
	h := fnv.New64a()
	for _, a := range args {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(a)))
		h.Write(n[:])
		h.Write([]byte(a))
	}
	return int64(h.Sum64() >> 1) // non-negative, so -h cannot overflow
}

// sameCommand refuses a launch whose ranks run different commands (an
// MPMD launch, 'mpirun -np 1 commcost pingpong : -np 1 commcost
// bandwidth', or arguments that differ per rank): their collectives would
// not match and the job would hang. It is the first collective of every
// run on the native backend. Rank 0 names the ranks that differ; the
// verdict is agreed, so the message appears once and every rank exits 2.
func sameCommand(c mpi.Comm, args []string) error {
	h := commandHash(args)
	out := []int64{0, 0}
	if err := c.AllreduceInt64s([]int64{h, -h}, out, mpi.OpMax); err != nil {
		return err
	}
	if out[0] == -out[1] {
		return nil
	}
	all := make([]int64, c.Size())
	if err := mpi.AllgatherInt64s(c, []int64{h}, all); err != nil {
		return err
	}
	var mine error
	if c.Rank() == 0 {
		var differ []string
		for r, v := range all {
			if v != all[0] {
				differ = append(differ, fmt.Sprint(r))
			}
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
