package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/commcost/commcost/results"
)

// Model is a fitted (or derived) cost model.
type Model interface {
	// Kind is the model's name as used by Fit and the CLI, e.g. "hockney".
	Kind() string
	// Params lists the model's parameters in a stable order.
	Params() []Param
	// Quality describes the fit; derived models return the quality of the
	// fit they were derived from.
	Quality() Quality
	// Patterns lists the pattern (record bench) names Predict accepts.
	Patterns() []string
	// Predict returns the model's value for one pattern instance, in the
	// unit of that pattern's records (seconds for every pattern except
	// "bandwidth", which is bytes per second). A pattern the model does not
	// describe gives an error wrapping ErrUnsupportedPattern.
	Predict(in Instance) (float64, error)
}

// Param is one named model parameter with its uncertainty. SE is zero and
// CI95 equals [Value, Value] when the parameter is not estimated with an
// uncertainty (e.g. a configured constant); Fixed says so.
type Param struct {
	Name  string     `json:"name"`
	Unit  string     `json:"unit"`
	Value float64    `json:"value"`
	SE    float64    `json:"se"`
	CI95  [2]float64 `json:"ci95"`
	Fixed bool       `json:"fixed,omitempty"`
}

// Quality is the fit quality of a model (MEASURE.md "Fitting").
type Quality struct {
	// N is the number of fitted points (per-point medians) after trimming,
	// DoF the residual degrees of freedom.
	N   int `json:"n"`
	DoF int `json:"dof"`
	// Trimmed counts the one-sided outliers dropped before the final fit;
	// TrimmedPoints names them.
	Trimmed       int      `json:"trimmed"`
	TrimmedPoints []string `json:"trimmed_points,omitempty"`
	// RSE is the residual standard error of the weighted fit. With the
	// default relative weighting it is a relative error (0.01 = 1%).
	RSE     float64 `json:"rse"`
	RSEUnit string  `json:"rse_unit"`
	AdjR2   float64 `json:"adj_r2"`
	// Cond is the 2-norm condition number of the weighted design with unit
	// column norms (Jacobian at the solution for nonlinear fits). Scaling
	// the columns first makes it independent of the units of the
	// predictors, so it measures collinearity, not the size of l in bytes.
	Cond      float64 `json:"cond"`
	Weighting string  `json:"weighting"`
	// Notes are warnings returned next to the result (e.g. a parameter
	// shadowed by another, a limit that has not converged).
	Notes []string `json:"notes,omitempty"`
}

// Instance is one pattern instance: the pattern's bench name, its
// parameters (the keys its records carry) and the number of ranks.
type Instance struct {
	Pattern string         `json:"pattern"`
	Params  results.Params `json:"params"`
	Ranks   int            `json:"ranks,omitempty"`
}

// InstanceOf returns the pattern instance a record measured.
func InstanceOf(r results.Record) Instance {
	return Instance{Pattern: r.Bench, Params: r.Params, Ranks: r.Ranks}
}

// Num returns the numeric parameter key of the instance.
func (in Instance) Num(key string) (float64, error) {
	return numParam(in.Params, key, in.Pattern)
}

// Str returns the string parameter key of the instance ("" if absent).
func (in Instance) Str(key string) string {
	s, _ := in.Params[key].(string)
	return s
}

// Errors callers may test with errors.Is.
var (
	ErrNoRecords          = errors.New("no records")
	ErrUnsupportedPattern = errors.New("pattern not described by this model")
	ErrIllConditioned     = errors.New("design is rank-deficient or ill-conditioned")
	ErrBadRecord          = errors.New("bad record")
)

// MaxCondition is the largest condition number of the (column-scaled,
// weighted) design that a fit accepts; MEASURE.md: refuse ill-conditioned
// designs rather than print meaningless coefficients.
const MaxCondition = 1e10

// Weighting selects the least-squares row weights.
type Weighting int

const (
	// WeightRelative weights row i by 1/y_i, i.e. minimises relative error
	// (the default: times span orders of magnitude).
	WeightRelative Weighting = iota
	// WeightNone minimises absolute error.
	WeightNone
	// WeightCI weights row i by 1/sigma_i with sigma_i = (CI95 width)/(2*1.96),
	// the standard error implied by the record's confidence interval of the
	// median. Falls back to WeightRelative (with a note) when any record lacks
	// a usable interval.
	WeightCI
)

func (w Weighting) String() string {
	switch w {
	case WeightRelative:
		return "relative"
	case WeightNone:
		return "none"
	case WeightCI:
		return "ci"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// ParseWeighting parses "relative", "none" or "ci".
func ParseWeighting(s string) (Weighting, error) {
	switch s {
	case "relative", "":
		return WeightRelative, nil
	case "none":
		return WeightNone, nil
	case "ci":
		return WeightCI, nil
	}
	return 0, fmt.Errorf("weighting %q: want relative, none or ci", s)
}

// Options configures a fit. The zero value means the documented defaults.
type Options struct {
	Weighting Weighting
	// TrimSigma is the one-sided outlier threshold in robust standard
	// deviations (1.4826 * MAD of the weighted residuals): points whose
	// residual lies more than TrimSigma above the fit are dropped and
	// counted. Zero means 5; negative disables trimming.
	TrimSigma float64
	// MaxTrimFraction caps the share of points trimming may drop.
	// Zero means 0.1.
	MaxTrimFraction float64
	// MinBytes and MaxBytes restrict message-size models to sizes in
	// [MinBytes, MaxBytes]; zero means no bound. (A shaped link's slope is
	// best fitted over large messages only: small ones ride the token
	// bucket; docs/findings/model-truth.md.)
	MinBytes, MaxBytes float64
	// Op selects the k-k-access operation ("read" or "write"); empty means
	// the only operation present in the records.
	Op string
	// Impl selects the aggregate-operation implementation ("mpi",
	// "textbook", "mesh1d" or "mesh2d"); empty means the only one present
	// in the records.
	Impl string
	// Network selects k-k-access records of one emulated service network
	// (param "network", e.g. "BF(2)"); empty means the only network present,
	// where direct MPI records count as network "". Mixing networks in one
	// trilinear fit would average different machines.
	Network string
	// MaxSegments bounds the segmentation of piecewise Hockney and of
	// trilinear-piecewise; zero means 4.
	MaxSegments int
	// MinSegmentPoints is the fewest sizes a segment may hold (message
	// sizes for piecewise Hockney, packet sizes l for trilinear-piecewise);
	// zero or less than 3 means 3 (two coefficients in the size plus one
	// degree of freedom).
	MinSegmentPoints int
	// PacketBytes is the LogP packet size w (a message of s bytes is
	// ceil(s/w) LogP messages); zero means the smallest PRTT size, at
	// least 1.
	PacketBytes float64
}

func (o Options) trimSigma() float64 {
	switch {
	case o.TrimSigma == 0:
		return 5
	case o.TrimSigma < 0:
		return math.Inf(1)
	}
	return o.TrimSigma
}

func (o Options) maxTrimFraction() float64 {
	if o.MaxTrimFraction == 0 {
		return 0.1
	}
	return o.MaxTrimFraction
}

// SizeRange describes the size window of MinBytes and MaxBytes for
// messages, a zero bound being none: "at least 1G bytes", "at most 64K
// bytes", "within [64K, 1M] bytes", "any".
func (o Options) SizeRange() string {
	switch {
	case o.MinBytes > 0 && o.MaxBytes > 0:
		return fmt.Sprintf("within [%s, %s] bytes", results.FormatBytes(o.MinBytes), results.FormatBytes(o.MaxBytes))
	case o.MinBytes > 0:
		return fmt.Sprintf("at least %s bytes", results.FormatBytes(o.MinBytes))
	case o.MaxBytes > 0:
		return fmt.Sprintf("at most %s bytes", results.FormatBytes(o.MaxBytes))
	}
	return "of any size"
}

// inRange reports whether a size lies within [MinBytes, MaxBytes] (no
// upper bound when MaxBytes is 0).
func (o Options) inRange(b float64) bool {
	return b >= o.MinBytes && (o.MaxBytes <= 0 || b <= o.MaxBytes)
}

func (o Options) maxSegments() int {
	if o.MaxSegments <= 0 {
		return 4
	}
	return o.MaxSegments
}

func (o Options) minSegmentPoints() int {
	return max(3, o.MinSegmentPoints)
}

// Fitter fits one kind of model from records.
type Fitter func(recs []results.Record, opt Options) (Model, error)

// Option names a group of Options fields, so that a kind declares which
// of them its fitter reads and a caller can refuse the others instead of
// ignoring them silently.
type Option string

// The Options groups.
const (
	OptWeighting   Option = "weighting"    // Weighting
	OptTrim        Option = "trim"         // TrimSigma, MaxTrimFraction
	OptSizeRange   Option = "size-range"   // MinBytes, MaxBytes (what Kind.Size measures)
	OptOp          Option = "op"           // Op
	OptNetwork     Option = "network"      // Network
	OptImpl        Option = "impl"         // Impl
	OptSegments    Option = "segments"     // MaxSegments, MinSegmentPoints
	OptPacketBytes Option = "packet-bytes" // PacketBytes
)

// set lists the option groups opt gives a non-zero value (Weighting's zero
// value is the default, relative, so only another weighting counts).
func (o Options) set() []Option {
	var out []Option
	add := func(on bool, g Option) {
		if on {
			out = append(out, g)
		}
	}
	add(o.Weighting != WeightRelative, OptWeighting)
	add(o.TrimSigma != 0 || o.MaxTrimFraction != 0, OptTrim)
	add(o.MinBytes != 0 || o.MaxBytes != 0, OptSizeRange)
	add(o.Op != "", OptOp)
	add(o.Network != "", OptNetwork)
	add(o.Impl != "", OptImpl)
	add(o.MaxSegments != 0 || o.MinSegmentPoints != 0, OptSegments)
	add(o.PacketBytes != 0, OptPacketBytes)
	return out
}

// Kind describes one model kind. Each model's own file registers its kinds
// from init with Register, as database/sql drivers and image formats
// register themselves, and everything that lists or dispatches on kinds
// reads the registry: Kinds, Fit, CrossValidate, Unmarshal, the CLI's usage
// lines and README's model table (generated by cmd/commcost's README test).
type Kind struct {
	// Name is what Model.Kind returns and the CLI accepts, e.g. "hockney".
	Name string
	// Summary is one line for usage texts and README: the model's form
	// and its source.
	Summary string
	// Benches are the record benches the fitter reads; cross-validation
	// holds out points of these.
	Benches []string
	// Options are the option groups the fitter reads. Fit refuses
	// options outside them, so a flag is never silently ignored.
	Options []Option
	// Fit fits the kind to records. Nil for a kind that is only derived
	// from another fit (decoded by Unmarshal, never fitted).
	Fit Fitter
	// New returns an empty model of the kind for Unmarshal to decode into.
	New func() Model
	// Check verifies, after decoding, what Predict relies on beyond
	// finite numbers (which Unmarshal checks for every kind); nil if
	// nothing more.
	Check func(Model) error
	// Size is the size of a record that Options.MinBytes and MaxBytes
	// restrict, so cross-validation holds out only points the fit may
	// use; ok is false when the record has none. Nil means the record's
	// parameter "bytes".
	Size func(r results.Record) (size float64, ok bool)
	// ProgramOptions, when set, makes the kind one a message-passing
	// program's calibration is fitted to (ProgramKinds), with these
	// options; nil leaves it out (it reads patterns no program names).
	ProgramOptions *Options
}

// ProgramKinds lists the kinds fitted to a program's calibration
// (ProgramOptions set), sorted by name: the models the message-passing
// programs are ranked on.
func ProgramKinds() []string {
	var out []string
	for _, k := range Registered() {
		if k.ProgramOptions != nil {
			out = append(out, k.Name)
		}
	}
	return out
}

// Reads reports whether the kind's fitter reads the option group.
func (k Kind) Reads(o Option) bool {
	for _, x := range k.Options {
		if x == o {
			return true
		}
	}
	return false
}

// size is k.Size with the default applied.
func (k Kind) size(r results.Record) (float64, bool) {
	if k.Size != nil {
		return k.Size(r)
	}
	b, err := numParam(r.Params, "bytes", r.Bench)
	return b, err == nil
}

var registry = map[string]Kind{}

// Register makes a model kind known. It is meant to be called from the
// init function of the model's file, and panics (programmer misuse) when
// the name is empty or taken, New is missing, or a fittable kind names no
// benches.
func Register(k Kind) {
	switch {
	case k.Name == "":
		panic("model: Register with an empty name")
	case k.New == nil:
		panic("model: Register " + k.Name + " without New")
	case k.Fit != nil && len(k.Benches) == 0:
		panic("model: Register " + k.Name + " without the benches it is fitted from")
	}
	if _, dup := registry[k.Name]; dup {
		panic("model: kind registered twice: " + k.Name)
	}
	registry[k.Name] = k
}

// Lookup returns the registered kind called name.
func Lookup(name string) (Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// Registered lists the kinds Fit accepts (those with a fitter), sorted by
// name.
func Registered() []Kind {
	var out []Kind
	for _, k := range All() {
		if k.Fit != nil {
			out = append(out, k)
		}
	}
	return out
}

// All lists every registered kind, derived ones (no fitter) included,
// sorted by name: the kinds Unmarshal decodes.
func All() []Kind {
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Kinds lists the names of the kinds Fit accepts, sorted.
func Kinds() []string {
	ks := Registered()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return names
}

// KindsReading lists the fittable kinds whose fitter reads the option
// group, sorted.
func KindsReading(o Option) []string {
	var out []string
	for _, k := range Registered() {
		if k.Reads(o) {
			out = append(out, k.Name)
		}
	}
	return out
}

// ErrOption is returned by Fit for an option the kind does not read.
var ErrOption = errors.New("option not read by this model")

// Fit fits the model of the given kind to recs. An option group set in opt
// that the kind does not read is an error wrapping ErrOption, because
// ignoring it would report a fit the caller did not ask for.
func Fit(kind string, recs []results.Record, opt Options) (Model, error) {
	k, ok := registry[kind]
	if !ok || k.Fit == nil {
		return nil, fmt.Errorf("unknown model %q (want one of %s)", kind, strings.Join(Kinds(), ", "))
	}
	for _, o := range opt.set() {
		if !k.Reads(o) {
			return nil, fmt.Errorf("%w: %s does not read option %s (models that do: %s)",
				ErrOption, kind, o, strings.Join(KindsReading(o), ", "))
		}
	}
	m, err := k.Fit(recs, opt)
	if err != nil {
		return nil, err
	}
	// A fit whose parameters overflowed predicts nothing; every output
	// (the table, JSON, a report) refuses it alike.
	for _, p := range m.Params() {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return nil, fmt.Errorf("%w: %s fit: parameter %s is %v (the medians are beyond what the fit can represent)", ErrBadRecord, kind, p.Name, p.Value)
		}
	}
	return m, nil
}

func unsupported(kind, pattern string, patterns []string) error {
	return fmt.Errorf("%w: %s predicts %s, not %q", ErrUnsupportedPattern, kind, strings.Join(patterns, ", "), pattern)
}

// PredictSum predicts a communication expressed as a sum of pattern
// instances (docs/ARCHITECTURE.md, contract 4: applications describe their
// communication this way, so every model can predict every application).
// The first instance the model cannot predict is an error naming it.
func PredictSum(m Model, ins []Instance) (float64, error) {
	var sum float64
	for i, in := range ins {
		v, err := PredictChecked(m, in)
		if err != nil {
			return 0, fmt.Errorf("instance %d (%s %s): %w", i+1, in.Pattern, paramString(in.Params), err)
		}
		sum += v
	}
	return sum, nil
}

// ParamByName returns the parameter called name, or false.
func ParamByName(m Model, name string) (Param, bool) {
	for _, p := range m.Params() {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// fixedParam is a parameter without an uncertainty.
func fixedParam(name, unit string, v float64) Param {
	return Param{Name: name, Unit: unit, Value: v, CI95: [2]float64{v, v}, Fixed: true}
}
