package results

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckValues: the one check of a record's statistics, applied by
// every reader and every writer, case by case.
func TestCheckValues(t *testing.T) {
	good := testRecords()[0]
	tests := []struct {
		name string
		edit func(r *Record)
		want string // "" accepted
	}{
		{"a measurement", func(r *Record) {}, ""},
		{"n zero", func(r *Record) { r.N = 0 }, "n = 0"},
		{"huge median", func(r *Record) {
			r.Median, r.Max, r.CI95[1], r.Mean, r.P90, r.P99 = 1e308, 1e308, 1e308, 1e308, 1e308, 1e308
		},
			"median 1e+308 is outside [0, 1e+09]"},
		{"negative median", func(r *Record) { r.Median, r.Min, r.CI95[0] = -1e-6, -2e-6, -2e-6 }, "median -1e-06 is outside"},
		{"zero time (a phase that moved nothing)", func(r *Record) { r.Median, r.Min, r.CI95[0], r.Samples = 0, 0, 0, nil }, ""},
		{"zero bandwidth", func(r *Record) { r.Unit, r.Median, r.Min, r.CI95[0] = UnitBytesPerSec, 0, 0, 0 }, "median 0 is not positive"},
		{"inverted ci", func(r *Record) { r.CI95 = [2]float64{r.CI95[1], r.CI95[0]} }, "does not contain the median"},
		{"ci beside the median", func(r *Record) { r.CI95 = [2]float64{2e-6, 3e-6} }, "does not contain the median"},
		{"median above max", func(r *Record) { r.Max = 1.5e-6 }, "not between min"},
		{"NaN derived", func(r *Record) { r.Derived = map[string]float64{"x": math.NaN()} }, `derived "x" is NaN`},
		{"bandwidth of 1e30", func(r *Record) {
			r.Unit = UnitBytesPerSec
			r.Min, r.Median, r.Max, r.Mean, r.P90, r.P99, r.CI95 = 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, [2]float64{1e30, 1e30}
		}, "the range of a value in bytes per second"},
		{"negative count", func(r *Record) { r.Unit = UnitCount; r.Min, r.CI95[0] = -1, -1 }, "min -1 is outside [0, 1e+18]"},
		{"zero count", func(r *Record) {
			r.Unit = UnitCount
			r.Min, r.Median, r.Max, r.Mean, r.P90, r.P99, r.CI95, r.Samples = 0, 0, 0, 0, 0, 0, [2]float64{}, nil
		}, ""},
		{"a mean rounded above max (three samples of 0.1 s)", func(r *Record) {
			r.Samples = nil
			r.N, r.Min, r.Median, r.Max, r.P90, r.P99, r.CI95 = 3, 0.1, 0.1, 0.1, 0.1, 0.1, [2]float64{0.1, 0.1}
			r.Mean = (0.1 + 0.1 + 0.1) / 3
		}, ""},
		{"p90, p99, mean left out (0)", func(r *Record) { r.P90, r.P99, r.Mean = 0, 0, 0 }, ""},
		{"only rank_max given", func(r *Record) { r.RankMax = 1e-6 }, ""},
		{"a negative counter (an N-body energy)", func(r *Record) { r.Counters = map[string]float64{"energy_first": -0.25} }, ""},
		{"p90 above max", func(r *Record) { r.P90 = 1 }, "p90 1 is above p99"},
		{"p99 above max", func(r *Record) { r.P99 = 1 }, "p99 1 is above max"},
		{"mean below min", func(r *Record) { r.Mean = 1e-11 }, "mean 1e-11 is not between min"},
		{"rank_min above rank_max", func(r *Record) { r.RankMin, r.RankMax = 1, 1e-6 }, "rank_min 1 is above rank_max 1e-06"},
		{"a counter of 1e300", func(r *Record) { r.Counters = map[string]float64{"bytes": 1e300} }, `counters "bytes" = 1e+300 is beyond`},
		{"ranks per host -2", func(r *Record) { r.Meta.RanksPerHost = []int{-2, 1} }, "meta ranks_per_host[0] = -2"},
		{"cores -1", func(r *Record) { r.Meta.Cores = -1 }, "meta cores = -1"},
		{"more samples than a record holds", func(r *Record) { r.Samples = make([]float64, MaxRecordElements+1) }, "samples has 1048577 entries"},
		{"samples all -1 s", func(r *Record) {
			for i := range r.Samples {
				r.Samples[i] = -1
			}
		}, "sample 1 is -1, below 0, the least value in seconds"},
		{"samples all 1e6 s (above max)", func(r *Record) {
			for i := range r.Samples {
				r.Samples[i] = 1e6
			}
		}, "sample 1 is 1e+06, outside min"},
		{"a sample below min", func(r *Record) { r.Samples[0] = r.Min / 2 }, "sample 1 is 7.4e-07, outside min"},
		{"3 samples where n = 10", func(r *Record) { r.Samples = r.Samples[:3] }, "samples holds 3 values but n = 10"},
		{"a sample at max rounded up", func(r *Record) { r.Samples[9] = r.Max * (1 + 1e-12) }, ""},
		{"aggregate bogus", func(r *Record) { r.Reduction = "bogus" }, `aggregate "bogus" is none of`},
		{"stop bogus", func(r *Record) { r.Stop = "bogus" }, `stop "bogus" is none of`},
		{"aggregate and stop left out", func(r *Record) { r.Reduction, r.Stop = "", "" }, ""},
		{"dropped 2^40 of n = 10", func(r *Record) { r.Dropped = 1 << 40 }, "has dropped = 1099511627776 but n = 10: the outliers dropped lie above the median"},
		{"dropped 11 of n = 10", func(r *Record) { r.Dropped = 11 }, "has dropped = 11 but n = 10"},
		{"dropped as many as kept", func(r *Record) { r.Dropped = 10 }, ""},
		{"a CI its samples do not give", func(r *Record) { r.CI95 = [2]float64{1.5e-6, 1.55e-6} },
			"samples have ci95 [1.48e-06, 1.9e-06] but ci95 = [1.5e-06, 1.55e-06]: a record's CI is its sorted samples number 1 and 10 of 10"},
		{"a CI of 40 samples one order statistic off", func(r *Record) {
			r.Samples = make([]float64, 40)
			for i := range r.Samples {
				r.Samples[i] = float64(i+1) * 1e-6
			}
			r.Summary = Summarize(r.Samples)
			r.CI95[1] = r.Samples[26]
		}, "samples have ci95 [1.3e-05, 2.8e-05] but ci95 = [1.3e-05, 2.7e-05]: a record's CI is its sorted samples number 13 and 28 of 40"},
		{"a CI of 40 samples as Summarize takes it", func(r *Record) {
			r.Samples = make([]float64, 40)
			for i := range r.Samples {
				r.Samples[i] = float64(40-i) * 1e-6
			}
			r.Summary = Summarize(r.Samples)
		}, ""},
		{"a CI without samples is not recomputed", func(r *Record) { r.Samples, r.CI95 = nil, [2]float64{1.5e-6, 1.55e-6} }, ""},
		{"a pingpong of rank 0's times, as its writer keeps them", func(r *Record) { r.Reduction = ReductionRank0 }, ""},
		{"a pingpong of the maximum over ranks", func(r *Record) { r.Reduction = ReductionMaxOverRanks }, `aggregate "max-over-ranks": a pingpong record's samples are always rank0`},
		{"a pingpong of window ends (pingpong takes no --sync)", func(r *Record) { r.Reduction = ReductionWindowLatestEnd }, `aggregate "window-latest-end": a pingpong record's samples are always rank0`},
		{"a pingpong of a fixed count", func(r *Record) { r.Stop = StopFixed }, `stop "fixed": a pingpong record's repetitions stop on rel-ci or max-reps or max-time`},
		{"a permutations record of rank 0's times", func(r *Record) { r.Bench, r.Reduction = "permutations", ReductionRank0 },
			`aggregate "rank0": a permutations record's samples are max-over-ranks or window-latest-end (--sync window)`},
		{"a permutations record of window ends and a fixed count", func(r *Record) {
			r.Bench, r.Reduction, r.Stop = "permutations", ReductionWindowLatestEnd, StopFixed
		}, ""},
		{"an alltoall of rank 0's wall clock", func(r *Record) { r.Bench, r.Reduction = "alltoall", ReductionRank0Wall }, `aggregate "rank0-wall": an alltoall record's samples are max-over-ranks or window-latest-end`},
		{"a server's prtt, the maximum over ranks", func(r *Record) { r.Bench, r.Reduction = "prtt", ReductionMaxOverRanks }, ""},
		{"a prtt of window ends (prtt synchronises by barrier)", func(r *Record) { r.Bench, r.Reduction = "prtt", ReductionWindowLatestEnd }, `aggregate "window-latest-end": a prtt record's samples are rank0 or max-over-ranks`},
		{"a dsm-check of rank 0's wall clock, one run", func(r *Record) { r.Bench, r.Reduction, r.Stop = "dsm-check", ReductionRank0Wall, StopFixed }, ""},
		{"a dsm-check stopped on its CI", func(r *Record) { r.Bench, r.Reduction, r.Stop = "dsm-check", ReductionRank0Wall, StopRelCI }, `stop "rel-ci": a dsm-check record's repetitions stop on fixed`},
		{"a dsm-overhead of rank 0's accesses", func(r *Record) { r.Bench, r.Reduction, r.Stop = "dsm-overhead", ReductionRank0, StopFixed }, ""},
		{"a dsm-bitonic cut short by --max-time", func(r *Record) { r.Bench, r.Reduction, r.Stop = "dsm-bitonic", ReductionMaxOverRanks, StopMaxTime }, ""},
		{"an application phase of rank 0's times", func(r *Record) { r.Bench, r.Reduction = BenchApp, ReductionRank0 }, `aggregate "rank0": an app record's samples are always max-over-ranks`},
		{"a sched.time record with an aggregate", func(r *Record) { r.Bench, r.Reduction, r.Stop = "sched.time", ReductionMaxOverRanks, StopFixed },
			`aggregate "max-over-ranks": a sched.time record is no reduction over ranks, its writer leaves the aggregate out`},
		{"a sched.time record as written: no aggregate, a fixed count", func(r *Record) { r.Bench, r.Reduction, r.Stop = "sched.time", "", StopFixed }, ""},
		{"a bench no writer of commcost names: any aggregate", func(r *Record) { r.Bench, r.Reduction, r.Stop = "handmade", ReductionRank0Wall, StopFixed }, ""},
		{"ci95[0] below min", func(r *Record) { r.CI95[0] = r.Min / 2 }, "is not within min"},
		{"ci95[1] above max", func(r *Record) { r.CI95[1] = r.Max * 2 }, "is not within min"},
		{"ci95 [min, max] (fewer than 6 repetitions)", func(r *Record) { r.CI95 = [2]float64{r.Min, r.Max} }, ""},
		{"ranks_per_host summing above ranks (a calibration's pair on a larger launch)", func(r *Record) {
			r.Meta.Hosts, r.Meta.RanksPerHost = []string{"vm"}, []int{5}
		}, ""},
		{"ranks_per_host summing below ranks", func(r *Record) {
			r.Meta.Hosts, r.Meta.RanksPerHost = []string{"vm"}, []int{1}
		}, "meta ranks_per_host sums to 1 but ranks = 2"},
		{"ranks_per_host summing to ranks over two hosts", func(r *Record) { r.Meta.RanksPerHost = []int{1, 1} }, ""},
		{"samples in reverse order", func(r *Record) { slices.Reverse(r.Samples) }, ""},
		{"samples of another median", func(r *Record) { r.Samples[4], r.Samples[5] = 1.51e-6, 1.51e-6 }, "samples have median 1.515e-06 but median = 1.52e-06"},
		{"samples of another mean", func(r *Record) { r.Samples[8] = 1.55e-6 }, "samples have mean 1.558e-06 but mean = 1.563e-06"},
		{"samples of another max", func(r *Record) { r.Samples[9] = 1.6e-6 }, "samples have max 1.6e-06 but max = 1.9e-06"},
		{"samples of another min", func(r *Record) { r.Samples[0] = 1.5e-6 }, "samples have min 1.5e-06 but min = 1.48e-06"},
		{"a mean off by a rounding", func(r *Record) { r.Mean *= 1 + 1e-13 }, ""},
		{"negative fitted coefficient", func(r *Record) {
			r.Unit = "s/(d*n*ln(d))"
			r.Samples = nil
			r.Min, r.Median, r.Max, r.Mean, r.P90, r.P99, r.CI95 = -1e-9, -1e-9, -1e-9, -1e-9, -1e-9, -1e-9, [2]float64{-2e-9, 0}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			r.Derived = map[string]float64{"latency_s": 0.76e-6}
			r.Samples = slices.Clone(good.Samples) // edited in place by some cases
			tc.edit(&r)
			err := r.CheckValues()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			// Refused on write, and on read naming the line.
			if _, werr := MarshalRecord(r); werr == nil {
				t.Errorf("written")
			}
		})
	}
}

// TestReadRefusesImpossibleRecords: a file with an impossible record
// (written by hand, or by another tool) is refused by the reader, naming
// the line: 1e308 medians, negative medians, an inverted CI, n = 0. A
// case without a message is a possible record, which the reader accepts.
func TestReadRefusesImpossibleRecords(t *testing.T) {
	ok := `{"schema":1,"bench":"pingpong","params":{"bytes":8},"ranks":2,"unit":"s","n":3,"min":1e-6,"median":2e-6,"max":3e-6,"ci95":[1e-6,3e-6],"meta":{}}`
	tests := []struct{ name, from, to, want string }{
		{"1e308 median", `"median":2e-6,"max":3e-6,"ci95":[1e-6,3e-6]`, `"median":1e308,"max":1e308,"ci95":[1e-6,1e308]`, "line 2: record pingpong bytes=8: median 1e+308"},
		{"negative median", `"min":1e-6,"median":2e-6`, `"min":-3e-6,"median":-2e-6`, "line 2: record pingpong bytes=8: median -2e-06"},
		{"inverted ci", `"ci95":[1e-6,3e-6]`, `"ci95":[3e-6,1e-6]`, "line 2: record pingpong bytes=8: ci95 [3e-06, 1e-06] does not contain"},
		{"n zero", `"n":3`, `"n":0`, "line 2: record pingpong bytes=8 has n = 0"},
		{"repetitions of 5e8 s", `"n":3,"min":1e-6,"median":2e-6,"max":3e-6,"ci95":[1e-6,3e-6]`,
			`"n":891,"min":5e8,"median":5e8,"max":5e8,"ci95":[5e8,5e8]`, "line 2: record pingpong bytes=8: its n = 891 repetitions (min 5e+08 s, median 5e+08 s) took at least 4.46e+11 s"},
		{"half the repetitions beyond the bound", `"n":3,"min":1e-6,"median":2e-6,"max":3e-6,"ci95":[1e-6,3e-6]`,
			`"n":3,"min":1e-6,"median":6e8,"max":6e8,"ci95":[1e-6,6e8]`, "took at least 1.2e+09 s together"},
		{"1e15 ranks", `"ranks":2`, `"ranks":1000000000000000`, "line 2: record pingpong bytes=8: ranks = 1000000000000000 is beyond 16777216"},
		{"a string of more than 1 MiB", `"bench":"pingpong","params":{"bytes":8}`, `"bench":"pingpong","params":{"bytes":8,"pad":"` + strings.Repeat("y", MaxStringBytes+1) + `"}`,
			"line 2: too large: a string longer than 1 MiB at byte 58"},
		{"a time below a picosecond", `"min":1e-6,"median":2e-6`, `"min":1e-300,"median":2e-300`, "line 2: record pingpong bytes=8: median 2e-300 s is shorter than 1e-12 s"},
		{"1001 params", `"params":{"bytes":8}`, `"params":{"bytes":8` + manyKeys(MaxRecordKeys) + `}`, "line 2: record pingpong: params has 1001 entries, more than the 1000"},
		{"1001 derived", `"meta":{}`, `"meta":{},"derived":{"a":1` + manyKeys(MaxRecordKeys) + `}`, "derived has 1001 entries"},
		{"ranks not a whole number", `"ranks":2`, `"ranks":1e9`, "line 2: not a JSON record: field ranks: the number 1e9 is not a whole number"},
		{"p90 above max", `"max":3e-6`, `"max":3e-6,"p90":1`, "line 2: record pingpong bytes=8: p90 1 is above max 3e-06"},
		{"p90 below the median", `"max":3e-6`, `"max":3e-6,"p90":1.5e-6`, "median 2e-06 is above p90 1.5e-06"},
		{"p99 below p90", `"max":3e-6`, `"max":3e-6,"p90":2.5e-6,"p99":2.2e-6`, "p90 2.5e-06 is above p99 2.2e-06"},
		{"mean below min", `"max":3e-6`, `"max":3e-6,"mean":1e-11`, "line 2: record pingpong bytes=8: mean 1e-11 is not between min 1e-06 and max 3e-06"},
		{"mean above max", `"max":3e-6`, `"max":3e-6,"mean":5`, "mean 5 is not between min"},
		{"rank_min above rank_max", `"max":3e-6`, `"max":3e-6,"rank_min":1,"rank_avg":2e-6,"rank_max":2e-6`, "rank_min 1 is above rank_avg 2e-06"},
		{"rank_avg above rank_max", `"max":3e-6`, `"max":3e-6,"rank_avg":3e-6,"rank_max":2e-6`, "rank_avg 3e-06 is above rank_max 2e-06"},
		{"counter of 1e300", `"meta":{}`, `"meta":{},"counters":{"bytes_sent":1e300}`, `line 2: record pingpong bytes=8: counters "bytes_sent" = 1e+300 is beyond 1e+18 in absolute value`},
		{"counter of -1e300", `"meta":{}`, `"meta":{},"counters":{"energy":-1e300}`, `counters "energy" = -1e+300 is beyond 1e+18`},
		{"ranks per host -2", `"meta":{}`, `"meta":{"hosts":["h"],"ranks_per_host":[-2]}`, "line 2: record pingpong bytes=8: meta ranks_per_host[0] = -2: a host runs 1 to 16777216 ranks"},
		{"ranks per host 0", `"meta":{}`, `"meta":{"hosts":["h","g"],"ranks_per_host":[1,0]}`, "meta ranks_per_host[1] = 0"},
		{"ranks per host not parallel to hosts", `"meta":{}`, `"meta":{"hosts":["h","g"],"ranks_per_host":[2]}`, "meta has 2 hosts but 1 ranks_per_host entries"},
		{"host name of 256 bytes", `"meta":{}`, `"meta":{"hosts":["` + strings.Repeat("h", 256) + `"],"ranks_per_host":[2]}`, `line 2: record pingpong bytes=8: meta hosts[0] "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh..." is 256 bytes: a host name is at most 255`},
		{"host name of 255 bytes", `"meta":{}`, `"meta":{"hosts":["` + strings.Repeat("h", 255) + `"],"ranks_per_host":[2]}`, ""},
		{"cores -1", `"meta":{}`, `"meta":{"cores":-1}`, "line 2: record pingpong bytes=8: meta cores = -1: want 0 (unknown) to 16777216"},
		{"gomaxprocs -3", `"meta":{}`, `"meta":{"gomaxprocs":-3}`, "meta gomaxprocs = -3"},
		{"load average -1", `"meta":{}`, `"meta":{"load1":-1}`, "meta load1 = -1: a load average is a number from 0 to 1e+18"},
		{"ci95 of 3 elements", `"ci95":[1e-6,3e-6]`, `"ci95":[1e-6,3e-6,5]`, "line 2: field ci95: an array of 3 elements at byte 123, not 2"},
		{"ci95 of 1 element", `"ci95":[1e-6,3e-6]`, `"ci95":[1e-6]`, "field ci95: an array of 1 elements"},
		{"ci95 empty", `"ci95":[1e-6,3e-6]`, `"ci95":[ ]`, "field ci95: an array of 0 elements"},
		{"ci95 below min", `"ci95":[1e-6,3e-6]`, `"ci95":[5e-7,3e-6]`, "line 2: record pingpong bytes=8: ci95 [5e-07, 3e-06] is not within min 1e-06 and max 3e-06"},
		{"samples fewer than n", `"meta":{}`, `"meta":{},"samples":[1e-6,2e-6]`, "samples holds 2 values but n = 3"},
		{"a sample above max", `"meta":{}`, `"meta":{},"samples":[1e-6,2e-6,1e6]`, "sample 3 is 1e+06, outside min 1e-06 and max 3e-06"},
		{"samples of another median", `"meta":{}`, `"meta":{},"samples":[1e-6,1e-6,3e-6]`, "line 2: record pingpong bytes=8: samples have median 1e-06 but median = 2e-06"},
		{"samples of another mean", `"max":3e-6`, `"max":3e-6,"mean":2.5e-6,"samples":[3e-6,1e-6,2e-6]`, "line 2: record pingpong bytes=8: samples have mean 2e-06 but mean = 2.5e-06"},
		{"samples in reverse order", `"meta":{}`, `"meta":{},"samples":[3e-6,2e-6,1e-6]`, ""},
		{"samples and their mean", `"max":3e-6`, `"max":3e-6,"mean":2e-6,"samples":[2e-6,3e-6,1e-6]`, ""},
		{"ranks per host summing below ranks", `"meta":{}`, `"meta":{"hosts":["vm"],"ranks_per_host":[1]}`, "line 2: record pingpong bytes=8: meta ranks_per_host sums to 1 but ranks = 2"},
		{"ranks per host summing to ranks", `"meta":{}`, `"meta":{"hosts":["h","g"],"ranks_per_host":[1,1]}`, ""},
		{"ranks per host summing above ranks (a pair of a larger launch)", `"meta":{}`, `"meta":{"hosts":["vm"],"ranks_per_host":[5]}`, ""},
		{"aggregate bogus", `"meta":{}`, `"meta":{},"aggregate":"bogus"`, `line 2: record pingpong bytes=8: aggregate "bogus" is none of max-over-ranks`},
		{"stop bogus", `"meta":{}`, `"meta":{},"stop":"bogus"`, `stop "bogus" is none of rel-ci`},
		{"hosts beyond the element bound", `"meta":{}`, `"meta":{"hosts":[` + manyItems(`"a"`, MaxRecordElements+1) + `]}`,
			"line 2: too large: the array meta.hosts at byte 151 has more than 1048576 elements"},
		{"samples beyond the element bound", `"meta":{}`, `"meta":{},"samples":[` + manyItems("1e-6", MaxRecordElements+1) + `]`, "the array samples at byte"},
		{"command beyond the element bound", `"meta":{}`, `"meta":{"command":[` + manyItems(`"x"`, MaxRecordElements+1) + `]}`, "the array meta.command at byte"},
		{"ranks per host beyond the element bound", `"meta":{}`, `"meta":{"ranks_per_host":[` + manyItems("1", MaxRecordElements+1) + `]}`, "the array meta.ranks_per_host at byte"},
		{"an unknown field's array beyond the bound", `"meta":{}`, `"meta":{},"extra":{"list":[` + manyItems("0", MaxRecordElements+1) + `]}`, "the array extra.list at byte"},
		// A member no record has is refused by name, not read as absent.
		{"an unknown top-level key", `"meta":{}`, `"meta":{},"note":"rerun"`, "line 2: field note: no field of a record (its fields: schema, bench, params,"},
		{"a misspelt top-level key", `"meta":{}`, `"meta":{},"sampels":[1e-6,2e-6,3e-6]`, "line 2: field sampels: no field of a record"},
		{"an unknown meta key", `"meta":{}`, `"meta":{"backend":"native","colour":"red"}`, "line 2: field meta.colour: no field of a record's meta (its fields: commit,"},
		{"an unknown meta key holding null", `"meta":{}`, `"meta":{"launch_id":null}`, "line 2: field meta.launch_id: no field of a record's meta"},
		{"an unknown workload item key", `"meta":{}`, `"meta":{},"workload":[{"count":1,"bench":"b","params":{"a":1},"weight":2}]`, "line 2: field workload[].weight: no field of a workload item (its fields: count, bench, params, ranks, view)"},
		// Keys are matched exactly and once: the decoder would take
		// "MEDIAN" for median, and the last of two medians.
		{"a key in upper case beside its field", `"meta":{}`, `"meta":{},"MEDIAN":2.5e-6`, `line 2: field MEDIAN: no field of a record: keys are case-sensitive, and the field is "median"`},
		{"a key in mixed case alone", `"median":2e-6`, `"Median":2e-6`, `field Median: no field of a record: keys are case-sensitive, and the field is "median"`},
		{"a meta key in another case", `"meta":{}`, `"meta":{"Backend":"local"}`, `line 2: field meta.Backend: no field of a record's meta: keys are case-sensitive, and the field is "backend"`},
		{"a derived object in another case", `"meta":{}`, `"meta":{},"Derived":{"round_trip_s":1}`, `field Derived: no field of a record: keys are case-sensitive, and the field is "derived"`},
		{"a workload key in another case", `"meta":{}`, `"meta":{},"workload":[{"count":1,"bench":"b","params":{"a":1},"Count":2}]`, `field workload[].Count: no field of a workload item: keys are case-sensitive, and the field is "count"`},
		{"median given twice", `"median":2e-6`, `"median":2e-6,"median":2.5e-6`, "line 2: field median: the key is given twice in one object (again at byte 105)"},
		{"a key given twice, once escaped", `"median":2e-6`, `"median":2e-6,"\u006dedian":2.5e-6`, "field median: the key is given twice in one object"},
		{"a meta key given twice", `"meta":{}`, `"meta":{"backend":"native","backend":"local"}`, "line 2: field meta.backend: the key is given twice in one object"},
		{"a param given twice", `"params":{"bytes":8}`, `"params":{"bytes":8,"bytes":16}`, "line 2: field params.bytes: the key is given twice in one object"},
		{"a derived key given twice", `"meta":{}`, `"meta":{},"derived":{"a_s":1,"a_s":2}`, "field derived.a_s: the key is given twice"},
		// meta.backend is one commcost writes, in its case: the readers
		// that refuse local records compare it exactly.
		{"backend Local", `"meta":{}`, `"meta":{"backend":"Local"}`, `line 2: record pingpong bytes=8: meta backend "Local" is none commcost writes; accepted (exact case): native, local, replay, none, or the key left out`},
		{"backend made up", `"meta":{}`, `"meta":{"backend":"quantum"}`, `meta backend "quantum" is none commcost writes`},
		{"backend local", `"meta":{}`, `"meta":{"backend":"local"}`, ""},
		{"backend replay", `"meta":{}`, `"meta":{"backend":"replay"}`, ""},
		{"backend none", `"meta":{}`, `"meta":{"backend":"none"}`, ""},
		{"the same key in two objects", `"meta":{}`, `"meta":{"seed":1},"derived":{"seed":1}`, ""},
		{"workload params beyond the member bound", `"meta":{}`, `"meta":{},"workload":[{"count":1,"bench":"b","params":{"a":1` + manyKeys(MaxRecordElements) + `}}]`,
			"the object workload[].params at byte"},
	}
	if _, err := ReadJSONL(strings.NewReader(ok + "\n")); err != nil {
		t.Fatalf("the good record is refused: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(ok, tc.from, tc.to, 1)
			if bad == ok {
				t.Fatal("the case edits nothing")
			}
			_, err := ReadJSONL(strings.NewReader(ok + "\n" + bad + "\n"))
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadersRefuseNonRegularFiles: every reader of a path (records,
// models, matrices) and the --out appender refuse a FIFO, a device, a
// socket and a directory at once instead of blocking on them or reading
// without end; a regular file and a symbolic link to one are read.
func TestReadersRefuseNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(regular, writeJSONL(t, testRecords()[:1]), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tests := []struct {
		name, path, want string // want "" for accepted
	}{
		{"regular file", regular, ""},
		{"symbolic link to a regular file", link, ""},
		{"FIFO with no writer", fifo, "is a named pipe (FIFO), not a regular file"},
		{"character device", "/dev/zero", "is a character device, not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
		// /proc's files stat as regular (some of size 0) and some block
		// a read forever (/proc/kmsg); none is data.
		{"a file of /proc", "/proc/self/status", "of the kernel's proc filesystem"},
	}
	readers := []struct {
		name string
		read func(path string) error
	}{
		{"ReadRecordsFile", func(p string) error { _, _, err := ReadRecordsFile(p); return err }},
		{"ReadRegularFile", func(p string) error { _, err := ReadRegularFile(p, 1<<20); return err }},
		{"AppendJSONL", func(p string) error {
			w, err := AppendJSONL(p)
			if err == nil {
				w.Close()
			}
			return err
		}},
	}
	for _, rd := range readers {
		for _, tc := range tests {
			if rd.name == "AppendJSONL" && tc.path == "/dev/zero" {
				tc.path = "/dev/full" // a device that takes writes, and fails them
			}
			if rd.name == "AppendJSONL" && tc.path == "/proc/self/status" {
				tc.path = "/proc/self/comm" // writable by its owner; refused before any write
			}
			t.Run(rd.name+"/"+tc.name, func(t *testing.T) {
				done := make(chan error, 1)
				go func() { done <- rd.read(tc.path) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s blocked on %s", rd.name, tc.path)
				}
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("refused: %v", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("error %v, want %q", err, tc.want)
				}
			})
		}
	}
}

// TestAppendRefusesKernelFS: a new records file on one of the kernel's
// filesystems (/dev's devtmpfs takes one as any tmpfs would) is refused
// before it is created; /tmp stays a place for records.
func TestAppendRefusesKernelFS(t *testing.T) {
	for _, tc := range []struct{ name, path, want string }{
		{"new file on devtmpfs", "/dev/commcost-hostile.jsonl", "a file of the kernel's devtmpfs filesystem"},
		{"new file on proc", "/proc/self/commcost.jsonl", "a file of the kernel's proc filesystem"},
		{"new file on sysfs", "/sys/kernel/commcost.jsonl", "a file of the kernel's sysfs filesystem"},
		{"new file in a temporary directory", filepath.Join(t.TempDir(), "r.jsonl"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := AppendJSONL(tc.path)
			if err == nil {
				w.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if _, serr := os.Stat(tc.path); tc.want != "" && serr == nil {
				os.Remove(tc.path)
				t.Errorf("%s was created", tc.path)
			}
		})
	}
}

// TestReadBoundsLines: a line longer than the bound is refused before it
// is read whole (a file that is one endless line); lines up to it are read.
func TestReadBoundsLines(t *testing.T) {
	line := writeJSONL(t, testRecords()[:1])
	tests := []struct {
		name  string
		input []byte
		max   int
		want  string
	}{
		{"record within the bound", line, len(line), ""},
		{"record one byte over", line, len(line) - 1, "line 1: too large: a line longer than"},
		{"endless line without newline", bytes.Repeat([]byte("x"), 1<<16), 1 << 12, "line 1: too large"},
		{"second line too long", append(append([]byte{}, line...), bytes.Repeat([]byte(" "), 1<<12)...), len(line) + 100, "line 2: too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readJSONL(bytes.NewReader(tc.input), tc.max)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrTooLarge)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ReadRegularFile(writeTemp(t, bytes.Repeat([]byte("x"), 2048)), 1024); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadRegularFile of 2 KiB with a bound of 1 KiB: %v", err)
	}
}

// TestLongString: the scan that finds a string beyond MaxStringBytes
// before a line is decoded counts escapes as written and does not take
// an escaped quote for the string's end.
func TestLongString(t *testing.T) {
	tests := []struct {
		name string
		line string
		want int
	}{
		{"short strings", `{"a":"bc","d":"ef"}`, -1},
		{"at the bound", `{"a":"1234"}`, -1},
		{"one over", `{"a":"12345"}`, 5},
		{"escaped quote inside", `{"a":"1\"2345"}`, 5},
		{"escaped backslash ends the string", `{"a":"1\\","b":"x"}`, -1},
		{"unterminated", `{"a":"123456`, 5},
		{"numbers are no strings", `{"s":[1234567,1234567]}`, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := longString([]byte(tc.line), 4); got != tc.want {
				t.Errorf("longString(%s, 4) = %d, want %d", tc.line, got, tc.want)
			}
		})
	}
}

// TestScanBounds: the scan before decoding finds an array or object
// beyond its bound whatever strings, escapes and nesting surround it, and
// names its field; one at the bound passes.
func TestScanBounds(t *testing.T) {
	tests := []struct {
		name, line string
		want       string // "kind field at", "" for none
	}{
		{"at the bound", `{"a":[1,2,3],"b":{"x":1,"y":2,"z":3}}`, ""},
		{"an array one over", `{"a":[1,2,3,4]}`, "array a 5"},
		{"an object one over", `{"o":{"w":1,"x":2,"y":3,"z":4}}`, "object o 5"},
		{"the top object", `{"a":1,"b":2,"c":3,"d":4}`, "object  0"},
		{"nested under an object", `{"meta":{"hosts":["a","b","c","d"]}}`, "array meta.hosts 17"},
		{"inside an array's object", `{"workload":[{"params":{"a":1,"b":2,"c":3,"d":4}}]}`, "object workload[].params 23"},
		{"commas inside strings are no elements", `{"a":["x,y,z,w,v"]}`, ""},
		{"an escaped quote does not end a string", `{"a":["x\",\",\",\""]}`, ""},
		{"an escaped backslash ends it", `{"a":["x\\",1,2,3]}`, "array a 5"},
		{"an escaped key", `{"k\"ey":[1,2,3,4]}`, `array k\"ey 9`},
		{"numbers and literals", `{"a":[true,false,null],"b":[1e-6,2.5]}`, ""},
		{"ci95 of 3 at the top", `{"ci95":[1,2,3]}`, "length ci95 8"},
		{"ci95 of 2 at the top", `{"ci95":[1,2]}`, ""},
		{"a nested ci95 is no record's", `{"p":{"ci95":[1,2,3]}}`, ""},
		{"not JSON", `,,,,,,`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if b := scanBounds([]byte(tc.line), 100, 3); b != nil {
				got = fmt.Sprintf("%s %s %d", b.kind, b.field, b.at)
			}
			if got != tc.want {
				t.Errorf("scanBounds(%s) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
	deep := strings.Repeat("[", maxNesting+1)
	if b := scanBounds([]byte(deep), 100, 3); b == nil || b.kind != "nesting" {
		t.Errorf("%d nested arrays: %+v", maxNesting+1, b)
	}
}

// BenchmarkScanBounds is the scan's cost on a pattern record as commcost
// writes it (a ping-pong with its metadata and 64 samples), next to
// decoding the same line: the scan runs before every decode.
func BenchmarkScanBounds(b *testing.B) {
	rec := testRecords()[0]
	rec.Samples = make([]float64, 64)
	for i := range rec.Samples {
		rec.Samples[i] = 1.48e-6 + float64(i)*1.3e-9
	}
	line, err := MarshalRecord(rec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if scanBounds(line, MaxStringBytes, MaxRecordElements) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, err := parseRecordLine(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReadChecksDemand: a records file whose records this process could
// not hold (ReadFactor times its size, or the factor a command states beyond the available memory:
// MemAvailable, a cgroup, ulimit -v) is refused before it is read, with
// the sizes and the bound in the message, not left to the runtime's
// fatal "out of memory".
func TestReadChecksDemand(t *testing.T) {
	path := writeTemp(t, writeJSONL(t, testRecords()[:1]))
	size := int64(len(writeJSONL(t, testRecords()[:1])))
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	tests := []struct {
		name  string
		avail int64
		known bool
		want  string
	}{
		{"room for it", ReadFactor * size, true, ""},
		{"one byte short", ReadFactor*size - 1, true, "too large: reading its"},
		{"nothing left", 0, true, "more than this process may take (the limit allows 0 B (the address-space limit RLIMIT_AS"},
		{"unknown: no check", 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			availableMemory = func() (int64, string, bool) {
				return tc.avail, "the address-space limit RLIMIT_AS (ulimit -v)", tc.known
			}
			recs, err := ReadJSONLFile(path)
			switch {
			case tc.want == "" && (err != nil || len(recs) != 1):
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrTooLarge) || recs != nil):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadDemandFactor: a command that builds more than the records
// (fit, compare, report) states its own factor, and the file is refused
// when that many times its size is beyond the available memory although
// the records alone would fit; a factor below ReadFactor counts as it.
func TestReadDemandFactor(t *testing.T) {
	path := writeTemp(t, writeJSONL(t, testRecords()[:1]))
	size := float64(len(writeJSONL(t, testRecords()[:1])))
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	tests := []struct {
		name   string
		factor float64
		avail  float64
		want   string
	}{
		{"room for a report", 8, 8 * size, ""},
		{"room for the records, not the report", 8, 8*size - 1, "and what this command builds from them needs about"},
		{"the factor is named", 4.5, 4 * size, "(4.5 times the file)"},
		{"a factor below ReadFactor counts as ReadFactor", 1, ReadFactor*size - 1, "reading its"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			availableMemory = func() (int64, string, bool) { return int64(tc.avail), "a test's limit", true }
			recs, _, err := ReadRecordsFileDemand(path, tc.factor)
			switch {
			case tc.want == "" && (err != nil || len(recs) != 1):
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrTooLarge)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadEscapesStrings: every string of a record read from a file
// reaches its readers with control characters escaped (Printable), so no
// table, terminal, report or plot title receives a raw escape sequence;
// clean records read back unchanged.
func TestReadEscapesStrings(t *testing.T) {
	line := `{"schema":1,"bench":"pp","params":{"op\u001b[31m":"r\u001b[0m"},"ranks":2,"unit":"s","n":1,"min":1e-6,"median":1e-6,"max":1e-6,"ci95":[1e-6,1e-6],` +
		`"derived":{"x\u202e":1},"meta":{"hosts":["h\u001b[31mred"],"command":["a\nb"],"cpu":"c\u0000"}}`
	recs, err := ReadJSONL(strings.NewReader(line + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	tests := []struct{ field, got, want string }{
		{"param value", r.Params[`op\x1b[31m`].(string), `r\x1b[0m`},
		{"host", r.Meta.Hosts[0], `h\x1b[31mred`},
		{"command", r.Meta.Command[0], `a\nb`},
		{"cpu", r.Meta.CPU, `c\x00`},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.field, tc.got, tc.want)
		}
	}
	if _, ok := r.Derived[`x\u202e`]; !ok {
		t.Errorf("derived keys %v", r.Derived)
	}
	if got := Printable(Printable("a\x1bb")); got != `a\x1bb` {
		t.Errorf("Printable is not idempotent: %q", got)
	}
}

// TestBenchNames: a bench no writer writes is refused when it is a
// writer's bench misspelt (case, punctuation) or not of a bench name's
// form (a path, a control character: escaped in the message); another
// well-formed name passes, as a newer writer's bench.
func TestBenchNames(t *testing.T) {
	for _, tc := range []struct{ bench, want string }{
		{"PingPong", `bench "PingPong": commcost's writers spell it "pingpong"`},
		{"sched_comm", `spell it "sched.comm"`},
		{"dsm.check", `spell it "dsm-check"`},
		{"../../x", "a bench name is lower-case words"},
		{`pp\u001b]0;PWNED\u0007`, `bench "pp\x1b]0;PWNED\a": a bench name is lower-case words`},
		{"", "record has no bench name"},
		{"futurebench", ""},
		{"my-bench.v2", ""},
	} {
		line := `{"schema":1,"bench":"` + tc.bench + `","ranks":2,"unit":"s","n":1,"min":1e-6,"median":1e-6,"max":1e-6,"ci95":[1e-6,1e-6]}`
		_, err := ReadJSONL(strings.NewReader(line + "\n"))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("bench %q refused: %v", tc.bench, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("bench %q: error %v, want %q", tc.bench, err, tc.want)
		case err != nil && strings.ContainsAny(err.Error(), "\x1b\a"):
			t.Errorf("a raw control character in %q", err)
		}
	}
}

// TestDistinctFiles: one file given twice, under any name, is refused.
func TestDistinctFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link, hard := filepath.Join(dir, "link.jsonl"), filepath.Join(dir, "hard.jsonl")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths []string
		want  string
	}{
		{"two files", []string{a, b}, ""},
		{"one file twice", []string{a, b, a}, a + " is given twice"},
		{"another spelling", []string{a, dir + "/./a.jsonl"}, "are the same file"},
		{"a symbolic link", []string{link, a}, "are the same file"},
		{"a hard link", []string{a, hard}, "are the same file"},
		{"a missing file", []string{a, filepath.Join(dir, "nope")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := DistinctFiles(tc.paths)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("DistinctFiles: %v, want %q", err, tc.want)
			}
		})
	}
}

// manyKeys is n JSON object entries ,"k0":0,"k1":0,...
// manyItems is n copies of item separated by commas.
func manyItems(item string, n int) string {
	return strings.Repeat(item+",", n-1) + item
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":0`, i)
	}
	return b.String()
}

// TestReadBoundsDistinctKeys: records each within MaxRecordKeys that name
// more distinct keys together than a table can hold are refused at the
// line that passes the bound.
func TestReadBoundsDistinctKeys(t *testing.T) {
	rec := func(i int) string {
		var b strings.Builder
		for k := range 600 {
			fmt.Fprintf(&b, `,"r%dk%d":0`, i, k)
		}
		return `{"schema":1,"bench":"pingpong","params":{"bytes":8` + b.String() + `},"ranks":2,"unit":"s","n":3,"min":1e-6,"median":2e-6,"max":3e-6,"ci95":[1e-6,3e-6],"meta":{}}`
	}
	if _, err := ReadJSONL(strings.NewReader(rec(0) + "\n")); err != nil {
		t.Fatalf("one record of 601 keys is refused: %v", err)
	}
	_, err := ReadJSONL(strings.NewReader(rec(0) + "\n" + rec(1) + "\n"))
	if want := "line 2: too large: the records so far name 1201 distinct"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
