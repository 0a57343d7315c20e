package patterns

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// testMeasurement is a measurement of samples on p ranks, each the
// maximum over ranks of the ranks' own times (every rank's mean at most
// the samples' mean), as a pattern's Record method takes it.
func testMeasurement(p int, samples ...float64) Measurement {
	m := Measurement{Samples: samples, Summary: results.Summarize(samples), CommSize: p,
		Reduction: results.ReductionMaxOverRanks, Stop: results.StopMaxReps}
	m.RankMin, m.RankAvg, m.RankMax = m.Summary.Median, m.Summary.Median, m.Summary.Median
	m.RankMean = Spread{m.Summary.Mean * 0.8, m.Summary.Mean * 0.9, m.Summary.Mean}
	m.OwnMeans = make([]float64, p)
	for i := range m.OwnMeans {
		m.OwnMeans[i] = m.Summary.Mean
	}
	return m
}

// rank0Measurement is testMeasurement of a two-party pattern, whose
// harness keeps rank 0's time of each repetition (ReduceRank0).
func rank0Measurement(p int, samples ...float64) Measurement {
	m := testMeasurement(p, samples...)
	m.Reduction = results.ReductionRank0
	return m
}

// TestRecordCheckOfPatternRecords: the records the patterns' own Record
// methods make pass the record check whatever their samples (an even
// count whose middle times are far apart, a single repetition), and the
// same records with one derived value, counter or the unit edited are
// refused, naming it.
func TestRecordCheckOfPatternRecords(t *testing.T) {
	meas := testMeasurement
	meas0 := rank0Measurement
	even := []float64{1e-6, 1e-6, 1e-5, 1e-5}
	one := []float64{3e-6}
	nb := meas(4, even...)
	nb.Extra = map[string]float64{DerivedOSUOverall: 9e-6, DerivedOSUCompute: 6e-6, DerivedOSUTest: 0,
		DerivedOSUComm: 5e-6, DerivedOSUCommMin: 4.5e-6, DerivedOSUCommMax: 5.5e-6, DerivedOSUOverlap: OverlapPct(9e-6, 6e-6, 5e-6),
		DerivedComm: 4.75e-6, DerivedOverlap: 10}
	nbMax := meas(4, even...)
	nbMax.Extra = map[string]float64{DerivedOSUOverall: 8e-6, DerivedOSUCompute: 5e-6, DerivedOSUTest: 1e-7,
		DerivedOSUComm: 4e-6, DerivedOSUCommMin: 3e-6, DerivedOSUCommMax: 5e-6, DerivedOSUOverlap: OverlapPct(8e-6, 5e-6, 4e-6),
		DerivedComm: 4e-6, DerivedOverlap: 10}
	perm := meas(4, even...)
	perm.Counters = map[string]float64{CounterMsgsSentMax: 1, CounterMsgsRecvMax: 1, CounterMsgsTotal: 4, CounterBytesSentMax: 16, CounterBytesRecvMax: 16, CounterBytesTotal: 64}
	records := map[string]results.Record{
		"pingpong":        PingPong{Bytes: 8, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"bandwidth even":  Bandwidth{Bytes: 4096, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"bandwidth one":   Bandwidth{Bytes: 4096, Iters: 10}.Record(meas0(2, one...), results.Meta{}),
		"bibw":            Bibw{Bytes: 4096, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"mbwmr":           MultiBandwidth{Bytes: 64, Iters: 10}.Record(meas(4, even...), results.Meta{}),
		"onesided lat":    OneSided{Op: mpi.RMAPut, Mode: mpi.RMALatency, Sync: mpi.SyncFlush, Bytes: 8, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"onesided fence":  OneSided{Op: mpi.RMAPut, Mode: mpi.RMALatency, Sync: mpi.SyncFence, Bytes: 8, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"onesided bibw":   OneSided{Op: mpi.RMAPut, Mode: mpi.RMABibw, Sync: mpi.SyncPSCW, Bytes: 8, Iters: 10}.Record(meas0(2, even...), results.Meta{}),
		"permutations":    Permutations{Bytes: 16, Count: 4}.Record(perm, results.Meta{}),
		"collective":      Collective{Op: mpi.CollAllreduce, Bytes: 8, Iters: 10}.Record(meas(4, even...), results.Meta{}),
		"nonblocking":     NonBlocking{Op: mpi.CollAllreduce, Bytes: 8}.Record(nb, results.Meta{}),
		"collective one":  Collective{Op: mpi.CollBarrier, Iters: 1}.Record(meas(5, one...), results.Meta{}),
		"nonblocking max": NonBlocking{Op: mpi.CollAllreduce, Bytes: 8, Probes: 3}.Record(nbMax, results.Meta{}),
		"multilat":        MultiLatency{Bytes: 8, Iters: 10}.Record(meas(4, even...), results.Meta{}),
		"multilat slowest rank at max": func() results.Record {
			m := meas(5, even...)
			m.RankMax = m.Summary.Max // a rank whose own times were every repetition's sample
			return MultiLatency{Bytes: 8, Iters: 10}.Record(m, results.Meta{})
		}(),
		"kkaccess": KKAccess{K: 2, L: 64, R: 0.5, Op: AccessRead}.Record(meas(4, even...), results.Meta{}),
		"kaccess emulated": func() results.Record {
			r := KAccess{K: 2, L: 64, H: 0.5, A: 3, Op: AccessRead}.Record(meas(4, even...), results.Meta{})
			r.Derived = map[string]float64{"total_s": r.Median * 3, "hot_ranks": 2}
			return r
		}(),
	}
	for name, r := range records {
		if err := r.CheckValues(); err != nil {
			t.Errorf("%s: the pattern's own record is refused: %v", name, err)
		}
	}
	edits := []struct {
		name, record string
		edit         func(r *results.Record)
		want         string
	}{
		{"round trip of -1 s", "pingpong", func(r *results.Record) { r.Derived["round_trip_s"] = -1 }, "derived round_trip_s = -1 is negative"},
		{"round trip of 1e-300 s", "pingpong", func(r *results.Record) { r.Derived["round_trip_s"] = 1e-300 }, "derived round_trip_s = 1e-300 s: a time is 0 or at least 1e-12 s"},
		{"round trip not twice the median", "pingpong", func(r *results.Record) { r.Derived["round_trip_s"] = 5 }, "derived round_trip_s = 5 disagrees with 2 x the median, 1.1e-05"},
		{"a negative counter", "pingpong", func(r *results.Record) { r.Counters = map[string]float64{"bytes_sent": -5} }, "counters bytes_sent = -5 is negative"},
		{"unit ms", "pingpong", func(r *results.Record) { r.Unit = "ms" }, `unit "ms": pingpong records are in "s"`},
		{"a bandwidth as a count", "bandwidth even", func(r *results.Record) { r.Unit = results.UnitCount }, `unit "count": bandwidth records are in "B/s"`},
		{"rep_time_s beside the bandwidths", "bandwidth even", func(r *results.Record) { r.Derived["rep_time_s"] = 1 }, "derived rep_time_s = 1 s disagrees with the bandwidths"},
		{"bibw's rep_time_s of one direction", "bibw", func(r *results.Record) { r.Derived["rep_time_s"] *= 3 }, "derived rep_time_s"},
		{"a message rate its time contradicts", "mbwmr", func(r *results.Record) { r.Derived[DerivedRate] *= 2 }, "derived msg_rate"},
		{"OSU's bandwidth its rate contradicts", "mbwmr", func(r *results.Record) { r.Derived[DerivedOSUBw] *= 2 }, "derived osu_bw_B_per_s"},
		{"one-sided rep_time_s not the calls' time", "onesided fence", func(r *results.Record) { r.Derived["rep_time_s"] /= 2 }, "disagrees with the median x the calls per repetition"},
		{"one-sided latency in B/s", "onesided lat", func(r *results.Record) { r.Unit = "B" }, `unit "B": onesided records are in "s" or "B/s"`},
		{"ave_s not the mean", "permutations", func(r *results.Record) { r.Derived["ave_s"] = r.Min }, "derived ave_s"},
		{"a permutation of two messages a rank", "permutations", func(r *results.Record) { r.Counters[CounterMsgsTotal] = 8 }, "counters msgs_total = 8 disagrees with ranks x permutations a repetition = 4 x 1 = 4"},
		{"a permutation of another size", "permutations", func(r *results.Record) { r.Params["bytes"] = 8 }, "counters bytes_sent_max = 16 disagrees with permutations a repetition x bytes = 1 x 8 = 8"},
		{"max/ave not max over the mean", "permutations", func(r *results.Record) { r.Derived["max_over_ave"] = 1 }, "derived max_over_ave = 1 disagrees with max / mean"},
		{"OSU's minimum above its average", "collective", func(r *results.Record) { r.Derived[DerivedOSUMin] = 1 }, "derived osu_min_s = 1 is above osu_avg_s"},
		{"an overlap its times contradict", "nonblocking", func(r *results.Record) { r.Derived[DerivedOSUOverlap] = 99 }, "derived osu_overlap_pct = 99 disagrees"},
		{"a comm spread out of order", "nonblocking", func(r *results.Record) { r.Derived[DerivedOSUCommMax] = 1e-6 }, "derived osu_comm_s = 5e-06 is above osu_comm_max_s"},
		{"OSU's latency of 1e-300 s", "multilat", func(r *results.Record) { r.Derived[DerivedOSULatSec] = 1e-300 }, "derived osu_latency_s = 1e-300 s"},
		{"a series not a accesses", "kaccess emulated", func(r *results.Record) { r.Derived["total_s"] = r.Median }, "derived total_s"},
		{"collective_d_osu_max_s", "collective", func(r *results.Record) { r.Derived[DerivedOSUMax] = 7 }, "derived osu_max_s = 7 s is above max 1e-05 s: a rank's mean time per call is at most the slowest repetition's"},
		{"coll_allmax", "collective", func(r *results.Record) {
			r.Derived[DerivedOSUMin], r.Derived[DerivedOSUAvg], r.Derived[DerivedOSUMax] = 1000, 1000, 1000
		}, "derived osu_min_s = 1000 s is above max 1e-05 s"},
		{"a collective of rank 0's times", "collective", func(r *results.Record) { r.Reduction = results.ReductionRank0 }, `aggregate "rank0": a collective record's samples are always max-over-ranks`},
		{"a collective without its aggregate", "collective", func(r *results.Record) { r.Reduction = "" }, `aggregate "": a collective record's samples are always max-over-ranks`},
		{"a collective of window ends", "collective one", func(r *results.Record) { r.Reduction = results.ReductionWindowLatestEnd }, `aggregate "window-latest-end": a collective record's samples are always max-over-ranks`},
		{"a non-blocking collective of rank 0's times", "nonblocking max", func(r *results.Record) { r.Reduction = results.ReductionRank0Wall }, `aggregate "rank0-wall": a nonblocking record's samples are always max-over-ranks`},
		{"a multi-pair latency of rank 0's times", "multilat", func(r *results.Record) { r.Reduction = results.ReductionRank0 }, `aggregate "rank0": a multilat record's samples are always max-over-ranks`},
		{"a multi-pair latency of one pair on 4 ranks", "multilat", func(r *results.Record) { r.Params["pairs"] = 1 },
			"pairs = 1 on ranks = 4: rank i pairs with i + ranks/2, so a multilat record's pairs are ranks/2 = 2"},
		{"a multi-pair latency of a rank slower than every repetition", "multilat", func(r *results.Record) { r.RankMax = 2 * r.Max },
			"rank_max = 2e-05 s is above max = 1e-05 s: in a max-over-ranks record a rank's own time of a repetition is at most its sample"},
		{"a collective of a rank slower than every repetition", "collective", func(r *results.Record) { r.RankMax = 1 }, "rank_max = 1 s is above max = 1e-05 s: in a max-over-ranks record a rank's own time of a repetition is at most its sample"},
		{"a k-k-access of a rank slower than every repetition", "kkaccess", func(r *results.Record) { r.RankMax = 2 * r.Max },
			"s: in a max-over-ranks record a rank's own time of a repetition is at most its sample"},
		{"window-timed permutations of a rank slower than every repetition", "permutations", func(r *results.Record) { r.Reduction, r.RankMax = results.ReductionWindowLatestEnd, 2*r.Max },
			"s: in a window-latest-end record a rank's own time of a repetition is at most its sample"},
		{"a collective with dropped samples", "collective", func(r *results.Record) { r.Dropped = 2 }, "dropped = 2: a collective record keeps every repetition, none is dropped"},
		{"a non-blocking collective with dropped samples", "nonblocking", func(r *results.Record) { r.Dropped = 1 }, "dropped = 1: a nonblocking record keeps every repetition"},
		{"a multi-pair latency with dropped samples", "multilat", func(r *results.Record) { r.Dropped = 3 }, "dropped = 3: a multilat record keeps every repetition"},
		{"nonblocking_d_osu_test_s", "nonblocking", func(r *results.Record) { r.Derived[DerivedOSUTest] = 7 }, "derived osu_test_s = 7 s with probes = 0: without probes no MPI_Test runs, its time is 0"},
		{"nb_comm_huge", "nonblocking max", func(r *results.Record) { r.Derived[DerivedComm] = 1e6 }, "derived comm_s = 1e+06 s is above 2 x ranks x osu_comm_max_s = 2 x 4 x 5e-06 s"},
		{"nb_overall", "nonblocking max", func(r *results.Record) { r.Derived[DerivedOSUOverall] = 1e6 }, "derived osu_overall_s = 1e+06 s is above max 1e-05 s"},
		{"nb comm max above the slowest", "nonblocking max", func(r *results.Record) { r.Derived[DerivedOSUCommMax] = 1 }, "derived osu_comm_max_s = 1 s is above max 1e-05 s: each rank computes at least"},
		{"nb compute above the slowest", "nonblocking max", func(r *results.Record) { r.Derived[DerivedOSUCompute] = 1 }, "derived osu_compute_s + osu_test_s = 1.0000001 s is above max 1e-05 s"},
		{"kkaccess_c_r_asked", "kkaccess", func(r *results.Record) { r.Counters[CounterRAsked] = 9.5 }, "counters r_asked = 9.5: an asked r is in (0, 1]"},
		{"r_asked of 0", "kkaccess", func(r *results.Record) { r.Counters[CounterRAsked] = 0 }, "counters r_asked = 0: an asked r is in (0, 1]"},
		{"r_asked of another r", "kkaccess", func(r *results.Record) { r.Counters[CounterRAsked] = 1 }, "counters r_asked = 1 disagrees with r = 0.5"},
		{"kaccess_c_h_asked", "kaccess emulated", func(r *results.Record) { r.Counters[CounterHAsked] = 10.33 }, "counters h_asked = 10.33: an asked h is in (0, 1]"},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			r := records[tc.record]
			r.Derived = clone(r.Derived)
			r.Counters = clone(r.Counters)
			tc.edit(&r)
			err := r.CheckValues()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func clone(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestWriterLabelsOfPatternBenches: every bench whose records this
// package writes has its aggregates and stops in results' table, and a
// two-party pattern's own record (rank 0's times) or a --sync window
// pattern's (window ends) pass it; a chain shift is a workload point,
// never a record.
func TestWriterLabelsOfPatternBenches(t *testing.T) {
	for bench := range benchParams {
		if bench == BenchChainShift {
			continue
		}
		if _, _, ok := results.WriterLabels(bench); !ok {
			t.Errorf("%s: no aggregates and stops in results' writer table", bench)
		}
	}
	window := testMeasurement(4, 1e-6, 2e-6, 3e-6)
	window.Reduction = results.ReductionWindowLatestEnd
	for name, r := range map[string]results.Record{
		"roundtrip":       RoundTrip{Bytes: 8}.Record(rank0Measurement(2, 1e-6, 2e-6, 3e-6), results.Meta{}),
		"alltoall window": AllToAll{Bytes: 8}.Record(window, results.Meta{}),
		"kkaccess window": KKAccess{K: 2, L: 64, R: 0.5, Op: AccessRead}.Record(window, results.Meta{}),
		"permutations fixed": func() results.Record {
			m := testMeasurement(4, 1e-6, 2e-6, 3e-6)
			m.Stop = results.StopFixed
			return Permutations{Bytes: 16, Count: 3}.Record(m, results.Meta{})
		}(),
	} {
		if err := r.CheckValues(); err != nil {
			t.Errorf("%s: the pattern's own record is refused: %v", name, err)
		}
	}
}
