package job

import (
	"errors"
	"io"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/progress"
	"github.com/commcost/commcost/results"
)

// Output is where a run's records go: the flags --format, --out, --samples
// and --quiet of every subcommand that writes records.
type Output struct {
	Format  results.Format `flag:"format" value:"format" usage:"output format on stdout: table|jsonl|csv|gobench|markdown"`
	Out     string         `flag:"out" value:"file" usage:"append records to this JSON Lines file, flushed one record at a time"`
	Samples bool           `flag:"samples" usage:"keep every repetition's time in the records"`
	Quiet   bool           `flag:"quiet" usage:"no progress line on stderr (shown only when stderr is a terminal and the sweep takes more than a few seconds)"`
	// Mixed, set by a run whose records are of several benches (a
	// calibration sweep and the experiment), prints CSV on stdout at the
	// end with the union of the records' columns: a CSV stream commits to
	// the columns of its first record. The --out file streams as always.
	Mixed bool
}

// OpenOut opens path for appending records; it is called only after every
// input was checked, so bad input writes nothing. A path that cannot be
// written is bad input naming --out.
func OpenOut(path string) (*results.JSONLWriter, error) {
	if path == "" {
		return nil, nil
	}
	// The records carry the launch identifier: a bad one is refused
	// before the file is created.
	if err := results.CheckLaunchEnv(); err != nil {
		return nil, opts.Badf("%v", err)
	}
	jw, err := results.AppendJSONL(path)
	switch {
	case errors.Is(err, results.ErrNotRecordsFile), errors.Is(err, results.ErrTooLarge):
		// What the file holds, or its size, is the fault: the error says
		// which, and the directory and permissions are fine.
		return nil, opts.Badf("--out %s: %v", path, err)
	case err != nil:
		return nil, opts.Badf("--out %s: %v (the directory must exist and the file be writable)", path, err)
	}
	return jw, nil
}

// Sink is where rank 0 sends records: the --out file and stdout in the
// chosen format. Other ranks get a sink that drops everything.
type Sink struct {
	guard  *Guard
	out    string // the --out file, "" for none
	stdout bool   // the records print on stdout
	keep   bool   // keep raw samples
	recs   []results.Record
}

// OpenSink opens the outputs on rank 0; the result on every rank is
// agreed, so a bad --out fails everywhere before anything is measured.
func OpenSink(c mpi.Comm, out Output, stdout io.Writer) (*Sink, error) {
	s := &Sink{keep: out.Samples, out: out.Out}
	var ws []results.RecordWriter
	var err error
	if c.Rank() == 0 {
		if out.Out != "" {
			var jw *results.JSONLWriter
			if jw, err = OpenOut(out.Out); err == nil {
				ws = append(ws, jw)
			}
		}
		if err == nil && stdout != nil {
			w := out.Format.NewWriter(stdout, results.TableOptions{})
			if out.Mixed && out.Format == results.FormatCSV {
				w = &mixedCSV{w: stdout}
			}
			ws = append(ws, w)
		}
	}
	s.guard = NewGuard(ws...)
	s.stdout = stdout != nil
	if err := Agree(c, err); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Write hands one finished record to every output; each flushes it at once.
func (s *Sink) Write(rec results.Record) error {
	if !s.keep {
		rec.Samples = nil
	}
	s.recs = append(s.recs, rec)
	return s.guard.Write(rec)
}

// StopOnSignal arms the sink's guard on rank 0 (Guard.Arm): a SIGTERM or
// SIGINT then ends the run with exit 1 once the record being written is
// whole, saying where its finished records are. st.Out and st.Stdout are
// the sink's.
func (s *Sink) StopOnSignal(c mpi.Comm, st StopNote) {
	if c.Rank() != 0 {
		return
	}
	st.Out, st.Stdout = s.out, s.stdout
	s.guard.Arm(st)
}

// mixedCSV writes the records of several benches as one CSV table at
// Close (results.WriteCSV), also after a failure: the table shows what was
// measured.
type mixedCSV struct {
	w    io.Writer
	recs []results.Record
}

func (m *mixedCSV) Write(rec results.Record) error { m.recs = append(m.recs, rec); return nil }

func (m *mixedCSV) Close() error {
	if len(m.recs) == 0 {
		return nil
	}
	return results.WriteCSV(m.w, m.recs)
}

// Records are the records written so far (on rank 0).
func (s *Sink) Records() []results.Record { return s.recs }

// Close closes every output; calls after the first do nothing.
func (s *Sink) Close() error { return s.guard.Close() }

// IsTerminal decides whether a progress line belongs on w; a variable so
// tests can pretend.
var IsTerminal = progress.IsTerminal

// Meter is the progress line of a run, nil when there is none: it appears
// only when stderr is a terminal (a log file or a pipe gets nothing, so
// batch output stays clean), never on stdout or in --out.
type Meter struct{ line *progress.Meter }

// NewMeter starts a progress line for label on w when w is a terminal and
// quiet is false, else returns nil (every method of a nil Meter does
// nothing). total is the number of points, 0 when unknown.
func NewMeter(w io.Writer, quiet bool, label string, total int) *Meter {
	if quiet || w == nil || !IsTerminal(w) {
		return nil
	}
	return &Meter{progress.Start(w, label, total)}
}

// Step records one finished point.
func (m *Meter) Step() {
	if m != nil {
		m.line.Step()
	}
}

// Finish ends the line; calls after the first do nothing.
func (m *Meter) Finish() {
	if m != nil {
		m.line.Finish()
	}
}
