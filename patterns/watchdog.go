package patterns

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The watchdog: a hung peer ends the job. A rank
// whose peer is stopped (SIGSTOP, a node that froze, a debugger) or never
// arrives waits inside MPI forever: MPI has no timeouts, and a launcher
// only notices processes that exit. Every measurement point therefore
// runs under a deadline; the rank that passes it says which point and
// what it was waiting for and ends the whole job (the caller's Expire:
// MPI_Abort in the CLI), so no allocation is held by a job that will
// never finish, and the records written before the point stay intact.
//
// A point is stuck when no repetition has completed for Timeout (the
// repetition loop of Measure reports progress after each one), or when it
// has run longer than its budget plus Timeout: the warm-up and the timed
// repetitions are each bounded by Reps.MaxTime, and Timeout is the slack
// for the repetition in flight when the budget ran out. A point whose
// repetitions are long (a ping-pong of a gigabyte) is not stuck for that:
// both limits grow with the longest gap between progress seen in the
// point (twice it for the next progress; four times it for the whole
// point, which ends after a warm-up and at least three repetitions).

// Stall describes a point past its deadline, for the message.
type Stall struct {
	Point   string        // the point, as its record would name it ("pingpong bytes=8")
	Idle    time.Duration // since the last progress
	Running time.Duration // since the point started
	Budget  time.Duration // the point's own time budget (0: none)
	Timeout time.Duration
	Slack   time.Duration // what long repetitions added to the limit broken
	Overdue bool          // the budget plus Timeout is spent (else: no progress for Timeout)
}

func (s Stall) String() string {
	slack := ""
	if s.Slack >= 100*time.Millisecond {
		slack = fmt.Sprintf(" and %.1f s for its long repetitions", s.Slack.Seconds())
	}
	if s.Overdue {
		return fmt.Sprintf("%s has run %.1f s, more than its budget of %.1f s plus --timeout %g s%s",
			s.Point, s.Running.Seconds(), s.Budget.Seconds(), s.Timeout.Seconds(), slack)
	}
	return fmt.Sprintf("%s made no progress for %.1f s (--timeout %g s%s)", s.Point, s.Idle.Seconds(), s.Timeout.Seconds(), slack)
}

// Watchdog ends stuck points. The zero value is not usable; see
// NewWatchdog. One watchdog serves a process (Install); it is safe for
// concurrent use, as the local backend's ranks are goroutines of one
// process.
type Watchdog struct {
	timeout time.Duration
	expire  func(Stall)

	mu      sync.Mutex
	depth   int // nested Begin calls (a point, then Measure inside it)
	point   string
	start   time.Time
	budget  time.Duration
	last    atomic.Int64 // unix nanoseconds of the last progress
	maxGap  atomic.Int64 // longest nanoseconds between progress in this point
	fired   bool
	span    bool // the outermost point is a Span: nested points bring no budget
	stop    chan struct{}
	stopped sync.Once
}

// NewWatchdog returns a watchdog that calls expire, once, from its own
// goroutine, when a point makes no progress for timeout or outlives its
// budget by timeout. expire is expected to end the process (it gets no
// chance to unblock the MPI call the rank is stuck in).
func NewWatchdog(timeout time.Duration, expire func(Stall)) *Watchdog {
	w := &Watchdog{timeout: timeout, expire: expire, stop: make(chan struct{})}
	go w.watch()
	return w
}

// Stop ends the watchdog's goroutine.
func (w *Watchdog) Stop() {
	w.stopped.Do(func() { close(w.stop) })
}

// watch polls a few times per timeout: the deadline moves with every
// repetition, so a timer per repetition would cost more than the polls.
func (w *Watchdog) watch() {
	tick := time.NewTicker(max(w.timeout/8, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case now := <-tick.C:
			if s, stuck := w.check(now); stuck {
				w.expire(s)
				return
			}
		}
	}
}

func (w *Watchdog) check(now time.Time) (Stall, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.depth == 0 || w.fired {
		return Stall{}, false
	}
	s := Stall{Point: w.point, Idle: now.Sub(time.Unix(0, w.last.Load())), Running: now.Sub(w.start),
		Budget: w.budget, Timeout: w.timeout}
	gap := time.Duration(w.maxGap.Load())
	switch {
	case s.Idle > w.timeout+2*gap:
		s.Slack = 2 * gap
	case w.budget > 0 && s.Running > w.budget+w.timeout+4*gap:
		s.Slack, s.Overdue = 4*gap, true
	default:
		return Stall{}, false
	}
	w.fired = true
	return s, true
}

// Begin starts a point named point with a time budget (0: only the
// progress rule applies, until a nested Begin brings one) and returns its
// end. A Begin inside another point counts as progress; with a budget
// (Measure within a pattern's point) it keeps the outer name and makes the
// point's budget last at least that long from now; without one (a step of its own, as a
// serial oracle) it adds its name to the outer one until it ends.
func (w *Watchdog) Begin(point string, budget time.Duration) (end func()) {
	if w == nil {
		return func() {}
	}
	w.mu.Lock()
	now := time.Now()
	outer, named := w.point, ""
	switch {
	case w.depth == 0:
		w.point, w.start, w.budget, w.span = point, now, budget, false
		w.maxGap.Store(0)
		w.last.Store(now.UnixNano())
	case budget == 0 && point != "" && !strings.Contains(outer, point):
		// A step of its own inside the point (gauss's serial oracle
		// inside the checks before the first measurement): a stall there
		// names both, until it ends. Goroutine ranks begin the same
		// steps side by side; the first names it.
		named = outer + "; in it, " + point
		w.point = named
	case budget > 0 && !w.span:
		// A point begun without a budget (a pattern's Run, whose
		// repetitions Measure configures) gets Measure's, counted from
		// now. A budget already set is extended to now plus this one:
		// goroutine ranks that overlap their consecutive Measures keep
		// the point from ever ending, and each Measure's own budget
		// starts when it does.
		w.budget = max(w.budget, now.Sub(w.start)+budget)
	}
	w.depth++
	w.mu.Unlock()
	w.Progress()
	return func() {
		w.mu.Lock()
		w.depth--
		if named != "" && w.point == named {
			w.point = outer
		}
		w.mu.Unlock()
	}
}

// Span starts a point that holds several points of its own (a sweep of
// patterns, each with its warm-up and the barriers between them) and
// returns its end. It has no budget, and the points inside bring none:
// the span ends the job only when it makes no progress for the timeout,
// where every nested point's begin and every repetition is progress. The
// code between the nested points (a barrier before a warm-up) is watched
// too, which it is not when the points are begun one after another.
func (w *Watchdog) Span(point string) (end func()) {
	if w == nil {
		return func() {}
	}
	end = w.Begin(point, 0)
	w.mu.Lock()
	if w.depth == 1 {
		w.span = true
	}
	w.mu.Unlock()
	return end
}

// Slice is the longest a caller should run without reporting progress: a
// quarter of the timeout, so that a healthy batch of repetitions (one call
// into C, MeasureBatch) never looks stuck; 0 without a watchdog.
func (w *Watchdog) Slice() time.Duration {
	if w == nil {
		return 0
	}
	return w.timeout / 4
}

// Progress marks that the current point moved on (a repetition ended).
func (w *Watchdog) Progress() {
	if w == nil {
		return
	}
	now := time.Now().UnixNano()
	gap := now - w.last.Swap(now)
	for {
		old := w.maxGap.Load()
		if gap <= old || w.maxGap.CompareAndSwap(old, gap) {
			return
		}
	}
}

// installed is the process's watchdog, nil for none.
var installed atomic.Pointer[Watchdog]

// Install makes w the watchdog of every Measure in this process (nil
// removes it). The CLI installs one per run; library users may leave it.
func Install(w *Watchdog) { installed.Store(w) }

// Installed returns the process's watchdog (nil if none); Begin and
// Progress on a nil watchdog do nothing.
func Installed() *Watchdog { return installed.Load() }

// measureBudget is the time a Measure call may take under cfg (with its
// defaults applied): the warm-up and the timed repetitions, each bounded
// by MaxTime.
func measureBudget(cfg Reps) time.Duration {
	return time.Duration(2 * cfg.MaxTime * float64(time.Second))
}
