package results

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// writerLabel is what the writers of one bench put in a record's
// aggregate and stop fields: how a repetition's value is formed from the
// ranks' (how says which setting gives which, for the message) and why
// the repetitions stopped.
type writerLabel struct {
	aggregates []string
	how        string
	stops      []string
}

// The stops of the adaptive repetition loop (patterns.Measure and
// MeasureBatch, apps.Measure): the CI target, the repetition cap or the
// time cap, whichever comes first.
var adaptiveStops = []string{StopRelCI, StopMaxReps, StopMaxTime}

// writerLabels are, by bench, the aggregates and stops its writers
// produce. The patterns reduce a repetition to rank 0's time or the
// maximum over ranks (patterns.Reps.Reduction); those that take --sync
// window time the latest end on the synchronised clock instead. The
// libraries that build their own records (divalib, apps/dsmexp, replay,
// permsched's counts and fits) name theirs. A bench not listed (a Go
// benchmark's, a hand-made one) is not checked, and a field left out (a
// record written before the fields existed) passes.
var writerLabels = map[string]writerLabel{
	// patterns: rank 0 times the two-party loop, no --sync.
	"pingpong":  {[]string{ReductionRank0}, "", adaptiveStops},
	"bandwidth": {[]string{ReductionRank0}, "", adaptiveStops},
	"bibw":      {[]string{ReductionRank0}, "", adaptiveStops},
	"onesided":  {[]string{ReductionRank0}, "", adaptiveStops},
	"roundtrip": {[]string{ReductionRank0}, "", adaptiveStops},
	"prtt":      {[]string{ReductionRank0, ReductionMaxOverRanks}, " (the client's rank 0, the server's max-over-ranks)", adaptiveStops},
	// patterns: the maximum over ranks, no --sync.
	"collective":  {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"nonblocking": {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"multilat":    {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"mbwmr":       {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"reducelocal": {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"gridshift":   {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	// patterns and the emulated network: the maximum over ranks, or
	// the latest end under --sync window. Permutations run exactly
	// --count permutations unless the time cap comes first.
	"alltoall":      {maxOrWindow, syncWindow, adaptiveStops},
	"pairwise":      {maxOrWindow, syncWindow, adaptiveStops},
	"rowcontention": {maxOrWindow, syncWindow, adaptiveStops},
	"aggregate":     {maxOrWindow, syncWindow, adaptiveStops},
	"kkaccess":      {maxOrWindow, syncWindow, adaptiveStops},
	"kaccess":       {maxOrWindow, syncWindow, adaptiveStops},
	"packetsplit":   {maxOrWindow, syncWindow, adaptiveStops},
	"optimize":      {maxOrWindow, syncWindow, adaptiveStops},
	"permutations":  {maxOrWindow, syncWindow, append([]string{StopFixed}, adaptiveStops...)},
	// Application phases: the maximum over ranks of each phase.
	BenchApp: {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	// DIVA (divalib, apps/dsmexp): a check is one run timed on rank 0's
	// wall clock; the overhead's cached accesses are rank 0's own, its
	// barriers and remote reads the maximum over ranks; the programs
	// run --reps repetitions unless --max-time comes first.
	"dsm-check":     {[]string{ReductionRank0Wall}, "", []string{StopFixed}},
	"dsm-overhead":  {[]string{ReductionRank0, ReductionMaxOverRanks}, " (rank 0 for the cached accesses, max-over-ranks for the barriers and remote reads)", []string{StopFixed}},
	"dsm-matsquare": {[]string{ReductionMaxOverRanks}, "", []string{StopFixed, StopMaxTime}},
	"dsm-bitonic":   {[]string{ReductionMaxOverRanks}, "", []string{StopFixed, StopMaxTime}},
	"dsm-barneshut": {[]string{ReductionMaxOverRanks}, "", []string{StopFixed, StopMaxTime}},
	// A replayed trace: the slowest rank's time, one replay.
	"replay": {[]string{ReductionMaxOverRanks}, "", []string{StopFixed}},
	// Scheduling (permsched): the exchanges and the runtime scheduling
	// are measured as a pattern is; the counts and the fits are no
	// reduction over ranks, so they leave the aggregate out.
	"sched.comm":      {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"sched.schedule":  {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"sched.perm1":     {[]string{ReductionMaxOverRanks}, "", adaptiveStops},
	"sched.maxdeg":    {nil, "", []string{StopFixed}},
	"sched.perms":     {nil, "", []string{StopFixed}},
	"sched.time":      {nil, "", []string{StopFixed}},
	"sched.slope":     {nil, "", []string{StopFixed}},
	"sched.costfit":   {nil, "", []string{StopFixed}},
	"sched.breakeven": {nil, "", []string{StopFixed}},
}

var maxOrWindow = []string{ReductionMaxOverRanks, ReductionWindowLatestEnd}

const syncWindow = " (--sync window)"

// WriterLabels reports the aggregates and stops the writers of bench
// produce, and whether bench is one writerLabels knows.
func WriterLabels(bench string) (aggregates, stops []string, ok bool) {
	l, ok := writerLabels[bench]
	return slices.Clone(l.aggregates), slices.Clone(l.stops), ok
}

// checkWriterLabels refuses an aggregate or a stop that no writer of the
// record's bench produces (writerLabels); one left out passes.
func (r *Record) checkWriterLabels() error {
	l, ok := writerLabels[r.Bench]
	if !ok {
		return checkBenchName(r.Bench)
	}
	if err := r.checkRankMax(); err != nil {
		return err
	}
	if r.Reduction != "" && !slices.Contains(l.aggregates, r.Reduction) {
		if len(l.aggregates) == 0 {
			return fmt.Errorf("aggregate %q: %s %s record is no reduction over ranks, its writer leaves the aggregate out", r.Reduction, article(r.Bench), r.Bench)
		}
		if len(l.aggregates) == 1 {
			return fmt.Errorf("aggregate %q: %s %s record's samples are always %s", r.Reduction, article(r.Bench), r.Bench, l.aggregates[0])
		}
		return fmt.Errorf("aggregate %q: %s %s record's samples are %s%s", r.Reduction, article(r.Bench), r.Bench, strings.Join(l.aggregates, " or "), l.how)
	}
	if r.Stop != "" && !slices.Contains(l.stops, r.Stop) {
		return fmt.Errorf("stop %q: %s %s record's repetitions stop on %s", r.Stop, article(r.Bench), r.Bench, strings.Join(l.stops, " or "))
	}
	return nil
}

// article is the indefinite article before a bench name.
func article(bench string) string {
	if bench != "" && strings.ContainsRune("aeio", rune(bench[0])) {
		return "an"
	}
	return "a"
}

// benchNameRE is the form of every bench name commcost writes: lower-case
// words joined by '.', '-' or '_'.
var benchNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*([._-][a-z0-9]+)*$`)

// checkBenchName refuses a bench no writer writes when it is not of the
// form bench names have (a path, a control character, capitals), or when
// it differs from a bench a writer writes only in case or punctuation: a
// misspelling that compare and fit would take for another bench. Other
// names pass: a newer writer's bench stays readable.
func checkBenchName(bench string) error {
	fold := func(s string) string {
		return strings.Map(func(c rune) rune {
			if c == '.' || c == '-' || c == '_' || c == ' ' {
				return -1
			}
			return unicode.ToLower(c)
		}, s)
	}
	for _, known := range slices.Sorted(maps.Keys(writerLabels)) {
		if fold(bench) == fold(known) {
			return fmt.Errorf("bench \"%s\": commcost's writers spell it %q", Printable(clip(bench, 40)), known)
		}
	}
	if !benchNameRE.MatchString(bench) {
		return fmt.Errorf("bench \"%s\": a bench name is lower-case words joined by '.', '-' or '_' (e.g. pingpong, sched.comm, dsm-check)", Printable(clip(bench, 40)))
	}
	return nil
}

// checkRankMax: in a record of seconds whose samples are the slowest
// rank's time of each repetition (max-over-ranks, or the latest end of a
// window all ranks start in), with none dropped, every rank's own time of
// a repetition is at most its sample, so no rank's statistic of its own
// times (rank_max) is above the slowest repetition.
func (r *Record) checkRankMax() error {
	if r.Unit != UnitSeconds || r.Dropped != 0 || r.RankMax == 0 ||
		(r.Reduction != ReductionMaxOverRanks && r.Reduction != ReductionWindowLatestEnd) {
		return nil
	}
	if r.RankMax > r.Max*(1+1e-9) {
		return fmt.Errorf("rank_max = %v s is above max = %v s: in a %s record a rank's own time of a repetition is at most its sample", r.RankMax, r.Max, r.Reduction)
	}
	return nil
}
