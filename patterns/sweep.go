package patterns

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// The pattern registry: each pattern's file registers the sweep its
// subcommand runs (Register, from init), as database/sql registers
// drivers; the command line, README's table and the tests list the
// patterns from it (Defs) and nothing else keeps a list.
//
// A sweep is a configuration struct whose tagged fields are its flags
// (package opts: `flag:"k" default:"1,2,4,8" param:"k" usage:"..."`), with
// Validate for what needs no world and Plan for the instances on p ranks.
// The shared flags are embeddable structs: RepFlags (repetitions and
// validation), Loop (iterations and warm-up iterations of a timed loop),
// RepWarmup (warm-up repetitions), Iters (iterations of a pattern whose
// warm-up is in repetitions), SyncFlags (--sync, --resync), SeedFlag.
// A pattern offers only the ones it reads.

// Sweep is the configuration of a pattern subcommand.
type Sweep interface {
	// Plan lists the instances the sweep measures on p ranks, in order;
	// it refuses a world the configuration does not fit (bad input,
	// naming the field or the rule).
	Plan(p int) ([]Pattern, error)
}

// WorldChecker is a sweep that checks the started world before its first
// measurement, beyond the rank count Plan checks: a call the MPI library
// is known to crash in, which no error handler would report. A note, when
// not "", is what the sweep leaves out and why (shown once on stderr); an
// error refuses the run. Every rank calls it (it may be collective).
type WorldChecker interface {
	CheckWorld(c mpi.Comm) (note string, err error)
}

// Runner is a sweep that measures its plan itself (an instance derived
// from the one before: prtt's auto delay). Points is the number of records
// it writes on p ranks.
type Runner interface {
	Sweep
	Run(c mpi.Comm, meta results.Meta, measure func(p Pattern, write bool) (Measurement, error)) error
	Points(p int) int
}

// Def is a registered sweep.
type Def struct {
	Name    string // subcommand name ("kkaccess")
	Summary string // one line for usage texts and README
	// New returns a zero configuration (a pointer to the struct). Its
	// defaults are the tags' with Defaults over them (Config).
	New func() Sweep
	// Defaults overrides the default of a shared flag for this pattern:
	// "max-time": "1" (seconds per point of a slower pattern).
	Defaults map[string]string
	// Usage overrides the help of a shared flag: "iters": "round trips
	// per timed repetition (default: ...)".
	Usage map[string]string
}

var sweeps = map[string]Def{}

// Register adds a sweep; a name registered twice is a programming error.
func Register(d Def) {
	switch {
	case d.Name == "" || d.New == nil:
		panic("patterns: Register without a name or New")
	case sweeps[d.Name].Name != "":
		panic("patterns: sweep registered twice: " + d.Name)
	}
	sweeps[d.Name] = d
}

// Defs lists the registered sweeps sorted by name.
func Defs() []Def {
	out := make([]Def, 0, len(sweeps))
	for _, d := range sweeps {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the sweep registered as name.
func Lookup(name string) (Def, bool) {
	d, ok := sweeps[name]
	return d, ok
}

// RepFlags are the repetition settings every pattern sweep shares
// (docs/MEASURE.md's stopping rule) and --validate.
type RepFlags struct {
	RepLimits
	Verify bool `flag:"validate" usage:"fill and check every buffer; a mismatch is an error"`
}

// RepLimits are the repetition settings alone (MEASURE.md's stopping
// rule), for a sweep whose instances carry no check pattern and so have no
// --validate (the emulated network's).
type RepLimits struct {
	RelCI   float64 `flag:"rel-ci" default:"0.03" usage:"repeat until the 95% CI of the median is within this fraction of the median"`
	MinReps int     `flag:"min-reps" default:"10" usage:"minimum timed repetitions per point"`
	MaxReps int     `flag:"max-reps" default:"1000" usage:"maximum timed repetitions per point"`
	MaxTime float64 `flag:"max-time" default:"10" usage:"seconds of timed repetitions per point before stopping"`
}

// Check refuses settings no run could satisfy.
func (r RepLimits) Check() error {
	if !(r.RelCI > 0 && r.RelCI < 1) {
		return opts.Field("RelCI", r.RelCI, "the target must be a fraction in (0, 1), e.g. 0.03")
	}
	if r.MinReps < 1 {
		return opts.Field("MinReps", r.MinReps, "must be positive (an integer >= 1)")
	}
	if r.MinReps > MaxCount {
		return opts.Field("MinReps", r.MinReps, "must be at most %d, the most repetitions a record holds", MaxCount)
	}
	if r.MaxReps < r.MinReps {
		// Either may be the one given (the other at its default): name both.
		return opts.Conflict("MinReps", "MaxReps", "the fewest repetitions, %d, are more than the most, %d: raise {MaxReps} or lower {MinReps}", r.MinReps, r.MaxReps)
	}
	// Every repetition is a sample of the record, and a record read
	// holds at most results.MaxRecordElements of them.
	if r.MaxReps > MaxCount {
		return opts.Field("MaxReps", r.MaxReps, "must be at most %d, the most repetitions a record holds", MaxCount)
	}
	return opts.CheckSeconds("MaxTime", r.MaxTime)
}

// MaxCount bounds every count of repetitions, warm-ups, cycles, iterations
// and batches a flag sets: the most samples a record holds. Each one
// reports progress, so the watchdog never ends a run of 1e12 of them;
// the bound refuses it before anything runs.
const MaxCount = results.MaxRecordElements

// CheckCount refuses a count of field below lo or above MaxCount, naming
// what it counts ("repetitions", "V-cycles") in the reason.
func CheckCount(field string, v, lo int, what string) error {
	if v < lo {
		if lo == 0 {
			return opts.Field(field, v, "must not be negative (an integer >= 0)")
		}
		if lo == 1 {
			return opts.Field(field, v, "must be positive (an integer >= 1)")
		}
		return opts.Field(field, v, "must be an integer >= %d", lo)
	}
	if v > MaxCount {
		return opts.Field(field, v, "must be at most %d %s (every count of repetitions is bounded by the most samples a record holds)", MaxCount, what)
	}
	return nil
}

// Reps are the repetition settings of the flags.
func (r RepLimits) Reps() Reps {
	return Reps{MinReps: r.MinReps, MaxReps: r.MaxReps, MaxTime: r.MaxTime, RelCI: r.RelCI}
}

// Loop are the flags of a timed loop of iterations (the ping-pong family):
// iterations per repetition and untimed iterations before them, each the
// pattern's OSU-derived default when unset.
type Loop struct {
	Iters  opts.OptInt `flag:"iters" usage:"iterations per timed repetition (default: OSU counts / 10: 1000 up to 8K, 100 above)"`
	Warmup opts.OptInt `flag:"warmup" usage:"untimed warm-up iterations (default: OSU skip counts, 100 up to 8K, 10 above)"`
}

// Check refuses a count of iterations below 1 and a negative warm-up.
func (l Loop) Check() error {
	if l.Iters.Given && l.Iters.V < 1 {
		return opts.Field("Iters", l.Iters.V, "must be positive (an integer >= 1)")
	}
	if l.Warmup.Given && l.Warmup.V < 0 {
		return opts.Field("Warmup", l.Warmup.V, "must not be negative (an integer >= 0)")
	}
	return nil
}

// IterCount is --iters, 0 when unset (the pattern's default).
func (l Loop) IterCount() int { return l.Iters.Or(0) }

// WarmupIters is the untimed iteration count: an explicit 0 means none
// (negative for the patterns), unset the pattern's default.
func (l Loop) WarmupIters() int {
	if l.Warmup.Given && l.Warmup.V == 0 {
		return -1
	}
	return l.Warmup.Or(0)
}

// Iters is --iters of a pattern whose warm-up counts repetitions: the
// pattern's operations back to back per repetition.
type Iters struct {
	Iters opts.OptInt `flag:"iters" usage:"operations back to back per timed repetition (default: 1)"`
}

// Check refuses a count below 1.
func (i Iters) Check() error {
	if i.Iters.Given && i.Iters.V < 1 {
		return opts.Field("Iters", i.Iters.V, "must be positive (an integer >= 1)")
	}
	return nil
}

// IterCount is --iters, 0 when unset (the pattern's default).
func (i Iters) IterCount() int { return i.Iters.Or(0) }

// RepWarmup is --warmup of a pattern that warms up with whole
// repetitions.
type RepWarmup struct {
	Warmup opts.OptInt `flag:"warmup" usage:"untimed warm-up repetitions per point (default 2)"`
}

// Check refuses a negative warm-up, or one above MaxCount.
func (w RepWarmup) Check() error {
	if w.Warmup.Given {
		return CheckCount("Warmup", w.Warmup.V, 0, "warm-up repetitions")
	}
	return nil
}

// Reps is r with the warm-up repetitions: an explicit 0 means none.
func (w RepWarmup) Reps(r Reps) Reps {
	if w.Warmup.Given {
		r.Warmup = w.Warmup.V
		if r.Warmup == 0 {
			r.Warmup = -1
		}
	}
	return r
}

// SyncFlags are how repetitions start (docs/MEASURE.md "Synchronisation").
type SyncFlags struct {
	Sync   Sync          `flag:"sync" default:"barrier" usage:"start of each repetition: barrier, or window (all ranks start at an agreed time on a clock synchronised from minimum round trips)"`
	Resync opts.OptFloat `flag:"resync" value:"seconds" usage:"with --sync window: seconds between re-measurements of the clock offsets, to which a linear drift is fitted; negative: measure them once per point (offset only) (default 1)"`
}

// Check refuses a resync interval without the window start, or one that
// is zero or not finite.
func (s SyncFlags) Check() error {
	if !s.Resync.Given {
		return nil
	}
	if math.IsInf(s.Resync.V, 0) || s.Resync.V == 0 {
		return opts.Field("Resync", s.Resync.V, "want a positive number of seconds, or a negative one for offset only")
	}
	if s.Sync != SyncWindow {
		return opts.Badf("{Resync}: the clock is only synchronised with {Sync} window")
	}
	return nil
}

// Reps is r with the start mode.
func (s SyncFlags) Reps(r Reps) Reps {
	r.Sync = s.Sync
	r.ResyncSec = s.Resync.Or(DefaultResyncSec)
	return r
}

// SeedFlag is the seed of a pattern's random instances; records carry it
// in meta.seed.
type SeedFlag struct {
	Seed int64 `flag:"seed" default:"1" usage:"seed of the random instances (recorded in meta.seed)"`
}

// Check refuses the seed 0, which meta.seed uses for none.
func (s SeedFlag) Check() error {
	if s.Seed == 0 {
		return opts.Field("Seed", 0, "use a non-zero seed (meta.seed records it, and 0 there means none)")
	}
	return nil
}

// SeedOf is the seed the records carry.
func (s SeedFlag) SeedOf() int64 { return s.Seed }

// Checks runs checks in order and returns the first error.
func Checks(checks ...func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// CheckValues checks the values of field that set parameter key of bench
// against the parameter's spec, so a flag is refused by the rule that
// checks the pattern's records and predict's instances.
func CheckValues[T any](field, bench, key string, vals []T) error {
	spec, ok := Spec(bench, key)
	if !ok {
		panic("patterns: no parameter " + key + " of " + bench)
	}
	for _, v := range vals {
		if err := spec.Check(v); err != nil {
			// "k = 0: must be positive": the parameter as records name it.
			return &opts.FieldError{Field: field, Reason: err.Error()}
		}
	}
	return nil
}

// CheckRunValues is CheckValues, and then every value at most most, the
// bound a run takes that the parameter's spec leaves open for predicted
// instances (k and a of the access patterns: runBounds), said as what
// ("the send hot spot k").
func CheckRunValues(field, bench, key string, vals []int, most int, what string) error {
	if err := CheckValues(field, bench, key, vals); err != nil {
		return err
	}
	for _, v := range vals {
		if v > most {
			return &opts.FieldError{Field: field, Value: strconv.Itoa(v), Item: true, Reason: fmt.Sprintf("must be at most %d (%s of a run)", most, what)}
		}
	}
	return nil
}

// AtLeastRanks is the rule of a pattern that needs min ranks.
func AtLeastRanks(what string, min, p int, why string) error {
	if p < min {
		return opts.Badf("%s needs at least %d ranks, got %d%s", what, min, p, why)
	}
	return nil
}

// unique reports whether vals holds a value of f.
func hasAny[T any](vals []T, f func(T) bool) bool { return slices.ContainsFunc(vals, f) }

// Budget is the time budget of a point in seconds (--max-time), against
// which every instance's demand is checked before the run.
func (r RepLimits) Budget() float64 { return r.MaxTime }
