package dsmexp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/commcost/commcost/divalib"
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
		{"mesh whose product wraps around to 4", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["mesh"] = "8589934597x2213609287470756660" },
			`mesh = "8589934597x2213609287470756660": each side is at most 16777216`},
		{"mesh that is no mesh", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["mesh"] = "2by2" }, `mesh = "2by2": accepted form is ROWSxCOLS`},
		{"ranks 7 on 2x2", func(_, fh *results.Record, _ *[]results.Record) { fh.Ranks = 7 }, `line 2: `},
		{"strategy tree-3-1", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["strategy"] = "tree-3-1" },
			`line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=tree-3-1: strategy = "tree-3-1": accepted are fixed-home`},
		{"congestion ratio -3", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyCongestionRatio] = -3 },
			"line 2: record dsm-bitonic: derived congestion_ratio = -3 is not positive"},
		{"time ratio 123456", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyTimeRatio] = 123456 },
			"line 2: record dsm-bitonic strategy=fixed-home: derived time_ratio = 123456 disagrees with the hand-optimised record of the same point (1.5 from their medians)"},
		{"time ratio 1e300 of hand itself", func(hand, _ *results.Record, _ *[]results.Record) { hand.Derived[KeyTimeRatio] = 1e300 },
			"line 1: record dsm-bitonic strategy=hand: derived time_ratio = 1e+300 with the median 0.002: the hand-optimised version's median would be 2e-303 s"},
		{"congestion ratio beside the counters", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived[KeyCongestionRatio] = 2 },
			"derived congestion_ratio = 2 disagrees with the hand-optimised record of the same point (2.5 from their congestion bytes)"},
		{"verified 0", func(_, fh *results.Record, _ *[]results.Record) { fh.Counters[KeyVerified] = 0 },
			"line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=fixed-home: counters verified = 0"},
		{"a negative phase time", func(_, fh *results.Record, _ *[]results.Record) { fh.Derived["exchange_s"] = -1 },
			"derived exchange_s = -1: a time is not negative"},
		{"unit ms", func(_, fh *results.Record, _ *[]results.Record) { fh.Unit = "ms" },
			`line 2: record dsm-bitonic keys=4096 mesh=2x2 strategy=fixed-home: unit "ms": a dsm record is a time in "s"`},
		{"keys 1e300", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["keys"] = 1e300 },
			"line 2: record dsm-bitonic: impossible parameter keys = 1e+300: must be an integer from 1 to 536870895"},
		{"keys 2^31", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["keys"] = 1 << 31 },
			"impossible parameter keys = 2147483648: must be an integer from 1 to 536870895"},
		{"keys 2^53+1", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["keys"] = 1<<53 + 1 },
			"impossible parameter keys = 9007199254740993: must be an integer from 1 to 536870895"},
		{"keys 2^62", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["keys"] = 1 << 62 },
			"impossible parameter keys = 4611686018427387904: must be"},
		{"keys 1024.5", func(_, fh *results.Record, _ *[]results.Record) { fh.Params["keys"] = 1024.5 },
			"impossible parameter keys = 1024.5: must be a whole number"},
		{"keys at the writer's bound", func(hand, fh *results.Record, _ *[]results.Record) {
			hand.Params["keys"], fh.Params["keys"] = MaxKeys, MaxKeys
		}, ""},
		{"no hand record: the ratio stands", func(_, _ *results.Record, recs *[]results.Record) { *recs = (*recs)[1:] }, ""},
		// Without the hand record a ratio is still one a hand record
		// could give: a whole number of congestion bytes from 1 up, a
		// median a record holds.
		{"nohand_congestion_above_counters", func(_, fh *results.Record, recs *[]results.Record) {
			fh.Derived[KeyCongestionRatio] = 1e9
			*recs = (*recs)[1:]
		}, "line 1: record dsm-bitonic strategy=fixed-home: derived congestion_ratio = 1e+09 with congestion_bytes = 2500: the hand-optimised version's congestion would be 2.5e-06 bytes; want congestion_bytes / a whole number of bytes >= 1, at most 2500"},
		{"nohand_congestion_fraction", func(_, fh *results.Record, recs *[]results.Record) {
			fh.Derived[KeyCongestionRatio] = 3
			*recs = (*recs)[1:]
		}, "the hand-optimised version's congestion would be 833.333 bytes"},
		{"nohand_time_ratio_1e12", func(_, fh *results.Record, recs *[]results.Record) {
			fh.Derived[KeyTimeRatio] = 1e12
			*recs = (*recs)[1:]
		}, "derived time_ratio = 1e+12 with the median 0.003: the hand-optimised version's median would be 3e-15 s; want one from 1e-12 to 1e+09 s"},
		{"nohand_time_ratio_1e-15", func(_, fh *results.Record, recs *[]results.Record) {
			fh.Derived[KeyTimeRatio] = 1e-15
			*recs = (*recs)[1:]
		}, "the hand-optimised version's median would be 3e+12 s"},
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

// TestSizeParamsBoundedOnRead: a matsquare or Barnes-Hut record whose size
// no writer runs (a block of 2^31 ints, which is no perfect square; 2^40
// bodies) is refused on read, naming the line and the parameter, with the
// writers' bounds; the largest sizes they run are read.
func TestSizeParamsBoundedOnRead(t *testing.T) {
	line := func(bench, params string) string {
		return `{"schema":1,"bench":"` + bench + `","params":` + params + `,"ranks":4,"unit":"s","n":1,"min":1e-3,"median":1e-3,"mean":1e-3,"max":1e-3,"p90":1e-3,"p99":1e-3,"ci95":[1e-3,1e-3],"meta":{}}` + "\n"
	}
	ms := func(block string) string {
		return line(BenchMatSquare, `{"strategy":"fixed-home","mesh":"2x2","block_ints":`+block+`}`)
	}
	bh := func(bodies string) string {
		return line(BenchBarnesHut, `{"strategy":"fixed-home","mesh":"2x2","phase":"total","bodies":`+bodies+`}`)
	}
	tests := []struct{ name, in, want string }{
		{"block 4096", ms("4096"), ""},
		{"block 23170^2, the largest square that fits", ms("536848900"), ""},
		{"block 2^31", ms("2147483648"), "line 1: record dsm-matsquare: impossible parameter block_ints = 2147483648: must be a perfect square"},
		{"block 1000", ms("1000"), "block_ints = 1000: must be a perfect square"},
		{"block 2^40", ms("1099511627776"), "impossible parameter block_ints = 1099511627776: must be an integer from 1 to 536870895"},
		{"block 4096^3", ms("68719476736"), "block_ints = 68719476736: must be an integer from 1 to 536870895"},
		{"block 2^63-1", ms("9223372036854775807"), "block_ints = 9223372036854775807: must be an integer from 1 to 536870895"},
		{"block 1e300", ms("1e300"), "block_ints = 1e+300: must be an integer from 1 to 536870895"},
		{"block 64.5", ms("64.5"), "block_ints = 64.5: must be a whole number"},
		{"bodies 2000", bh("2000"), ""},
		{"bodies at the bound", bh(fmt.Sprint(MaxBodies)), ""},
		{"bodies 2^31", bh("2147483648"), fmt.Sprintf("line 1: record dsm-barneshut: impossible parameter bodies = 2147483648: must be an integer from 1 to %d", MaxBodies)},
		{"bodies 2^40", bh("1099511627776"), "impossible parameter bodies = 1099511627776: must be an integer from 1 to"},
		{"bodies 2.5", bh("2.5"), "bodies = 2.5: must be a whole number"},
		// A record that names its run is that run's as Check sees it.
		{"a run's steps", bh(`2000,"theta":1,"steps":7,"measured_steps":5`), ""},
		{"measured steps beyond the steps", bh(`2000,"theta":1,"steps":7,"measured_steps":1000`),
			"on ranks = 4 no run has these parameters; its own check says: measured steps = 1000: must be in 0..7"},
		{"no measured step", bh(`2000,"theta":1,"steps":7,"measured_steps":0`), "measured_steps = 0: must be positive"},
		// The time step and softening, which older records leave out.
		{"a run's dt and eps", bh(`2000,"theta":1,"steps":7,"measured_steps":5,"dt":1,"eps":1e-300`), ""},
		{"bh_dt_beyond", bh(`2000,"theta":1,"steps":7,"measured_steps":5,"dt":5,"eps":0.05`), "impossible parameter dt = 5: must be in (0, 1]"},
		{"bh_eps_zero", bh(`2000,"theta":1,"steps":7,"measured_steps":5,"dt":0.025,"eps":0`), "impossible parameter eps = 0: must be in (0, 1]"},
		{"bh_dt_text", bh(`2000,"dt":"fast"`), `impossible parameter dt = "fast"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(tc.in))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
	if MaxBodies != 1<<31-1-2-17 {
		t.Errorf("MaxBodies = %d, want 2^31-1 less 2 and one rank's pool of 17 cells", MaxBodies)
	}
	if divalib.MaxBlockInts != MaxKeys {
		t.Errorf("a block bound %d, the keys bound %d: both are one message of 4-byte ints", divalib.MaxBlockInts, MaxKeys)
	}
}
