package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	app := func(pred, perr string) string {
		return `{"schema":1,"bench":"app","params":{"app":"gauss","phase":"xbcast","kind":"comm","n":64},"ranks":2,"unit":"s","n":1,` +
			`"min":4e-4,"median":4e-4,"max":4e-4,"ci95":[4e-4,4e-4],"derived":{"measured_s":4e-4,"pred_hockney_s":` + pred + `,"pred_err_hockney":` + perr + `},"meta":{}}`
	}
	file := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.jsonl", pp("2", "3", "1e-6"))
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
		{"app table of a negative prediction", []string{"app", "table", file("predneg.jsonl", app("-5", "-12501"))}, "line 1: record app app=gauss kind=comm n=64 phase=xbcast: derived pred_hockney_s = -5: a prediction is a positive time"},
		{"app table of an error of 1e300", []string{"app", "table", file("prederr.jsonl", app("2e-4", "1e300"))}, "derived pred_err_hockney = 1e+300 disagrees"},
		{"dsm plot of a 3x3 mesh on 4 ranks", []string{"dsm", "plot", file("meshbad.jsonl", bitonic("3x3", "4", "hand", "1"))}, `meshbad.jsonl: line 1: record dsm-bitonic keys=4096 mesh=3x3 strategy=hand: mesh = "3x3" has 9 processors but ranks = 4`},
		{"dsm plot of a forbidden strategy", []string{"dsm", "plot", file("strat.jsonl", bitonic("2x2", "4", "tree-3-1", "1"))}, `strategy = "tree-3-1": accepted are`},
		{"dsm plot of a ratio the medians contradict", []string{"dsm", "plot", file("tr.jsonl", bitonic("2x2", "4", "hand", "123456"))}, "tr.jsonl: line 1: record dsm-bitonic strategy=hand: derived time_ratio = 123456 disagrees"},
		{"compare of a record of 2^20+1 hosts", []string{"compare", "a=" + file("hosts.jsonl", strings.Replace(pp("2", "3", "1e-6"), `"meta":{}`, `"meta":{"hosts":[`+strings.Repeat(`"h",`, results.MaxRecordElements)+`"h"]}`, 1)), "b=" + good},
			"input a=" + filepath.Join(dir, "hosts.jsonl") + ": results: " + filepath.Join(dir, "hosts.jsonl") + ": line 1: too large: the array meta.hosts at byte 162 has more than 1048576 elements"},
		{"fit of a string of 2 MiB", []string{"fit", "hockney", file("long.jsonl", strings.Replace(pp("2", "3", "1e-6"), `"iters":10`, `"iters":10,"pad":"`+strings.Repeat("y", 2<<20)+`"`, 1))},
			"long.jsonl: line 1: too large: a string longer than 1 MiB"},
	})
}
