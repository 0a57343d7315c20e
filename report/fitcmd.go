package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// FitCommand is 'commcost fit MODEL FILE': the settings of a fit (its
// flags), the kind and the records file, and Run, which fits, validates on
// held-out points and prints the report or the model's JSON.
type FitCommand struct {
	Format      string  `flag:"format" default:"table" usage:"output: table or json"`
	Plot        string  `flag:"plot" usage:"write measured points and fitted curves to this image (.png, .svg, .pdf)"`
	Holdout     string  `flag:"holdout" default:"every:4" usage:"cross-validation: none, loo (leave one out) or every:N (hold out one point in N)"`
	Weighting   string  `flag:"weighting" default:"relative"`
	Trim        float64 `flag:"trim" default:"5"`
	MinBytes    string  `flag:"min-bytes"`
	MaxBytes    string  `flag:"max-bytes"`
	Op          string  `flag:"op"`
	Network     string  `flag:"network"`
	Impl        string  `flag:"impl"`
	PacketBytes string  `flag:"packet-bytes"`
	MaxSegments int     `flag:"max-segments" default:"4"`
	Split       string  `flag:"split"`
	HopSec      float64 `flag:"hop-s"`
	Set         opts.Given

	// Kind and Path are the positional arguments MODEL and FILE.
	Kind, Path string
}

// fitFields maps the fields to the model option groups they set, and the
// report table inputs: the registries say which kinds read them, so a
// setting the chosen kind ignores is refused, not dropped.
var (
	fitFieldOptions = map[string]model.Option{
		"Weighting": model.OptWeighting, "Trim": model.OptTrim,
		"MinBytes": model.OptSizeRange, "MaxBytes": model.OptSizeRange,
		"Op": model.OptOp, "Network": model.OptNetwork, "Impl": model.OptImpl,
		"MaxSegments": model.OptSegments, "PacketBytes": model.OptPacketBytes,
	}
	fitFieldTables = map[string]TableOption{"Split": TableSplits, "HopSec": TableHop}
	fitFieldFlags  = map[string]string{"Weighting": "weighting", "Trim": "trim", "MinBytes": "min-bytes", "MaxBytes": "max-bytes",
		"Op": "op", "Network": "network", "Impl": "impl", "MaxSegments": "max-segments", "PacketBytes": "packet-bytes",
		"Split": "split", "HopSec": "hop-s"}
)

// kindsReadingField lists the kinds that read a field's setting.
func kindsReadingField(field string) []string {
	if o, ok := fitFieldOptions[field]; ok {
		return model.KindsReading(o)
	}
	return KindsReading(fitFieldTables[field])
}

// Usage completes each setting's help with the models that read it,
// unless every model does.
func (f *FitCommand) Usage() map[string]string {
	base := map[string]string{}
	for field, flag := range fitFieldFlags {
		base[flag] = fitUsage[flag]
		if ks := kindsReadingField(field); len(ks) < len(model.Kinds()) {
			base[flag] += " (" + strings.Join(ks, ", ") + ")"
		}
	}
	return base
}

// fitUsage are the helps of the settings some kinds read, which Usage
// completes with those kinds.
var fitUsage = map[string]string{
	"weighting":    "least-squares weights: relative (1/y), none, or ci (1/sigma from the records' CI95)",
	"trim":         "drop points more than this many robust SDs above the fit (one-sided, counted); 0 disables",
	"min-bytes":    "fit only sizes >= this (e.g. 64K): message size, packet size l, or h-relation",
	"max-bytes":    "fit only sizes <= this (e.g. 4M)",
	"op":           "k-k-access op, read or write (default: the only one present)",
	"network":      "emulated network of the k-k-access records, e.g. 'BF(2)' (default: the only one present)",
	"impl":         "aggregate implementation, mpi, textbook, mesh1d or mesh2d (default: the only one present)",
	"packet-bytes": "LogP packet size (default: the smallest PRTT size)",
	"max-segments": "most segments to consider",
	"split":        "data volumes D (bytes, comma list) for the optimal split k0, l0 (paper 000, section 7)",
	"hop-s":        "per-hop time t_h in seconds for paper 003's aggregate cost table",
}

// Validate checks the kind and every setting, and that the kind reads every
// setting given.
func (f *FitCommand) Validate() error {
	if !slices.Contains(model.Kinds(), f.Kind) {
		return opts.Badf("MODEL %q: want one of %s", f.Kind, strings.Join(model.Kinds(), ", "))
	}
	if _, _, err := f.options(); err != nil {
		return err
	}
	if _, err := f.splitVolumes(); err != nil {
		return err
	}
	for field := range fitFieldFlags {
		if f.Set.Has(field) && !slices.Contains(kindsReadingField(field), f.Kind) {
			return opts.Badf("{%s} applies to %s, not %s", field, strings.Join(kindsReadingField(field), ", "), f.Kind)
		}
	}
	if f.Plot != "" {
		if err := CheckPlotPath(f.Plot); err != nil {
			return opts.Field("Plot", f.Plot, "%v", err)
		}
	}
	return nil
}

// options turns the settings into model options for the kind; groups the
// kind does not read stay zero (model.Fit refuses them).
func (f *FitCommand) options() (model.Options, model.Holdout, error) {
	k, _ := model.Lookup(f.Kind)
	var o model.Options
	var h model.Holdout
	if f.Format != "table" && f.Format != "json" {
		return o, h, opts.Field("Format", f.Format, "want table or json")
	}
	w, err := model.ParseWeighting(f.Weighting)
	if err != nil {
		return o, h, opts.Field("Weighting", f.Weighting, "want relative, none or ci")
	}
	o.Weighting = w
	if h, err = model.ParseHoldout(f.Holdout); err != nil {
		return o, h, opts.Field("Holdout", f.Holdout, "want none, loo or every:N with N >= 2")
	}
	switch {
	case math.IsNaN(f.Trim) || f.Trim < 0:
		return o, h, opts.Field("Trim", f.Trim, "want a number of standard deviations >= 0 (0 disables trimming)")
	case !k.Reads(model.OptTrim):
	case f.Trim == 0:
		o.TrimSigma = -1
	default:
		o.TrimSigma = f.Trim
	}
	size := func(field, s string) (float64, error) {
		if s == "" {
			return 0, nil
		}
		n, err := opts.ParseSize(s)
		if err != nil {
			return 0, opts.Field(field, s, "%v", err)
		}
		return float64(n), nil
	}
	if o.MinBytes, err = size("MinBytes", f.MinBytes); err != nil {
		return o, h, err
	}
	if o.MaxBytes, err = size("MaxBytes", f.MaxBytes); err != nil {
		return o, h, err
	}
	if f.MaxBytes != "" && o.MaxBytes == 0 { // 0 would mean no bound, not "nothing"
		return o, h, opts.Field("MaxBytes", f.MaxBytes, "want a size > 0 such as 4M (leave the flag out for no upper bound)")
	}
	if o.MaxBytes > 0 && o.MaxBytes < o.MinBytes {
		return o, h, opts.Field("MaxBytes", f.MaxBytes, "is below {MinBytes} %s", f.MinBytes)
	}
	if o.PacketBytes, err = size("PacketBytes", f.PacketBytes); err != nil {
		return o, h, err
	}
	switch f.Op {
	case "", "read", "write":
		o.Op = f.Op
	default:
		return o, h, opts.Field("Op", f.Op, "want read or write")
	}
	o.Network = f.Network
	switch f.Impl {
	case "", "mpi", "textbook", "mesh1d", "mesh2d":
		o.Impl = f.Impl
	default:
		return o, h, opts.Field("Impl", f.Impl, "want mpi, textbook, mesh1d or mesh2d")
	}
	if f.MaxSegments < 1 || f.MaxSegments > 10 {
		return o, h, opts.Field("MaxSegments", f.MaxSegments, "want 1 to 10")
	}
	if k.Reads(model.OptSegments) {
		o.MaxSegments = f.MaxSegments
	}
	if math.IsNaN(f.HopSec) || math.IsInf(f.HopSec, 0) || f.HopSec < 0 {
		return o, h, opts.Field("HopSec", f.HopSec, "want a time in seconds >= 0")
	}
	return o, h, nil
}

// splitVolumes parses Split.
func (f *FitCommand) splitVolumes() ([]float64, error) {
	if f.Split == "" {
		return nil, nil
	}
	v, err := opts.ParseList(f.Split, "positive data volumes in bytes, e.g. 10000 or 4K,64K", func(s string) (float64, error) {
		n, err := opts.ParseSize(s)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, errors.New("0 bytes is not a data volume; volumes must be positive")
		}
		return float64(n), nil
	})
	if err != nil {
		return nil, opts.Field("Split", "", "%v", err)
	}
	return v, nil
}

// Run fits the kind to recs (read from Path) and writes the report, or the
// model's JSON, to stdout, and the plot; everything is computed before
// anything is written, so a failure leaves neither a partial table nor a
// plot. Findings about the records (a split without an interior optimum)
// go to stderr. Records without the needed pattern, and records too few
// or too alike to determine the model (model.ErrIllConditioned: one
// message size, one rank count), are bad input: fit measures nothing, so
// what it cannot determine is the file's, and more measurements fix it.
func (f *FitCommand) Run(recs []results.Record, stdout, stderr io.Writer) error {
	opt, hold, err := f.options()
	if err != nil {
		return err
	}
	volumes, _ := f.splitVolumes()
	m, err := model.Fit(f.Kind, recs, opt)
	if err != nil {
		if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) || errors.Is(err, model.ErrIllConditioned) {
			return opts.Badf("FILE %s: %v", f.Path, err)
		}
		return fmt.Errorf("fit %s: %w", f.Kind, err)
	}
	var val *model.Validation
	var valNote string
	if hold != (model.Holdout{}) {
		val, err = model.CrossValidate(f.Kind, recs, opt, hold)
		if err != nil {
			if f.Set.Has("Holdout") {
				return fmt.Errorf("--holdout %s: %w", f.Holdout, err)
			}
			val, valNote = nil, "cross-validation skipped: "+err.Error()
		}
	}
	var splits []*model.Split
	if len(volumes) > 0 {
		// A fit without an interior optimum is a finding about the
		// machine, not a failure of the fit: it is said next to the table.
		tr := m.(*model.Trilinear)
		for _, d := range volumes {
			s, err := model.OptimalSplit(tr, d)
			if err != nil {
				fmt.Fprintf(stderr, "commcost: --split %g: %v\n", d, err)
				continue
			}
			splits = append(splits, s)
		}
	}
	// The records' backend goes into the file: replay and export simgrid
	// refuse a fit of goroutine ranks (--backend local).
	var file bytes.Buffer
	meta := model.FileMeta{Backend: model.FitBackend(f.Kind, m, recs)}
	if err := writeFitJSON(&file, m, val, meta, splits); err != nil {
		return err
	}
	// A fit every reader of its file would refuse (a negative time per
	// byte from records that do not follow the model) is reported as
	// such in either format, not as a model with predictions below 0.
	if _, _, err := model.Unmarshal(file.Bytes()); err != nil {
		return opts.Badf("FILE %s: the %s fit cannot be a model file, whose readers would refuse it: %v (fit the sizes that follow the model: --min-bytes, --max-bytes)", f.Path, f.Kind, err)
	}
	var out bytes.Buffer
	switch f.Format {
	case "json":
		out = file
	default:
		fr := &Fit{Source: filepath.Base(f.Path), Model: m, Validation: val, ValidationNote: valNote,
			Records: recs, Splits: splits, HopSec: f.HopSec}
		if err := WriteFit(&out, fr); err != nil {
			return err
		}
	}
	if f.Plot != "" {
		title := fmt.Sprintf("commcost fit %s %s: measured (points), model (lines)", f.Kind, filepath.Base(f.Path))
		if err := WritePlot(m, recs, f.Plot, title); err != nil {
			return fmt.Errorf("--plot %s: %w", f.Plot, err)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}

// writeFitJSON prints model.MarshalMeta's form, with the optimal splits added
// under "splits" (which model.Unmarshal reads past).
func writeFitJSON(w io.Writer, m model.Model, val *model.Validation, meta model.FileMeta, splits []*model.Split) error {
	data, err := model.MarshalMeta(m, val, meta)
	if err != nil {
		return err
	}
	if len(splits) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		sp, err := json.Marshal(splits)
		if err != nil {
			return err
		}
		obj["splits"] = sp
		if data, err = json.MarshalIndent(obj, "", "  "); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
