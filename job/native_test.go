package job

import (
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// blockingMPI is a binding whose MPI_Init does not return until released:
// a peer rank that never starts.
type blockingMPI struct {
	release chan struct{}
	aborts  int
}

func (b *blockingMPI) Start() error                         { <-b.release; return nil }
func (b *blockingMPI) World() mpi.Comm                      { return nil }
func (b *blockingMPI) Initialized() bool                    { return true }
func (b *blockingMPI) Stop() error                          { return nil }
func (b *blockingMPI) Abort(int)                            { b.aborts++ }
func (b *blockingMPI) WorldRank() int                       { return 0 }
func (b *blockingMPI) WorldSize() int                       { return 2 }
func (b *blockingMPI) Blocked() (op string, p int, in bool) { return "", -1, false }

// TestWatchdogNotBlockedByInit: while MPI_Init blocks, what the watchdog
// calls when it ends the job (live, Abort, the stall message) returns at
// once and reports no MPI, so the rank can exit; once MPI_Init returns, MPI
// is live.
func TestWatchdogNotBlockedByInit(t *testing.T) {
	native.Lock()
	mpi0, started0, err0 := native.mpi, native.started, native.err
	native.mpi, native.started, native.err = nil, false, nil
	native.Unlock()
	t.Cleanup(func() {
		native.Lock()
		native.mpi, native.started, native.err = mpi0, started0, err0
		native.Unlock()
	})
	b := &blockingMPI{release: make(chan struct{})}
	UseNative(b)
	started := make(chan error, 1)
	go func() {
		_, err := startNative()
		started <- err
	}()
	time.Sleep(20 * time.Millisecond) // startNative is inside Start
	done := make(chan string, 1)
	go func() {
		Abort(1)
		done <- stallMessage(patterns.Stall{Point: "start-up", Timeout: time.Second})
	}()
	select {
	case msg := <-done:
		if b.aborts != 0 {
			t.Errorf("Abort called MPI_Abort before MPI_Init returned")
		}
		if live() != nil {
			t.Errorf("live reports MPI while MPI_Init has not returned")
		}
		t.Logf("stall message during start-up: %s", msg)
	case <-time.After(5 * time.Second):
		close(b.release) // unblock them, so the cleanup can take the lock
		<-done
		t.Fatal("the watchdog's calls blocked behind MPI_Init")
	}
	close(b.release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if live() == nil {
		t.Error("MPI not live after MPI_Init returned")
	}
}
