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

// HasParamCheck reports whether some package registered a parameter
// check of bench: whether bench names a point a model can be asked for
// (a workload item of an unknown bench names none).
func HasParamCheck(bench string) bool {
	_, ok := paramChecks.Load(bench)
	return ok
}

// recordChecks are the record-level checks by bench: what relates a
// record's parameters to its other fields (a mesh to the rank count, a
// stored prediction error to the prediction and the measurement), which a
// parameter check cannot see. CheckValues applies them, so every reader
// and writer does.
var recordChecks sync.Map // bench -> func(*Record) error

// RegisterRecordCheck makes check the record-level check of bench's
// records (see recordChecks); registering a bench twice panics.
func RegisterRecordCheck(bench string, check func(*Record) error) {
	if _, dup := recordChecks.LoadOrStore(bench, check); dup {
		panic("results: record check of " + bench + " registered twice")
	}
}

// itemChecks are the checks by bench of a workload item against its own
// rank count (a root among them, a grid that holds them), which its
// parameter check cannot see; WorkItem.Validate applies them to an item
// that names its ranks, and Record.Validate to every item of a record, one
// that leaves its ranks out (0) too: an item of a run is a part of it, and
// the check says whether its bench implies a rank count (a ping-pong's
// pair) or needs one. A predicted instance may leave them out.
var itemChecks sync.Map // bench -> func(WorkItem) error

// RegisterItemCheck makes check the rank check of bench's workload items;
// registering a bench twice panics.
func RegisterItemCheck(bench string, check func(WorkItem) error) {
	if _, dup := itemChecks.LoadOrStore(bench, check); dup {
		panic("results: item check of " + bench + " registered twice")
	}
}

// fileChecks relate records of one file to each other (a ratio to the
// record it is a ratio to); ReadJSONL applies them once the file is read.
var (
	fileChecksMu sync.Mutex
	fileChecks   []func([]Record) (int, error)
)

// RegisterFileCheck adds a check of the records of a whole file: it
// returns the index of the first record it refuses and why, or -1 and
// nil. Readers name the file and that record's line.
func RegisterFileCheck(check func(recs []Record) (int, error)) {
	fileChecksMu.Lock()
	defer fileChecksMu.Unlock()
	fileChecks = append(fileChecks, check)
}

// CheckFile applies the registered file checks to recs; i is the index
// of the record refused.
func CheckFile(recs []Record) (i int, err error) {
	fileChecksMu.Lock()
	checks := fileChecks
	fileChecksMu.Unlock()
	for _, c := range checks {
		if i, err := c(recs); err != nil {
			return i, err
		}
	}
	return -1, nil
}
