package divalib

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// Overhead holds per-operation times in seconds, one sample per batch
// (max over ranks for the barriers).
type Overhead struct {
	CachedReadSec  []float64 // a read served from this rank's copy
	CachedWriteSec []float64 // a write by the token holder / owner with no other copy
	BarrierSec     []float64 // Store.Barrier on idle ranks
	MPIBarrierSec  []float64 // Comm.Barrier on idle ranks: the baseline
	// CachedWrites are this rank's timed cached writes, CachedInPlace
	// those of them that changed the value's buffer in place
	// (Stats.WritesInPlace: the fixed home under mpirun).
	CachedWrites, CachedInPlace int64
}

// overheadVarBytes is the size of MeasureOverhead's variables.
const overheadVarBytes = 8

// MeasureOverhead times the library's own per-access cost (collective):
// batches of iters cached reads and writes of an 8-byte variable that every
// rank owns (after its first write it holds the only copy and the token),
// and batches of barriers, the store's against MPI's. The MPI barrier is
// safe here only because no access is in flight (see BarrierMPI).
func MeasureOverhead(c mpi.Comm, s *Store, iters, batches int) (Overhead, error) {
	var o Overhead
	// Create is collective: every rank creates every rank's variable, in
	// the same order, and uses its own.
	var v globalvar.Var
	for r := 0; r < s.size; r++ {
		w, err := s.Create("overhead."+itoa(r), overheadVarBytes)
		if err != nil {
			return o, err
		}
		if r == s.rank {
			v = w
		}
	}
	buf := make([]byte, overheadVarBytes)
	if err := s.Write(v, 0, buf); err != nil {
		return o, err
	}
	if err := s.Read(v, 0, buf); err != nil {
		return o, err
	}
	if err := s.Barrier(); err != nil {
		return o, err
	}
	for b := 0; b < batches; b++ {
		t0 := c.Wtime()
		for i := 0; i < iters; i++ {
			if err := s.Read(v, 0, buf); err != nil {
				return o, err
			}
		}
		t1 := c.Wtime()
		before := s.stats
		for i := 0; i < iters; i++ {
			buf[0] = byte(i)
			if err := s.Write(v, 0, buf); err != nil {
				return o, err
			}
		}
		t2 := c.Wtime()
		o.CachedWrites += s.stats.Writes - before.Writes
		o.CachedInPlace += s.stats.WritesInPlace - before.WritesInPlace
		o.CachedReadSec = append(o.CachedReadSec, (t1-t0)/float64(iters))
		o.CachedWriteSec = append(o.CachedWriteSec, (t2-t1)/float64(iters))
		progress() // the watchdog's, of a batch
	}
	if err := s.Barrier(); err != nil {
		return o, err
	}
	const barriers = 200
	for b := 0; b < batches; b++ {
		t0 := c.Wtime()
		for i := 0; i < barriers; i++ {
			if err := s.Barrier(); err != nil {
				return o, err
			}
		}
		t1 := c.Wtime()
		for i := 0; i < barriers; i++ {
			if err := c.Barrier(); err != nil {
				return o, err
			}
		}
		t2 := c.Wtime()
		el := []float64{(t1 - t0) / barriers, (t2 - t1) / barriers}
		if err := c.AllreduceFloat64s(el, el, mpi.OpMax); err != nil {
			return o, err
		}
		o.BarrierSec = append(o.BarrierSec, el[0])
		patterns.Installed().Progress()
		o.MPIBarrierSec = append(o.MPIBarrierSec, el[1])
		progress()
	}
	return o, nil
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}

// RemoteReadConfig configures MeasureRemoteRead. Zero values take the
// defaults.
type RemoteReadConfig struct {
	Bytes  int   // l, the variable's size (required, >= 1)
	Reps   int   // timed reads per rank (default 1000)
	Warmup int   // untimed reads per rank first (default 10)
	Batch  int   // reads between two invalidation rounds (default 100)
	Seed   int64 // the targets' shifts
}

// MeasureRemoteRead times uncached remote reads of l bytes (collective),
// with the methodology of the k-k-access C kernel at k = 1, r = 1
// (scripts/ref/access_ref.c, mpi/native/access.c), so the two compare: in
// every repetition each rank reads one variable whose home (fixed home; the
// access-tree root otherwise) is rank (me + s) mod P, with the shift s in
// 1..P-1 drawn from the seed and the same on every rank (a permutation
// without fixed points: every rank serves one read); a repetition starts
// after a store barrier, and its time is the maximum over ranks of each
// rank's time until its value is in. The reader holds no copy: every read
// of a batch is of a different variable, and between batches the homes
// write their variables, which invalidates the copies (untimed); so a
// batch touches Batch variables' memory at each end, the working set the
// C reference gets with --nbuf Batch (scripts/bench_dsm_vs_c.sh). Times are
// taken with Go's monotonic clock, which costs what MPI_Wtime costs in C
// (a cgo call to MPI_Wtime would add its crossing to every sample).
func MeasureRemoteRead(c mpi.Comm, s *Store, cfg RemoteReadConfig) ([]float64, error) {
	if cfg.Reps == 0 {
		cfg.Reps = 1000
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = 10
	}
	if cfg.Batch == 0 {
		cfg.Batch = 100
	}
	p, me := s.size, s.rank
	if cfg.Bytes < 1 || cfg.Reps < 1 || cfg.Warmup < 0 || cfg.Batch < 1 {
		return nil, fmt.Errorf("divalib: remote read of %d bytes, %d reps, %d warm-up, batches of %d: need bytes, reps and batch >= 1", cfg.Bytes, cfg.Reps, cfg.Warmup, cfg.Batch)
	}
	if p < 2 {
		return nil, fmt.Errorf("divalib: a remote read needs at least 2 ranks, there are %d", p)
	}
	// Batch variables homed at every rank, created in the same order on
	// every rank (homes are a hash of the ID, so the buckets agree).
	byHome := make([][]globalvar.Var, p)
	full := 0
	for n := 0; full < p; n++ {
		v, err := s.Create("remote-read."+itoa(cfg.Bytes)+"."+itoa(n), cfg.Bytes)
		if err != nil {
			return nil, err
		}
		h, err := s.Home(v)
		if err != nil {
			return nil, err
		}
		if len(byHome[h]) < cfg.Batch {
			byHome[h] = append(byHome[h], v)
			if len(byHome[h]) == cfg.Batch {
				full++
			}
		}
	}
	mine := make([]byte, cfg.Bytes)
	for i := range mine {
		mine[i] = byte(me*131 + i*7 + 3) // touched, as kk_ref fills its memory
	}
	// The homes write their variables once, so reads move real data.
	for _, v := range byHome[me] {
		if err := s.Write(v, 0, mine); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed))
	buf := make([]byte, cfg.Bytes)
	total := cfg.Warmup + cfg.Reps
	times := make([]float64, 0, cfg.Reps)
	for done := 0; done < total; {
		if err := s.Barrier(); err != nil {
			return nil, err
		}
		n := min(cfg.Batch, total-done)
		for i := 0; i < n; i++ {
			t := (me + 1 + rng.IntN(p-1)) % p
			if err := s.Barrier(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			if err := s.Read(byHome[t][i], 0, buf); err != nil {
				return nil, err
			}
			el := time.Since(t0).Seconds()
			if done+i >= cfg.Warmup {
				times = append(times, el)
			}
		}
		done += n
		progress() // the watchdog's, of a batch of reads
		// Invalidate the copies just made: the next batch reads uncached.
		if err := s.Barrier(); err != nil {
			return nil, err
		}
		for _, v := range byHome[me][:n] {
			if err := s.Write(v, 0, mine); err != nil {
				return nil, err
			}
		}
		patterns.Installed().Progress()
	}
	if err := s.Barrier(); err != nil {
		return nil, err
	}
	// No access is in flight: a plain MPI reduction is safe.
	if err := c.AllreduceFloat64s(times, times, mpi.OpMax); err != nil {
		return nil, err
	}
	return times, nil
}
