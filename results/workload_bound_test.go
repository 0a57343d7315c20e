package results

import (
	"strings"
	"testing"
)

// TestWorkItemBounds: a workload count or rank count beyond what any run
// has is refused, as a negative one is.
func TestWorkItemBounds(t *testing.T) {
	for _, tc := range []struct {
		item WorkItem
		want string // "" accepted
	}{
		{WorkItem{Bench: "x", Count: 12, Ranks: 4}, ""},
		{WorkItem{Bench: "x", Count: MaxRecordValue, Ranks: MaxRecordRanks}, ""},
		{WorkItem{Bench: "x", Count: 1e308}, "count 1e+308; want a finite number from 0 to 1e+18"},
		{WorkItem{Bench: "x", Count: -1}, "count -1"},
		{WorkItem{Bench: "x", Count: 1, Ranks: MaxRecordRanks + 1}, "want 0 to"},
	} {
		err := tc.item.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.item, err, tc.want)
		}
	}
}
