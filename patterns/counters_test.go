package patterns

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestRecordParamsAndCounters: a record without a parameter its writer
// always writes, a pair pattern on an odd rank count, an algorithm its
// collective does not have, and counters or derived values that
// contradict the parameters and statistics they are a function of are
// refused, naming the field, its value and what is accepted; the records
// the patterns make (and their counters as a run writes them) pass.
func TestRecordParamsAndCounters(t *testing.T) {
	meas := testMeasurement
	two := []float64{6e-5, 7e-5}
	with := func(m Measurement, ctr map[string]float64) Measurement {
		m.Counters = ctr
		return m
	}
	traffic := func(perRank, ranks, bytes float64, extra ...any) map[string]float64 {
		c := map[string]float64{CounterMsgsSentMax: perRank, CounterMsgsRecvMax: perRank, CounterMsgsTotal: ranks * perRank,
			CounterBytesSentMax: perRank * bytes, CounterBytesRecvMax: perRank * bytes, CounterBytesTotal: ranks * perRank * bytes}
		for i := 0; i < len(extra); i += 2 {
			c[extra[i].(string)] = float64(extra[i+1].(int))
		}
		return c
	}
	edit := func(r results.Record, f func(r *results.Record)) results.Record {
		r.Params = cloneParams(r.Params)
		r.Derived = clone(r.Derived)
		r.Counters = clone(r.Counters)
		f(&r)
		return r
	}
	pp := PingPong{Bytes: 8, Iters: 10}.Record(rank0Measurement(2, two...), results.Meta{})
	kk := KKAccess{K: 1, L: 64, R: 0.5, Op: AccessRead}.Record(with(meas(4, two...), map[string]float64{CounterAccessingRanks: 2, CounterRRealised: 0.5}), results.Meta{})
	pw := Pairwise{Bytes: 9}.Record(with(meas(4, two...), traffic(81, 4, 9, CounterIters, 81)), results.Meta{})
	rc := RowContention{Bytes: 8}.Record(with(meas(6, two...), traffic(64, 6, 8, CounterIters, 64)), results.Meta{})
	rt := RoundTrip{Bytes: 8}.Record(with(rank0Measurement(3, two...), traffic(100, 2, 8, CounterIters, 100)), results.Meta{})
	a2a := AllToAll{Bytes: 5}.Record(with(meas(3, two...), traffic(2, 3, 5)), results.Meta{})
	a2a3 := AllToAll{Bytes: 5, Iters: 3}.Record(with(meas(3, two...), traffic(6, 3, 5)), results.Meta{})
	prtt := PRTT{Bytes: 1, N: 2}.Record(with(meas(2, two...), map[string]float64{CounterMsgsSentMax: 198, CounterMsgsRecvMax: 198, CounterMsgsTotal: 297,
		CounterBytesSentMax: 198, CounterBytesRecvMax: 198, CounterBytesTotal: 297, CounterIters: 99}), results.Meta{})
	coll := Collective{Op: mpi.CollBcast, Bytes: 8, Iters: 10}.Record(meas(4, two...), results.Meta{})
	nbm := meas(3, two...)
	nbm.Extra = map[string]float64{DerivedOSUOverall: 2e-5, DerivedOSUCompute: 1.2e-5, DerivedOSUTest: 0,
		DerivedOSUComm: 1e-5, DerivedOSUCommMin: 9e-6, DerivedOSUCommMax: 1.1e-5, DerivedOSUOverlap: OverlapPct(2e-5, 1.2e-5, 1e-5),
		DerivedComm: 9.5e-6, DerivedOverlap: 10}
	nb := NonBlocking{Op: mpi.CollBarrier}.Record(nbm, results.Meta{})
	ml := MultiLatency{Bytes: 3, Iters: 1}.Record(meas(5, two...), results.Meta{})
	// 3 accesses of 2 packets by 3 of 5 ranks, writes of 24 bytes:
	// 18 requests and 18 acknowledgements, each packet 32 + 24 bytes.
	kkw := KKAccess{K: 2, L: 24, R: 0.6, Op: AccessWrite, A: 3}.Record(with(meas(5, two...), map[string]float64{CounterAccessingRanks: 3, CounterRRealised: 0.6,
		CounterMsgsSentMax: 12, CounterMsgsRecvMax: 12, CounterMsgsTotal: 36, CounterBytesSentMax: 336, CounterBytesRecvMax: 336, CounterBytesTotal: 1008}), results.Meta{})
	// 2 k-accesses of 1 packet by each of 5 ranks, reads of 86 bytes.
	kar := KAccess{K: 1, L: 86, H: 0.4, A: 2, Op: AccessRead}.Record(with(meas(5, two...), map[string]float64{CounterHotRanks: 2, CounterHRealised: 0.4,
		CounterMsgsSentMax: 5, CounterMsgsRecvMax: 5, CounterMsgsTotal: 20, CounterBytesSentMax: 300, CounterBytesRecvMax: 300, CounterBytesTotal: 1020}), results.Meta{})
	ka := KAccess{K: 1, L: 256, H: 0.2, A: 1, Op: AccessRead}.Record(with(meas(5, two...), map[string]float64{CounterHotRanks: 1, CounterHRealised: 0.2}), results.Meta{})
	news := AggregateOp{Op: AggNEWS, Impl: ImplMPI, Bytes: 8}.Record(with(meas(8, two...), map[string]float64{CounterVolumeBytes: 32, CounterTextbookRounds: 4}), results.Meta{})
	qs := AggregateOp{Op: AggQShift, Impl: ImplMesh1D, Bytes: 8, Q: 3}
	qshift := qs.Record(with(meas(8, two...), map[string]float64{CounterVolumeBytes: 8, CounterTextbookRounds: float64(qs.Rounds(8))}), results.Meta{})
	scatter := AggregateOp{Op: AggScatter, Impl: ImplTextbook, Bytes: 8}.Record(with(meas(7, two...), map[string]float64{CounterVolumeBytes: 48, CounterTextbookRounds: 3}), results.Meta{})
	tests := []struct {
		name string
		rec  results.Record
		want string // "" accepted
	}{
		{"pingpong as measured", pp, ""},
		{"pingpong without iters, an optional parameter", edit(pp, func(r *results.Record) { delete(r.Params, "iters") }), ""},
		{"ub_empty_pingpong", edit(pp, func(r *results.Record) { r.Params = results.Params{} }), "has no parameter bytes (pingpong records have bytes, and may have iters)"},
		{"kkaccess without l", edit(kk, func(r *results.Record) { delete(r.Params, "l") }), "has no parameter l (kkaccess records have k, l, r, op, and may have distinct, self, block, a, network)"},
		{"kkaccess as measured", kk, ""},
		{"pairwise as measured", pw, ""},
		{"pw_odd", edit(pw, func(r *results.Record) { r.Ranks = 3 }), "ranks = 3: pairwise runs on an even number of ranks"},
		{"rowcontention as measured", rc, ""},
		{"rc_odd", edit(rc, func(r *results.Record) { r.Ranks = 5 }), "ranks = 5: rowcontention runs on an even number of ranks"},
		{"collective as measured", coll, ""},
		{"coll_alg", edit(coll, func(r *results.Record) { r.Params["alg"] = "nosuch" }), `alg = "nosuch": bcast runs one of default, basic_linear`},
		{"bcast forced to an allreduce algorithm", edit(coll, func(r *results.Record) { r.Params["alg"] = "ring" }), `alg = "ring": bcast runs one of default, basic_linear`},
		{"bcast forced to MPICH's binomial", edit(coll, func(r *results.Record) { r.Params["alg"] = "scatter_ring_allgather" }), ""},
		{"alltoall as measured", a2a, ""},
		{"alltoall of 3 exchanges per repetition", a2a3, ""},
		{"a2a_msgs", edit(a2a, func(r *results.Record) { r.Counters[CounterMsgsTotal] = 1e15 }), "counters msgs_total = 1e+15 disagrees with ranks x (ranks-1) x exchanges = 3 x 2 x 1 = 6"},
		{"a2a_sentmax", edit(a2a, func(r *results.Record) { r.Counters[CounterMsgsSentMax] = 99 }), "counters msgs_sent_max = 99: its exchanges per repetition msgs_sent_max / (ranks-1) = 99 / 2, 49.5, is not a whole number >= 1"},
		{"a2a_bytes", edit(a2a, func(r *results.Record) { r.Counters[CounterBytesTotal] = 1e18 }), "counters bytes_total = 1e+18 disagrees with ranks x (ranks-1) x exchanges x bytes = 3 x 2 x 1 x 5 = 30"},
		{"alltoall received more than sent", edit(a2a, func(r *results.Record) { r.Counters[CounterMsgsRecvMax] = 4 }), "counters msgs_recv_max = 4 disagrees with (ranks-1) x exchanges = 2 x 1 = 2"},
		{"pw_iters", edit(pw, func(r *results.Record) { r.Counters[CounterIters] = 1e15 }), "counters msgs_sent_max = 81 disagrees with counters iters = 1000000000000000"},
		{"pairwise of half a round trip per repetition", edit(pw, func(r *results.Record) { r.Counters[CounterIters] = 0.5 }), "counters iters = 0.5: the round trips per repetition, 0.5, is not a whole number >= 1"},
		{"pairwise bytes of another size", edit(pw, func(r *results.Record) { r.Counters[CounterBytesSentMax] = 1e6 }), "counters bytes_sent_max = 1e+06 disagrees with counters iters x bytes = 81 x 9 = 729"},
		{"roundtrip as measured", rt, ""},
		{"roundtrip of 1e15 messages", edit(rt, func(r *results.Record) { r.Counters[CounterMsgsTotal] = 1e15 }), "counters msgs_total = 1e+15 disagrees with ranks x counters iters = 2 x 100 = 200"},
		{"prtt as measured", prtt, ""},
		{"prtt_msgs", edit(prtt, func(r *results.Record) { r.Counters[CounterMsgsTotal] = 1e15 }), "counters msgs_total = 1e+15 disagrees with iters x (n+1) = 99 x 3 = 297"},
		{"prtt bytes of another size", edit(prtt, func(r *results.Record) { r.Counters[CounterBytesSentMax] = 5 }), "counters bytes_sent_max = 5 disagrees with iters x n x bytes = 99 x 2 x 1 = 198"},
		{"nonblocking as measured", nb, ""},
		{"nb_ovl", edit(nb, func(r *results.Record) { r.Derived[DerivedOverlap] = 150 }), "derived overlap_pct = 150: an overlap is a percentage of the communication, 0 to 100"},
		{"nonblocking OSU overlap of 150%", edit(nb, func(r *results.Record) { r.Derived[DerivedOSUOverlap] = 150 }), "derived osu_overlap_pct = 150: an overlap is a percentage"},
		{"multilat as measured", ml, ""},
		{"ml_lat", edit(ml, func(r *results.Record) { r.Derived[DerivedOSULatSec] = 1e6 }), "derived osu_latency_s = 1e+06 s is above max 7e-05 s"},
		{"kaccess as measured", ka, ""},
		{"ka_hr", edit(ka, func(r *results.Record) { r.Counters[CounterHRealised] = 0.9 }), "counters h_realised = 0.9 disagrees with the realised h = 0.2"},
		{"kaccess of 3 hot ranks at h 0.2", edit(ka, func(r *results.Record) { r.Counters[CounterHotRanks] = 3 }), "counters hot_ranks = 3 disagrees with h x ranks = 0.2 x 5 = 1"},
		{"kaccess asked h 0.6 realised as 0.2", edit(ka, func(r *results.Record) { r.Counters[CounterHAsked] = 0.6 }), "counters h_asked = 0.6 disagrees with h = 0.2: on ranks = 5 it rounds to 3 hot ranks"},
		{"kkaccess write traffic as measured", kkw, ""},
		{"kkaccess of another k's messages", edit(kkw, func(r *results.Record) { r.Counters[CounterMsgsTotal] = 8 }), "counters msgs_total = 8 disagrees with 2 x a x k x accessing ranks = 2 x 3 x 2 x 3 = 36"},
		{"kkaccess write bytes of a read", edit(kkw, func(r *results.Record) { r.Counters[CounterBytesTotal] = 18 * (16 + 24) }), "counters bytes_total = 720 disagrees with a x k x accessing ranks x (32 header bytes + l) = 3 x 2 x 3 x (32 + 24) = 1008"},
		{"kaccess read traffic as measured", kar, ""},
		{"kaccess bytes of another l", edit(kar, func(r *results.Record) { r.Params["l"] = 100 }), "counters bytes_total = 1020 disagrees with a x k x ranks x (16 header bytes + l) = 2 x 1 x 5 x (16 + 100) = 1160"},
		{"kaccess busiest rank above the total", edit(kar, func(r *results.Record) { r.Counters[CounterMsgsSentMax] = 21 }), "counters msgs_sent_max = 21 with msgs_total = 20 on ranks = 5: the busiest rank's share is between the mean over ranks, 4, and the total"},
		{"kaccess busiest rank below the mean", edit(kar, func(r *results.Record) { r.Counters[CounterBytesRecvMax] = 100 }), "counters bytes_recv_max = 100 with bytes_total = 1020 on ranks = 5: the busiest rank's share is between the mean over ranks, 204, and the total"},
		{"kkaccess asked r 1 realised as 0.5", edit(kk, func(r *results.Record) { r.Counters[CounterRAsked] = 1 }), "counters r_asked = 1 disagrees with r = 0.5: on ranks = 4 it rounds to 4 accessing ranks"},
		{"news as measured", news, ""},
		{"qshift on a ring as measured", qshift, ""},
		{"scatter on 7 as measured", scatter, ""},
		{"agg_vol1e18", edit(news, func(r *results.Record) { r.Counters[CounterVolumeBytes] = 1e18 }), "counters volume_bytes = 1e+18 disagrees with neighbors x bytes = 4 x 8 = 32"},
		{"agg_rounds1e15", edit(news, func(r *results.Record) { r.Counters[CounterTextbookRounds] = 1e15 }), "counters textbook_rounds = 1e+15 disagrees with the rounds of mpi's news on 8 ranks = 4"},
		{"scatter of the volume of one message", edit(scatter, func(r *results.Record) { r.Counters[CounterVolumeBytes] = 8 }), "counters volume_bytes = 8 disagrees with (ranks-1) x bytes = 6 x 8 = 48"},
		{"qshift of a hypercube's rounds on a ring", edit(qshift, func(r *results.Record) { r.Counters[CounterTextbookRounds] = 1 }), "counters textbook_rounds = 1 disagrees with the rounds of mesh1d's qshift on 8 ranks = 3"},
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

// TestAlgOfInstances: a predicted instance's or workload item's alg is
// one of some collective's (the spec's values); a record's one of its op's.
func TestAlgOfInstances(t *testing.T) {
	if err := CheckParams(BenchCollective, results.Params{"op": "bcast", "alg": "nosuch"}, false); err == nil || !strings.Contains(err.Error(), `alg = "nosuch": must be one of basic_linear,`) {
		t.Errorf("alg nosuch: %v", err)
	}
	if err := CheckParams(BenchCollective, results.Params{"op": "allreduce", "alg": "ring"}, false); err != nil {
		t.Errorf("alg ring: %v", err)
	}
}

// TestRealisedPortions: two --r values whose r p rounds to the same whole
// ranks are refused when listed, naming both and the r they realise; from
// a default list the second is left out.
func TestRealisedPortions(t *testing.T) {
	if _, err := RealisedPortions("R", []float64{0.5, 0.6}, 3, true); err == nil || !strings.Contains(err.Error(), "0.5 and 0.6 both realise r = 2/3 = 0.6666666666666666 on 3 ranks") {
		t.Errorf("listed 0.5,0.6 on 3 ranks: %v", err)
	}
	got, err := RealisedPortions("R", []float64{0.25, 0.5, 1}, 2, false)
	if err != nil || len(got) != 2 || got[0] != 0.25 || got[1] != 1 {
		t.Errorf("default 0.25,0.5,1 on 2 ranks: %v, %v; want [0.25 1]", got, err)
	}
	if got, err := RealisedPortions("R", []float64{0.25, 0.5, 1}, 4, true); err != nil || len(got) != 3 {
		t.Errorf("listed 0.25,0.5,1 on 4 ranks: %v, %v; want all three", got, err)
	}
}

func cloneParams(p results.Params) results.Params {
	out := results.Params{}
	for k, v := range p {
		out[k] = v
	}
	return out
}
