package apps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// writtenWorkload is the workload a run of params on ranks records for
// its phase (checkWorkload): its Workloader's, else one where all its
// accesses cross (accessBounder), else, for a communication phase over
// global variables, one k-k-access on the ranks.
func writtenWorkload(params results.Params, ranks int) []results.WorkItem {
	name, _ := params["app"].(string)
	phase, _ := params["phase"].(string)
	app := appRecords[name].build(params)
	if wl, ok := app.(Workloader); ok {
		return wl.Workload(ranks)[phase]
	}
	if b, ok := app.(accessBounder); ok {
		_, hi := b.accessBounds(ranks)
		return hi[phase]
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
	// A run of mm on 4 ranks reads 3 to 5 submatrices of 4096 bytes (16
	// k-k-accesses each) that cross and writes 0 or 1.
	kkn := func(ranks, reads, writes string) string {
		return `[{"count":` + reads + `,"bench":"kkaccess","params":{"k":4,"l":64,"r":1,"op":"read"},"ranks":` + ranks + `},` +
			`{"count":` + writes + `,"bench":"kkaccess","params":{"k":4,"l":64,"r":1,"op":"write"},"ranks":` + ranks + `}]`
	}
	kk := func(ranks string) string { return kkn(ranks, "64", "16") }
	bs := `{"app":"bitonic","phase":"bitonic","kind":"comm","n":1024,"k":1,"l":4096}`
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
		{"mm_count_huge", rec(mm, "4", kkn("4", "1e15", "16")),
			"matmul: phase mm: workload item 1 (kkaccess {k=4 l=64 op=read r=1}) has count 1e+15, but a run of these parameters on 4 ranks counts 48 to 80 k-k-accesses there"},
		{"mm_count_zero", rec(mm, "4", kkn("4", "0", "16")), "has count 0, but a run of these parameters on 4 ranks counts 48 to 80"},
		{"mm_count_fraction", rec(mm, "4", kkn("4", "64.5", "16")), "has count 64.5, but a run counts whole k-k-accesses"},
		{"mm_write_stays", rec(mm, "4", kkn("4", "80", "0")), ""},
		{"mm_write_twice", rec(mm, "4", kkn("4", "64", "32")), "workload item 2 (kkaccess {k=4 l=64 op=write r=1}) has count 32, but a run of these parameters on 4 ranks counts 0 to 16"},
		{"mm_read_only", rec(mm, "4", `[{"count":64,"bench":"kkaccess","params":{"k":4,"l":64,"r":1,"op":"read"},"ranks":4}]`),
			"matmul: phase mm has a workload of 1 items, but a run of these parameters on 4 ranks states 2"},
		{"mm_wrong_l", rec(mm, "4", strings.Replace(kk("4"), `"l":64,"r":1,"op":"read"`, `"l":32,"r":1,"op":"read"`, 1)),
			"matmul: phase mm: workload item 1 is kkaccess {k=4 l=32 op=read r=1} on 4 ranks"},
		{"bitonic as written", rec(bs, "4", `[{"count":4,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"read"},"ranks":4},{"count":4,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"write"},"ranks":4}]`), ""},
		{"bitonic_count_huge", rec(bs, "4", `[{"count":5,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"read"},"ranks":4},{"count":4,"bench":"kkaccess","params":{"k":1,"l":4096,"r":1,"op":"write"},"ranks":4}]`),
			"bitonic: phase bitonic: workload item 1 (kkaccess {k=1 l=4096 op=read r=1}) has count 5, but a run of these parameters on 4 ranks counts 0 to 4"},
		{"mm_comp_work", rec(mmComp, "4", kk("4")), "matmul: phase compute has a workload of 2 items, but a run writes one only for a communication phase of a program over global variables (bitonic, concomp, matmul, samplesort)"},
		{"Barnes-Hut as written", rec(bh, "4", ""), ""},
		{"bh_work", rec(bh, "4", kk("4")), "barneshut: phase force has a workload of 2 items"},
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
