package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Aggregate operations of paper 003 through the MPI collective and through
// the textbook algorithm of the paper's cost table (patterns.AggregateOp).

const (
	defaultAggOps     = "bcast,allgather,scatter,alltoall,qshift,news"
	defaultAggImpl    = "mpi,textbook"
	defaultAggSizes   = "8,1K,64K"
	defaultAggMaxTime = 0.5 // seconds per point
)

func init() {
	register(command{Name: "aggregate", Summary: "paper 003 aggregate operations (bcast ... news), MPI collective vs textbook algorithm", Run: runAggregate})
}

type aggFlags struct {
	patternFlags
	ops   []patterns.AggKind
	impls []patterns.AggImpl
	sizes []int
	root  int
	q     []int
	grid  [2]int
}

func parseAgg(args []string, stderr io.Writer) (*aggFlags, error) {
	fs := newFlagSet("aggregate", stderr)
	var f aggFlags
	f.registerPattern(fs, patternSpec{name: "aggregate", sync: true, warmupReps: true,
		itersAre: "operations back to back", itersDef: "1", maxTime: defaultAggMaxTime})
	ops := fs.String("ops", defaultAggOps, "operations: a list of bcast (one-to-all broadcast), allgather (all-to-all broadcast), scatter (one-to-all personalized), alltoall (all-to-all personalized), qshift (circular q-shift), news (NEWS shift on a 2-D torus)")
	impl := fs.String("impl", defaultAggImpl, "implementations: mpi (the library's collective), textbook (the algorithm of paper 003's cost table), or both")
	sizes := fs.String("sizes", defaultAggSizes, "message sizes m (the cost table's m): a list or LO:HI powers of two; K = 1024")
	fs.IntVar(&f.root, "root", 0, "root rank of bcast and scatter")
	q := fs.String("q", "1", "shifts q of qshift, each 1 <= q < ranks: a list")
	grid := fs.String("grid", "", "NEWS torus as ROWSxCOLS with ROWS*COLS = ranks (default: the most nearly square)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	var err error
	if f.ops, err = parseListOf("ops", *ops, "a list of "+defaultAggOps, func(v string) (patterns.AggKind, error) {
		k, err := patterns.ParseAggKind(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not an operation", v)
		}
		return k, nil
	}); err != nil {
		return nil, err
	}
	if f.impls, err = parseListOf("impl", *impl, "mpi, textbook or mpi,textbook", func(v string) (patterns.AggImpl, error) {
		i, err := patterns.ParseAggImpl(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not mpi or textbook", v)
		}
		return i, nil
	}); err != nil {
		return nil, err
	}
	if f.sizes, err = paramSizes("sizes", *sizes, patterns.BenchAggregate); err != nil {
		return nil, err
	}
	if f.root < 0 {
		return nil, usagef("--root %d: must be a rank >= 0", f.root)
	}
	if f.q, err = parseIntGrid("q", *q, 1); err != nil {
		return nil, err
	}
	if *grid != "" {
		rows, cols, ok := strings.Cut(strings.ToLower(*grid), "x")
		r, err1 := strconv.Atoi(rows)
		c, err2 := strconv.Atoi(cols)
		if !ok || err1 != nil || err2 != nil || r < 1 || c < 1 {
			return nil, usagef("--grid %s: accepted form ROWSxCOLS with positive integers, e.g. 2x4", *grid)
		}
		f.grid = [2]int{r, c}
	}
	return &f, nil
}

func (f *aggFlags) uses(k patterns.AggKind) bool {
	for _, o := range f.ops {
		if o == k {
			return true
		}
	}
	return false
}

func runAggregate(args []string, stdout, stderr io.Writer) error {
	f, err := parseAgg(args, stderr)
	if err != nil {
		return err
	}
	rule := func(p int) error {
		if (f.uses(patterns.AggBcast) || f.uses(patterns.AggScatter)) && f.root >= p {
			return usagef("--root %d: more ranks asked for than exist (ranks are 0..%d)", f.root, p-1)
		}
		if f.uses(patterns.AggQShift) {
			for _, q := range f.q {
				if q >= p {
					return usagef("--q %d: a circular q-shift needs q < ranks = %d", q, p)
				}
			}
		}
		if f.uses(patterns.AggNEWS) && f.grid != [2]int{} && f.grid[0]*f.grid[1] != p {
			return usagef("--grid %dx%d: the torus has %d places, but there are %d ranks", f.grid[0], f.grid[1], f.grid[0]*f.grid[1], p)
		}
		return nil
	}
	f.plan = func(int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, op := range f.ops {
			qs := []int{0}
			if op == patterns.AggQShift {
				qs = f.q
			}
			for _, q := range qs {
				for _, impl := range f.impls {
					for _, m := range f.sizes {
						out = append(out, patterns.AggregateOp{Op: op, Impl: impl, Bytes: m, Root: f.root, Q: q, Grid: f.grid,
							Iters: f.itersOrZero(), Validate: f.validate, Reps: f.patternReps()})
					}
				}
			}
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}
