package job

import (
	"errors"
	"fmt"
	"io"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Launch is where a run's ranks come from: the flags --backend, --np and
// --timeout of every subcommand that starts ranks.
type Launch struct {
	Backend string  `flag:"backend" default:"native" usage:"native (system MPI, under mpirun) or local (goroutine ranks; not a network measurement)"`
	NP      int     `flag:"np" default:"2" usage:"ranks for --backend local (the native backend runs the world mpirun -np starts: a --np that differs is refused)"`
	Timeout float64 `flag:"timeout" default:"60" usage:"seconds (5 to 1e9) a measurement point, or the start-up, may go without progress (and beyond its --max-time budget) before the rank that waits ends the job: a hung or stopped peer"`
	// Asked holds the flags given on the command line (filled by
	// opts.Binding.Finish): a --np given with the native backend must
	// match the world mpirun started, not be silently ignored.
	Asked opts.Given
}

// Validate checks the backend, the local rank count and the timeout.
func (l Launch) Validate() error {
	if err := CheckBackend(l.Backend, l.NP); err != nil {
		return err
	}
	return CheckTimeout(l.Timeout)
}

// World runs fn on the launch's ranks (World), with its timeout.
func (l Launch) World(fn func(c mpi.Comm) error) error {
	return l.WorldOf(l.NP, fn)
}

// WorldOf is World with np local ranks in place of NP (a sweep's world of
// its own mesh size). On the native backend the world is the launcher's:
// a --np given that differs from its size is refused on every rank.
func (l Launch) WorldOf(np int, fn func(c mpi.Comm) error) error {
	SetTimeout(l.Timeout)
	return World(l.Backend, np, func(c mpi.Comm) error {
		if l.Backend == Native && l.Asked.Has("NP") {
			if err := Agree(c, CheckNativeNP(l.NP, c)); err != nil {
				return err
			}
		}
		return fn(c)
	})
}

// CheckNativeNP refuses a --np np that disagrees with the size of the
// native backend's world, which the launcher sets (--np sets the ranks
// of the local backend only).
func CheckNativeNP(np int, c mpi.Comm) error {
	if np == c.Size() {
		return nil
	}
	return opts.Badf("--np %d: the native backend runs on the world the launcher started, here %s; --np sets the ranks of --backend local only: leave it out, or start %d ranks with mpirun -np %d", np, RanksText(c), np, np)
}

// Measure is the skeleton of a measuring subcommand: start the ranks,
// check the rank count (Ranks, agreed), fill the metadata, check the
// demand, open the outputs, then call the body with a function that writes
// one record; the outputs are closed at the end on rank 0, which shows a
// progress line on a terminal's stderr, one step per record out of Points
// (else the points of the plan).
type Measure struct {
	Launch Launch
	Output Output
	Ranks  func(c mpi.Comm) error
	Demand Demand
	Points int
	// Progress is where the progress line goes (stderr) and Label what
	// it says the run is.
	Progress io.Writer
	Label    string
}

// Run runs body on every rank (see Measure).
func (m Measure) Run(stdout io.Writer, body func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error) error {
	return m.Launch.World(func(c mpi.Comm) error {
		meta, s, err := m.prepare(c, stdout)
		if err != nil {
			return err
		}
		var meter *Meter
		if c.Rank() == 0 {
			points := m.Points
			if points == 0 && m.Demand.Plan != nil {
				points = len(m.Demand.Plan(c.Size())) // a record per point
			}
			meter = NewMeter(m.Progress, m.Output.Quiet, m.Label, points)
		}
		// A run stopped by SIGTERM or SIGINT exits 1 once the record
		// being written is whole, saying where the finished ones are.
		label := m.Label
		if label == "" {
			label = "run"
		}
		s.StopOnSignal(c, StopNote{Label: label, Stderr: m.Progress, Before: meter.Finish})
		err = body(c, meta, func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			err := s.Write(rec)
			meter.Step()
			return err
		})
		meter.Finish()
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// prepare checks the world and the demand and opens the outputs, as one
// watched point: a rank stopped before the first measurement ends the job
// as one stopped in it does.
func (m Measure) prepare(c mpi.Comm, stdout io.Writer) (results.Meta, *Sink, error) {
	defer WatchChecks()()
	if m.Ranks != nil {
		if err := Agree(c, m.Ranks(c)); err != nil {
			return results.Meta{}, nil, err
		}
	}
	meta, err := NewMeta(c)
	if err != nil {
		return meta, nil, err
	}
	if err := Agree(c, m.Demand.Check(c, meta)); err != nil {
		return meta, nil, err
	}
	s, err := OpenSink(c, m.Output, stdout)
	return meta, s, err
}

// WatchChecks begins the watched point of the checks a run makes before
// its first measurement and returns its end.
func WatchChecks() (end func()) {
	return patterns.Installed().Begin("the checks before the first measurement (rank count, sizes, demand, outputs)", 0)
}

// MeasurePoints measures the instances of a sweep in order (MeasurePoint).
func MeasurePoints(c mpi.Comm, emit func(results.Record) error, pts []patterns.Pattern, meta results.Meta) error {
	for _, pat := range pts {
		if _, err := MeasurePoint(c, emit, pat, meta); err != nil {
			return err
		}
	}
	return nil
}

// MeasurePoint measures one pattern instance on every rank of c and writes
// the record the pattern builds for itself (EmitRecord: the outcome is
// agreed). The measurement comes back for callers that derive the next
// point from it (prtt's auto delay).
func MeasurePoint(c mpi.Comm, emit func(results.Record) error, pat patterns.Pattern, meta results.Meta) (patterns.Measurement, error) {
	end := patterns.Installed().Begin(PointName(pat, c.Size()), 0)
	m, err := pat.Run(c)
	end()
	if err != nil {
		// The point that failed, so that a failing MPI call mid-sweep
		// says where: "collective bytes=64 ... op=bcast: MPI_Bcast: ...".
		return m, PatternErr(fmt.Errorf("%s: %w", PointName(pat, c.Size()), err))
	}
	return m, EmitRecord(c, emit, pat.Record(m, meta))
}

// EmitRecord writes rec and agrees on the outcome: writing happens on rank
// 0 only, so if rank 0 cannot write, every rank stops (one message)
// instead of the others waiting in the next point.
func EmitRecord(c mpi.Comm, emit func(results.Record) error, rec results.Record) error {
	return Agree(c, emit(rec))
}

// PatternErr keeps a pattern's failure to one message: the ranks that only
// learnt that another rank failed (patterns.ErrPeerFailed) stay quiet.
func PatternErr(err error) error {
	if errors.Is(err, patterns.ErrPeerFailed) {
		return &quietError{err: err}
	}
	return err
}

// CheckRanks runs rules on the world size; a failure on a native world of
// one rank adds how to start the program under a launcher.
func CheckRanks(rules ...func(p int) error) func(c mpi.Comm) error {
	return func(c mpi.Comm) error {
		for _, r := range rules {
			if err := r(c.Size()); err != nil {
				if c.Size() == 1 && c.Backend() == Native {
					return opts.Badf("%v (started without an MPI launcher? run: %s)", err, RunLine(4, "..."))
				}
				return err
			}
		}
		return nil
	}
}

// NeedRanks refuses a world of the wrong size as bad input that says how
// to start the program right.
func NeedRanks(c mpi.Comm, what string, ok func(n int) bool, want string) error {
	if ok(c.Size()) {
		return nil
	}
	hint := ""
	if c.Size() == 1 && c.Backend() == Native {
		hint = " (started without an MPI launcher? run: " + RunLine(2, what) + ")"
	}
	return opts.Badf("%s needs %s, got %d%s", what, want, c.Size(), hint)
}

// Hinted is err, a refusal of c's world, with how to start args under the
// launcher on np ranks added when c is a native world of one rank (a
// program started without mpirun or srun).
func Hinted(c mpi.Comm, err error, np int, args ...string) error {
	if err == nil || c.Size() != 1 || c.Backend() != Native {
		return err
	}
	return opts.Badf("%v (started without an MPI launcher? run: %s)", err, RunLine(np, args...))
}
