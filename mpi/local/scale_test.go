package local_test

import (
	"runtime"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// scaleWorkload touches every kind of per-rank state the backend has: a
// duplicated communicator, point-to-point messages with a ring neighbour
// and with wildcards, a probe, and collectives on both communicators.
func scaleWorkload(c mpi.Comm) error {
	d, err := c.Dup()
	if err != nil {
		return err
	}
	defer d.Free()
	n, me := c.Size(), c.Rank()
	buf := make([]byte, 8)
	for _, cm := range []mpi.Comm{c, d} {
		if _, err := cm.Sendrecv(buf, (me+1)%n, 7, buf, (me+n-1)%n, 7); err != nil {
			return err
		}
		if err := cm.Send(buf, (me+1)%n, 8); err != nil {
			return err
		}
		if _, err := cm.Probe(mpi.AnySource, mpi.AnyTag); err != nil {
			return err
		}
		if _, err := cm.Recv(buf, mpi.AnySource, 8); err != nil {
			return err
		}
		v := []int64{int64(me)}
		if err := cm.AllreduceInt64s(v, v, mpi.OpSum); err != nil {
			return err
		}
		if err := cm.Barrier(); err != nil {
			return err
		}
	}
	return nil
}

// TestPerRankStateIndependentOfP checks scaling at the backend: the heap
// a rank allocates for the same work must not grow with the number of
// ranks (per-peer queues or per-rank copies of world-sized tables would
// make it grow like P, and the world like P^2). Allocation per rank at
// 4096 ranks must stay within 1.5x of that at 256.
func TestPerRankStateIndependentOfP(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs 4096 goroutine ranks")
	}
	perRank := func(n int) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := local.Run(n, scaleWorkload); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perRank(256), perRank(4096)
	t.Logf("%.0f bytes allocated per rank at 256 ranks, %.0f at 4096", small, large)
	if large > 1.5*small {
		t.Errorf("%.0f bytes per rank at 4096 ranks against %.0f at 256: per-rank state grows with P", large, small)
	}
}
