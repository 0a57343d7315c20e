package main

import (
	"io"
	"strconv"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Random permutations of paper 002, Table 1 (patterns.Permutations).

const (
	defaultPermSizes = "16,64,256,1K,4K,16K,64K,256K" // the columns of Table 1
)

func init() {
	register(command{Name: "permutations", Summary: "paper 002 Table 1: N random permutations of x bytes; ave, max, min, max/ave, min/ave", Run: runPermutations})
}

func runPermutations(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("permutations", stderr)
	var f patternFlags
	f.registerPattern(fs, patternSpec{name: "permutations", sync: true, seed: true, warmupReps: true,
		itersAre: "runs of the same permutation back to back", itersDef: "1"})
	sizes := fs.String("sizes", defaultPermSizes, "message sizes x: a list or LO:HI powers of two; K = 1024")
	count := fs.Int("count", patterns.DefaultPermutations, "random permutations N per size (the paper: 1000); every one is a repetition")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := f.checkPattern(fs); err != nil {
		return err
	}
	xs, err := paramSizes("sizes", *sizes, patterns.BenchPermutations)
	if err != nil {
		return err
	}
	if err := checkParamValues("count", strconv.Itoa(*count), patterns.BenchPermutations, "count", []int{*count}); err != nil {
		return err
	}
	rule := func(p int) error {
		if p < 2 {
			return usagef("permutations need at least 2 ranks, got %d (each rank sends to a different one)", p)
		}
		return nil
	}
	f.plan = func(int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, x := range xs {
			out = append(out, patterns.Permutations{Bytes: x, Count: *count, Iters: f.itersOrZero(), Seed: f.seed, Validate: f.validate, Reps: f.patternReps()})
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = f.seed
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}
