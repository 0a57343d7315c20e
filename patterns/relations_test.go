package patterns

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestRelationsOfPatternRecords: a record whose parameters no run on its
// ranks has (a root beyond the ranks, a grid that does not hold them,
// more pairs than ranks/2, a PRTT faster than its own delays) is refused,
// naming the parameter and the rank count; the records the patterns make
// on the same ranks pass.
func TestRelationsOfPatternRecords(t *testing.T) {
	meas := testMeasurement
	two := []float64{6e-5, 7e-5}
	set := func(r results.Record, kv ...any) results.Record {
		p := results.Params{}
		for k, v := range r.Params {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		r.Params = p
		return r
	}
	prtt := PRTT{Bytes: 1, N: 10, DelaySec: 5e-6}.Record(meas(2, two...), results.Meta{})
	bcast := Collective{Op: mpi.CollBcast, Bytes: 8, Root: 3, Iters: 10}.Record(meas(4, two...), results.Meta{})
	barrier := Collective{Op: mpi.CollBarrier, Iters: 10}.Record(meas(4, two...), results.Meta{})
	allreduce := Collective{Op: mpi.CollAllreduce, Type: mpi.Float64, Bytes: 16, Iters: 10}.Record(meas(3, two...), results.Meta{})
	grid := GridShift{Bytes: 8, Rows: 2, Cols: 3, Along: GridAlongCol, Mode: GridModeShift, D: 1}.Record(meas(6, two...), results.Meta{})
	multilat := MultiLatency{Bytes: 8, Iters: 10}.Record(meas(6, two...), results.Meta{})
	mbw := MultiBandwidth{Bytes: 8, Iters: 10, Pairs: 2}.Record(meas(5, two...), results.Meta{})
	kk := KKAccess{K: 3, L: 64, R: 1, Distinct: true, Op: AccessRead}.Record(meas(4, two...), results.Meta{})
	ka := KAccess{K: 2, L: 64, H: 0.5, A: 3, Op: AccessRead}.Record(meas(4, two...), results.Meta{})
	ka.Derived = map[string]float64{"total_s": ka.Median * 3}
	qshift := AggregateOp{Op: AggQShift, Bytes: 8, Q: 2}.Record(meas(5, two...), results.Meta{})
	news := AggregateOp{Op: AggNEWS, Bytes: 8}.Record(meas(6, two...), results.Meta{})
	reduce := ReduceLocal{Bytes: 8, Type: mpi.Float32, Reduce: mpi.OpSum}.Record(meas(1, two...), results.Meta{})
	server := PRTT{Bytes: 1, N: 2, DelaySec: 1e-6, Server: true}.Record(meas(2, two...), results.Meta{})
	tests := []struct {
		name string
		rec  results.Record
		want string // "" accepted
	}{
		{"prtt as measured", prtt, ""},
		{"prtt of delays 1e17 s in 65 us", set(prtt, "delay_s", 1e17), "min 6e-05 s is less than (n-1) x delay_s = 9 x 1e+17 s"},
		{"prtt of delays just beyond its time", set(prtt, "delay_s", 6.7e-6), "is less than (n-1) x delay_s = 9 x 6.7e-06 s"},
		{"prtt of n = 1 with any delay", set(prtt, "n", 1, "delay_s", 1e17), ""},
		{"prtt server as measured", server, ""},
		{"prtt server of one message", set(server, "n", 1), "n = 1 on the server's side"},
		{"bcast rooted at the last rank", bcast, ""},
		{"bcast rooted at rank 4 of 4", set(bcast, "root", 4), "root = 4 on ranks = 4: the root of bcast is one of ranks 0..3"},
		{"bcast rooted at 1e15", set(bcast, "root", 1e15), "root = 1000000000000000 on ranks = 4"},
		{"barrier as measured", barrier, ""},
		{"barrier of root 2", set(barrier, "root", 2), "root = 2: barrier has no root"},
		{"allreduce on 3 ranks", allreduce, ""},
		{"aggregate bcast rooted at the last rank", AggregateOp{Op: AggBcast, Bytes: 8, Root: 4}.Record(meas(5, two...), results.Meta{}), ""},
		{"aggregate qshift of a run rooted at 4", AggregateOp{Op: AggQShift, Bytes: 8, Q: 2, Root: 4}.Record(meas(5, two...), results.Meta{}), ""},
		{"aggregate scatter rooted at rank 5 of 5", set(AggregateOp{Op: AggScatter, Bytes: 8, Root: 4}.Record(meas(5, two...), results.Meta{}), "root", 5), "root = 5 on ranks = 5: the root of scatter is one of ranks 0..4"},
		{"aggregate qshift of root 2", set(qshift, "root", 2), "root = 2: qshift has no root, its records name root 0"},
		{"coll_bar_bytes", set(barrier, "bytes", 8), "bytes = 8: barrier moves no bytes, its records name bytes 0"},
		{"coll_bcast_red", set(bcast, "reduction", "sum"), `reduction = "sum": bcast does not reduce, its records name reduction "none"`},
		{"bcast of doubles", set(bcast, "type", "double"), `type = "double": bcast does not reduce, its records name type "byte"`},
		{"coll_red_none", set(allreduce, "reduction", "none"), `reduction = "none": allreduce reduces, its records name the reduction`},
		{"allreduce of bytes", set(allreduce, "type", "byte", "bytes", 8), `type = "byte": allreduce reduces, its records name the element type (float, double, int, long, char)`},
		{"ibarrier of 8 bytes", set(NonBlocking{Op: mpi.CollBarrier}.Record(meas(4, two...), results.Meta{}), "bytes", 8), "bytes = 8: ibarrier moves no bytes"},
		{"ireduce of reduction none", set(NonBlocking{Op: mpi.CollReduce, Type: mpi.Float32, Bytes: 8}.Record(meas(4, two...), results.Meta{}), "reduction", "none"), `reduction = "none": ireduce reduces`},
		{"ireduce as measured", NonBlocking{Op: mpi.CollReduce, Type: mpi.Float32, Bytes: 8}.Record(meas(4, two...), results.Meta{}), ""},
		{"allreduce of 12 bytes of doubles", set(allreduce, "bytes", 12), "bytes = 12: allreduce of double reduces whole 8-byte elements"},
		{"ireduce rooted beyond", set(NonBlocking{Op: mpi.CollReduce, Type: mpi.Int32, Bytes: 8}.Record(meas(3, two...), results.Meta{}), "root", 3), "root = 3 on ranks = 3: the root of ireduce"},
		{"gridshift 2x3 on 6", grid, ""},
		{"gridshift 1e15x1 on 6", set(grid, "rows", 1e15, "cols", 1), "rows x cols = 1000000000000000 x 1 on ranks = 6"},
		{"gridshift 3x2 on 6, a shift of 2 along columns of 3", set(grid, "rows", 3, "cols", 2, "d", 2), ""},
		{"gridshift shift of 2 along columns of 2", set(grid, "d", 2), "shift d = 2 on lines of 2 ranks: want 1 <= d < 2, a step no run makes"},
		{"gridshift along rows of 1 rank", set(grid, "rows", 6, "cols", 1, "along", GridAlongRow), "a shift along row on a 6x1 grid: its lines of 1 rank have no other rank to shift to"},
		{"gridshift xor on lines of 3", set(grid, "along", GridAlongRow, "mode", GridModeXOR), "xor d = 1 on lines of 3 ranks"},
		{"multilat on 6", multilat, ""},
		{"multilat of 1e15 pairs", set(multilat, "pairs", 1e15), "pairs = 1000000000000000 on ranks = 6: rank i pairs with i + pairs, so pairs <= ranks/2 = 3"},
		{"mbwmr 2 pairs on 5", mbw, ""},
		{"mbwmr 3 pairs on 5", set(mbw, "pairs", 3), "pairs = 3 on ranks = 5"},
		{"kkaccess 3 distinct on 4", kk, ""},
		{"kkaccess 4 distinct on 4", set(kk, "k", 4), "k = 4 distinct targets on ranks = 4: at most 3 ranks to target"},
		{"kkaccess 4 distinct on 4 with self", set(kk, "k", 4, "self", true), ""},
		{"kkaccess distinct and block", set(kk, "block", true), "distinct and block"},
		{"kkaccess k 2^53", set(kk, "k", 1<<53, "distinct", false), "k = 9.007199254740992e+15: a kkaccess run takes k from 1 to 65535"},
		{"kaccess as measured", ka, ""},
		{"kaccess hot spot 0.3 of 4 ranks", set(ka, "h", 0.3), "h = 0.3 on ranks = 4: the realised hot spot is whole ranks, a multiple of 1/4"},
		{"kkaccess portion 0.5 on 5", set(KKAccess{K: 1, L: 64, R: 0.4, Op: AccessRead}.Record(meas(5, two...), results.Meta{}), "r", 0.5),
			"r = 0.5 on ranks = 5: the realised portion of accessing ranks is whole ranks"},
		{"kkaccess portion 1e-300", set(kk, "r", 1e-300), "r = 1e-300 on ranks = 4"},
		{"kkaccess portion 0.4 on 5 as measured", KKAccess{K: 1, L: 64, R: 0.4, Op: AccessRead}.Record(meas(5, two...), results.Meta{}), ""},
		{"kaccess a 1e15", set(ka, "a", 1e15), "a = 1000000000000000: a kaccess run takes a from 1 to 65535"},
		{"kaccess hot spot below one rank", set(ka, "h", 0.1), "h = 0.1 on ranks = 4: the receive hot spot is at least one rank, 1/4"},
		{"qshift by 2 on 5", qshift, ""},
		{"qshift by 5 on 5", set(qshift, "q", 5), "q = 5 on ranks = 5: a q-shift takes 1 <= q < 5"},
		{"scatter of shift 2^53", set(qshift, "op", "scatter", "q", 1<<53), "only a qshift record has a shift"},
		{"news on 6", news, ""},
		{"news of 3 neighbours", set(news, "neighbors", 3), "neighbors = 3 on ranks = 6: a NEWS step on a torus of 6 ranks has 2 or 4"},
		{"news of 2 neighbours on 6, a 1x6 grid", set(news, "neighbors", 2), ""},
		{"news of 4 neighbours on 5", set(AggregateOp{Op: AggNEWS, Bytes: 8}.Record(meas(5, two...), results.Meta{}), "neighbors", 4), "neighbors = 4 on ranks = 5: a NEWS step on a torus of 5 ranks has 2 ("},
		{"news of 0 neighbours on 5", set(AggregateOp{Op: AggNEWS, Bytes: 8}.Record(meas(5, two...), results.Meta{}), "neighbors", 0), "neighbors = 0 on ranks = 5"},
		{"news on 5 as measured", AggregateOp{Op: AggNEWS, Bytes: 8}.Record(meas(5, two...), results.Meta{}), ""},
		{"news on 4 ranks of 4", AggregateOp{Op: AggNEWS, Bytes: 8}.Record(meas(4, two...), results.Meta{}), ""},
		{"reducelocal of 8 bytes of floats", reduce, ""},
		{"reducelocal of 7 bytes of floats", set(reduce, "bytes", 7), "bytes = 7: a local sum of float reduces whole 4-byte elements"},
		{"pingpong on 3 ranks", func() results.Record {
			r := PingPong{Bytes: 8, Iters: 10}.Record(rank0Measurement(2, two...), results.Meta{})
			r.Ranks = 3
			return r
		}(),
			"ranks = 3: pingpong runs on exactly 2 ranks"},
		{"prtt on 4 ranks", func() results.Record { r := prtt; r.Ranks = 4; return r }(), "ranks = 4: prtt runs on exactly 2 ranks"},
		{"bcast of neighbours", set(news, "op", "bcast", "neighbors", 4), "only a news record has neighbours"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rec.CheckValues()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRelationsOfWorkloadItems: a workload item that names its ranks is
// held to the same relations as a record on them; one that does not (the
// point-to-point items of an application's workload) is not.
func TestRelationsOfWorkloadItems(t *testing.T) {
	tests := []struct {
		name string
		it   results.WorkItem
		want string // "" accepted
	}{
		{"news on 4", results.WorkItem{Count: 1, Bench: BenchAggregate, Ranks: 4, Params: results.Params{"op": "news", "impl": "mpi", "bytes": 8, "q": 0, "neighbors": 4}}, ""},
		{"news of 4 neighbours on 5", results.WorkItem{Count: 1, Bench: BenchAggregate, Ranks: 5, Params: results.Params{"op": "news", "impl": "mpi", "bytes": 8, "q": 0, "neighbors": 4}},
			"workload item aggregate bytes=8 impl=mpi neighbors=4 op=news q=0: neighbors = 4 on ranks = 5"},
		{"qshift by 9 on 4", results.WorkItem{Count: 1, Bench: BenchAggregate, Ranks: 4, Params: results.Params{"op": "qshift", "impl": "mpi", "bytes": 8, "q": 9, "neighbors": 0}}, "q = 9 on ranks = 4"},
		{"pingpong on 5", results.WorkItem{Count: 1, Bench: BenchPingPong, Ranks: 5, Params: results.Params{"bytes": 8}}, "ranks = 5: pingpong runs on exactly 2 ranks"},
		{"pingpong without ranks", results.WorkItem{Count: 1, Bench: BenchPingPong, Params: results.Params{"bytes": 8}}, ""},
		{"kkaccess without ranks, a predicted instance", results.WorkItem{Count: 1, Bench: BenchKKAccess, Params: results.Params{"k": 1, "l": 64, "r": 1, "op": "read"}}, ""},
		{"bcast rooted at 9 of 4", results.WorkItem{Count: 1, Bench: BenchCollective, Ranks: 4,
			Params: results.Params{"op": "bcast", "bytes": 8, "type": "byte", "reduction": "none", "root": 9}}, "root = 9 on ranks = 4"},
		{"kkaccess of k = 1e6 packets, a predicted instance", results.WorkItem{Count: 1, Bench: BenchKKAccess, Ranks: 4,
			Params: results.Params{"k": 1000000, "l": 64, "r": 0.25, "op": "read"}}, ""},
		{"kkaccess of r 0.3 on 4", results.WorkItem{Count: 1, Bench: BenchKKAccess, Ranks: 4,
			Params: results.Params{"k": 1, "l": 64, "r": 0.3, "op": "read"}}, "r = 0.3 on ranks = 4"},
		{"reducelocal of 7 bytes of floats", results.WorkItem{Count: 1, Bench: BenchReduceLocal, Ranks: 1,
			Params: results.Params{"bytes": 7, "type": "float", "reduction": "sum"}}, "bytes = 7: a local sum of float"},
		{"chainshift on 3", results.WorkItem{Count: 10, Bench: BenchChainShift, Ranks: 3, Params: results.Params{"bytes": 72}}, ""},
		{"cs_bneg: chainshift of -5 bytes", results.WorkItem{Count: 10, Bench: BenchChainShift, Ranks: 3, Params: results.Params{"bytes": -5}},
			"workload item chainshift: impossible parameter bytes = -5: must not be negative"},
		{"chainshift on 1", results.WorkItem{Count: 10, Bench: BenchChainShift, Ranks: 1, Params: results.Params{"bytes": 72}},
			"ranks = 1: chainshift runs on at least 2 ranks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.it.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWorkloadItemsOfARecordNameTheirRanks: an item of a record is a part
// of its run and names its ranks unless its bench implies them (a pair's
// point); a predicted instance alone may leave them out.
func TestWorkloadItemsOfARecordNameTheirRanks(t *testing.T) {
	scatter := results.WorkItem{Count: 1, Bench: BenchAggregate, Params: results.Params{"op": "scatter", "impl": "textbook", "bytes": 24, "q": 0, "neighbors": 0}}
	kk := results.WorkItem{Count: 1, Bench: BenchKKAccess, Params: results.Params{"k": 1, "l": 64, "r": 1, "op": "read"}}
	pp := results.WorkItem{Count: 1, Bench: BenchPingPong, Params: results.Params{"bytes": 8}}
	tests := []struct {
		name string
		it   results.WorkItem
		want string // "" accepted
	}{
		{"agg_sc_ranks0: scatter without ranks", scatter, "workload item 1: workload item aggregate bytes=24 impl=textbook neighbors=0 op=scatter q=0: ranks = 0: aggregate items name the ranks they run on (at least 1); only a pair's point leaves them out"},
		{"kkaccess without ranks", kk, "ranks = 0: kkaccess items name the ranks they run on (at least 2)"},
		{"pingpong without ranks", pp, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.it.Validate(); err != nil {
				t.Errorf("as a predicted instance: %v", err)
			}
			rec := results.Record{Bench: "app", Unit: "s", Ranks: 5, Workload: []results.WorkItem{tc.it}}
			err := rec.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("in a record: %v, want %q", err, tc.want)
			}
		})
	}
}
