package apps

import (
	"errors"
	"sync"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// Hooks through which a caller counts what an application's communication
// does, without the application knowing the strategy underneath. Paper 004
// compares data management strategies by the congestion they produce (the
// most bytes or messages one mesh link carries) as well as by time; the
// counts belong to the strategy (package divalib keeps them per store), but
// only the application knows where its measured section and its phases
// begin. The applications of paper 004 (bitonic_ms.go, barneshut.go) call
// these hooks; a caller that does not count passes nil.

// Probe is told where the program is. Enter is collective: every rank
// calls it, in the same order, right after a store barrier (for a
// message-passing program: at a point where it has sent everything of the
// section it leaves), so that what the ranks send before the call belongs
// to the section left and what they send after to the new one. Section ""
// is outside the measurement (set-up, warm-up steps, verification). Enter
// may synchronise the ranks with a plain MPI barrier, which is safe at that
// point (a store barrier leaves no access in flight, and a rank returns
// from it only after forwarding everything the barrier needs from it):
// without it, a rank still inside the preceding barrier would serve, and be
// charged for, the new section's first requests. Callers time their phases
// without the Enter calls.
type Probe interface {
	Enter(section string)
}

// Charger accounts one message of n bytes from rank from to rank to. The
// hand-optimised message-passing versions of paper 004's applications
// charge every message they send, so that their congestion is computed on
// the same virtual mesh as the strategies' (divalib.Traffic implements it).
type Charger interface {
	Charge(from, to, n int)
}

// enter calls p.Enter when there is a probe.
func enter(p Probe, section string) {
	if p != nil {
		p.Enter(section)
	}
}

// rankVars caches the global variables an application created on one
// rank's store. Create is collective and a name can be created only once
// per store, so a program run repeatedly on one store (apps.Measure)
// creates its variables on the first run and reuses them; a new store
// replaces the cache (and lets the old store be collected). The handles
// belong to one rank: an application value that caches them must not be
// shared by the goroutine ranks of mpi/local, and get reports it if it is.
type rankVars struct {
	mu    sync.Mutex
	comm  mpi.Comm
	store globalvar.Store
	vars  []globalvar.Var
}

var errSharedApp = errors.New("apps: one application value is used by two ranks; it caches its rank's variables, so create one per rank")

func (r *rankVars) get(c mpi.Comm, s globalvar.Store, create func() ([]globalvar.Var, error)) ([]globalvar.Var, error) {
	r.mu.Lock()
	if r.comm != nil && r.comm != c {
		r.mu.Unlock()
		return nil, errSharedApp
	}
	r.comm = c
	if r.store == s {
		v := r.vars
		r.mu.Unlock()
		return v, nil
	}
	r.mu.Unlock()
	v, err := create()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.store, r.vars = s, v
	r.mu.Unlock()
	return v, nil
}
