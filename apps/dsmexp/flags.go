package dsmexp

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The flags the dsm experiments share, as embeddable configurations
// (package opts: each tagged field is a flag). Every experiment embeds
// job.Launch and StoreFlags; the applications and the matrix square add
// SweepFlags, the applications WarmupFlag.

// StoreFlags are the strategies an experiment runs over and the store
// every one of them runs on.
type StoreFlags struct {
	// Strategies are strategy names (divalib.ParseStrategy), and Hand
	// where the experiment has a hand-optimised version; each
	// experiment's default is its Def's.
	Strategies StrategyNames `flag:"strategies" value:"list" usage:"comma list of strategies"`
	// Mesh is the virtual mesh RxC ("": the most nearly square shape).
	Mesh    string              `flag:"mesh" value:"RxC" usage:"virtual mesh RxC (default: the most nearly square shape of the rank count)"`
	Memory  opts.Bytes          `flag:"memory" default:"0" value:"bytes" usage:"bound on the copy bytes one rank holds (K, M, G = 2^10, 2^20, 2^30; 0 = unbounded)"`
	Barrier divalib.BarrierKind `flag:"barrier" default:"tree" value:"algorithm" usage:"barrier algorithm: tree (access tree), central (flat), dissemination (log2 P rounds of one message) or mpi (MPI_Ibarrier, if the binding has it)"`
	Seed    int64               `flag:"seed" default:"1" usage:"seed of the random embeddings, homes and workloads"`
}

// asked is the mesh of Mesh (0x0 when not given); check has refused a
// malformed one.
func (s StoreFlags) asked() divalib.Mesh {
	r, c, _ := divalib.ParseMesh(s.Mesh)
	return divalib.Mesh{Rows: r, Cols: c}
}

// store is the store configuration on mesh m (0x0: the most nearly square
// shape); the strategy is set per name.
func (s StoreFlags) store(m divalib.Mesh) divalib.Config {
	return divalib.Config{Rows: m.Rows, Cols: m.Cols, Seed: s.Seed, MemoryBytes: int(s.Memory), Barrier: s.Barrier}
}

// check validates the flags against the launch l; hand says whether the
// experiment has a hand-optimised version.
func (s StoreFlags) check(l job.Launch, hand bool) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if _, _, err := divalib.ParseMesh(s.Mesh); err != nil {
		return opts.Field("Mesh", "", "%v", err)
	}
	if len(s.Strategies) == 0 {
		return opts.Field("Strategies", "", "no strategy given; accepted: %s", divalib.StrategyForms())
	}
	for _, name := range s.Strategies {
		if name == Hand && hand {
			continue
		}
		if _, _, err := divalib.ParseStrategy(name); err != nil {
			if hand {
				return opts.Field("Strategies", "", "%v or %s", err, Hand)
			}
			return opts.Field("Strategies", "", "%v", err)
		}
	}
	return nil
}

// localBarriers are the barriers of a binding without MPI_Ibarrier.
var localBarriers = divalib.BarrierTree.String() + ", " + divalib.BarrierCentral.String() + " or " + divalib.BarrierDissemination.String()

// checkNP refuses a mesh the local backend's one world of np ranks does
// not fill.
func (s StoreFlags) checkNP(l job.Launch) error {
	m := s.asked()
	if l.Backend == job.Local && m.Rows > 0 && m.Size() != l.NP {
		return opts.Badf("{Mesh} %s has %d processors but {NP} is %d: the mesh must hold exactly one rank per processor", s.Mesh, m.Size(), l.NP)
	}
	return nil
}

// checkWorld refuses a world the mesh does not fit, and the MPI barrier
// where the binding has no MPI_Ibarrier (under mpirun the rank count is
// only known inside the world).
func (s StoreFlags) checkWorld(c mpi.Comm) error {
	if m := s.asked(); m.Rows > 0 && m.Size() != c.Size() {
		return opts.Badf("{Mesh} %s has %d processors but there are %d ranks: the mesh must hold exactly one rank per processor", s.Mesh, m.Size(), c.Size())
	}
	if _, ok := c.(divalib.Ibarrierer); s.Barrier == divalib.BarrierMPI && !ok {
		return opts.Badf("{Barrier} mpi needs MPI_Ibarrier, which the %s backend's binding does not offer; accepted here: %s", c.Backend(), localBarriers)
	}
	return nil
}

// minMemory refuses a copy bound smaller than the experiment's largest
// variable of bytes ("one block variable (16384 bytes for 4096 ints)").
func (s StoreFlags) minMemory(bytes int, format string, args ...any) error {
	if s.Memory > 0 && int(s.Memory) < bytes {
		return opts.Field("Memory", "", "smaller than "+format, args...)
	}
	return nil
}

// SweepFlags are the mesh sweep of an experiment over worlds (paper 004's
// figures over the mesh need one world per mesh size) and the figures
// drawn from its records.
type SweepFlags struct {
	Meshes MeshList `flag:"meshes" value:"list" usage:"local backend: run one world per mesh in this comma list (e.g. 4x4,8x8,16x16,32x32), in place of --np and --mesh (a --np some mesh does not hold is refused)"`
	Plot   string   `flag:"plot" value:"DIR" usage:"draw the paper's figures from this run's records as PNG files into DIR (created if missing)"`
	// Set holds the flags given on the command line (filled by
	// opts.Binding.Finish): a --np beside --meshes is refused, not ignored.
	Set opts.Given
}

// check validates the sweep against the launch and the store flags.
func (w SweepFlags) check(l job.Launch, s StoreFlags) error {
	if len(w.Meshes) > 0 {
		if l.Backend != job.Local {
			return opts.Field("Meshes", "", "a sweep over meshes needs {Backend} local (under mpirun the world has one size: give {Mesh} or nothing)")
		}
		if s.Mesh != "" {
			return opts.Conflict("Meshes", "Mesh", "give either {Meshes} or {Mesh}, not both")
		}
		for _, m := range w.Meshes {
			if m.Size() > job.MaxLocalRanks {
				return opts.Field("Meshes", "", "%s has %d processors; the local backend takes 1 to %d ranks", m, m.Size(), job.MaxLocalRanks)
			}
		}
		// Each world's rank count is its mesh's: a --np that some mesh
		// does not hold would be silently ignored.
		for _, m := range w.Meshes {
			if w.Set.Has("NP") && m.Size() != l.NP {
				return opts.Conflict("Meshes", "NP", "the local backend runs each world of {Meshes} on its mesh's ranks (%s has %d, not %d): leave out {NP}", m, m.Size(), l.NP)
			}
		}
	} else if err := s.checkNP(l); err != nil {
		return err
	}
	return checkPlotDir("Plot", w.Plot)
}

// worlds are the worlds of the sweep: under mpirun the launcher's one,
// on the local backend one per mesh of Meshes or the one of NP ranks.
func (w SweepFlags) worlds(l job.Launch, s StoreFlags) []World {
	if l.Backend == job.Native {
		return []World{{Mesh: s.asked()}}
	}
	return Worlds(w.Meshes, l.NP, s.asked())
}

// checkPlotDir refuses a figures' directory that cannot be made: an
// existing file, or a missing parent.
func checkPlotDir(field, dir string) error {
	if dir == "" {
		return nil
	}
	if what := opts.NotDir(dir); what != "" {
		return opts.Field(field, "", "%s is %s; {%s} names a directory (new or existing) for the figures", opts.Echo(dir), what, field)
	}
	if _, err := os.Stat(dir); err != nil {
		if st, err := os.Stat(filepath.Dir(filepath.Clean(dir))); err != nil || !st.IsDir() {
			return opts.Field(field, "", "the parent directory must exist (the figures' directory itself is created)")
		}
		return nil
	}
	if err := CheckFigureFiles(dir); err != nil {
		return opts.Field(field, "", "%v", err)
	}
	return nil
}

// checkFigurePoints refuses --plot when the run cannot give any figure
// two points: one value of the swept parameter (field, n values) on one
// mesh.
func (w SweepFlags) checkFigurePoints(field string, n int) error {
	if w.Plot == "" || n >= 2 || len(w.Meshes) >= 2 {
		return nil
	}
	return opts.Conflict("Plot", field, "no figure has two points in a run of one {%s} value on one mesh: give {%s} two or more values (or, on the local backend, {Meshes} two or more meshes)", field, field)
}

// MaxTimeFlag bounds the time of each strategy's repetitions at each
// point, as --max-time does a pattern's.
type MaxTimeFlag struct {
	MaxTime float64 `flag:"max-time" default:"10" usage:"seconds of repetitions per strategy and point: once 3 (or --reps, if fewer) are done, no more start after this, and warm-up runs stop after it too"`
}

func (m MaxTimeFlag) check() error { return opts.CheckSeconds("MaxTime", m.MaxTime) }

// WarmupFlag is the untimed runs of an application before its measured
// ones (the matrix square has none).
type WarmupFlag struct {
	Warmup opts.OptInt `flag:"warmup" usage:"untimed runs before the measured ones (default: 1 under mpirun, 0 on the local backend, whose times are not network measurements)"`
}

func (w WarmupFlag) check() error {
	if w.Warmup.Given {
		return patterns.CheckCount("Warmup", w.Warmup.V, 0, "untimed runs")
	}
	return nil
}

// runs is the number of untimed runs on backend (WarmupRuns).
func (w WarmupFlag) runs(backend string) int {
	return WarmupRuns(w.Warmup.Or(-1), backend == job.Native)
}

// CheckOutput is job.Output without Samples: the coherence suite's
// records keep no repetitions (its tags are job.Output's, a test holds
// them equal).
type CheckOutput struct {
	Format results.Format `flag:"format" value:"format" usage:"output format on stdout: table|jsonl|csv|gobench|markdown"`
	Out    string         `flag:"out" value:"file" usage:"append records to this JSON Lines file, flushed one record at a time"`
	Quiet  bool           `flag:"quiet" usage:"no progress line on stderr (shown only when stderr is a terminal and the sweep takes more than a few seconds)"`
}

// StrategyNames is a list of strategy names under the list rule (each
// once; which names an experiment takes is its Validate's).
// *StrategyNames is a flag.Value.
type StrategyNames []string

func (n *StrategyNames) Set(s string) error {
	v, err := opts.ParseList(s, "a comma list of strategies: "+divalib.StrategyForms(), func(s string) (string, error) { return s, nil })
	*n = v
	return err
}

func (n *StrategyNames) String() string {
	if n == nil {
		return ""
	}
	return strings.Join(*n, ",")
}

// IsString makes the list read as a string in usage texts.
func (*StrategyNames) IsString() bool { return true }

// MeshList is a list of meshes RxC under the list rule (each once).
// *MeshList is a flag.Value.
type MeshList []divalib.Mesh

// meshesForm is the accepted form of a MeshList.
const meshesForm = "a comma list of ROWSxCOLS, e.g. 4x4,8x8,16x16"

func (l *MeshList) Set(s string) error {
	items, err := opts.Items(s, meshesForm)
	if err != nil {
		return err
	}
	var out MeshList
	for _, f := range items {
		r, c, err := divalib.ParseMesh(f)
		if err != nil || r == 0 {
			return fmt.Errorf("%s: accepted form is %s", opts.Echo(f), meshesForm)
		}
		out = append(out, divalib.Mesh{Rows: r, Cols: c})
	}
	if err := opts.Distinct(out, divalib.Mesh.String); err != nil {
		return err
	}
	*l = out
	return nil
}

func (l *MeshList) String() string {
	if l == nil {
		return ""
	}
	s := ""
	for i, m := range *l {
		if i > 0 {
			s += ","
		}
		s += m.String()
	}
	return s
}

// IsString makes the list read as a string in usage texts.
func (*MeshList) IsString() bool { return true }

// ReadSizes are the sizes of remote reads: a list of sizes
// (opts.ParseSizes), or "" for none. *ReadSizes is a flag.Value.
type ReadSizes []int

func (r *ReadSizes) Set(s string) error {
	if s == "" {
		*r = nil
		return nil
	}
	v, err := opts.ParseSizes(s)
	*r = v
	return err
}

func (r *ReadSizes) String() string {
	if r == nil {
		return ""
	}
	return (*opts.Sizes)(r).String()
}

// IsString makes the list read as a string in usage texts.
func (*ReadSizes) IsString() bool { return true }

// IO is what a run writes to and how it names its configuration's fields
// to whoever configured it.
type IO struct {
	Stdout, Stderr io.Writer
	// Tell tells an error in the caller's terms (the command line's
	// binding: fields as flags); nil keeps the field names.
	Tell func(error) error
	// FlagText names a field with its value as given ("--keys 4096");
	// nil names the field.
	FlagText func(field string) string
}

// withDefaults fills what the caller left unset.
func (o IO) withDefaults() IO {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Tell == nil {
		o.Tell = func(err error) error { return err }
	}
	if o.FlagText == nil {
		o.FlagText = func(field string) string { return field }
	}
	return o
}

// positive refuses a value below 1 of list field.
func positive(field string, vals []int) error {
	for _, v := range vals {
		if v < 1 {
			return opts.Field(field, "", "%d is not positive; the value must be positive (an integer >= 1)", v)
		}
	}
	return nil
}

// atLeastOne refuses a count below 1.
func atLeastOne(field string, v int) error {
	if v < 1 {
		return opts.Field(field, v, "must be positive (an integer >= 1)")
	}
	return nil
}
