package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The global-variable access patterns of paper 000: the k-k-access
// (Definition 2, section 4) and the k-access with receive hot spot and
// asynchrony (section 5).

// Defaults: a bare run gives a grid the trilinear model can be fitted to
// (two or more levels of k, l and r) in well under a minute on 4 ranks;
// the full sweep of the suite is --k 1,2,4,8 --l 64:16K --r 0.25,0.5,0.75,1.
const (
	defaultKKK       = "1,2,4,8"
	defaultKKL       = "64,1K,16K"
	defaultKKR       = "0.25,0.5,1"
	defaultKKOp      = "read"
	defaultKKMaxTime = 1.0 // seconds per point

	defaultKAK       = "1,4"
	defaultKAL       = "256" // paper 000, Figures 9-11
	defaultKAH       = "1/p,0.5,1"
	defaultKAA       = "1,4"
	defaultKAES      = "false,true"
	defaultKAMaxTime = 1.0
)

func init() {
	register(command{Name: "kkaccess", Summary: "k-k-access of paper 000 (Def. 2): k packets of l bytes per accessing rank, portion r", Run: runKKAccess})
	register(command{Name: "kaccess", Summary: "k-access of paper 000 (sec. 5): receive hot spot h, a accesses between syncs, es", Run: runKAccess})
}

// accessGrid is the grid of send hot spots k, packet sizes l and access
// kinds that both access patterns sweep.
type accessGrid struct {
	k, l               []int
	ops                []patterns.AccessOp
	kArg, lArg, opsArg *string
}

func (g *accessGrid) register(fs *flag.FlagSet, kDefault, kHelp, lDefault, lHelp string) {
	g.kArg = fs.String("k", kDefault, kHelp)
	g.lArg = fs.String("l", lDefault, lHelp)
	g.opsArg = fs.String("op", defaultKKOp, "access kinds: read (the l bytes come back), write (they are stored, an ack comes back), or read,write")
}

func (g *accessGrid) parse(bench string) error {
	var err error
	if g.k, err = paramGrid("k", *g.kArg, bench, "k"); err != nil {
		return err
	}
	if g.l, err = paramGrid("l", *g.lArg, bench, "l"); err != nil {
		return err
	}
	g.ops, err = parseAccessOps(*g.opsArg)
	return err
}

type kkFlags struct {
	patternFlags
	accessGrid
	r        []float64
	a        []int
	distinct bool
	block    bool
	self     bool
}

func parseAccessOps(s string) ([]patterns.AccessOp, error) {
	return parseListOf("op", s, "read, write or read,write", func(v string) (patterns.AccessOp, error) {
		op, err := patterns.ParseAccessOp(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not read or write", v)
		}
		return op, nil
	})
}

func parseKK(args []string, stderr io.Writer) (*kkFlags, error) {
	fs := newFlagSet("kkaccess", stderr)
	var f kkFlags
	f.registerPattern(fs, patternSpec{name: "kkaccess", sync: true, seed: true, warmupReps: true, maxTime: defaultKKMaxTime})
	f.accessGrid.register(fs, defaultKKK, "send hot spots k (packets per accessing rank): a list (1,2,4,8) or a power-of-two range (1:8)",
		defaultKKL, "packet sizes l in bytes: a list (64,1K,16K) or a power-of-two range (64:16K); K = 1024")
	r := fs.String("r", defaultKKR, "portions r of accessing ranks, each in (0, 1]: a list (0.25,0.5,0.75,1); r p is rounded to whole ranks (at least 1), and records carry the realised r")
	fs.BoolVar(&f.distinct, "distinct", false, "each rank's k targets are distinct ranks (paper 000, section 7); needs k <= ranks-1")
	fs.BoolVar(&f.self, "self", false, "let a rank access its own memory through MPI (off: targets are derangements)")
	fs.BoolVar(&f.block, "block", false, "each rank sends all k packets of an access to one rank (one permutation per access, used for every packet): a block of k l bytes on one home, as the direct store keeps a variable; off: the paper's k independent permutations")
	a := fs.String("a", "1", "k-k-accesses back to back per repetition (a list or a power-of-two range); a record is the time of one, and a list with a > 1 records param a: 1 is paper 000's single access after a barrier, more is how a program reads a large block (ceil(D/(k l)) accesses in a row)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	if err := f.accessGrid.parse(patterns.BenchKKAccess); err != nil {
		return nil, err
	}
	if f.block && f.distinct {
		return nil, usagef("--block and --distinct exclude each other: --block sends a rank's k packets to one rank, --distinct to k different ones")
	}
	var err error
	if f.r, err = paramFloats("r", *r, patterns.BenchKKAccess, "r"); err != nil {
		return nil, err
	}
	if f.a, err = paramGrid("a", *a, patterns.BenchKKAccess, "a"); err != nil {
		return nil, err
	}
	return &f, nil
}

func runKKAccess(args []string, stdout, stderr io.Writer) error {
	f, err := parseKK(args, stderr)
	if err != nil {
		return err
	}
	maxK := 0
	for _, k := range f.k {
		maxK = max(maxK, k)
	}
	rules := []rankRule{func(p int) error {
		if p < 2 && !f.self {
			return usagef("kkaccess needs at least 2 ranks, got %d (a rank does not access itself unless --self)", p)
		}
		return nil
	}}
	if f.distinct {
		rules = append(rules, func(p int) error {
			most := p - 1
			if f.self {
				most = p
			}
			if maxK > most {
				return usagef("--k %d with --distinct: more targets asked for than ranks exist (%d distinct targets per rank with %d ranks)", maxK, most, p)
			}
			return nil
		})
	}
	// Records carry param a only when --a asks for more than one access
	// (then every record of the run, a = 1 too, so a CSV's columns hold);
	// a run of a = 1 alone writes paper 000's records as before --a.
	recordA := slices.ContainsFunc(f.a, func(a int) bool { return a > 1 })
	f.plan = func(int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, op := range f.ops {
			for _, k := range f.k {
				for _, l := range f.l {
					for _, r := range f.r {
						for _, a := range f.a {
							if !recordA {
								a = 0
							}
							// The record's r is the portion that accessed (r p
							// rounded to whole ranks); the asked r is a counter.
							out = append(out, patterns.KKAccess{K: k, L: l, R: r, Op: op, Distinct: f.distinct, Self: f.self, Block: f.block, A: a,
								Seed: f.seed, Validate: f.validate, Reps: f.patternReps()})
						}
					}
				}
			}
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rules...), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = f.seed
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}

type kaFlags struct {
	patternFlags
	accessGrid
	a  []int
	h  []hotSpec
	es []bool
}

// hotSpec is one --h value: a number, or "1/p" (no hot spot, whatever p).
type hotSpec struct {
	v     float64
	perP  bool
	input string
}

// String is the value as the lists print it.
func (h hotSpec) String() string { return h.input }

func (h hotSpec) value(p int) float64 {
	if h.perP {
		return 1 / float64(p)
	}
	return h.v
}

func parseHot(s string) ([]hotSpec, error) {
	return parseListOf("h", s, "a list of numbers in [1/p, 1], where 1/p may be written as is (1/p,0.5,1)", func(v string) (hotSpec, error) {
		if strings.EqualFold(v, "1/p") {
			return hotSpec{perP: true, input: "1/p"}, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return hotSpec{}, fmt.Errorf("%q is not a number", v)
		}
		if !(x > 0 && x <= 1) {
			return hotSpec{}, fmt.Errorf("%v is outside [1/p, 1]", x)
		}
		// The canonical spelling, so 0.5 and .5 are one value.
		return hotSpec{v: x, input: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	})
}

func parseKA(args []string, stderr io.Writer) (*kaFlags, error) {
	fs := newFlagSet("kaccess", stderr)
	var f kaFlags
	f.registerPattern(fs, patternSpec{name: "kaccess", sync: true, seed: true, warmupReps: true, maxTime: defaultKAMaxTime})
	f.accessGrid.register(fs, defaultKAK, "send hot spots k (packets per rank and k-access): a list or a power-of-two range",
		defaultKAL, "packet sizes l in bytes: a list or a power-of-two range; K = 1024")
	h := fs.String("h", defaultKAH, "receive hot spots h in [1/p, 1]: the portion of ranks addressing one module in a step; 1/p is none")
	a := fs.String("a", defaultKAA, "k-accesses between synchronisations a (asynchrony): a list or a power-of-two range")
	es := fs.String("es", defaultKAES, "same hot spots in all a k-accesses (the paper's \"es\" curves): false, true or false,true (true is skipped for a = 1)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	if err := f.accessGrid.parse(patterns.BenchKAccess); err != nil {
		return nil, err
	}
	var err error
	if f.a, err = paramGrid("a", *a, patterns.BenchKAccess, "a"); err != nil {
		return nil, err
	}
	if f.h, err = parseHot(*h); err != nil {
		return nil, err
	}
	if f.es, err = parseBoolGrid("es", *es); err != nil {
		return nil, err
	}
	return &f, nil
}

func runKAccess(args []string, stdout, stderr io.Writer) error {
	f, err := parseKA(args, stderr)
	if err != nil {
		return err
	}
	hRule := func(p int) error {
		for _, h := range f.h {
			if v := h.value(p); v < 1/float64(p)-1e-9 {
				return usagef("--h %s: h must be in [1/p, 1] = [%.4g, 1] with %d ranks", h.input, 1/float64(p), p)
			}
		}
		return nil
	}
	f.plan = func(p int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, op := range f.ops {
			for _, k := range f.k {
				for _, l := range f.l {
					for _, h := range f.h {
						for _, a := range f.a {
							for _, es := range f.es {
								if es && a == 1 && slices.Contains(f.es, false) {
									continue // one k-access: the same with and without es
								}
								// The record's h is the realised hot spot H/p; the
								// asked one is a counter.
								out = append(out, patterns.KAccess{K: k, L: l, H: h.value(p), A: a, ES: es, Op: op,
									Seed: f.seed, Validate: f.validate, Reps: f.patternReps()})
							}
						}
					}
				}
			}
		}
		return out
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(hRule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		meta.Seed = f.seed
		return measurePoints(c, emit, f.plan(c.Size()), meta)
	})
}
