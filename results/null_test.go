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
		{"n null", func(m map[string]any) { m["n"] = nil }, "field n: null is not a whole number"},
		{"ranks null", func(m map[string]any) { m["ranks"] = nil }, "field ranks: null is not a whole number"},
		{"rank_max null", func(m map[string]any) { m["rank_max"] = nil }, "field rank_max: null is not a number"},
		{"ci95 null", func(m map[string]any) { m["ci95"] = nil }, "field ci95: null is not an array"},
		{"ci95[1] null", func(m map[string]any) { m["ci95"].([]any)[1] = nil }, "field ci95: null is not a number (element 2)"},
		{"derived value null", func(m map[string]any) { m["derived"].(map[string]any)["latency_s"] = nil }, "field derived.latency_s: null is not a number"},
		{"counters value null", func(m map[string]any) { m["counters"].(map[string]any)["messages"] = nil }, "field counters.messages: null is not a number"},
		{"ranks_per_host element null", func(m map[string]any) { m["meta"].(map[string]any)["ranks_per_host"].([]any)[1] = nil }, "field meta.ranks_per_host: null is not a whole number (element 2)"},
		{"meta.cores null", func(m map[string]any) { m["meta"].(map[string]any)["cores"] = nil }, "field meta.cores: null is not a whole number"},
		{"Median null, a key in another case", func(m map[string]any) { delete(m, "median"); m["Median"] = nil }, `field Median: no field of a record: keys are case-sensitive, and the field is "median"`},
		{"workload count null", func(m map[string]any) {
			m["workload"] = []any{map[string]any{"count": nil, "bench": "pingpong", "params": map[string]any{"bytes": 8}}}
		}, "field workload[].count: null is not a number"},
		{"a command word null", func(m map[string]any) { m["meta"].(map[string]any)["command"] = []any{"commcost", nil} },
			"field meta.command: null is not a string (element 2)"},
		{"a host null", func(m map[string]any) { m["meta"].(map[string]any)["hosts"] = []any{nil, "h1"} }, "field meta.hosts: null is not a string (element 1)"},
		{"workload params null", func(m map[string]any) {
			m["workload"] = []any{map[string]any{"count": 1, "bench": "pingpong", "params": nil}}
		}, "field workload[].params: null is not an object"},
		{"params null", func(m map[string]any) { m["params"] = nil }, "field params: null is not an object"},
		{"a workload item on more ranks than the record's", func(m map[string]any) {
			m["workload"] = []any{map[string]any{"count": 1, "bench": "pingpong", "params": map[string]any{"bytes": 8}, "ranks": 99}}
		}, "workload item 1: pingpong on ranks = 99, more than the record's"},
		{"samples null: no samples", func(m map[string]any) { m["samples"] = nil }, ""},
		{"derived null: none", func(m map[string]any) { m["derived"] = nil }, ""},
		{"ranks_per_host null: none", func(m map[string]any) { m["meta"].(map[string]any)["ranks_per_host"] = nil }, ""},
		{"an unknown member null", func(m map[string]any) { m["note"] = nil }, "field note: no field of a record"},
		{"a string of null", func(m map[string]any) { m["meta"].(map[string]any)["binding"] = "null,null" }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited, err := readEdited(t, line, tc.edit)
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

// TestTypeErrorsNamed: a value of the wrong kind, or a number its field
// cannot hold, is refused with the field as the file spells it, the key
// of a derived or counters value, the element of an array and the
// workload item's field, and what the file must hold there: no Go type
// names ("map[string]interface {}", "Go int").
func TestTypeErrorsNamed(t *testing.T) {
	base := testRecords()[0]
	base.Counters = map[string]float64{"messages": 10}
	base.Meta.RanksPerHost = []int{1, 1}
	line, err := MarshalRecord(base)
	if err != nil {
		t.Fatal(err)
	}
	const whole = "is not a whole number (digits only: no fraction or exponent)"
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	meta := func(m map[string]any) map[string]any { return m["meta"].(map[string]any) }
	item := func(k string, v any) []any {
		it := map[string]any{"count": 1, "bench": "pingpong", "params": map[string]any{"bytes": 8}}
		it[k] = v
		return []any{it}
	}
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string // "" accepted
	}{
		{"as written", func(map[string]any) {}, ""},
		{"params an array", func(m map[string]any) { m["params"] = []any{1} }, "field params: the array is not an object"},
		{"params a string", func(m map[string]any) { m["params"] = "bytes=8" }, "field params: the string is not an object"},
		{"a workload item's params an array", func(m map[string]any) { m["workload"] = item("params", []any{1}) }, "field workload[].params: the array is not an object"},
		{"a parameter an array", func(m map[string]any) { m["params"] = map[string]any{"bytes": []any{8}} }, "field params.bytes: the array is not a number, a string, true or false"},
		{"a workload item's parameter an object", func(m map[string]any) { m["workload"] = item("params", map[string]any{"bytes": map[string]any{}}) },
			"field workload[].params.bytes: the object is not a number, a string, true or false"},
		{"a parameter beyond a float64", func(m map[string]any) { m["params"] = raw(`{"bytes":1e400}`) }, "field params.bytes: the number 1e400 is not a number from -1.7976931348623157e+308 to 1.7976931348623157e+308"},
		{"meta.cores 1e308", func(m map[string]any) { meta(m)["cores"] = 1e308 }, "field meta.cores: the number 1e+308 " + whole},
		{"meta.gomaxprocs 2.5", func(m map[string]any) { meta(m)["gomaxprocs"] = 2.5 }, "field meta.gomaxprocs: the number 2.5 " + whole},
		{"meta.seed 1e308", func(m map[string]any) { meta(m)["seed"] = 1e308 }, "field meta.seed: the number 1e+308 " + whole},
		{"meta.ranks_per_host element a string", func(m map[string]any) { meta(m)["ranks_per_host"] = []any{1, "x"} }, "field meta.ranks_per_host: the string is not a whole number (element 2)"},
		{"meta.ranks_per_host element 1e3", func(m map[string]any) { meta(m)["ranks_per_host"] = raw(`[1e3,1]`) }, "field meta.ranks_per_host: the number 1e3 " + whole + " (element 1)"},
		{"meta.hosts element a number", func(m map[string]any) { meta(m)["hosts"] = []any{"a", 1} }, "field meta.hosts: the number 1 is not a string (element 2)"},
		{"ranks 1e19", func(m map[string]any) { m["ranks"] = raw("10000000000000000000") }, "field ranks: the number 10000000000000000000 is not a whole number from -9223372036854775808 to 9223372036854775807"},
		{"ranks true", func(m map[string]any) { m["ranks"] = true }, "field ranks: the boolean true is not a whole number"},
		{"dropped 0.5", func(m map[string]any) { m["dropped"] = 0.5 }, "field dropped: the number 0.5 " + whole},
		{"invalid a string", func(m map[string]any) { m["invalid"] = "1" }, "field invalid: the string is not a whole number"},
		{"n 1.5", func(m map[string]any) { m["n"] = 1.5 }, "field n: the number 1.5 " + whole},
		{"a workload item's ranks 1.5", func(m map[string]any) { m["workload"] = item("ranks", 1.5) }, "field workload[].ranks: the number 1.5 " + whole},
		{"a counters value an object", func(m map[string]any) { m["counters"] = map[string]any{"messages": 1, "bytes_sent": map[string]any{}} }, "field counters.bytes_sent: the object is not a number"},
		{"a derived value a string", func(m map[string]any) { m["derived"].(map[string]any)["latency_s"] = "x" }, "field derived.latency_s: the string is not a number"},
		{"ci95 element a string", func(m map[string]any) { m["ci95"].([]any)[1] = "x" }, "field ci95: the string is not a number (element 2)"},
		{"median beyond a float64", func(m map[string]any) { m["median"] = raw("1e400") }, "field median: the number 1e400 is not a number from -1.7976931348623157e+308 to 1.7976931348623157e+308"},
		{"meta.seed negative", func(m map[string]any) { meta(m)["seed"] = -5 }, ""},
		{"a parameter's value of any scalar", func(m map[string]any) { m["params"] = raw(`{"bytes":8,"op":"read","x":true}`) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited, err := readEdited(t, line, tc.edit)
			switch {
			case tc.want == "" && err != nil && strings.Contains(err.Error(), "not a JSON record"):
				t.Errorf("refused by the decoder: %v\n%s", err, edited)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			case err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "interface {}")):
				t.Errorf("error %v names a Go type", err)
			}
		})
	}
}

// TestJSONFieldError: a decoder's type error outside records (a model
// file) and at the top of a line is worded without Go types too.
func TestJSONFieldError(t *testing.T) {
	var v struct {
		A int     `json:"a"`
		B uint8   `json:"b"`
		C bool    `json:"c"`
		D []int   `json:"d"`
		E float64 `json:"e"`
	}
	for _, tc := range []struct{ in, want string }{
		{`[1]`, "the array is not an object"},
		{`"x"`, "the string is not an object"},
		{`{"a":1.5}`, "field a: the number 1.5 is not a whole number (digits only: no fraction or exponent)"},
		{`{"b":300}`, "field b: the number 300 is not a whole number from 0 to 255"},
		{`{"c":1}`, "field c: the number is not true or false"},
		{`{"a":true}`, "field a: the boolean is not a whole number"},
		{`{"d":{}}`, "field d: the object is not an array"},
		{`{"e":"1"}`, "field e: the string is not a number"},
	} {
		err := json.Unmarshal([]byte(tc.in), &v)
		if got := JSONFieldError(err); got == nil || got.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.in, got, tc.want)
		}
	}
}

// readEdited reads line as a records file after edit changed its decoded
// object; it returns the edited line and the reader's error.
func readEdited(t *testing.T, line []byte, edit func(map[string]any)) ([]byte, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	edited, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadJSONL(strings.NewReader(string(edited) + "\n"))
	return edited, err
}
