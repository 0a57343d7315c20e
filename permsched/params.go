package permsched

import (
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The physical range of the experiments' record parameters, checked on
// every record written or read (results.RegisterParamCheck): `sched
// breakeven --in` and every other reader refuse a file whose exchange has
// -16 bytes, a density of -1 or 0 ranks instead of fitting it.
var (
	specD       = patterns.ParamSpec{Key: "d", Kind: patterns.ParamInt, Min: 0, NoMax: true}
	specMsg     = patterns.ParamSpec{Key: "bytes", Kind: patterns.ParamInt, Min: 0, Max: maxMessageBytes, Unit: "bytes"}
	specMatrix  = patterns.ParamSpec{Key: "matrix", Kind: patterns.ParamInt, Min: 0, NoMax: true}
	specSched   = patterns.ParamSpec{Key: "scheduler", Kind: patterns.ParamString}
	specN       = patterns.ParamSpec{Key: "n", Kind: patterns.ParamInt, Min: 1, Max: MaxRanks}
	specReuse   = patterns.ParamSpec{Key: "reuse", Kind: patterns.ParamReal, Min: 0, MinOpen: true, Max: MaxReuse}
	schedParams = map[string][]patterns.ParamSpec{
		BenchComm:      {specD, specMatrix, specMsg, specSched},
		BenchSchedule:  {specD, specMatrix, specSched},
		BenchPerm1:     {specMsg},
		"sched.perms":  {specN, specD, specSched},
		"sched.time":   {specN, specD, specSched},
		"sched.maxdeg": {specN, specD},
		"sched.slope":  {specSched},
		BenchCostFit:   {specReuse},
		BenchBreak:     {specMsg, specReuse},
	}
)

func init() {
	for bench, specs := range schedParams {
		results.RegisterParamCheck(bench, func(p results.Params) error { return patterns.CheckSpecs(specs, p) })
	}
}
