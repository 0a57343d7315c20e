package patterns

import (
	"github.com/commcost/commcost/mpi"
)

// Patterns whose repetition is a short program of MPI operations (the
// textbook algorithms of aggregate.go, the exchange of a permutation) build
// it once as mpi.Steps, and the backend replays it: the native backend in
// C (StepsBatch, one switch per operation), any other with mpi.RunSteps in
// Go. One description of each algorithm serves both backends.

// programKernel runs a batch of programs over bufs, each iters times per
// repetition: progs holds one program for every repetition, or one per
// repetition. It adds the messages the programs send and receive to
// counts (Counts of the point-to-point steps; a collective's own messages
// are not visible) and the repetitions this rank took part in (a
// non-empty program) to *calls.
func programKernel(c mpi.Comm, bufs [][]byte, iters int, counts *Counts, calls *int) func(b mpi.Batch, progs [][]mpi.Step) error {
	bk, native := c.(mpi.BatchKernels)
	var progs [][]mpi.Step
	i := 0
	serial := SerialBatch(c, func() (float64, error) {
		prog := progs[0]
		if len(progs) > 1 {
			prog = progs[i]
		}
		i++
		if len(prog) == 0 {
			return 0, nil
		}
		t0 := c.Wtime()
		for range iters {
			if err := mpi.RunSteps(c, bufs, prog); err != nil {
				return 0, err
			}
		}
		return c.Wtime() - t0, nil
	})
	return func(b mpi.Batch, ps [][]mpi.Step) error {
		var err error
		if native {
			err = bk.StepsBatch(b, bufs, ps, iters)
		} else {
			progs, i = ps, 0
			err = serial(b)
		}
		if err != nil {
			return err
		}
		for r := range b.Reps() {
			prog := ps[0]
			if len(ps) > 1 {
				prog = ps[r]
			}
			if len(prog) > 0 {
				*calls++
			}
			for _, s := range prog {
				switch s.Op {
				case mpi.StepSend:
					counts.add(iters, s.Send.Len, 0, 0)
				case mpi.StepRecv:
					counts.add(0, 0, iters, s.Recv.Len)
				case mpi.StepSendrecv:
					counts.add(iters, s.Send.Len, iters, s.Recv.Len)
				}
			}
		}
		return nil
	}
}

// ahead draws a pattern's random instances ahead of the batches that run
// them: take hands a batch its instances, drawing what is missing, and
// refill draws the next one after the batch has run. Under SyncWindow
// every batch is one repetition started at an agreed time, so the draw for
// it must already be done then; the instances come in the same order,
// from the same seeded source, whatever the batch sizes.
type ahead[T any] struct {
	draw  func() T
	queue []T
}

// take returns the next n instances, drawing what the queue lacks.
func (a *ahead[T]) take(n int) []T {
	for len(a.queue) < n {
		a.queue = append(a.queue, a.draw())
	}
	out := append([]T(nil), a.queue[:n]...)
	a.queue = append(a.queue[:0], a.queue[n:]...)
	return out
}

// refill draws one instance ahead when none is waiting.
func (a *ahead[T]) refill() {
	if len(a.queue) == 0 {
		a.queue = append(a.queue, a.draw())
	}
}
