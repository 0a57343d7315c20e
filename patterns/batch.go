package patterns

import (
	"errors"
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// Batched repetitions: the harness of Measure with the repetition loop in
// the backend's language (mpi.BatchKernels). Under SyncBarrier a
// repetition is a barrier, this rank's timed kernel and a max-reduction of
// the ranks' times; Measure makes the barrier and the reduction Go calls
// around one kernel call per repetition, so Go runs between the barrier's
// exit and the timer's start and between consecutive repetitions, which a
// C program of the same protocol does not (at small sizes that is a
// measurable share of a repetition). MeasureBatch runs whole
// batches of repetitions, barrier and reduction included, in one call of
// the backend and applies the stopping rule between batches.

// BatchRep runs b.Reps() repetitions of a pattern's kernel as one batch:
// a BatchKernels method bound to the pattern's arguments, or SerialBatch
// on backends without one. It is collective when b.Sync is set.
type BatchRep func(b mpi.Batch) error

// SerialBatch is the batch of a backend without batch kernels: rep runs
// in Go one repetition at a time, and under b.Sync the barrier before it
// and the reduction after it are the Comm's own calls, as in Measure.
func SerialBatch(c mpi.Comm, rep Rep) BatchRep {
	in, out := make([]float64, 2), make([]float64, 2)
	return func(b mpi.Batch) error {
		if err := b.Check(); err != nil {
			return err
		}
		for i := range b.Own {
			if b.Sync {
				if err := c.Barrier(); err != nil {
					return err
				}
			}
			t, err := rep()
			b.Own[i] = t
			if !b.Sync {
				if err != nil {
					return err
				}
				continue
			}
			in[0], in[1] = t, 0
			if b.Rank0 && c.Rank() != 0 {
				in[0] = math.Inf(-1)
			}
			if err != nil {
				in[1] = 1
			}
			if aerr := c.AllreduceFloat64s(in, out, mpi.OpMax); aerr != nil || err != nil {
				return errors.Join(err, aerr)
			}
			if out[1] > 0 {
				return fmt.Errorf("repetition %d: %w", i, mpi.ErrPeerFailed)
			}
			b.Samples[i] = out[0]
		}
		return nil
	}
}

// batchGrowth sets the batches after the first MinReps repetitions: n/batchGrowth
// more after n, so the stopping rule runs after at most 1/batchGrowth more
// repetitions than Measure's check after every one would have run, and a
// long run crosses into Go a logarithmic number of times.
const batchGrowth = 4

// batchSize is the size of the next batch after n timed repetitions that
// took elapsed seconds, at pace seconds per repetition (0: unknown): the
// repetitions still below MinReps (no rule stops earlier), then
// n/batchGrowth; never past MaxReps or most, and at the pace so far not
// past MaxTime (Measure stops on time once 3 repetitions are done).
func (r Reps) batchSize(n int, elapsed, pace float64, most int) int {
	size := r.MinReps - n
	if size < 1 {
		size = n / batchGrowth
	}
	size = min(size, r.MaxReps-n, most)
	if pace > 0 {
		left := math.Floor((r.MaxTime - elapsed) / pace)
		size = min(size, max(int(math.Min(left, math.MaxInt32)), 3-n))
	} else if n < 3 {
		size = min(size, 3-n)
	}
	return max(1, size)
}

// MeasureBatch is Measure for a pattern whose repetitions a backend can run
// in batches (BatchRep): it returns the same Measurement, made the same
// way. Under SyncBarrier every repetition is synchronised inside the
// batch (mpi.Batch.Sync) and the stopping rule is applied between batches,
// so a run that stops on the confidence interval may hold up to
// 1/batchGrowth more repetitions than Measure's; perRep (validation, which
// checks every repetition) makes every batch one repetition. Under
// SyncWindow it is Measure with one unsynchronised repetition per batch.
// Go work a BatchRep does around the backend's call (drawing the next
// random instances, validating) is outside the timed region; an error it
// returns on one rank is made collective after the batch (ErrPeerFailed
// on the others).
func MeasureBatch(c mpi.Comm, cfg Reps, perRep bool, batch BatchRep) (Measurement, error) {
	cfg = cfg.withDefaults()
	if cfg.Sync == SyncWindow {
		own := make([]float64, 1)
		return Measure(c, cfg, func() (float64, error) {
			own[0] = 0
			err := batch(mpi.Batch{Own: own})
			return own[0], err
		})
	}
	m := Measurement{Reduction: results.ReductionMaxOverRanks, CommSize: c.Size()}
	if cfg.Reduction == ReduceRank0 {
		m.Reduction = results.ReductionRank0
	}
	// Under the process's watchdog, as Measure: every batch is progress,
	// and at the pace so far no batch runs longer than the watchdog's
	// slice, so a healthy batch is never taken for a hung peer (a first
	// batch of MinReps ping-pongs of 1000 iterations each can take
	// seconds).
	wd := Installed()
	defer wd.Begin("a measurement", measureBudget(cfg))()
	slice := wd.Slice().Seconds()
	paced := func(size int, pace float64) int {
		if slice > 0 && pace > 0 {
			size = min(size, max(1, int(math.Min(slice/pace, math.MaxInt32))))
		}
		return size
	}
	most := cfg.MaxReps
	if perRep {
		most = 1
	}
	// run runs one batch of n and agrees on the outcome and on the time
	// since since (max over ranks) in one reduction, which every rank
	// reaches however its batch ended.
	in, out := make([]float64, 2), make([]float64, 2)
	run := func(n int, since float64) (own, samples []float64, elapsed float64, err error) {
		own, samples = make([]float64, n), make([]float64, n)
		err = batch(mpi.Batch{Own: own, Samples: samples, Sync: true, Rank0: cfg.Reduction == ReduceRank0})
		in[0], in[1] = c.Wtime()-since, 0
		if err != nil {
			in[1] = 1
		}
		if aerr := c.AllreduceFloat64s(in, out, mpi.OpMax); aerr != nil {
			return nil, nil, 0, errors.Join(err, aerr)
		}
		switch {
		case errors.Is(err, mpi.ErrPeerFailed):
			return nil, nil, 0, ErrPeerFailed
		case err != nil:
			return nil, nil, 0, err
		case out[1] > 0:
			return nil, nil, 0, ErrPeerFailed
		}
		wd.Progress()
		return own, samples, out[0], nil
	}
	// The warm-up: one repetition first for the pace, then batches at
	// that pace, and bounded by MaxTime as Measure's is (--max-time bounds
	// every loop); elapsed is the maximum over ranks, so all ranks stop
	// after the same repetition.
	pace := 0.0
	if cfg.Warmup > 0 {
		since := c.Wtime()
		elapsed := 0.0
		for done := 0; done < cfg.Warmup && (done == 0 || elapsed < cfg.MaxTime); {
			k := min(cfg.Warmup-done, most)
			if done == 0 {
				k = 1
			} else {
				k = paced(min(k, max(1, int(math.Min((cfg.MaxTime-elapsed)/pace, math.MaxInt32)))), pace)
			}
			var err error
			if _, _, elapsed, err = run(k, since); err != nil {
				return Measurement{}, err
			}
			done += k
			pace = elapsed / float64(done)
		}
	}
	var own []float64
	start := c.Wtime()
	elapsed := 0.0
	for {
		mine, samples, e, err := run(paced(cfg.batchSize(len(m.Samples), elapsed, pace, most), pace), start)
		if err != nil {
			return Measurement{}, err
		}
		for _, t := range mine {
			if t > 0 { // the repetitions this rank took part in
				own = append(own, t)
			}
		}
		m.Samples = append(m.Samples, samples...)
		elapsed, pace = e, e/float64(len(m.Samples))
		if m.Stop = cfg.stop(m.Samples, elapsed); m.Stop != "" {
			break
		}
	}
	m.Summary = results.Summarize(m.Samples)
	if err := m.rankSpread(c, own); err != nil {
		return Measurement{}, err
	}
	return m, nil
}
