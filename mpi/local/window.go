package local

import (
	"bytes"
	"sync"
	"time"

	"github.com/commcost/commcost/mpi"
)

// One-sided windows (mpi.WindowAllocator) over the ranks' shared address
// space: a call copies into or out of the target's memory at once, under
// the window's lock (so accumulates are atomic per call, as MPI's are per
// element), and completes when it returns; the synchronisation calls keep
// MPI's ordering: Lock waits for an exclusive holder, Start for the
// target's Post, Wait for every origin's Complete, Fence and Free are
// collective. A waiting rank polls (checking for an abort) instead of
// blocking in the deadlock detector's view.

var _ mpi.WindowAllocator = (*comm)(nil)

const (
	opWinAllocate = "MPI_Win_allocate"
	opWinFence    = "MPI_Win_fence"
	opWinFree     = "MPI_Win_free"
)

// pollEvery is how long a waiting window call sleeps between checks.
const pollEvery = 20 * time.Microsecond

// lwin is one window as all its members see it.
type lwin struct {
	mu     sync.Mutex
	mems   [][]byte
	sizes  []int
	shared []int  // shared locks held on each target
	excl   []bool // an exclusive lock held on each target
	// posts[t][o] counts target t's posts to origin o not yet started;
	// dones[t][o] origin o's completions towards t not yet waited for.
	posts, dones [][]int
}

// window is one rank's handle.
type window struct {
	w        *lwin
	c        *comm
	started  []int // targets of the open access epoch (Start)
	exposed  []int // origins of the open exposure epoch (Post)
	allHeld  bool
	freed    bool
	heldLock []int // targets this rank holds a lock on: 1 shared, 2 exclusive
}

// AllocateWindow implements mpi.WindowAllocator (collective).
func (c *comm) AllocateWindow(size int) (mpi.Window, error) {
	p := &part{op: opWinAllocate, winSize: size}
	if size < 0 {
		p.err = errorf(opWinAllocate, mpi.ErrArg, "size %d is negative", size)
	}
	if err := c.collective(p); err != nil {
		return nil, err
	}
	return &window{w: p.newWin, c: c, heldLock: make([]int, c.s.size)}, nil
}

// execWinAllocate makes the window every part gets.
func execWinAllocate(ps []*part) {
	n := len(ps)
	w := &lwin{mems: make([][]byte, n), sizes: make([]int, n), shared: make([]int, n), excl: make([]bool, n),
		posts: make([][]int, n), dones: make([][]int, n)}
	for i, p := range ps {
		w.mems[i], w.sizes[i] = make([]byte, p.winSize), p.winSize
		w.posts[i], w.dones[i] = make([]int, n), make([]int, n)
	}
	for _, p := range ps {
		p.newWin = w
	}
}

func (x *window) Mem() []byte { return x.w.mems[x.c.rank] }

func (x *window) check(op string) error {
	if err := x.c.check(op); err != nil {
		return err
	}
	if x.freed {
		return errorf(op, mpi.ErrOther, "the window was freed")
	}
	return nil
}

// access checks a communication call and returns the target's bytes at
// disp with the window locked; the caller unlocks.
func (x *window) access(op string, target, disp, n int) ([]byte, error) {
	if err := x.check(op); err != nil {
		return nil, err
	}
	if err := mpi.CheckRMA(op, x.w.sizes, target, disp, n); err != nil {
		return nil, err
	}
	x.w.mu.Lock()
	return x.w.mems[target][disp : disp+n], nil
}

// Put implements mpi.Window.
func (x *window) Put(origin []byte, target, disp int) error {
	t, err := x.access("MPI_Put", target, disp, len(origin))
	if err != nil {
		return err
	}
	copy(t, origin)
	x.w.mu.Unlock()
	return nil
}

// Get implements mpi.Window.
func (x *window) Get(origin []byte, target, disp int) error {
	t, err := x.access("MPI_Get", target, disp, len(origin))
	if err != nil {
		return err
	}
	copy(origin, t)
	x.w.mu.Unlock()
	return nil
}

// typedCheck checks a typed call's type, operation and lengths.
func typedCheck(op string, dt mpi.Datatype, rop mpi.Op, one bool, bufs ...[]byte) error {
	if err := mpi.CheckTyped(op, dt, rop, bufs...); err != nil {
		return err
	}
	for _, b := range bufs[1:] {
		if len(b) != len(bufs[0]) {
			return errorf(op, mpi.ErrCount, "buffers of %d and %d bytes: want equal lengths", len(bufs[0]), len(b))
		}
	}
	if one && len(bufs[0]) != dt.Size() {
		return errorf(op, mpi.ErrCount, "%d bytes: the call moves one %d-byte %v element", len(bufs[0]), dt.Size(), dt)
	}
	return nil
}

// Accumulate implements mpi.Window.
func (x *window) Accumulate(origin []byte, target, disp int, dt mpi.Datatype, op mpi.Op) error {
	const name = "MPI_Accumulate"
	if err := typedCheck(name, dt, op, false, origin); err != nil {
		return err
	}
	t, err := x.access(name, target, disp, len(origin))
	if err != nil {
		return err
	}
	mpi.ReduceInto(t, origin, dt, op)
	x.w.mu.Unlock()
	return nil
}

// GetAccumulate implements mpi.Window.
func (x *window) GetAccumulate(origin, result []byte, target, disp int, dt mpi.Datatype, op mpi.Op) error {
	return x.fetchReduce("MPI_Get_accumulate", false, origin, result, target, disp, dt, op)
}

// FetchAndOp implements mpi.Window.
func (x *window) FetchAndOp(origin, result []byte, target, disp int, dt mpi.Datatype, op mpi.Op) error {
	return x.fetchReduce("MPI_Fetch_and_op", true, origin, result, target, disp, dt, op)
}

// fetchReduce reads the target into result, then reduces origin into it,
// atomically; single is whether the call takes one element only.
func (x *window) fetchReduce(name string, single bool, origin, result []byte, target, disp int, dt mpi.Datatype, op mpi.Op) error {
	if err := typedCheck(name, dt, op, single, origin, result); err != nil {
		return err
	}
	t, err := x.access(name, target, disp, len(origin))
	if err != nil {
		return err
	}
	copy(result, t)
	mpi.ReduceInto(t, origin, dt, op)
	x.w.mu.Unlock()
	return nil
}

// CompareAndSwap implements mpi.Window.
func (x *window) CompareAndSwap(origin, compare, result []byte, target, disp int, dt mpi.Datatype) error {
	const name = "MPI_Compare_and_swap"
	if err := typedCheck(name, dt, mpi.OpSum, true, origin, compare, result); err != nil {
		return err
	}
	t, err := x.access(name, target, disp, len(origin))
	if err != nil {
		return err
	}
	copy(result, t)
	if bytes.Equal(t, compare) {
		copy(t, origin)
	}
	x.w.mu.Unlock()
	return nil
}

// poll waits until cond holds (called with the window locked, and returns
// with it locked), or the world aborts.
func (x *window) poll(op string, cond func() bool) error {
	for !cond() {
		x.w.mu.Unlock()
		if x.c.s.w.aborted.Load() {
			x.w.mu.Lock()
			return x.c.abortError(op)
		}
		time.Sleep(pollEvery)
		x.w.mu.Lock()
	}
	return nil
}

func (x *window) target(op string, t int) error {
	if err := x.check(op); err != nil {
		return err
	}
	return x.c.checkRank(op, "target", t, false)
}

// Lock implements mpi.Window: a shared lock waits for no exclusive
// holder, an exclusive one for no holder at all.
func (x *window) Lock(t int, exclusive bool) error {
	const op = "MPI_Win_lock"
	if err := x.target(op, t); err != nil {
		return err
	}
	if x.heldLock[t] != 0 || x.allHeld {
		return errorf(op, mpi.ErrOther, "rank %d already holds a lock on target %d", x.c.rank, t)
	}
	w := x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := x.poll(op, func() bool { return !w.excl[t] && (!exclusive || w.shared[t] == 0) }); err != nil {
		return err
	}
	if exclusive {
		w.excl[t], x.heldLock[t] = true, 2
	} else {
		w.shared[t]++
		x.heldLock[t] = 1
	}
	return nil
}

// Unlock implements mpi.Window.
func (x *window) Unlock(t int) error {
	const op = "MPI_Win_unlock"
	if err := x.target(op, t); err != nil {
		return err
	}
	if x.heldLock[t] == 0 {
		return errorf(op, mpi.ErrOther, "rank %d holds no lock on target %d", x.c.rank, t)
	}
	x.w.mu.Lock()
	if x.heldLock[t] == 2 {
		x.w.excl[t] = false
	} else {
		x.w.shared[t]--
	}
	x.w.mu.Unlock()
	x.heldLock[t] = 0
	return nil
}

// LockAll implements mpi.Window: a shared lock on every rank.
func (x *window) LockAll() error {
	const op = "MPI_Win_lock_all"
	if err := x.check(op); err != nil {
		return err
	}
	if x.allHeld {
		return errorf(op, mpi.ErrOther, "rank %d already holds a lock_all", x.c.rank)
	}
	w := x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := x.poll(op, func() bool {
		for _, e := range w.excl {
			if e {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	for t := range w.shared {
		w.shared[t]++
	}
	x.allHeld = true
	return nil
}

// UnlockAll implements mpi.Window.
func (x *window) UnlockAll() error {
	const op = "MPI_Win_unlock_all"
	if err := x.check(op); err != nil {
		return err
	}
	if !x.allHeld {
		return errorf(op, mpi.ErrOther, "rank %d holds no lock_all", x.c.rank)
	}
	x.w.mu.Lock()
	for t := range x.w.shared {
		x.w.shared[t]--
	}
	x.w.mu.Unlock()
	x.allHeld = false
	return nil
}

// Flush implements mpi.Window: every call has completed when it returned.
func (x *window) Flush(t int) error { return x.target("MPI_Win_flush", t) }

// Fence implements mpi.Window (collective).
func (x *window) Fence() error {
	if err := x.check(opWinFence); err != nil {
		return err
	}
	return x.c.collective(&part{op: opWinFence})
}

func (x *window) group(op string, g []int) error {
	if err := x.check(op); err != nil {
		return err
	}
	return mpi.CheckGroup(op, g, x.c.s.size)
}

// Post implements mpi.Window.
func (x *window) Post(g []int) error {
	const op = "MPI_Win_post"
	if err := x.group(op, g); err != nil {
		return err
	}
	if x.exposed != nil {
		return errorf(op, mpi.ErrOther, "an exposure epoch is open already")
	}
	x.w.mu.Lock()
	for _, o := range g {
		x.w.posts[x.c.rank][o]++
	}
	x.w.mu.Unlock()
	x.exposed = append([]int{}, g...)
	return nil
}

// Start implements mpi.Window: it waits for every target's Post.
func (x *window) Start(g []int) error {
	const op = "MPI_Win_start"
	if err := x.group(op, g); err != nil {
		return err
	}
	if x.started != nil {
		return errorf(op, mpi.ErrOther, "an access epoch is open already")
	}
	me, w := x.c.rank, x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := x.poll(op, func() bool {
		for _, t := range g {
			if w.posts[t][me] == 0 {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	for _, t := range g {
		w.posts[t][me]--
	}
	x.started = append([]int{}, g...)
	return nil
}

// Complete implements mpi.Window.
func (x *window) Complete() error {
	const op = "MPI_Win_complete"
	if err := x.check(op); err != nil {
		return err
	}
	if x.started == nil {
		return errorf(op, mpi.ErrOther, "no access epoch is open")
	}
	x.w.mu.Lock()
	for _, t := range x.started {
		x.w.dones[t][x.c.rank]++
	}
	x.w.mu.Unlock()
	x.started = nil
	return nil
}

// Wait implements mpi.Window: it waits for every origin's Complete.
func (x *window) Wait() error {
	const op = "MPI_Win_wait"
	if err := x.check(op); err != nil {
		return err
	}
	if x.exposed == nil {
		return errorf(op, mpi.ErrOther, "no exposure epoch is open")
	}
	me, w := x.c.rank, x.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := x.poll(op, func() bool {
		for _, o := range x.exposed {
			if w.dones[me][o] == 0 {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	for _, o := range x.exposed {
		w.dones[me][o]--
	}
	x.exposed = nil
	return nil
}

// Free implements mpi.Window (collective).
func (x *window) Free() error {
	if err := x.check(opWinFree); err != nil {
		return err
	}
	if err := x.c.collective(&part{op: opWinFree}); err != nil {
		return err
	}
	x.freed = true
	return nil
}
