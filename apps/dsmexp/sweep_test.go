package dsmexp

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

func TestWarmupRuns(t *testing.T) {
	tests := []struct {
		name   string
		asked  int
		native bool
		want   int
	}{
		{"default native", -1, true, 1},
		{"default local", -1, false, 0},
		{"asked none native", 0, true, 0},
		{"asked local", 3, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WarmupRuns(tt.asked, tt.native); got != tt.want {
				t.Fatalf("WarmupRuns(%d, %v) = %d, want %d", tt.asked, tt.native, got, tt.want)
			}
		})
	}
}

func TestWorlds(t *testing.T) {
	m := func(r, c int) divalib.Mesh { return divalib.Mesh{Rows: r, Cols: c} }
	tests := []struct {
		name   string
		meshes []divalib.Mesh
		np     int
		mesh   divalib.Mesh
		want   []World
	}{
		{"one world, nearly square", nil, 16, m(0, 0), []World{{Mesh: m(0, 0), P: 16}}},
		{"one world, mesh given", nil, 8, m(2, 4), []World{{Mesh: m(2, 4), P: 8}}},
		{"sweep", []divalib.Mesh{m(2, 2), m(4, 4), m(2, 8)}, 99, m(0, 0),
			[]World{{Mesh: m(2, 2), P: 4}, {Mesh: m(4, 4), P: 16}, {Mesh: m(2, 8), P: 16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Worlds(tt.meshes, tt.np, tt.mesh); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckBitonicMesh(t *testing.T) {
	tests := []struct {
		mesh divalib.Mesh
		ok   bool
	}{
		{divalib.Mesh{Rows: 1, Cols: 1}, true},
		{divalib.Mesh{Rows: 2, Cols: 2}, true},
		{divalib.Mesh{Rows: 4, Cols: 8}, true},
		{divalib.Mesh{Rows: 3, Cols: 4}, false},
		{divalib.Mesh{Rows: 1, Cols: 6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.mesh.String(), func(t *testing.T) {
			err := CheckBitonicMesh(tt.mesh)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "power-of-two number of ranks") {
				t.Errorf("message %q does not say what is accepted", err)
			}
		})
	}
}

func TestBarnesHutPoints(t *testing.T) {
	cfg := apps.BarnesHutConfig{Theta: 1, Steps: 3, Measured: 2}
	tests := []struct {
		name    string
		pts     BarnesHutPoints
		p       int
		want    []int
		wantErr bool
		msg     string // in the message
	}{
		{"list", BarnesHutPoints{Bodies: []int{100, 200}}, 4, []int{100, 200}, false, ""},
		{"per rank", BarnesHutPoints{Bodies: []int{100}, PerRank: 50}, 16, []int{800}, false, ""},
		{"too few bodies", BarnesHutPoints{Bodies: []int{0}}, 4, []int{0}, true, ""},
		{"bodies beyond the cell references", BarnesHutPoints{Bodies: []int{1000000000}}, 4, []int{1000000000}, true, "--bodies 1000000000: barneshut on 4 ranks: bodies N = 1000000000 on 4 ranks: 3000000066 variables do not fit the cell references (int32); want N <= 715827860"},
		{"per rank beyond the cell references", BarnesHutPoints{PerRank: 1000000000}, 1, []int{1000000000}, true, "--bodies-per-rank 1000000000: barneshut on 1 ranks: N = 1000000000 bodies and their cells do not fit the cell references (int32); want --bodies-per-rank <= 715827876 on 1 ranks"},
		{"the largest per rank fits", BarnesHutPoints{PerRank: 178956965}, 4, []int{715827860}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.pts.For(tt.p); !slices.Equal(got, tt.want) {
				t.Errorf("For(%d) = %v, want %v", tt.p, got, tt.want)
			}
			err := tt.pts.Check(cfg, tt.p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Check: %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("barneshut on %d ranks", tt.p)) {
				t.Errorf("message %q does not name the world", err)
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("message %q, want %q", err, tt.msg)
			}
		})
	}
	// The pools of cells, not N, overflow the references: the message
	// names --cells-per-body and its bound, which itself is accepted.
	for _, tt := range []struct {
		cells float64
		n, p  int
		msg   string
	}{
		{1000, 3000000, 4, "--cells-per-body 1000: barneshut on 4 ranks: N = 3000000 bodies with that many cells each do not fit the cell references (int32); want --cells-per-body <= 714.827 for N = 3000000 on 4 ranks"},
		{30, 100000000, 4, "want --cells-per-body <= 20.4748 for N = 100000000"},
		// Beyond the range's bound the range is the refusal (and its
		// bound the largest accepted where the references allow more).
		{1e12, 2000, 4, "barneshut on 4 ranks: cells per body = 1e+12: must be in (0, 1024]"},
		{1e300, 64, 4, "barneshut on 4 ranks: cells per body = 1e+300: must be in (0, 1024]"},
	} {
		c := cfg
		c.CellsPerBody = tt.cells
		pts := BarnesHutPoints{Bodies: []int{tt.n}}
		if err := pts.Check(c, tt.p); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("cells per body %v: %v, want %q", tt.cells, err, tt.msg)
		}
		c.Bodies = tt.n
		c.CellsPerBody = c.MaxCellsPerBody(tt.p)
		if err := pts.Check(c, tt.p); err != nil {
			t.Errorf("the bound %v itself is refused: %v", c.CellsPerBody, err)
		}
	}
}

// fakeHost runs worlds on goroutine ranks and logs the sweep's calls.
type fakeHost struct {
	mu        sync.Mutex
	log       []string
	failEnter int // P of a world whose Enter fails (0: none)
	failOpen  bool
	writer    *memWriter
}

func (h *fakeHost) note(s string) {
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

func (h *fakeHost) Launch(p int, fn func(c mpi.Comm) error) error {
	h.note(fmt.Sprintf("launch %d", p))
	if p == 0 {
		p = 2 // the "launcher's" world
	}
	return local.Run(p, fn)
}

func (h *fakeHost) Preflight(w World) error {
	h.note(fmt.Sprintf("preflight %d", w.P))
	return nil
}

func (h *fakeHost) Enter(c mpi.Comm, w World) (results.Meta, error) {
	if w.P == h.failEnter && w.P > 0 {
		return results.Meta{}, errors.New("enter refused")
	}
	return results.Meta{Backend: "local", Seed: 1}, nil
}

// Agree: every rank fails if one does.
func (h *fakeHost) Agree(c mpi.Comm, err error) error {
	in := []int64{0}
	if err != nil {
		in[0] = 1
	}
	out := []int64{0}
	if aerr := c.AllreduceInt64s(in, out, mpi.OpMax); aerr != nil {
		return aerr
	}
	if out[0] == 1 && err == nil {
		return errors.New("another rank failed")
	}
	return err
}

func (h *fakeHost) Open() ([]results.RecordWriter, error) {
	h.note("open")
	if h.failOpen {
		return nil, errors.New("open refused")
	}
	return []results.RecordWriter{h.writer}, nil
}

func (h *fakeHost) Wrote(path string) { h.note("wrote " + path) }

// memWriter keeps the records written to it.
type memWriter struct {
	recs   []results.Record
	closed bool
}

func (w *memWriter) Write(rec results.Record) error { w.recs = append(w.recs, rec); return nil }
func (w *memWriter) Close() error                   { w.closed = true; return nil }

// sweepBody emits one record per world with a counter only some worlds
// have (the CSV at the end must hold the union of the columns).
func sweepBody(c mpi.Comm, w World, meta results.Meta, emit func(results.Record) error) error {
	rec := results.Record{Schema: results.SchemaVersion, Bench: "sweep-test", Params: results.Params{"mesh": w.Mesh.String()},
		Ranks: c.Size(), Unit: results.UnitSeconds, Summary: results.Summarize([]float64{1, 2}), Samples: []float64{1, 2},
		Reduction: results.ReductionRank0, Stop: results.StopFixed, Meta: meta,
		Counters: map[string]float64{fmt.Sprintf("only_p%d", c.Size()): 1}}
	return emit(rec)
}

// TestSweep: every world is checked before the outputs open, the worlds run
// in order with rank 0's records kept (samples dropped unless asked), CSV
// comes at the end with every column; a failing world closes the outputs
// and writes nothing more; the launcher's world opens inside it and a
// failure to open is every rank's.
func TestSweep(t *testing.T) {
	two := []World{{Mesh: divalib.Mesh{Rows: 1, Cols: 2}, P: 2}, {Mesh: divalib.Mesh{Rows: 2, Cols: 2}, P: 4}}
	tests := []struct {
		name      string
		worlds    []World
		failEnter int  // fakeHost.failEnter
		failOpen  bool // fakeHost.failOpen
		samples   bool
		wantLog   []string
		wantRecs  int
		wantErr   string
		wantCSV   []string // columns in the CSV header
		wantNoCSV bool
	}{
		{name: "two worlds", worlds: two, wantRecs: 2,
			wantLog: []string{"preflight 2", "preflight 4", "open", "launch 2", "launch 4"},
			wantCSV: []string{"counter_only_p2", "counter_only_p4"}},
		{name: "samples kept", worlds: two, samples: true, wantRecs: 2,
			wantLog: []string{"preflight 2", "preflight 4", "open", "launch 2", "launch 4"}},
		{name: "second world refused", worlds: two, failEnter: 4, wantRecs: 1, wantErr: "enter refused",
			wantLog: []string{"preflight 2", "preflight 4", "open", "launch 2", "launch 4"}, wantNoCSV: true},
		{name: "launcher's world", worlds: []World{{}}, wantRecs: 1,
			wantLog: []string{"launch 0", "open"}, wantCSV: []string{"counter_only_p2"}},
		{name: "launcher's world, open fails", worlds: []World{{}}, failOpen: true, wantErr: "open refused",
			wantLog: []string{"launch 0", "open"}, wantNoCSV: true},
		{name: "launcher's world among others", worlds: []World{{}, {P: 4}}, wantErr: "only one", wantNoCSV: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHost{failEnter: tt.failEnter, failOpen: tt.failOpen, writer: &memWriter{}}
			var stdout bytes.Buffer
			out := &Output{Format: results.FormatCSV, Stdout: &stdout, Samples: tt.samples}
			err := Sweep(h, tt.worlds, out, sweepBody)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if !slices.Equal(h.log, tt.wantLog) {
				t.Errorf("calls %q, want %q", h.log, tt.wantLog)
			}
			if len(h.writer.recs) != tt.wantRecs || len(out.Records()) != tt.wantRecs {
				t.Errorf("%d records written, %d kept, want %d", len(h.writer.recs), len(out.Records()), tt.wantRecs)
			}
			if tt.wantRecs > 0 && !h.writer.closed {
				t.Error("the writers were not closed")
			}
			for _, rec := range h.writer.recs {
				if (rec.Samples != nil) != tt.samples {
					t.Errorf("samples %v, want kept %v", rec.Samples, tt.samples)
				}
			}
			if tt.wantNoCSV {
				if stdout.Len() != 0 {
					t.Errorf("stdout after a failure:\n%s", stdout.String())
				}
				return
			}
			header, _, _ := strings.Cut(stdout.String(), "\n")
			for _, col := range tt.wantCSV {
				if !strings.Contains(header, col) {
					t.Errorf("CSV header lacks %s: %s", col, header)
				}
			}
			if n := strings.Count(stdout.String(), "sweep-test"); n != tt.wantRecs {
				t.Errorf("CSV has %d records, want %d", n, tt.wantRecs)
			}
		})
	}
}

// TestOutputStreams: a record format other than CSV goes to stdout as the
// records come, and the tables formats print nothing until Finish.
func TestOutputStreams(t *testing.T) {
	tests := []struct {
		format      results.Format
		wantStreams bool
	}{
		{results.FormatJSONL, true},
		{results.FormatGoBench, true},
		{results.FormatCSV, false},
		{results.FormatTable, false},
		{results.FormatMarkdown, false},
	}
	for _, tt := range tests {
		t.Run(tt.format.String(), func(t *testing.T) {
			var stdout bytes.Buffer
			out := &Output{Format: tt.format, Stdout: &stdout}
			out.Open()
			err := local.Run(1, func(c mpi.Comm) error {
				return sweepBody(c, World{Mesh: divalib.Mesh{Rows: 1, Cols: 1}, P: 1}, results.Meta{Backend: "local"}, out.Emit(c))
			})
			if err != nil {
				t.Fatal(err)
			}
			if streamed := stdout.Len() > 0; streamed != tt.wantStreams {
				t.Fatalf("stdout before Finish: %q, want streamed %v", stdout.String(), tt.wantStreams)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBitonicRankBytes: seven blocks of m 4-byte keys per rank.
func TestBitonicRankBytes(t *testing.T) {
	for _, m := range []int{1, 4096, 1 << 20} {
		if got, want := BitonicRankBytes(m), float64(28*m); got != want {
			t.Errorf("BitonicRankBytes(%d) = %v, want %v", m, got, want)
		}
	}
}
