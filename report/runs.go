package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	mstats "github.com/aclements/go-moremath/stats"
	"github.com/montanaflynn/stats"
	"gonum.org/v1/gonum/stat"

	"github.com/commcost/commcost/results"
)

// Input is one side of a comparison of runs: the records of one run
// directory or JSON Lines file (or of one group of them, GroupBy), under
// a label.
type Input struct {
	Label string
	// Named says the label was given (name=path) rather than taken from
	// the path.
	Named bool
	// Path is where the records came from, for messages.
	Path string
	// File is the file read: Path, or a run directory's records.jsonl.
	File    string
	Records []results.Record
	// Lines are the records' lines in File (Records[i] is on Lines[i]).
	Lines []int
}

// DefaultAlpha is the significance level of CompareRuns: benchstat's.
const DefaultAlpha = 0.05

// CompareOptions configures CompareRuns. The zero value means the
// defaults.
type CompareOptions struct {
	// Alpha is the significance level: a difference is significant when
	// the Mann-Whitney p-value is at most Alpha, as benchstat decides.
	// Zero means DefaultAlpha.
	Alpha float64
}

// RunsComparison is the comparison of several inputs against the first
// (the base), bench by bench and point by point.
type RunsComparison struct {
	Labels []string
	Alpha  float64
	// Benches are the benches (with their unit) found in at least two
	// inputs, in the order of first appearance.
	Benches []BenchComparison
	// Skipped are the benches found in one input only, which nothing is
	// compared with.
	Skipped []SkippedBench
}

// SkippedBench is a bench only one input holds.
type SkippedBench struct {
	Bench, Label string
}

// BenchComparison is one bench's table: every parameter point any input
// holds.
type BenchComparison struct {
	Bench string
	// Unit is the records' unit; a bench measured in two units gets one
	// table per unit.
	Unit string
	// ParamKeys is the union of the points' parameter names, sorted.
	ParamKeys []string
	Points    []PointComparison
	// GeoMean holds, for each input after the first, the geometric mean of
	// its ratios to the base over the points both hold.
	GeoMean []GeoMean
}

// PointComparison is one parameter point across the inputs.
type PointComparison struct {
	Params results.Params
	Ranks  int
	// Cells has one entry per input; Present is false where the input
	// lacks the point.
	Cells []Cell
	// Deltas has one entry per input after the first: that input against
	// the base at this point.
	Deltas []Delta
}

// Cell is one input's measurement of a point: the summary of its record,
// or, when the input holds the point several times (appended runs,
// several launches), the summary of all their repetitions pooled.
type Cell struct {
	Present bool
	// Records counts the records pooled, N their repetitions.
	Records, N int
	Median     float64
	// CI95 is the nonparametric 95% CI of the median of the records'
	// repetitions (results.Summarize), valid when HasCI.
	CI95  [2]float64
	HasCI bool
	// Samples are the raw repetitions, nil when some record kept none
	// (then the Median is the median of the records' medians, with no CI,
	// and no test can be run).
	Samples []float64
}

// Delta is one input against the base at one point.
type Delta struct {
	// Compared is false when either side lacks the point.
	Compared bool
	// Ratio is the input's median over the base's (1 when both are equal,
	// NaN when the base's is 0 and the input's is not).
	Ratio float64
	// Tested says the Mann-Whitney U test ran on the raw repetitions of
	// both sides; P is its two-sided p-value (1 when it could not be
	// computed, as benchstat does: all values equal).
	Tested      bool
	P           float64
	N1, N2      int
	Significant bool
	// Warnings explain a verdict that cannot be trusted (too few
	// repetitions to ever reach Alpha, no raw repetitions, a CI below 95%).
	Warnings []string
}

// GeoMean is the geometric mean of one input's ratios to the base.
type GeoMean struct {
	// Ratio is NaN when no point has a positive ratio.
	Ratio float64
	// Points counts the ratios it is taken over, out of the base's
	// points (BasePoints) and the input's (InputPoints); when they differ
	// the point sets differ and the means describe different sets.
	Points, BasePoints, InputPoints int
}

// ErrNoCommonBench is returned (wrapped) when no bench is in two inputs.
var ErrNoCommonBench = errors.New("no bench in common")

// CompareRuns compares inputs[1:] with inputs[0]. A point is a bench,
// its parameters and its rank count, named exactly as the records name
// it; every point of a bench that two inputs hold gets a row, and an
// input lacking it shows it missing (never dropped). For each input after
// the first and each point both hold:
//
//	ratio = median_input / median_base
//
// and the two-sided Mann-Whitney U test (Wilcoxon rank-sum) of their raw
// repetitions, with the exact distribution of U for small samples and the
// normal approximation with tie and continuity corrections above 50
// repetitions per side (25 with ties): the implementation benchstat uses
// (github.com/aclements/go-moremath/stats, Klotz 1966 for ties), so the
// verdicts are benchstat's. A difference is significant when p <= Alpha.
// Per bench, the geometric mean of the ratios over the points both hold
// (benchstat's geomean row when the point sets are the same).
//
// Inputs need distinct labels; records of different schema versions, or
// no bench in two inputs, are errors.
func CompareRuns(inputs []Input, opt CompareOptions) (*RunsComparison, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("compare wants at least two inputs, got %d", len(inputs))
	}
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("significance level %v: want a value in (0, 1)", alpha)
	}
	if err := checkInputs(inputs); err != nil {
		return nil, err
	}
	rc := &RunsComparison{Alpha: alpha}
	for _, in := range inputs {
		rc.Labels = append(rc.Labels, in.Label)
	}

	// Benches by (bench, unit), in order of first appearance over the
	// inputs, with the inputs holding each.
	type benchKey struct{ bench, unit string }
	var order []benchKey
	holders := map[benchKey][]int{}
	for i, in := range inputs {
		for _, r := range in.Records {
			k := benchKey{r.Bench, r.Unit}
			h, seen := holders[k]
			if !seen {
				order = append(order, k)
			}
			if len(h) == 0 || h[len(h)-1] != i {
				holders[k] = append(h, i)
			}
		}
	}
	for _, k := range order {
		h := holders[k]
		if len(h) < 2 {
			rc.Skipped = append(rc.Skipped, SkippedBench{Bench: k.bench, Label: inputs[h[0]].Label})
			continue
		}
		rc.Benches = append(rc.Benches, compareBench(inputs, k.bench, k.unit, alpha))
	}
	if len(rc.Benches) == 0 {
		var have []string
		for _, in := range inputs {
			have = append(have, fmt.Sprintf("%s has %s", in.Label, strings.Join(benchNames(in.Records), ", ")))
		}
		return nil, fmt.Errorf("%w: %s", ErrNoCommonBench, strings.Join(have, "; "))
	}
	return rc, nil
}

// checkInputs refuses empty inputs, labels used twice and mixed schema
// versions (a record's fields mean what its version says, so records of
// two versions are not comparable field by field).
func checkInputs(inputs []Input) error {
	seen := map[string]string{}
	schema, schemaOf := 0, ""
	for _, in := range inputs {
		if in.Label == "" {
			return fmt.Errorf("input %s has an empty label", in.Path)
		}
		if p, dup := seen[in.Label]; dup {
			return fmt.Errorf("label %q used twice (%s and %s); give each input its own name=path", in.Label, p, in.Path)
		}
		seen[in.Label] = in.Path
		if len(in.Records) == 0 {
			return fmt.Errorf("%s (%s) holds no records", in.Path, in.Label)
		}
		for _, r := range in.Records {
			if schema == 0 {
				schema, schemaOf = r.Schema, in.Path
			} else if r.Schema != schema {
				return fmt.Errorf("records of different schema versions: %s has schema %d, %s has schema %d; convert them first (results/README.md, Schema versions)",
					schemaOf, schema, in.Path, r.Schema)
			}
		}
	}
	return nil
}

// pointKey names a point as the records do.
func pointKey(r results.Record) string {
	return fmt.Sprintf("%s ranks=%d", ParamList(r.Params), r.Ranks)
}

func compareBench(inputs []Input, bench, unit string, alpha float64) BenchComparison {
	bc := BenchComparison{Bench: bench, Unit: unit}
	type point struct {
		params results.Params
		ranks  int
		recs   [][]results.Record // per input
	}
	var order []string
	points := map[string]*point{}
	keys := map[string]bool{}
	for i, in := range inputs {
		for _, r := range in.Records {
			if r.Bench != bench || r.Unit != unit {
				continue
			}
			k := pointKey(r)
			p, ok := points[k]
			if !ok {
				p = &point{params: r.Params, ranks: r.Ranks, recs: make([][]results.Record, len(inputs))}
				points[k] = p
				order = append(order, k)
			}
			p.recs[i] = append(p.recs[i], r)
			for pk := range r.Params {
				keys[pk] = true
			}
		}
	}
	for k := range keys {
		bc.ParamKeys = append(bc.ParamKeys, k)
	}
	sort.Strings(bc.ParamKeys)
	for _, k := range order {
		p := points[k]
		pc := PointComparison{Params: p.params, Ranks: p.ranks}
		for i := range inputs {
			pc.Cells = append(pc.Cells, poolCell(p.recs[i]))
		}
		for i := 1; i < len(inputs); i++ {
			pc.Deltas = append(pc.Deltas, compareCells(pc.Cells[0], pc.Cells[i], alpha))
		}
		bc.Points = append(bc.Points, pc)
	}
	sortPoints(bc.Points, bc.ParamKeys)
	for i := 1; i < len(inputs); i++ {
		bc.GeoMean = append(bc.GeoMean, geoMean(bc.Points, i))
	}
	return bc
}

// poolCell summarises one input's records of a point.
func poolCell(recs []results.Record) Cell {
	if len(recs) == 0 {
		return Cell{}
	}
	c := Cell{Present: true, Records: len(recs)}
	if len(recs) == 1 {
		r := recs[0]
		c.N, c.Median, c.CI95, c.HasCI = r.N, r.Median, r.CI95, r.N > 0
		if len(r.Samples) > 0 {
			c.Samples = r.Samples
		}
		return c
	}
	all := true
	var pooled, medians []float64
	for _, r := range recs {
		c.N += r.N
		medians = append(medians, r.Median)
		if len(r.Samples) == 0 {
			all = false
		}
		pooled = append(pooled, r.Samples...)
	}
	if all {
		s := results.Summarize(pooled)
		c.N, c.Median, c.CI95, c.HasCI, c.Samples = s.N, s.Median, s.CI95, s.N > 0, pooled
		return c
	}
	c.Median, _ = stats.Median(medians)
	return c
}

// compareCells is other against base at one point.
func compareCells(base, other Cell, alpha float64) Delta {
	d := Delta{Ratio: math.NaN(), P: math.NaN()}
	if !base.Present || !other.Present {
		return d
	}
	d.Compared = true
	switch {
	case base.Median == other.Median:
		d.Ratio = 1
	case base.Median != 0:
		d.Ratio = other.Median / base.Median
	}
	if base.Samples == nil || other.Samples == nil {
		d.Warnings = append(d.Warnings, "no raw repetitions in the records, so no test (records written without samples)")
		return d
	}
	d.Tested = true
	d.N1, d.N2 = len(base.Samples), len(other.Samples)
	res, err := mstats.MannWhitneyUTest(base.Samples, other.Samples, mstats.LocationDiffers)
	if err != nil {
		// benchstat reports a failed test as no difference.
		d.P = 1
		if errors.Is(err, mstats.ErrSamplesEqual) {
			d.Warnings = append(d.Warnings, "all repetitions are equal; no test")
		} else {
			d.Warnings = append(d.Warnings, "U test: "+err.Error())
		}
	} else {
		d.P = res.P
	}
	d.Significant = d.P <= alpha
	if !d.Significant {
		if minP := minUTestP(d.N1, d.N2); minP > alpha {
			d.Warnings = append(d.Warnings, fmt.Sprintf("too few repetitions to detect a difference at alpha %v: with n=%d+%d the smallest possible p is %.3f",
				alpha, d.N1, d.N2, minP))
		}
	}
	for _, c := range []Cell{base, other} {
		if c.N > 0 && c.N < results.MinCISamples {
			d.Warnings = append(d.Warnings, fmt.Sprintf("n < %d: a median's ci95 is [min, max] and covers it with less than 95%%", results.MinCISamples))
			break
		}
	}
	return d
}

// minUTestP is the smallest two-sided p-value the exact Mann-Whitney U
// test can give for samples of n1 and n2 values without ties: the two
// extreme rank orders out of C(n1+n2, n1) equally likely ones under the
// null hypothesis, 2 / C(n1+n2, n1).
func minUTestP(n1, n2 int) float64 {
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	l1, _ := math.Lgamma(float64(n1 + 1))
	l2, _ := math.Lgamma(float64(n2 + 1))
	return math.Min(1, 2*math.Exp(-(lc-l1-l2)))
}

// geoMean is the geometric mean of input i's ratios over the points both
// it and the base hold, as benchstat's geomean row: exp(mean(log ratio)).
func geoMean(points []PointComparison, i int) GeoMean {
	g := GeoMean{Ratio: math.NaN()}
	var logs []float64
	for _, p := range points {
		if p.Cells[0].Present {
			g.BasePoints++
		}
		if p.Cells[i].Present {
			g.InputPoints++
		}
		d := p.Deltas[i-1]
		if d.Compared && d.Ratio > 0 && !math.IsInf(d.Ratio, 0) {
			logs = append(logs, math.Log(d.Ratio))
		}
	}
	g.Points = len(logs)
	if len(logs) > 0 {
		g.Ratio = math.Exp(stat.Mean(logs, nil))
	}
	return g
}

// sortPoints orders points by their parameters (numbers numerically,
// keys in name order) and then ranks, so a sweep reads in order whatever
// input it first came from.
func sortPoints(points []PointComparison, keys []string) {
	sort.SliceStable(points, func(i, j int) bool {
		a, b := points[i], points[j]
		for _, k := range keys {
			if c := compareParam(a.Params[k], b.Params[k]); c != 0 {
				return c < 0
			}
		}
		return a.Ranks < b.Ranks
	})
}

// compareParam orders parameter values: absent first, then numbers by
// value, then strings and bools by their text.
func compareParam(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	switch {
	case okA && okB:
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	case okA:
		return -1
	case okB:
		return 1
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// toFloat reads a numeric parameter value.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// benchNames lists the benches of recs in order of first appearance.
func benchNames(recs []results.Record) []string {
	return benchOrder(recs)
}

// MetaKeys are the metadata fields GroupBy splits records by.
var MetaKeys = []string{"mpi_library", "hosts", "commit", "launch"}

// metaValue is a record's value of a GroupBy key ("" when unset).
func metaValue(m results.Meta, key string) string {
	switch key {
	case "mpi_library":
		return strings.TrimSpace(firstLine(m.MPILibrary))
	case "hosts":
		return strings.Join(m.Hosts, ",")
	case "commit":
		return m.Commit
	case "launch":
		return m.Launch
	}
	return ""
}

// GroupBy pools the records of inputs and splits them by a metadata
// field (one of MetaKeys): one input per distinct value, labelled with
// the value ("(none)" for records without it), so that records of, say,
// Open MPI and MPICH in one file can be compared. Groups are in order of
// first appearance, or numeric order when every value is an integer
// (launch ids). Fewer than two groups is an error: there is nothing to
// compare.
func GroupBy(inputs []Input, key string) ([]Input, error) {
	if !slices.Contains(MetaKeys, key) {
		return nil, fmt.Errorf("unknown key %q (accepted: %s)", key, strings.Join(MetaKeys, ", "))
	}
	var order []string
	groups := map[string]*Input{}
	var paths []string
	for _, in := range inputs {
		paths = append(paths, in.Path)
		for _, r := range in.Records {
			v := metaValue(r.Meta, key)
			if v == "" {
				v = "(none)"
			}
			g, ok := groups[v]
			if !ok {
				g = &Input{Label: v}
				groups[v] = g
				order = append(order, v)
			}
			g.Records = append(g.Records, r)
		}
	}
	if len(order) < 2 {
		v := "no records"
		if len(order) == 1 {
			v = fmt.Sprintf("every record has %s %s", key, order[0])
		}
		return nil, fmt.Errorf("%s: %s, so there is nothing to compare", strings.Join(paths, ", "), v)
	}
	numeric := true
	for _, v := range order {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			numeric = false
			break
		}
	}
	if numeric {
		sort.SliceStable(order, func(i, j int) bool {
			a, _ := strconv.ParseInt(order[i], 10, 64)
			b, _ := strconv.ParseInt(order[j], 10, 64)
			return a < b
		})
	}
	out := make([]Input, len(order))
	for i, v := range order {
		g := groups[v]
		g.Path = fmt.Sprintf("%s %s of %s", key, v, strings.Join(paths, ", "))
		out[i] = *g
	}
	return out, nil
}

// CompareReadFactor is compare's peak memory per byte of an input's
// records file: the records, and the per-bench groups and tables of the
// comparison (CompareRuns, compareBench). Measured: 3.6 times the file for
// 100,000 ping-pong records with the collector near its limit (GOGC=10),
// against 2.5 for the records alone.
const CompareReadFactor = 4.5

// ReadInput reads one input of a comparison. arg is a run directory (its
// records.jsonl is read), a JSON Lines file of records, or either as
// name=path to label it; an existing path is never split at '='. The
// default label is the run directory's name (for DIR/records.jsonl too)
// or the file's name without its extension. A file whose last line was
// cut off (an interrupted run) is read without that line and truncated
// is true.
func ReadInput(arg string) (in Input, truncated bool, err error) {
	label, path := "", arg
	if _, serr := os.Stat(arg); serr != nil {
		if l, p, ok := strings.Cut(arg, "="); ok {
			if l == "" {
				return Input{}, false, fmt.Errorf("%s: empty name before '='; want name=path", arg)
			}
			if p == "" {
				return Input{}, false, fmt.Errorf("%s: empty path after '='; want name=path, the path a run directory or a records file", arg)
			}
			label, path = l, p
		}
	}
	if path == "" {
		return Input{}, false, fmt.Errorf("an empty argument; want a run directory, a records file or name=path")
	}
	st, err := os.Stat(path)
	if err != nil {
		return Input{}, false, fmt.Errorf("%s: %w", path, err)
	}
	file := path
	if st.IsDir() {
		file = filepath.Join(path, results.RecordsFile)
	}
	// The one reader of every command that analyses records: a torn last
	// line (a crash in the middle of an append) costs that record only.
	recs, lines, torn, err := results.ReadRecordsFileLines(file, CompareReadFactor)
	switch {
	case err != nil:
		return Input{}, false, err
	case len(recs) == 0:
		return Input{}, false, fmt.Errorf("%s holds no records", file)
	}
	named := label != ""
	if !named {
		label = defaultLabel(path, st.IsDir())
	}
	// A label reaches every output, the CSV header among them, whose
	// writer escapes nothing: control characters are escaped here.
	label = results.Printable(label)
	return Input{Label: label, Named: named, Path: path, File: file, Records: recs, Lines: lines}, torn != nil, nil
}

// DisambiguateLabels relabels inputs whose default labels (not given as
// name=path) coincide with another input's with their path as given, so
// that two run directories of the same name on two machines stay apart.
// Labels given twice stay as they are (CompareRuns refuses them).
func DisambiguateLabels(inputs []Input) {
	count := map[string]int{}
	for _, in := range inputs {
		count[in.Label]++
	}
	for i := range inputs {
		if !inputs[i].Named && count[inputs[i].Label] > 1 {
			inputs[i].Label = inputs[i].Path
		}
	}
}

// defaultLabel names an input after its run directory or file.
func defaultLabel(path string, dir bool) string {
	clean := filepath.Clean(path)
	base := filepath.Base(clean)
	switch {
	case dir:
		if abs, err := filepath.Abs(clean); err == nil {
			return filepath.Base(abs)
		}
		return base
	case base == results.RecordsFile:
		if abs, err := filepath.Abs(clean); err == nil {
			return filepath.Base(filepath.Dir(abs))
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}
