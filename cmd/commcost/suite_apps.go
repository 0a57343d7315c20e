package main

import (
	"fmt"
	"io"

	"github.com/commcost/commcost/apps/appexp"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The suite's applications (runSuite): the calls into appexp, which holds
// the programs, their sizes and the measurement.

// suiteAppSweep runs paper 000's programs on every rank of c over one
// direct store (appexp.SuiteStoreSweep), writing every phase record with
// the outcome agreed and calling done after each program; the programs the
// rank count leaves out are named on stderr.
func suiteAppSweep(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error, done func(), stderr io.Writer) error {
	if _, skipped := appexp.SuiteStorePrograms(c.Size()); len(skipped) > 0 && c.Rank() == 0 {
		fmt.Fprintf(stderr, "commcost: suite: on %d ranks, not run: %v\n", c.Size(), skipped)
	}
	agreed := func(rec results.Record) error { return emitRecord(c, emit, rec) }
	return appexp.SuiteStoreSweep(c, f.reps(), suiteKKSeed, meta, agreed, done)
}

// suiteAppsMP is the suite's part for the message-passing programs of
// papers 001 and 003 (appexp.SuiteMP).
func suiteAppsMP(c mpi.Comm, reps patterns.Reps, validate bool, meta results.Meta, emit func(results.Record) error) error {
	return appexp.SuiteMP(c, reps, defaultSeed, validate, meta, emit)
}
