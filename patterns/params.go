package patterns

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The physical range of every record parameter. One
// table per bench says which parameters a pattern's instances have and
// which values they may take; the same specs check the CLI's flags of the
// pattern, an instance given to 'commcost predict', an application's
// workload items and every record read or written (registered with
// results.RegisterParamCheck), so a size of -5 bytes, k = 0 or r = 5 is
// refused the same way wherever it comes from.

// ParamKind is the type of a parameter's values.
type ParamKind int

const (
	ParamInt    ParamKind = iota // a whole number
	ParamReal                    // a finite number
	ParamBool                    // true or false
	ParamString                  // one of Values
)

// ParamSpec is one record parameter of a pattern.
type ParamSpec struct {
	Key  string
	Kind ParamKind
	// Min and Max bound numbers; MinOpen excludes Min itself (r in
	// (0, 1]); NoMax leaves the top open.
	Min, Max float64
	MinOpen  bool
	NoMax    bool
	Values   []string // ParamString: the accepted values
	Unit     string   // for messages: "bytes", "s", or "" for counts
	// Optional parameters appear in some records only (the realised
	// distinct, self and block of a k-k-access, the network of an emulated
	// one).
	Optional bool
}

// maxBytes is the largest message a parameter in bytes may name: one MPI
// call carries at most mpi.MaxCount bytes.
const maxBytes = mpi.MaxCount

var (
	specBytes = ParamSpec{Key: "bytes", Kind: ParamInt, Min: 0, Max: maxBytes, Unit: "bytes"}
	// specRateBytes: a bandwidth moves at least one byte (0 bytes is no
	// rate; OSU's bandwidth tests start at 1).
	specRateBytes = ParamSpec{Key: "bytes", Kind: ParamInt, Min: 1, Max: maxBytes, Unit: "bytes"}
	specIters     = ParamSpec{Key: "iters", Kind: ParamInt, Min: 1, NoMax: true, Optional: true}
	specOp        = ParamSpec{Key: "op", Kind: ParamString, Values: []string{"read", "write"}}
	specNet       = ParamSpec{Key: "network", Kind: ParamString, Optional: true}
	specK         = ParamSpec{Key: "k", Kind: ParamInt, Min: 1, NoMax: true}
	specL         = ParamSpec{Key: "l", Kind: ParamInt, Min: 0, Max: maxBytes, Unit: "bytes"}
	specPairs     = ParamSpec{Key: "pairs", Kind: ParamInt, Min: 1, NoMax: true}
)

// BenchChainShift names a chain shift point in workloads (see its specs in
// benchParams).
const BenchChainShift = "chainshift"

// benchParams are the parameters of each bench of this package.
var benchParams = map[string][]ParamSpec{
	BenchPingPong:      {specBytes, specIters},
	BenchBandwidth:     {specRateBytes, {Key: "window", Kind: ParamInt, Min: 1, Max: 1 << 20}, specIters},
	BenchRoundTrip:     {specBytes},
	BenchAllToAll:      {specBytes},
	BenchPairwise:      {specBytes},
	BenchRowContention: {specBytes},
	BenchKKAccess: {specK, specL,
		{Key: "r", Kind: ParamReal, Min: 0, MinOpen: true, Max: 1},
		specOp,
		{Key: "distinct", Kind: ParamBool, Optional: true},
		{Key: "self", Kind: ParamBool, Optional: true},
		{Key: "block", Kind: ParamBool, Optional: true},
		{Key: "a", Kind: ParamInt, Min: 1, Max: maxAccessIndex, Optional: true},
		specNet},
	BenchKAccess: {specK, specL,
		{Key: "h", Kind: ParamReal, Min: 0, MinOpen: true, Max: 1},
		{Key: "a", Kind: ParamInt, Min: 1, NoMax: true},
		{Key: "es", Kind: ParamBool},
		specOp, specNet},
	BenchPRTT: {specBytes,
		{Key: "n", Kind: ParamInt, Min: 1, Max: mpi.MaxCount},
		{Key: "delay_s", Kind: ParamReal, Min: 0, NoMax: true, Unit: "s"},
		{Key: "side", Kind: ParamString, Values: []string{"client", "server"}, Optional: true}},
	BenchPermutations: {specBytes, {Key: "count", Kind: ParamInt, Min: 1, Max: results.MaxRecordElements, Optional: true}}, // a sample per permutation
	BenchGridShift: {specBytes,
		{Key: "rows", Kind: ParamInt, Min: 1, NoMax: true},
		{Key: "cols", Kind: ParamInt, Min: 1, NoMax: true},
		{Key: "along", Kind: ParamString, Values: []string{GridAlongRow, GridAlongCol, GridAlongBoth}},
		{Key: "mode", Kind: ParamString, Values: []string{GridModeShift, GridModeXOR, GridModeAlign}},
		{Key: "d", Kind: ParamInt, Min: 0, NoMax: true}},
	BenchCollective: {
		{Key: "op", Kind: ParamString, Values: collOpNames()},
		specBytes,
		{Key: "type", Kind: ParamString, Values: collTypeNames()},
		{Key: "reduction", Kind: ParamString, Values: []string{"sum", "min", "max", collNoReduction}},
		{Key: "root", Kind: ParamInt, Min: 0, NoMax: true},
		specIters,
		{Key: "alg", Kind: ParamString, Values: collAlgNames(), Optional: true}},
	BenchNonBlocking: {
		{Key: "op", Kind: ParamString, Values: nbOpNames()},
		specBytes,
		{Key: "type", Kind: ParamString, Values: collTypeNames()},
		{Key: "reduction", Kind: ParamString, Values: []string{"sum", "min", "max", collNoReduction}},
		{Key: "root", Kind: ParamInt, Min: 0, NoMax: true},
		{Key: "probes", Kind: ParamInt, Min: 0, Max: MaxCount}},
	BenchOneSided: {
		{Key: "op", Kind: ParamString, Values: rmaOpNames()},
		{Key: "mode", Kind: ParamString, Values: rmaModeNames},
		{Key: "sync", Kind: ParamString, Values: rmaSyncNames},
		specBytes,
		{Key: "window", Kind: ParamInt, Min: 1, Max: 1 << 20},
		{Key: "type", Kind: ParamString, Values: collTypeNames()},
		specIters},
	BenchReduceLocal: {specBytes,
		{Key: "type", Kind: ParamString, Values: collTypeNames()},
		{Key: "reduction", Kind: ParamString, Values: []string{"sum", "min", "max"}},
		specIters},
	BenchBibw:           {specRateBytes, {Key: "window", Kind: ParamInt, Min: 1, Max: 1 << 20}, specIters},
	BenchMultiBandwidth: {specRateBytes, {Key: "window", Kind: ParamInt, Min: 1, Max: 1 << 20}, specPairs, specIters},
	BenchMultiLatency:   {specBytes, specPairs, specIters},
	// A chain shift (Stoica, Sultan and Keyes, the hyperbolic model's
	// Table 1): rank i sends bytes to i+1 on ranks = n. A workload point
	// no pattern measures, named by the programs whose exchange it is
	// (multigrid's) and priced by the hyperbolic model.
	BenchChainShift: {specBytes},
	BenchAggregate: {
		{Key: "op", Kind: ParamString, Values: aggNames[:]},
		{Key: "impl", Kind: ParamString, Values: implNames, Optional: true},
		specBytes,
		{Key: "q", Kind: ParamInt, Min: 0, NoMax: true, Optional: true},
		{Key: "neighbors", Kind: ParamInt, Min: 0, NoMax: true, Optional: true},
		{Key: "root", Kind: ParamInt, Min: 0, NoMax: true, Optional: true}},
}

// checksRegistered registers the checks of benchParams' benches during
// the package's variable initialisation, before any init function: a
// pattern's RegisterBench (from its file's init) comes after them.
var checksRegistered = func() bool {
	for bench := range benchParams {
		results.RegisterParamCheck(bench, func(p results.Params) error { return recordParams(bench, p) })
		results.RegisterRecordCheck(bench, func(r *results.Record) error { return checkRecord(bench, r) })
		results.RegisterItemCheck(bench, func(it results.WorkItem) error { return checkItem(bench, it) })
	}
	return true
}()

// checkItem is the rank check of a workload item of bench that names its
// ranks: the rank count the bench's runs have and the relations of its
// parameters to it (relationChecks; a PRTT's time floor is a record's,
// not an item's).
func checkItem(bench string, it results.WorkItem) error {
	if it.Ranks == 0 {
		if pairOnly(bench) {
			return nil // the pair, as a model prices it
		}
		return fmt.Errorf("ranks = 0: %s items name the ranks they run on (at least %d); only a pair's point leaves them out", bench, minRanks(bench))
	}
	return checkRelations(bench, &results.Record{Bench: bench, Params: it.Params, Ranks: it.Ranks})
}

// checkRelations is what a record and a workload item of bench share: a
// rank count its runs have, and its parameters' relations to it.
func checkRelations(bench string, r *results.Record) error {
	if min := minRanks(bench); r.Ranks < min {
		return fmt.Errorf("ranks = %d: %s runs on at least %d ranks", r.Ranks, bench, min)
	}
	if pairOnly(bench) && r.Ranks != 2 {
		return fmt.Errorf("ranks = %d: %s runs on exactly 2 ranks (its record's ranks are the pair's, whatever the launch)", r.Ranks, bench)
	}
	if f := relationChecks[bench]; f != nil {
		return f(r)
	}
	return nil
}

// minRanks is the least rank count of a bench's instances: two parties
// for a message, a collective or an access to another rank; one for the
// rest (a local reduction, a k-access of the rank's own variable).
func minRanks(bench string) int {
	switch bench {
	case BenchPingPong, BenchRoundTrip, BenchPRTT, BenchBibw, BenchBandwidth, BenchMultiLatency,
		BenchMultiBandwidth, BenchCollective, BenchNonBlocking, BenchKKAccess, BenchPermutations,
		BenchAllToAll, BenchPairwise, BenchOneSided, BenchChainShift:
		return 2
	}
	return 1
}

// pairOnly reports whether bench's records are of one pair of ranks: the
// point-to-point tests run on exactly two (their Plan and Run refuse
// more), and prtt and roundtrip record the pair they time.
func pairOnly(bench string) bool {
	switch bench {
	case BenchPingPong, BenchBandwidth, BenchBibw, BenchOneSided, BenchPRTT, BenchRoundTrip:
		return true
	}
	return false
}

// checkRecord is the record check of a pattern's records: every
// parameter its writer always writes (missingParams), a rank count the
// pattern can run on, a collective's algorithm one of its op's, a network
// the run could have emulated (RegisterNetworkCheck), a time that is
// positive (a pattern always communicates or computes: a median of 0 s is
// no measurement, and a fit or a ratio would divide by it), and the unit,
// derived values and counters its pattern writes (checkValues), after its
// parameters are ones a run on its ranks could have (relationChecks).
func checkRecord(bench string, r *results.Record) error {
	if err := missingParams(bench, r); err != nil {
		return err
	}
	if err := checkRelations(bench, r); err != nil {
		return err
	}
	if err := runBounds(bench, r); err != nil {
		return err
	}
	if err := recordAlg(bench, r); err != nil {
		return err
	}
	if err := checkNetwork(r); err != nil {
		return err
	}
	if r.Unit == results.UnitSeconds && !(r.Median > 0) {
		return fmt.Errorf("median %v s is not positive: a %s instance takes time", r.Median, bench)
	}
	return checkValues(bench, r)
}

// missingParams refuses a record without a parameter its bench's writer
// always writes (every spec not Optional): such a record is no run's, and
// the readers that need the parameter (fit, predict's comparisons) would
// refuse it where the others read it. Predicted instances and workload
// items may leave parameters out (CheckParams does not ask for them).
func missingParams(bench string, r *results.Record) error {
	specs := benchParams[bench]
	for _, s := range specs {
		if _, ok := r.Params[s.Key]; !ok && !s.Optional {
			return fmt.Errorf("has no parameter %s (%s)", s.Key, paramsText(bench, specs))
		}
	}
	return nil
}

// paramsText says which parameters bench's records have: "pingpong
// records have bytes, and may have iters".
func paramsText(bench string, specs []ParamSpec) string {
	var must, may []string
	for _, s := range specs {
		if s.Optional {
			may = append(may, s.Key)
		} else {
			must = append(must, s.Key)
		}
	}
	text := fmt.Sprintf("%s records have %s", bench, strings.Join(must, ", "))
	if len(may) > 0 {
		text += ", and may have " + strings.Join(may, ", ")
	}
	return text
}

// recordAlg: a collective record's algorithm is one its op has
// (CollAlgorithms); the spec's values are every op's, for the instances
// and items that are checked by the spec alone.
func recordAlg(bench string, r *results.Record) error {
	alg, ok := r.Params["alg"].(string)
	name, _ := r.Params["op"].(string)
	if bench != BenchCollective || !ok {
		return nil
	}
	op, err := mpi.ParseCollOp(name)
	if err != nil {
		return nil
	}
	if algs := CollAlgorithms(op); !slices.Contains(algs, alg) {
		return fmt.Errorf("alg = %q: %s runs one of %s (Open MPI's coll/tuned and MPICH's algorithms)", alg, name, strings.Join(algs, ", "))
	}
	return nil
}

// networkCheck is the check of a record's "network" parameter, the
// emulated service network it ran on (or the store an application's
// calibration measured, which the check tells apart), registered by the
// package that emulates networks (RegisterNetworkCheck); this package
// cannot parse a network itself, since that package imports it.
var (
	networkCheckMu sync.Mutex
	networkCheck   func(network string, r *results.Record, must bool) error
)

// RegisterNetworkCheck makes check the check of every record of this
// package's benches that has a "network" parameter: an emulated network
// parses, and the record's ranks and derived values are ones a run on it
// has. With must, the name is a network's or refused (an application's
// emulated store, CheckStoreNetwork); without, a name that is not
// written as a network's is a calibration's store and passes. It is meant
// for the emulating package's init; registering twice is a programming
// error (panic).
func RegisterNetworkCheck(check func(network string, r *results.Record, must bool) error) {
	networkCheckMu.Lock()
	defer networkCheckMu.Unlock()
	if networkCheck != nil {
		panic("patterns: network check registered twice")
	}
	networkCheck = check
}

// checkNetwork applies the registered network check to a record that
// names a network (none registered: the network is not checked).
func checkNetwork(r *results.Record) error {
	net, ok := r.Params["network"].(string)
	if !ok {
		return nil
	}
	networkCheckMu.Lock()
	check := networkCheck
	networkCheckMu.Unlock()
	if check == nil {
		return nil
	}
	return check(net, r, false)
}

// CheckStoreNetwork checks an application record's store that no store
// family names as the emulated network it must then be: one that parses,
// of the record's ranks. Without a registered check (no package that
// emulates linked in) the name is refused: nothing could have run on it.
func CheckStoreNetwork(network string, r *results.Record) error {
	networkCheckMu.Lock()
	check := networkCheck
	networkCheckMu.Unlock()
	if check == nil {
		return fmt.Errorf("%q is no network this build emulates", network)
	}
	return check(network, r, true)
}

// RegisterBench adds the parameter specs of a bench (from the init of the
// pattern's own file), so its flags, predict's instances and every record
// read or written are checked by them; a bench registered twice is a
// programming error.
func RegisterBench(bench string, specs ...ParamSpec) {
	if _, dup := benchParams[bench]; dup {
		panic("patterns: bench registered twice: " + bench)
	}
	benchParams[bench] = specs
	results.RegisterParamCheck(bench, func(p results.Params) error { return recordParams(bench, p) })
	results.RegisterRecordCheck(bench, func(r *results.Record) error { return checkRecord(bench, r) })
	results.RegisterItemCheck(bench, func(it results.WorkItem) error { return checkItem(bench, it) })
}

// Shared parameter specs, for the patterns' RegisterBench: a message size,
// a count of iterations per repetition, an access op.
var (
	SpecBytes = specBytes
	SpecIters = specIters
	SpecOp    = specOp
)

// Spec returns the spec of parameter key of bench, or false.
func Spec(bench, key string) (ParamSpec, bool) {
	for _, s := range benchParams[bench] {
		if s.Key == key {
			return s, true
		}
	}
	return ParamSpec{}, false
}

// SpecsOf returns the parameter specs of bench (nil for a bench this
// package does not own).
func SpecsOf(bench string) []ParamSpec { return benchParams[bench] }

// CheckParams checks the parameters of an instance of bench: each known
// parameter must be of its kind and within its range. With strict, an
// unknown parameter is an error too (an instance typed by a user, where a
// misspelt key would otherwise be ignored); records are checked by
// recordParams, which refuses one too. A bench without specs passes.
func CheckParams(bench string, p results.Params, strict bool) error {
	specs, ok := benchParams[bench]
	if !ok {
		return nil
	}
	for _, k := range sortedKeys(p) {
		i := slices.IndexFunc(specs, func(s ParamSpec) bool { return s.Key == k })
		if i < 0 {
			if strict {
				return fmt.Errorf("%s has no parameter %q (its parameters: %s)", bench, k, keyList(specs))
			}
			continue
		}
		if err := specs[i].Check(p[k]); err != nil {
			return err
		}
	}
	return nil
}

// recordParams is the parameter check of bench's records and workload
// items (results.RegisterParamCheck): CheckParams, and no parameter its
// specs do not name (UnknownParams).
func recordParams(bench string, p results.Params) error {
	if err := CheckParams(bench, p, false); err != nil {
		return err
	}
	return UnknownParams(bench, p, benchParams[bench])
}

// UnknownParams refuses the first parameter of p (in key order) that no
// spec of specs names: a record or a workload item of bench carries the
// parameters its writer writes, and a key no writer writes (a misspelt
// or hand-added one) would be shown, grouped by and compared as if it
// were one. The readers of records apply it through their benches'
// registered checks, so fit, compare, report, sched breakeven and app
// table refuse such a record as predict refuses such an instance.
func UnknownParams(bench string, p results.Params, specs ...[]ParamSpec) error {
	var all []ParamSpec
	for _, s := range specs {
		all = append(all, s...)
	}
	for _, k := range sortedKeys(p) {
		if !slices.ContainsFunc(all, func(s ParamSpec) bool { return s.Key == k }) {
			return fmt.Errorf("%s = %s: %s records have no parameter %s (theirs: %s)", results.Printable(k), show(p[k]), bench, results.Printable(k), keyList(all))
		}
	}
	return nil
}

// CheckSpecs checks p against specs, for the benches of other packages
// (permsched, divalib, apps), which register it with
// results.RegisterParamCheck: every parameter of specs must be present
// unless Optional, and within its range. Parameters specs does not name
// are the caller's to refuse (UnknownParams): an application record's
// program adds its own.
func CheckSpecs(specs []ParamSpec, p results.Params) error {
	for _, s := range specs {
		v, ok := p[s.Key]
		if !ok {
			if s.Optional {
				continue
			}
			return fmt.Errorf("%s is missing", s.Key)
		}
		if err := s.Check(v); err != nil {
			return err
		}
	}
	return nil
}

// Check reports why v is not a value of the parameter, naming it, in the
// parameter's unit: "k = 0: must be positive (an integer >= 1)".
func (s ParamSpec) Check(v any) error {
	if why := s.Reason(v); why != "" {
		return fmt.Errorf("%s = %s: %s", s.Key, show(v), why)
	}
	return nil
}

// Reason says why v is not a value of the parameter ("must be positive
// (an integer >= 1)"), or "" when it is one.
func (s ParamSpec) Reason(v any) string {
	switch s.Kind {
	case ParamBool:
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
		return ""
	case ParamString:
		str, ok := v.(string)
		if !ok || len(s.Values) > 0 && !slices.Contains(s.Values, str) {
			return "must be one of " + strings.Join(s.Values, ", ")
		}
		return ""
	}
	x, ok := Number(v)
	if !ok {
		return "must be a number"
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "must be finite"
	}
	if s.Kind == ParamInt && x != math.Trunc(x) {
		return "must be a whole number"
	}
	switch {
	case x < s.Min && s.Min == 0 && !s.MinOpen:
		return "must not be negative (" + s.rangeText() + ")"
	case x < s.Min && s.Min == 1 && s.Kind == ParamInt:
		return "must be positive (" + s.rangeText() + ")"
	case x < s.Min || (s.MinOpen && x == s.Min) || (!s.NoMax && x > s.Max):
		return "must be " + s.rangeText()
	case s.NoMax && s.Kind == ParamInt && x > maxExactInt:
		return fmt.Sprintf("must be at most 2^53 = %d, the largest count a record holds exactly (%s)", int64(maxExactInt), s.rangeText())
	case s.NoMax && x > results.MaxRecordValue:
		return fmt.Sprintf("must be at most %g, the largest value a record holds (%s)", results.MaxRecordValue, s.rangeText())
	}
	return ""
}

// maxExactInt is the largest whole number every integer below it is
// exact at in a float64 (a JSON number): the top of a count left open.
const maxExactInt = 1 << 53

// rangeText says which values are accepted, in the parameter's unit:
// "an integer >= 1", "in (0, 1]", "0 to 2147483647 bytes".
func (s ParamSpec) rangeText() string {
	unit := ""
	if s.Unit != "" {
		unit = " " + s.Unit
	}
	kind := "a number"
	if s.Kind == ParamInt {
		kind = "an integer"
	}
	switch {
	case s.NoMax && s.MinOpen:
		return fmt.Sprintf("%s > %s%s", kind, show(s.Min), unit)
	case s.NoMax:
		return fmt.Sprintf("%s >= %s%s", kind, show(s.Min), unit)
	case s.MinOpen:
		return fmt.Sprintf("in (%s, %s]%s", show(s.Min), show(s.Max), unit)
	}
	return fmt.Sprintf("%s from %s to %s%s", kind, show(s.Min), show(s.Max), unit)
}

func keyList(specs []ParamSpec) string {
	keys := make([]string, len(specs))
	for i, s := range specs {
		keys[i] = s.Key
	}
	return strings.Join(keys, ", ")
}

// Number is a parameter's value v as a float64 if it is a number of any
// Go kind (an int from a writer, a float64 from JSON).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func show(v any) string {
	switch x := v.(type) {
	case float64:
		return results.FormatCount(x)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

func sortedKeys(p results.Params) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
