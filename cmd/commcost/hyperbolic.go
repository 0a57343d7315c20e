package main

import (
	"io"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The patterns of paper 001, section 3, from which the hyperbolic model's
// blocks are measured: round trip (eq. 3), all-to-all (eqs. 4-5), pairwise
// (eqs. 8-10) and row contention (eqs. 12-14).

const (
	defaultHypSizes      = "0:1M"
	defaultAllToAllSizes = "0:256K"
	defaultHypMaxTime    = 1.0 // seconds per point
)

func init() {
	register(command{Name: "roundtrip", Summary: "paper 001 sec. 3.1: full round-trip time RTT(x) between rank 0 and a peer", Run: runRoundTrip})
	register(command{Name: "alltoall", Summary: "paper 001 sec. 3.1: every rank sends x bytes to every other, then receives all", Run: runAllToAll})
	register(command{Name: "pairwise", Summary: "paper 001 sec. 3.3: rank i <-> n+i of 2n ranks, concurrent ping-pongs", Run: runPairwise})
	register(command{Name: "rowcontention", Summary: "paper 001 sec. 3.4: rank i <-> 2n-1-i (nested pairs), concurrent ping-pongs", Run: runRowContention})
}

// hypBench is the bench of each subcommand of this file.
var hypBench = map[string]string{"roundtrip": patterns.BenchRoundTrip, "alltoall": patterns.BenchAllToAll,
	"pairwise": patterns.BenchPairwise, "rowcontention": patterns.BenchRowContention}

type hypFlags struct {
	patternFlags
	sizes []int
	peer  int
	ranks []int // alltoall: n
	pairs []int // pairwise, rowcontention: n
}

func parseHyp(name string, args []string, stderr io.Writer) (*hypFlags, error) {
	fs := newFlagSet(name, stderr)
	var f hypFlags
	spec := patternSpec{name: name, sync: true, itersAre: "round trips", itersDef: "OSU counts / 10: 1000 up to 8K, 100 above",
		maxTime: defaultHypMaxTime}
	defSizes := defaultHypSizes
	switch name {
	case "roundtrip":
		spec.sync = false
	case "alltoall":
		spec.itersAre, spec.itersDef, spec.warmupReps = "exchanges (each complete before the next)", "1", true
		defSizes = defaultAllToAllSizes
	}
	f.registerPattern(fs, spec)
	sizes := fs.String("sizes", defSizes, "message sizes x: LO:HI powers of two (0:1M) or a list (0,1K,1M); K = 1024")
	var ranks, pairs *string
	switch name {
	case "roundtrip":
		fs.IntVar(&f.peer, "peer", 0, "rank that answers rank 0 (default: the last rank, on another host under by-slot placement)")
	case "alltoall":
		ranks = fs.String("ranks", "", "numbers n of ranks taking part (the first n): a list or a power-of-two range (default: all)")
	default:
		pairs = fs.String("pairs", "", "numbers n of pairs (2n ranks take part): a list or a power-of-two range (default: ranks/2)")
	}
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	var err error
	if f.sizes, err = paramSizes("sizes", *sizes, hypBench[name]); err != nil {
		return nil, err
	}
	if f.set["peer"] && f.peer < 1 {
		return nil, usagef("--peer %d: the peer must be a rank >= 1 (rank 0 starts the round trips)", f.peer)
	}
	if ranks != nil && f.set["ranks"] { // given empty: refused, not the default
		if f.ranks, err = parseIntGrid("ranks", *ranks, 2); err != nil {
			return nil, err
		}
	}
	if pairs != nil && f.set["pairs"] {
		if f.pairs, err = parseIntGrid("pairs", *pairs, 1); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

func runRoundTrip(args []string, stdout, stderr io.Writer) error {
	f, err := parseHyp("roundtrip", args, stderr)
	if err != nil {
		return err
	}
	rule := func(p int) error {
		if p < 2 {
			return usagef("roundtrip needs at least 2 ranks, got %d", p)
		}
		if f.peer >= p {
			return usagef("--peer %d: more ranks asked for than exist (ranks are 0..%d)", f.peer, p-1)
		}
		return nil
	}
	f.plan = func(int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, x := range f.sizes {
			out = append(out, patterns.RoundTrip{Bytes: x, Peer: f.peer, Iters: f.itersOrZero(), Warmup: f.warmupIters(), Validate: f.validate, Reps: f.patternReps()})
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}

func runAllToAll(args []string, stdout, stderr io.Writer) error {
	f, err := parseHyp("alltoall", args, stderr)
	if err != nil {
		return err
	}
	rule := func(p int) error {
		if p < 2 {
			return usagef("alltoall needs at least 2 ranks, got %d", p)
		}
		for _, n := range f.ranks {
			if n > p {
				return usagef("--ranks %d: more ranks asked for than exist (%d)", n, p)
			}
		}
		return nil
	}
	f.plan = func(p int) []patterns.Pattern {
		ns := f.ranks
		if len(ns) == 0 {
			ns = []int{p}
		}
		var out []patterns.Pattern
		for _, n := range ns {
			for _, x := range f.sizes {
				out = append(out, patterns.AllToAll{Bytes: x, Ranks: n, Iters: f.itersOrZero(), Validate: f.validate, Reps: f.patternReps()})
			}
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}

func runPairwise(args []string, stdout, stderr io.Writer) error {
	return runPairs("pairwise", args, stdout, stderr)
}

func runRowContention(args []string, stdout, stderr io.Writer) error {
	return runPairs("rowcontention", args, stdout, stderr)
}

// runPairs runs pairwise or rowcontention: both need an even number of
// ranks and at most ranks/2 pairs.
func runPairs(name string, args []string, stdout, stderr io.Writer) error {
	f, err := parseHyp(name, args, stderr)
	if err != nil {
		return err
	}
	rule := func(p int) error {
		if p%2 != 0 || p < 2 {
			return usagef("%s needs an even number of ranks, got %d (every rank has a partner)", name, p)
		}
		for _, n := range f.pairs {
			if 2*n > p {
				return usagef("--pairs %d: more ranks asked for than exist (%d pairs need %d ranks, got %d)", n, n, 2*n, p)
			}
		}
		return nil
	}
	f.plan = func(p int) []patterns.Pattern {
		ns := f.pairs
		if len(ns) == 0 {
			ns = []int{p / 2}
		}
		var out []patterns.Pattern
		for _, n := range ns {
			for _, x := range f.sizes {
				var pat patterns.Pattern = patterns.Pairwise{Bytes: x, Pairs: n, Iters: f.itersOrZero(), Warmup: f.warmupIters(), Validate: f.validate, Reps: f.patternReps()}
				if name == "rowcontention" {
					pat = patterns.RowContention{Bytes: x, Pairs: n, Iters: f.itersOrZero(), Warmup: f.warmupIters(), Validate: f.validate, Reps: f.patternReps()}
				}
				out = append(out, pat)
			}
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}
