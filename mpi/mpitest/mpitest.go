// Package mpitest is the conformance suite every mpi.Comm backend must pass
// (in the manner of testing/fstest): one set of cases, run against mpi/local
// in plain go test and against mpi/native under mpirun. A backend's test is
// one line: mpitest.Run(t, world) in each process of an MPI job, or
// mpitest.RunWorlds(t, sizes, local.Run) for in-process ranks.
//
// A Case is a function every rank of a communicator calls; it returns an
// error on the rank that saw something wrong. Cases are deterministic and
// valid for any communicator size from their MinRanks up (in pairwise
// cases the last rank of an odd size has no partner and returns at once). Checks that depend on timing (that Ssend or Barrier does not
// return early) can only miss a bug, never report a false one.
//
// Cases use only what MPI guarantees, so that a backend passing them behaves
// the same under every MPI library: no program relies on send buffering;
// collective sizes agree exactly on all ranks; invalid-argument cases pass
// the same invalid argument on every rank, so that an MPI library that
// checks arguments locally fails every rank and communicates nothing.
//
// A case that fails on one rank may leave its peers blocked: under mpi/local
// the world is aborted and every rank fails, under MPI the go test timeout
// ends the job.
package mpitest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// Case is one conformance check.
type Case struct {
	Name     string
	MinRanks int                    // the case is skipped on smaller communicators
	Run      func(c mpi.Comm) error // called on every rank of c
	// Needs is the optional feature the case tests (mpi.Supports); the
	// case is skipped on a backend without it. Empty for mpi.Comm itself.
	Needs mpi.Feature
}

// Cases returns the conformance cases in the order Run runs them.
func Cases() []Case {
	return []Case{
		{"RankSize", 1, rankSize, ""},
		{"Wtime", 1, wtime, ""},
		{"SendRecvSizes", 2, sendRecvSizes, ""},
		{"SendRecv64MiB", 2, sendRecv64MiB, ""},
		{"SelfMessages", 1, selfMessages, ""},
		{"Ssend", 2, ssend, ""},
		{"SendrecvRing", 1, sendrecvRing, ""},
		{"IsendIrecvWaitall", 1, isendIrecvWaitall, ""},
		{"TestPolling", 2, testPolling, ""},
		{"Waitany", 2, waitany, ""},
		{"NonOvertaking", 2, nonOvertaking, ""},
		{"NonOvertakingAnyTag", 2, nonOvertakingAnyTag, ""},
		{"NonOvertakingAnySource", 2, nonOvertakingAnySource, ""},
		{"AnySourceAnyTag", 2, anySourceAnyTag, ""},
		{"TagSelection", 2, tagSelection, ""},
		{"PostedReceiveOrder", 2, postedReceiveOrder, ""},
		{"ProbeIprobe", 2, probeIprobe, ""},
		{"RecvLargerBuffer", 2, recvLargerBuffer, ""},
		{"Truncate", 2, truncate, ""},
		{"PointToPointErrors", 1, pointToPointErrors, ""},
		{"CollectiveErrors", 1, collectiveErrors, ""},
		{"GCWithPendingRequests", 2, gcWithPendingRequests, ""},
		{"Barrier", 1, barrier, ""},
		{"Bcast", 1, bcast, ""},
		{"Gather", 1, gather, ""},
		{"Gatherv", 1, gatherv, ""},
		{"Allgather", 1, allgather, ""},
		{"Allgatherv", 1, allgatherv, ""},
		{"Scatter", 1, scatter, ""},
		{"Scatterv", 1, scatterv, ""},
		{"Alltoall", 1, alltoall, ""},
		{"Alltoallv", 1, alltoallv, ""},
		{"ReduceFloat64s", 1, reduceFloat64s, ""},
		{"ReduceInt64s", 1, reduceInt64s, ""},
		{"AllreduceFloat64s", 1, allreduceFloat64s, ""},
		{"AllreduceInt64s", 1, allreduceInt64s, ""},
		{"CollectivesIgnorePointToPoint", 2, collectivesIgnorePointToPoint, ""},
		{"Split", 1, split, ""},
		{"SplitUndefined", 2, splitUndefined, ""},
		{"Dup", 2, dup, ""},
		{"TypedReduce", 1, typedReduce, mpi.FeatureReducer},
		{"ReduceScatterBlock", 1, reduceScatterBlock, mpi.FeatureReducer},
		{"ReduceScatter", 1, reduceScatter, mpi.FeatureReducer},
		{"TypedErrors", 1, typedErrors, mpi.FeatureReducer},
		{"ReduceLocal", 1, reduceLocal, mpi.FeatureReducer},
		{"NonBlockingCollectives", 1, nonBlockingCollectives, mpi.FeatureNonBlocking},
		{"NonBlockingProgress", 2, nonBlockingProgress, mpi.FeatureNonBlocking},
		{"NonBlockingErrors", 1, nonBlockingErrors, mpi.FeatureNonBlocking},
		{"WindowPutGet", 1, windowPutGet, mpi.FeatureWindows},
		{"WindowAtomics", 1, windowAtomics, mpi.FeatureWindows},
		{"WindowErrors", 1, windowErrors, mpi.FeatureWindows},
	}
}

// Run runs every case whose MinRanks is at most c.Size() as a subtest. It is
// collective: every rank of c calls it, with its own *testing.T (under
// mpirun each process is one rank).
//
// Each case runs on a fresh Dup of c, so messages a failed case leaves
// behind cannot reach the next one. After each case the ranks agree on the
// outcome with an Allreduce on c, so a failure on any rank fails the subtest
// on every rank and no rank starts the next case before all have finished
// this one. If that agreement itself fails, the ranks may be out of step and
// Run stops.
func Run(t *testing.T, c mpi.Comm) {
	t.Helper()
	for _, tc := range Cases() {
		if c.Size() < tc.MinRanks {
			continue
		}
		if tc.Needs != "" {
			if err := mpi.Supports(c, tc.Needs); err != nil {
				t.Run(tc.Name, func(t *testing.T) { t.Skip(err) })
				continue
			}
		}
		inStep := true
		t.Run(tc.Name, func(t *testing.T) {
			failed, err, aerr := outcome(c, tc)
			if err != nil {
				t.Errorf("rank %d: %v", c.Rank(), err)
			}
			if aerr != nil {
				inStep = false
				t.Fatalf("rank %d: agreeing on the outcome: %v", c.Rank(), aerr)
			}
			if err == nil && failed > 0 {
				t.Errorf("rank %d: passed, but the case failed on %d other rank(s)", c.Rank(), failed)
			}
		})
		if !inStep {
			t.Fatalf("rank %d: stopping after %s: the ranks may be out of step", c.Rank(), tc.Name)
		}
	}
}

// outcome runs tc on every rank of c and returns the number of ranks on
// which it failed, this rank's error, and the error of the Allreduce that
// counted the failures, if any.
func outcome(c mpi.Comm, tc Case) (failed int64, caseErr, agreeErr error) {
	caseErr = runOnDup(c, tc)
	flag, sum := []int64{0}, []int64{0}
	if caseErr != nil {
		flag[0] = 1
	}
	agreeErr = c.AllreduceInt64s(flag, sum, mpi.OpSum)
	return sum[0], caseErr, agreeErr
}

// runOnDup runs tc on a duplicate of c and turns a panic into an error, so
// that the rank still joins the agreement.
func runOnDup(c mpi.Comm, tc Case) (err error) {
	d, err := c.Dup()
	if err != nil {
		return fmt.Errorf("Dup for the case: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		if ferr := d.Free(); ferr != nil && err == nil {
			err = fmt.Errorf("Free of the case's Dup: %w", ferr)
		}
	}()
	return tc.Run(d)
}

// RunWorlds runs every case as the subtest "np=N/Name" for each world size
// N in sizes that is at least the case's MinRanks, on a fresh world started
// by start, which runs fn on each of N in-process ranks and returns their
// joined errors (local.Run has this signature). One world per case means a
// failing case cannot disturb the next.
//
// Cases whose work does not grow with the size (the 64 MiB message) run at
// the first eligible size only: in one process they cost the memory of all
// their ranks and show nothing new at other sizes.
func RunWorlds(t *testing.T, sizes []int, start func(n int, fn func(c mpi.Comm) error) error) {
	t.Helper()
	ran := map[string]bool{}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("np=%d", n), func(t *testing.T) {
			for _, tc := range Cases() {
				if n < tc.MinRanks || sizeIndependent[tc.Name] && ran[tc.Name] {
					continue
				}
				ran[tc.Name] = true
				t.Run(tc.Name, func(t *testing.T) {
					var missing error
					run := func(c mpi.Comm) error {
						if tc.Needs != "" {
							if err := mpi.Supports(c, tc.Needs); err != nil {
								missing = err // the same on every rank
								return nil
							}
						}
						return tc.Run(c)
					}
					if err := start(n, run); err != nil {
						t.Fatal(err)
					}
					if missing != nil {
						t.Skip(missing)
					}
				})
			}
		})
	}
}

// sizeIndependent names the cases RunWorlds runs at one size only.
var sizeIndependent = map[string]bool{"SendRecv64MiB": true}

// checker collects a rank's check failures, so that a case keeps
// communicating after a wrong value and its peers are not left blocked.
type checker struct {
	rank   int
	errs   []error
	hidden int
}

const maxErrors = 8

func newChecker(c mpi.Comm) *checker { return &checker{rank: c.Rank()} }

func (ck *checker) errorf(format string, args ...any) {
	if len(ck.errs) == maxErrors {
		ck.hidden++
		return
	}
	ck.errs = append(ck.errs, fmt.Errorf(format, args...))
}

func (ck *checker) err() error {
	if ck.hidden > 0 {
		ck.errs = append(ck.errs, fmt.Errorf("... and %d more", ck.hidden))
	}
	return errors.Join(ck.errs...)
}

// failf is for a failed call: the case cannot go on.
func failf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// equal reports the first difference between got and want.
func (ck *checker) equal(what string, got, want []byte) {
	if string(got) == string(want) {
		return
	}
	if len(got) != len(want) {
		ck.errorf("%s: got %d bytes, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			ck.errorf("%s: byte %d of %d is %#02x, want %#02x", what, i, len(got), got[i], want[i])
			return
		}
	}
}

// status checks a receive's Status.
func (ck *checker) status(what string, got mpi.Status, source, tag, count int) {
	if got != (mpi.Status{Source: source, Tag: tag, Count: count}) {
		ck.errorf("%s: status %+v, want {Source:%d Tag:%d Count:%d}", what, got, source, tag, count)
	}
}

// class checks that err is an *mpi.Error of one of the classes.
func (ck *checker) class(what string, err error, classes ...int) {
	var e *mpi.Error
	names := make([]string, len(classes))
	for i, cl := range classes {
		names[i] = fmt.Sprint(cl)
	}
	want := strings.Join(names, " or ")
	switch {
	case err == nil:
		ck.errorf("%s: no error, want an *mpi.Error of class %s", what, want)
	case !errors.As(err, &e):
		ck.errorf("%s: error %q (%T) is not an *mpi.Error", what, err, err)
	default:
		for _, cl := range classes {
			if e.Class == cl {
				if !errors.Is(err, &mpi.Error{Class: cl}) {
					ck.errorf("%s: errors.Is does not match class %d", what, cl)
				}
				if e.Op == "" {
					ck.errorf("%s: error %q has no Op", what, err)
				}
				return
			}
		}
		ck.errorf("%s: error %q has class %d, want %s", what, err, e.Class, want)
	}
}
