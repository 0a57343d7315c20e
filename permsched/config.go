package permsched

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// The experiments' configurations (CountConfig, CommConfig, Breakeven,
// GenConfig) are structs whose tagged fields are the flags of their
// subcommands (package opts). This file holds what they share: the value
// types of their list flags, their common checks, and the texts that
// permsched's lists own (Texts).

// Texts are the defaults and help of the flags whose text permsched's
// lists own (the schedulers, the methods, the generators, the paper's
// sizes) and the shared flags an experiment sets apart: struct tags cannot
// hold them, so the command line sets them after binding.
type Texts struct {
	Defaults map[string]string // flag name -> default, as it would be typed
	Usage    map[string]string // flag name -> help
	// Aliases are the spellings of the flags before commcost had one flag
	// vocabulary, kept one release: old name, flag, and the value a
	// boolean old name sets ("" when it passes its own argument).
	Aliases [][3]string
}

// The old spellings of the output flags: --markdown for --format
// markdown, and of experiment 2's --samples.
var (
	markdownAlias    = [3]string{"markdown", "format", "markdown"}
	keepSamplesAlias = [3]string{"keep-samples", "samples", "true"}
)

// The help of the output flags of the experiments, which print tables
// (Tables' and, for the job runtime's flags, Texts'); the backquotes name
// the value, as the tag value:"format" does.
const (
	formatUsage = "output `format` on stdout: table or markdown tables (the records go to --out as JSON Lines)"
	quietUsage  = "no progress lines on stderr"
)

// Tables is where an experiment that runs in this process writes: its
// tables on stdout, its records in a file (experiment 1; the measuring
// experiments use the job runtime's output flags, the same but --samples).
type Tables struct {
	Format results.Format `flag:"format" value:"format" usage:"output format on stdout: table or markdown tables (the records go to --out as JSON Lines)"`
	Out    string         `flag:"out" value:"file" usage:"append records to this JSON Lines file, flushed one record at a time"`
	Quiet  bool           `flag:"quiet" usage:"no progress lines on stderr"`
}

// Validate refuses a format other than the tables'.
func (t Tables) Validate() error { return CheckFormat(t.Format) }

// Markdown reports whether the tables are markdown.
func (t Tables) Markdown() bool { return t.Format == results.FormatMarkdown }

// CheckFormat refuses a format other than the tables' (table or
// markdown), as the field Format.
func CheckFormat(f results.Format) error {
	if f == results.FormatTable || f == results.FormatMarkdown {
		return nil
	}
	return opts.Field("Format", f, "accepted: table or markdown (the experiments print tables; their records go to {Out} as JSON Lines)")
}

// Densities are the d values of an experiment: a list, or nil for the
// paper's (each experiment's own for the n of the run). *Densities is a
// flag.Value: "paper", or a list of integers (opts.ParseInts).
type Densities []int

// Set parses "paper" or a list.
func (d *Densities) Set(s string) error {
	if s == "paper" {
		*d = nil
		return nil
	}
	v, err := opts.ParseInts(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

func (d *Densities) String() string {
	if d == nil || len(*d) == 0 {
		return "paper"
	}
	s := make([]string, len(*d))
	for i, v := range *d {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// IsString makes the usage text show the value as typed.
func (*Densities) IsString() bool { return true }

// checkDensities refuses a d that no generator can build for one of ns
// (every rank sends to d distinct ranks: 0 <= d <= n-1), as the field
// Densities.
func checkDensities(ds []int, ns []int) error {
	for _, d := range ds {
		if d < 0 {
			return &opts.FieldError{Field: "Densities", Reason: fmt.Sprintf("d = %d is negative; every rank sends d >= 0 messages", d)}
		}
		for _, n := range ns {
			if d > n-1 {
				return &opts.FieldError{Field: "Densities", Reason: fmt.Sprintf("d = %d exceeds n-1 = %d for n = %d; every rank sends to d distinct ranks, so 0 <= d <= n-1", d, n-1, n)}
			}
		}
	}
	return nil
}

// SchedulerList is a list of schedulers. *SchedulerList is a flag.Value:
// a comma list of names as ByName accepts them, each once.
type SchedulerList []Scheduler

// Set parses a comma list of scheduler names.
func (l *SchedulerList) Set(s string) error {
	names, err := opts.ParseList(s, "a comma list of schedulers", func(f string) (string, error) {
		sc, err := ByName(f)
		if err != nil {
			return "", err
		}
		return sc.Name(), nil
	})
	if err != nil {
		return err
	}
	out := make(SchedulerList, len(names))
	for i, n := range names {
		out[i], _ = ByName(n)
	}
	*l = out
	return nil
}

func (l *SchedulerList) String() string {
	if l == nil {
		return ""
	}
	names := make([]string, len(*l))
	for i, s := range *l {
		names[i] = s.Name()
	}
	return strings.Join(names, ",")
}

// IsString makes the usage text show the value as typed.
func (*SchedulerList) IsString() bool { return true }

// MethodList is experiment 2's list of methods: scheduler names and
// AlltoallvName. *MethodList is a flag.Value: a comma list, each once,
// names in any case.
type MethodList []string

// Set parses a comma list of methods.
func (l *MethodList) Set(s string) error {
	v, err := opts.ParseList(s, "a comma list of schedulers and Alltoallv", parseMethod)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

func (l *MethodList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// IsString makes the usage text show the value as typed.
func (*MethodList) IsString() bool { return true }

// parseMethod returns the canonical name of one method.
func parseMethod(name string) (string, error) {
	if strings.EqualFold(name, AlltoallvName) {
		return AlltoallvName, nil
	}
	sc, err := ByName(name)
	if err != nil {
		return "", fmt.Errorf("%v, or %s", err, AlltoallvName)
	}
	return sc.Name(), nil
}

// UnmarshalText accepts bytes or count, so that an EntryKind is a flag.
func (k *EntryKind) UnmarshalText(b []byte) error {
	v, err := ParseEntryKind(string(b))
	if err != nil {
		return errors.New("accepted values are bytes (entries are message sizes, one message per non-zero entry) and count (entries are message counts)")
	}
	*k = v
	return nil
}

// checkGen refuses a generator outside kinds, as field.
func checkGen(field, gen string, kinds []string) error {
	if slices.Contains(kinds, gen) {
		return nil
	}
	return opts.Field(field, gen, "accepted generators are %s", strings.Join(kinds, ", "))
}

// readMatrixFile reads a matrix file (ReadMatrix) for the field
// MatrixFile, its entries of kind when the field Entries is given (or
// set to count by a caller), else as the file's header says
// (EntryHeader: a file sched gen wrote needs no --entries); a file that
// cannot be opened or is no matrix is bad input, and so is an Entries the
// header contradicts, naming both.
func readMatrixFile(path string, kind EntryKind, given opts.Given) (*Matrix, error) {
	if kind == EntryBytes && !given.Has("Entries") {
		kind = EntryHeader
	}
	m, err := ReadMatrixFile(path, kind)
	var he *HeaderKindError
	if errors.As(err, &he) {
		return nil, opts.Badf("{Entries} %s and {MatrixFile} %s disagree: the file's header (line %d) says entries = %s; leave {Entries} out to read the file as its header says", kind, path, he.Line, he.Header)
	}
	if err != nil {
		return nil, opts.Field("MatrixFile", path, "%v", err)
	}
	return m, nil
}

// excludeWithMatrix refuses the fields of given that a matrix file fixes.
func excludeWithMatrix(given opts.Given, fields ...string) error {
	for _, f := range fields {
		if given.Has(f) {
			return opts.Badf("{MatrixFile} and {%s} exclude each other: a matrix file fixes the ranks, densities and sizes", f)
		}
	}
	return nil
}

// positive refuses v < 1 as field.
func positive(field string, v int) error {
	if v < 1 {
		return opts.Field(field, v, "must be positive (an integer >= 1)")
	}
	return nil
}

// seconds refuses a number of seconds below min (or not finite) as field.
func seconds(field string, v, min float64, why string) error {
	if !(v >= min) || math.IsInf(v, 0) {
		return opts.Field(field, v, "%s", why)
	}
	return nil
}

// sizeList writes sizes as the flags take them (1024 as 1K).
func sizeList(sizes []int) string {
	s := make([]string, len(sizes))
	for i, b := range sizes {
		s[i] = strconv.Itoa(b)
		if b >= 1024 && b%1024 == 0 {
			s[i] = strconv.Itoa(b/1024) + "K"
		}
	}
	return strings.Join(s, ",")
}

// GenSampleSort is what 'sched gen' writes besides the generators: the
// trace of one sample sort exchange (SampleSortTrace).
const GenSampleSort = "samplesort"

// MatrixKinds lists what GenConfig builds: the generators, then the
// sample sort trace.
func MatrixKinds() []string { return append(GenKinds(), GenSampleSort) }

// GenConfig is one matrix to write for --matrix ('commcost sched gen'):
// a generator's (Generate) or a sample sort trace's (SampleSortTrace).
type GenConfig struct {
	Gen  string `flag:"gen" default:"fig7"`
	N    int    `flag:"n" default:"16" usage:"ranks"`
	D    int    `flag:"d" default:"4" usage:"messages per rank, 0 <= d <= n-1 (not for samplesort)"`
	Keys int    `flag:"keys" default:"1000" usage:"keys per rank (samplesort)"`
	Seed int64  `flag:"seed" default:"1" usage:"seed"`
	Set  opts.Given
}

// Texts is the help of --gen, from MatrixKinds.
func (GenConfig) Texts() Texts {
	return Texts{Usage: map[string]string{"gen": "generator: " + strings.Join(MatrixKinds(), ", ")}}
}

// Validate checks n, the kind, and d or the keys.
func (g *GenConfig) Validate() error {
	if g.N < 1 || g.N > MaxRanks {
		return opts.Field("N", g.N, "must be an integer in 1..%d", MaxRanks)
	}
	if g.Gen == GenSampleSort {
		if g.Set.Has("D") {
			return opts.Badf("{D} with {Gen} %s: the sample sort's messages follow from its keys ({Keys}), not from d", GenSampleSort)
		}
		return positive("Keys", g.Keys)
	}
	if err := checkGen("Gen", g.Gen, MatrixKinds()); err != nil {
		return err
	}
	if g.Set.Has("Keys") {
		return opts.Badf("{Keys} with {Gen} %s: only the %s generator reads it", g.Gen, GenSampleSort)
	}
	if g.D < 0 || g.D > g.N-1 {
		return opts.Field("D", g.D, "every rank sends to d distinct ranks, so 0 <= d <= n-1 = %d", g.N-1)
	}
	return nil
}

// Matrix builds the matrix.
func (g *GenConfig) Matrix() (*Matrix, error) {
	if g.Gen == GenSampleSort {
		return SampleSortTrace(g.N, g.Keys, uint64(g.Seed))
	}
	return Generate(g.Gen, g.N, g.D, uint64(g.Seed))
}

// Write builds the matrix and writes it to w (WriteMatrix).
func (g *GenConfig) Write(w io.Writer) error {
	m, err := g.Matrix()
	if err != nil {
		return err
	}
	return WriteMatrix(w, m)
}
