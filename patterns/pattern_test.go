package patterns

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestPatternRecords runs every pattern on goroutine ranks and checks the
// record it builds for itself: bench name, parameters (exactly, and equal to
// Params on the same ranks, which is how applications name the point in a
// workload), the record's ranks, unit, rank reduction, stop reason, and the
// pattern's own counters and derived values.
func TestPatternRecords(t *testing.T) {
	tests := []struct {
		name      string
		p         int
		pat       Pattern
		bench     string
		params    results.Params
		ranks     int
		unit      string
		reduction string
		counters  map[string]float64 // must hold these values (others allowed)
		derived   []string           // keys that must be there
	}{
		{"pingpong", 2, PingPong{Bytes: 8, Iters: 5, Reps: quickReps},
			BenchPingPong, results.Params{"bytes": 8, "iters": 5}, 2, results.UnitSeconds, results.ReductionRank0,
			nil, []string{"round_trip_s"}},
		{"pingpong default iters", 2, PingPong{Bytes: 16 << 10, Warmup: -1, Reps: quickReps},
			BenchPingPong, results.Params{"bytes": 16 << 10, "iters": OSUItersLarge / 10}, 2, results.UnitSeconds, results.ReductionRank0,
			nil, []string{"round_trip_s"}},
		{"bandwidth", 2, Bandwidth{Bytes: 64, Iters: 2, Reps: quickReps},
			BenchBandwidth, results.Params{"bytes": 64, "window": OSUWindow, "iters": 2}, 2, results.UnitBytesPerSec, results.ReductionRank0,
			nil, []string{"rep_time_s"}},
		{"kkaccess realised r", 4, KKAccess{K: 2, L: 16, R: 0.6, Seed: 1, Reps: quickReps},
			BenchKKAccess, results.Params{"k": 2, "l": 16, "r": 0.5, "op": "read"}, 4, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterRAsked: 0.6, CounterRRealised: 0.5, CounterAccessingRanks: 2}, nil},
		{"kkaccess distinct self write", 3, KKAccess{K: 3, L: 8, R: 1, Op: AccessWrite, Distinct: true, Self: true, Seed: 2, Reps: quickReps},
			BenchKKAccess, results.Params{"k": 3, "l": 8, "r": 1.0, "op": "write", "distinct": true, "self": true}, 3, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterRAsked: 1}, nil},
		{"kaccess realised h", 4, KAccess{K: 1, L: 8, H: 0.3, A: 2, Seed: 3, Reps: quickReps},
			BenchKAccess, results.Params{"k": 1, "l": 8, "h": 0.25, "a": 2, "es": false, "op": "read"}, 4, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterHAsked: 0.3, CounterHRealised: 0.25}, nil},
		{"roundtrip", 3, RoundTrip{Bytes: 100, Iters: 2, Reps: quickReps},
			BenchRoundTrip, results.Params{"bytes": 100}, 2, results.UnitSeconds, results.ReductionRank0,
			map[string]float64{CounterIters: 2}, nil},
		{"alltoall of 3 of 4", 4, AllToAll{Bytes: 10, Ranks: 3, Reps: quickReps},
			BenchAllToAll, results.Params{"bytes": 10}, 3, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterMsgsTotal: 6}, nil},
		{"pairwise 1 pair of 4 ranks", 4, Pairwise{Bytes: 8, Pairs: 1, Iters: 2, Reps: quickReps},
			BenchPairwise, results.Params{"bytes": 8}, 2, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterIters: 2}, nil},
		{"rowcontention all", 4, RowContention{Bytes: 8, Iters: 2, Reps: quickReps},
			BenchRowContention, results.Params{"bytes": 8}, 4, results.UnitSeconds, results.ReductionMaxOverRanks,
			nil, nil},
		{"prtt client", 2, PRTT{Bytes: 4, N: 2, Iters: 3, Reps: quickReps},
			BenchPRTT, results.Params{"bytes": 4, "n": 2, "delay_s": 0.0, "side": "client"}, 2, results.UnitSeconds, results.ReductionRank0,
			map[string]float64{CounterIters: 3}, nil},
		{"prtt server", 3, PRTT{Bytes: 4, N: 2, DelaySec: 1e-6, Server: true, Iters: 3, Reps: quickReps},
			BenchPRTT, results.Params{"bytes": 4, "n": 2, "delay_s": 1e-6, "side": "server"}, 2, results.UnitSeconds, results.ReductionMaxOverRanks,
			nil, nil},
		{"permutations", 3, Permutations{Bytes: 8, Count: 7, Seed: 4, Reps: quickReps},
			BenchPermutations, results.Params{"bytes": 8, "count": 7}, 3, results.UnitSeconds, results.ReductionMaxOverRanks,
			nil, []string{"ave_s", "max_over_ave", "min_over_ave"}},
		{"aggregate qshift", 3, AggregateOp{Op: AggQShift, Impl: ImplTextbook, Bytes: 8, Q: 2, Reps: quickReps},
			BenchAggregate, results.Params{"op": "qshift", "impl": "textbook", "bytes": 8, "q": 2, "neighbors": 0}, 3, results.UnitSeconds, results.ReductionMaxOverRanks,
			map[string]float64{CounterTextbookRounds: 1, CounterVolumeBytes: 8}, nil},
		{"aggregate news 1x4", 4, AggregateOp{Op: AggNEWS, Impl: ImplMPI, Bytes: 8, Grid: [2]int{1, 4}, Reps: quickReps},
			BenchAggregate, results.Params{"op": "news", "impl": "mpi", "bytes": 8, "q": 0, "neighbors": 2}, 4, results.UnitSeconds, results.ReductionMaxOverRanks,
			nil, nil},
	}
	meta := results.Meta{Backend: "local", Seed: 9}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := runRanks(t, tt.p, func(c mpi.Comm) (Measurement, error) { return tt.pat.Run(c) })
			rec := tt.pat.Record(rs[0], meta)
			if err := rec.Validate(); err != nil {
				t.Fatal(err)
			}
			if rec.Bench != tt.bench || rec.Ranks != tt.ranks || rec.Unit != tt.unit || rec.Reduction != tt.reduction {
				t.Errorf("bench %q ranks %d unit %q reduction %q; want %q %d %q %q",
					rec.Bench, rec.Ranks, rec.Unit, rec.Reduction, tt.bench, tt.ranks, tt.unit, tt.reduction)
			}
			if !reflect.DeepEqual(rec.Params, tt.params) {
				t.Errorf("params %v, want %v", rec.Params, tt.params)
			}
			if p := tt.pat.Params(tt.p); !reflect.DeepEqual(p, rec.Params) {
				t.Errorf("Params(%d) = %v, but the record has %v", tt.p, p, rec.Params)
			}
			if !slices.Contains([]string{results.StopRelCI, results.StopMaxReps, results.StopMaxTime, results.StopFixed}, rec.Stop) {
				t.Errorf("stop %q is not a results.Stop* value", rec.Stop)
			}
			for k, v := range tt.counters {
				if got, ok := rec.Counters[k]; !ok || !near(got, v) {
					t.Errorf("counter %s = %v (present %v), want %v; counters %v", k, got, ok, v, rec.Counters)
				}
			}
			for _, k := range tt.derived {
				if _, ok := rec.Derived[k]; !ok {
					t.Errorf("derived %s missing: %v", k, slices.Sorted(maps.Keys(rec.Derived)))
				}
			}
			if rec.Meta.Seed != meta.Seed || len(rec.Samples) != rec.N+rec.Invalid {
				t.Errorf("meta %+v, %d samples for n=%d", rec.Meta, len(rec.Samples), rec.N)
			}
		})
	}
}

// TestMeasureReduction: the rank reduction Reps asks for is applied to the
// ranks' times and named in the Measurement with the results constant.
func TestMeasureReduction(t *testing.T) {
	tests := []struct {
		name   string
		reps   Reps
		want   string
		sample float64 // every repetition's value, when exact
	}{
		{"max over ranks", Reps{Reduction: ReduceMax}, results.ReductionMaxOverRanks, 3e-3},
		{"rank 0", Reps{Reduction: ReduceRank0}, results.ReductionRank0, 1e-3},
		{"window start", Reps{Sync: SyncWindow}, results.ReductionWindowLatestEnd, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reps := tt.reps
			reps.Warmup, reps.MinReps, reps.MaxReps = -1, 3, 3
			rs := runRanks(t, 3, func(c mpi.Comm) (Measurement, error) {
				return Measure(c, reps, func() (float64, error) { return float64(c.Rank()+1) * 1e-3, nil })
			})
			for r, m := range rs {
				if m.Reduction != tt.want || m.CommSize != 3 {
					t.Errorf("rank %d: reduction %q comm size %d, want %q 3", r, m.Reduction, m.CommSize, tt.want)
				}
				if m.Stop != results.StopMaxReps {
					t.Errorf("rank %d: stop %q, want %q", r, m.Stop, results.StopMaxReps)
				}
			}
			if tt.sample > 0 {
				for _, v := range rs[0].Samples {
					if !near(v, tt.sample) {
						t.Errorf("samples %v, want %v each", rs[0].Samples, tt.sample)
						break
					}
				}
			}
		})
	}
}
