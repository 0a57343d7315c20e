package replay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
)

// sameErr is the difference of relative errors below which two
// predictions count as equally close: half a percentage point, the
// difference of two replays of the same messages priced alike (SimGrid's
// flows and commcost's arithmetic round differently).
const sameErr = 5e-3

// ProgramFigures is one traced program: its measured time in MPI and wall
// time (maxima over ranks, from the trace), each model's predictions of
// both, and SimGrid's predicted wall time (simulated time) with commcost's
// calibration and with SimGrid's defaults (NaN when not run).
type ProgramFigures struct {
	Program                   string
	MeasuredMPI, MeasuredWall float64
	// Models maps a model's name to its predicted [time in MPI, wall time].
	Models                     map[string][2]float64
	SimGridCal, SimGridDefault float64
}

// FiguresOf gathers an outcome's figures for one program.
func FiguresOf(program string, o *Outcome) ProgramFigures {
	f := ProgramFigures{Program: program, Models: map[string][2]float64{}, SimGridCal: math.NaN(), SimGridDefault: math.NaN()}
	f.MeasuredMPI, _ = stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.MPISec })
	f.MeasuredWall, _ = stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.WallSec })
	for _, p := range o.Predictions {
		m, _ := maxMean(p.Result.MPISec)
		w, _ := maxMean(p.Result.WallSec)
		f.Models[p.Model] = [2]float64{m, w}
	}
	return f
}

// best is the model whose time in MPI is closest to the measured one.
func (f ProgramFigures) best() (string, float64, float64) {
	name, em, ew := "", math.Inf(1), math.Inf(1)
	for _, k := range sortedKeys(f.Models) {
		v := f.Models[k]
		if e := math.Abs(rel(v[0], f.MeasuredMPI)); e < math.Abs(em) {
			name, em, ew = k, rel(v[0], f.MeasuredMPI), rel(v[1], f.MeasuredWall)
		}
	}
	return name, em, ew
}

func sortedKeys(m map[string][2]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Assess applies the ground truth's assertions to the programs: the best
// model's predicted time in MPI within tol of the measured, as the median
// over programs of the absolute relative error; and on every program where
// SimGrid ran with commcost's calibration, commcost's best wall-time error
// no larger than SimGrid's (SimGrid's replay reports the simulated wall
// time only). It writes every model's error per program to log and
// returns the failed assertions, empty when all hold.
func Assess(ps []ProgramFigures, tol float64, log io.Writer) []string {
	tw := tabwriter.NewWriter(log, 0, 0, 2, ' ', tabwriter.AlignRight)
	var names []string
	seen := map[string]bool{}
	for _, p := range ps {
		for _, k := range sortedKeys(p.Models) {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	fmt.Fprint(tw, "program\tmeasured MPI s\tmeasured wall s\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s MPI err\t%s wall err\t", n, n)
	}
	fmt.Fprintln(tw, "best\tSimGrid cal wall err\tSimGrid default wall err\t")
	var bestErrs []float64
	var fails []string
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%.6f\t%.6f\t", p.Program, p.MeasuredMPI, p.MeasuredWall)
		for _, n := range names {
			if v, ok := p.Models[n]; ok {
				fmt.Fprintf(tw, "%s\t%s\t", pct(rel(v[0], p.MeasuredMPI)), pct(rel(v[1], p.MeasuredWall)))
			} else {
				fmt.Fprint(tw, "-\t-\t")
			}
		}
		b, em, ew := p.best()
		sc, sd := rel(p.SimGridCal, p.MeasuredWall), rel(p.SimGridDefault, p.MeasuredWall)
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", b, pct(sc), pct(sd))
		if b == "" {
			fails = append(fails, p.Program+": no model predicted it")
			continue
		}
		bestErrs = append(bestErrs, math.Abs(em))
		// commcost's best wall error over its models
		bw := math.Abs(ew)
		for _, v := range p.Models {
			bw = math.Min(bw, math.Abs(rel(v[1], p.MeasuredWall)))
		}
		if !math.IsNaN(sc) && bw > math.Abs(sc)+sameErr {
			fails = append(fails, fmt.Sprintf("%s: commcost's best wall-time error %.1f%% is larger than SimGrid's calibrated %.1f%%", p.Program, 100*bw, 100*math.Abs(sc)))
		}
	}
	tw.Flush()
	if len(bestErrs) > 0 {
		sort.Float64s(bestErrs)
		med := bestErrs[len(bestErrs)/2]
		if len(bestErrs)%2 == 0 {
			med = (bestErrs[len(bestErrs)/2-1] + bestErrs[len(bestErrs)/2]) / 2
		}
		fmt.Fprintf(log, "median over %d programs of the best model's |error| in time in MPI: %.1f%% (bound %.0f%%)\n", len(bestErrs), 100*med, 100*tol)
		if med > tol {
			fails = append(fails, fmt.Sprintf("the best model's time in MPI is %.1f%% off the measured (median over %d programs), more than %.0f%%", 100*med, len(bestErrs), 100*tol))
		}
	}
	return fails
}

// AssessConfig is `commcost replay assess --programs FILE --model ...`:
// replay every listed trace under the models and apply Assess. The file
// has one program per line, tab separated: its name, its trace
// directory, SimGrid's simulated time with commcost's calibration and
// with SimGrid's defaults (seconds, or - when not run); # starts a
// comment.
type AssessConfig struct {
	Config
	Programs string  `flag:"programs" usage:"the file of the programs: name, trace directory, SimGrid calibrated and default simulated seconds, tab separated, one per line" value:"file"`
	Tol      float64 `flag:"tol" default:"0.10" usage:"the bound on the best model's error in time in MPI (median over the programs)"`
}

// Validate checks the models and the bound.
func (c AssessConfig) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Programs == "" {
		return &opts.FieldError{Field: "Programs", Value: "", Reason: "want the file listing the programs"}
	}
	if !(c.Tol > 0) {
		return &opts.FieldError{Field: "Tol", Value: fmt.Sprint(c.Tol), Reason: "want a fraction > 0"}
	}
	return nil
}

// assessProgram is one line of the programs file.
type assessProgram struct {
	line    int
	name    string // as the file has it
	dir     string
	simgrid [2]float64 // calibrated, default; NaN when not run (-)
}

// readPrograms reads and checks the whole programs file before anything
// runs or is printed: 4 tab-separated fields a line; a name given once
// and a trace directory listed once (a repeated program would count twice
// in the median); SimGrid's times finite, within the seconds a record
// holds (results.MinRecordSeconds to MaxRecordSeconds), or -. What is
// refused is named by the file and line, its text escaped.
func readPrograms(path string, data []byte) ([]assessProgram, error) {
	var ps []assessProgram
	names, dirs := map[string]int{}, map[string]int{}
	for n, line := range strings.Split(string(data), "\n") {
		at := fmt.Sprintf("--programs %s:%d", path, n+1)
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, opts.Badf("%s: want 4 tab-separated fields (name, trace directory, SimGrid calibrated s, SimGrid default s), got %d", at, len(f))
		}
		p := assessProgram{line: n + 1, name: f[0], dir: f[1], simgrid: [2]float64{math.NaN(), math.NaN()}}
		if p.name == "" || p.dir == "" {
			return nil, opts.Badf("%s: an empty name or trace directory; want name, trace directory, SimGrid calibrated s, SimGrid default s", at)
		}
		if prev, ok := names[p.name]; ok {
			return nil, opts.Badf("%s: program %q is listed again (first at line %d); list each program once", at, results.Printable(p.name), prev)
		}
		names[p.name] = p.line
		if prev, ok := dirs[filepath.Clean(p.dir)]; ok {
			return nil, opts.Badf("%s: trace directory %q is listed again (first at line %d); list each program once", at, results.Printable(p.dir), prev)
		}
		dirs[filepath.Clean(p.dir)] = p.line
		for i, which := range []string{"calibrated", "default"} {
			if f[2+i] == "-" {
				continue
			}
			v, err := strconv.ParseFloat(f[2+i], 64)
			if err != nil || !(v >= results.MinRecordSeconds && v <= results.MaxRecordSeconds) {
				return nil, opts.Badf("%s: SimGrid %s time %q: want seconds from %g to %g, or -", at, which, results.Printable(f[2+i]), results.MinRecordSeconds, results.MaxRecordSeconds)
			}
			p.simgrid[i] = v
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, opts.Badf("--programs %s lists no program", path)
	}
	return ps, nil
}

// Run replays every program and prints the table; the assertions that
// fail are the error (a runtime failure). The programs file is read and
// checked whole first: a bad line is refused before anything is printed.
func (c AssessConfig) Run(w io.Writer) error {
	// a FIFO named here would block the read; the list is a few lines
	data, err := results.ReadRegularFile(c.Programs, 1<<20)
	if err != nil {
		return opts.Badf("--programs %s: %v", c.Programs, err)
	}
	programs, err := readPrograms(c.Programs, data)
	if err != nil {
		return err
	}
	// a model the replay cannot use is left out with a note, not the end
	// of the assessment
	var usable Files
	for _, m := range c.Models {
		one := c.Config
		one.Models, one.Calibration = Files{m}, ""
		s, _ := ParseScale(c.Scale)
		if _, _, err := one.loadModels(s); err != nil {
			if errors.As(err, new(LocalBackendError)) {
				return err // the wrong file given, not a fit replay cannot use
			}
			fmt.Fprintf(w, "note: left out: %s\n", results.Printable(err.Error()))
			continue
		}
		usable = append(usable, m)
	}
	if len(usable) == 0 && c.Calibration == "" {
		return opts.Badf("no usable model among --model %s", strings.Join(c.Models, ", "))
	}
	c.Models = usable
	var ps []ProgramFigures
	for _, p := range programs {
		cfg := c.Config
		cfg.Dir = p.dir
		o, err := cfg.Run()
		if err != nil {
			return err
		}
		// the name reaches the terminal in the table and the failures
		pf := FiguresOf(results.Printable(p.name), o)
		pf.SimGridCal, pf.SimGridDefault = p.simgrid[0], p.simgrid[1]
		ps = append(ps, pf)
	}
	if fails := Assess(ps, c.Tol, w); len(fails) > 0 {
		return fmt.Errorf("ground truth: %s", strings.Join(fails, "; "))
	}
	return nil
}
