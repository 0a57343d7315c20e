package dsmexp

import (
	"errors"
	"io"
	"sync"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The driver of the experiments over worlds (`commcost dsm matsquare`,
// `bitonic`, `barneshut`): the figures over the mesh (paper 004, Figs. 7
// and 11) need one world per mesh size, and every record of all of them
// goes to one output, whose ratio tables and figures come at the end.

// World is one world of a sweep.
type World struct {
	// Mesh is the virtual mesh as asked: 0x0 means the most nearly square
	// shape of the world's ranks (divalib.NewMesh).
	Mesh divalib.Mesh
	// P is the world's ranks; 0 is the launcher's one world (under
	// mpirun), whose size is known only inside it.
	P int
}

// Worlds are the worlds of a sweep on goroutine ranks: one per mesh of
// meshes (each of its own size), or, with none, the one world of np ranks
// on mesh (0x0: the most nearly square shape).
func Worlds(meshes []divalib.Mesh, np int, mesh divalib.Mesh) []World {
	if len(meshes) == 0 {
		return []World{{Mesh: mesh, P: np}}
	}
	out := make([]World, len(meshes))
	for i, m := range meshes {
		out[i] = World{Mesh: m, P: m.Size()}
	}
	return out
}

// WarmupRuns is the number of untimed runs before the measured ones: asked
// when it is >= 0, else 1 under mpirun (native) and 0 on goroutine ranks,
// whose times are not network measurements.
func WarmupRuns(asked int, native bool) int {
	switch {
	case asked >= 0:
		return asked
	case native:
		return 1
	}
	return 0
}

// CheckBitonicMesh refuses a mesh bitonic sorting cannot use: the circuit
// has one wire per rank, so the ranks are a power of two
// (apps.BitonicConfig.Check).
func CheckBitonicMesh(m divalib.Mesh) error {
	err := (apps.BitonicConfig{Keys: 1}).Check(m.Size())
	if re := (*apps.RanksError)(nil); errors.As(err, &re) {
		re.Hint = "e.g. 4, 16, 64, 256, 1024 (meshes 2x2, 4x4, 8x8, 16x16, 32x32)"
	}
	return err
}

// Output receives the records of a sweep on rank 0: it writes them as they
// come (to the writers of Open and, for the record formats, to Stdout),
// keeps them all, and at Finish writes what needs every record: the
// ratio tables (table and markdown formats), CSV (the strategies' records
// carry different counters, and a streaming CSV writer fixes its columns
// at the first record, so CSV is written at the end with the union of the
// columns) and the figures.
type Output struct {
	Format  results.Format
	Stdout  io.Writer
	Samples bool   // keep every repetition's time in the records
	PlotDir string // draw the figures here at Finish ("": none)

	mu      sync.Mutex
	recs    []results.Record
	writers []results.RecordWriter
}

// tables reports whether stdout gets the ratio tables.
func (o *Output) tables() bool {
	return o.Format == results.FormatTable || o.Format == results.FormatMarkdown
}

// Open starts the output: the records go to writers (e.g. a JSON Lines
// file) and, in a record format other than CSV, to Stdout.
func (o *Output) Open(writers ...results.RecordWriter) {
	o.writers = append(o.writers, writers...)
	if !o.tables() && o.Format != results.FormatCSV {
		o.writers = append(o.writers, o.Format.NewWriter(o.Stdout, results.TableOptions{}))
	}
}

// Emit is the emit function of a world's ranks: rank 0's records are
// written and kept (safe for the goroutine ranks of several worlds), the
// others' are dropped (the experiments' records are global).
func (o *Output) Emit(c mpi.Comm) func(results.Record) error {
	return func(rec results.Record) error {
		if c.Rank() != 0 {
			return nil
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if !o.Samples {
			rec.Samples = nil
		}
		o.recs = append(o.recs, rec)
		for _, w := range o.writers {
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	}
}

// Records are the records emitted so far.
func (o *Output) Records() []results.Record { return o.recs }

// Close closes the writers (the first error is returned).
func (o *Output) Close() error {
	var first error
	for _, w := range o.writers {
		if err := w.Close(); err != nil && first == nil {
			first = err
		}
	}
	o.writers = nil
	return first
}

// Finish closes the writers, writes the ratio tables or the CSV to Stdout
// and draws the figures into PlotDir; it returns the figures' paths.
func (o *Output) Finish() ([]string, error) {
	if err := o.Close(); err != nil {
		return nil, err
	}
	if o.tables() {
		if err := WriteTables(o.Stdout, o.recs, o.Format == results.FormatMarkdown); err != nil {
			return nil, err
		}
	}
	if o.Format == results.FormatCSV {
		if err := results.WriteCSV(o.Stdout, o.recs); err != nil {
			return nil, err
		}
	}
	if o.PlotDir == "" {
		return nil, nil
	}
	return WriteFigures(o.PlotDir, o.recs)
}

// Redraw writes the ratio tables of recs to w (markdown or box-drawn) and,
// if dir is not empty, draws the figures there, returning their paths:
// everything the experiments print comes from their records alone.
func Redraw(w io.Writer, recs []results.Record, markdown bool, dir string) ([]string, error) {
	if err := WriteTables(w, recs, markdown); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, nil
	}
	return WriteFigures(dir, recs)
}

// Host is what a sweep needs from the program that runs it: its worlds,
// its checks (with the messages of its configuration) and its outputs.
// The experiments run it over package job (host.go); tests, over
// goroutine ranks of their own.
type Host interface {
	// Launch runs fn on every rank of a new world of p ranks; p = 0 is
	// the launcher's world.
	Launch(p int, fn func(c mpi.Comm) error) error
	// Preflight refuses a world of known size before anything is written
	// (all worlds are checked before the first runs).
	Preflight(w World) error
	// Enter checks the world c runs w on and returns the records'
	// metadata; collective, with the same verdict on every rank.
	Enter(c mpi.Comm, w World) (results.Meta, error)
	// Agree makes a verdict reached on some ranks every rank's
	// (collective).
	Agree(c mpi.Comm, err error) error
	// Open returns the record writers besides stdout (e.g. a JSON Lines
	// file); called once, on rank 0, after the first world's checks.
	Open() ([]results.RecordWriter, error)
	// Wrote is told the path of every figure drawn.
	Wrote(path string)
}

// Body is an experiment's part on the ranks of one world: collective, it
// hands its records to emit.
type Body func(c mpi.Comm, w World, meta results.Meta, emit func(results.Record) error) error

// Sweep runs body on every world (collective on each) with its records
// going to out, then finishes out (tables, CSV, figures). A single world
// with P = 0 is the launcher's: there the checks and the opening of the
// outputs happen inside the world, rank 0 opens and finishes, and a
// failure to open is every rank's verdict. Otherwise every world is
// checked (Preflight) before the outputs are opened, and the worlds run in
// order.
func Sweep(h Host, worlds []World, out *Output, body Body) error {
	if len(worlds) == 0 {
		return errors.New("dsmexp: a sweep needs at least one world")
	}
	for _, w := range worlds {
		if w.P == 0 && len(worlds) > 1 {
			return errors.New("dsmexp: the launcher's world (P = 0) must be the sweep's only one")
		}
	}
	open := func() error {
		ws, err := h.Open()
		if err != nil {
			return err
		}
		out.Open(ws...)
		return nil
	}
	finish := func() error {
		paths, err := out.Finish()
		for _, p := range paths {
			h.Wrote(p)
		}
		return err
	}
	if w := worlds[0]; w.P == 0 {
		return h.Launch(0, func(c mpi.Comm) error {
			meta, err := h.Enter(c, w)
			if err != nil {
				return err
			}
			var oerr error
			if c.Rank() == 0 {
				oerr = open()
			}
			if err := h.Agree(c, oerr); err != nil {
				return err
			}
			err = body(c, w, meta, out.Emit(c))
			if c.Rank() == 0 {
				if ferr := finish(); err == nil {
					err = ferr
				}
			}
			return err
		})
	}
	for _, w := range worlds {
		if err := h.Preflight(w); err != nil {
			return err
		}
	}
	if err := open(); err != nil {
		return err
	}
	for _, w := range worlds {
		err := h.Launch(w.P, func(c mpi.Comm) error {
			meta, err := h.Enter(c, w)
			if err != nil {
				return err
			}
			return body(c, w, meta, out.Emit(c))
		})
		if err != nil {
			_ = out.Close()
			return err
		}
	}
	return finish()
}
