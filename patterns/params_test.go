package patterns

import (
	"strconv"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestEveryPatternHasSpecs: every pattern of the package names its
// parameters in the spec table, and the parameters of a valid instance
// pass the check the records and predict's instances go through.
func TestEveryPatternHasSpecs(t *testing.T) {
	pats := []Pattern{
		PingPong{Bytes: 8}, Bandwidth{Bytes: 8}, RoundTrip{Bytes: 8}, AllToAll{Bytes: 8},
		Pairwise{Bytes: 8}, RowContention{Bytes: 8},
		KKAccess{K: 2, L: 64, R: 0.5, Distinct: true, Self: true},
		KAccess{K: 2, L: 64, H: 0.5, A: 2, ES: true},
		PRTT{Bytes: 8, N: 2, DelaySec: 1e-6, Server: true},
		Permutations{Bytes: 8, Count: 10},
		AggregateOp{Op: AggQShift, Bytes: 8, Q: 1},
	}
	for _, p := range pats {
		t.Run(p.Bench(), func(t *testing.T) {
			if SpecsOf(p.Bench()) == nil {
				t.Fatalf("no parameter specs for %s", p.Bench())
			}
			params := p.Params(4)
			if err := CheckParams(p.Bench(), params, true); err != nil {
				t.Errorf("valid instance %v refused: %v", params, err)
			}
			if err := results.CheckBenchParams(p.Bench(), params); err != nil {
				t.Errorf("not registered with results: %v", err)
			}
			for key := range params {
				if _, ok := Spec(p.Bench(), key); !ok {
					t.Errorf("parameter %s of %s has no spec", key, p.Bench())
				}
			}
		})
	}
}

// TestParamChecks: impossible values are refused, in the parameter's own
// words, strictly (predict) or leniently (records).
func TestParamChecks(t *testing.T) {
	tests := []struct {
		name   string
		bench  string
		params results.Params
		strict bool
		want   string // "" for accepted
	}{
		{"size", BenchPingPong, results.Params{"bytes": 8}, true, ""},
		{"negative size", BenchPingPong, results.Params{"bytes": -5}, false, "bytes = -5: must not be negative (an integer from 0 to 2147483647 bytes)"},
		{"size too large", BenchPingPong, results.Params{"bytes": 1 << 32}, false, "must be an integer from 0 to 2147483647 bytes"},
		{"fractional size", BenchRoundTrip, results.Params{"bytes": 0.5}, false, "must be a whole number"},
		{"size as text", BenchPingPong, results.Params{"bytes": "8"}, false, "must be a number"},
		{"k zero", BenchKKAccess, results.Params{"k": 0}, false, "k = 0: must be positive (an integer >= 1)"},
		{"r five", BenchKKAccess, results.Params{"r": 5.0}, false, "r = 5: must be in (0, 1]"},
		{"r zero", BenchKKAccess, results.Params{"r": 0}, false, "r = 0: must be in (0, 1]"},
		{"r one", BenchKKAccess, results.Params{"r": 1}, false, ""},
		{"h above one", BenchKAccess, results.Params{"h": 1.5}, false, "must be in (0, 1]"},
		{"a zero", BenchKAccess, results.Params{"a": 0}, false, "a = 0: must be positive"},
		{"es not a bool", BenchKAccess, results.Params{"es": 1}, false, "es = 1: must be true or false"},
		{"op", BenchKKAccess, results.Params{"op": "rmw"}, false, `op = "rmw": must be one of read, write`},
		{"negative delay", BenchPRTT, results.Params{"delay_s": -1e-6}, false, "delay_s = -1e-06: must not be negative (a number >= 0 s)"},
		{"side", BenchPRTT, results.Params{"side": "both"}, false, "must be one of client, server"},
		{"aggregate op", BenchAggregate, results.Params{"op": "reduce"}, false, "must be one of bcast, allgather, scatter, alltoall, qshift, news"},
		{"window", BenchBandwidth, results.Params{"window": 0}, false, "window = 0: must be positive"},
		{"count", BenchPermutations, results.Params{"count": -1}, false, "count = -1: must be positive"},
		{"unknown key, strict", BenchPingPong, results.Params{"bytes": 8, "foo": 3}, true, `pingpong has no parameter "foo" (its parameters: bytes, iters)`},
		{"unknown key, lenient", BenchPingPong, results.Params{"bytes": 8, "foo": 3}, false, ""},
		{"emulated network", BenchKKAccess, results.Params{"k": 1, "network": "BF(2)"}, true, ""},
		{"bench of another package", "dsm-check", results.Params{"ops": -1}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckParams(tc.bench, tc.params, tc.strict)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRecordsCheckedOnRead: a file with an impossible record is refused
// by the one reader, naming the line.
func TestRecordsCheckedOnRead(t *testing.T) {
	good := `{"schema":1,"bench":"pingpong","params":{"bytes":8},"ranks":2,"unit":"s","n":1,"min":1e-6,"median":1e-6,"max":1e-6,"ci95":[1e-6,1e-6],"meta":{}}`
	bad := `{"schema":1,"bench":"kkaccess","params":{"k":0,"l":8,"r":1,"op":"read"},"ranks":2,"unit":"s","n":1,"min":1e-6,"median":1e-6,"max":1e-6,"ci95":[1e-6,1e-6],"meta":{}}`
	_, err := results.ReadJSONL(strings.NewReader(good + "\n" + good + "\n" + bad + "\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3: record kkaccess: impossible parameter k = 0") {
		t.Errorf("error %v", err)
	}
	if _, err := results.MarshalRecord(results.Record{Bench: BenchPingPong, Unit: "s", Params: results.Params{"bytes": -1}}); err == nil {
		t.Errorf("an impossible record was written")
	}
}

// TestRecordRanksAndTime: a pattern's record is refused on read when its
// rank count is one the pattern cannot run on or its time is 0 s (a fit
// or a ratio would divide by it), naming the line.
func TestRecordRanksAndTime(t *testing.T) {
	rec := func(bench, params string, ranks int, median string) string {
		return `{"schema":1,"bench":"` + bench + `","params":` + params + `,"ranks":` + strconv.Itoa(ranks) +
			`,"unit":"s","n":1,"min":` + median + `,"median":` + median + `,"max":` + median + `,"ci95":[` + median + `,` + median + `],"meta":{}}`
	}
	pp := `{"bytes":8}`
	tests := []struct {
		name, line, want string // want "" accepted
	}{
		{"pingpong on 2 ranks", rec("pingpong", pp, 2, "1e-6"), ""},
		{"pingpong on 0 ranks", rec("pingpong", pp, 0, "1e-6"), "ranks = 0: pingpong runs on at least 2 ranks"},
		{"pingpong on 1 rank", rec("pingpong", pp, 1, "1e-6"), "ranks = 1: pingpong runs on at least 2 ranks"},
		{"roundtrip on 1 rank", rec("roundtrip", pp, 1, "1e-6"), "roundtrip runs on at least 2 ranks"},
		{"local reduction on 1 rank", rec("reducelocal", `{"bytes":8,"type":"double","reduction":"sum","iters":1}`, 1, "1e-6"), ""},
		{"pingpong of 0 s", rec("pingpong", pp, 2, "0"), "median 0 s is not positive"},
		// A count left open at the top still holds exactly in a record.
		{"pingpong iters 2^53", rec("pingpong", `{"bytes":8,"iters":9007199254740992}`, 2, "1e-6"), ""},
		{"pingpong iters 1e308", rec("pingpong", `{"bytes":8,"iters":1e308}`, 2, "1e-6"), "iters = 1e+308: must be at most 2^53"},
		{"prtt delay 1e300 s", rec("prtt", `{"bytes":8,"n":1,"delay_s":1e300}`, 2, "1e-6"), "delay_s = 1e+300: must be at most 1e+18"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(tc.line + "\n"))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "line 1: ") || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
