package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Progress of long sweeps: one line on stderr, rewritten in place, with
// the points done out of the total, the time elapsed and an estimate of
// the time left. It appears only when stderr is a terminal (a log file or
// a pipe gets nothing, so batch output stays clean), only once the sweep
// has run for progressDelay, never on stdout or in --out, and --quiet
// silences it. Rank 0 prints it.

// progressDelay is how long a sweep runs before its progress line shows:
// short sweeps print nothing.
const progressDelay = 2 * time.Second

// progressTick is how often the line is refreshed while a point runs.
const progressTick = time.Second

// isTerminal reports whether w is a terminal; a variable so tests can
// pretend.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// meter is a progress line. The zero value and nil print nothing.
type meter struct {
	w     io.Writer
	label string
	total int // points expected; 0 when unknown
	now   func() time.Time

	mu       sync.Mutex
	start    time.Time
	done     int
	lastDone time.Time // when the last point finished
	shown    bool      // a line is on the terminal
	stop     chan struct{}
	stopped  sync.WaitGroup
	once     sync.Once
}

// newMeter starts a progress line for label on w when w is a terminal
// and quiet is false, else returns nil (every method of a nil meter does
// nothing). total is the number of points, 0 when unknown.
func newMeter(w io.Writer, quiet bool, label string, total int) *meter {
	if quiet || w == nil || !isTerminal(w) {
		return nil
	}
	return startMeter(w, label, total, time.Now, progressTick)
}

// startMeter starts the refreshing goroutine (tick <= 0: none, for tests).
func startMeter(w io.Writer, label string, total int, now func() time.Time, tick time.Duration) *meter {
	m := &meter{w: w, label: label, total: total, now: now, start: now(), stop: make(chan struct{})}
	m.lastDone = m.start
	if tick > 0 {
		m.stopped.Add(1)
		go func() {
			defer m.stopped.Done()
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				select {
				case <-m.stop:
					return
				case <-t.C:
					m.mu.Lock()
					m.draw()
					m.mu.Unlock()
				}
			}
		}()
	}
	return m
}

// step records one finished point.
func (m *meter) step() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done++
	m.lastDone = m.now()
	m.draw()
}

// finish stops the refreshing and ends the line, if one was shown; calls
// after the first do nothing.
func (m *meter) finish() {
	if m == nil {
		return
	}
	m.once.Do(m.end)
}

func (m *meter) end() {
	close(m.stop)
	m.stopped.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shown {
		m.draw()
		fmt.Fprintln(m.w)
		m.shown = false
	}
}

// draw rewrites the line ("\r" and erase to the end of the line) once
// the sweep has run for progressDelay. Called with mu held.
func (m *meter) draw() {
	now := m.now()
	elapsed := now.Sub(m.start)
	if elapsed < progressDelay {
		return
	}
	line := fmt.Sprintf("%s: %d", m.label, m.done)
	if m.total > 0 {
		line += fmt.Sprintf("/%d", m.total)
	}
	line += fmt.Sprintf(" points, %s elapsed", roundDuration(elapsed))
	if left, ok := m.left(now); ok {
		line += ", about " + roundDuration(left).String() + " left"
	}
	fmt.Fprintf(m.w, "\r%s\x1b[K", line)
	m.shown = true
}

// left estimates the time to finish: the mean time per finished point
// times the points to go, less the time the current point has already
// run. It needs a total and one finished point.
func (m *meter) left(now time.Time) (time.Duration, bool) {
	if m.total <= 0 || m.done == 0 || m.done >= m.total {
		return 0, m.total > 0 && m.done >= m.total
	}
	per := m.lastDone.Sub(m.start) / time.Duration(m.done)
	left := per*time.Duration(m.total-m.done) - now.Sub(m.lastDone)
	return max(left, 0), true
}

// roundDuration rounds to what a person reads: whole seconds, or tenths
// below ten seconds.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
