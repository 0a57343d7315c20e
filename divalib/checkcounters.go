package divalib

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/commcost/commcost/results"
)

// CheckWorkloadNames are the names of CheckWorkloads, in order: the
// values of a dsm-check record's workload param.
func CheckWorkloadNames() []string {
	return []string{"coherence", "torn-reads", "disjoint-writes", "lock-counter", "errors"}
}

// runWorkloads are the names of the workloads other than CheckWorkloads
// that RunCheck ran in this process (a CheckConfig's own Workloads):
// their records are of a run too, and are read back by the process that
// wrote them.
var runWorkloads sync.Map // string -> struct{}

// checkWorkloadName refuses a dsm-check record whose workload is none of
// CheckWorkloadNames nor one RunCheck ran in this process.
func checkWorkloadName(p results.Params) error {
	w, ok := p["workload"].(string)
	if !ok || slices.Contains(CheckWorkloadNames(), w) {
		return nil
	}
	if _, ran := runWorkloads.Load(w); ran {
		return nil
	}
	return fmt.Errorf("workload = %q: must be one of %s", w, strings.Join(CheckWorkloadNames(), ", "))
}

// checkWorkloadOps are the operations each fixed workload of CheckWorkloads
// counts per rank (storecheck): torn-reads 200 ops per rank, disjoint-writes
// 20 writes and 1 read, lock-counter 30 increments of 2 ops each (its
// reads and writes are not counted as such), errors 6 contract checks.
// The coherence workload's ops are the --ops asked, split over ranks.
var checkWorkloadOps = map[string]struct{ ops, reads, writes int }{
	"torn-reads":      {200, -1, -1},
	"disjoint-writes": {21, 1, 20},
	"lock-counter":    {60, 0, 0},
	"errors":          {6, 0, 0},
}

// checkViolationCounts are the violation counters each workload can set
// (storecheck): the others stay 0. A record is written whether or not its
// workload found violations (the run then ends in exit status 1), so the
// counts are bounded, not required to be 0.
var checkViolationCounts = map[string][]string{
	"coherence":       {"stale_reads", "future_reads", "torn_reads", "unknown_values"},
	"torn-reads":      {"torn_reads"},
	"disjoint-writes": {"mismatches"},
	"lock-counter":    {"mismatches"},
	"errors":          {"mismatches"},
}

// checkMismatchBound is the most mismatches a workload reports on ranks
// ranks: disjoint-writes compares every rank's field on every rank, lock-
// counter each of its 3 counters on every rank, errors its 6 checks on
// every rank.
func checkMismatchBound(workload string, ranks int) float64 {
	p := float64(ranks)
	switch workload {
	case "disjoint-writes":
		return p * p
	case "lock-counter":
		return 3 * p
	case "errors":
		return 6 * p
	}
	return 0
}

// checkCheckCounters ties a dsm-check record's counters to its params as
// storecheck counts them: the ops counter is the ops param, reads +
// writes = ops where the workload counts both (coherence, torn-reads),
// the fixed workloads' ops, reads and writes are their per-rank counts
// times ranks, a violation counter is one the workload sets, each read
// violation is at most the reads (stale and future can both hit one
// read, so they are bounded each), and mismatches are at most the
// comparisons made.
func checkCheckCounters(ranks int, workload string, ops float64, c map[string]float64) error {
	for _, k := range []string{"ops", "reads", "writes", "stale_reads", "future_reads", "torn_reads", "unknown_values", "mismatches"} {
		if v, ok := c[k]; ok && (v < 0 || v != math.Trunc(v)) {
			return fmt.Errorf("counters %s = %v: a count is a whole number >= 0", k, v)
		}
	}
	if v, ok := c["ops"]; ok && v != ops {
		return fmt.Errorf("counters ops = %v disagrees with params ops = %v: the record's ops param is the operations the workload made", v, ops)
	}
	p := float64(ranks)
	if w, ok := checkWorkloadOps[workload]; ok {
		if want := float64(w.ops) * p; ops != want {
			return fmt.Errorf("params ops = %v disagrees with %s's %d ops per rank x ranks = %d x %d = %v", ops, workload, w.ops, w.ops, ranks, want)
		}
		for _, f := range []struct {
			key string
			n   int
		}{{"reads", w.reads}, {"writes", w.writes}} {
			if v, ok := c[f.key]; ok && f.n >= 0 && v != float64(f.n)*p {
				return fmt.Errorf("counters %s = %v disagrees with %s's %d %s per rank x ranks = %d x %d = %v", f.key, v, workload, f.n, f.key, f.n, ranks, float64(f.n)*p)
			}
		}
	}
	rd, okR := c["reads"]
	wr, okW := c["writes"]
	if (workload == "coherence" || workload == "torn-reads") && okR && okW && rd+wr != ops {
		return fmt.Errorf("counters reads + writes = %v + %v = %v disagrees with ops = %v: every operation of %s is a read or a write", rd, wr, rd+wr, ops, workload)
	}
	allowed, known := checkViolationCounts[workload]
	if !known {
		return nil
	}
	for _, k := range []string{"stale_reads", "future_reads", "torn_reads", "unknown_values", "mismatches"} {
		v, ok := c[k]
		if !ok || v == 0 {
			continue
		}
		switch {
		case k == "mismatches" && len(allowed) == 1 && allowed[0] == k:
			if b := checkMismatchBound(workload, ranks); v > b {
				return fmt.Errorf("counters mismatches = %v is more than the %v comparisons %s makes on %d ranks", v, b, workload, ranks)
			}
		case k != "mismatches" && slices.Contains(allowed, k):
			if okR && v > rd {
				return fmt.Errorf("counters %s = %v is more than reads = %v: each is one of the reads", k, v, rd)
			}
		default:
			return fmt.Errorf("counters %s = %v: workload %s counts no %s (only %v)", k, v, workload, k, allowed)
		}
	}
	return nil
}
