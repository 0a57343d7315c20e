package divalib

import (
	"cmp"

	"github.com/commcost/commcost/divalib/storecheck"
	"github.com/commcost/commcost/results"
)

// Bench names of the records of the DIVA experiments (commcost dsm). Like
// emulate and permsched, the library builds its records; the CLI only
// writes them. Every record's ranks are the mesh's processors (one rank
// each).
const (
	BenchCheck     = "dsm-check"     // params strategy, workload, mesh, ops [, memory_bytes]
	BenchMatSquare = "dsm-matsquare" // params strategy, mesh, block_ints, kernel
	BenchOverhead  = "dsm-overhead"  // params strategy, op, bytes, mesh
)

// CheckRecord is the record of one storecheck workload over a store of the
// named strategy on mesh: its wall-clock time on rank 0 (one sample,
// results.ReductionRank0Wall: the duration of a correctness run, not a
// timing loop) and the checker's counts as counters. memoryBytes is the
// store's bound on copies (Config.MemoryBytes), recorded when set.
func CheckRecord(strategy, workload string, mesh Mesh, memoryBytes int, rep storecheck.Report, elapsedSec float64, meta results.Meta) results.Record {
	rec := results.Record{
		Schema: results.SchemaVersion, Bench: BenchCheck,
		Params: results.Params{"strategy": strategy, "workload": workload, "mesh": mesh.String(), "ops": rep.Ops},
		Ranks:  mesh.Size(), Unit: results.UnitSeconds, Summary: results.Summarize([]float64{elapsedSec}),
		Reduction: results.ReductionRank0Wall, Stop: results.StopFixed,
		Counters: map[string]float64{
			"ops": float64(rep.Ops), "reads": float64(rep.Reads), "writes": float64(rep.Writes),
			"stale_reads": float64(rep.StaleReads), "future_reads": float64(rep.FutureReads),
			"torn_reads": float64(rep.TornReads), "unknown_values": float64(rep.UnknownValues),
			"mismatches": float64(rep.Mismatches),
		},
		Meta: meta,
	}
	if memoryBytes > 0 {
		rec.Params["memory_bytes"] = memoryBytes
	}
	return rec
}

// Record is the record of one matrix-square run: the repetitions' times
// (max over ranks of the measured phases), the congestion figures as
// counters, and, when hand (the hand-optimised run of the same
// configuration) is given, the congestion and time ratios against it as
// derived values.
func (r MatSquareResult) Record(cfg MatSquareConfig, hand *MatSquareResult, meta results.Meta) results.Record {
	g := r.Congestion
	rec := results.Record{
		Schema: results.SchemaVersion, Bench: BenchMatSquare,
		Params: results.Params{"strategy": r.Strategy, "mesh": r.Mesh.String(), "block_ints": r.BlockInts, "kernel": string(cmp.Or(cfg.Kernel, KernelMul))},
		Ranks:  r.Mesh.Size(), Unit: results.UnitSeconds, Summary: results.Summarize(r.CommSec), Samples: r.CommSec,
		Reduction: results.ReductionMaxOverRanks, Stop: cmp.Or(r.Stop, results.StopFixed),
		Counters: g.Counters(),
		Derived:  map[string]float64{},
		Meta:     meta,
	}
	if r.Verified {
		rec.Counters["verified"] = 1
	}
	if hand != nil && hand.Congestion.MaxLinkBytes > 0 {
		rec.Derived["congestion_ratio"] = float64(g.MaxLinkBytes) / float64(hand.Congestion.MaxLinkBytes)
		if hs := results.Summarize(hand.CommSec); hs.Median > 0 {
			rec.Derived["time_ratio"] = rec.Median / hs.Median
		}
	}
	return rec
}

// Records are the four records of an overhead measurement on a store of the
// named strategy and barrier on mesh: cached read and cached write (rank
// 0's own accesses, results.ReductionRank0), the store's barrier and MPI's
// (max over ranks). Param bytes is the accessed variable's size (a
// barrier's is 0), so that every overhead record, remote reads of l bytes
// included, has the same parameters.
func (o Overhead) Records(strategy string, barrier BarrierKind, mesh Mesh, meta results.Meta) []results.Record {
	ops := []struct {
		op, reduction string
		bytes         int
		v             []float64
	}{
		{"cached-read", results.ReductionRank0, overheadVarBytes, o.CachedReadSec},
		{"cached-write", results.ReductionRank0, overheadVarBytes, o.CachedWriteSec},
		{"barrier-" + barrier.String(), results.ReductionMaxOverRanks, 0, o.BarrierSec},
		{"mpi-barrier", results.ReductionMaxOverRanks, 0, o.MPIBarrierSec},
	}
	out := make([]results.Record, 0, len(ops))
	for _, m := range ops {
		var w [2]int64
		if m.op == "cached-write" {
			w = [2]int64{o.CachedWrites, o.CachedInPlace}
		}
		out = append(out, results.Record{
			Schema: results.SchemaVersion, Bench: BenchOverhead,
			Params: results.Params{"strategy": strategy, "op": m.op, "bytes": m.bytes, "mesh": mesh.String()},
			Ranks:  mesh.Size(), Unit: results.UnitSeconds, Summary: results.Summarize(m.v), Samples: m.v,
			Reduction: m.reduction, Stop: results.StopFixed, Meta: meta, Counters: writeCounters(w),
		})
	}
	return out
}

// writeCounters are the counters of every dsm-overhead record (one set,
// so that CSV's columns hold for the whole bench): the recording rank's
// store writes during the op's measurement, timed or not, and how many of
// them changed the value's buffer in place (Stats.WritesInPlace).
func writeCounters(w [2]int64) map[string]float64 {
	return map[string]float64{"writes": float64(w[0]), "writes_in_place": float64(w[1])}
}

// RemoteReadRecord is the record of MeasureRemoteRead on a store of the
// named strategy on mesh: op remote-read, param bytes (l); every
// repetition's time, max over ranks; as counters (writeCounters) the
// rank's writes as a home, which invalidate the copies between batches
// (untimed), and how many of them were made in place.
func RemoteReadRecord(strategy string, bytes int, mesh Mesh, samples []float64, writes [2]int64, meta results.Meta) results.Record {
	return results.Record{
		Schema: results.SchemaVersion, Bench: BenchOverhead,
		Params: results.Params{"strategy": strategy, "op": "remote-read", "bytes": bytes, "mesh": mesh.String()},
		Ranks:  mesh.Size(), Unit: results.UnitSeconds, Summary: results.Summarize(samples), Samples: samples,
		Reduction: results.ReductionMaxOverRanks, Stop: results.StopFixed, Meta: meta,
		Counters: writeCounters(writes),
	}
}
