package permsched

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Experiment 1 (paper Section 5, Table 4, Fig. 10): the number of
// permutations and the scheduling time of every scheduler on sampled
// matrices, machine-independent (no MPI).

// Table4 holds the paper's Table 4: the mean number of permutations CGM
// generated, by n and d, over 300 Fig. 7 matrices each.
var Table4 = map[int]map[int]float64{
	32:  {1: 1.0, 2: 3.0, 4: 5.6, 8: 10.2, 16: 18.5, 24: 26.5, 31: 34.2},
	128: {1: 1.0, 2: 3.0, 4: 6.0, 8: 10.7, 16: 19.5, 32: 36.3, 64: 68.8, 96: 100.7, 127: 132.4},
	512: {1: 1.0, 2: 3.0, 4: 6.1, 8: 11.1, 16: 20.0, 32: 37.1, 64: 70.3, 128: 135.4, 256: 263.7, 384: 391.2, 511: 519.0},
}

// PaperDensities returns the paper's d values for n ranks: Table 4's column
// for n = 32, 128 or 512. Table 4 has no other n; for those (the issue's
// n = 1024 among them) it returns the powers of two up to min(256, n-1),
// which covers the d = 64 performance target and the slope fit without the
// minutes that d in the hundreds costs at n = 1024 (pass explicit values
// for more).
func PaperDensities(n int) []int {
	var ds []int
	if src := Table4[n]; src != nil {
		for d := range src {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds
	}
	for d := 1; d <= min(256, n-1); d *= 2 {
		ds = append(ds, d)
	}
	return ds
}

// CountConfig configures experiment 1 ('commcost sched count'); its
// tagged fields are the subcommand's flags. The zero value, after
// opts.FillDefaults, is the paper's setting: n in {32, 128, 512, 1024},
// the paper's d values, 300 Fig. 7 matrices per (n, d), every scheduler
// (RunCount fills what is left empty the same way).
type CountConfig struct {
	Ns        []int     `flag:"n" default:"32,128,512,1024" usage:"ranks: a list of n >= 1 (32,128) or a power-of-two range (32:1K)"`
	Densities Densities `flag:"d" default:"paper" usage:"densities per n; 'paper' (Table 4's d values that fit each n) or a list, 0 <= d <= n-1"`
	Matrices  int       `flag:"matrices" default:"300" usage:"matrices sampled per (n, d), as in the paper"`
	Seed      int64     `flag:"seed" default:"1" usage:"seed of the matrices and schedulers (matrix k of (n, d) uses one derived from it, n, d and k)"`
	Gen       string    `flag:"gen" default:"fig7"` // generator kind (GenKinds)
	// MatrixFile, when set, replaces the generator: every sample schedules
	// this matrix (a trace) with a different scheduler seed; Ns, Densities
	// and Gen are then not used. Validate reads it into Matrix, which a
	// library caller may set instead.
	MatrixFile string    `flag:"matrix" value:"file" usage:"schedule this matrix file (a trace) instead of generated ones"`
	Entries    EntryKind `flag:"entries" default:"bytes" usage:"what --matrix entries are: bytes or count; not given, what the file's header (sched gen's) says, bytes without one"`
	Matrix     *Matrix
	Schedulers SchedulerList `flag:"sched"` // default Schedulers()
	// CellSeconds caps the scheduling time one scheduler may spend on one
	// (n, d) cell: once exceeded (after at least MinMatrices matrices) that
	// scheduler skips the cell's remaining matrices, and its record's N says
	// how many it scheduled. 0 means no cap. It keeps GM, whose iterations
	// cost O(n^2), from dominating a run at n = 1024.
	CellSeconds float64   `flag:"cell-sec" default:"5" usage:"stop sampling a scheduler in one (n, d) cell after this many seconds of its scheduling time (0: never); the record's n says how many it did"`
	MinMatrices int       `flag:"min-matrices" default:"30" usage:"matrices every scheduler schedules in a cell before --cell-sec can stop it"`
	Progress    io.Writer // one line per finished cell; nil for none
	Given       opts.Given
}

// Texts are the default and help of --sched and the help of --gen, from
// the schedulers and the generators, and the old spellings of --matrices
// (--samples, which keeps repetition times everywhere else), of
// --min-matrices and of --format markdown.
func (CountConfig) Texts() Texts {
	return Texts{
		Defaults: map[string]string{"sched": strings.Join(SchedulerNames(), ",")},
		Usage: map[string]string{
			"sched": "schedulers: a comma list of " + strings.Join(SchedulerNames(), ", "),
			"gen":   "matrix generator: " + strings.Join(GenKinds(), ", "),
		},
		Aliases: [][3]string{{"samples", "matrices", ""}, {"min-samples", "min-matrices", ""}, markdownAlias},
	}
}

// Validate checks the configuration and reads the matrix file, so that a
// file that is no matrix is refused with the rest of the bad input.
func (c *CountConfig) Validate() error {
	if c.MatrixFile != "" {
		if err := excludeWithMatrix(c.Given, "Ns", "Densities", "Gen"); err != nil {
			return err
		}
	}
	ns := c.withDefaults().Ns
	for _, n := range ns {
		if n < 1 || n > MaxRanks {
			return opts.Field("Ns", fmt.Sprintf("n = %d", n), "must be an integer from 1 to %d", MaxRanks)
		}
	}
	if err := checkDensities(c.Densities, ns); err != nil {
		return err
	}
	if err := patterns.CheckCount("Matrices", c.Matrices, 1, "matrices per cell"); err != nil {
		return err
	}
	if err := checkGen("Gen", c.Gen, GenKinds()); err != nil {
		return err
	}
	if err := seconds("CellSeconds", c.CellSeconds, 0, "must be a number of seconds >= 0"); err != nil {
		return err
	}
	if err := patterns.CheckCount("MinMatrices", c.MinMatrices, 1, "matrices per cell"); err != nil {
		return err
	}
	if c.Given.Has("MinMatrices") && c.Matrices > 0 && c.MinMatrices > c.Matrices {
		// A floor above the cell's count could never be reached.
		return opts.Conflict("MinMatrices", "Matrices", "{MinMatrices} %d is more than the %d matrices {Matrices} gives each cell: give at most %d", c.MinMatrices, c.Matrices, c.Matrices)
	}
	if c.MatrixFile != "" && c.Matrix == nil {
		var err error
		c.Matrix, err = readMatrixFile(c.MatrixFile, c.Entries, c.Given)
		return err
	}
	return nil
}

// withDefaults fills what is left empty: the tags' defaults where zero
// means nothing else and every scheduler (densities gives the paper's d).
func (c CountConfig) withDefaults() CountConfig {
	var def CountConfig
	opts.FillDefaults(&def)
	if len(c.Ns) == 0 {
		c.Ns = def.Ns
	}
	if c.Matrices <= 0 {
		c.Matrices = def.Matrices
	}
	if c.Gen == "" {
		c.Gen = def.Gen
	}
	if len(c.Schedulers) == 0 {
		c.Schedulers = Schedulers()
	}
	if c.MinMatrices <= 0 {
		c.MinMatrices = def.MinMatrices
	}
	return c
}

// densities are the d values of n ranks: Densities, or PaperDensities.
func (c CountConfig) densities(n int) []int {
	if c.Densities == nil {
		return PaperDensities(n)
	}
	return c.Densities
}

// CountCell is the outcome of one (n, d) cell.
type CountCell struct {
	N, D    int
	Gen     string
	Samples int       // matrices drawn
	MaxDeg  []float64 // D = MaxDegree of each matrix
	Sched   []CountSched
	Seconds float64 // wall time the cell took, generation included
}

// CountSched is one scheduler's results in a cell, one entry per matrix it
// scheduled.
type CountSched struct {
	Name    string
	Async   bool
	Phases  []float64 // schedule length (posting rounds for AC)
	Seconds []float64 // scheduling time
	Optimal int       // matrices where Phases == D
}

// RunCount runs experiment 1, calling emit after every cell. Every schedule
// is checked with Validate (and EXACT's with ValidateOptimal) outside the
// timed region; a failure stops the run with the error.
func RunCount(cfg CountConfig, emit func(CountCell) error) error {
	cfg = cfg.withDefaults()
	type nd struct{ n, d int }
	var cells []nd
	if cfg.Matrix != nil {
		cells = []nd{{cfg.Matrix.N(), cfg.Matrix.MaxOutDegree()}}
	} else {
		for _, n := range cfg.Ns {
			for _, d := range cfg.densities(n) {
				if err := CheckDensity(n, d); err != nil {
					return fmt.Errorf("permsched: experiment 1: %v", err)
				}
				cells = append(cells, nd{n, d})
			}
		}
	}
	for ci, c := range cells {
		start := time.Now()
		cell := CountCell{N: c.n, D: c.d, Gen: cfg.Gen, Samples: cfg.Matrices}
		if cfg.Matrix != nil {
			cell.Gen = GenTrace
		}
		for _, s := range cfg.Schedulers {
			cell.Sched = append(cell.Sched, CountSched{Name: s.Name()})
		}
		spent := make([]float64, len(cfg.Schedulers))
		for k := 0; k < cfg.Matrices; k++ {
			if cfg.CellSeconds > 0 && k >= cfg.MinMatrices && allSpent(spent, cfg.CellSeconds) {
				// Every scheduler has used its time: drawing more
				// matrices would only grow the cell (and take time)
				// for samples nobody schedules.
				cell.Samples = k
				break
			}
			seed := cellSeed(uint64(cfg.Seed), c.n, c.d, k)
			m := cfg.Matrix
			if m == nil {
				var err error
				if m, err = Generate(cfg.Gen, c.n, c.d, seed); err != nil {
					return err
				}
			}
			maxDeg := m.MaxDegree()
			cell.MaxDeg = append(cell.MaxDeg, float64(maxDeg))
			for si, s := range cfg.Schedulers {
				if cfg.CellSeconds > 0 && k >= cfg.MinMatrices && spent[si] > cfg.CellSeconds {
					continue
				}
				t0 := time.Now()
				sc, err := s.Schedule(m, seed)
				dt := time.Since(t0).Seconds()
				if err != nil {
					return fmt.Errorf("permsched: %s on n=%d d=%d sample %d: %v", s.Name(), c.n, c.d, k, err)
				}
				spent[si] += dt
				if err := Validate(sc); err != nil {
					return fmt.Errorf("permsched: n=%d d=%d sample %d (seed %d): %v", c.n, c.d, k, seed, err)
				}
				if _, ok := s.(Exact); ok {
					if err := ValidateOptimal(sc); err != nil {
						return fmt.Errorf("permsched: n=%d d=%d sample %d (seed %d): %v", c.n, c.d, k, seed, err)
					}
				}
				cs := &cell.Sched[si]
				cs.Async = sc.Async
				cs.Phases = append(cs.Phases, float64(sc.Phases()))
				cs.Seconds = append(cs.Seconds, dt)
				if sc.Phases() == maxDeg {
					cs.Optimal++
				}
			}
		}
		cell.Seconds = time.Since(start).Seconds()
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "sched count: [%d/%d] n=%d d=%d: %d matrices in %.1fs\n", ci+1, len(cells), c.n, c.d, cell.Samples, cell.Seconds)
		}
		if err := emit(cell); err != nil {
			return err
		}
	}
	return nil
}

// allSpent reports whether every scheduler has spent more than limit
// seconds.
func allSpent(spent []float64, limit float64) bool {
	for _, s := range spent {
		if s <= limit {
			return false
		}
	}
	return true
}

// cellSeed derives matrix k's seed of cell (n, d) from the run's seed
// (splitmix64 finaliser), so cells are independent and a cell can be rerun
// alone.
func cellSeed(seed uint64, n, d, k int) uint64 {
	z := seed ^ uint64(n)<<40 ^ uint64(d)<<20 ^ uint64(k)
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// DPlusLog2D is the paper's expected CGM permutation count d + log2 d
// (eq. 4), 0 for d = 0.
func DPlusLog2D(d int) float64 {
	if d <= 0 {
		return 0
	}
	return float64(d) + math.Log2(float64(d))
}

// Records turns a cell into records: per scheduler one "sched.perms"
// record (unit count: schedule lengths) and one "sched.time" record
// (unit s: scheduling times), and one "sched.maxdeg" record (D).
func (cell CountCell) Records(meta results.Meta) []results.Record {
	base := func(bench, unit string, samples []float64, extra results.Params) results.Record {
		p := results.Params{"n": cell.N, "d": cell.D, "gen": cell.Gen}
		for k, v := range extra {
			p[k] = v
		}
		return results.Record{
			Schema: results.SchemaVersion, Bench: bench, Params: p, Ranks: cell.N, Unit: unit,
			Summary: results.Summarize(samples), Stop: results.StopFixed,
			Samples: slices.Clone(samples), Meta: meta,
		}
	}
	var out []results.Record
	out = append(out, base("sched.maxdeg", results.UnitCount, cell.MaxDeg, nil))
	for _, s := range cell.Sched {
		if len(s.Phases) == 0 {
			continue
		}
		p := base("sched.perms", results.UnitCount, s.Phases, results.Params{"scheduler": s.Name})
		p.Derived = map[string]float64{"d_plus_log2d": DPlusLog2D(cell.D), "mean_D": mean(cell.MaxDeg)}
		if v, ok := Table4[cell.N][cell.D]; ok && s.Name == "CGM" && cell.Gen == GenFig7 {
			p.Derived["paper_perms"] = v
			p.Derived["rel_diff_paper"] = p.Mean/v - 1
		}
		p.Counters = map[string]float64{"optimal": float64(s.Optimal), "matrices": float64(len(s.Phases))}
		out = append(out, p)
		out = append(out, base("sched.time", "s", s.Seconds, results.Params{"scheduler": s.Name}))
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// WriteCountTables prints Table 4's layout, one table per n: d, d + log2 d,
// the mean D, then per scheduler the mean number of permutations (CGM with
// min-max, the paper's value and the difference) and the median scheduling
// time in ms (the median: single schedules of microseconds are exposed to
// GC pauses and preemption, and the records keep every sample). AC's count is its posting rounds, marked "-" as in the
// paper's Table 2 since AC has no permutations.
func WriteCountTables(w io.Writer, cells []CountCell, markdown bool) error {
	byN := map[int][]CountCell{}
	var ns []int
	for _, c := range cells {
		if _, ok := byN[c.N]; !ok {
			ns = append(ns, c.N)
		}
		byN[c.N] = append(byN[c.N], c)
	}
	for _, n := range ns {
		group := byN[n]
		names := schedNames(group)
		header := []string{"d", "d+log2 d", "D"}
		for _, name := range names {
			if name == "CGM" {
				header = append(header, "CGM perm [min-max]", "paper", "diff")
			} else if name != "AC" {
				header = append(header, name+" perm")
			}
		}
		for _, name := range names {
			header = append(header, name+" ms")
		}
		var rows [][]string
		for _, c := range group {
			row := []string{fmt.Sprint(c.D), fmt.Sprintf("%.1f", DPlusLog2D(c.D)), fmt.Sprintf("%.1f", mean(c.MaxDeg))}
			for _, name := range names {
				s := c.sched(name)
				switch {
				case name == "AC":
					continue
				case s == nil || len(s.Phases) == 0:
					row = append(row, "-")
					if name == "CGM" {
						row = append(row, "-", "-")
					}
				case name == "CGM":
					row = append(row, fmt.Sprintf("%.1f [%g-%g]", mean(s.Phases), slices.Min(s.Phases), slices.Max(s.Phases)))
					if v, ok := Table4[c.N][c.D]; ok && c.Gen == GenFig7 {
						row = append(row, fmt.Sprintf("%.1f", v), fmt.Sprintf("%+.1f%%", 100*(mean(s.Phases)/v-1)))
					} else {
						row = append(row, "-", "-")
					}
				default:
					cell := fmt.Sprintf("%.1f", mean(s.Phases))
					if name == "EXACT" && s.Optimal != len(s.Phases) {
						cell += fmt.Sprintf(" (%d/%d = D)", s.Optimal, len(s.Phases))
					}
					row = append(row, cell)
				}
			}
			for _, name := range names {
				s := c.sched(name)
				if s == nil || len(s.Seconds) == 0 {
					row = append(row, "-")
					continue
				}
				cell := fmtMs(results.Median(s.Seconds))
				if len(s.Seconds) < c.Samples {
					cell += fmt.Sprintf(" (%d)", len(s.Seconds))
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		gen := group[0].Gen
		fmt.Fprintf(w, "n = %d (%s, %d matrices per d; perm = mean number of permutations, ms = median scheduling time)\n", n, gen, group[0].Samples)
		if err := writeTable(w, header, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

func fmtMs(sec float64) string {
	ms := sec * 1e3
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f", ms)
	}
	return fmt.Sprintf("%.3f", ms)
}

func schedNames(cells []CountCell) []string {
	var names []string
	for _, c := range cells {
		for _, s := range c.Sched {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func (c *CountCell) sched(name string) *CountSched {
	for i := range c.Sched {
		if c.Sched[i].Name == name {
			return &c.Sched[i]
		}
	}
	return nil
}

// TimeSlope is the fit of a scheduler's median scheduling time against
// x = d n ln d over the cells with d >= 2 (paper Section 4: O(d n ln d);
// Fig. 10 plots time/n against d ln d): time = Intercept + Slope * x.
type TimeSlope struct {
	Scheduler string
	Fit       *Fit
	Cells     int
}

// FitTimeSlopes fits TimeSlope for every scheduler present in cells (only
// schedulers with at least three usable cells).
func FitTimeSlopes(cells []CountCell) []TimeSlope {
	var out []TimeSlope
	for _, name := range schedNames(cells) {
		var rows [][]float64
		var y []float64
		for _, c := range cells {
			s := c.sched(name)
			if c.D < 2 || s == nil || len(s.Seconds) == 0 {
				continue
			}
			x := float64(c.D) * float64(c.N) * math.Log(float64(c.D))
			rows = append(rows, []float64{1, x})
			y = append(y, results.Median(s.Seconds))
		}
		if len(rows) < 3 {
			continue
		}
		f, err := fitRelative([]string{"intercept_s", "slope_s"}, rows, y)
		if err != nil {
			continue
		}
		out = append(out, TimeSlope{Scheduler: name, Fit: f, Cells: len(rows)})
	}
	return out
}

// WriteTimeSlopes prints the fits of FitTimeSlopes, one line each.
func WriteTimeSlopes(w io.Writer, slopes []TimeSlope) {
	if len(slopes) == 0 {
		return
	}
	fmt.Fprintln(w, "Scheduling time against d n ln d (paper eq. 1 and Fig. 10), time = a + c * d n ln d, fitted on cell medians with d >= 2 (relative least squares):")
	for _, s := range slopes {
		f := s.Fit
		fmt.Fprintf(w, "  %-6s c = %.3g ns (± %.2g) per unit of d n ln d, a = %s ms, R^2 = %.3f, rel. RSE %.0f%%, %d cells\n",
			s.Scheduler, f.Coef[1]*1e9, f.SE[1]*1e9, fmtMs(f.Coef[0]), f.R2, 100*f.RSE, s.Cells)
	}
}

// SlopeRecords turns the slope fits into records ("sched.slope", unit
// UnitSlope) so a report can be rebuilt from the JSONL alone.
func SlopeRecords(slopes []TimeSlope, meta results.Meta) []results.Record {
	var out []results.Record
	for _, s := range slopes {
		f := s.Fit
		out = append(out, results.Record{
			Schema: results.SchemaVersion, Bench: "sched.slope",
			Params: results.Params{"scheduler": s.Scheduler, "x": SlopeRegressor},
			Unit:   UnitSlope, Summary: results.Summary{N: 1, Min: f.Coef[1], Median: f.Coef[1], Mean: f.Coef[1], Max: f.Coef[1], P90: f.Coef[1], P99: f.Coef[1], CI95: [2]float64{f.Coef[1] - 1.96*f.SE[1], f.Coef[1] + 1.96*f.SE[1]}},
			Derived:  map[string]float64{"slope_s": f.Coef[1], "slope_se_s": f.SE[1], "intercept_s": f.Coef[0], "r2": f.R2, "rel_rse": f.RSE},
			Counters: map[string]float64{"cells": float64(s.Cells)},
			Stop:     results.StopFixed, Meta: meta,
		})
	}
	return out
}

// writeTable prints a header and rows as an aligned text table or a
// markdown table.
func writeTable(w io.Writer, header []string, rows [][]string, markdown bool) error {
	width := make([]int, len(header))
	for j, h := range header {
		width[j] = len(h)
	}
	for _, r := range rows {
		for j, c := range r {
			if j < len(width) {
				width[j] = max(width[j], len(c))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		if markdown {
			b.WriteString("|")
		}
		for j, c := range cells {
			if markdown {
				fmt.Fprintf(&b, " %-*s |", width[j], c)
			} else {
				if j > 0 {
					b.WriteString("  ")
				}
				fmt.Fprintf(&b, "%*s", width[j], c)
			}
		}
		b.WriteString("\n")
	}
	line(header)
	sep := make([]string, len(header))
	for j := range sep {
		if markdown {
			sep[j] = strings.Repeat("-", width[j])
		} else {
			sep[j] = strings.Repeat("-", width[j])
		}
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CountEntryBytes is what experiment 1 holds per message of a matrix: the
// entry and the schedulers' working copies of it (a generous estimate, for
// refusing a run the machine cannot hold before it starts).
const CountEntryBytes = 256

// LargestCell returns the densest cell experiment 1 schedules for n ranks
// under c (its Densities, or PaperDensities; n-1 when neither gives any)
// and the bytes its matrix and the schedulers' copies need: n max(d, 1)
// CountEntryBytes.
func (c CountConfig) LargestCell(n int) (d int, bytes float64) {
	c = c.withDefaults()
	d = n - 1
	if ds := c.densities(n); len(ds) > 0 {
		d = slices.Max(ds)
	}
	return d, float64(n) * float64(max(d, 1)) * CountEntryBytes
}

// Report runs experiment 1 (RunCountRecords) in this process, handing
// every record to emit (nil: none), with its progress lines on stderr
// unless out says quiet, and prints on stdout, in out's format, the tables
// and the time slopes of the cells done, after a failure too.
func (c CountConfig) Report(out Tables, stdout, stderr io.Writer, emit func(results.Record) error) error {
	meta := results.NewMeta("none") // sequential scheduling in this process: no MPI backend
	meta.Seed = int64(c.Seed)
	if !out.Quiet {
		c.Progress = stderr
	}
	cells, slopes, err := RunCountRecords(c, meta, emit)
	if len(cells) > 0 {
		if werr := WriteCountTables(stdout, cells, out.Markdown()); err == nil {
			err = werr
		}
		WriteTimeSlopes(stdout, slopes)
	}
	return err
}

// RunCountRecords runs experiment 1 (RunCount) and turns it into records:
// each cell's (CountCell.Records) handed to emit as the cell finishes, then,
// once every cell is done, the fitted slopes of scheduling time over
// d + log2 d (SlopeRecords). emit may be nil (tables only). It returns the
// cells done and their slopes also after a failure, so that a caller can
// print what was measured.
func RunCountRecords(cfg CountConfig, meta results.Meta, emit func(results.Record) error) ([]CountCell, []TimeSlope, error) {
	var cells []CountCell
	err := RunCount(cfg, func(cell CountCell) error {
		cells = append(cells, cell)
		if emit == nil {
			return nil
		}
		for _, r := range cell.Records(meta) {
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
	slopes := FitTimeSlopes(cells)
	if err == nil && emit != nil {
		for _, r := range SlopeRecords(slopes, meta) {
			if err = emit(r); err != nil {
				break
			}
		}
	}
	return cells, slopes, err
}
