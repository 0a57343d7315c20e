package native

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// boundSelfTest runs in TestMain of the thread-bound child (ThreadSingle),
// on the goroutine that called Start and so on the init thread: the calls
// commcost makes there must work, and a request posted here must survive a
// Wait refused on another thread (it is still in flight, still pinned) and
// complete when waited for here.
func boundSelfTest() error {
	c := world()
	if Provided() != ThreadSingle || c.Info().ThreadLevel != ThreadSingle.String() {
		return fmt.Errorf("provided %v (Info %q), want %v", Provided(), c.Info().ThreadLevel, ThreadSingle)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	v := []int64{1}
	if err := c.AllreduceInt64s(v, v, mpi.OpSum); err != nil || v[0] != int64(c.Size()) {
		return fmt.Errorf("Allreduce = %v, %v; want %d", v, err, c.Size())
	}
	peer, hasPeer := partner(c)
	if !hasPeer {
		return c.Barrier()
	}
	send, recv := []byte{1, 2, 3, 4, 5, 6, 7, 8}, make([]byte, 8)
	if _, err := c.PingPong(send, recv, peer, 7, 100, c.Rank() < peer); err != nil {
		return err
	}
	// A receive posted here and its message sent (8 bytes go eagerly), then
	// a Wait for it from another goroutine, which runs on another thread,
	// this one being locked. Were the Wait not refused it would complete,
	// not hang.
	in := make([]byte, 8)
	req, err := c.Irecv(in, peer, 8)
	if err != nil {
		return err
	}
	if err := c.Send(send, peer, 8); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	before := outstanding()
	werr := make(chan error)
	go func() {
		_, err := req.Wait()
		werr <- err
	}()
	if err := <-werr; !isWrongThread(err) {
		return fmt.Errorf("Wait from another thread: %v, want the wrong-thread error", err)
	}
	if outstanding() != before {
		return fmt.Errorf("a refused Wait released the request (%d outstanding, was %d)", outstanding(), before)
	}
	if _, err := req.Wait(); err != nil || in[7] != 8 {
		return fmt.Errorf("Wait on the init thread: %v, got %v", err, in)
	}
	return c.Barrier()
}

func isWrongThread(err error) bool {
	var e *mpi.Error
	return errors.As(err, &e) && e.Class == mpi.ErrOther && strings.Contains(e.Msg, "another OS thread")
}

// TestThreadBound: under ThreadSingle a goroutine other than Start's (a test
// function's, which never runs on the locked init thread) gets an error from
// every kind of call, without entering MPI, and Stop refuses to finalise
// from it. Runs in the thread-bound child only.
func TestThreadBound(t *testing.T) {
	needMPI(t)
	if Provided() >= ThreadSerialized {
		t.Skip("runs in the thread-bound child (" + levelEnv + "=single), which TestMain starts after the others")
	}
	c := world()
	buf := make([]byte, 8)
	peer := (c.Rank() + 1) % c.Size()
	calls := map[string]func() error{
		"MPI_Barrier": c.Barrier,
		"MPI_Send":    func() error { return c.Send(buf, peer, 1) },
		"MPI_Recv":    func() error { _, err := c.Recv(buf, peer, 1); return err },
		"MPI_Isend":   func() error { _, err := c.Isend(buf, peer, 1); return err },
		"MPI_Iprobe":  func() error { _, _, err := c.Iprobe(mpi.AnySource, mpi.AnyTag); return err },
		"MPI_Bcast":   func() error { return c.Bcast(buf, 0) },
		"MPI_Allreduce": func() error {
			v := []float64{1}
			return c.AllreduceFloat64s(v, v, mpi.OpSum)
		},
		"MPI_Comm_dup": func() error { _, err := c.Dup(); return err },
		"StepsBatch": func() error {
			b := mpi.Batch{Own: make([]float64, 2), Samples: make([]float64, 2), Sync: true}
			return c.StepsBatch(b, [][]byte{buf}, [][]mpi.Step{{{Op: mpi.StepBcast, Send: mpi.Span{Len: 8}}}}, 1)
		},
	}
	if c.Size() > 1 {
		calls["PingPong"] = func() error { _, err := c.PingPong(buf, buf, peer, 1, 10, true); return err }
	}
	for op, call := range calls {
		if err := call(); !isWrongThread(err) {
			t.Errorf("%s from a test goroutine under %v: %v, want the wrong-thread error", op, Provided(), err)
		} else if !strings.HasPrefix(err.(*mpi.Error).Op, op) {
			t.Errorf("error names %q, want %q", err.(*mpi.Error).Op, op)
		}
	}
	if err := Stop(); !isWrongThread(err) {
		t.Errorf("Stop from a test goroutine: %v, want the wrong-thread error", err)
	}
	if !Initialized() {
		t.Fatal("a refused Stop finalised MPI")
	}
	// Clocks are exempt.
	if t0, t1 := c.Wtime(), c.Wtime(); !(t1 >= t0 && t0 > 0) {
		t.Errorf("Wtime from another thread: %g then %g", t0, t1)
	}
}
