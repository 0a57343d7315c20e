package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/report"
)

func init() {
	register(command{
		Name:    "fit",
		Summary: "fit a cost model to a JSON Lines file (fit -h lists the models)",
		Run:     runFit,
	})
}

const fitUsage = `usage: commcost fit MODEL FILE.jsonl [flags]

Reads the records of FILE.jsonl the model is fitted from (other benches are
ignored), fits on per-point medians with relative weights by QR least
squares, and prints parameters with standard errors and 95% confidence
intervals, the fit quality and held-out validation; --format json prints the
model in the form 'commcost predict' reads. Records without the needed
pattern exit with status 2; a design that cannot determine the model (too
few levels, ill-conditioned) exits with status 1 and names what is missing.
A flag the model does not read (say --op for hockney) is refused.

MODEL is one of:
`

// fitFlags are the options of commcost fit.
type fitFlags struct {
	format      string
	plot        string
	holdout     string
	weighting   string
	trim        float64
	minBytes    string
	maxBytes    string
	op          string
	network     string
	impl        string
	packetBytes string
	maxSegments int
	split       string
	hopSec      float64
}

func (f *fitFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "table", "output: table or json")
	fs.StringVar(&f.plot, "plot", "", "write measured points and fitted curves to this image (.png, .svg, .pdf)")
	fs.StringVar(&f.holdout, "holdout", "every:4", "cross-validation: none, loo (leave one out) or every:N (hold out one point in N)")
	fs.StringVar(&f.weighting, "weighting", "relative", "least-squares weights: relative (1/y), none, or ci (1/sigma from the records' CI95)"+readBy("weighting"))
	fs.Float64Var(&f.trim, "trim", 5, "drop points more than this many robust SDs above the fit (one-sided, counted); 0 disables"+readBy("trim"))
	fs.StringVar(&f.minBytes, "min-bytes", "", "fit only sizes >= this (e.g. 64K): message size, packet size l, or h-relation"+readBy("min-bytes"))
	fs.StringVar(&f.maxBytes, "max-bytes", "", "fit only sizes <= this (e.g. 4M)"+readBy("max-bytes"))
	fs.StringVar(&f.op, "op", "", "k-k-access op, read or write (default: the only one present)"+readBy("op"))
	fs.StringVar(&f.network, "network", "", "emulated network of the k-k-access records, e.g. 'BF(2)' (default: the only one present)"+readBy("network"))
	fs.StringVar(&f.impl, "impl", "", "aggregate implementation, mpi or textbook (default: the only one present)"+readBy("impl"))
	fs.StringVar(&f.packetBytes, "packet-bytes", "", "LogP packet size (default: the smallest PRTT size)"+readBy("packet-bytes"))
	fs.IntVar(&f.maxSegments, "max-segments", 4, "most segments to consider"+readBy("max-segments"))
	fs.StringVar(&f.split, "split", "", "data volumes D (bytes, comma list) for the optimal split k0, l0 (paper 000, section 7)"+readBy("split"))
	fs.Float64Var(&f.hopSec, "hop-s", 0, "per-hop time t_h in seconds for paper 003's aggregate cost table"+readBy("hop-s"))
}

// fitFlagOptions maps the fit flags to the model option groups they set,
// fitFlagTables to the report table inputs: the registries say which kinds
// read them, so a flag the chosen kind ignores is refused, not dropped.
var (
	fitFlagOptions = map[string]model.Option{
		"weighting": model.OptWeighting, "trim": model.OptTrim,
		"min-bytes": model.OptSizeRange, "max-bytes": model.OptSizeRange,
		"op": model.OptOp, "network": model.OptNetwork, "impl": model.OptImpl,
		"max-segments": model.OptSegments, "packet-bytes": model.OptPacketBytes,
	}
	fitFlagTables = map[string]report.TableOption{"split": report.TableSplits, "hop-s": report.TableHop}
)

// kindsReading lists the kinds that read a fit flag.
func kindsReading(flagName string) []string {
	if o, ok := fitFlagOptions[flagName]; ok {
		return model.KindsReading(o)
	}
	return report.KindsReading(fitFlagTables[flagName])
}

// readBy completes a flag's help with the models that read it, unless
// every model does.
func readBy(flagName string) string {
	ks := kindsReading(flagName)
	if len(ks) == len(model.Kinds()) {
		return ""
	}
	return " (" + strings.Join(ks, ", ") + ")"
}

// checkApplies refuses a flag given explicitly that the kind does not read.
func checkApplies(fs *flag.FlagSet, kind string) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		_, opt := fitFlagOptions[fl.Name]
		_, tab := fitFlagTables[fl.Name]
		if err != nil || !opt && !tab {
			return
		}
		ks := kindsReading(fl.Name)
		if !slices.Contains(ks, kind) {
			err = usagef("--%s applies to %s, not %s", fl.Name, strings.Join(ks, ", "), kind)
		}
	})
	return err
}

// options turns the flags into model options for kind, naming the flag on
// error; groups the kind does not read stay zero (model.Fit refuses them).
func (f *fitFlags) options(kind string) (model.Options, model.Holdout, error) {
	k, _ := model.Lookup(kind)
	var o model.Options
	var h model.Holdout
	if f.format != "table" && f.format != "json" {
		return o, h, usagef("--format %s: want table or json", f.format)
	}
	w, err := model.ParseWeighting(f.weighting)
	if err != nil {
		return o, h, usagef("--weighting %s: want relative, none or ci", f.weighting)
	}
	o.Weighting = w
	if h, err = model.ParseHoldout(f.holdout); err != nil {
		return o, h, usagef("--holdout %s: want none, loo or every:N with N >= 2", f.holdout)
	}
	switch {
	case math.IsNaN(f.trim) || f.trim < 0:
		return o, h, usagef("--trim %g: want a number of standard deviations >= 0 (0 disables trimming)", f.trim)
	case !k.Reads(model.OptTrim):
	case f.trim == 0:
		o.TrimSigma = -1
	default:
		o.TrimSigma = f.trim
	}
	size := func(name, s string) (float64, error) {
		if s == "" {
			return 0, nil
		}
		n, err := parseSize(s)
		if err != nil {
			return 0, usagef("--%s %s: %v", name, s, err)
		}
		return float64(n), nil
	}
	if o.MinBytes, err = size("min-bytes", f.minBytes); err != nil {
		return o, h, err
	}
	if o.MaxBytes, err = size("max-bytes", f.maxBytes); err != nil {
		return o, h, err
	}
	if o.MaxBytes > 0 && o.MaxBytes < o.MinBytes {
		return o, h, usagef("--max-bytes %s is below --min-bytes %s", f.maxBytes, f.minBytes)
	}
	if o.PacketBytes, err = size("packet-bytes", f.packetBytes); err != nil {
		return o, h, err
	}
	switch f.op {
	case "", "read", "write":
		o.Op = f.op
	default:
		return o, h, usagef("--op %s: want read or write", f.op)
	}
	o.Network = f.network
	switch f.impl {
	case "", "mpi", "textbook":
		o.Impl = f.impl
	default:
		return o, h, usagef("--impl %s: want mpi or textbook", f.impl)
	}
	if f.maxSegments < 1 || f.maxSegments > 10 {
		return o, h, usagef("--max-segments %d: want 1 to 10", f.maxSegments)
	}
	if k.Reads(model.OptSegments) {
		o.MaxSegments = f.maxSegments
	}
	if math.IsNaN(f.hopSec) || math.IsInf(f.hopSec, 0) || f.hopSec < 0 {
		return o, h, usagef("--hop-s %g: want a time in seconds >= 0", f.hopSec)
	}
	return o, h, nil
}

// splitVolumes parses --split.
func (f *fitFlags) splitVolumes() ([]float64, error) {
	if f.split == "" {
		return nil, nil
	}
	return parseListOf("split", f.split, "positive data volumes in bytes, e.g. 10000 or 4K,64K", func(s string) (float64, error) {
		n, err := parseSize(s)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, errors.New("0 bytes is not a data volume; volumes must be positive")
		}
		return float64(n), nil
	})
}

func runFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fit", stderr)
	var f fitFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), fitUsage)
		report.WriteKinds(fs.Output())
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("fit wants MODEL and FILE.jsonl, got %d argument(s); usage: commcost fit %s FILE.jsonl [flags]",
			len(pos), strings.Join(model.Kinds(), "|"))
	}
	kind, path := pos[0], pos[1]
	if !slices.Contains(model.Kinds(), kind) {
		return usagef("MODEL %q: want one of %s", kind, strings.Join(model.Kinds(), ", "))
	}
	opt, hold, err := f.options(kind)
	if err != nil {
		return err
	}
	volumes, err := f.splitVolumes()
	if err != nil {
		return err
	}
	if err := checkApplies(fs, kind); err != nil {
		return err
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return err
		}
	}
	recs, err := readRecordsFile("FILE", path, stderr)
	if err != nil {
		return err
	}
	m, err := model.Fit(kind, recs, opt)
	if err != nil {
		if errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord) {
			return usagef("FILE %s: %v", path, err)
		}
		return fmt.Errorf("fit %s: %w", kind, err)
	}
	var val *model.Validation
	var valNote string
	if hold != (model.Holdout{}) {
		val, err = model.CrossValidate(kind, recs, opt, hold)
		if err != nil {
			explicit := false
			fs.Visit(func(fl *flag.Flag) { explicit = explicit || fl.Name == "holdout" })
			if explicit {
				return fmt.Errorf("--holdout %s: %w", f.holdout, err)
			}
			val, valNote = nil, "cross-validation skipped: "+err.Error()
		}
	}
	var splits []*model.Split
	if len(volumes) > 0 {
		// A fit without an interior optimum is a finding about the
		// machine, not a failure of the fit: report it next to the table.
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
	// Everything is computed before anything is written, so a failure
	// leaves neither a partial table nor a plot behind.
	var out bytes.Buffer
	switch f.format {
	case "json":
		if err := writeFitJSON(&out, m, val, splits); err != nil {
			return err
		}
	default:
		fr := &report.Fit{Source: filepath.Base(path), Model: m, Validation: val, ValidationNote: valNote,
			Records: recs, Splits: splits, HopSec: f.hopSec}
		if err := report.WriteFit(&out, fr); err != nil {
			return err
		}
	}
	if f.plot != "" {
		title := fmt.Sprintf("commcost fit %s %s: measured (points), model (lines)", kind, filepath.Base(path))
		if err := report.WritePlot(m, recs, f.plot, title); err != nil {
			return fmt.Errorf("--plot %s: %w", f.plot, err)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}

// checkPlotPath refuses a plot file the plotter cannot write, before
// anything is fitted.
func checkPlotPath(p string) error {
	if _, err := report.PlotFormat(p); err != nil {
		return usagef("--plot %s: want a file name ending in .png, .svg, .pdf, .eps, .jpg or .tif", p)
	}
	dir := filepath.Dir(p)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usagef("--plot %s: directory %s does not exist", p, dir)
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return usagef("--plot %s: is a directory", p)
	}
	return nil
}

// writeFitJSON prints model.Marshal's form, with the optimal splits added
// under "splits" (model.Unmarshal ignores the extra key).
func writeFitJSON(w io.Writer, m model.Model, val *model.Validation, splits []*model.Split) error {
	data, err := model.Marshal(m, val)
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
