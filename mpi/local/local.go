// Package local runs n MPI ranks as goroutines of one process and gives each
// an mpi.Comm that behaves as MPI would, so that patterns, libraries and
// applications can be unit-tested without mpirun (and under -race), and
// count-based studies (messages, congestion, permutations) can run with
// thousands of ranks on one machine: a rank's state does not grow with the
// number of ranks (a mailbox per communicator, no per-peer queues), and
// `commcost info --np 4096` peaks at 89 MB. Times from this backend are never
// network measurements: Wtime is the process's monotonic clock.
//
// # Point-to-point
//
// Every communicator has, per member, a mailbox of unexpected messages and of
// posted receives. A message is matched by (source, tag) against the
// earliest-posted matching receive; a receive takes the earliest-arrived
// matching message. Messages from one source on one communicator are therefore
// non-overtaking, with or without wildcards. Matching costs O(1) per message
// whatever the number of ranks, pending messages or distinct tags: pending
// messages are listed in arrival order and, from the first receive or probe
// that needs the index on, indexed by (source, tag), by source or by tag;
// posted receives are indexed by their (possibly wildcard) pattern.
//
// Send and Isend are buffered: they copy the data and return at once (an
// Isend request is complete when returned), so, unlike in MPI, no program
// deadlocks for want of buffer space. Ssend returns only once a receive has
// taken the message; it does not copy. A receive buffer longer than the
// message is legal (Status.Count is the bytes received); a shorter one
// receives a prefix and fails with mpi.ErrTruncate. Probe and Iprobe see
// unexpected messages without consuming them. Iprobe and Test yield the
// processor when they find nothing, as MPI's polling calls drive progress.
//
// # Sharing within the process
//
// All ranks live in one address space, which two optional interfaces of
// package mpi expose for count-based studies at thousands of ranks:
// IsendRef (mpi.RefSender) queues a message's body by reference, so a
// payload that nobody modifies (a divalib copy forwarded along an access
// tree) exists once however many ranks receive it, and RecvRef hands it
// over without a copy; ProcessShared gives the ranks of a communicator one
// value per key (divalib's catalogue of variable names), instead of one
// per rank.
//
// # Collectives
//
// Collectives never touch the point-to-point queues (MPI's separate
// collective context): each communicator has one rendezvous where every
// member's k-th collective call meets the others' k-th. The last rank to
// arrive checks that all agree, moves all the data while the others are
// blocked, and releases them, so each collective costs one synchronisation and
// no extra copies. Reductions fold the contributions in rank order into a
// temporary and copy the result out: results are bitwise reproducible and
// identical on every rank, and send may alias recv. A non-blocking
// collective (mpi.NonBlockingCollectives) joins its rendezvous when started
// and waits for it at Wait, so a rank may start several, and exchange
// messages, before waiting.
//
// Collective arguments are checked as strictly as the MPI standard states
// them (a stricter check than most MPI libraries make), on every rank, and an
// argument error on one rank fails the call on all ranks instead of leaving
// them blocked:
//   - the amounts sent and received must agree exactly (Bcast lengths, Gather
//     and Allgather send lengths, Scatter receive lengths, Alltoall blocks,
//     v-variant counts, reduction lengths), else mpi.ErrTruncate;
//   - buffers that hold several blocks or the regions given by counts and
//     displacements may be longer than needed (the rest is left untouched);
//     shorter is mpi.ErrCount, and so is a negative count or an Alltoall send
//     length not divisible by Size;
//   - counts/displs slices whose length is not Size, or negative
//     displacements, are mpi.ErrArg; a bad root is mpi.ErrRoot, an Op other
//     than sum, min and max is mpi.ErrOp.
//
// # Failures
//
// Every error is an *mpi.Error with the MPI class and an Op such as
// "MPI_Send", like the native backend's. A rank that returns an error or
// panics aborts the world: every blocked call, and every later call, on every
// rank returns an *mpi.Error of class mpi.ErrOther whose message starts
// "local: world aborted:". Options add a time limit and deadlock detection.
//
// Concurrency follows package mpi: a Comm is used by one goroutine at a time;
// different ranks, and different communicators, run concurrently.
package local

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/commcost/commcost/mpi"
)

// Options configures a world. The zero value gives the defaults.
type Options struct {
	// Timeout aborts the world if the ranks have not all returned after
	// this long. Zero or negative means no limit.
	Timeout time.Duration

	// DetectDeadlock aborts the world, naming the call each rank is blocked
	// in, as soon as every rank that has not returned is blocked in a call
	// that only another rank could complete. It is exact when each rank
	// makes its calls from one goroutine. It is off by default because a
	// rank whose helper goroutine blocks in a call (say, a server loop) while
	// its main goroutine computes would be counted as blocked, and the
	// world could be aborted while it was still making progress.
	DetectDeadlock bool

	// AbortGrace is how long Run waits, after an abort, for ranks that are
	// not inside a local call (a rank blocked on a Go channel, say) to
	// return. Ranks still running then are reported and their goroutines
	// are left behind. Zero means 10 seconds.
	AbortGrace time.Duration
}

const defaultAbortGrace = 10 * time.Second

// maxReported bounds the ranks listed in a timeout or deadlock message, so
// that a 1024-rank hang stays readable.
const maxReported = 16

// Run starts n ranks as goroutines, calls fn on each with its world
// communicator, waits for all of them and returns their errors joined, each
// prefixed with its rank. It is RunWith with the default Options.
func Run(n int, fn func(c mpi.Comm) error) error {
	return RunWith(Options{}, n, fn)
}

// RunWith is Run with options.
//
// The first rank error, panic or time-out aborts the world (see the package
// comment). The returned error then lists the failing ranks' own errors and
// counts, rather than repeats, the ranks that only returned the abort error.
// A panicking rank's error carries its stack.
func RunWith(opts Options, n int, fn func(c mpi.Comm) error) error {
	if n < 1 {
		return fmt.Errorf("local: cannot run %d ranks: need at least 1", n)
	}
	if fn == nil {
		return errors.New("local: nil rank function")
	}
	w := newWorld(n, opts)
	ws := w.newShared(identity(n))

	type result struct {
		rank int
		err  error
	}
	results := make(chan result, n)
	for r := range n {
		go func() {
			var err error
			completed := false
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				} else if !completed {
					err = errors.New("rank goroutine exited via runtime.Goexit (t.Fatal or t.FailNow called on a rank?)")
				}
				w.rankReturned(r, err)
				results <- result{r, err}
			}()
			err = fn(&comm{s: ws, rank: r, wrank: r})
			completed = true
		}()
	}

	errs := make([]error, n)
	returned := make([]bool, n)
	var timeout, grace <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	abortCh := w.abortCh
	leaked := false
	for got := 0; got < n && !leaked; {
		select {
		case res := <-results:
			errs[res.rank], returned[res.rank] = res.err, true
			got++
		case <-timeout:
			timeout = nil
			w.abort(fmt.Sprintf("timeout of %v exceeded%s", opts.Timeout, w.blockedReport()), -1)
		case <-abortCh:
			abortCh = nil
			g := opts.AbortGrace
			if g <= 0 {
				g = defaultAbortGrace
			}
			t := time.NewTimer(g)
			defer t.Stop()
			grace = t.C
		case <-grace:
			leaked = true
		}
	}
	return w.joinErrors(errs, returned)
}

// joinErrors builds Run's error from the ranks' results.
func (w *world) joinErrors(errs []error, returned []bool) error {
	var list []error
	if w.aborted.Load() && w.abortRank < 0 {
		list = append(list, errors.New(w.abortMsg))
	}
	consequences := 0
	var missing []int
	for r, err := range errs {
		switch {
		case !returned[r]:
			missing = append(missing, r)
		case err == nil:
		case r != w.abortRank && w.isAbortError(err):
			consequences++
		default:
			list = append(list, fmt.Errorf("rank %d: %w", r, err))
		}
	}
	if consequences > 0 {
		list = append(list, fmt.Errorf("local: %d other rank(s) returned the world-abort error", consequences))
	}
	if len(missing) > 0 {
		list = append(list, fmt.Errorf("local: rank(s) %s did not return after the abort; their goroutines are left running", rankList(missing)))
	}
	return errors.Join(list...)
}

// world is the state shared by all ranks of one Run.
type world struct {
	n     int
	opts  Options
	diag  bool // track where ranks block, for timeout and deadlock messages
	start time.Time
	host  string

	nextID atomic.Int64 // next communicator id, for messages

	abortOnce sync.Once
	aborted   atomic.Bool
	abortCh   chan struct{} // closed on abort, after abortMsg/abortRank are set
	abortMsg  string
	abortRank int // the rank whose failure aborted the world, or -1

	ranks []rankState

	// Deadlock detection: idle counts returned ranks plus armed waits; when
	// it reaches n with some rank not returned, nobody can make progress.
	idle     atomic.Int64
	finished atomic.Int64
}

type rankState struct {
	blockedIn atomic.Pointer[blockInfo]
	returned  atomic.Bool
}

// blockInfo describes the call a rank is blocked in.
type blockInfo struct {
	op   string
	comm int64
	peer int // source, dest or root, or none
	tag  int // or none
}

// none marks a blockInfo field the call does not have (wildcards are -1).
const none = -2

func (b *blockInfo) String() string {
	s := b.op
	switch {
	case b.peer == none:
	case b.tag == none:
		s = fmt.Sprintf("%s(root %s)", b.op, rankName(b.peer))
	default:
		s = fmt.Sprintf("%s(peer %s, tag %s)", b.op, rankName(b.peer), tagName(b.tag))
	}
	return fmt.Sprintf("%s on comm %d", s, b.comm)
}

func rankName(r int) string {
	if r == mpi.AnySource {
		return "any"
	}
	return fmt.Sprint(r)
}

func tagName(t int) string {
	if t == mpi.AnyTag {
		return "any"
	}
	return fmt.Sprint(t)
}

func newWorld(n int, opts Options) *world {
	host, _ := os.Hostname()
	return &world{
		n:         n,
		opts:      opts,
		diag:      opts.DetectDeadlock || opts.Timeout > 0,
		start:     time.Now(),
		host:      host,
		abortCh:   make(chan struct{}),
		abortRank: -1,
		ranks:     make([]rankState, n),
	}
}

func identity(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// abort stops the world once; later calls keep the first cause.
func (w *world) abort(cause string, rank int) {
	w.abortOnce.Do(func() {
		w.abortMsg = "local: world aborted: " + cause
		w.abortRank = rank
		w.aborted.Store(true)
		close(w.abortCh)
	})
}

// abortError is what a call returns once the world is aborted.
func (w *world) abortError(op string) error {
	return &mpi.Error{Op: op, Class: mpi.ErrOther, Code: mpi.ErrOther, Msg: w.abortMsg}
}

// isAbortError says whether err carries the world-abort error (what
// abortError made): a rank that returned it is a consequence of the abort,
// counted. A rank that saw the abort but returned an error of its own (it
// failed just as another rank's failure aborted the world first) is a
// failing rank, listed.
func (w *world) isAbortError(err error) bool {
	var e *mpi.Error
	return w.aborted.Load() && errors.As(err, &e) && e.Msg == w.abortMsg
}

func (w *world) rankReturned(r int, err error) {
	if err != nil {
		w.abort(fmt.Sprintf("rank %d failed: %s", r, firstLine(err.Error())), r)
	}
	w.ranks[r].returned.Store(true)
	if w.opts.DetectDeadlock {
		w.finished.Add(1)
		w.noteIdle()
	}
}

// noteIdle counts one more rank that cannot progress by itself and aborts if
// that makes all of them.
func (w *world) noteIdle() {
	if w.idle.Add(1) == int64(w.n) && w.finished.Load() < int64(w.n) {
		w.abort("deadlock: every rank that has not returned is blocked"+w.blockedReport(), -1)
	}
}

// blockedReport lists where the ranks that have not returned are.
func (w *world) blockedReport() string {
	if !w.diag {
		return ""
	}
	var b strings.Builder
	listed, rest := 0, 0
	for r := range w.ranks {
		rs := &w.ranks[r]
		if rs.returned.Load() {
			continue
		}
		if listed == maxReported {
			rest++
			continue
		}
		listed++
		if bi := rs.blockedIn.Load(); bi != nil {
			fmt.Fprintf(&b, "\n\trank %d: blocked in %s", r, bi)
		} else {
			fmt.Fprintf(&b, "\n\trank %d: running (not in a blocking call)", r)
		}
	}
	if rest > 0 {
		fmt.Fprintf(&b, "\n\t... and %d more rank(s)", rest)
	}
	return b.String()
}

// waitPoint is one blocking wait of a rank on an event another rank causes
// (a message arriving, a receive taking an Ssend's message, the last rank
// joining a collective). All fields are guarded by the lock of the object
// that owns the wait point, which both the waiter and the firer hold; that is
// what keeps the deadlock count exact.
type waitPoint struct {
	ch    chan struct{} // created by arm, closed by fire
	fired bool
	armed bool // counted in world.idle
}

// arm prepares wp for a wait by world rank wrank. Call it with the owner's
// lock held, after checking that wp has not fired.
func (w *world) arm(wp *waitPoint, wrank int, info blockInfo) {
	wp.ch = make(chan struct{})
	if w.diag {
		w.ranks[wrank].blockedIn.Store(&info)
	}
	if w.opts.DetectDeadlock {
		wp.armed = true
		w.noteIdle()
	}
}

// fire completes wp, with the owner's lock held. The firer, not the waiter,
// takes the waiter out of the idle count, so the count never shows a rank
// as blocked once its event has happened.
func (w *world) fire(wp *waitPoint) {
	wp.fired = true
	if wp.armed {
		wp.armed = false
		w.idle.Add(-1)
	}
	if wp.ch != nil {
		close(wp.ch)
	}
}

// wait blocks until wp fires or the world aborts, without the owner's lock.
// It reports false on abort; the caller must then check wp.fired under the
// lock, since both may have happened.
func (w *world) wait(wp *waitPoint, wrank int) bool {
	ok := false
	select {
	case <-wp.ch:
		ok = true
	case <-w.abortCh:
	}
	if w.diag {
		w.ranks[wrank].blockedIn.Store(nil)
	}
	return ok
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// rankList prints ranks compactly, as in "0-3,7".
func rankList(rs []int) string {
	rs = slices.Clone(rs)
	slices.Sort(rs)
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[j])
		} else {
			fmt.Fprintf(&b, "%d", rs[i])
		}
		i = j + 1
	}
	return b.String()
}
