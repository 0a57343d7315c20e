package divalib_test

import (
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/internal/recordtest"
	"github.com/commcost/commcost/results"
)

// TestDSMRecordValuesChecked: records as the writers build them are read
// back; edited so that an op or kernel is none a writer writes, or a
// counter exceeds the one it is part of (a link's bytes the load, one
// rank's messages all ranks', in-place writes the writes), they are
// refused naming both values.
func TestDSMRecordValuesChecked(t *testing.T) {
	mesh := divalib.Mesh{Rows: 2, Cols: 2}
	meta := results.Meta{Backend: "local"}
	cong := divalib.Congestion{MaxLinkBytes: 100, MaxLinkMessages: 5, LoadBytes: 400, LoadMessages: 20, Startups: 12, MaxStartups: 3, BytesSent: 240}
	hand := divalib.MatSquareResult{Strategy: divalib.Hand, Mesh: mesh, BlockInts: 16, Verified: true, Congestion: cong, CommSec: []float64{1e-3, 2e-3}}
	ovh := divalib.Overhead{CachedReadSec: []float64{1e-7}, CachedWriteSec: []float64{2e-7}, BarrierSec: []float64{1e-5}, MPIBarrierSec: []float64{5e-6},
		CachedWrites: 10, CachedInPlace: 4}
	ovhRecs := ovh.Records("fixed-home", divalib.BarrierDissemination, mesh, meta)
	matsq := func() results.Record { return hand.Record(divalib.MatSquareConfig{}, &hand, meta) }
	write := func() results.Record { return ovhRecs[1] }
	tests := []struct {
		name string
		rec  func() results.Record
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"matsquare as written, kernel defaulted", matsq, func(r *results.Record) {
			if r.Params["kernel"] != "mul" {
				t.Errorf("kernel %v, want the default mul", r.Params["kernel"])
			}
		}, ""},
		{"cached write as written", write, func(*results.Record) {}, ""},
		{"store barrier as written", func() results.Record { return ovhRecs[2] }, func(*results.Record) {}, ""},
		{"remote read as written", func() results.Record {
			return divalib.RemoteReadRecord("fixed-home", 64, mesh, []float64{3e-6}, [2]int64{20, 20}, meta)
		}, func(*results.Record) {}, ""},
		{"dov_op", write, func(r *results.Record) { r.Params["op"] = "nosuch" },
			`impossible parameter op = "nosuch": must be one of cached-read, cached-write, barrier-tree, barrier-central, barrier-dissemination, barrier-mpi, mpi-barrier, remote-read`},
		{"dov_wr", write, func(r *results.Record) { r.Counters["writes_in_place"] = 1e15 },
			"counters writes_in_place = 1e+15 is more than writes = 10: a write made in place is one of the writes"},
		{"dms_kern", matsq, func(r *results.Record) { r.Params["kernel"] = "nosuch" }, `impossible parameter kernel = "nosuch": must be one of mul, sum`},
		{"dms_start", matsq, func(r *results.Record) { r.Counters["max_startups_per_rank"] = 1e15 },
			"counters max_startups_per_rank = 1e+15 is more than startups = 12: one rank's messages are part of all ranks'"},
		{"startups beyond ranks x the most of one", matsq, func(r *results.Record) { r.Counters["startups"] = 13 },
			"counters startups = 13 is more than ranks x max_startups_per_rank = 4 x 3"},
		{"a link's bytes beyond the load", matsq, func(r *results.Record) { r.Counters["congestion_bytes"] = 401 },
			"counters congestion_bytes = 401 is more than load_bytes = 400"},
		{"a link's messages beyond the load", matsq, func(r *results.Record) { r.Counters["congestion_messages"] = 21 },
			"counters congestion_messages = 21 is more than load_messages = 20"},
		{"bytes sent beyond the load", matsq, func(r *results.Record) { r.Counters["bytes_sent"] = 1e18 },
			"counters bytes_sent = 1e+18 is more than load_bytes = 400"},
		{"messages beyond the message-hops", matsq, func(r *results.Record) { r.Counters["startups"], r.Counters["max_startups_per_rank"] = 40, 10 },
			"counters startups = 40 is more than load_messages = 20"},
		{"read hits beyond the reads", matsq, func(r *results.Record) { r.Counters["reads"], r.Counters["read_hits"] = 5, 6 },
			"counters read_hits = 6 is more than reads = 5"},
		{"hit ratio beside the counts", matsq, func(r *results.Record) {
			r.Counters["reads"], r.Counters["read_hits"], r.Derived["read_hit_ratio"] = 8, 6, 2
		}, "derived read_hit_ratio = 2 disagrees with read_hits / reads = 6 / 8 = 0.75"},
		{"hit ratio as counted", matsq, func(r *results.Record) {
			r.Counters["reads"], r.Counters["read_hits"], r.Derived["read_hit_ratio"] = 8, 6, 0.75
		}, ""},
		{"cached read as written, rank 0's own", func() results.Record { return ovhRecs[0] }, func(*results.Record) {}, ""},
		{"a cached read of the maximum over ranks", func() results.Record { return ovhRecs[0] }, func(r *results.Record) { r.Reduction = results.ReductionMaxOverRanks },
			`aggregate "max-over-ranks" on op cached-read: its samples are rank0`},
		{"a store barrier of rank 0's time", func() results.Record { return ovhRecs[2] }, func(r *results.Record) { r.Reduction = results.ReductionRank0 },
			`aggregate "rank0" on op barrier-dissemination: its samples are max-over-ranks`},
		{"a cached write without its aggregate (an old record)", write, func(r *results.Record) { r.Reduction = "" }, ""},
		{"a mesh spelt in capitals", matsq, func(r *results.Record) { r.Params["mesh"] = "2X2" }, `mesh = "2X2": the writers spell this mesh "2x2"`},
		{"a mesh with a leading zero", matsq, func(r *results.Record) { r.Params["mesh"] = "02x2" }, `mesh = "02x2": the writers spell this mesh "2x2"`},
		{"hit ratio without the counts", matsq, func(r *results.Record) { r.Derived["read_hit_ratio"] = 0.5 },
			"derived read_hit_ratio = 0.5 without the counters reads and read_hits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recordtest.CheckEdited(t, tc.rec(), tc.edit, tc.want)
		})
	}
}
