package dsmexp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestRecordsCheckedOnRead: a dsm records file is refused on read, naming
// the line and the field, when a record's mesh does not hold its ranks,
// its strategy is none the commands take, or a stored ratio to
// hand-optimised is not positive or disagrees with the hand record of the
// same point in the file; a ratio whose hand record the file lacks is
// kept as written.
func TestRecordsCheckedOnRead(t *testing.T) {
	rec := func(strategy string, median, cong float64) results.Record {
		return results.Record{Schema: 1, Bench: BenchBitonic, Ranks: 4, Unit: results.UnitSeconds,
			Params:   results.Params{"strategy": strategy, "mesh": "2x2", "keys": 4096},
			Summary:  results.Summary{N: 1, Min: median, Median: median, Mean: median, Max: median, P90: median, P99: median, CI95: [2]float64{median, median}},
			Counters: map[string]float64{KeyCongestionBytes: cong},
			Derived:  map[string]float64{KeyTimeRatio: median / 0.002, KeyCongestionRatio: cong / 1000}}
	}
	tests := []struct {
		name string
		edit func(hand, fh *results.Record, recs *[]results.Record)
		want string // "" accepted
	}{
		{"as written", func(hand, fh *results.Record, _ *[]results.Record) {}, ""},
		{"mesh of 3x3 on 4 ranks", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["mesh"] = "3x3" },
			`line 2: record dsm-bitonic keys=4096 mesh=3x3 strategy=fixed-home: mesh = "3x3" has 9 processors but ranks = 4`},
		{"mesh of 100000x100000 on 4 ranks", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["mesh"] = "100000x100000" },
			"has 10000000000 processors but ranks = 4"},
		{"ranks 7 on 2x2", func(_, fh *results.Record, _ *[]results.Record) { fh.Ranks = 7 }, `line 2: `},
		{"strategy tree-3-1", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["strategy"] = "tree-3-1" },
			`line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=tree-3-1: strategy = "tree-3-1": accepted are fixed-home`},
		{"congestion ratio -3", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyCongestionRatio] = -3 },
			"line 2: record dsm-bitonic: derived congestion_ratio = -3 is not positive"},
		{"time ratio 123456", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyTimeRatio] = 123456 },
			"line 2: record dsm-bitonic strategy=fixed-home: derived time_ratio = 123456 disagrees with the hand-optimised record of the same point in the file (1.5 from their medians)"},
		{"time ratio 1e300 of hand itself", func(hand, _ *results.Record, _ *[]results.Record) { hand.Derived[KeyTimeRatio] = 1e300 },
			"line 1: record dsm-bitonic strategy=hand: derived time_ratio = 1e+300 disagrees"},
		{"congestion ratio beside the counters", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyCongestionRatio] = 2 },
			"derived congestion_ratio = 2 disagrees with the hand-optimised record of the same point in the file (2.5 from their congestion bytes)"},
		{"verified 0", func(_, fh *results.Record, _ *[]results.Record) { fh.Counters[KeyVerified] = 0 },
			"line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=fixed-home: counters verified = 0"},
		{"a negative phase time", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived["exchange_s"] = -1 },
			"derived exchange_s = -1: a time is not negative"},
		{"unit ms", func(_, fh *results.Record, _ *[]results.Record) { fh.Unit = "ms" },
			`line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=fixed-home: unit "ms": a dsm record is a time in "s"`},
		{"no hand record: the ratio stands", func(_, _ *results.Record, recs *[]results.Record) { *recs = (*recs)[1:] }, ""},
		{"a second run's hand record", func(_, _ *results.Record, recs *[]results.Record) {
			other := rec(Hand, 0.004, 1000)
			other.Derived[KeyTimeRatio] = 1
			*recs = append([]results.Record{other}, *recs...)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := []results.Record{rec(Hand, 0.002, 1000), rec("fixed-home", 0.003, 2500)}
			tc.edit(&recs[0], &recs[1], &recs)
			var buf bytes.Buffer
			for _, r := range recs {
				line, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				buf.Write(append(line, '\n'))
			}
			got, err := results.ReadJSONL(&buf)
			switch {
			case tc.want == "" && (err != nil || len(got) != len(recs)):
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
