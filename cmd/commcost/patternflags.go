package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// patternFlags are the flags of the multi-rank pattern subcommands (the
// papers' patterns) on top of measureFlags: how repetitions start, the seed
// of random instances, and what --iters and --warmup count for the pattern.
type patternFlags struct {
	measureFlags
	syncName string
	sync     patterns.Sync
	resync   float64 // --resync: seconds between clock re-synchronisations; negative never
	seed     int64
	// itersAre says what --iters counts ("" when the pattern has no
	// iterations and refuses the flag); warmupReps makes --warmup count
	// untimed repetitions instead of untimed iterations.
	itersAre   string
	warmupReps bool
}

// patternSpec describes a pattern subcommand's flag set.
type patternSpec struct {
	name       string
	sync       bool    // offer --sync barrier|window
	seed       bool    // offer --seed
	itersAre   string  // what one --iters iteration is; "" refuses --iters
	itersDef   string  // the default of --iters, for the help text
	warmupReps bool    // --warmup counts repetitions, not iterations
	maxTime    float64 // default --max-time per point, seconds (0: measureFlags')
	maxReps    int     // default --max-reps per point (0: measureFlags')
}

// defaultSeed makes runs reproducible by default; --seed changes it and the
// records carry it in meta.seed.
const defaultSeed = 1

func (f *patternFlags) registerPattern(fs *flag.FlagSet, sp patternSpec) {
	f.register(fs)
	f.itersAre, f.warmupReps = sp.itersAre, sp.warmupReps
	if sp.itersAre != "" {
		fs.Lookup("iters").Usage = fmt.Sprintf("%s per timed repetition (default: %s)", sp.itersAre, sp.itersDef)
	} else {
		fs.Lookup("iters").Usage = "not used: " + sp.name + " times one instance per repetition (use --min-reps/--max-reps)"
	}
	if sp.warmupReps {
		fs.Lookup("warmup").Usage = fmt.Sprintf("untimed warm-up repetitions per point (default %d)", patterns.DefaultWarmupReps)
	}
	if sp.maxTime > 0 {
		f.maxTime = sp.maxTime
		fs.Lookup("max-time").DefValue = strconv.FormatFloat(sp.maxTime, 'g', -1, 64)
	}
	if sp.maxReps > 0 {
		f.maxReps = sp.maxReps
		fs.Lookup("max-reps").DefValue = strconv.Itoa(sp.maxReps)
	}
	if sp.sync {
		fs.StringVar(&f.syncName, "sync", "barrier", "start of each repetition: barrier, or window (all ranks start at an agreed time on a clock synchronised from minimum round trips)")
		fs.Float64Var(&f.resync, "resync", patterns.DefaultResyncSec, "with --sync window: `seconds` between re-measurements of the clock offsets, to which a linear drift is fitted; negative: measure them once per point (offset only)")
	}
	if sp.seed {
		fs.Int64Var(&f.seed, "seed", defaultSeed, "seed of the random instances (recorded in meta.seed)")
	}
}

// checkPattern validates the shared flags after parsing.
func (f *patternFlags) checkPattern(fs *flag.FlagSet) error {
	if err := f.check(fs); err != nil {
		return err
	}
	if f.itersAre == "" && f.set["iters"] {
		return usagef("--iters: %s times one instance per repetition; set the repetitions with --min-reps and --max-reps", strings.TrimPrefix(fs.Name(), "commcost "))
	}
	if f.set["seed"] && f.seed == 0 {
		return usagef("--seed 0: use a non-zero seed (meta.seed records it, and 0 there means none)")
	}
	var err error
	if f.sync, err = patterns.ParseSync(f.syncName); err != nil {
		return usagef("--sync %s: accepted values are barrier and window", f.syncName)
	}
	switch {
	case fs.Lookup("resync") == nil:
	case math.IsNaN(f.resync) || math.IsInf(f.resync, 0) || f.resync == 0:
		return usagef("--resync %v: want a positive number of seconds, or a negative one for offset only", f.resync)
	case f.set["resync"] && f.sync != patterns.SyncWindow:
		return usagef("--resync: the clock is only synchronised with --sync window")
	}
	return nil
}

// patternReps are the repetition settings: measureFlags' plus the start
// mode, and --warmup as repetitions where the pattern counts it so.
func (f *patternFlags) patternReps() patterns.Reps {
	r := f.reps()
	r.Sync = f.sync
	r.ResyncSec = f.resync
	if f.warmupReps && f.set["warmup"] {
		r.Warmup = f.warmup
		if f.warmup == 0 {
			r.Warmup = -1
		}
	}
	return r
}

// itersOrZero is --iters when given, else 0 (the pattern's default).
func (f *patternFlags) itersOrZero() int {
	if f.set["iters"] {
		return f.iters
	}
	return 0
}

// parseListOf splits a comma list and parses every item with parse, under
// the rules of every list flag (flags.go: no empty list or item, each
// value once, in the order given); the error names the flag and the
// accepted form.
func parseListOf[T comparable](flagName, s, form string, parse func(string) (T, error)) ([]T, error) {
	items, err := listItems(flagName, s, form)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, item := range items {
		v, err := parse(item)
		if err != nil {
			return nil, usagef("--%s %s: %v; accepted form: %s", flagName, echo(s), err, form)
		}
		out = append(out, v)
	}
	if err := distinct(flagName, s, out, func(v T) string { return fmt.Sprint(v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// parseBoolGrid parses a comma list of booleans (false,true).
func parseBoolGrid(flagName, s string) ([]bool, error) {
	return parseListOf(flagName, s, "a list of false and true", func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	})
}

// rankRule is a check that needs the number of ranks; it returns a usage
// error naming the flag.
type rankRule func(p int) error

// checkRanks runs rules on the world size; agree (in runMeasured) turns a
// failure on any rank into one message and exit status 2.
func checkRanks(rules ...rankRule) func(c mpi.Comm) error {
	return func(c mpi.Comm) error {
		for _, r := range rules {
			if err := r(c.Size()); err != nil {
				if c.Size() == 1 && c.Backend() == backendNative {
					return usagef("%v (started without an MPI launcher? run: %s)", err, runLine(4, "..."))
				}
				return err
			}
		}
		return nil
	}
}

// emitRecord writes rec and agrees on the outcome: writing happens on rank
// 0 only, so if rank 0 cannot write, every rank stops (one message) instead
// of the others waiting in the next point.
func emitRecord(c mpi.Comm, emit func(results.Record) error, rec results.Record) error {
	return agree(c, emit(rec))
}

func patternErr(err error) error { return job.PatternErr(err) }

// checkParamValues checks every value of a list flag against the pattern
// parameter it sets (patterns.Spec): a flag is refused by the same code
// that checks the pattern's records and predict's instances, in the same
// words.
func checkParamValues[T any](flagName, s, bench, key string, vals []T) error {
	spec, ok := patterns.Spec(bench, key)
	if !ok {
		panic("commcost: no parameter " + key + " of " + bench)
	}
	for _, v := range vals {
		if err := spec.Check(v); err != nil {
			return usagef("--%s %s: %v", flagName, echo(s), err)
		}
	}
	return nil
}

// paramGrid parses a grid flag (parseIntGrid) that sets parameter key of
// bench, checked by the parameter's spec.
func paramGrid(flagName, s, bench, key string) ([]int, error) {
	v, err := parseIntGrid(flagName, s, math.MinInt)
	if err != nil {
		return nil, err
	}
	return v, checkParamValues(flagName, s, bench, key, v)
}

// paramFloats parses a list of numbers that sets parameter key of bench.
func paramFloats(flagName, s, bench, key string) ([]float64, error) {
	v, err := parseFloatList(flagName, s, func(float64) bool { return true }, "")
	if err != nil {
		return nil, err
	}
	return v, checkParamValues(flagName, s, bench, key, v)
}

// paramSizes parses a --sizes flag (parseSizes) whose values are bench's
// parameter bytes.
func paramSizes(flagName, s, bench string) ([]int, error) {
	v, err := parseSizes(flagName, s)
	if err != nil {
		return nil, err
	}
	return v, checkParamValues(flagName, s, bench, "bytes", v)
}
