package permsched

import (
	"fmt"
	"runtime"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
)

// TimeExchange measures x with the suite's repetition harness
// (patterns.Measure: warm-up, barrier before each repetition, adaptive
// repetitions, max over ranks). Every repetition's data is checked: the
// receive buffer is cleared before the run and verified after it, outside
// the timed region. Collective.
func TimeExchange(c mpi.Comm, x *Exchange, cfg patterns.Reps) (patterns.Measurement, error) {
	x.Clear()
	m, err := patterns.Measure(c, cfg, func() (float64, error) {
		t0 := c.Wtime()
		if err := x.Run(); err != nil {
			return 0, err
		}
		dt := c.Wtime() - t0
		err := x.Verify()
		x.Clear()
		if x.big() {
			// The local backend's queues copy every message; the copies
			// of this repetition are garbage now, and collected here, outside
			// the timed region, they are not still held when the next
			// repetition copies as much again (CommDemand counts one copy).
			runtime.GC()
		}
		return dt, err
	})
	if err != nil {
		return m, fmt.Errorf("%s: %w", x.Name(), err)
	}
	return m, nil
}

// TimeScheduling measures runtime scheduling with s: ScheduleParallel from
// every rank's own row, concatenation included, as the paper's "comp" rows
// (Tables 2 and 3) time it. It returns the measurement and the schedule of
// the last repetition. Collective.
func TimeScheduling(c mpi.Comm, s Scheduler, row []int32, sizes []int64, seed uint64, cfg patterns.Reps) (patterns.Measurement, *Schedule, error) {
	var sc *Schedule
	m, err := patterns.Measure(c, cfg, func() (float64, error) {
		t0 := c.Wtime()
		var err error
		sc, err = ScheduleParallel(c, s, row, sizes, seed)
		return c.Wtime() - t0, err
	})
	if err != nil {
		return m, nil, fmt.Errorf("scheduling with %s: %w", s.Name(), err)
	}
	return m, sc, nil
}
