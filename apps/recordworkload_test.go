package apps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// writtenWorkload is the workload a run of params on ranks records for
// its phase (checkWorkload): its Workloader's, else, for a communication
// phase over global variables, one k-k-access on the ranks.
func writtenWorkload(params results.Params, ranks int) []results.WorkItem {
	name, _ := params["app"].(string)
	phase, _ := params["phase"].(string)
	app := appRecords[name].build(params)
	if wl, ok := app.(Workloader); ok {
		return wl.Workload(ranks)[phase]
	}
	if params["kind"] == KindComm && storeWorkloads[name] {
		return []results.WorkItem{kkItem(1, 1, 8, 1, opRead, ranks)}
	}
	return nil
}

// withWorkload is line, one application record, with the workload a run
// of its parameters writes, when checkAppParams accepts them and the line
// has none: the records of a table about other fields, as written.
func withWorkload(line string) string {
	var r results.Record
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Workload != nil || checkAppParams(&r) != nil {
		return line
	}
	w := writtenWorkload(r.Params, r.Ranks)
	if len(w) == 0 {
		return line
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	return strings.Replace(line, `"meta":`, `"workload":`+string(b)+`,"meta":`, 1)
}

// TestAppWorkloadChecked: an application record's workload is the one a
// run of its parameters on its ranks writes; a count, an item or an
// emptiness that contradicts them is refused on read.
func TestAppWorkloadChecked(t *testing.T) {
	rec := func(params string, ranks string, workload string) string {
		w := ""
		if workload != "" {
			w = `"workload":` + workload + `,`
		}
		return `{"schema":1,"bench":"app","params":` + params + `,"ranks":` + ranks + `,"unit":"s","n":1,"min":1e-3,"median":1e-3,"max":1e-3,"ci95":[1e-3,1e-3],` + w + `"meta":{}}` + "\n"
	}
	mg := `{"app":"multigrid","phase":"exchange","kind":"comm","n":7,"iters":2,"variant":"async","cycles":1,"plane_bytes":392}`
	mgWork := `[{"count":2,"bench":"chainshift","params":{"bytes":392},"ranks":4,"view":"contention"},{"count":2,"bench":"pingpong","params":{"bytes":392},"view":"p2p"}]`
	cannon1 := `{"app":"cannon","phase":"shift","kind":"comm","n":8,"variant":"async"}`
	bms := `{"app":"bitonic-ms","phase":"exchange","kind":"comm","keys":1024,"impl":"hand"}`
	mm := `{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":4,"l":64,"sync":false}`
	mmComp := `{"app":"matmul","phase":"compute","kind":"comp","n":64,"k":4,"l":64,"sync":false}`
	kk := func(ranks string) string {
		return `[{"count":3,"bench":"kkaccess","params":{"k":4,"l":64,"r":1,"op":"read"},"ranks":` + ranks + `}]`
	}
	bh := `{"app":"barneshut","phase":"force","kind":"comm","bodies":64,"theta":1,"steps":7,"measured_steps":5}`
	tests := []struct{ name, line, want string }{
		{"multigrid as written", rec(mg, "4", mgWork), ""},
		{"mg_iters_count", rec(mg, "4", strings.Replace(mgWork, `"count":2`, `"count":5`, 1)),
			"multigrid: phase exchange: workload item 1 (chainshift {bytes=392}) has count 5, but a run of these parameters on 4 ranks counts 2"},
		{"mg_plane_bytes", rec(mg, "4", strings.Replace(mgWork, `"bytes":392}`, `"bytes":7}`, 1)),
			"multigrid: phase exchange: workload item 1 is chainshift {bytes=7} on 4 ranks"},
		{"mg_missing_item", rec(mg, "4", `[{"count":2,"bench":"chainshift","params":{"bytes":392},"ranks":4,"view":"contention"}]`),
			"multigrid: phase exchange has a workload of 1 items, but a run of these parameters on 4 ranks states 2"},
		{"mg_empty", rec(mg, "4", `[]`), "multigrid: phase exchange has a workload of 0 items, but a run of these parameters on 4 ranks states 2"},
		{"mg_none", rec(mg, "4", ""), "multigrid: phase exchange has a workload of 0 items, but a run of these parameters on 4 ranks states 2"},
		{"cannon on one rank moves nothing", rec(cannon1, "1", ""), ""},
		{"cannon_1rank_work", rec(cannon1, "1", `[{"count":1,"bench":"pingpong","params":{"bytes":512}}]`),
			"cannon: phase shift has a workload of 1 items, but a run of these parameters on 1 ranks states 0"},
		{"bitonic-ms as written", rec(bms, "4", `[{"count":3,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"write"},"ranks":4}]`), ""},
		{"bms_steps", rec(bms, "4", `[{"count":9,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"write"},"ranks":4}]`),
			"bitonic-ms: phase exchange: workload item 1 (kkaccess {k=1 l=4096 op=write r=1}) has count 9, but a run of these parameters on 4 ranks counts 3"},
		{"matmul as written", rec(mm, "4", kk("4")), ""},
		{"mm_empty", rec(mm, "4", `[]`), "matmul: communication phase mm has no workload: a run states every communication phase of matmul"},
		{"mm_none", rec(mm, "4", ""), "matmul: communication phase mm has no workload"},
		{"mm_ranks", rec(mm, "4", kk("2")), "matmul: workload item 1 (kkaccess) has ranks = 2, but a run on 4 ranks states its accesses on 4 ranks"},
		{"mm_comp_work", rec(mmComp, "4", kk("4")), "matmul: phase compute has a workload of 1 items, but a run writes one only for a communication phase of a program over global variables (bitonic, concomp, matmul, samplesort)"},
		{"Barnes-Hut as written", rec(bh, "4", ""), ""},
		{"bh_work", rec(bh, "4", kk("4")), "barneshut: phase force has a workload of 1 items"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(tc.line))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
}
