package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/results"
)

// TestImpossibleRecordsRefused: every command that reads records refuses
// a file whose records no run can have written, before measuring or
// printing anything: exit 2, one message naming the file, the line and
// the field. The cases are the shapes of hand-made or corrupt files a
// reader would otherwise show as results.
func TestImpossibleRecordsRefused(t *testing.T) {
	dir, _ := badInputDir(t)
	pp := func(ranks, n, median string) string {
		return `{"schema":1,"bench":"pingpong","params":{"bytes":8,"iters":10},"ranks":` + ranks + `,"unit":"s","n":` + n +
			`,"min":` + median + `,"median":` + median + `,"max":` + median + `,"ci95":[` + median + `,` + median + `],"meta":{}}`
	}
	bitonic := func(mesh, ranks, strategy, ratio string) string {
		return `{"schema":1,"bench":"dsm-bitonic","params":{"keys":4096,"mesh":"` + mesh + `","strategy":"` + strategy + `"},"ranks":` + ranks +
			`,"unit":"s","n":1,"min":0.002,"median":0.002,"max":0.002,"ci95":[0.002,0.002],"derived":{"time_ratio":` + ratio + `},"meta":{}}`
	}
	xbcast := workloadJSON(t, &apps.Gauss{N: 64, Matrix: "dd"}, 2, "xbcast")
	app := func(pred, perr string) string {
		return `{"schema":1,"bench":"app","params":{"app":"gauss","phase":"xbcast","kind":"comm","matrix":"dd","n":64,"variant":"async"},"ranks":2,"unit":"s","n":1,` +
			`"min":4e-4,"median":4e-4,"max":4e-4,"ci95":[4e-4,4e-4],"derived":{"measured_s":4e-4,"pred_hockney_s":` + pred + `,"pred_err_hockney":` + perr + `},` + xbcast + `"meta":{}}`
	}
	file := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.jsonl", pp("2", "3", "1e-6"))
	// edit is line with from replaced by to, once; a case that edits
	// nothing is a mistake in the table.
	edit := func(line, from, to string) string {
		out := strings.Replace(line, from, to, 1)
		if out == line {
			t.Fatalf("%q is not in %s", from, line)
		}
		return out
	}
	pp2 := pp("2", "3", "2e-6")
	withDerived := func(derived string) string { return edit(pp2, `"meta":{}`, `"derived":`+derived+`,"meta":{}`) }
	withMeta := func(meta string) string { return edit(pp2, `"meta":{}`, `"meta":`+meta) }
	withCounters := func(counters string) string { return edit(pp2, `"meta":{}`, `"counters":`+counters+`,"meta":{}`) }
	schedComm := func(derived string) string {
		return `{"schema":1,"bench":"sched.comm","params":{"d":2,"gen":"fig7","matrix":0,"bytes":16,"scheduler":"CGM"},"ranks":8,"unit":"s",` +
			`"n":3,"min":1e-5,"median":2e-5,"max":3e-5,"ci95":[1e-5,3e-5],"derived":` + derived + `,"meta":{}}`
	}
	// spread is a ping-pong of three repetitions 1, 2 and 3 us; a file of
	// it with its samples in reverse order and a launch larger than its
	// ranks is the accepted side of the samples' refusals below.
	spread := edit(edit(pp2, `"min":2e-6`, `"min":1e-6`), `"max":2e-6,"ci95":[2e-6,2e-6]`, `"max":3e-6,"mean":2e-6,"ci95":[1e-6,3e-6]`)
	withSamples := func(samples string) string { return edit(spread, `"meta":{}`, `"samples":`+samples+`,"meta":{}`) }
	goodSamples := file("sb_good.jsonl", edit(withSamples(`[3e-6,2e-6,1e-6]`), `"meta":{}`, `"meta":{"hosts":["vm"],"ranks_per_host":[5]}`))
	runDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file(filepath.Join("run", "records.jsonl"), pp2, withDerived(`{"round_trip_s":5}`))
	// dirWith is a run directory named name holding lines as its records.
	dirWith := func(name string, lines ...string) string {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		file(filepath.Join(name, "records.jsonl"), lines...)
		return filepath.Join(dir, name)
	}
	checkBadInputs(t, dir, []badInput{
		{"calibration of 5e8 s repetitions", []string{"app", "gauss", "--backend", "local", "--np", "2", "--n", "64", "--calibration", file("cal_e8.jsonl", pp("2", "891", "5e8"))},
			"--calibration " + filepath.Join(dir, "cal_e8.jsonl") + ": results: " + filepath.Join(dir, "cal_e8.jsonl") + ": line 1: record pingpong bytes=8 iters=10: its n = 891 repetitions"},
		{"calibration whose models predict 3e10 s", []string{"app", "gauss", "--backend", "local", "--np", "2", "--n", "64", "--calibration", filepath.Join("testdata", "cal_gauss_5e8_n1.jsonl")},
			"--calibration: hyperbolic predicts 3.15e+10 s for phase pivotbcast, beyond 1e+09 s"},
		{"calibration of 0 s", []string{"app", "gauss", "--backend", "local", "--np", "2", "--n", "64", "--calibration", file("cal_zero.jsonl", pp("2", "3", "0"))},
			"line 1: record pingpong bytes=8 iters=10: median 0 s is not positive"},
		{"fit of 0 ranks", []string{"fit", "hockney", file("ranks0.jsonl", pp("0", "3", "1e-6"))}, "line 1: record pingpong bytes=8 iters=10: ranks = 0: pingpong runs on at least 2 ranks"},
		{"fit of 1e15 ranks", []string{"fit", "hockney", file("ranksbig.jsonl", pp("1000000000000000", "3", "1e-6"))}, "ranks = 1000000000000000 is beyond 16777216"},
		{"compare of 0 s", []string{"compare", file("zero.jsonl", pp("2", "3", "0")), good}, "zero.jsonl: line 1: record pingpong bytes=8 iters=10: median 0 s is not positive"},
		{"app table of a negative prediction", []string{"app", "table", file("predneg.jsonl", app("-5", "-12501"))}, "line 1: record app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async: derived pred_hockney_s = -5: a prediction is a positive time"},
		{"app table of a communication phase with an empty workload", []string{"app", "table", file("app_nowork.jsonl", edit(app("2e-4", "-0.5"), xbcast, `"workload":[],`))},
			"app_nowork.jsonl: line 1: record app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async: gauss: phase xbcast has a workload of 0 items, but a run of these parameters on 2 ranks states 2"},
		{"app table of a broadcast count the order contradicts", []string{"app", "table", file("app_count.jsonl", edit(app("2e-4", "-0.5"), `"count":2,`, `"count":7,`))},
			"has count 7, but a run of these parameters on 2 ranks counts 2"},
		{"app table of an error of 1e300", []string{"app", "table", file("prederr.jsonl", app("2e-4", "1e300"))}, "derived pred_err_hockney = 1e+300 disagrees"},
		{"dsm plot of a 3x3 mesh on 4 ranks", []string{"dsm", "plot", file("meshbad.jsonl", bitonic("3x3", "4", "hand", "1"))}, `meshbad.jsonl: line 1: record dsm-bitonic keys=4096 mesh=3x3 strategy=hand: mesh = "3x3" has 9 processors but ranks = 4`},
		{"dsm plot of a forbidden strategy", []string{"dsm", "plot", file("strat.jsonl", bitonic("2x2", "4", "tree-3-1", "1"))}, `strategy = "tree-3-1": accepted are`},
		{"dsm_plot_ratio_without_hand", []string{"dsm", "plot", file("nohand.jsonl", bitonic("2x2", "4", "fixed-home", "2"))},
			"dsm plot " + filepath.Join(dir, "nohand.jsonl") + ": line 1: record dsm-bitonic strategy=fixed-home: derived time_ratio = 2, but no input holds the hand-optimised record of its point to be the ratio to; give the file its run wrote whole"},
		{"dsm_plot_ratio_hand_in_another_file", []string{"dsm", "plot", file("handonly.jsonl", strings.ReplaceAll(bitonic("2x2", "4", "hand", "1"), "0.002", "0.001")), file("fh2.jsonl", bitonic("2x2", "4", "fixed-home", "1e-3"))},
			"dsm plot " + filepath.Join(dir, "fh2.jsonl") + ": line 1: record dsm-bitonic strategy=fixed-home: derived time_ratio = 0.001 disagrees with the hand-optimised record of the same point (2 from their medians)"},
		{"dsm_plot_nothing_it_plots", []string{"dsm", "plot", good}, "dsm plot " + good + ": no dsm-matsquare, dsm-bitonic or dsm-barneshut records; dsm plot plots those (the --out files of dsm matsquare, bitonic and barneshut)"},
		{"dsm plot of a ratio the medians contradict", []string{"dsm", "plot", file("tr.jsonl", bitonic("2x2", "4", "hand", "123456"))}, "tr.jsonl: line 1: record dsm-bitonic strategy=hand: derived time_ratio = 123456 disagrees"},
		{"compare of a record of 2^20+1 hosts", []string{"compare", "a=" + file("hosts.jsonl", strings.Replace(pp("2", "3", "1e-6"), `"meta":{}`, `"meta":{"hosts":[`+strings.Repeat(`"h",`, results.MaxRecordElements)+`"h"]}`, 1)), "b=" + good},
			"input a=" + filepath.Join(dir, "hosts.jsonl") + ": results: " + filepath.Join(dir, "hosts.jsonl") + ": line 1: too large: the array meta.hosts at byte 162 has more than 1048576 elements"},
		// Derived values of a pattern record: times, and the statistics
		// they are computed from.
		{"fit of a round trip of -1 s", []string{"fit", "hockney", file("rt_neg.jsonl", withDerived(`{"round_trip_s":-1}`))},
			"rt_neg.jsonl: line 1: record pingpong bytes=8 iters=10: derived round_trip_s = -1 is negative"},
		{"compare of a round trip of 1e-300 s", []string{"compare", "a=" + good, "b=" + file("rt_tiny.jsonl", withDerived(`{"round_trip_s":1e-300}`))},
			"derived round_trip_s = 1e-300 s: a time is 0 or at least 1e-12 s"},
		{"fit of a round trip of 5 s beside a median of 2e-6 s", []string{"fit", "hockney", file("rt_incons.jsonl", withDerived(`{"round_trip_s":5}`))},
			"derived round_trip_s = 5 disagrees with 2 x the median, 4e-06"},
		{"report of a round trip of 5 s", []string{"report", runDir}, "line 2: record pingpong bytes=8 iters=10: derived round_trip_s = 5 disagrees"},
		// The summary's own order.
		{"compare of p90 above max", []string{"compare", "a=" + good, "b=" + file("p90.jsonl", edit(pp2, `"max":2e-6`, `"max":2e-6,"p90":1`))},
			"p90.jsonl: line 1: record pingpong bytes=8 iters=10: p90 1 is above max 2e-06"},
		{"fit of a mean below min", []string{"fit", "hockney", file("mean.jsonl", edit(pp2, `"max":2e-6`, `"max":2e-6,"mean":1e-11`))},
			"mean 1e-11 is not between min 2e-06 and max 2e-06"},
		{"compare of rank_min above rank_max", []string{"compare", "a=" + good, "b=" + file("rank.jsonl", edit(pp2, `"max":2e-6`, `"max":2e-6,"rank_min":1,"rank_max":2e-6`))},
			"rank_min 1 is above rank_max 2e-06"},
		// Counters and metadata.
		{"fit of a counter of -5", []string{"fit", "hockney", file("cnt_neg.jsonl", withCounters(`{"bytes_sent_max":-5}`))},
			"line 1: record pingpong bytes=8 iters=10: counters bytes_sent_max = -5 is negative"},
		{"compare of a counter of 1e300", []string{"compare", "a=" + good, "b=" + file("cnt_big.jsonl", withCounters(`{"bytes_sent_max":1e300}`))},
			`counters "bytes_sent_max" = 1e+300 is beyond 1e+18 in absolute value`},
		{"fit of ranks per host -2", []string{"fit", "hockney", file("rph.jsonl", withMeta(`{"hosts":["vm"],"ranks_per_host":[-2]}`))},
			"meta ranks_per_host[0] = -2: a host runs 1 to 16777216 ranks"},
		{"fit of ranks per host summing to 1 on 2 ranks", []string{"fit", "hockney", file("rph1.jsonl", withMeta(`{"hosts":["vm"],"ranks_per_host":[1]}`))},
			"rph1.jsonl: line 1: record pingpong bytes=8 iters=10: meta ranks_per_host sums to 1 but ranks = 2"},
		{"compare of ranks per host summing to 3 on 4 ranks", []string{"compare", "a=" + goodSamples, "b=" + file("rph3.jsonl", edit(withMeta(`{"hosts":["h","g"],"ranks_per_host":[2,1]}`), `"ranks":2`, `"ranks":4`))},
			"input b=" + filepath.Join(dir, "rph3.jsonl") + ": results: " + filepath.Join(dir, "rph3.jsonl") + ": line 1: record pingpong bytes=8 iters=10: meta ranks_per_host sums to 3 but ranks = 4"},
		{"compare of cores -1", []string{"compare", "a=" + good, "b=" + file("cores.jsonl", withMeta(`{"cores":-1}`))}, "meta cores = -1: want 0 (unknown) to 16777216"},
		// A unit the bench does not write.
		{"compare of a ping-pong in ms", []string{"compare", "a=" + good, "b=" + file("unit_ms.jsonl", edit(pp2, `"unit":"s"`, `"unit":"ms"`))},
			"input b=" + filepath.Join(dir, "unit_ms.jsonl") + ": results: " + filepath.Join(dir, "unit_ms.jsonl") + `: line 1: record pingpong bytes=8 iters=10: unit "ms": pingpong records are in "s"`},
		{"app table of a phase in ms", []string{"app", "table", file("app_ms.jsonl", edit(app("2e-4", "-0.5"), `"unit":"s"`, `"unit":"ms"`))},
			`unit "ms": an application phase's record is a time in "s"`},
		{"dsm plot of a record in ms", []string{"dsm", "plot", file("dsm_ms.jsonl", edit(bitonic("2x2", "4", "hand", "1"), `"unit":"s"`, `"unit":"ms"`))},
			`unit "ms": a dsm record is a time in "s"`},
		// Application phases: predictions and counters.
		{"app table of a prediction of 1e-300 s", []string{"app", "table", file("predtiny.jsonl", app("1e-300", "-1"))},
			"predtiny.jsonl: line 1: record app app=gauss kind=comm matrix=dd n=64 phase=xbcast variant=async: derived pred_hockney_s = 1e-300: a prediction is a positive time, at least 1e-12 s"},
		// An application's own parameters, as its program checks them on
		// the record's ranks; the table, compare and report read alike.
		{"app table of an order of 1e308", []string{"app", "table", file("app_n.jsonl", edit(app("2e-4", "-0.5"), `"n":64`, `"n":1e308`))},
			"record app app=gauss kind=comm matrix=dd n=1e+308 phase=xbcast variant=async: gauss: n = 1e+308: must be at most 2^53"},
		{"compare of an order the ranks do not divide", []string{"compare", "a=" + file("app_ok.jsonl", app("2e-4", "-0.5")), "b=" + file("app_odd.jsonl", edit(app("2e-4", "-0.5"), `"n":64`, `"n":65`))},
			"gauss on ranks = 2: no run has these parameters"},
		{"report of an unknown program", []string{"report", dirWith("rep_app", edit(app("2e-4", "-0.5"), `"app":"gauss"`, `"app":"gauss2"`))},
			`app = "gauss2": the programs are barneshut, bitonic, bitonic-ms`},
		{"app table of a counter of -100", []string{"app", "table", file("app_cnt.jsonl", edit(app("2e-4", "-0.5"), `"meta":{}`, `"counters":{"bytes_sent":-100},"meta":{}`))},
			"counters bytes_sent = -100 is negative"},
		// sched comm's derived values, which breakeven adds to the
		// exchange times it compares.
		{"sched breakeven of a scheduling time of -1 s", []string{"sched", "breakeven", "--in", file("sbn_neg.jsonl", schedComm(`{"sched_s":-1,"sched_over_comm":-50000}`))},
			"sbn_neg.jsonl: line 1: record sched.comm bytes=16 d=2 gen=fig7 matrix=0 scheduler=CGM: derived sched_s = -1: the scheduling time is at least 1e-12 s"},
		{"sched breakeven of a scheduling time of 1e-300 s", []string{"sched", "breakeven", "--in", file("sbn_tiny.jsonl", schedComm(`{"sched_s":1e-300,"sched_over_comm":5e-296}`))},
			"derived sched_s = 1e-300"},
		{"sched breakeven of a ratio of 1e300", []string{"sched", "breakeven", "--in", file("sbn_ratio.jsonl", schedComm(`{"sched_s":4e-5,"sched_over_comm":1e300}`))},
			"derived sched_over_comm = 1e+300 disagrees with sched_s / median, 2"},
		// Raw samples: the values the statistics summarise, n of them.
		{"compare of samples of -1 s", []string{"compare", "a=" + good, "b=" + file("sb_neg.jsonl", edit(pp2, `"meta":{}`, `"samples":[-1,-1,-1],"meta":{}`))},
			"sb_neg.jsonl: line 1: record pingpong bytes=8 iters=10: sample 1 is -1, below 0, the least value in seconds"},
		{"compare of samples of 1e6 s above max", []string{"compare", "a=" + good, "b=" + file("sb_big.jsonl", edit(pp2, `"meta":{}`, `"samples":[1e6,1e6,1e6],"meta":{}`))},
			"sample 1 is 1e+06, outside min 2e-06 and max 2e-06"},
		{"compare of 2 samples where n = 3", []string{"compare", "a=" + good, "b=" + file("sb_short.jsonl", edit(pp2, `"meta":{}`, `"samples":[2e-6,2e-6],"meta":{}`))},
			"samples holds 2 values but n = 3"},
		{"compare of samples of another median", []string{"compare", "a=" + goodSamples, "b=" + file("sb_median.jsonl", withSamples(`[1e-6,1e-6,3e-6]`))},
			"input b=" + filepath.Join(dir, "sb_median.jsonl") + ": results: " + filepath.Join(dir, "sb_median.jsonl") + ": line 1: record pingpong bytes=8 iters=10: samples have median 1e-06 but median = 2e-06"},
		{"fit of samples of another mean", []string{"fit", "hockney", file("sb_mean.jsonl", edit(withSamples(`[2e-6,1e-6,3e-6]`), `"mean":2e-6`, `"mean":2.5e-6`))},
			"sb_mean.jsonl: line 1: record pingpong bytes=8 iters=10: samples have mean 2e-06 but mean = 2.5e-06"},
		// Labels and the CI's shape.
		{"fit of aggregate bogus", []string{"fit", "hockney", file("agg.jsonl", edit(pp2, `"meta":{}`, `"aggregate":"bogus","meta":{}`))},
			`agg.jsonl: line 1: record pingpong bytes=8 iters=10: aggregate "bogus" is none of max-over-ranks, rank0, window-latest-end, rank0-wall`},
		{"compare of stop bogus", []string{"compare", "a=" + good, "b=" + file("stop.jsonl", edit(pp2, `"meta":{}`, `"stop":"bogus","meta":{}`))},
			`stop "bogus" is none of rel-ci, max-reps, max-time, fixed`},
		{"fit of a ci95 of 3 elements", []string{"fit", "hockney", file("ci3.jsonl", edit(pp2, `"ci95":[2e-6,2e-6]`, `"ci95":[2e-6,2e-6,9]`))},
			"ci3.jsonl: line 1: field ci95: an array of 3 elements at byte"},
		{"compare of a ci95 below min", []string{"compare", "a=" + good, "b=" + file("cimin.jsonl", edit(pp2, `"ci95":[2e-6,2e-6]`, `"ci95":[1e-6,2e-6]`))},
			"ci95 [1e-06, 2e-06] is not within min 2e-06 and max 2e-06"},
		// --out appends only to a file every reader accepts.
		{"--out to a file whose first line is schema 99", []string{"sched", "count", "--n", "64", "--matrices", "3", "--quiet", "--out", file("o_schema99.jsonl", `{"schema":99,"bench":"x"}`)},
			"o_schema99.jsonl: it is not a records file: line 1: "},
		{"--out to a file with garbage on line 2", []string{"sched", "count", "--n", "64", "--matrices", "3", "--quiet", "--out", file("o_mixed.jsonl", pp2, "garbage")},
			"o_mixed.jsonl: it is not a records file: line 2: not a JSON record"},
		{"fit of a string of 2 MiB", []string{"fit", "hockney", file("long.jsonl", strings.Replace(pp("2", "3", "1e-6"), `"iters":10`, `"iters":10,"pad":"`+strings.Repeat("y", 2<<20)+`"`, 1))},
			"long.jsonl: line 1: too large: a string longer than 1 MiB"},
	})
}
