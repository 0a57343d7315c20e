// The guards a measuring run passes before and while it measures: every
// rank runs the same command (SameCommand), the run asks no more than the
// machine has (Largest), and no point hangs the job (Watch, StallMessage).
// What to do with a verdict (which flag to name, exit status 2, MPI_Abort)
// is the rest of this package's; these functions return facts.

package job

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// CommandHash is a hash of the arguments of a run (subcommand path and
// flags), the same on every rank that runs the same command. Each argument
// is length-prefixed, so that moving a boundary between arguments ("a b"
// against "ab") changes the hash. It is non-negative, so that its negation
// cannot overflow.
func CommandHash(args []string) int64 {
	h := fnv.New64a()
	for _, a := range args {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(a)))
		h.Write(n[:])
		h.Write([]byte(a))
	}
	return int64(h.Sum64() >> 1)
}

// Mismatch is SameCommand's finding: the ranks do not all run the same
// command. Differ lists the ranks whose arguments differ from rank 0's; it
// is filled on rank 0 alone (the others learn only that there is a
// mismatch), so that one rank reports it.
type Mismatch struct {
	Differ []int
}

// SameCommand checks that every rank of c runs args: an Allreduce of the
// hash and its negation (max of both: equal on every rank only if all
// hashes are), and on a mismatch an Allgather of the hashes so that rank 0
// can name the ranks that differ. It returns nil when all agree, else a
// *Mismatch on every rank. Collective over c; meant as the first
// collective of a run, before ranks that disagree post different ones.
func SameCommand(c mpi.Comm, args []string) (*Mismatch, error) {
	h := CommandHash(args)
	out := []int64{0, 0}
	if err := c.AllreduceInt64s([]int64{h, -h}, out, mpi.OpMax); err != nil {
		return nil, err
	}
	if out[0] == -out[1] {
		return nil, nil
	}
	all := make([]int64, c.Size())
	if err := mpi.AllgatherInt64s(c, []int64{h}, all); err != nil {
		return nil, err
	}
	m := &Mismatch{}
	if c.Rank() == 0 {
		for r, v := range all {
			if v != all[0] {
				m.Differ = append(m.Differ, r)
			}
		}
	}
	return m, nil
}

// Watch installs a patterns.Watchdog with timeout for the duration of a
// run (patterns.Install: every point a pattern measures reports to it) and
// returns its removal. expire runs on the watchdog's goroutine when a
// point is stuck, while the rank's own goroutine may be blocked in MPI
// holding locks: it must not take them, and is expected to end the job.
func Watch(timeout time.Duration, expire func(patterns.Stall)) (remove func()) {
	wd := patterns.NewWatchdog(timeout, expire)
	patterns.Install(wd)
	return func() {
		patterns.Install(nil)
		wd.Stop()
	}
}

// Where says where a stuck rank is, as its backend reports it.
type Where struct {
	// Rank and Size are the rank in the world and the world's size when
	// MPI is up; Rank < 0 when it is not (Size is then 0).
	Rank, Size int
	// LauncherRank is the rank the launcher gave this process before MPI
	// was up (its environment), < 0 when none: the local backend, whose
	// ranks are all in this process.
	LauncherRank int
	// Inside is set when the rank is inside an MPI call, Op; Peer is the
	// rank it waits for, < 0 when the call does not name one (a
	// collective, a receive from any rank).
	Inside bool
	Op     string
	Peer   int
}

// StallMessage describes a stuck point from the view of the rank at w:
// who it is, the stall (patterns.Stall's own text), what it waits for, and
// that the job ends.
func StallMessage(s patterns.Stall, w Where) string {
	who := "watchdog" // the local backend: every rank is in this process
	if w.Rank >= 0 {
		who = fmt.Sprintf("rank %d of %d", w.Rank, w.Size)
	} else if w.LauncherRank >= 0 {
		who = fmt.Sprintf("rank %d", w.LauncherRank)
	}
	msg := fmt.Sprintf("%s: %v", who, s)
	if w.Inside {
		switch {
		case w.Peer >= 0:
			msg += fmt.Sprintf("; it waits in %s for rank %d", w.Op, w.Peer)
		case w.Size == 2:
			// A collective of two ranks waits for the other one.
			msg += fmt.Sprintf("; it waits in %s for rank %d, the only other rank", w.Op, 1-w.Rank)
		default:
			msg += fmt.Sprintf("; it waits in %s for a rank that has not reached it (a collective over the %d ranks, or a receive from any rank)", w.Op, w.Size)
		}
	}
	switch {
	case w.Rank < 0 && w.LauncherRank >= 0:
		// Before MPI is up there is no MPI_Abort: the rank exits and its
		// launcher ends the others.
		return msg + "; ending this rank (exit status 1), and the launcher the job"
	default:
		return msg + "; ending the job (MPI_Abort, exit status 1)"
	}
}

// Largest checks a run's plan, its pattern instances on p ranks, before
// anything is allocated: every instance's single repetition and warm-up
// against the time budget of maxTime seconds per point
// (patterns.Demand.CheckTime), and which instance needs most memory on a
// rank, buffers plus payload in flight. It returns that instance's index
// and Demand (index -1 when no instance needs any memory); when an
// instance cannot finish within maxTime, its index and CheckTime's error.
func Largest(plan []patterns.Pattern, p int, maxTime float64) (int, patterns.Demand, error) {
	worst, most := -1, patterns.Demand{}
	for i, pat := range plan {
		d := pat.Demand(p)
		if err := d.CheckTime(maxTime); err != nil {
			return i, d, err
		}
		if float64(d.BufferBytes)+float64(d.InFlightBytes) > float64(most.BufferBytes)+float64(most.InFlightBytes) {
			worst, most = i, d
		}
	}
	return worst, most, nil
}

// LocalRankBytes is what one goroutine rank of the local backend costs
// beyond its buffers (stack, queues, communicator state): 4096 ranks fit
// in under 1 GiB.
const LocalRankBytes = 256 << 10

// Need is the memory one rank of a run needs, in bytes: its buffers, and
// the payload it has in flight at once.
type Need struct {
	BufferBytes, InFlightBytes float64
}

// InProcess is what ranks goroutine ranks of the local backend need in
// this process: each its buffers, the payload in flight once more (the
// backend's queues copy messages) and LocalRankBytes.
func (n Need) InProcess(ranks int) float64 {
	return float64(ranks) * (n.BufferBytes + n.InFlightBytes + LocalRankBytes)
}

// OnHost is what ranks processes of a process backend need on one host:
// each its buffers (messages in flight sit in the MPI library's and the
// network's buffers, which it sizes itself).
func (n Need) OnHost(ranks int) float64 { return float64(ranks) * n.BufferBytes }
