package permsched

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
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

// CommConfig configures experiment 2. The zero value means the paper's
// setting on the communicator's n ranks.
type CommConfig struct {
	Densities []int    // default DefaultCommDensities(n)
	Sizes     []int    // message sizes in bytes; default PaperCommSizes
	Methods   []string // scheduler names and AlltoallvName; default all five and Alltoallv
	Gen       string   // default GenFig7
	// Matrix, when set, is run instead of generated matrices (a trace): its
	// own sizes if weighted, else every size of Sizes; Densities is ignored.
	Matrix   *Matrix
	Matrices int    // matrices per d; default 1
	Seed     uint64 // matrix k of d uses cellSeed(Seed, n, d, k)
	// Reps times the exchanges; SchedReps the runtime scheduling (zero
	// value: Reps with at most 20 repetitions).
	Reps, SchedReps patterns.Reps
	// Perm1 also times one random permutation per size (Table 1), the
	// tau and phi of experiment 3. Default true unless NoPerm1.
	NoPerm1 bool
	// KeepSamples keeps every repetition's time in the records; by default
	// they carry the summaries alone (a sweep has hundreds of records).
	KeepSamples bool
	Meta        results.Meta
	Progress    io.Writer // progress lines; set it on rank 0 only
}

// DefaultMethods is the method list of experiment 2.
func DefaultMethods() []string { return append(SchedulerNames(), AlltoallvName) }

// RunComm runs experiment 2 on every rank of c; emit receives every record
// on every rank (the caller writes them on rank 0). Collective.
func RunComm(c mpi.Comm, cfg CommConfig, emit func(results.Record) error) error {
	n := c.Size()
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
		cfg.Gen = GenFig7
	}
	if cfg.Matrices <= 0 {
		cfg.Matrices = 1
	}
	if cfg.SchedReps == (patterns.Reps{}) {
		// Scheduling follows the exchanges' settings, capped at 20
		// repetitions: it is one point per (d, scheduler), not a sweep.
		cfg.SchedReps = cfg.Reps
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
		pm, err := Fig7NoSelf(n, 1, cellSeed(cfg.Seed, n, 1, -1))
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
			m, err := TimeExchange(c, x, cfg.Reps)
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
				m, err := Generate(cfg.Gen, n, d, cellSeed(cfg.Seed, n, d, k))
				if err != nil {
					return err
				}
				jobs = append(jobs, job{d, k, m})
			}
		}
	}
	gen := cfg.Gen
	if cfg.Matrix != nil {
		gen = "trace"
	}
	for _, j := range jobs {
		seed := cellSeed(cfg.Seed, n, j.d, j.k)
		me := c.Rank()
		row, sizes := j.m.Row(me), j.m.RowBytes(me)
		schedules := make([]*Schedule, len(scheds))
		schedSec := make([]float64, len(scheds))
		base := results.Params{"d": j.d, "gen": gen, "matrix": j.k}
		for i, s := range scheds {
			m, sc, err := TimeScheduling(c, s, row, sizes, seed, cfg.SchedReps)
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
				m, err := TimeExchange(c, x, cfg.Reps)
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
			}
			if alltoallv {
				x, err := NewAlltoallv(c, j.m, size)
				if err != nil {
					return err
				}
				if err := run(x, 0, 0); err != nil {
					return err
				}
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

// methodList validates a comma list of method names for experiment 2.
func methodList(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if strings.EqualFold(f, AlltoallvName) {
			out = append(out, AlltoallvName)
			continue
		}
		sc, err := ByName(f)
		if err != nil {
			return nil, fmt.Errorf("%v, or %s", err, AlltoallvName)
		}
		out = append(out, sc.Name())
	}
	return out, nil
}

// ParseMethods parses a comma list of scheduler names and Alltoallv.
func ParseMethods(s string) ([]string, error) { return methodList(s) }
