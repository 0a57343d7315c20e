// Package storecheck holds collective correctness workloads for any
// globalvar.Store, and the checker that judges them: the coherence checker
// (versioned values, stale and torn reads), concurrent partial writes, a
// lock-protected counter, and the error contract. Each workload is called
// on every rank with that rank's Comm and Store; rank 0 returns the verdict
// (other ranks return a zero Report). It imports no testing package, so the
// commcost CLI runs the same workloads (`commcost dsm check`) as the unit
// tests (package storetest).
//
// The coherence criterion (globalvar package doc: a read that starts after a
// write has returned sees that write or a later one; no torn reads) is
// checked against real time: every operation is stamped with the wall clock
// before it starts and after it returns, and a read is stale if some write
// w' of the same variable started after the write w whose value it returned
// had finished, and finished before the read started (w' is then later than
// w in every order consistent with real time). All ranks must share one
// clock: true for mpi/local and for mpirun on one host; across hosts, clock
// offsets can make the checker report false stale reads.
package storecheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// CoherenceConfig sizes the randomized coherence workload. Zero values take
// the defaults.
type CoherenceConfig struct {
	Ops           int     // operations over all ranks (default 100000)
	Vars          int     // variables (default 16: few, so ranks collide)
	Slots         int     // 16-byte slots per variable (default 4)
	WriteFraction float64 // share of writes (default 0.3)
	Seed          int64
}

// RankBytes is the memory the coherence workload's variables take on one
// rank: each rank holds a variable's home copy and may cache the others',
// two copies of Vars x Slots 16-byte slots at most.
func (c CoherenceConfig) RankBytes() float64 {
	c.defaults()
	return 2 * float64(c.Vars) * float64(c.Slots) * 16
}

// LogBytes is what the operations' log costs at its peak, on rank 0: every
// rank logs its operations (an event each), and rank 0 gathers all of
// them encoded and decodes them again, about 4 event sizes per operation
// over all ranks.
func (c CoherenceConfig) LogBytes() float64 {
	c.defaults()
	return 4 * eventBytes * float64(c.Ops)
}

func (c *CoherenceConfig) defaults() {
	if c.Ops <= 0 {
		c.Ops = 100000
	}
	if c.Vars <= 0 {
		c.Vars = 16
	}
	if c.Slots <= 0 {
		c.Slots = 4
	}
	if c.WriteFraction <= 0 || c.WriteFraction >= 1 {
		c.WriteFraction = 0.3
	}
}

// Report is a workload's verdict (filled on rank 0).
type Report struct {
	Ops, Reads, Writes int
	StaleReads         int // read an older value than the last write completed before it started
	FutureReads        int // read a value whose write started after the read ended
	TornReads          int // slots of one read disagree
	UnknownValues      int // read a value nobody wrote
	Mismatches         int // other workloads: final values not as expected
	ElapsedSec         float64
	Problems           []string // the first few violations, for the error message
}

// Err is nil when the report shows no violation.
func (r Report) Err() error {
	n := r.StaleReads + r.FutureReads + r.TornReads + r.UnknownValues + r.Mismatches
	if n == 0 {
		return nil
	}
	return fmt.Errorf("storecheck: %d violations (stale %d, future %d, torn %d, unknown %d, mismatch %d); first: %v",
		n, r.StaleReads, r.FutureReads, r.TornReads, r.UnknownValues, r.Mismatches, r.Problems)
}

const maxProblems = 8

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// slotBytes: a slot is the value's stamp and its complement, so a slot
// assembled from two writes or never written is recognised.
const slotBytes = 16

func putStamp(buf []byte, stamp uint64) {
	for o := 0; o+slotBytes <= len(buf); o += slotBytes {
		binary.LittleEndian.PutUint64(buf[o:], stamp)
		binary.LittleEndian.PutUint64(buf[o+8:], ^stamp)
	}
}

// readStamp returns the stamp of buf's slots; ok is false if they are torn
// or corrupt. The initial zero value has stamp 0 and zero complement.
func readStamp(buf []byte) (uint64, bool) {
	var first uint64
	for o := 0; o+slotBytes <= len(buf); o += slotBytes {
		s := binary.LittleEndian.Uint64(buf[o:])
		c := binary.LittleEndian.Uint64(buf[o+8:])
		if !(c == ^s || (s == 0 && c == 0)) {
			return 0, false
		}
		if o == 0 {
			first = s
		} else if s != first {
			return 0, false
		}
	}
	return first, true
}

// stamp is unique per write: writer rank and its sequence number.
func stamp(rank, seq int) uint64 { return uint64(rank+1)<<40 | uint64(seq) }

// event is one logged operation.
type event struct {
	vr         int32
	write      bool
	stamp      uint64
	start, end int64 // wall clock, ns
}

const eventBytes = 4 + 4 + 8 + 8 + 8

func (e event) put(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b, uint32(e.vr))
	w := uint32(0)
	if e.write {
		w = 1
	}
	le.PutUint32(b[4:], w)
	le.PutUint64(b[8:], e.stamp)
	le.PutUint64(b[16:], uint64(e.start))
	le.PutUint64(b[24:], uint64(e.end))
}

func getEvent(b []byte) event {
	le := binary.LittleEndian
	return event{vr: int32(le.Uint32(b)), write: le.Uint32(b[4:]) == 1, stamp: le.Uint64(b[8:]),
		start: int64(le.Uint64(b[16:])), end: int64(le.Uint64(b[24:]))}
}

// progressEvery is how many operations of the coherence workload run
// between two reports of progress to the process's watchdog
// (patterns.Watchdog), so that a long workload is not taken for a stuck
// one while a rank whose peer stopped answering still is.
const progressEvery = 64

// Coherence runs the randomized read/write workload: every rank issues
// cfg.Ops/Size operations on random variables (whole-variable writes of a
// fresh stamp, reads of a random run of slots), logging each with its
// start and end time; rank 0 gathers the logs and checks them.
func Coherence(c mpi.Comm, s globalvar.Store, cfg CoherenceConfig) (Report, error) {
	cfg.defaults()
	size := cfg.Slots * slotBytes
	vars := make([]globalvar.Var, cfg.Vars)
	for i := range vars {
		v, err := s.Create(fmt.Sprintf("storecheck.coh.%d", i), size)
		if err != nil {
			return Report{}, err
		}
		vars[i] = v
	}
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(c.Rank())))
	n := cfg.Ops / c.Size()
	if c.Rank() < cfg.Ops%c.Size() {
		n++
	}
	log := make([]event, 0, n)
	buf := make([]byte, size)
	var torn int
	var tornMsg string
	t0 := time.Now()
	wd := patterns.Installed()
	for i := 0; i < n; i++ {
		if i%progressEvery == 0 {
			wd.Progress()
		}
		vi := rng.IntN(cfg.Vars)
		e := event{vr: int32(vi)}
		if rng.Float64() < cfg.WriteFraction {
			e.write, e.stamp = true, stamp(c.Rank(), i)
			putStamp(buf, e.stamp)
			e.start = time.Now().UnixNano()
			if err := s.Write(vars[vi], 0, buf); err != nil {
				return Report{}, err
			}
			e.end = time.Now().UnixNano()
		} else {
			a := rng.IntN(cfg.Slots)
			b := a + 1 + rng.IntN(cfg.Slots-a)
			part := buf[a*slotBytes : b*slotBytes]
			e.start = time.Now().UnixNano()
			if err := s.Read(vars[vi], a*slotBytes, part); err != nil {
				return Report{}, err
			}
			e.end = time.Now().UnixNano()
			st, ok := readStamp(part)
			if !ok {
				torn++
				if tornMsg == "" {
					tornMsg = fmt.Sprintf("rank %d op %d: torn read of var %d slots %d..%d", c.Rank(), i, vi, a, b)
				}
				continue
			}
			e.stamp = st
		}
		log = append(log, e)
	}
	elapsed := time.Since(t0).Seconds()
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	events, err := gatherEvents(c, log)
	if err != nil {
		return Report{}, err
	}
	tornAll := []int64{int64(torn)}
	sum := []int64{0}
	if err := c.AllreduceInt64s(tornAll, sum, mpi.OpSum); err != nil {
		return Report{}, err
	}
	maxEl := []float64{elapsed}
	if err := c.AllreduceFloat64s(maxEl, maxEl, mpi.OpMax); err != nil {
		return Report{}, err
	}
	if c.Rank() != 0 {
		return Report{}, nil
	}
	r := checkEvents(events, cfg.Vars)
	r.TornReads += int(sum[0])
	r.Ops += int(sum[0])
	r.Reads += int(sum[0])
	if tornMsg != "" {
		r.problem("%s", tornMsg)
	}
	r.ElapsedSec = maxEl[0]
	return r, nil
}

// gatherEvents collects every rank's log at rank 0.
func gatherEvents(c mpi.Comm, log []event) ([]event, error) {
	mine := make([]byte, len(log)*eventBytes)
	for i, e := range log {
		e.put(mine[i*eventBytes:])
	}
	cnt := []int64{int64(len(mine))}
	counts64 := make([]int64, c.Size())
	if err := mpi.AllgatherInt64s(c, cnt, counts64); err != nil {
		return nil, err
	}
	counts := make([]int, c.Size())
	displs := make([]int, c.Size())
	total := 0
	for i, n := range counts64 {
		counts[i], displs[i] = int(n), total
		total += int(n)
	}
	var all []byte
	if c.Rank() == 0 {
		all = make([]byte, total)
	}
	if err := c.Gatherv(mine, all, counts, displs, 0); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	ev := make([]event, total/eventBytes)
	for i := range ev {
		ev[i] = getEvent(all[i*eventBytes:])
	}
	return ev, nil
}

// checkEvents judges a complete log (see the package doc for the criterion).
func checkEvents(events []event, nvars int) Report {
	var r Report
	type win struct{ start, end int64 }
	writes := make([]map[uint64]win, nvars)
	// byEnd[v]: writes sorted by end, with the running maximum of starts.
	type endStart struct{ end, maxStart int64 }
	byEnd := make([][]endStart, nvars)
	for i := range writes {
		writes[i] = map[uint64]win{}
	}
	for _, e := range events {
		r.Ops++
		if e.write {
			r.Writes++
			writes[e.vr][e.stamp] = win{e.start, e.end}
			byEnd[e.vr] = append(byEnd[e.vr], endStart{e.end, e.start})
		} else {
			r.Reads++
		}
	}
	for v := range byEnd {
		b := byEnd[v]
		slices.SortFunc(b, func(x, y endStart) int { return int(x.end - y.end) })
		for i := 1; i < len(b); i++ {
			b[i].maxStart = max(b[i].maxStart, b[i-1].maxStart)
		}
	}
	for _, e := range events {
		if e.write {
			continue
		}
		w := win{start: -1 << 62, end: -1 << 62} // the initial value
		if e.stamp != 0 {
			var ok bool
			if w, ok = writes[e.vr][e.stamp]; !ok {
				r.UnknownValues++
				r.problem("var %d: read stamp %#x that no write produced", e.vr, e.stamp)
				continue
			}
		}
		if w.start > e.end {
			r.FutureReads++
			r.problem("var %d: read [%d,%d] returned write %#x that started later (%d)", e.vr, e.start, e.end, e.stamp, w.start)
		}
		// Latest start among writes that ended before the read started.
		b := byEnd[e.vr]
		i, _ := slices.BinarySearchFunc(b, e.start, func(x endStart, t int64) int {
			if x.end < t {
				return -1
			}
			return 1
		})
		if i > 0 && b[i-1].maxStart > w.end {
			r.StaleReads++
			r.problem("var %d: read starting %d returned write %#x (ended %d), but a write started %d and ended before the read began",
				e.vr, e.start, e.stamp, w.end, b[i-1].maxStart)
		}
	}
	return r
}

// TornReads has half the ranks (at least one) overwrite one variable with
// values whose 16-byte slots are all equal, while the others read random
// runs of slots; no read may see unequal slots.
func TornReads(c mpi.Comm, s globalvar.Store, opsPerRank, slots int, seed int64) (Report, error) {
	v, err := s.Create("storecheck.torn", slots*slotBytes)
	if err != nil {
		return Report{}, err
	}
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(c.Rank())+1000))
	buf := make([]byte, slots*slotBytes)
	writer := c.Rank()%2 == 0
	var r Report
	for i := 0; i < opsPerRank; i++ {
		r.Ops++
		if writer && rng.IntN(2) == 0 {
			putStamp(buf, stamp(c.Rank(), i))
			if err := s.Write(v, 0, buf); err != nil {
				return Report{}, err
			}
			r.Writes++
			continue
		}
		a := rng.IntN(slots)
		b := a + 1 + rng.IntN(slots-a)
		part := buf[a*slotBytes : b*slotBytes]
		if err := s.Read(v, a*slotBytes, part); err != nil {
			return Report{}, err
		}
		r.Reads++
		if _, ok := readStamp(part); !ok {
			r.TornReads++
			r.problem("rank %d: torn read of slots %d..%d", c.Rank(), a, b)
		}
	}
	return reduceReport(c, s, r)
}

// DisjointWrites has every rank write its own 8-byte field of one shared
// variable many times (partial writes racing on one variable); afterwards
// every field must hold its rank's last value: no update may be lost by
// being applied to an older copy of the variable.
func DisjointWrites(c mpi.Comm, s globalvar.Store, writesPerRank int) (Report, error) {
	v, err := s.Create("storecheck.disjoint", 8*c.Size())
	if err != nil {
		return Report{}, err
	}
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	var r Report
	field := make([]byte, 8)
	for i := 1; i <= writesPerRank; i++ {
		binary.LittleEndian.PutUint64(field, uint64(i))
		if err := s.Write(v, 8*c.Rank(), field); err != nil {
			return Report{}, err
		}
		r.Writes++
		r.Ops++
	}
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	all := make([]byte, 8*c.Size())
	if err := s.Read(v, 0, all); err != nil {
		return Report{}, err
	}
	r.Reads++
	r.Ops++
	for q := 0; q < c.Size(); q++ {
		if got := binary.LittleEndian.Uint64(all[8*q:]); got != uint64(writesPerRank) {
			r.Mismatches++
			r.problem("rank %d sees field of rank %d = %d, want %d", c.Rank(), q, got, writesPerRank)
		}
	}
	return reduceReport(c, s, r)
}

// LockCounter has every rank increment shared counters under their locks
// (read, add one, write: a lost update shows as a short count); at the end
// every counter must equal the number of increments made to it.
func LockCounter(c mpi.Comm, s globalvar.Store, incrementsPerRank, counters int, seed int64) (Report, error) {
	vars := make([]globalvar.Var, counters)
	for i := range vars {
		v, err := s.Create(fmt.Sprintf("storecheck.counter.%d", i), 8)
		if err != nil {
			return Report{}, err
		}
		vars[i] = v
	}
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(c.Rank())+2000))
	mine := make([]int64, counters)
	buf := make([]byte, 8)
	var r Report
	for i := 0; i < incrementsPerRank; i++ {
		k := rng.IntN(counters)
		if err := s.Lock(vars[k]); err != nil {
			return Report{}, err
		}
		if err := s.Read(vars[k], 0, buf); err != nil {
			return Report{}, err
		}
		binary.LittleEndian.PutUint64(buf, binary.LittleEndian.Uint64(buf)+1)
		if err := s.Write(vars[k], 0, buf); err != nil {
			return Report{}, err
		}
		if err := s.Unlock(vars[k]); err != nil {
			return Report{}, err
		}
		mine[k]++
		r.Ops += 2
	}
	want := make([]int64, counters)
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	if err := c.AllreduceInt64s(mine, want, mpi.OpSum); err != nil {
		return Report{}, err
	}
	for k := range vars {
		if err := s.Read(vars[k], 0, buf); err != nil {
			return Report{}, err
		}
		if got := int64(binary.LittleEndian.Uint64(buf)); got != want[k] {
			r.Mismatches++
			r.problem("rank %d: counter %d = %d, want %d", c.Rank(), k, got, want[k])
		}
	}
	return reduceReport(c, s, r)
}

// Errors checks the error contract: an unknown variable, ranges past the
// end, an unlock of a lock not held. Nothing is sent, so ranks need not
// agree on anything but the Create.
func Errors(c mpi.Comm, s globalvar.Store) (Report, error) {
	v, err := s.Create("storecheck.errors", 32)
	if err != nil {
		return Report{}, err
	}
	var r Report
	check := func(what string, got, want error) {
		r.Ops++
		if !errors.Is(got, want) {
			r.Mismatches++
			r.problem("%s: got %v, want %v", what, got, want)
		}
	}
	buf := make([]byte, 8)
	never := globalvar.Var{ID: 1 << 20, Name: "never-created", Size: 8}
	check("read of a variable never created", s.Read(never, 0, buf), globalvar.ErrUnknownVar)
	check("write of a variable never created", s.Write(never, 0, buf), globalvar.ErrUnknownVar)
	check("read past the end", s.Read(v, 28, buf), globalvar.ErrRange)
	check("write past the end", s.Write(v, 30, buf), globalvar.ErrRange)
	check("negative offset", s.Read(v, -1, buf), globalvar.ErrRange)
	check("unlock not held", s.Unlock(v), globalvar.ErrNotLocked)
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	return reduceReport(c, s, r)
}

// reduceReport sums the counters of every rank's report at rank 0 (after a
// store barrier, so nobody waits for service inside the collective) and
// keeps the problems of rank 0 and the count of the others.
func reduceReport(c mpi.Comm, s globalvar.Store, r Report) (Report, error) {
	if err := s.Barrier(); err != nil {
		return Report{}, err
	}
	v := []int64{int64(r.Ops), int64(r.Reads), int64(r.Writes), int64(r.StaleReads), int64(r.FutureReads), int64(r.TornReads), int64(r.UnknownValues), int64(r.Mismatches)}
	sum := make([]int64, len(v))
	if err := c.AllreduceInt64s(v, sum, mpi.OpSum); err != nil {
		return Report{}, err
	}
	if c.Rank() != 0 {
		return Report{}, nil
	}
	out := Report{Ops: int(sum[0]), Reads: int(sum[1]), Writes: int(sum[2]), StaleReads: int(sum[3]),
		FutureReads: int(sum[4]), TornReads: int(sum[5]), UnknownValues: int(sum[6]), Mismatches: int(sum[7]), Problems: r.Problems}
	if len(out.Problems) == 0 && out.Err() != nil {
		out.Problems = []string{"violations on ranks other than 0 (run with fewer ranks to see them)"}
	}
	return out, nil
}
