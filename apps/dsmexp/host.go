package dsmexp

import (
	"errors"
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// sweepRun is one run of a sweeping experiment over package job: its
// worlds are job.World's (the watchdog included), its verdicts
// job.Agree's, its output the --out file (job.OpenOut) and stdout, and it
// checks the memory of every world before any output exists.
type sweepRun struct {
	label  string // the command, for the progress line and the watchdog
	launch job.Launch
	out    job.Output
	store  StoreFlags
	sweep  SweepFlags
	io     IO
	// mesh refuses a mesh the experiment cannot run on.
	mesh func(m divalib.Mesh) error
	// need is the memory one rank needs on p ranks (nil: negligible).
	need func(p int) job.MemNeed
	// points is the number of records a world of p ranks writes.
	points func(p int) int
	body   Body
}

// run runs the sweep (Sweep) on its worlds.
func (r *sweepRun) run() error {
	out := &Output{Format: r.out.Format, Stdout: r.io.Stdout, Samples: r.out.Samples, PlotDir: r.sweep.Plot}
	return Sweep(&jobHost{run: r}, r.sweep.worlds(r.launch, r.store), out, r.body)
}

// jobHost is Host over package job for a sweepRun.
type jobHost struct {
	run   *sweepRun
	total int // records of every world, for the progress line
}

func (h *jobHost) Launch(p int, fn func(c mpi.Comm) error) error {
	return h.run.launch.WorldOf(p, fn)
}

func (h *jobHost) Agree(c mpi.Comm, err error) error { return job.Agree(c, err) }

func (h *jobHost) Wrote(path string) { fmt.Fprintln(h.run.io.Stderr, "commcost: wrote", path) }

// Open opens --out and the progress line (a writer that steps it).
func (h *jobHost) Open() ([]results.RecordWriter, error) {
	var ws []results.RecordWriter
	jw, err := job.OpenOut(h.run.out.Out)
	if err != nil {
		return nil, err
	}
	if jw != nil {
		ws = append(ws, jw)
	}
	m := job.NewMeter(h.run.io.Stderr, h.run.out.Quiet, h.run.label, h.total)
	if m != nil {
		ws = append(ws, meterWriter{m})
	}
	// A sweep stopped by SIGTERM or SIGINT exits 1 once the record being
	// written is whole, saying where the finished ones are.
	g := job.NewGuard(ws...)
	g.Arm(job.StopNote{Label: h.run.label, Out: h.run.out.Out, Stderr: h.run.io.Stderr, Before: m.Finish, Note: "no tables or figures were written"})
	return []results.RecordWriter{g}, nil
}

// Preflight refuses a world of the local backend before any output: a
// mesh the experiment cannot run on, and more memory than the machine
// has (every world's ranks live in this process).
func (h *jobHost) Preflight(w World) error {
	r := h.run
	m, err := divalib.NewMesh(w.Mesh.Rows, w.Mesh.Cols, w.P)
	if err != nil {
		return r.io.Tell(opts.Field("Mesh", "", "%v", err))
	}
	sweeping := len(r.sweep.Meshes) > 0
	if err := r.mesh(m); err != nil {
		switch {
		case sweeping:
			err = opts.Field("Meshes", "", "%v", err)
		case w.Mesh.Size() > 0:
			err = opts.Field("Mesh", "", "%v", err)
		default:
			err = r.ranksErr(r.io.FlagText("NP"), err)
		}
		return r.io.Tell(err)
	}
	h.total += r.points(w.P)
	flag, what, per := r.io.FlagText("NP"), fmt.Sprintf("the local backend's %d ranks", w.P), float64(job.LocalRankBytes)
	if sweeping {
		flag = r.io.FlagText("Meshes")
		what = fmt.Sprintf("mesh %s's %d ranks", m, w.P)
	}
	if r.need != nil {
		n := r.need(w.P)
		per += n.PerRank + n.InFlight
		flag, what = n.Flag+" with "+flag, n.What+" on each of "+what
	}
	return job.CheckInProcess(flag, fmt.Sprintf("%s (about %s each)", what, sysmem.Format(per)), float64(w.P)*per)
}

// Enter checks the world (one verdict for every rank) and its memory
// under mpirun, and makes the records' metadata; its collectives are a
// point of the watchdog of their own.
func (h *jobHost) Enter(c mpi.Comm, w World) (results.Meta, error) {
	r := h.run
	defer patterns.Installed().Begin(r.label+": the checks of the world", 0)()
	check := job.CheckRanks(func(p int) error {
		if err := r.store.checkWorld(c); err != nil {
			return err
		}
		m, err := divalib.NewMesh(w.Mesh.Rows, w.Mesh.Cols, p)
		if err != nil {
			return opts.Field("Mesh", "", "%v", err)
		}
		if err := r.mesh(m); err != nil {
			if w.Mesh.Size() > 0 {
				return opts.Field("Mesh", "", "%v", err)
			}
			return r.ranksErr(job.RanksText(c), err)
		}
		return nil
	})
	if err := job.Agree(c, r.io.Tell(check(c))); err != nil {
		return results.Meta{}, err
	}
	meta, err := job.NewMeta(c)
	if err != nil {
		return meta, err
	}
	meta.Seed = r.store.Seed
	if w.P == 0 {
		h.total = r.points(c.Size())
	}
	if c.Backend() == job.Native && r.need != nil {
		// The local backend's worlds were checked before any output.
		err = job.Agree(c, job.CheckMemory(c, meta, r.need(c.Size())))
	}
	return meta, err
}

// meterWriter steps a progress line per record and ends it when the
// output closes (before the tables print).
type meterWriter struct{ m *job.Meter }

func (w meterWriter) Write(results.Record) error { w.m.Step(); return nil }
func (w meterWriter) Close() error               { w.m.Finish(); return nil }

// ranksErr is a refusal of a world's mesh that no mesh flag chose, as bad
// input: a program's refusal of the number of ranks alone names what set
// it (ranks: --np N, or the launcher's -np N) once; other refusals name
// their own flags.
func (r *sweepRun) ranksErr(ranks string, err error) error {
	if re := (*apps.RanksError)(nil); errors.As(err, &re) {
		return opts.Badf("%s: %s needs %s", ranks, r.label, re.Needs())
	}
	if opts.IsBadInput(err) {
		return err
	}
	return opts.Badf("%v", err)
}
