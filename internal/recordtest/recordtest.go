// Package recordtest holds the test helper of the record checks: a record
// as its writer built it, edited as a hostile file would have it, and read
// back through results.ReadJSONL, as every reader of a file reads it (with
// the checks the test binary's packages registered).
package recordtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// CheckEdited edits a copy of rec (its derived and counters maps made, so
// an edit may add to them), reads it back, and fails t unless the read
// refuses it with an error containing want, or accepts it when want is "".
func CheckEdited(t *testing.T, rec results.Record, edit func(*results.Record), want string) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Derived == nil {
		r.Derived = map[string]float64{}
	}
	if r.Counters == nil {
		r.Counters = map[string]float64{}
	}
	edit(&r)
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	_, err = results.ReadJSONL(strings.NewReader(string(b) + "\n"))
	if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
		t.Errorf("read: %v, want %q", err, want)
	}
}
