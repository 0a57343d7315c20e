// Package storetest is the conformance suite for globalvar.Store
// implementations, in the style of testing/fstest: an implementation's test
// is one call,
//
//	storetest.Run(t, local.Run, func(c mpi.Comm) (globalvar.Store, error) { return mystore.New(c) }, storetest.Options{})
//
// It runs the storecheck workloads (coherence with versioned values, torn
// reads, racing partial writes, a lock-protected counter, the error
// contract) on a world of goroutine ranks and fails on any violation.
package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// World runs fn on np ranks and returns their joined errors (local.Run).
type World func(np int, fn func(c mpi.Comm) error) error

// NewStore creates the store under test on one rank (collective).
type NewStore func(c mpi.Comm) (globalvar.Store, error)

// Options sizes the suite; zero values take the defaults.
type Options struct {
	Ranks        int   // ranks of the world (default 16)
	CoherenceOps int   // coherence operations over all ranks (default 5000)
	Seed         int64 // default 1
}

func (o *Options) defaults() {
	if o.Ranks <= 0 {
		o.Ranks = 16
	}
	if o.CoherenceOps <= 0 {
		o.CoherenceOps = 5000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// Workload is one collective check; rank 0's report is the verdict.
type Workload func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error)

// Workloads returns the suite's checks by name, sized by o.
func Workloads(o Options) []struct {
	Name string
	Run  Workload
} {
	o.defaults()
	return []struct {
		Name string
		Run  Workload
	}{
		{"Errors", storecheck.Errors},
		{"Coherence", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.Coherence(c, s, storecheck.CoherenceConfig{Ops: o.CoherenceOps, Seed: o.Seed})
		}},
		{"TornReads", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.TornReads(c, s, 200, 32, o.Seed)
		}},
		{"DisjointWrites", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.DisjointWrites(c, s, 20)
		}},
		{"LockCounter", func(c mpi.Comm, s globalvar.Store) (storecheck.Report, error) {
			return storecheck.LockCounter(c, s, 30, 3, o.Seed)
		}},
	}
}

// Run runs every workload in its own subtest, each on a fresh world and
// store, and fails the subtest on an error or a violation.
func Run(t *testing.T, world World, newStore NewStore, o Options) {
	t.Helper()
	o.defaults()
	for _, w := range Workloads(o) {
		t.Run(w.Name, func(t *testing.T) {
			rep, err := RunWorkload(world, o.Ranks, newStore, w.Run)
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d ops (%d reads, %d writes) on %d ranks", rep.Ops, rep.Reads, rep.Writes, o.Ranks)
		})
	}
}

// RunWorkload runs one workload on a fresh world with a fresh store per
// rank, closes the stores, and returns rank 0's report.
func RunWorkload(world World, np int, newStore NewStore, w Workload) (storecheck.Report, error) {
	var mu sync.Mutex
	var rep storecheck.Report
	err := world(np, func(c mpi.Comm) error {
		s, err := newStore(c)
		if err != nil {
			return err
		}
		r, err := w(c, s)
		if err != nil {
			return fmt.Errorf("rank %d: %w", c.Rank(), err)
		}
		if c.Rank() == 0 {
			mu.Lock()
			rep = r
			mu.Unlock()
		}
		return s.Close()
	})
	return rep, err
}
