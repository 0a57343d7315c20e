package permsched

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Experiment 2 (paper Section 5, Tables 1-3, Figs. 8 and 9): the
// communication time of every schedule, and of MPI_Alltoallv, by message
// size and density, with the runtime scheduling cost and the ratio of
// scheduling to communication. It runs on every rank of a communicator.

// Bench names of the records experiments 2 and 3 write and read.
const (
	BenchComm     = "sched.comm"     // one exchange: schedule (or Alltoallv) x d x bytes
	BenchSchedule = "sched.schedule" // runtime scheduling (ScheduleParallel)
	BenchPerm1    = "sched.perm1"    // one random permutation (Table 1)
	BenchCostFit  = "sched.costfit"  // experiment 3: fitted constants
	BenchBreak    = "sched.breakeven"
)

// UnitSlope is the unit of a fitted scheduling cost per unit of d n ln d
// (the sched.slope records and the C2 of sched.costfit): seconds per unit,
// a fitted coefficient that noise can make negative, so not a time in
// seconds (results.UnitSeconds, which must be positive).
const UnitSlope = "s/(d*n*ln(d))"

// PaperCommDensities are the d values of the paper's Tables 2 and 3.
var PaperCommDensities = []int{4, 8, 16, 24}

// PaperCommSizes are the message sizes of Tables 2 and 3, in bytes.
var PaperCommSizes = []int{16, 32, 128, 256, 1024, 2048, 8192, 16384, 32768, 65536}

// DefaultCommDensities returns the paper's d values that fit n ranks
// (d <= n-1); when none fits (n <= 4), n/2 and n-1.
func DefaultCommDensities(n int) []int {
	var out []int
	for _, d := range PaperCommDensities {
		if d <= n-1 {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		for _, d := range []int{n / 2, n - 1} {
			if d >= 1 && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// CommConfig configures experiment 2 ('commcost sched comm'); its tagged
// fields are the subcommand's flags. The zero value, after
// opts.FillDefaults, is the paper's setting on the communicator's n ranks
// (RunComm fills what is left empty the same way).
type CommConfig struct {
	Densities Densities  `flag:"d" default:"paper" usage:"densities: 'paper' (4, 8, 16, 24 where d <= n-1) or a list, 0 <= d <= n-1"`
	Sizes     opts.Sizes `flag:"sizes" usage:"message sizes (Tables 2-3): a list (16,1K,64K) or LO:HI, LO doubled up to HI, HI included (16:64K); K = 1024"` // default PaperCommSizes
	Methods   MethodList `flag:"methods"`                                                                                                                    // scheduler names and AlltoallvName; default DefaultMethods()
	Gen       string     `flag:"gen" default:"fig7"`
	// MatrixFile, when set, is run instead of generated matrices (a
	// trace): its own sizes if weighted, else every size of Sizes;
	// Densities, Gen and Matrices are then not used. Validate reads it
	// into Matrix, which a library caller may set instead.
	MatrixFile string    `flag:"matrix" value:"file" usage:"run this matrix file (a trace; n must equal the number of ranks) instead of generated ones"`
	Entries    EntryKind `flag:"entries" default:"bytes" usage:"what --matrix entries are: bytes (sizes; --sizes is then ignored) or count; not given, what the file's header (sched gen's) says, bytes without one"`
	Matrix     *Matrix
	Matrices   int   `flag:"matrices" default:"1" usage:"matrices per d"`
	Seed       int64 `flag:"seed" default:"1" usage:"seed of the matrices and schedulers"` // matrix k of d uses cellSeed(Seed, n, d, k)
	// The exchanges' repetitions (patterns.Reps); SchedReps times the
	// runtime scheduling (zero value: the exchanges' with at most 20
	// repetitions).
	patterns.RepWarmup
	MinReps   int     `flag:"min-reps" default:"10" usage:"minimum timed repetitions per point"`
	MaxReps   int     `flag:"max-reps" default:"200" usage:"maximum timed repetitions per point"`
	RelCI     float64 `flag:"rel-ci" default:"0.03" usage:"repeat until the 95% CI of the median is within this fraction of the median"`
	MaxTime   float64 `flag:"max-time" default:"1" usage:"seconds of timed repetitions per point before stopping"`
	SchedReps patterns.Reps
	// NoPerm1 skips timing one random permutation per size (Table 1), the
	// tau and phi of experiment 3.
	NoPerm1 bool `flag:"no-perm1" usage:"skip the single-permutation times (Table 1; breakeven needs them)"`
	// KeepSamples keeps every repetition's time in the records; by default
	// they carry the summaries alone (a sweep has hundreds of records).
	KeepSamples bool
	Meta        results.Meta
	Progress    io.Writer // progress lines; set it on rank 0 only
	Given       opts.Given
}

// Texts are the defaults of --sizes and --methods, from the paper's sizes
// and the methods, the help of --gen, from the generators, this
// experiment's defaults and help of the launch and output flags (8 local
// ranks, tables on stdout, progress lines) and the old spellings of
// --format markdown and --samples.
func (CommConfig) Texts() Texts {
	return Texts{
		Defaults: map[string]string{"sizes": sizeList(PaperCommSizes), "methods": strings.Join(DefaultMethods(), ","), "np": "8"},
		Usage: map[string]string{
			"methods": "methods: a comma list of " + strings.Join(DefaultMethods(), ", "),
			"gen":     "matrix generator: " + strings.Join(GenKinds(), ", "),
			"format":  formatUsage,
			"quiet":   quietUsage,
		},
		Aliases: [][3]string{markdownAlias, keepSamplesAlias},
	}
}

// Validate checks what needs no world (CheckRanks checks the rest) and
// reads the matrix file, so that a file that is no matrix is refused with
// the rest of the bad input.
func (c *CommConfig) Validate() error {
	if c.MatrixFile != "" {
		if err := excludeWithMatrix(c.Given, "Densities", "Gen", "Matrices"); err != nil {
			return err
		}
	}
	err := patterns.Checks(
		func() error { return checkDensities(c.Densities, nil) },
		func() error { return checkGen("Gen", c.Gen, GenKinds()) },
		func() error { return patterns.CheckCount("Matrices", c.Matrices, 1, "matrices per d") },
		c.RepWarmup.Check,
		patterns.RepLimits{RelCI: c.RelCI, MinReps: c.MinReps, MaxReps: c.MaxReps, MaxTime: c.MaxTime}.Check)
	if err == nil && c.MatrixFile != "" && c.Matrix == nil {
		c.Matrix, err = readMatrixFile(c.MatrixFile, c.Entries, c.Given)
	}
	return err
}

// CheckRanks refuses a world of n ranks the configuration does not fit: a
// matrix of another size, a density above n-1, or, for generated
// matrices, fewer than 2 ranks.
func (c CommConfig) CheckRanks(n int) error {
	switch {
	case c.Matrix != nil && c.Matrix.N() != n:
		se := &SizeError{Matrix: c.Matrix.N(), Comm: n}
		if c.MatrixFile == "" {
			return opts.Badf("%v", se)
		}
		return opts.Field("MatrixFile", c.MatrixFile, "%v", se)
	case c.Matrix != nil:
		return nil
	case len(c.Densities) > 0:
		return checkDensities(c.Densities, []int{n})
	case n < 2:
		return opts.Badf("sched comm needs at least 2 ranks, got %d", n)
	}
	return nil
}

// reps are the exchanges' repetitions.
func (c CommConfig) reps() patterns.Reps {
	return c.RepWarmup.Reps(patterns.Reps{MinReps: c.MinReps, MaxReps: c.MaxReps, MaxTime: c.MaxTime, RelCI: c.RelCI})
}

// DefaultMethods is the method list of experiment 2.
func DefaultMethods() []string { return append(SchedulerNames(), AlltoallvName) }

// Run runs experiment 2 (RunComm) on every rank of c with meta, its seed
// set, hands rank 0's records to emit and prints their tables there on w
// (WriteCommTables). Collective.
func (cfg *CommConfig) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, w io.Writer, markdown bool) error {
	recs, err := cfg.run(c, meta, emit)
	if err != nil || c.Rank() != 0 {
		return err
	}
	return WriteCommTables(w, recs, markdown)
}

// run is RunComm with meta (its seed set) and the progress lines on rank 0
// only; it returns rank 0's records, which it hands to emit (nil: none)
// there.
func (cfg CommConfig) run(c mpi.Comm, meta results.Meta, emit func(results.Record) error) ([]results.Record, error) {
	cfg.Meta = meta
	cfg.Meta.Seed = int64(cfg.Seed)
	if c.Rank() != 0 {
		cfg.Progress = nil
	}
	var recs []results.Record
	err := RunComm(c, cfg, func(r results.Record) error {
		if c.Rank() != 0 {
			return nil
		}
		recs = append(recs, r)
		if emit == nil {
			return nil
		}
		return emit(r)
	})
	return recs, err
}

// RunComm runs experiment 2 on every rank of c; emit receives every record
// on every rank (the caller writes them on rank 0). Collective.
func RunComm(c mpi.Comm, cfg CommConfig, emit func(results.Record) error) error {
	n := c.Size()
	if cfg.Progress != nil && len(cfg.Densities) == 0 && cfg.Matrix == nil {
		fmt.Fprintf(cfg.Progress, "sched comm: %d ranks, d = %v\n", n, DefaultCommDensities(n))
	}
	var def CommConfig
	opts.FillDefaults(&def)
	if len(cfg.Densities) == 0 {
		cfg.Densities = DefaultCommDensities(n)
	}
	if len(cfg.Sizes) == 0 {
		cfg.Sizes = PaperCommSizes
	}
	if len(cfg.Methods) == 0 {
		cfg.Methods = DefaultMethods()
	}
	if cfg.Gen == "" {
		cfg.Gen = def.Gen
	}
	if cfg.Matrices <= 0 {
		cfg.Matrices = def.Matrices
	}
	// Zero repetition settings mean nothing but the default.
	if cfg.MinReps <= 0 {
		cfg.MinReps = def.MinReps
	}
	if cfg.MaxReps <= 0 {
		cfg.MaxReps = def.MaxReps
	}
	if cfg.RelCI <= 0 {
		cfg.RelCI = def.RelCI
	}
	if cfg.MaxTime <= 0 {
		cfg.MaxTime = def.MaxTime
	}
	reps := cfg.reps()
	if cfg.SchedReps == (patterns.Reps{}) {
		// Scheduling follows the exchanges' settings, capped at 20
		// repetitions: it is one point per (d, scheduler), not a sweep.
		cfg.SchedReps = reps
		if cfg.SchedReps.MaxReps == 0 || cfg.SchedReps.MaxReps > 20 {
			cfg.SchedReps.MaxReps = 20
		}
		cfg.SchedReps.MinReps = min(cfg.SchedReps.MinReps, cfg.SchedReps.MaxReps)
	}
	var scheds []Scheduler
	alltoallv := false
	for _, name := range cfg.Methods {
		if name == AlltoallvName {
			alltoallv = true
			continue
		}
		s, err := ByName(name)
		if err != nil {
			return err
		}
		scheds = append(scheds, s)
	}
	if cfg.Matrix != nil && cfg.Matrix.N() != n {
		return &SizeError{Matrix: cfg.Matrix.N(), Comm: n}
	}
	progress := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "sched comm: "+format+"\n", a...)
		}
	}
	record := func(bench string, p results.Params, m patterns.Measurement) results.Record {
		r := m.Record(bench, p, n, cfg.Meta)
		if !cfg.KeepSamples {
			r.Samples = nil
		}
		return r
	}
	if !cfg.NoPerm1 && n > 1 {
		// Table 1: one random permutation without fixed points.
		pm, err := Fig7NoSelf(n, 1, cellSeed(uint64(cfg.Seed), n, 1, -1))
		if err != nil {
			return err
		}
		sc, err := Exact{}.Schedule(pm, 0)
		if err != nil {
			return err
		}
		for _, size := range cfg.Sizes {
			x, err := NewExchange(c, sc, size)
			if err != nil {
				return err
			}
			m, err := TimeExchange(c, x, reps)
			if err != nil {
				return err
			}
			if err := emit(record(BenchPerm1, results.Params{"bytes": size}, m)); err != nil {
				return err
			}
		}
		progress("one permutation: %d sizes done", len(cfg.Sizes))
	}
	type job struct {
		d, k int
		m    *Matrix
	}
	var jobs []job
	if cfg.Matrix != nil {
		jobs = []job{{cfg.Matrix.MaxDegree(), 0, cfg.Matrix}}
	} else {
		for _, d := range cfg.Densities {
			if err := CheckDensity(n, d); err != nil {
				return err
			}
			for k := 0; k < cfg.Matrices; k++ {
				m, err := Generate(cfg.Gen, n, d, cellSeed(uint64(cfg.Seed), n, d, k))
				if err != nil {
					return err
				}
				jobs = append(jobs, job{d, k, m})
			}
		}
	}
	gen := cfg.Gen
	if cfg.Matrix != nil {
		gen = GenTrace
	}
	for _, j := range jobs {
		seed := cellSeed(uint64(cfg.Seed), n, j.d, j.k)
		me := c.Rank()
		row, sizes := j.m.Row(me), j.m.RowBytes(me)
		schedules := make([]*Schedule, len(scheds))
		schedSec := make([]float64, len(scheds))
		base := results.Params{"d": j.d, "gen": gen, "matrix": j.k}
		for i, s := range scheds {
			// A watched step of its own: scheduling a large world takes
			// long, and a stall names it rather than what came before.
			end := patterns.Installed().Begin(fmt.Sprintf("scheduling with %s for d = %d on %d ranks (a longer --timeout, fewer ranks or another scheduler if it is only slow)", s.Name(), j.d, n), 0)
			m, sc, err := TimeScheduling(c, s, row, sizes, seed, cfg.SchedReps)
			end()
			if err != nil {
				return err
			}
			schedules[i], schedSec[i] = sc, m.Summary.Median
			r := record(BenchSchedule, withParams(base, "scheduler", s.Name()), m)
			r.Counters = map[string]float64{"phases": float64(sc.Phases()), "D": float64(j.m.MaxDegree()), "messages": float64(j.m.Len())}
			if err := emit(r); err != nil {
				return err
			}
		}
		sizesToRun := cfg.Sizes
		if j.m.Weighted() {
			sizesToRun = []int{0}
		}
		for _, size := range sizesToRun {
			p := withParams(base, "bytes", size)
			if j.m.Weighted() {
				p = withParams(base, "bytes", int(j.m.TotalBytes(0)/int64(max(1, j.m.Len()))))
				p["weighted"] = true
			}
			run := func(x *Exchange, phases int, sched float64) error {
				m, err := TimeExchange(c, x, reps)
				if err != nil {
					return fmt.Errorf("d=%d bytes=%d: %w", j.d, size, err)
				}
				r := record(BenchComm, withParams(p, "scheduler", x.Name()), m)
				r.Counters = map[string]float64{"phases": float64(phases), "D": float64(j.m.MaxDegree()), "messages": float64(j.m.Len()), "total_bytes": float64(j.m.TotalBytes(size))}
				if sched > 0 {
					r.Derived = map[string]float64{"sched_s": sched, "sched_over_comm": sched / m.Summary.Median}
				}
				return emit(r)
			}
			for i, sc := range schedules {
				x, err := NewExchange(c, sc, size)
				if err != nil {
					return err
				}
				if err := run(x, sc.Phases(), schedSec[i]); err != nil {
					return err
				}
				x.release()
			}
			if alltoallv {
				x, err := NewAlltoallv(c, j.m, size)
				if err != nil {
					return err
				}
				if err := run(x, 0, 0); err != nil {
					return err
				}
				x.release()
			}
		}
		progress("d=%d matrix %d: %d sizes x %d methods done", j.d, j.k, len(sizesToRun), len(cfg.Methods))
	}
	return nil
}

func withParams(p results.Params, k string, v any) results.Params {
	out := make(results.Params, len(p)+1)
	for a, b := range p {
		out[a] = b
	}
	out[k] = v
	return out
}

// paramInt reads an integer parameter of a record (written as int, read
// back from JSON as int or float64).
func paramInt(r results.Record, k string) (int, bool) {
	switch v := r.Params[k].(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		if v == math.Trunc(v) {
			return int(v), true
		}
	}
	return 0, false
}

func paramString(r results.Record, k string) string {
	s, _ := r.Params[k].(string)
	return s
}

// WriteCommTables prints the layout of the paper's Tables 2 and 3 from
// experiment 2's records: per d, one row per message size with the median
// communication time (ms) of every method, then the runtime scheduling
// cost ("comp", ms) and the schedule length ("perm"); then Fig. 9's ratio
// scheduling cost / communication cost; and Table 1's single-permutation
// times when present. Times of several matrices per d are averaged.
func WriteCommTables(w io.Writer, recs []results.Record, markdown bool) error {
	type key struct {
		d, bytes int
		method   string
	}
	comm := map[key][]float64{}
	ratio := map[key][]float64{}
	sched := map[key][]float64{}
	phases := map[key][]float64{}
	var ds, sizes []int
	var methods []string
	var perm1 [][2]float64
	ranks := 0
	for _, r := range recs {
		d, _ := paramInt(r, "d")
		b, _ := paramInt(r, "bytes")
		name := paramString(r, "scheduler")
		switch r.Bench {
		case BenchComm:
			ranks = r.Ranks
			k := key{d, b, name}
			comm[k] = append(comm[k], r.Median)
			if v, ok := r.Derived["sched_over_comm"]; ok {
				ratio[k] = append(ratio[k], v)
			}
			if !slices.Contains(ds, d) {
				ds = append(ds, d)
			}
			if !slices.Contains(sizes, b) {
				sizes = append(sizes, b)
			}
			if !slices.Contains(methods, name) {
				methods = append(methods, name)
			}
		case BenchSchedule:
			k := key{d, 0, name}
			sched[k] = append(sched[k], r.Median)
			phases[k] = append(phases[k], r.Counters["phases"])
		case BenchPerm1:
			perm1 = append(perm1, [2]float64{float64(b), r.Median})
		}
	}
	slices.Sort(ds)
	slices.Sort(sizes)
	if len(perm1) > 0 {
		fmt.Fprintf(w, "One random permutation (paper Table 1), %d ranks: median time\n", ranks)
		var rows [][]string
		for _, p := range perm1 {
			rows = append(rows, []string{results.FormatBytes(p[0]), fmtMs(p[1]) + " ms"})
		}
		if err := writeTable(w, []string{"bytes", "time"}, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, d := range ds {
		fmt.Fprintf(w, "d = %d, %d ranks (paper Tables 2 and 3): communication time in ms (median); comp = runtime scheduling in ms; perm = phases\n", d, ranks)
		header := append([]string{"bytes"}, methods...)
		var rows [][]string
		for _, b := range sizes {
			row := []string{results.FormatBytes(float64(b))}
			for _, m := range methods {
				row = append(row, cellMs(comm[key{d, b, m}]))
			}
			rows = append(rows, row)
		}
		comp, perm := []string{"comp"}, []string{"perm"}
		for _, m := range methods {
			if m == AlltoallvName {
				comp, perm = append(comp, "-"), append(perm, "-")
				continue
			}
			comp = append(comp, cellMs(sched[key{d, 0, m}]))
			if m == "AC" {
				perm = append(perm, "-")
			} else {
				perm = append(perm, cellNum(phases[key{d, 0, m}]))
			}
		}
		rows = append(rows, comp, perm)
		if err := writeTable(w, header, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	// Fig. 9: scheduling cost / communication cost.
	var rmethods []string
	for _, m := range methods {
		if m != AlltoallvName && m != "AC" {
			rmethods = append(rmethods, m)
		}
	}
	if len(rmethods) > 0 && len(ratio) > 0 {
		fmt.Fprintln(w, "Scheduling cost / communication cost (paper Fig. 9), schedule used once")
		header := []string{"d", "bytes"}
		header = append(header, rmethods...)
		var rows [][]string
		for _, d := range ds {
			for _, b := range sizes {
				row := []string{fmt.Sprint(d), results.FormatBytes(float64(b))}
				for _, m := range rmethods {
					v := ratio[key{d, b, m}]
					if len(v) == 0 {
						row = append(row, "-")
					} else {
						row = append(row, fmt.Sprintf("%.3g", mean(v)))
					}
				}
				rows = append(rows, row)
			}
		}
		if err := writeTable(w, header, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

func cellMs(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmtMs(mean(v))
}

func cellNum(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	m := mean(v)
	if m == math.Trunc(m) {
		return fmt.Sprint(int(m))
	}
	return fmt.Sprintf("%.2f", m)
}

// ParseMethods parses a comma list of scheduler names and Alltoallv
// (MethodList).
func ParseMethods(s string) ([]string, error) {
	var l MethodList
	err := l.Set(s)
	return l, err
}
