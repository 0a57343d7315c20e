package results

import (
	"fmt"
	"sync"
)

// Parameter checks by bench: records are checked for
// physical sense. The package that owns a bench (patterns for its
// patterns) registers what its parameters may be; Record.Validate and
// WorkItem.Validate apply it, so every record written or read (with its
// line number, ReadJSONL) and every application workload item names a
// possible instance: no size of -5 bytes, no k = 0, no portion r = 5.
var paramChecks sync.Map // bench -> func(Params) error

// RegisterParamCheck makes check the parameter check of bench's records.
// It is meant to be called from the init function of the bench's owner;
// registering a bench twice is a programming error (panic).
func RegisterParamCheck(bench string, check func(Params) error) {
	if _, dup := paramChecks.LoadOrStore(bench, check); dup {
		panic("results: parameter check of " + bench + " registered twice")
	}
}

// CheckBenchParams applies bench's registered parameter check to p (nil
// when bench has none).
func CheckBenchParams(bench string, p Params) error {
	if f, ok := paramChecks.Load(bench); ok {
		if err := f.(func(Params) error)(p); err != nil {
			return fmt.Errorf("%s: impossible parameter %w", bench, err)
		}
	}
	return nil
}
