package divalib

import (
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// Overhead holds per-operation times in seconds, one sample per batch
// (max over ranks for the barriers).
type Overhead struct {
	CachedReadSec  []float64 // a read served from this rank's copy
	CachedWriteSec []float64 // a write by the token holder / owner with no other copy
	BarrierSec     []float64 // Store.Barrier on idle ranks
	MPIBarrierSec  []float64 // Comm.Barrier on idle ranks: the baseline
}

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
		w, err := s.Create("overhead."+itoa(r), 8)
		if err != nil {
			return o, err
		}
		if r == s.rank {
			v = w
		}
	}
	buf := make([]byte, 8)
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
		for i := 0; i < iters; i++ {
			buf[0] = byte(i)
			if err := s.Write(v, 0, buf); err != nil {
				return o, err
			}
		}
		t2 := c.Wtime()
		o.CachedReadSec = append(o.CachedReadSec, (t1-t0)/float64(iters))
		o.CachedWriteSec = append(o.CachedWriteSec, (t2-t1)/float64(iters))
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
		o.MPIBarrierSec = append(o.MPIBarrierSec, el[1])
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
