package main

import (
	"fmt"
	"io"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The suite's applications: a small instance of each of paper 000's four
// programs on the direct store, packets of suiteAppL bytes, suiteAppK in
// flight, inside the suite's k-k-access grid (k = 1..8, l = 64..16K), so the
// trilinear fit of the run's own k-k-access records predicts their phases;
// report.md tables them against it (paper 000's Table 2).
const (
	suiteAppK       = 4
	suiteAppL       = 1024
	suiteAppMaxTime = 2.0 // seconds of repetitions per program at most
)

// suiteApps returns the configurations that run on p ranks (matmul needs p
// to divide n, connected components and bitonic sort a power of two),
// and the names of those left out.
func suiteApps(p int) (run []apps.App, skipped []string) {
	acc := apps.Access{K: suiteAppK, L: suiteAppL}
	n := (128 + p - 1) / p * p // the matrix order: 128, or the next multiple of p
	for _, a := range []apps.App{
		apps.MatMul{N: n, Access: acc, Sync: false},
		apps.MatMul{N: n, Access: acc, Sync: true},
		apps.ConnComp{N: 1024, Access: acc},
		apps.BitonicSort{N: 4096, Access: acc},
		apps.SampleSort{N: 4096, Access: acc},
	} {
		if err := a.Check(p); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", a.Name(), err))
			continue
		}
		run = append(run, a)
	}
	return run, skipped
}

// suiteAppSweep runs the suite's applications on every rank of c over one
// direct store, emitting every phase record (store "direct") and calling
// done after each program.
func suiteAppSweep(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error, done func(), stderr io.Writer) error {
	run, skipped := suiteApps(c.Size())
	if len(skipped) > 0 && c.Rank() == 0 {
		fmt.Fprintf(stderr, "commcost: suite: on %d ranks, not run: %v\n", c.Size(), skipped)
	}
	s, err := directstore.New(c, directstore.Config{})
	if err != nil {
		return err
	}
	reps := f.reps()
	reps.MaxTime = min(reps.MaxTime, suiteAppMaxTime)
	meta.Seed = suiteKKSeed
	for _, a := range run {
		recs, err := apps.Measure(apps.Env{Comm: c, Store: s, Seed: suiteKKSeed}, a, reps, meta)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			rec.Params["store"] = "direct"
			if err := emitRecord(c, emit, rec); err != nil {
				return err
			}
		}
		done()
	}
	return s.Close()
}
