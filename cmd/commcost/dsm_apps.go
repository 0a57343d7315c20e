package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The application experiments of paper 004 (dsm matsquare, bitonic,
// barneshut): flags, a call into package dsmexp (or divalib for the matrix
// square), records, the ratio tables and the figures.

func init() {
	register(command{Name: "dsm bitonic", Summary: "bitonic sorting with merge&split (paper 004, section 3.2, Figs. 6-7) over each strategy and the hand-optimised message passing: congestion and execution time, ratios to hand", Run: runDSMBitonic})
	register(command{Name: "dsm barneshut", Summary: "the Barnes-Hut N-body simulation (paper 004, section 3.3, Figs. 8-11) over each strategy: congestion and time of the six phases, cache hit ratio, forces checked against direct summation, energy drift", Run: runDSMBarnesHut})
	register(command{Name: "dsm plot", Summary: "the ratio tables and the figures of matsquare, bitonic and barneshut again, from their records (JSON Lines files)", Run: runDSMPlot})
}

// dsmSweep are the flags the experiments add to dsmFlags: a sweep over mesh
// sizes on the local backend (the figures over the mesh need several worlds)
// and the figures' directory.
type dsmSweep struct {
	meshes    string
	meshesSet bool // --meshes was given (perhaps empty)
	plot      string
	warmup    int

	list []divalib.Mesh
}

// register adds the flags; warmup adds --warmup (the applications of
// package apps; the matrix square has no untimed run).
func (w *dsmSweep) register(fs *flag.FlagSet, warmup bool) {
	// A Func, not a StringVar, so that a list given empty is told apart
	// from no list (the list rule: an empty list is an error).
	fs.Func("meshes", "local backend: run one world per mesh in this comma `list` (e.g. 4x4,8x8,16x16,32x32), in place of --np and --mesh", func(s string) error {
		w.meshes, w.meshesSet = s, true
		return nil
	})
	fs.StringVar(&w.plot, "plot", "", "draw the paper's figures from this run's records as PNG files into `DIR` (created if missing)")
	w.warmup = -1
	if warmup {
		fs.IntVar(&w.warmup, "warmup", -1, "untimed runs before the measured ones (default: 1 under mpirun, 0 on the local backend, whose times are not network measurements)")
	}
}

// check validates the sweep flags against the shared ones.
func (w *dsmSweep) check(d *dsmFlags) error {
	w.list = nil
	if w.meshesSet {
		if d.mf.backend != backendLocal {
			return usagef("--meshes %s: a sweep over meshes needs --backend local (under mpirun the world has one size: give --mesh or nothing)", echo(w.meshes))
		}
		if d.mesh != "" {
			return usagef("--meshes %s: give either --meshes or --mesh, not both", echo(w.meshes))
		}
		const form = "a comma list of ROWSxCOLS, e.g. 4x4,8x8,16x16"
		items, err := listItems("meshes", w.meshes, form)
		if err != nil {
			return err
		}
		for _, f := range items {
			r, c, err := divalib.ParseMesh(f)
			if err != nil || r == 0 {
				return usagef("--meshes %s: %s: accepted form is %s", echo(w.meshes), echo(f), form)
			}
			if r*c > 4096 {
				return usagef("--meshes %s: %s has %d processors; the local backend takes 1 to 4096 ranks", echo(w.meshes), echo(f), r*c)
			}
			w.list = append(w.list, divalib.Mesh{Rows: r, Cols: c})
		}
		// The list rule of every list flag: each mesh once.
		if err := distinct("meshes", w.meshes, w.list, divalib.Mesh.String); err != nil {
			return err
		}
	}
	if w.warmup < -1 {
		return mustNotBeNegative("warmup", w.warmup)
	}
	if d.mf.backend == backendLocal && d.barKind == divalib.BarrierMPI {
		return usagef("--barrier mpi needs MPI_Ibarrier, which the local backend does not offer; accepted here: tree, central")
	}
	if w.plot != "" {
		if st, err := os.Stat(w.plot); err == nil {
			if !st.IsDir() {
				return usagef("--plot %s: exists and is not a directory", w.plot)
			}
		} else if st, err := os.Stat(filepath.Dir(filepath.Clean(w.plot))); err != nil || !st.IsDir() {
			return usagef("--plot %s: the parent directory must exist (the figures' directory itself is created)", w.plot)
		}
	}
	return nil
}

// warmupRuns is the number of untimed runs for the backend.
func (w *dsmSweep) warmupRuns(backend string) int {
	return dsmexp.WarmupRuns(w.warmup, backend == backendNative)
}

// runDSMSweep runs body on every world of the sweep (dsmexp.Sweep): under
// mpirun the one world of the launch, on the local backend one world per
// --meshes mesh or the one of --np ranks. The records are written as they
// complete (--out, and stdout for the record formats), then the ratio
// tables (table and markdown formats) are printed and the figures drawn
// (--plot). meshCheck refuses a mesh the application cannot run on; on the
// local backend it is checked for every world before anything is written.
func runDSMSweep(d *dsmFlags, sw *dsmSweep, stdout, stderr io.Writer, meshCheck func(m divalib.Mesh) error, body dsmexp.Body) error {
	out := &dsmexp.Output{Format: d.mf.format, Stdout: stdout, Samples: d.mf.samples, PlotDir: sw.plot}
	worlds := []dsmexp.World{{Mesh: d.asked()}} // the launcher's
	if d.mf.backend != backendNative {
		worlds = dsmexp.Worlds(sw.list, d.mf.np, d.asked())
	}
	return dsmexp.Sweep(&dsmHost{d: d, sw: sw, stderr: stderr, meshCheck: meshCheck}, worlds, out, body)
}

// dsmHost is dsmexp.Host over the CLI's worlds (withWorld, agree), its
// checks of the rank count and memory, and --out, with the messages of
// the flags.
type dsmHost struct {
	d         *dsmFlags
	sw        *dsmSweep
	stderr    io.Writer
	meshCheck func(m divalib.Mesh) error
}

func (h *dsmHost) Launch(p int, fn func(c mpi.Comm) error) error {
	return withWorld(h.d.mf.backend, p, fn)
}

func (h *dsmHost) Agree(c mpi.Comm, err error) error { return agree(c, err) }

func (h *dsmHost) Wrote(path string) { fmt.Fprintln(h.stderr, "commcost: wrote", path) }

func (h *dsmHost) Open() ([]results.RecordWriter, error) {
	if h.d.mf.out == "" {
		return nil, nil
	}
	jw, err := openOut(h.d.mf.out)
	if err != nil {
		return nil, err
	}
	return []results.RecordWriter{jw}, nil
}

// Preflight refuses a local world before any output: a mesh the
// application cannot run on, and what the machine does not have (issue
// 18, class 2): every world's ranks live in this process.
func (h *dsmHost) Preflight(w dsmexp.World) error {
	d, sw := h.d, h.sw
	p := w.P
	m, err := divalib.NewMesh(w.Mesh.Rows, w.Mesh.Cols, p)
	if err != nil {
		return usagef("--mesh %s: %v", d.mesh, err)
	}
	if err := h.meshCheck(m); err != nil {
		if len(sw.list) > 0 {
			return usagef("--meshes %s: %v", echo(sw.meshes), err)
		}
		return err
	}
	flag, what, per := fmt.Sprintf("--np %d", p), fmt.Sprintf("the local backend's %d ranks", p), float64(localRankBytes)
	if len(sw.list) > 0 {
		flag = "--meshes " + echo(sw.meshes)
		what = fmt.Sprintf("mesh %s's %d ranks", m, p)
	}
	if d.mf.need != nil {
		n := d.mf.need(p)
		per += n.perRank + n.inFlight
		flag, what = n.flag+" with "+flag, n.what+" on each of "+what
	}
	return checkInProcess(flag, fmt.Sprintf("%s (about %s each)", what, sysmem.Format(per)), float64(p)*per)
}

// Enter checks the world (one verdict for all ranks) and makes the
// records' metadata.
func (h *dsmHost) Enter(c mpi.Comm, w dsmexp.World) (results.Meta, error) {
	d := h.d
	check := func() error {
		if err := d.rankCheck(c); err != nil {
			return err
		}
		m, err := divalib.NewMesh(w.Mesh.Rows, w.Mesh.Cols, c.Size())
		if err != nil {
			return usagef("--mesh: %v", err)
		}
		return h.meshCheck(m)
	}
	if err := agree(c, check()); err != nil {
		return results.Meta{}, err
	}
	meta, err := newMeta(c)
	meta.Seed = d.seed
	if err == nil && c.Backend() == backendNative && d.mf.need != nil {
		// The local backend's worlds were checked before any output.
		err = agree(c, checkMemory(c, &d.mf, meta, d.mf.need(c.Size())))
	}
	return meta, err
}

func runDSMBitonic(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm bitonic", stderr)
	var d dsmFlags
	d.register(fs, "hand,"+allDSMStrategies, 16)
	var sw dsmSweep
	sw.register(fs, true)
	keys := fs.String("keys", "4096", "keys per rank m (4-byte integers): a list (256,1024,4096) or a power-of-two range (64:4096)")
	reps := fs.Int("reps", 3, "measured repetitions per strategy and point (each sorts anew)")
	fs.BoolVar(&d.mf.samples, "samples", false, "keep every repetition's time in the records")
	if err := d.parseSweep(fs, args, &sw, true); err != nil {
		return err
	}
	ks, err := parseIntGrid("keys", *keys, 1)
	if err != nil {
		return err
	}
	for _, m := range ks {
		if 4*m > mpi.MaxCount-64 {
			return usagef("--keys %s: %d keys do not fit one message (at most %d)", *keys, m, (mpi.MaxCount-64)/4)
		}
		if d.memBytes > 0 && d.memBytes < 4*m {
			return usagef("--memory %s: smaller than one key block (%d bytes for %d keys); give at least %s", d.memory, 4*m, m, results.FormatBytes(float64(4*m)))
		}
	}
	if *reps < 1 {
		return mustBePositive("reps", *reps)
	}
	warm := sw.warmupRuns(d.mf.backend)
	mmax := slices.Max(ks)
	d.mf.need = func(int) memNeed {
		return memNeed{perRank: dsmexp.BitonicRankBytes(mmax), flag: "--keys " + echo(*keys), what: fmt.Sprintf("bitonic's blocks of %d keys", mmax)}
	}
	bitonicMesh := func(m divalib.Mesh) error {
		if err := dsmexp.CheckBitonicMesh(m); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	return runDSMSweep(&d, &sw, stdout, stderr, bitonicMesh, func(c mpi.Comm, w dsmexp.World, meta results.Meta, emit func(results.Record) error) error {
		setup := dsmexp.Setup{Strategies: d.list, Store: d.store(w.Mesh), Reps: *reps, Warmup: warm, Seed: d.seed}
		return dsmexp.RunBitonic(c, setup, ks, meta, emit)
	})
}

// runDSMPlot redraws the ratio tables and the figures of the dsm
// experiments from their records (JSON Lines files, e.g. several --out
// files of runs on different meshes): everything the experiments print
// comes from records alone.
func runDSMPlot(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dsm plot", stderr)
	var format results.Format
	fs.Var(&format, "format", "tables as `table` or markdown")
	var sw dsmSweep
	fs.StringVar(&sw.plot, "plot", "", "draw the figures as PNG files into `DIR` (created if missing)")
	// Files and flags in any order: parse up to the next file, repeat.
	var files []string
	for {
		if err := parseFlags(fs, args, true); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		return usagef("dsm plot needs one or more JSON Lines files of dsm matsquare, bitonic or barneshut records")
	}
	if format != results.FormatTable && format != results.FormatMarkdown {
		return usagef("--format %v: dsm plot prints tables: accepted are table and markdown", format)
	}
	d := dsmFlags{mf: measureFlags{backend: backendLocal}}
	if err := sw.check(&d); err != nil {
		return err
	}
	var recs []results.Record
	for _, f := range files {
		rs, err := readRecordsFile("dsm plot", f, stderr)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
	}
	paths, err := dsmexp.Redraw(stdout, recs, format == results.FormatMarkdown, sw.plot)
	for _, p := range paths {
		fmt.Fprintln(stderr, "commcost: wrote", p)
	}
	return err
}
