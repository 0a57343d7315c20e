package replay

import (
	"errors"
	"fmt"
	"github.com/commcost/commcost/job"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
)

// Files is a flag given once per value.
type Files []string

func (f *Files) String() string     { return strings.Join(*f, ",") }
func (f *Files) Set(s string) error { *f = append(*f, s); return nil }

// Config is `commcost replay DIR`: the trace directory, the models (files
// or a calibration run directory), the what-ifs and the protocol.
type Config struct {
	Models      Files  `flag:"model" usage:"a fitted model file (the output of commcost fit --format json); give it once per model" value:"file"`
	Calibration string `flag:"calibration" usage:"a calibration run dir (its records.jsonl): fit every model kind that prices a point-to-point message from it" value:"dir"`
	Scale       Files  `flag:"scale" usage:"a what-if param=factor, once per parameter: bandwidth=2 (twice the bandwidth), latency=0.5, compute=0.5, or a model parameter (L, o_s, o_r, g, G, t_s, t_w, a, b)" value:"param=factor"`
	Eager       string `flag:"eager" default:"auto" usage:"the largest message sent eagerly, in bytes (larger ones wait for their receive: rendezvous), or auto: the MPI's own limit recorded in the trace, else the first breakpoint of a piecewise model, else every message eager; none: every message eager"`
	Out         string `flag:"out" usage:"append one record per model to this JSON Lines file (commcost report and compare read them)" value:"file"`
	// Dir is the trace directory (the positional argument).
	Dir string
	// Collectives prices collectives whole where it describes them; nil:
	// every collective is decomposed (Decompose).
	Collectives CollectiveModel
}

// Validate checks the flags' forms.
func (c Config) Validate() error {
	if len(c.Models) == 0 && c.Calibration == "" {
		return opts.Badf("no model: give --model FILE (once per model) or --calibration DIR")
	}
	// One model file twice would be replayed twice and listed as two
	// models that agree.
	if a, b, dup := results.SameFileTwice(c.Models); dup {
		why := "is given twice"
		if a != b {
			why = "is the same file as " + opts.Echo(a)
		}
		return &opts.FieldError{Field: "Models", Value: b, Reason: why + "; give each model once"}
	}
	if _, err := ParseScale(c.Scale); err != nil {
		return err
	}
	if _, _, err := parseEager(c.Eager); err != nil {
		return &opts.FieldError{Field: "Eager", Value: c.Eager, Reason: "want auto, none or a size in bytes such as 4096 or 64K"}
	}
	return nil
}

// parseEager returns the limit and whether it is auto.
func parseEager(s string) (int64, bool, error) {
	switch s {
	case "auto", "":
		return 0, true, nil
	case "none":
		return -1, false, nil
	}
	n, err := opts.ParseSize(s)
	return int64(n), false, err
}

// Prediction is one model's replay against the trace's measurement.
type Prediction struct {
	Model     string
	Kind      string
	EagerFrom string // where the eager limit came from
	Eager     int64
	Result    *Result
	// Errors of the predicted against the measured, relative: the
	// maximum and the mean over ranks of the time in MPI and the wall time.
	MPIMaxErr, MPIMeanErr, WallMaxErr, WallMeanErr float64
	Best                                           bool
	Sec                                            float64 // replay's own time
}

// Outcome is a replay of a trace under every model.
type Outcome struct {
	Dir         string
	Ranks       int
	Events      int
	Measured    *trace.Summary
	Predictions []Prediction
	Scale       Scale
	// Hosts are the traced run's hosts in order of first rank, with
	// the ranks each held.
	Hosts        []string
	RanksPerHost []int
	// Skipped names each model kind the calibration could not price a
	// message with, and why (a fit that failed, or gave a negative
	// overhead); the others replay the trace.
	Skipped []string
}

// loadModels reads the model files and fits the calibration's kinds; it
// returns the kinds of the calibration left out, and why.
func (c Config) loadModels(s Scale) ([]*Pricer, []string, error) {
	var out []*Pricer
	used := map[string]int{}
	for _, f := range c.Models {
		// model.ReadFile refuses a FIFO or a directory before reading
		m, _, meta, err := model.ReadFileMeta(f)
		if err != nil {
			return nil, nil, opts.Badf("--model %s: %v", f, err)
		}
		if err := NativeModel("--model", f, meta); err != nil {
			return nil, nil, err
		}
		// Two files of one name (a/hockney.json, b/hockney.json) are two
		// rows: the second is hockney-2, as app table labels them.
		label := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if used[label]++; used[label] > 1 {
			label = fmt.Sprintf("%s-%d", label, used[label])
		}
		p, err := NewPricer(label, m, s)
		if err != nil {
			var fe *opts.FieldError
			if errors.As(err, &fe) {
				return nil, nil, err
			}
			return nil, nil, opts.Badf("--model %s: %v", f, err)
		}
		out = append(out, p)
	}
	if c.Calibration != "" {
		recs, _, err := report.ReadRunDir(c.Calibration)
		if err != nil {
			return nil, nil, opts.Badf("--calibration %s: %v", c.Calibration, err)
		}
		if err := nativeCalibration(c.Calibration, recs); err != nil {
			return nil, nil, err
		}
		// A kind whose fit fails, or whose fitted overheads are negative
		// (measured data can give them), is left out with its reason;
		// the trace is replayed under the others.
		var why []string
		for _, kind := range []string{"hockney", "piecewise", "loggp", "hyperbolic"} {
			m, err := model.Fit(kind, recs, model.Options{})
			if err != nil {
				why = append(why, fmt.Sprintf("%s: %v", kind, err))
				continue
			}
			p, err := NewPricer(kind, m, s)
			if err != nil {
				why = append(why, err.Error()) // it names the kind
				continue
			}
			out = append(out, p)
		}
		if len(out) == 0 {
			return nil, nil, opts.Badf("--calibration %s: no model prices a point-to-point message from its records (%s)", c.Calibration, strings.Join(why, "; "))
		}
		return out, why, nil
	}
	return out, nil, nil
}

// nativeCalibration refuses a calibration whose records are not of the
// native backend: the local backend's ranks are goroutines of one process
// exchanging through memory, and "none" and "replay" time no MPI message
// at all, so their fits would price a traced MPI program's messages at a
// cost it never paid. Records without a backend (hand made) pass.
func nativeCalibration(dir string, recs []results.Record) error {
	other, first := 0, ""
	for _, r := range recs {
		if b := r.Meta.Backend; b != "" && b != job.Native {
			if other++; first == "" {
				first = b
			}
		}
	}
	if other == 0 {
		return nil
	}
	return notNative(first, "--calibration %s: %d of its %d records were", "a calibration measured under mpirun (the native backend): run the calibration with mpirun -np N commcost suite", dir, other, len(recs))
}

// NativeModel refuses a model file fitted to records of a backend other
// than native (model.FileMeta), for nativeCalibration's reason; name is
// the flag or argument that gave path. A file that records no backend
// (hand made, or older than the field) is not refused.
func NativeModel(name, path string, meta model.FileMeta) error {
	if meta.Backend == "" || meta.Backend == job.Native {
		return nil
	}
	return notNative(meta.Backend, "%s %s: it was fitted to records", "a model fitted to records measured under mpirun (the native backend): refit it to the records of mpirun -np N commcost suite", name, path)
}

// LocalBackendError is the refusal of a calibration or model file of a
// backend other than native: bad input, and in replay assess not a model
// to leave out with a note but the end of the run.
type LocalBackendError struct{ error }

func (e LocalBackendError) Unwrap() error { return e.error }

// notNative is the refusal of nativeCalibration and NativeModel for
// records of backend: what (a format, with args) says whose records, want
// what a traced MPI program is predicted from instead.
func notNative(backend, what, want string, args ...any) error {
	how := " measured with --backend local (goroutine ranks in one process, not a network)"
	if backend != job.Local {
		how = fmt.Sprintf(" of backend %q, which times no MPI message on a network", results.Printable(backend))
	}
	return LocalBackendError{opts.Badf(what+how+"; a traced MPI program is predicted from "+want, args...)}
}

// Run replays the trace under every model.
func (c Config) Run() (*Outcome, error) {
	if c.Dir == "" {
		return nil, opts.Badf("no trace directory: commcost replay DIR --model FILE")
	}
	s, err := ParseScale(c.Scale)
	if err != nil {
		return nil, err
	}
	limit, auto, err := parseEager(c.Eager)
	if err != nil {
		return nil, err
	}
	pricers, skipped, err := c.loadModels(s)
	if err != nil {
		return nil, err
	}
	t, err := trace.ReadDirDemand(c.Dir, trace.ReplayFactor)
	if err != nil {
		return nil, opts.Badf("DIR %s: %v", c.Dir, err)
	}
	prog, err := LowerDir(c.Dir, t, c.Collectives)
	if err != nil {
		return nil, err
	}
	o := &Outcome{Dir: c.Dir, Ranks: len(t.Ranks), Events: prog.Events, Measured: trace.Summarize(t), Scale: s, Skipped: skipped}
	for _, rk := range t.Ranks {
		i := 0
		for i < len(o.Hosts) && o.Hosts[i] != rk.Header.Host {
			i++
		}
		if i == len(o.Hosts) {
			o.Hosts, o.RanksPerHost = append(o.Hosts, rk.Header.Host), append(o.RanksPerHost, 0)
		}
		o.RanksPerHost[i]++
	}
	mpiMax, mpiMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.MPISec })
	wallMax, wallMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.WallSec })
	for _, p := range pricers {
		eager, from := limit, "--eager"
		if auto {
			eager, from = TraceEager(t)
			if eager == 0 && p.Breakpoint > 0 {
				eager, from = int64(p.Breakpoint), "the piecewise fit's first breakpoint"
			}
			if eager == 0 {
				eager, from = -1, "unknown: every message eager"
			}
		}
		start := time.Now()
		res, err := simulate(prog, engineConfig{pricer: p, eager: eager, compute: s.get(ScaleCompute)})
		if err != nil {
			return nil, err
		}
		pr := Prediction{Model: p.Name, Kind: p.Kind, Eager: eager, EagerFrom: from, Result: res, Sec: time.Since(start).Seconds()}
		pMax, pMean := maxMean(res.MPISec)
		wMax, wMean := maxMean(res.WallSec)
		pr.MPIMaxErr, pr.MPIMeanErr = rel(pMax, mpiMax), rel(pMean, mpiMean)
		pr.WallMaxErr, pr.WallMeanErr = rel(wMax, wallMax), rel(wMean, wallMean)
		o.Predictions = append(o.Predictions, pr)
	}
	best := -1
	for i, p := range o.Predictions {
		if best < 0 || math.Abs(p.MPIMaxErr) < math.Abs(o.Predictions[best].MPIMaxErr) {
			best = i
		}
	}
	if best >= 0 && len(s) == 0 {
		o.Predictions[best].Best = true
	}
	return o, nil
}

// TraceEager is the eager limit the MPI reported: within a host when all
// ranks ran on one, else between hosts; 0 when the trace does not say.
func TraceEager(t *trace.Trace) (int64, string) {
	hosts := map[string]bool{}
	for _, rk := range t.Ranks {
		hosts[rk.Header.Host] = true
	}
	h := t.Ranks[0].Header
	if len(hosts) == 1 && h.EagerShmBytes > 0 {
		return h.EagerShmBytes, "the MPI's shared-memory eager limit (recorded in the trace)"
	}
	if len(hosts) > 1 && h.EagerNetBytes > 0 {
		return h.EagerNetBytes, "the MPI's network eager limit (recorded in the trace)"
	}
	return 0, ""
}

func stats(rs []trace.RankSummary, f func(trace.RankSummary) float64) (mx, mean float64) {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return maxMean(xs)
}

func maxMean(xs []float64) (mx, mean float64) {
	for _, x := range xs {
		mx = math.Max(mx, x)
		mean += x
	}
	if len(xs) > 0 {
		mean /= float64(len(xs))
	}
	return mx, mean
}

func rel(pred, meas float64) float64 {
	if meas == 0 {
		return math.NaN()
	}
	return (pred - meas) / meas
}

// Write prints the outcome: per model the predicted time in MPI and wall
// time (max and mean over ranks) against the measured, the best marked;
// then the breakdown by call.
func (o *Outcome) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	mpiMax, mpiMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.MPISec })
	wallMax, wallMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.WallSec })
	fmt.Fprintf(tw, "replay of %s: %d ranks, %d events", results.Printable(o.Dir), o.Ranks, o.Events)
	if len(o.Scale) > 0 {
		fmt.Fprintf(tw, ", what-if %s (errors are against the measured run)", o.Scale)
	}
	fmt.Fprint(tw, "\n\n")
	fmt.Fprintln(tw, "model\tMPI max s\terr\tMPI mean s\terr\twall max s\terr\twall mean s\terr\teager limit B\t")
	fmt.Fprintf(tw, "measured\t%.6f\t\t%.6f\t\t%.6f\t\t%.6f\t\t\t\n", mpiMax, mpiMean, wallMax, wallMean)
	for _, p := range o.Predictions {
		pMax, pMean := maxMean(p.Result.MPISec)
		wMax, wMean := maxMean(p.Result.WallSec)
		// The model's name comes from its file's: escaped, so a newline or
		// an escape sequence in it cannot break the table.
		name := results.Printable(p.Model)
		if p.Best {
			name += " (best)"
		}
		eager := "all eager"
		if p.Eager >= 0 {
			eager = strconv.FormatInt(p.Eager, 10)
		}
		fmt.Fprintf(tw, "%s\t%.6f\t%s\t%.6f\t%s\t%.6f\t%s\t%.6f\t%s\t%s\t\n", name, pMax, pct(p.MPIMaxErr), pMean, pct(p.MPIMeanErr),
			wMax, pct(p.WallMaxErr), wMean, pct(p.WallMeanErr), eager)
	}
	fmt.Fprintln(tw)
	if len(o.Predictions) > 0 {
		fmt.Fprintf(tw, "eager limit: %s\n\n", results.Printable(o.Predictions[0].EagerFrom))
	}
	measured := map[trace.Op]float64{}
	for _, c := range o.Measured.Calls {
		measured[c.Op] = c.Sec
	}
	var ops []trace.Op
	for op := range measured {
		if op != trace.OpFinalize {
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return measured[ops[i]] > measured[ops[j]] })
	fmt.Fprint(tw, "call (s over all ranks)\tmeasured\t")
	for _, p := range o.Predictions {
		fmt.Fprintf(tw, "%s\t", results.Printable(p.Model))
	}
	fmt.Fprintln(tw)
	for _, op := range ops {
		fmt.Fprintf(tw, "%s\t%.6f\t", op, measured[op])
		for _, p := range o.Predictions {
			fmt.Fprintf(tw, "%.6f\t", p.Result.ByCall[op])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// Records is one record per model: the predicted time in MPI per rank
// (its summary over ranks, rank_max the maximum), the measured and
// predicted maxima and means, and the errors, with the trace's metadata.
func (o *Outcome) Records(command []string) []results.Record {
	var out []results.Record
	mpiMax, mpiMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.MPISec })
	wallMax, wallMean := stats(o.Measured.Ranks, func(r trace.RankSummary) float64 { return r.WallSec })
	// This process's metadata (the launch identifier too, as every
	// writer's), with the traced run's hosts and ranks per host.
	meta := results.NewMeta("replay")
	meta.Command, meta.Hosts, meta.RanksPerHost = command, o.Hosts, o.RanksPerHost
	for _, p := range o.Predictions {
		pMax, pMean := maxMean(p.Result.MPISec)
		wMax, wMean := maxMean(p.Result.WallSec)
		params := results.Params{"trace": o.Dir, "model": p.Model, "kind": p.Kind, "eager_bytes": p.Eager}
		if len(o.Scale) > 0 {
			params["scale"] = o.Scale.String()
		}
		rec := results.Record{
			Schema: results.SchemaVersion, Bench: Bench, Params: params, Ranks: o.Ranks, Unit: results.UnitSeconds,
			Summary:   results.Summarize(p.Result.MPISec),
			Reduction: results.ReductionMaxOverRanks, Stop: results.StopFixed,
			Derived: map[string]float64{
				"predicted_mpi_max_s": pMax, "predicted_mpi_mean_s": pMean, "measured_mpi_max_s": mpiMax, "measured_mpi_mean_s": mpiMean,
				"predicted_wall_max_s": wMax, "predicted_wall_mean_s": wMean, "measured_wall_max_s": wallMax, "measured_wall_mean_s": wallMean,
			},
			Counters: map[string]float64{"events": float64(o.Events), "replay_s": p.Sec},
			Meta:     meta,
		}
		for k, v := range map[string]float64{"error_mpi_max": p.MPIMaxErr, "error_mpi_mean": p.MPIMeanErr, "error_wall_max": p.WallMaxErr, "error_wall_mean": p.WallMeanErr} {
			if !math.IsNaN(v) {
				rec.Derived[k] = v
			}
		}
		if p.Best {
			rec.Derived["best"] = 1
		}
		rec.RankMin, rec.RankAvg, rec.RankMax = minOf(p.Result.MPISec), pMean, pMax
		out = append(out, rec)
	}
	return out
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

// String is the what-if as PARAM=FACTOR items, sorted.
func (s Scale) String() string {
	var items []string
	for k, v := range s {
		items = append(items, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}
