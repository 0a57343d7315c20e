package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{Name: "sched", Summary: "all-to-many scheduling (paper 002)", More: schedMore})
	register(command{Name: "sched count", Summary: "experiment 1, no MPI needed: number of permutations and scheduling time of " + strings.Join(permsched.SchedulerNames(), ", ") + " over sampled matrices (paper Table 4 and Fig. 10)", Run: runSchedCount})
	register(command{Name: "sched comm", Summary: "experiment 2, under mpirun: communication time of every schedule and of MPI_Alltoallv by message size and density, the runtime scheduling cost and their ratio (Tables 1-3, Figs. 8, 9)", Run: runSchedComm})
	register(command{Name: "sched breakeven", Summary: "experiment 3: fit the Section 5.1 constants C1, C2, C3 and print the LP/CGM break-even densities, from --in records of 'sched comm' or from a measurement run now", Run: runSchedBreakeven})
	register(command{Name: "sched gen", Summary: "write a matrix file for --matrix (" + strings.Join(permsched.GenKinds(), ", ") + ", samplesort)", Run: runSchedGen})
}

const schedMore = `Examples:
  commcost sched count --samples 300 --out runs/sched.jsonl
  mpirun -np 8 --oversubscribe --mca mpi_yield_when_idle 1 commcost sched comm --out runs/sched.jsonl
  commcost sched comm --backend local --np 32      (goroutine ranks: not network times)
  commcost sched breakeven --in runs/sched.jsonl
`

// parseIntList parses a comma list of integers in [lo, hi] for flag name.
func parseIntList(name, s string, lo, hi int) ([]int, error) {
	return parseListOf(name, s, "a comma list of integers such as 4,8,16", func(f string) (int, error) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return 0, fmt.Errorf("%s is not an integer", echo(f))
		}
		if v < lo && lo == 1 {
			return 0, fmt.Errorf("%d is not positive; the value must be an integer from 1 to %d", v, hi)
		}
		if v < lo || v > hi {
			return 0, fmt.Errorf("%d is outside %d..%d", v, lo, hi)
		}
		return v, nil
	})
}

// parseDensities parses --d: "paper" (nil: the experiment's default) or a
// comma list, each d checked against every n: 0 <= d <= n-1.
func parseDensities(s string, ns []int) ([]int, error) {
	if s == "paper" {
		return nil, nil
	}
	ds, err := parseIntList("d", s, math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d < 0 {
			return nil, usagef("--d %s: d = %d is negative; every rank sends d >= 0 messages", s, d)
		}
		for _, n := range ns {
			if d > n-1 {
				return nil, usagef("--d %s: d = %d exceeds n-1 = %d for n = %d; every rank sends to d distinct ranks, so 0 <= d <= n-1", s, d, n-1, n)
			}
		}
	}
	return ds, nil
}

// parseSchedulers parses --sched.
func parseSchedulers(s string) ([]permsched.Scheduler, error) {
	names, err := parseListOf("sched", s, "a comma list of schedulers", func(f string) (string, error) {
		sc, err := permsched.ByName(f)
		if err != nil {
			return "", err
		}
		return sc.Name(), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]permsched.Scheduler, len(names))
	for i, n := range names {
		out[i], _ = permsched.ByName(n)
	}
	return out, nil
}

// readMatrixFlag reads --matrix with --entries, as usage errors naming the
// flags (a malformed file is bad input).
func readMatrixFlag(path, entries string) (*permsched.Matrix, error) {
	kind, err := permsched.ParseEntryKind(entries)
	if err != nil {
		return nil, usagef("--entries %s: accepted values are bytes (entries are message sizes, one message per non-zero entry) and count (entries are message counts)", entries)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--matrix %s: %v", path, err)
	}
	defer f.Close()
	m, err := permsched.ReadMatrix(f, kind)
	if err != nil {
		return nil, usagef("--matrix %s: %v", path, err)
	}
	return m, nil
}

func checkGen(gen string) error {
	for _, g := range permsched.GenKinds() {
		if gen == g {
			return nil
		}
	}
	return usagef("--gen %s: accepted generators are %s", gen, strings.Join(permsched.GenKinds(), ", "))
}

// exclusive refuses flags given together with --matrix (a trace fixes n,
// d and the generator).
func exclusive(set map[string]bool, with string, names ...string) error {
	if !set[with] {
		return nil
	}
	for _, n := range names {
		if set[n] {
			return usagef("--%s and --%s exclude each other: a matrix file fixes the ranks, densities and sizes", with, n)
		}
	}
	return nil
}

func runSchedCount(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sched count", stderr)
	nFlag := fs.String("n", "32,128,512,1024", "ranks: comma list of n >= 1")
	dFlag := fs.String("d", "paper", "densities: 'paper' (Table 4's d values that fit each n) or a comma list, 0 <= d <= n-1")
	samples := fs.Int("samples", 300, "matrices sampled per (n, d), as in the paper")
	seed := fs.Uint64("seed", 1, "seed of the matrices and schedulers")
	gen := fs.String("gen", permsched.GenFig7, "matrix generator: "+strings.Join(permsched.GenKinds(), ", "))
	matrix := fs.String("matrix", "", "schedule this matrix `file` (a trace) instead of generated ones")
	entries := fs.String("entries", "bytes", "what --matrix entries are: bytes or count")
	schedList := fs.String("sched", strings.Join(permsched.SchedulerNames(), ","), "schedulers, comma list")
	cellSec := fs.Float64("cell-sec", 5, "stop sampling a scheduler in one (n, d) cell after this many seconds of its scheduling time (0: never); the record's n says how many it did")
	minSamples := fs.Int("min-samples", 30, "matrices every scheduler schedules in a cell before --cell-sec can stop it")
	out := fs.String("out", "", "append records to this JSON Lines `file`, flushed one record at a time")
	markdown := fs.Bool("markdown", false, "print markdown tables")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	set := flagsSet(fs)
	if err := exclusive(set, "matrix", "n", "d", "gen"); err != nil {
		return err
	}
	ns, err := parseIntList("n", *nFlag, 1, permsched.MaxRanks)
	if err != nil {
		return err
	}
	ds, err := parseDensities(*dFlag, ns)
	if err != nil {
		return err
	}
	if *samples < 1 {
		return mustBePositive("samples", *samples)
	}
	if err := checkGen(*gen); err != nil {
		return err
	}
	scheds, err := parseSchedulers(*schedList)
	if err != nil {
		return err
	}
	if !(*cellSec >= 0) || math.IsInf(*cellSec, 0) {
		return usagef("--cell-sec %v: must be a number of seconds >= 0", *cellSec)
	}
	if *minSamples < 1 {
		return mustBePositive("min-samples", *minSamples)
	}
	cfg := permsched.CountConfig{Ns: ns, Samples: *samples, Seed: *seed, Gen: *gen,
		Schedulers: scheds, CellSeconds: *cellSec, MinSamples: *minSamples}
	if ds != nil {
		cfg.Densities = func(int) []int { return ds }
	}
	for _, n := range ns {
		d, bytes := cfg.LargestCell(n)
		if err := checkInProcess("--n "+echo(*nFlag), fmt.Sprintf("a matrix of n = %d ranks with d = %d messages each", n, d), bytes); err != nil {
			return err
		}
	}
	if *matrix != "" {
		if cfg.Matrix, err = readMatrixFlag(*matrix, *entries); err != nil {
			return err
		}
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	jw, err := openOut(*out)
	if err != nil {
		return err
	}
	meta := results.NewMeta("none") // sequential scheduling in this process: no MPI backend
	meta.Seed = int64(*seed)
	var emit func(results.Record) error
	if jw != nil {
		emit = jw.Write
	}
	cells, slopes, err := permsched.RunCountRecords(cfg, meta, emit)
	if jw != nil {
		if cerr := jw.Close(); err == nil {
			err = cerr
		}
	}
	if len(cells) > 0 {
		if werr := permsched.WriteCountTables(stdout, cells, *markdown); err == nil {
			err = werr
		}
		permsched.WriteTimeSlopes(stdout, slopes)
	}
	return err
}

// commFlags are the flags of experiment 2, shared by sched comm and a
// measuring sched breakeven.
type commFlags struct {
	backend, dFlag, sizes, methods, gen, matrix, entries, out string
	np, matrices, warmup, minReps, maxReps                    int
	relCI, maxTime                                            float64
	seed                                                      uint64
	noPerm1, markdown, quiet, samples                         bool
}

func (f *commFlags) register(fs *flag.FlagSet, defMethods string) {
	fs.StringVar(&f.backend, "backend", backendNative, "native (system MPI, under mpirun) or local (goroutine ranks; not a network measurement)")
	fs.IntVar(&f.np, "np", 8, "ranks for --backend local")
	fs.StringVar(&f.dFlag, "d", "paper", "densities: 'paper' (4, 8, 16, 24 where d <= n-1) or a comma list, 0 <= d <= n-1")
	fs.StringVar(&f.sizes, "sizes", "16,32,128,256,1K,2K,8K,16K,32K,64K", "message sizes (Tables 2-3): a list (16,1K,64K) or LO:HI powers of two; K = 1024")
	fs.StringVar(&f.methods, "methods", defMethods, "schedulers and Alltoallv, comma list")
	fs.StringVar(&f.gen, "gen", permsched.GenFig7, "matrix generator: "+strings.Join(permsched.GenKinds(), ", "))
	fs.StringVar(&f.matrix, "matrix", "", "run this matrix `file` (a trace; n must equal the number of ranks) instead of generated ones")
	fs.StringVar(&f.entries, "entries", "bytes", "what --matrix entries are: bytes (sizes; --sizes is then ignored) or count")
	fs.IntVar(&f.matrices, "matrices", 1, "matrices per d")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the matrices and schedulers")
	fs.IntVar(&f.warmup, "warmup", patterns.DefaultWarmupReps, "untimed warm-up repetitions per point")
	fs.IntVar(&f.minReps, "min-reps", patterns.DefaultMinReps, "minimum timed repetitions per point")
	fs.IntVar(&f.maxReps, "max-reps", 200, "maximum timed repetitions per point")
	fs.Float64Var(&f.relCI, "rel-ci", patterns.DefaultRelCI, "repeat until the 95% CI of the median is within this fraction of the median")
	fs.Float64Var(&f.maxTime, "max-time", 1, "seconds of timed repetitions per point before stopping")
	fs.BoolVar(&f.noPerm1, "no-perm1", false, "skip the single-permutation times (Table 1; breakeven needs them)")
	fs.BoolVar(&f.samples, "keep-samples", false, "keep every repetition's time in the records")
	fs.StringVar(&f.out, "out", "", "append records to this JSON Lines `file`, flushed one record at a time")
	fs.BoolVar(&f.markdown, "markdown", false, "print markdown tables")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
}

// check validates everything that does not need the world; it returns the
// parsed sizes, methods and matrix (nil unless --matrix).
func (f *commFlags) check(set map[string]bool) (sizes []int, methods []string, m *permsched.Matrix, err error) {
	if f.backend != backendNative && f.backend != backendLocal {
		return nil, nil, nil, usagef("--backend %q: accepted values are native (system MPI, under mpirun) and local (goroutine ranks)", f.backend)
	}
	if f.np < 1 || f.np > 4096 {
		return nil, nil, nil, usagef("--np %d: the local backend takes 1 to 4096 ranks", f.np)
	}
	if err := exclusive(set, "matrix", "d", "gen", "matrices"); err != nil {
		return nil, nil, nil, err
	}
	if f.dFlag != "paper" {
		// Range checks against n happen once the world's size is known.
		if _, err := parseDensities(f.dFlag, nil); err != nil {
			return nil, nil, nil, err
		}
	}
	if sizes, err = parseSizes("sizes", f.sizes); err != nil {
		return nil, nil, nil, err
	}
	if methods, err = parseListOf("methods", f.methods, "a comma list of schedulers and Alltoallv", func(s string) (string, error) {
		m, err := permsched.ParseMethods(s)
		if err != nil {
			return "", err
		}
		return m[0], nil
	}); err != nil {
		return nil, nil, nil, err
	}
	if err := checkGen(f.gen); err != nil {
		return nil, nil, nil, err
	}
	if f.matrices < 1 {
		return nil, nil, nil, mustBePositive("matrices", f.matrices)
	}
	if f.warmup < 0 {
		return nil, nil, nil, mustNotBeNegative("warmup", f.warmup)
	}
	if f.minReps < 1 {
		return nil, nil, nil, mustBePositive("min-reps", f.minReps)
	}
	if f.maxReps < f.minReps {
		return nil, nil, nil, usagef("--max-reps %d: must be an integer >= --min-reps (%d)", f.maxReps, f.minReps)
	}
	if !(f.relCI > 0 && f.relCI < 1) {
		return nil, nil, nil, usagef("--rel-ci %v: the target must be a fraction in (0, 1), e.g. 0.03", f.relCI)
	}
	if !(f.maxTime > 0) || math.IsInf(f.maxTime, 0) {
		return nil, nil, nil, usagef("--max-time %v: must be a positive number of seconds", f.maxTime)
	}
	if f.matrix != "" {
		if m, err = readMatrixFlag(f.matrix, f.entries); err != nil {
			return nil, nil, nil, err
		}
	}
	return sizes, methods, m, nil
}

func (f *commFlags) reps() patterns.Reps {
	w := f.warmup
	if w == 0 {
		w = -1 // patterns: negative means none
	}
	return patterns.Reps{Warmup: w, MinReps: f.minReps, MaxReps: f.maxReps, MaxTime: f.maxTime, RelCI: f.relCI}
}

// runComm runs experiment 2 in the world and returns rank 0's records (nil
// on other ranks). Inputs that depend on the world's size (--d, --matrix)
// are checked first and agreed, and --out is opened only then, so bad input
// writes nothing.
func (f *commFlags) runComm(stdout, stderr io.Writer, sizes []int, methods []string, m *permsched.Matrix,
	after func(c mpi.Comm, meta results.Meta, recs []results.Record, jw *results.JSONLWriter) error) error {
	return withWorld(f.backend, f.np, func(c mpi.Comm) error {
		n := c.Size()
		var ds []int
		var err error
		switch {
		case m != nil && m.N() != n:
			err = usagef("--matrix %s: %v", f.matrix, &permsched.SizeError{Matrix: m.N(), Comm: n})
		case f.dFlag != "paper":
			ds, err = parseDensities(f.dFlag, []int{n})
		case m == nil && n < 2:
			hint := ""
			if c.Backend() == backendNative {
				hint = " (started without an MPI launcher? run: " + runLine(8, "sched", "comm") + ")"
			}
			err = usagef("sched comm needs at least 2 ranks, got %d%s", n, hint)
		}
		if err := agree(c, err); err != nil {
			return err
		}
		meta, err := newMeta(c)
		if err != nil {
			return err
		}
		meta.Seed = int64(f.seed)
		var jw *results.JSONLWriter
		if c.Rank() == 0 {
			jw, err = openOut(f.out)
		}
		if err := agree(c, err); err != nil {
			return err
		}
		cfg := permsched.CommConfig{Densities: ds, Sizes: sizes, Methods: methods, Gen: f.gen, Matrix: m,
			Matrices: f.matrices, Seed: f.seed, Reps: f.reps(), NoPerm1: f.noPerm1, KeepSamples: f.samples, Meta: meta}
		if c.Rank() == 0 && !f.quiet {
			cfg.Progress = stderr
			if ds == nil && m == nil {
				fmt.Fprintf(stderr, "sched comm: %d ranks, d = %v\n", n, permsched.DefaultCommDensities(n))
			}
		}
		var recs []results.Record
		err = permsched.RunComm(c, cfg, func(r results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			recs = append(recs, r)
			if jw != nil {
				return jw.Write(r)
			}
			return nil
		})
		if err == nil {
			err = after(c, meta, recs, jw)
		}
		if jw != nil {
			if cerr := jw.Close(); err == nil {
				err = cerr
			}
		}
		return err
	})
}

func runSchedComm(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sched comm", stderr)
	var f commFlags
	f.register(fs, strings.Join(permsched.DefaultMethods(), ","))
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	sizes, methods, m, err := f.check(flagsSet(fs))
	if err != nil {
		return err
	}
	return f.runComm(stdout, stderr, sizes, methods, m, func(c mpi.Comm, _ results.Meta, recs []results.Record, _ *results.JSONLWriter) error {
		if c.Rank() != 0 {
			return nil
		}
		return permsched.WriteCommTables(stdout, recs, f.markdown)
	})
}

func runSchedBreakeven(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sched breakeven", stderr)
	var f commFlags
	f.register(fs, "LP,CGM")
	in := fs.String("in", "", "fit records of 'sched comm' from these JSON Lines `files` (comma list) instead of measuring now")
	reuse := fs.Float64("reuse", 1, "times a schedule is used (scheduling cost is shared among uses; the paper assumes 1)")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	set := flagsSet(fs)
	if !(*reuse >= 1) || math.IsInf(*reuse, 0) {
		return usagef("--reuse %v: must be a number >= 1", *reuse)
	}
	if *in != "" {
		for name := range set {
			if name != "in" && name != "reuse" && name != "out" && name != "markdown" {
				return usagef("--in and --%s exclude each other: with --in the fit reads records and measures nothing", name)
			}
		}
		var recs []results.Record
		files, err := listItems("in", *in, "a comma list of JSON Lines files")
		if err != nil {
			return err
		}
		for _, p := range files {
			r, err := readRecordsFile("--in", p, stderr)
			if err != nil {
				return err
			}
			recs = append(recs, r...)
		}
		cm, err := permsched.FitCostModel(recs, *reuse)
		if err != nil {
			return usagef("--in %s: %v", *in, err)
		}
		jw, err := openOut(f.out)
		if err != nil {
			return err
		}
		return finishBreakeven(stdout, cm, recs, results.NewMeta("none"), jw, f.markdown)
	}
	sizes, methods, m, err := f.check(set)
	if err != nil {
		return err
	}
	if !containsAll(methods, "LP", "CGM") {
		return usagef("--methods %s: breakeven compares LP and CGM, so the list must include both", f.methods)
	}
	if f.noPerm1 {
		return usagef("--no-perm1: breakeven needs the single-permutation times for tau and phi")
	}
	return f.runComm(stdout, stderr, sizes, methods, m, func(c mpi.Comm, meta results.Meta, recs []results.Record, jw *results.JSONLWriter) error {
		if c.Rank() != 0 {
			return nil
		}
		if err := permsched.WriteCommTables(stdout, recs, f.markdown); err != nil {
			return err
		}
		cm, err := permsched.FitCostModel(recs, *reuse)
		if err != nil {
			return err
		}
		return finishBreakeven(stdout, cm, recs, meta, jw, f.markdown)
	})
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			return false
		}
	}
	return true
}

// finishBreakeven prints the fit and writes its records.
func finishBreakeven(stdout io.Writer, cm *permsched.CostModel, recs []results.Record, meta results.Meta, jw *results.JSONLWriter, markdown bool) error {
	var errs []error
	if jw != nil {
		for _, r := range permsched.BreakevenRecords(cm, recs, meta) {
			errs = append(errs, jw.Write(r))
		}
	}
	errs = append(errs, permsched.WriteBreakeven(stdout, cm, recs, markdown))
	return errors.Join(errs...)
}

func runSchedGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sched gen", stderr)
	gen := fs.String("gen", permsched.GenFig7, "generator: "+strings.Join(permsched.GenKinds(), ", ")+", samplesort")
	n := fs.Int("n", 16, "ranks")
	d := fs.Int("d", 4, "messages per rank, 0 <= d <= n-1 (not for samplesort)")
	keys := fs.Int("keys", 1000, "keys per rank (samplesort)")
	seed := fs.Uint64("seed", 1, "seed")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if *n < 1 || *n > permsched.MaxRanks {
		return usagef("--n %d: must be an integer in 1..%d", *n, permsched.MaxRanks)
	}
	var m *permsched.Matrix
	var err error
	if *gen == "samplesort" {
		if *keys < 1 {
			return mustBePositive("keys", *keys)
		}
		m, err = permsched.SampleSortTrace(*n, *keys, *seed)
	} else {
		if err := checkGen(*gen); err != nil {
			return usagef("--gen %s: accepted generators are %s, samplesort", *gen, strings.Join(permsched.GenKinds(), ", "))
		}
		if *d < 0 || *d > *n-1 {
			return usagef("--d %d: every rank sends to d distinct ranks, so 0 <= d <= n-1 = %d", *d, *n-1)
		}
		m, err = permsched.Generate(*gen, *n, *d, *seed)
	}
	if err != nil {
		return err
	}
	return permsched.WriteMatrix(stdout, m)
}
