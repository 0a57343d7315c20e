// Package progress draws the progress line of a long sweep: one line,
// rewritten in place ("\r" and erase to the end of the line), with the
// points done out of the total, the time elapsed and an estimate of the
// time left. It appears only once the sweep has run for Delay, so short
// sweeps print nothing, and it is meant for a terminal's stderr only (a
// log file, a pipe, stdout or a records file should get nothing: see
// IsTerminal), on the rank that reports.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Delay is how long a sweep runs before its progress line shows:
// short sweeps print nothing.
const Delay = 2 * time.Second

// Tick is how often the line is refreshed while a point runs.
const Tick = time.Second

// IsTerminal reports whether w is a terminal (a console on Windows and
// Cygwin too): the only place a progress line belongs.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Meter is a progress line. A nil *Meter prints nothing, so a caller that
// decides against a line (not a terminal, --quiet) keeps one code path.
type Meter struct {
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

// Start starts a progress line for label on w, refreshed every Tick;
// total is the number of points, 0 when unknown. It draws whatever w is:
// whether a line belongs there (IsTerminal, a --quiet flag) is the
// caller's decision. Finish ends it.
func Start(w io.Writer, label string, total int) *Meter {
	return startMeter(w, label, total, time.Now, Tick)
}

// startMeter starts the refreshing goroutine (tick <= 0: none, for tests).
func startMeter(w io.Writer, label string, total int, now func() time.Time, tick time.Duration) *Meter {
	m := &Meter{w: w, label: label, total: total, now: now, start: now(), stop: make(chan struct{})}
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

// Step records one finished point.
func (m *Meter) Step() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done++
	m.lastDone = m.now()
	m.draw()
}

// Finish stops the refreshing and ends the line, if one was shown; calls
// after the first do nothing.
func (m *Meter) Finish() {
	if m == nil {
		return
	}
	m.once.Do(m.end)
}

func (m *Meter) end() {
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
// the sweep has run for Delay. Called with mu held.
func (m *Meter) draw() {
	now := m.now()
	elapsed := now.Sub(m.start)
	if elapsed < Delay {
		return
	}
	line := fmt.Sprintf("%s: %d", m.label, m.done)
	if m.total > 0 {
		line += fmt.Sprintf("/%d", m.total)
	}
	line += fmt.Sprintf(" points, %s elapsed", Round(elapsed))
	if left, ok := m.left(now); ok {
		line += ", about " + Round(left).String() + " left"
	}
	fmt.Fprintf(m.w, "\r%s\x1b[K", line)
	m.shown = true
}

// left estimates the time to finish: the mean time per finished point
// times the points to go, less the time the current point has already
// run. It needs a total and one finished point.
func (m *Meter) left(now time.Time) (time.Duration, bool) {
	if m.total <= 0 || m.done == 0 || m.done >= m.total {
		return 0, m.total > 0 && m.done >= m.total
	}
	per := m.lastDone.Sub(m.start) / time.Duration(m.done)
	left := per*time.Duration(m.total-m.done) - now.Sub(m.lastDone)
	return max(left, 0), true
}

// Round rounds to what a person reads: whole seconds, or tenths
// below ten seconds.
func Round(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
