package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/commcost/commcost/apps"
)

// badInputDir is the set-up of the bad-input tests: a temporary directory
// and the records file in it (--out) that a refused invocation must leave
// unwritten.
func badInputDir(t *testing.T) (dir, out string) {
	t.Helper()
	dir = t.TempDir()
	return dir, filepath.Join(dir, "x.jsonl")
}

// badInput is one row of a bad-input table: the arguments, and the text
// the one message must hold.
type badInput struct {
	name string
	args []string
	want string
}

// checkBadInputs runs every row as a subtest: exit 2 with one message
// holding want, nothing written in dir (checkUsageError).
func checkBadInputs(t *testing.T, dir string, tests []badInput) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkUsageError(t, dir, tt.args, tt.want)
		})
	}
}

// workloadJSON is the workload field, `"workload":[...],`, of the record a
// run of app on p ranks writes for phase: what the record check requires
// of a hand-made application record (nothing for a phase without one).
func workloadJSON(t *testing.T, app apps.Workloader, p int, phase string) string {
	t.Helper()
	w := app.Workload(p)[phase]
	if len(w) == 0 {
		return ""
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return `"workload":` + string(b) + `,`
}
