package apps

import (
	"fmt"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The parameters every application phase record has (results.BenchApp):
// the program, the phase and its kind, checked on every record written or
// read (results.RegisterParamCheck), so that `app table` refuses a file
// whose phase is missing instead of printing it as <nil>.
var appParams = []patterns.ParamSpec{
	{Key: "app", Kind: patterns.ParamString},
	{Key: "phase", Kind: patterns.ParamString},
	{Key: "kind", Kind: patterns.ParamString, Values: []string{results.PhaseKindComm, results.PhaseKindComp, results.PhaseKindSync}},
}

func init() {
	results.RegisterParamCheck(Bench, func(p results.Params) error {
		if err := patterns.CheckSpecs(appParams, p); err != nil {
			return err
		}
		for _, k := range []string{"app", "phase"} {
			if p[k] == "" {
				return fmt.Errorf("%s is empty", k)
			}
		}
		return nil
	})
}
