package job

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/commcost/commcost/results"
)

// Guard passes records to its writers one at a time and, once armed, ends
// a run stopped by SIGTERM or SIGINT as a runtime failure: after the
// record being written is whole it closes the writers (a table on stdout
// prints the finished points), says on stderr where the run was and where
// its finished records are, and exits 1. Only rank 0 arms it; the other
// ranks die of the signal, which mpirun forwards to every rank.
type Guard struct {
	mu      sync.Mutex
	writers []results.RecordWriter
	written int
	last    string // the bench of the last record written
	closed  bool
	release func()
}

// NewGuard is a guard over ws, not yet armed.
func NewGuard(ws ...results.RecordWriter) *Guard { return &Guard{writers: ws} }

// Write hands rec to every writer.
func (g *Guard) Write(rec results.Record) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.written++
	g.last = rec.Bench
	var errs []error
	for _, w := range g.writers {
		errs = append(errs, w.Write(rec))
	}
	return errors.Join(errs...)
}

// Close disarms the guard and closes every writer; calls after the first
// do nothing.
func (g *Guard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release != nil {
		g.release()
		g.release = nil
	}
	return g.closeLocked()
}

func (g *Guard) closeLocked() error {
	if g.closed {
		return nil
	}
	g.closed = true
	var errs []error
	for _, w := range g.writers {
		errs = append(errs, w.Close())
	}
	return errors.Join(errs...)
}

// StopNote is what an armed guard says when a signal stops its run: Label
// names the run ("pingpong", "suite"), Out the --out file ("" for none),
// Stdout whether the guard's writers print the records on stdout, Before
// runs first (the progress line ends) and Note ends the message ("no
// report was written").
type StopNote struct {
	Label  string
	Out    string
	Stdout bool
	Stderr io.Writer
	Before func()
	Note   string
}

// Arm makes the first SIGTERM or SIGINT stop the run as st says, until
// Close.
func (g *Guard) Arm(st StopNote) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			g.mu.Lock() // held until the exit: no record is cut in half
			if st.Before != nil {
				st.Before()
			}
			cerr := g.closeLocked()
			w := st.Stderr
			if w == nil {
				w = os.Stderr
			}
			msg := fmt.Sprintf("stopped by %s %s; %s", SignalName(sig), stoppedWhere(g.written, g.last), stoppedKept(g.written, st.Out, st.Stdout, cerr))
			if st.Note != "" && cerr == nil {
				msg += " (" + st.Note + ")"
			}
			fmt.Fprintf(w, "commcost: %s: %s\n", strings.TrimPrefix(st.Label, "commcost "), msg)
			os.Exit(1)
		case <-done:
		}
	}()
	g.mu.Lock()
	g.release = func() { signal.Stop(sigs); close(done) }
	g.mu.Unlock()
}

// SignalName is SIGTERM, SIGINT.
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return sig.String()
}

// stoppedWhere says where a stopped run was: before its first record, or
// after the last one written (the next may be the same bench's next
// point).
func stoppedWhere(written int, last string) string {
	if written == 0 {
		return "before its first record"
	}
	return fmt.Sprintf("after %s, in or after %s (the bench of the last)", recordCount(written), results.Printable(last))
}

// stoppedKept says where a stopped run's finished records are: the --out
// file path, else stdout when the records print there, else nowhere.
func stoppedKept(written int, path string, stdout bool, closeErr error) string {
	switch {
	case closeErr != nil:
		return fmt.Sprintf("closing the outputs failed: %v", closeErr)
	case written == 0 && path != "":
		return fmt.Sprintf("no records were finished (%s has none of this run)", path)
	case written == 0:
		return "no records were finished"
	case path == "" && stdout:
		return fmt.Sprintf("the finished %s on stdout", map[bool]string{true: "record is", false: "records are"}[written == 1])
	case path == "":
		return fmt.Sprintf("the finished %s not kept (no --out file was given)", map[bool]string{true: "record was", false: "records were"}[written == 1])
	}
	return fmt.Sprintf("the finished %s whole in %s", map[bool]string{true: "record is", false: "records are"}[written == 1], path)
}

// recordCount is "1 record", "n records".
func recordCount(n int) string {
	if n == 1 {
		return "1 record"
	}
	return fmt.Sprintf("%d records", n)
}
