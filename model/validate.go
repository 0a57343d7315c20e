package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// Holdout selects the points cross-validation holds out.
type Holdout struct {
	// Every > 1 holds out one point in Every of each pattern: interleaved
	// message sizes (never the first or last size, so held-out points test
	// interpolation), or for patterns with several parameters a fixed-seed
	// random 1/Every of the cells (held-out (k, l, r) cells); see
	// holdoutSet.
	Every int
	// LeaveOneOut refits once per point, holding out that point.
	LeaveOneOut bool
}

// String formats h as ParseHoldout reads it.
func (h Holdout) String() string {
	switch {
	case h.LeaveOneOut:
		return "loo"
	case h.Every > 1:
		return "every:" + strconv.Itoa(h.Every)
	}
	return "none"
}

// ParseHoldout parses "none", "loo" or "every:N" (N >= 2).
func ParseHoldout(s string) (Holdout, error) {
	switch {
	case s == "none" || s == "":
		return Holdout{}, nil
	case s == "loo":
		return Holdout{LeaveOneOut: true}, nil
	case strings.HasPrefix(s, "every:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "every:"))
		if err != nil || n < 2 || n > 1000 {
			return Holdout{}, fmt.Errorf("holdout %q: want every:N with 2 <= N <= 1000", s)
		}
		return Holdout{Every: n}, nil
	}
	return Holdout{}, fmt.Errorf("holdout %q: want none, loo or every:N", s)
}

// Validation is the result of cross-validation on held-out points.
type Validation struct {
	Scheme       string         `json:"scheme"`
	NTrain       int            `json:"n_train"`
	NTest        int            `json:"n_test"`
	Failed       int            `json:"failed,omitempty"` // refits that failed (leave-one-out)
	FailReason   string         `json:"fail_reason,omitempty"`
	MedianRelErr float64        `json:"median_rel_err"`
	P95RelErr    float64        `json:"p95_rel_err"`
	MaxRelErr    float64        `json:"max_rel_err"`
	Points       []HeldOutPoint `json:"points"`
}

// HeldOutPoint is one held-out point's measurement and prediction.
type HeldOutPoint struct {
	Point     string  `json:"point"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	RelErr    float64 `json:"rel_err"` // |predicted - measured| / measured
}

// cvPoint is a parameter point for cross-validation: all records of one
// bench, parameter set and rank count.
type cvPoint struct {
	key  string
	inst Instance
	recs []results.Record
	y    float64
}

// cvSize is the size of a record that Options.MinBytes and MaxBytes
// restrict in the fit of kind (the kind's registered Size: BSP's
// h-relation, a k-k-access's packet size l, else the message size bytes).
// ok is false when the record has none (then no range applies).
func cvSize(kind string, r results.Record) (size float64, ok bool) {
	k, _ := Lookup(kind)
	return k.size(r)
}

// FittedBencher is implemented by models whose fit reads only some of
// the benches their kind lists, depending on the records (BSP uses
// ping-pong records only when no multi-rank pattern is present):
// FittedBenches names the ones this fit used, and cross-validation holds
// out points of those only.
type FittedBencher interface {
	FittedBenches() []string
}

// cvPoints groups the records the kind is fitted from into points, keeps
// those the full model predicts and whose size lies in opt's range (the
// points the fit itself may use), and sorts them per bench by parameter
// values (numerically where both are numbers).
func cvPoints(kind string, full Model, recs []results.Record, opt Options) []cvPoint {
	want := map[string]bool{}
	k, _ := Lookup(kind)
	benches := k.Benches
	if u, ok := full.(FittedBencher); ok {
		benches = u.FittedBenches()
	}
	for _, b := range benches {
		want[b] = true
	}
	by := map[string]*cvPoint{}
	var order []string
	for _, r := range recs {
		if !want[r.Bench] {
			continue
		}
		if b, ok := cvSize(kind, r); ok && !opt.inRange(b) {
			continue
		}
		k := fmt.Sprintf("%s %s ranks=%d", r.Bench, paramString(r.Params), r.Ranks)
		p, ok := by[k]
		if !ok {
			p = &cvPoint{key: k, inst: InstanceOf(r)}
			by[k] = p
			order = append(order, k)
		}
		p.recs = append(p.recs, r)
	}
	var pts []cvPoint
	for _, k := range order {
		p := by[k]
		var ms []float64
		for _, r := range p.recs {
			ms = append(ms, r.Median)
		}
		p.y = median(ms)
		if _, err := full.Predict(p.inst); err != nil {
			continue
		}
		if checkRecord(0, p.recs[0]) != nil {
			continue
		}
		pts = append(pts, *p)
	}
	sort.SliceStable(pts, func(i, j int) bool { return lessInstance(pts[i].inst, pts[j].inst) })
	return pts
}

// lessInstance orders instances by pattern, then string parameters (op,
// impl, side) by name, then ranks, then numeric parameters by name, so that
// tables group by operation and rank count and run along the sizes.
func lessInstance(a, b Instance) bool {
	if a.Pattern != b.Pattern {
		return a.Pattern < b.Pattern
	}
	keys := map[string]bool{}
	for k := range a.Params {
		keys[k] = true
	}
	for k := range b.Params {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var numeric []string
	for _, k := range ks {
		_, ea := numParam(a.Params, k, "")
		_, eb := numParam(b.Params, k, "")
		if ea == nil && eb == nil {
			numeric = append(numeric, k)
			continue
		}
		sa, sb := fmt.Sprint(a.Params[k]), fmt.Sprint(b.Params[k])
		if sa != sb {
			return sa < sb
		}
	}
	if a.Ranks != b.Ranks {
		return a.Ranks < b.Ranks
	}
	for _, k := range numeric {
		fa, _ := numParam(a.Params, k, "")
		fb, _ := numParam(b.Params, k, "")
		if fa != fb {
			return fa < fb
		}
	}
	return false
}

// CrossValidate fits the model kind on the points h does not hold out and
// reports the relative errors of its predictions for the held-out points:
// median and 95th percentile (MEASURE.md "Validate on held-out points").
func CrossValidate(kind string, recs []results.Record, opt Options, h Holdout) (*Validation, error) {
	if h.Every <= 1 && !h.LeaveOneOut {
		return nil, errors.New("cross-validation: no holdout scheme (want every:N or loo)")
	}
	full, err := Fit(kind, recs, opt)
	if err != nil {
		return nil, err
	}
	pts := cvPoints(kind, full, recs, opt)
	v := &Validation{Scheme: h.String()}
	var errs []float64
	predict := func(train []cvPoint, test []cvPoint) error {
		var tr []results.Record
		for _, p := range train {
			tr = append(tr, p.recs...)
		}
		m, err := Fit(kind, tr, opt)
		if err != nil {
			return err
		}
		for _, p := range test {
			pred, err := m.Predict(p.inst)
			if err != nil {
				return err
			}
			re := math.Abs(pred-p.y) / p.y
			v.Points = append(v.Points, HeldOutPoint{Point: p.key, Measured: p.y, Predicted: pred, RelErr: re})
			errs = append(errs, re)
		}
		return nil
	}
	if h.LeaveOneOut {
		for i := range pts {
			train := append(append([]cvPoint(nil), pts[:i]...), pts[i+1:]...)
			if err := predict(train, pts[i:i+1]); err != nil {
				v.Failed++
				v.FailReason = err.Error()
			}
		}
		v.NTrain = len(pts) - 1
		v.NTest = len(errs)
	} else {
		var train, test []cvPoint
		for i := 0; i < len(pts); {
			j := i
			for j < len(pts) && pts[j].inst.Pattern == pts[i].inst.Pattern {
				j++
			}
			hold := holdoutSet(pts[i:j], h.Every)
			for k := i; k < j; k++ {
				if hold[k-i] {
					test = append(test, pts[k])
				} else {
					train = append(train, pts[k])
				}
			}
			i = j
		}
		if len(test) == 0 {
			return nil, fmt.Errorf("cross-validation %s: %d points leave nothing to hold out", h, len(pts))
		}
		if err := predict(train, test); err != nil {
			return nil, fmt.Errorf("cross-validation %s (%d training points): %w", h, len(train), err)
		}
		v.NTrain, v.NTest = len(train), len(test)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("cross-validation %s: no held-out point could be predicted: %s", h, v.FailReason)
	}
	v.MedianRelErr = median(errs)
	v.P95RelErr = quantile(errs, 0.95)
	for _, e := range errs {
		v.MaxRelErr = math.Max(v.MaxRelErr, e)
	}
	return v, nil
}

// holdoutSet marks the points of one pattern (sorted) to hold out, about
// one in every. Along a single varying parameter (message sizes) it
// interleaves: every every-th point, never the first or last, so held-out
// points test interpolation. Over a grid of several parameters ((k, l, r)
// cells) a regular stride would alias with the grid (every 4th cell of a
// grid with 4 levels of r is always the same r), so a fixed-seed random
// choice of len/every cells is held out instead.
func holdoutSet(pts []cvPoint, every int) []bool {
	hold := make([]bool, len(pts))
	if varyingParams(pts) <= 1 {
		for k := 1; k < len(pts)-1; k++ {
			if k%every == every/2 {
				hold[k] = true
			}
		}
		return hold
	}
	rng := rand.New(rand.NewPCG(uint64(every), 0x5eed))
	for _, k := range rng.Perm(len(pts))[:len(pts)/every] {
		hold[k] = true
	}
	return hold
}

// varyingParams counts the parameters (and ranks) that take more than one
// value across pts.
func varyingParams(pts []cvPoint) int {
	vals := map[string]map[string]bool{}
	for _, p := range pts {
		for k, v := range p.inst.Params {
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			vals[k][fmt.Sprint(v)] = true
		}
		if vals["\x00ranks"] == nil {
			vals["\x00ranks"] = map[string]bool{}
		}
		vals["\x00ranks"][strconv.Itoa(p.inst.Ranks)] = true
	}
	n := 0
	for _, v := range vals {
		if len(v) > 1 {
			n++
		}
	}
	return n
}

// Comparison is one record's measurement beside a model's prediction.
type Comparison struct {
	Instance  Instance `json:"instance"`
	Measured  float64  `json:"measured"`
	Predicted float64  `json:"predicted"`
	RelErr    float64  `json:"rel_err"`
}

// Compare predicts every record the model describes (others are skipped)
// and returns measured vs predicted, one entry per parameter point (the
// median of the records there), in sorted parameter order.
func Compare(m Model, recs []results.Record) []Comparison {
	by := map[string][]results.Record{}
	var keys []string
	for _, r := range recs {
		k := fmt.Sprintf("%s %s ranks=%d", r.Bench, paramString(r.Params), r.Ranks)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	var out []Comparison
	for _, k := range keys {
		g := by[k]
		in := InstanceOf(g[0])
		pred, err := m.Predict(in)
		if err != nil {
			continue
		}
		var ms []float64
		for _, r := range g {
			ms = append(ms, r.Median)
		}
		y := median(ms)
		if !(y > 0) || math.IsInf(y, 0) {
			continue
		}
		out = append(out, Comparison{Instance: in, Measured: y, Predicted: pred, RelErr: math.Abs(pred-y) / y})
	}
	sort.SliceStable(out, func(i, j int) bool { return lessInstance(out[i].Instance, out[j].Instance) })
	return out
}

// envelope is the JSON form of a model: its kind, the backend of the
// records it was fitted from, the parameters (what a reader reads and may
// edit), the model body (what predicts) and the optional validation.
// Unmarshal refuses a file whose parameters and body disagree, so that an
// edit of the parameters is never ignored silently.
type envelope struct {
	Model      string          `json:"model"`
	Backend    string          `json:"backend,omitempty"`
	Params     []Param         `json:"params,omitempty"`
	Fit        json.RawMessage `json:"fit"`
	Validation *Validation     `json:"validation,omitempty"`
	// Splits are the optimal splits fit trilinear --split adds to the
	// file (report.writeFitJSON), for people: no reader predicts from
	// them.
	Splits []Split `json:"splits,omitempty"`
}

// newModel returns an empty model of a registered kind (fitted or
// derived).
func newModel(kind string) (Model, error) {
	if k, ok := Lookup(kind); ok {
		return k.New(), nil
	}
	var names []string
	for _, k := range All() {
		names = append(names, k.Name)
	}
	return nil, fmt.Errorf("unknown model %q (want one of %s)", kind, strings.Join(names, ", "))
}

// FileMeta is what a model file records about the fit beside the model.
// Backend is the meta backend of the records it was fitted from ("native"
// for MPI under mpirun, "local" for goroutine ranks exchanging through
// memory), "" when they name none (hand-made records) or the file predates
// the field. Readers that price an MPI program's messages (replay, export
// simgrid) refuse a fit of local records; the others read it alike.
type FileMeta struct {
	Backend string
}

// Marshal encodes a model (and optionally its validation) as JSON, the
// form `commcost fit --format json` prints and `commcost predict` reads.
func Marshal(m Model, v *Validation) ([]byte, error) {
	return MarshalMeta(m, v, FileMeta{})
}

// MarshalMeta is Marshal with the fit's FileMeta written beside the model.
func MarshalMeta(m Model, v *Validation, meta FileMeta) ([]byte, error) {
	if err := checkFinite(reflect.ValueOf(m), m.Kind()); err != nil {
		return nil, err
	}
	if v != nil {
		if err := checkFinite(reflect.ValueOf(v), "validation"); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(envelope{Model: m.Kind(), Backend: meta.Backend, Params: m.Params(), Fit: body, Validation: v}, "", "  ")
}

// Unmarshal decodes what Marshal wrote and checks the model is usable:
// finite parameters and the structure Predict relies on.
func Unmarshal(data []byte) (Model, *Validation, error) {
	m, v, _, err := UnmarshalMeta(data)
	return m, v, err
}

// UnmarshalMeta is Unmarshal that also returns the file's FileMeta (zero
// for a file written before it was recorded).
func UnmarshalMeta(data []byte) (Model, *Validation, FileMeta, error) {
	m, v, env, err := unmarshal(data)
	if err != nil {
		return nil, nil, FileMeta{}, err
	}
	// the backend is shown in messages, like a record's (results.Printable)
	return m, v, FileMeta{Backend: results.Printable(env.Backend)}, nil
}

// unmarshal decodes and checks a model file (Unmarshal), returning its
// envelope too.
func unmarshal(data []byte) (Model, *Validation, envelope, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %w", results.JSONFieldError(err))
	}
	if err := results.CheckJSONKeys(data, reflect.TypeFor[envelope](), ""); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %w", err)
	}
	if env.Model == "" {
		return nil, nil, env, errors.New(`model JSON: no "model" field (want the output of commcost fit --format json)`)
	}
	// A fit writes its records' backend, which the records' reader has
	// checked; any other value would slip past the readers that refuse
	// a fit of local records.
	if err := results.CheckBackend(env.Backend); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: field %w", err)
	}
	m, err := newModel(env.Model)
	if err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %w", err)
	}
	if len(env.Fit) == 0 {
		return nil, nil, env, fmt.Errorf(`model JSON: %s has no "fit" body`, env.Model)
	}
	if err := json.Unmarshal(env.Fit, m); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s body: %w", env.Model, results.JSONFieldError(err))
	}
	if err := results.CheckJSONKeys(env.Fit, reflect.TypeOf(m), "fit"); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkUsable(m); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkPresent(reflect.TypeOf(m), env.Fit, ""); err != nil {
		if errors.As(err, new(intervalError)) {
			return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
		}
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w (a parameter left out would predict as if it were 0; use the output of commcost fit --format json)", env.Model, err)
	}
	if err := checkMagnitudes(m.Params()); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkMessageSigns(m); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkParamsAgree(env.Params, m.Params()); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	// The metadata beside the parameters, read and shown by the commands
	// that read the file, in the JSON names of the file.
	if err := checkMetadata(reflect.ValueOf(m), "fit", "fit"); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkMetadata(reflect.ValueOf(env.Params), "params", "params"); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	if err := checkMetadata(reflect.ValueOf(env.Validation), "validation", "validation"); err != nil {
		return nil, nil, env, fmt.Errorf("model JSON: %s: %w", env.Model, err)
	}
	return m, env.Validation, env, nil
}

// MaxModelFileBytes bounds a model file: the largest fits (piecewise and
// trilinear with their segments and validation) are tens of kilobytes.
const MaxModelFileBytes = 16 << 20

// ReadFile reads and checks the model file at path (Unmarshal): a FIFO, a
// device or a directory is refused before it is read, and so is a file
// larger than MaxModelFileBytes. The CLI reads every --model and
// MODEL.json through it.
func ReadFile(path string) (Model, *Validation, error) {
	m, v, _, err := ReadFileMeta(path)
	return m, v, err
}

// ReadFileMeta is ReadFile that also returns the file's FileMeta.
func ReadFileMeta(path string) (Model, *Validation, FileMeta, error) {
	data, err := results.ReadRegularFile(path, MaxModelFileBytes)
	if err != nil {
		return nil, nil, FileMeta{}, err
	}
	return UnmarshalMeta(data)
}

// Bounds on a model parameter's magnitude: a time (unit s, or s per
// something) beyond MaxParamSeconds, or any other parameter beyond
// MaxParamValue, is no fit of a machine, and its predictions (a constant
// times counts and sizes) would overflow the tables and plots they reach.
const (
	MaxParamSeconds = results.MaxRecordSeconds
	MaxParamValue   = results.MaxRecordValue
)

// checkMagnitudes refuses a parameter whose value is beyond its bound.
func checkMagnitudes(ps []Param) error {
	for _, p := range ps {
		bound := MaxParamValue
		if p.Unit == "s" || strings.HasPrefix(p.Unit, "s/") {
			bound = MaxParamSeconds
		}
		if math.Abs(p.Value) > bound {
			return fmt.Errorf("parameter %s = %v %s is beyond %g in absolute value: no machine has it (a corrupt or hand-edited file)", p.Name, p.Value, p.Unit, bound)
		}
	}
	return nil
}

// perByteRounding is how far below 0 a per-byte term may be fitted by
// rounding: what it takes from the largest message, in seconds.
const perByteRounding = 1e-12

// maxMessageBytes is the largest message MPI sends in one call (a count
// of bytes is an int): the sizes a point-to-point model prices are 0 to
// it.
const maxMessageBytes = 1<<31 - 1

// checkMessageSigns refuses a point-to-point model (hockney, piecewise,
// loggp, logp, postal) that prices some message of 0 to maxMessageBytes
// bytes in negative time in one of its parts, as replay and export
// simgrid do: hockney's t_w, and t_s + t_w m over its fitted sizes
// (all sizes when the file names none); every piecewise segment's line
// over the sizes it prices (the first from 0 bytes, the last to the
// largest message); LogGP's latency and wire time L + (m-1) G, gap g +
// (m-1) G and overheads o + O m; LogP's L, o and g; postal's lambda,
// at least 2 (2 + L/o: its LogP's L >= 0).
// Every reader of a model file (predict, compare --models, app table and
// the programs' --model, replay, export simgrid) prices messages with
// it, and a negative price hides in their sums. A per-byte term fitted
// a hair below 0 (-1e-27 s/B, rounding) that no message size makes
// negative passes.
func checkMessageSigns(m Model) error {
	// line checks the price a + b x(m) of messages of lo and hi bytes,
	// the ends of the sizes it prices (x(m) = m, or m - 1 for G's term).
	line := func(what string, a, b Param, x func(float64) float64, lo, hi float64) error {
		for _, m := range []float64{lo, hi} {
			if v := a.Value + b.Value*x(m); v < 0 {
				return fmt.Errorf("%s (%s = %g %s, %s = %g %s) is %.4g s for a %s-byte message: %s cannot be used (refit, e.g. over another size range with --min-bytes and --max-bytes)",
					what, a.Name, a.Value, a.Unit, b.Name, b.Value, b.Unit, v, results.FormatCount(m), NegativeTimeFit)
			}
		}
		return nil
	}
	bytes := func(m float64) float64 { return m }
	sPrime := func(m float64) float64 { return max(m-1, 0) }
	switch t := m.(type) {
	case *Hockney:
		// A time per byte below 0 makes a longer message cheaper, at any
		// size; the line itself is checked over the sizes it was fitted
		// to when the file says which: a fit from 64 KiB up on a shaped
		// link meets the axis below 0 (t_s < 0) and prices its sizes
		// right, and a prediction outside them is PredictChecked's.
		if t.Tw.Value*maxMessageBytes < -perByteRounding {
			return fmt.Errorf("t_w = %.4g %s is negative: a message would cost less the longer it is, and %s cannot be used", t.Tw.Value, t.Tw.Unit, NegativeTimeFit)
		}
		lo, hi := 0.0, float64(maxMessageBytes)
		if t.MaxBytes > 0 {
			lo, hi = t.MinBytes, t.MaxBytes
		}
		return line("t_s + t_w m", t.Ts, t.Tw, bytes, lo, hi)
	case *Piecewise:
		for i, sg := range t.Segments {
			lo, hi := sg.FromBytes, float64(maxMessageBytes)
			if i == 0 {
				lo = 0
			}
			if i+1 < len(t.Segments) {
				hi = t.Segments[i+1].FromBytes
			}
			if err := line(fmt.Sprintf("segment %d's t_s + t_w m", i+1), sg.Ts, sg.Tw, bytes, lo, max(lo, hi)); err != nil {
				return err
			}
		}
	case *LogGP:
		for _, l := range []struct {
			what string
			a, b Param
			x    func(float64) float64
		}{{"the wire time L + (m-1) G", t.L, t.BG, sPrime}, {"the gap g + (m-1) G", t.G, t.BG, sPrime},
			{"the send overhead o_s + O_s m", t.Os, t.OsB, bytes}, {"the receive overhead o_r + O_r m", t.Or, t.OrB, bytes}} {
			if err := line(l.what, l.a, l.b, l.x, 0, maxMessageBytes); err != nil {
				return err
			}
		}
	case *LogP:
		return nonNegative(t.L, t.O, t.G)
	case *Postal:
		if err := nonNegative(t.Lambda); err != nil {
			return err
		}
		// lambda = 2 + L/o (PostalFromLogP): below 2 is a LogP latency
		// below 0, which a logp file is refused for.
		if t.Lambda.Value < 2 {
			return fmt.Errorf("lambda = %g %s is below 2: lambda is 2 + L/o, so its LogP latency L = (lambda - 2) unit = %.4g s is negative, and %s cannot be used", t.Lambda.Value, t.Lambda.Unit, (t.Lambda.Value-2)*t.Unit.Value, NegativeTimeFit)
		}
	}
	return nil
}

// nonNegative refuses the first of ps below 0, a time no message takes.
func nonNegative(ps ...Param) error {
	for _, p := range ps {
		if p.Value < 0 {
			unit := ""
			if p.Unit != "" {
				unit = " " + p.Unit
			}
			return fmt.Errorf("%s = %g%s is negative: %s cannot be used", p.Name, p.Value, unit, NegativeTimeFit)
		}
	}
	return nil
}

// checkParamsAgree refuses a file whose top-level params (what a user reads
// and edits) differ from the body's (what predicts): predicting from the
// body would ignore the edit without a word. The params may be left out
// (a nil list); a list given names each of the body's parameters exactly
// once, with its value and unit, since the comparison can only hold for
// the parameters it lists.
func checkParamsAgree(listed, body []Param) error {
	if listed == nil {
		return nil
	}
	// the k-th listing of a name pairs with the body's k-th parameter of
	// that name
	byName := make(map[string][]Param, len(body))
	var names []string
	for _, p := range body {
		byName[p.Name] = append(byName[p.Name], p)
		names = append(names, p.Name)
	}
	all := strings.Join(names, ", ")
	seen := map[string]int{}
	for _, p := range listed {
		bs, ok := byName[p.Name]
		if !ok {
			return fmt.Errorf(`"params" lists %s, which the model does not have (its parameters: %s)`, p.Name, all)
		}
		k := seen[p.Name]
		seen[p.Name]++
		if k >= len(bs) {
			return fmt.Errorf(`"params" lists %s %d times; the model has it once (its parameters: %s; a corrupt or hand-edited file)`, p.Name, k+1, all)
		}
		b := bs[k]
		if !sameValue(p.Value, b.Value) {
			return fmt.Errorf(`"params" gives %s = %v but the "fit" body, which is what predicts, has %v: edit the parameter in the "fit" body too, or refit (commcost fit --format json)`, p.Name, p.Value, b.Value)
		}
		if p.Unit != b.Unit {
			return fmt.Errorf(`"params" gives %s in unit %q but the model writes it in %q, the unit of its value (a corrupt or hand-edited file)`, p.Name, p.Unit, b.Unit)
		}
	}
	for _, n := range names {
		if seen[n] == 0 {
			return fmt.Errorf(`"params" lacks %s: when given, it lists each of the model's parameters once (its parameters: %s; a corrupt or hand-edited file: leave "params" out, or refit with commcost fit --format json)`, n, all)
		}
	}
	return nil
}

// sameValue compares two decodings of one parameter, equal up to rounding.
func sameValue(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

var (
	paramType   = reflect.TypeOf(Param{})
	qualityType = reflect.TypeOf(Quality{})
)

// checkPresent verifies that data, the JSON of a value of type t in a
// model body, holds everything the kind writes that Predict reads: every
// parameter (a Param, with its "value") and every field around them that
// the encoder always writes (no omitempty), in structures, slices and
// arrays alike (an array of 8 coefficients needs all 8). JSON decoding
// leaves a missing field at zero, which would predict as if the parameter
// were 0. The fit statistics (Quality) describe the fit and may be
// absent.
func checkPresent(t reflect.Type, data json.RawMessage, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	trimmed := bytes.TrimSpace(data)
	if bytes.Equal(trimmed, []byte("null")) {
		// A nil pointer or slice: the kind's Check says whether it may be.
		return nil
	}
	where := func() string {
		if path == "" {
			return "the body"
		}
		return path
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == qualityType {
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s is not an object", where())
		}
		if t == paramType {
			if _, ok := obj["value"]; !ok {
				return fmt.Errorf("parameter %s has no value", where())
			}
			return checkLeftOut(obj, "fit."+path)
		}
		return eachJSONField(t, path, func(f reflect.StructField, name, opts, sub string) error {
			raw, ok := obj[name]
			if !ok {
				if strings.Contains(opts, "omitempty") || f.Type == qualityType {
					return nil
				}
				return fmt.Errorf("%s is missing", sub)
			}
			return checkPresent(f.Type, raw, sub)
		})
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			return fmt.Errorf("%s is not an array", where())
		}
		if t.Kind() == reflect.Array && len(elems) != t.Len() {
			return fmt.Errorf("%s has %d entries, want %d", where(), len(elems), t.Len())
		}
		for i, e := range elems {
			if err := checkPresent(t.Elem(), e, fmt.Sprintf("%s[%d]", where(), i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// intervalError is a parameter's interval that checkPresent refuses: no
// field is missing, so Unmarshal does not say one is.
type intervalError struct{ error }

// checkLeftOut refuses the ci95 [0, 0] of a parameter (obj, its JSON) of
// another value: a parameter without an interval leaves ci95 out or
// writes [value, value] (Param.MarshalJSON), so [0, 0] is an interval
// that does not contain its value. A ci95 left out decodes to [0, 0],
// which checkInterval takes as no interval.
func checkLeftOut(obj map[string]json.RawMessage, path string) error {
	raw, ok := obj["ci95"]
	if !ok {
		return nil
	}
	var ci [2]float64
	var v float64
	if json.Unmarshal(raw, &ci) != nil || json.Unmarshal(obj["value"], &v) != nil {
		return nil // the decoder has refused it already
	}
	if ci == [2]float64{} && v != 0 {
		return intervalError{fmt.Errorf("%s.ci95 = [0, 0] does not contain %s.value = %v: a 95%% interval contains its estimate; a parameter without one has ci95 [value, value] or leaves it out (a corrupt or hand-edited file)", path, path, v)}
	}
	return nil
}

// checkFinite walks v and reports the first NaN or Inf float (JSON cannot
// carry them, and a model holding one predicts nonsense).
func checkFinite(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFinite(v.Elem(), path)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			if err := checkFinite(v.Field(i), path+"."+t.Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Float64, reflect.Float32:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("model %s is %v", path, f)
		}
	}
	return nil
}

// checkUsable verifies what Predict relies on after decoding: finite
// numbers, then the kind's own registered Check.
func checkUsable(m Model) error {
	if err := checkFinite(reflect.ValueOf(m), m.Kind()); err != nil {
		return err
	}
	if k, ok := Lookup(m.Kind()); ok && k.Check != nil {
		return k.Check(m)
	}
	return nil
}

// eachJSONField calls fn on every exported field of struct type t that
// encoding/json writes, with its JSON name, the tag's options and its
// path below path ("fit.t_s"), stopping at the first error.
func eachJSONField(t reflect.Type, path string, fn func(f reflect.StructField, name, opts, sub string) error) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sub := name
		if path != "" {
			sub = path + "." + name
		}
		if err := fn(f, name, opts, sub); err != nil {
			return err
		}
	}
	return nil
}
