package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNullNumbersRefused: a JSON null where a record holds a number (a
// sample, a summary statistic, a count, ci95 or one of its bounds, a
// derived or counters value, a workload count, a ranks per host) is
// refused as not a number, naming the field, instead of being decoded
// as 0 and reported as a 0 sample; a null where it reads as no value
// (samples, derived, counters or ranks_per_host as a whole) is read as
// before.
func TestNullNumbersRefused(t *testing.T) {
	base := testRecords()[0]
	base.Counters = map[string]float64{"messages": 10}
	base.Meta.RanksPerHost = []int{1, 1}
	line, err := MarshalRecord(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string // "" accepted
	}{
		{"as written", func(map[string]any) {}, ""},
		{"samples[3] null", func(m map[string]any) { m["samples"].([]any)[3] = nil }, "field samples: null is not a number (element 4)"},
		{"samples[0] null", func(m map[string]any) { m["samples"].([]any)[0] = nil }, "field samples: null is not a number (element 1)"},
		{"samples a string (as before)", func(m map[string]any) { m["samples"].([]any)[3] = "x" }, "field samples: the string is not a number"},
		{"median null", func(m map[string]any) { m["median"] = nil }, "field median: null is not a number"},
		{"min null", func(m map[string]any) { m["min"] = nil }, "field min: null is not a number"},
		{"p99 null", func(m map[string]any) { m["p99"] = nil }, "field p99: null is not a number"},
		{"n null", func(m map[string]any) { m["n"] = nil }, "field n: null is not a whole number (Go int)"},
		{"ranks null", func(m map[string]any) { m["ranks"] = nil }, "field ranks: null is not a whole number"},
		{"rank_max null", func(m map[string]any) { m["rank_max"] = nil }, "field rank_max: null is not a number"},
		{"ci95 null", func(m map[string]any) { m["ci95"] = nil }, "field ci95: null is not an array"},
		{"ci95[1] null", func(m map[string]any) { m["ci95"].([]any)[1] = nil }, "field ci95: null is not a number (element 2)"},
		{"derived value null", func(m map[string]any) { m["derived"].(map[string]any)["latency_s"] = nil }, "field derived.latency_s: null is not a number"},
		{"counters value null", func(m map[string]any) { m["counters"].(map[string]any)["messages"] = nil }, "field counters.messages: null is not a number"},
		{"ranks_per_host element null", func(m map[string]any) { m["meta"].(map[string]any)["ranks_per_host"].([]any)[1] = nil }, "field meta.ranks_per_host: null is not a whole number (Go int) (element 2)"},
		{"meta.cores null", func(m map[string]any) { m["meta"].(map[string]any)["cores"] = nil }, "field meta.cores: null is not a whole number"},
		{"Median null, as the decoder matches it", func(m map[string]any) { delete(m, "median"); m["Median"] = nil }, "field Median: null is not a number"},
		{"workload count null", func(m map[string]any) {
			m["workload"] = []any{map[string]any{"count": nil, "bench": "pingpong", "params": map[string]any{"bytes": 8}}}
		}, "field workload[].count: null is not a number"},
		{"samples null: no samples", func(m map[string]any) { m["samples"] = nil }, ""},
		{"derived null: none", func(m map[string]any) { m["derived"] = nil }, ""},
		{"ranks_per_host null: none", func(m map[string]any) { m["meta"].(map[string]any)["ranks_per_host"] = nil }, ""},
		{"an unknown member null", func(m map[string]any) { m["note"] = nil }, ""},
		{"a string of null", func(m map[string]any) { m["meta"].(map[string]any)["binding"] = "null,null" }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			edited, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadJSONL(strings.NewReader(string(edited) + "\n"))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v\n%s", err, edited)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFieldNamedAsInFile: a decoder's type error names the field as the
// file spells it, not with the Go name of the struct embedding it.
func TestFieldNamedAsInFile(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"Summary.n", "n"}, {"meta.ranks_per_host", "meta.ranks_per_host"}, {"n", "n"}, {"Median", "Median"},
	} {
		if got := fileField(tc.path); got != tc.want {
			t.Errorf("fileField(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
