package local

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/commcost/commcost/mpi"
)

// shared is one communicator as all its members see it.
type shared struct {
	w      *world
	id     int64
	size   int
	wranks []int     // world rank of each member
	boxes  []mailbox // point-to-point state of each member

	collMu sync.Mutex
	// rounds are the collectives some member has joined and not every
	// member yet, by sequence number (a member's k-th collective call
	// joins round k).
	rounds map[uint64]*round

	valuesMu sync.Mutex
	values   map[any]any // ProcessShared
}

func (w *world) newShared(wranks []int) *shared {
	// The world is created first and so gets id 0.
	id := w.nextID.Add(1) - 1
	return &shared{w: w, id: id, size: len(wranks), wranks: wranks, boxes: make([]mailbox, len(wranks))}
}

// comm is one rank's handle on a communicator.
type comm struct {
	s     *shared
	rank  int
	wrank int
	freed bool
	seq   uint64 // collective calls joined so far (guarded by collMu)
	// capture, when set, receives the part a collective call built
	// instead of running it (the non-blocking forms reuse the blocking
	// calls' argument checks).
	capture func(*part)
}

var (
	_ mpi.Comm          = (*comm)(nil)
	_ mpi.Describer     = (*comm)(nil)
	_ mpi.ProcessShared = (*comm)(nil)
	_ mpi.RefSender     = (*comm)(nil)
)

// ProcessShared implements mpi.ProcessShared: one value per key and
// communicator, made by the first rank that asks. All ranks of a local
// world are in this process, so every member gets the same value.
func (c *comm) ProcessShared(key any, mk func() any) any {
	s := c.s
	s.valuesMu.Lock()
	defer s.valuesMu.Unlock()
	if v, ok := s.values[key]; ok {
		return v
	}
	if s.values == nil {
		s.values = map[any]any{}
	}
	v := mk()
	s.values[key] = v
	return v
}

func (c *comm) Rank() int       { return c.rank }
func (c *comm) Size() int       { return c.s.size }
func (c *comm) Backend() string { return "local" }

// Wtime is the seconds since Run started, from the monotonic clock.
func (c *comm) Wtime() float64 { return time.Since(c.s.w.start).Seconds() }

// Wtick is the resolution of Go's monotonic clock readings.
func (c *comm) Wtick() float64 { return 1e-9 }

// Info describes the backend. Version is the MPI standard whose semantics
// the package follows for the calls it has.
func (c *comm) Info() mpi.Info {
	return mpi.Info{
		Library:        "commcost mpi/local",
		Version:        "3.1",
		Processor:      c.s.w.host,
		ThreadLevel:    "MPI_THREAD_SERIALIZED",
		Implementation: "local",
	}
}

// Split is MPI_Comm_split: members with the same color >= 0 form a new
// communicator, ranked by key and then by rank in c; a negative color
// (mpi.Undefined) gives that rank a nil Comm.
func (c *comm) Split(color, key int) (mpi.Comm, error) {
	p := &part{op: opSplit, color: color, key: key}
	if err := c.collective(p); err != nil {
		return nil, err
	}
	if p.newComm == nil {
		return nil, nil // not a typed nil: callers compare with nil
	}
	return p.newComm, nil
}

// Dup is MPI_Comm_dup: same members and ranks, separate message space.
func (c *comm) Dup() (mpi.Comm, error) {
	p := &part{op: opDup}
	if err := c.collective(p); err != nil {
		return nil, err
	}
	return p.newComm, nil
}

// Free is MPI_Comm_free for this rank's handle: later calls on it fail with
// mpi.ErrComm. Like most MPI libraries, it does not synchronise, and
// requests already started on the communicator still complete.
func (c *comm) Free() error {
	const op = "MPI_Comm_free"
	if err := c.check(op); err != nil {
		return err
	}
	if c.s.id == 0 {
		return errorf(op, mpi.ErrComm, "cannot free the world communicator")
	}
	c.freed = true
	return nil
}

// check is the entry test of every call.
func (c *comm) check(op string) error {
	if c.s.w.aborted.Load() {
		return c.s.w.abortError(op)
	}
	if c.freed {
		return errorf(op, mpi.ErrComm, "communicator %d has been freed", c.s.id)
	}
	return nil
}

func (c *comm) abortError(op string) error { return c.s.w.abortError(op) }

func (c *comm) checkRank(op, what string, r int, wildcard bool) error {
	if r >= 0 && r < c.s.size || wildcard && r == mpi.AnySource {
		return nil
	}
	return errorf(op, mpi.ErrRank, "invalid rank: %s %d, communicator size %d", what, r, c.s.size)
}

func checkTag(op string, tag int, wildcard bool) error {
	if tag >= 0 && tag <= math.MaxInt32 || wildcard && tag == mpi.AnyTag {
		return nil
	}
	return errorf(op, mpi.ErrTag, "invalid tag %d: tags are 0..%d", tag, math.MaxInt32)
}

func checkCount(op string, n int) error {
	if n > mpi.MaxCount {
		return errorf(op, mpi.ErrCount, "invalid count: %d bytes exceeds MaxCount", n)
	}
	return nil
}

func (c *comm) checkRoot(op string, root int) error {
	if root >= 0 && root < c.s.size {
		return nil
	}
	return errorf(op, mpi.ErrRoot, "invalid root %d, communicator size %d", root, c.s.size)
}

// errorf builds an *mpi.Error whose message starts with the class name, as
// Open MPI's MPI_Error_string and mpi/native's errors do.
func errorf(op string, class int, format string, args ...any) *mpi.Error {
	return &mpi.Error{Op: op, Class: class, Code: class, Msg: className(class) + ": " + fmt.Sprintf(format, args...)}
}

func className(class int) string { return mpi.ClassName(class) }
