package dsmexp

import (
	"math"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/internal/recordtest"
	"github.com/commcost/commcost/results"
)

// TestDSMAppRecordValuesChecked: bitonic and Barnes-Hut records as
// BitonicRecord and BarnesHutRecords build them are read back; edited so
// that a phase is none the writer writes, a phase's time exceeds the time
// it is part of, the hit ratio, the energy drift or the cell counts
// contradict the counters they come from, they are refused naming the
// values.
func TestDSMAppRecordValuesChecked(t *testing.T) {
	mesh := divalib.Mesh{Rows: 1, Cols: 4}
	sec := []float64{3e-3, 4e-3, 5e-3}
	part := func(f float64) []float64 { return []float64{f * sec[0], f * sec[1], f * sec[2]} }
	cong := divalib.Congestion{MaxLinkBytes: 100, MaxLinkMessages: 5, LoadBytes: 400, LoadMessages: 20, Startups: 12, MaxStartups: 3, BytesSent: 240}
	bit := Result{App: "bitonic", Strategy: "fixed-home", Mesh: mesh, Params: results.Params{"keys": 1024}, TimeSec: sec, Verified: true,
		Phases:   []Phase{{Name: apps.BitonicLocalSort, Sec: part(0.2)}, {Name: apps.BitonicExchange, Sec: part(0.5)}, {Name: apps.BitonicMerge, Sec: part(0.3)}},
		Sections: []Section{{Name: "sort", Congestion: cong, Reads: 40, ReadHits: 30, Writes: 20}}}
	var bhPhases []Phase
	for _, ph := range []string{apps.BHLoad, apps.BHCofm, apps.BHPartition, apps.BHForce, apps.BHForceComp, apps.BHAdvance, apps.BHSize} {
		bhPhases = append(bhPhases, Phase{Name: ph, Sec: part(0.1)})
	}
	bh := Result{App: "barneshut", Strategy: "fixed-home", Mesh: mesh, TimeSec: sec, Verified: true, Phases: bhPhases,
		Params:   results.Params{"bodies": 64, "theta": 1.0, "steps": 3, "measured_steps": 2},
		Sections: []Section{{Name: PhaseTotal, Congestion: cong, Reads: 40, ReadHits: 30, Writes: 20}},
		Counters: map[string]float64{"cells": 40, "cells_max_per_rank": 12, "cell_pool_per_rank": 48, "energy_first": -0.25, "energy_last": -0.2501,
			KeyEnergyDrift: math.Abs(-0.2501+0.25) / 0.25, "force_err_median": 1e-3, "force_err_max": 1e-2, "force_err_global": 2e-3, "interactions_per_measured_step": 900}}
	bitonic := func() results.Record { return BitonicRecord(bit, 4, results.Meta{}, nil) }
	bhRec := func(phase string) func() results.Record {
		return func() results.Record {
			for _, r := range BarnesHutRecords(bh, 4, results.Meta{}) {
				if r.Params["phase"] == phase {
					return r
				}
			}
			t.Fatalf("no record of phase %s", phase)
			return results.Record{}
		}
	}
	tests := []struct {
		name string
		rec  func() results.Record
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"bitonic as written", bitonic, func(*results.Record) {}, ""},
		{"Barnes-Hut total as written", bhRec(PhaseTotal), func(*results.Record) {}, ""},
		{"Barnes-Hut force as written", bhRec(apps.BHForce), func(*results.Record) {}, ""},
		{"dbh_phase", bhRec(PhaseTotal), func(r *results.Record) { r.Params["phase"] = "nosuch" },
			`impossible parameter phase = "nosuch": must be one of total, load, cofm, partition, force, advance, size`},
		{"Barnes-Hut's force-comp is no record phase", bhRec(PhaseTotal), func(r *results.Record) { r.Params["phase"] = apps.BHForceComp },
			`phase = "force-comp": must be one of`},
		{"dbit_phase1e6", bitonic, func(r *results.Record) { r.Derived["exchange_s"] = 1e6 },
			"derived exchange_s = 1e+06 is more than the median 0.004: a phase is part of the sort"},
		{"local computation beyond the force phase", bhRec(apps.BHForce), func(r *results.Record) { r.Derived[KeyLocalComp] = 1 },
			"derived local_comp_s = 1 is more than the median"},
		{"dbh_hit2", bhRec(PhaseTotal), func(r *results.Record) { r.Derived[KeyHitRatio] = 2 },
			"derived read_hit_ratio = 2 disagrees with read_hits / reads = 30 / 40 = 0.75"},
		{"dbh_edrift", bhRec(PhaseTotal), func(r *results.Record) { r.Derived[KeyEnergyDrift] = 1e300 },
			"derived energy_drift = 1e+300 disagrees with |energy_last - energy_first| / |energy_first| = 0.000399999"},
		{"energy drift without the energies", bhRec(PhaseTotal), func(r *results.Record) { delete(r.Counters, "energy_last") },
			"derived energy_drift = 0.0004 without the counters energy_first and energy_last"},
		{"dbh_cells", bhRec(PhaseTotal), func(r *results.Record) { r.Counters["cells"] = 1e18 },
			"counters cells = 1e+18 is more than ranks x cells_max_per_rank + 1 = 4 x 12 + 1 (the root)"},
		{"cells alone", bhRec(PhaseTotal), func(r *results.Record) {
			delete(r.Counters, "cells_max_per_rank")
			delete(r.Counters, "cell_pool_per_rank")
		}, "counters cells, cells_max_per_rank and cell_pool_per_rank come together (the last tree's cells); this record has cells"},
		{"a rank's cells beyond its pool", bhRec(PhaseTotal), func(r *results.Record) { r.Counters["cells_max_per_rank"] = 49 },
			"counters cells_max_per_rank = 49 is more than cell_pool_per_rank = 48"},
		{"fewer cells than one rank made", bhRec(PhaseTotal), func(r *results.Record) { r.Counters["cells"] = 11 },
			"counters cells = 11 is less than cells_max_per_rank = 12"},
		{"median force error beyond the largest", bhRec(PhaseTotal), func(r *results.Record) { r.Counters["force_err_median"] = 0.5 },
			"counters force_err_median = 0.5, force_err_max = 0.01: want 0 <= median <= max"},
		{"the sample's force error beyond the largest", bhRec(PhaseTotal), func(r *results.Record) { r.Counters["force_err_global"] = 0.02 },
			"counters force_err_global = 0.02 is more than force_err_max = 0.01: the sample's error is a mean"},
		{"a link's bytes beyond the load", bitonic, func(r *results.Record) { r.Counters[KeyCongestionBytes] = 1e15 },
			"counters congestion_bytes = 1e+15 is more than load_bytes = 400"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recordtest.CheckEdited(t, tc.rec(), tc.edit, tc.want)
		})
	}
}
