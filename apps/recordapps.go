package apps

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The parameters of each application's records, checked on every record
// read or written: each of the ten programs' records carries its App.Params,
// which appRecordChecks bounds by kind, rebuilds into the App and runs
// through the App's own Check on the record's rank count, so a record is
// refused when no run of the program could have written it (a gauss of
// order 1e308, a cannon on 5 ranks, measured steps beyond the steps), with
// the same reason its flags would give. The parameters a program derives
// (a block's bytes, a plane's bytes, the default V-cycles) must be what
// the rebuilt App derives; a record has no parameter its program's runs
// do not write, and its phase is one that a run of its parameters times.

var (
	specN = patterns.ParamSpec{Key: "n", Kind: patterns.ParamInt, Min: 1, NoMax: true}
	// k and l as their flags take them: counts and sizes of one MPI call.
	specAccessK = patterns.ParamSpec{Key: "k", Kind: patterns.ParamInt, Min: 1, Max: mpi.MaxCount}
	specAccessL = patterns.ParamSpec{Key: "l", Kind: patterns.ParamInt, Min: 1, Max: mpi.MaxCount, Unit: "bytes"}
	specVariant = patterns.ParamSpec{Key: "variant", Kind: patterns.ParamString, Values: []string{"async", "sync"}}
)

// appRecord is how a program's records are checked: its parameters' specs
// and the App they describe.
type appRecord struct {
	specs []patterns.ParamSpec
	build func(p results.Params) App
}

var appRecords = map[string]appRecord{
	"gauss": {[]patterns.ParamSpec{specN, {Key: "matrix", Kind: patterns.ParamString, Values: GaussMatrices}, specVariant},
		func(p results.Params) App {
			return &Gauss{N: intOf(p, "n"), Matrix: p["matrix"].(string), Sync: p["variant"] == "sync"}
		}},
	"cannon": {[]patterns.ParamSpec{specN, specVariant},
		func(p results.Params) App { return Cannon{N: intOf(p, "n"), Sync: p["variant"] == "sync"} }},
	"checkerboard": {[]patterns.ParamSpec{specN, specVariant,
		{Key: "grid", Kind: patterns.ParamString, Optional: true},
		{Key: "block_bytes", Kind: patterns.ParamInt, Min: 0, NoMax: true, Unit: "bytes", Optional: true}},
		func(p results.Params) App {
			m := Checkerboard{N: intOf(p, "n"), Sync: p["variant"] == "sync"}
			if s, ok := p["grid"].(string); ok {
				m.Grid, _ = ParseGrid(s) // a grid that does not parse is refused by checkAppParams
			}
			return m
		}},
	"matmul": {[]patterns.ParamSpec{specN, specAccessK, specAccessL, {Key: "sync", Kind: patterns.ParamBool}},
		func(p results.Params) App {
			return MatMul{N: intOf(p, "n"), Access: accessOf(p), Sync: p["sync"] == true}
		}},
	"multigrid": {[]patterns.ParamSpec{specN, {Key: "iters", Kind: patterns.ParamInt, Min: 1, NoMax: true}, specVariant,
		{Key: "cycles", Kind: patterns.ParamInt, Min: 1, NoMax: true},
		{Key: "plane_bytes", Kind: patterns.ParamInt, Min: 0, NoMax: true, Unit: "bytes"}},
		func(p results.Params) App {
			return &Multigrid{N: intOf(p, "n"), Iters: intOf(p, "iters"), Sync: p["variant"] == "sync", Cycles: intOf(p, "cycles")}
		}},
	"samplesort": {[]patterns.ParamSpec{specN, specAccessK, specAccessL},
		func(p results.Params) App { return SampleSort{N: intOf(p, "n"), Access: accessOf(p)} }},
	"bitonic": {[]patterns.ParamSpec{specN, specAccessK, specAccessL},
		func(p results.Params) App { return BitonicSort{N: intOf(p, "n"), Access: accessOf(p)} }},
	"concomp": {[]patterns.ParamSpec{specN, {Key: "parts", Kind: patterns.ParamInt, Min: 1, NoMax: true},
		{Key: "density", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: 1}, specAccessK, specAccessL},
		func(p results.Params) App {
			return ConnComp{N: intOf(p, "n"), Parts: intOf(p, "parts"), Density: floatOf(p, "density"), Access: accessOf(p)}
		}},
	BitonicName: {[]patterns.ParamSpec{{Key: "keys", Kind: patterns.ParamInt, Min: 1, Max: BitonicMaxKeys},
		{Key: "impl", Kind: patterns.ParamString, Values: []string{"store", "hand"}}},
		func(p results.Params) App {
			c := BitonicConfig{Keys: intOf(p, "keys")}
			if p["impl"] == "hand" {
				return &BitonicHand{BitonicConfig: c}
			}
			return &BitonicStore{BitonicConfig: c}
		}},
	"barneshut": {BarnesHutSpecs, func(p results.Params) App { return &BarnesHut{BarnesHutOf(p)} }},
}

// BarnesHutSpecs are the parameters of a Barnes-Hut record, the
// application's and dsm barneshut's.
var BarnesHutSpecs = []patterns.ParamSpec{
	{Key: "bodies", Kind: patterns.ParamInt, Min: 1, NoMax: true},
	{Key: "theta", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: 2},
	{Key: "steps", Kind: patterns.ParamInt, Min: 1, NoMax: true},
	{Key: "measured_steps", Kind: patterns.ParamInt, Min: 1, NoMax: true},
	// The time step and softening, which records before them leave out
	// (such a record names a run of the defaults, or of unknown ones).
	{Key: "dt", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: MaxDt, Optional: true},
	{Key: "eps", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: MaxEps, Optional: true},
}

// BarnesHutOf is the configuration a Barnes-Hut record's parameters name
// (checked by BarnesHutSpecs). The record does not hold the cells per
// body; the smallest is taken, so that only N itself can keep the cell
// references from addressing the pool. A record without dt or eps (one
// written before they were recorded) leaves them 0, the defaults.
func BarnesHutOf(p results.Params) BarnesHutConfig {
	return BarnesHutConfig{Bodies: intOf(p, "bodies"), Theta: floatOf(p, "theta"), Steps: intOf(p, "steps"),
		Measured: intOf(p, "measured_steps"), Dt: floatOf(p, "dt"), Eps: floatOf(p, "eps"), CellsPerBody: math.SmallestNonzeroFloat64}
}

// checkAppParams is the parameter check of an application record r on
// its ranks (see appRecords): a program of this version, its parameters
// of their kind and range, a run its App.Check accepts on r.Ranks, and
// the parameters the App derives equal to the record's.
func checkAppParams(r *results.Record) error {
	name, _ := r.Params["app"].(string)
	ar, ok := appRecords[name]
	if !ok {
		return fmt.Errorf("app = %q: the programs are %s", name, strings.Join(slices.Sorted(maps.Keys(appRecords)), ", "))
	}
	if err := patterns.CheckSpecs(ar.specs, r.Params); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if s, ok := r.Params["grid"].(string); ok {
		if _, err := ParseGrid(s); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	app := ar.build(r.Params)
	if err := app.Check(r.Ranks); err != nil {
		return fmt.Errorf("%s on ranks = %d: no run has these parameters; its own check says: %w", name, r.Ranks, err)
	}
	derived := app.Params()
	for _, k := range slices.Sorted(maps.Keys(derived)) {
		v, ok := r.Params[k]
		if !ok && optionalSpec(ar.specs, k) {
			continue // a record written before the program recorded k
		}
		if !ok {
			return fmt.Errorf("%s: parameter %s is missing (a run of these parameters records %s = %v)", name, k, k, derived[k])
		}
		if !sameParam(v, derived[k]) {
			return fmt.Errorf("%s: %s = %v, but a run of these parameters on %d ranks records %s = %v", name, k, v, r.Ranks, k, derived[k])
		}
	}
	known := recordKeys(name, ar.specs, derived)
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		if !slices.Contains(known, k) {
			v := fmt.Sprint(r.Params[k])
			if s, ok := r.Params[k].(string); ok {
				v = strconv.Quote(s)
			}
			return fmt.Errorf("%s: parameter %s = %s is none of a %s record's: %s", name, k, v, name, strings.Join(known, ", "))
		}
	}
	if ph, ok := r.Params["phase"].(string); ok {
		phases := appPhases(name, r.Params)
		if !slices.Contains(phases, ph) {
			return fmt.Errorf("%s: phase = %q: a run of these parameters times %s", name, ph, strings.Join(phases, ", "))
		}
	}
	return nil
}

// storePhases are the phases of the programs over a store that no command
// registers as a program (dsm bitonic and barneshut run them): the ones
// their runs time.
var storePhases = map[string][]string{
	BitonicName: {BitonicLocalSort, BitonicExchange, BitonicMerge},
	"barneshut": {BHLoad, BHCofm, BHPartition, BHForce, BHForceComp, BHAdvance, BHSize},
}

// appPhases are the phases a run of program name with record params
// times: the registered program's (PhasesOf), else storePhases'.
func appPhases(name string, params results.Params) []string {
	if ph := PhasesOf(name, params); ph != nil {
		return ph
	}
	return storePhases[name]
}

// recordKeys are the parameters a record of program name has (sorted): the
// ones Measure adds (app, phase, kind), the program's own (its specs and
// what its App derives) and, for a program over a store, the store's
// name, which the store runs add.
func recordKeys(name string, specs []patterns.ParamSpec, derived results.Params) []string {
	keys := []string{"app", "phase", "kind"}
	for _, s := range specs {
		keys = append(keys, s.Key)
	}
	keys = append(keys, slices.Collect(maps.Keys(derived))...)
	if p, ok := programs[name]; !ok || p.OverStore {
		keys = append(keys, "store")
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// sameParam reports whether a record's parameter a (as decoded: numbers
// are float64) is the value b an App's Params holds.
func sameParam(a, b any) bool {
	x, okx := patterns.Number(a)
	y, oky := patterns.Number(b)
	if okx || oky {
		return okx && oky && x == y
	}
	return a == b
}

// optionalSpec reports whether specs make key an optional parameter.
func optionalSpec(specs []patterns.ParamSpec, key string) bool {
	return slices.ContainsFunc(specs, func(s patterns.ParamSpec) bool { return s.Key == key && s.Optional })
}

// intOf and floatOf read a parameter CheckSpecs has bounded (an integer
// up to 2^53, a finite number).
func intOf(p results.Params, k string) int {
	x, _ := patterns.Number(p[k])
	return int(x)
}

func floatOf(p results.Params, k string) float64 {
	x, _ := patterns.Number(p[k])
	return x
}

func accessOf(p results.Params) Access { return Access{K: intOf(p, "k"), L: intOf(p, "l")} }
