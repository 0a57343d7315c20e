package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

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
	register(command{name: "dsm bitonic", summary: "bitonic sorting with merge&split (paper 004, section 3.2, Figs. 6-7) over each strategy and the hand-optimised message passing: congestion and execution time, ratios to hand", run: runDSMBitonic})
	register(command{name: "dsm barneshut", summary: "the Barnes-Hut N-body simulation (paper 004, section 3.3, Figs. 8-11) over each strategy: congestion and time of the six phases, cache hit ratio, forces checked against direct summation, energy drift", run: runDSMBarnesHut})
	register(command{name: "dsm plot", summary: "the ratio tables and the figures of matsquare, bitonic and barneshut again, from their records (JSON Lines files)", run: runDSMPlot})
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
	if w.warmup >= 0 {
		return w.warmup
	}
	if backend == backendNative {
		return 1
	}
	return 0
}

// worlds are the meshes to run: the sweep, or the one world of --np ranks
// on --mesh (0x0: the most nearly square shape).
func (w *dsmSweep) worlds(d *dsmFlags) []divalib.Mesh {
	if len(w.list) > 0 {
		return w.list
	}
	return []divalib.Mesh{{Rows: d.rows, Cols: d.cols}}
}

// runDSMSweep runs body on every world of the sweep (collective on each),
// writes the records as they complete (--out, and stdout for the record
// formats), then prints the ratio tables (table and markdown formats) and
// draws the figures (--plot). meshCheck refuses a mesh the application
// cannot run on; on the local backend it is checked for every world before
// anything is written.
func runDSMSweep(d *dsmFlags, sw *dsmSweep, stdout, stderr io.Writer, meshCheck func(m divalib.Mesh) error,
	body func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error) error {
	tables := d.mf.format == results.FormatTable || d.mf.format == results.FormatMarkdown
	// The strategies' records carry different counters (the hand version
	// has no store accesses, Barnes-Hut's phases differ), and a streaming
	// CSV writer fixes its columns at the first record: CSV is written at
	// the end with the union of the columns (the --out JSONL streams).
	csv := d.mf.format == results.FormatCSV
	var (
		mu      sync.Mutex
		recs    []results.Record
		writers []results.RecordWriter
	)
	open := func() error {
		if d.mf.out != "" {
			jw, err := results.AppendJSONL(d.mf.out)
			if err != nil {
				return usagef("--out %s: %v (the directory must exist and the file be writable)", d.mf.out, err)
			}
			writers = append(writers, jw)
		}
		if !tables && !csv {
			writers = append(writers, d.mf.format.NewWriter(stdout, results.TableOptions{}))
		}
		return nil
	}
	closeAll := func() error {
		var first error
		for _, w := range writers {
			if err := w.Close(); err != nil && first == nil {
				first = err
			}
		}
		writers = nil
		return first
	}
	emitFor := func(c mpi.Comm) func(results.Record) error {
		return func(rec results.Record) error {
			if c.Rank() != 0 {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			if !d.mf.samples {
				rec.Samples = nil
			}
			recs = append(recs, rec)
			for _, w := range writers {
				if err := w.Write(rec); err != nil {
					return err
				}
			}
			return nil
		}
	}
	finish := func() error {
		if err := closeAll(); err != nil {
			return err
		}
		if tables {
			if err := dsmexp.WriteTables(stdout, recs, d.mf.format == results.FormatMarkdown); err != nil {
				return err
			}
		}
		if csv {
			if err := results.WriteCSV(stdout, recs); err != nil {
				return err
			}
		}
		if sw.plot != "" {
			paths, err := dsmexp.WriteFigures(sw.plot, recs)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(stderr, "commcost: wrote", p)
			}
		}
		return nil
	}
	worldCheck := func(c mpi.Comm) error {
		if err := d.rankCheck(c); err != nil {
			return err
		}
		m, err := divalib.NewMesh(d.rows, d.cols, c.Size())
		if err != nil {
			return usagef("--mesh: %v", err)
		}
		return meshCheck(m)
	}
	// enterWorld checks the world (one verdict for all ranks) and makes
	// the records' metadata.
	enterWorld := func(c mpi.Comm) (results.Meta, error) {
		if err := agree(c, worldCheck(c)); err != nil {
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
	if d.mf.backend == backendNative {
		return withWorld(backendNative, 0, func(c mpi.Comm) error {
			meta, err := enterWorld(c)
			if err != nil {
				return err
			}
			var oerr error
			if c.Rank() == 0 {
				oerr = open()
			}
			if err := agree(c, oerr); err != nil {
				return err
			}
			err = body(c, meta, emitFor(c))
			if c.Rank() == 0 {
				if ferr := finish(); err == nil {
					err = ferr
				}
			}
			return err
		})
	}
	worlds := sw.worlds(d)
	for _, w := range worlds {
		p := d.mf.np
		if w.Rows > 0 {
			p = w.Size()
		}
		m, err := divalib.NewMesh(w.Rows, w.Cols, p)
		if err != nil {
			return usagef("--mesh %s: %v", d.mesh, err)
		}
		if err := meshCheck(m); err != nil {
			if len(sw.list) > 0 {
				return usagef("--meshes %s: %v", echo(sw.meshes), err)
			}
			return err
		}
		// Ask for what the machine has before any output (issue 18,
		// class 2): every world's ranks live in this process.
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
		if err := checkInProcess(flag, fmt.Sprintf("%s (about %s each)", what, sysmem.Format(per)), float64(p)*per); err != nil {
			return err
		}
	}
	if err := open(); err != nil {
		return err
	}
	for _, m := range worlds {
		p := d.mf.np
		if m.Rows > 0 {
			p = m.Size()
			d.rows, d.cols = m.Rows, m.Cols
		}
		err := withWorld(backendLocal, p, func(c mpi.Comm) error {
			meta, err := enterWorld(c)
			if err != nil {
				return err
			}
			return body(c, meta, emitFor(c))
		})
		if err != nil {
			_ = closeAll()
			return err
		}
	}
	return finish()
}

// powerOfTwoRanks refuses a mesh bitonic sorting cannot use.
func powerOfTwoRanks(m divalib.Mesh) error {
	if p := m.Size(); p < 1 || p&(p-1) != 0 {
		return usagef("bitonic sorting needs a power-of-two number of ranks (one wire of the circuit each), got %d; e.g. 4, 16, 64, 256, 1024 (meshes 2x2, 4x4, 8x8, 16x16, 32x32)", m.Size())
	}
	return nil
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
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := d.check(true); err != nil {
		return err
	}
	if err := sw.check(&d); err != nil {
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
	// A rank holds its block of m keys, the partner's block it merges with
	// and the merged result, each also as a store variable's home copy
	// (six blocks of 4-byte keys at the largest m); the verification
	// gathers every key to rank 0 three times over (apps.bitonicVerify:
	// the gathered bytes, the oracle, the output), three blocks per rank
	// of the world in all.
	mmax := slices.Max(ks)
	d.mf.need = func(int) memNeed {
		return memNeed{perRank: 9 * 4 * float64(mmax), flag: "--keys " + echo(*keys), what: fmt.Sprintf("bitonic's blocks of %d keys", mmax)}
	}
	return runDSMSweep(&d, &sw, stdout, stderr, powerOfTwoRanks, func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		setup := dsmexp.Setup{Strategies: d.list, Store: d.config("tree-4"), Reps: *reps, Warmup: warm, Seed: d.seed}
		return dsmexp.Bitonic(c, setup, ks, func(r dsmexp.Result, hand *dsmexp.Result) error {
			return emit(dsmexp.BitonicRecord(r, c.Size(), meta, hand))
		})
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
	if err := dsmexp.WriteTables(stdout, recs, format == results.FormatMarkdown); err != nil {
		return err
	}
	if sw.plot == "" {
		return nil
	}
	paths, err := dsmexp.WriteFigures(sw.plot, recs)
	for _, p := range paths {
		fmt.Fprintln(stderr, "commcost: wrote", p)
	}
	return err
}
