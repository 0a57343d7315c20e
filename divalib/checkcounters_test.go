package divalib_test

import (
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/internal/recordtest"
	"github.com/commcost/commcost/results"
)

// TestCheckRecordCountersChecked: dsm-check records as RunCheck writes
// them on 3 ranks are read back; edited so that a counter contradicts the
// params or the workload (stale reads beyond the reads, ops not the ops
// param, reads + writes not the ops, a violation the workload does not
// count, an unknown workload), they are refused naming the values. The
// overhead and load rows edit the other dsm records' counters.
func TestCheckRecordCountersChecked(t *testing.T) {
	mesh := divalib.Mesh{Rows: 1, Cols: 3}
	meta := results.Meta{Backend: "local"}
	rec := func(workload string, rep storecheck.Report) func() results.Record {
		return func() results.Record { return divalib.CheckRecord("fixed-home", workload, mesh, 0, rep, 1e-3, meta) }
	}
	coh := rec("coherence", storecheck.Report{Ops: 25, Reads: 21, Writes: 4})
	torn := rec("torn-reads", storecheck.Report{Ops: 600, Reads: 450, Writes: 150})
	disj := rec("disjoint-writes", storecheck.Report{Ops: 63, Reads: 3, Writes: 60})
	lock := rec("lock-counter", storecheck.Report{Ops: 180})
	errs := rec("errors", storecheck.Report{Ops: 18})
	ovh := divalib.Overhead{CachedReadSec: []float64{1e-7}, CachedWriteSec: []float64{2e-7}, BarrierSec: []float64{1e-5}, MPIBarrierSec: []float64{5e-6},
		CachedWrites: 10, CachedInPlace: 4}
	read := func() results.Record { return ovh.Records("fixed-home", divalib.BarrierDissemination, mesh, meta)[0] }
	cong := divalib.Congestion{MaxLinkBytes: 100, MaxLinkMessages: 5, LoadBytes: 400, LoadMessages: 20, Startups: 12, MaxStartups: 3, BytesSent: 240}
	sq := divalib.MatSquareResult{Strategy: divalib.Hand, Mesh: divalib.Mesh{Rows: 2, Cols: 2}, BlockInts: 16, Verified: true, Congestion: cong, CommSec: []float64{1e-3}}
	matsq := func() results.Record { return sq.Record(divalib.MatSquareConfig{}, nil, meta) }
	tests := []struct {
		name string
		rec  func() results.Record
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"coherence as written", coh, func(*results.Record) {}, ""},
		{"torn-reads as written", torn, func(*results.Record) {}, ""},
		{"disjoint-writes as written", disj, func(*results.Record) {}, ""},
		{"lock-counter as written", lock, func(*results.Record) {}, ""},
		{"errors as written", errs, func(*results.Record) {}, ""},
		{"a check of two runs", coh, func(r *results.Record) { r.N = 2 },
			"n = 2: a dsm-check record times one run of its workload (n = 1)"},
		{"a check of rank 0's wall clock stopped on its CI", coh, func(r *results.Record) { r.Stop = results.StopRelCI },
			`stop "rel-ci": a dsm-check record's repetitions stop on fixed`},
		{"a violation found is counted", coh, func(r *results.Record) { r.Counters["stale_reads"] = 2 }, ""},
		{"dchk_stale", coh, func(r *results.Record) { r.Counters["stale_reads"] = 50 },
			"counters stale_reads = 50 is more than reads = 21: each is one of the reads"},
		{"dchk_ops", coh, func(r *results.Record) { r.Counters["ops"] = 99 },
			"counters ops = 99 disagrees with params ops = 25"},
		{"dchk_reads", coh, func(r *results.Record) { r.Counters["reads"] = 1e6 },
			"counters reads + writes = 1e+06 + 4 = 1.000004e+06 disagrees with ops = 25"},
		{"dchk_torn", coh, func(r *results.Record) { r.Counters["torn_reads"] = 1e15 },
			"counters torn_reads = 1e+15 is more than reads = 21"},
		{"dchk_mism", coh, func(r *results.Record) { r.Counters["mismatches"] = 5 },
			"counters mismatches = 5: workload coherence counts no mismatches"},
		{"dchk_wl", coh, func(r *results.Record) { r.Params["workload"] = "nosuch" },
			`impossible parameter workload = "nosuch": must be one of coherence, torn-reads, disjoint-writes, lock-counter, errors`},
		{"torn-reads ops not 200 per rank", torn, func(r *results.Record) { r.Params["ops"], r.Counters["ops"] = 601, 601 },
			"params ops = 601 disagrees with torn-reads's 200 ops per rank x ranks = 200 x 3 = 600"},
		{"disjoint-writes writes not 20 per rank", disj, func(r *results.Record) { r.Counters["writes"] = 61 },
			"counters writes = 61 disagrees with disjoint-writes's 20 writes per rank x ranks = 20 x 3 = 60"},
		{"lock-counter mismatches beyond its counters", lock, func(r *results.Record) { r.Counters["mismatches"] = 10 },
			"counters mismatches = 10 is more than the 9 comparisons lock-counter makes on 3 ranks"},
		{"a fractional count", errs, func(r *results.Record) { r.Counters["mismatches"] = 0.5 },
			"counters mismatches = 0.5: a count is a whole number >= 0"},
		{"dov_writes", read, func(r *results.Record) { r.Counters["writes"] = 1e15 },
			"counters writes = 1e+15 on op cached-read: only cached-write and remote-read records count writes"},
		{"dms_loadb", matsq, func(r *results.Record) { r.Counters["load_bytes"] = 1e15 },
			"counters load_bytes = 1e+15 is more than the mesh's diameter x bytes_sent = 2 x 240 = 480"},
		{"load messages beyond the diameter", matsq, func(r *results.Record) { r.Counters["load_messages"] = 25 },
			"counters load_messages = 25 is more than the mesh's diameter x startups = 2 x 12 = 24"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recordtest.CheckEdited(t, tc.rec(), tc.edit, tc.want)
		})
	}
}
