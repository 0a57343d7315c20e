package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// runHoldout is the cross-validation of every fit in a run report: one
// point in four held out (interleaved sizes, or a fixed-seed quarter of
// the parameter cells).
var runHoldout = model.Holdout{Every: 4}

// Run is a run directory's report, computed from its records alone.
type Run struct {
	// Markdown is report.md.
	Markdown []byte
	// Fits is what `commcost suite` prints when it ends: the model part
	// of the report (fit sections and model comparisons), then Summary.
	Fits []byte
	// Summary is the section report.md opens with (writeSummary).
	Summary []byte
	// Plots are the images of plots/, by file name.
	Plots []PlotFile
	// Truncated says the records file ended in an incomplete record
	// (an interrupted run), which was left out.
	Truncated bool
}

// PlotFile is one image of plots/.
type PlotFile struct {
	Name string
	Data []byte
}

// fittedModel is one model of the run report.
type fittedModel struct {
	kind       model.Kind
	m          model.Model
	recs       []results.Record  // the records of its benches
	validation *model.Validation // its held-out points, nil when not validated
}

// BuildRun renders the report of a run from its records: the summary a
// reader reads first (writeSummary: machine and launch, latency at 8 B,
// bandwidth at 1 MiB, the best model per pattern family and per
// application, what the records say about trusting them, the latency and
// bandwidth plots), the table of every record, the spread between launches when the records
// come from several (LaunchSpreads), then every registered model kind whose
// benches are among the records, fitted with the default options and
// validated on held-out points (a kind that cannot be fitted says why),
// with a plot of its fit, for each bench the table of every fitted model
// that predicts it against the measurements, and the figures of the
// papers the records hold data for (Figures), each with its caption. The report holds
// nothing that is not computed from recs, so it is the same whenever it
// is rebuilt from the same records. truncated says the records come from
// a file whose last record was cut off (ReadRunDir), which the report
// then says.
func BuildRun(recs []results.Record, truncated bool) (*Run, error) {
	if len(recs) == 0 {
		return nil, errors.New("no records")
	}
	var head, md bytes.Buffer
	writeRunSummary(&head, recs)
	if truncated {
		fmt.Fprintf(&head, "The last line of %s is an incomplete record (an interrupted run); it is left out.\n\n", results.RecordsFile)
	}
	fmt.Fprintf(&md, "## Every record\n\n")
	if err := results.RenderTable(&md, recs, results.TableOptions{Markdown: true}); err != nil {
		return nil, err
	}
	if sp := LaunchSpreads(recs); len(sp) > 0 {
		fmt.Fprintf(&md, "\n## Spread between launches\n\n")
		fmt.Fprintln(&md, "The records come from several launches (meta.launch): each point's spread between the launches next to the spread within one launch (what a record's ci95 describes).")
		fmt.Fprintln(&md)
		if err := WriteLaunchSpreads(&md, sp, true); err != nil {
			return nil, err
		}
	}
	run := &Run{Truncated: truncated}
	var fits bytes.Buffer
	var fitted []fittedModel
	present := benchesPresent(recs)
	for _, k := range model.Registered() {
		var sel []results.Record
		var used []string
		for _, b := range k.Benches {
			if n := present[b]; n > 0 {
				used = append(used, b)
			}
		}
		if len(used) == 0 {
			continue
		}
		for _, r := range recs {
			if slices.Contains(k.Benches, r.Bench) {
				sel = append(sel, r)
			}
		}
		m, err := model.Fit(k.Name, sel, model.Options{})
		if u, ok := m.(model.FittedBencher); ok && err == nil {
			used = u.FittedBenches()
		}
		fmt.Fprintf(&fits, "\n## %s model (%s records)\n\n```\n", k.Name, strings.Join(used, ", "))
		if err != nil {
			fmt.Fprintf(&fits, "not fitted: %v\n```\n", err)
			continue
		}
		f := &Fit{Source: results.RecordsFile, Model: m, Records: sel}
		if f.Validation, err = model.CrossValidate(k.Name, sel, model.Options{}, runHoldout); err != nil {
			f.Validation, f.ValidationNote = nil, "cross-validation skipped: "+err.Error()
		}
		if err := WriteFit(&fits, f); err != nil {
			return nil, fmt.Errorf("%s fit report: %w", k.Name, err)
		}
		fmt.Fprintln(&fits, "```")
		fitted = append(fitted, fittedModel{kind: k, m: m, recs: sel, validation: f.Validation})
		img, err := Plot(m, sel, "png", fmt.Sprintf("%s model fitted to the %s records", k.Name, strings.Join(used, ", ")))
		switch {
		case errors.Is(err, ErrNothingToPlot):
		case err != nil:
			return nil, fmt.Errorf("%s plot: %w", k.Name, err)
		default:
			name := k.Name + ".png"
			run.Plots = append(run.Plots, PlotFile{Name: name, Data: img})
			fmt.Fprintf(&fits, "\n![%s](%s/%s)\n", k.Name, results.PlotsDir, name)
		}
	}
	for _, bench := range benchOrder(recs) {
		if err := writeBenchComparison(&fits, bench, recs, fitted); err != nil {
			return nil, err
		}
	}
	var annotated []results.Record
	if present[results.BenchApp] > 0 {
		var err error
		if annotated, err = writeRunApps(&fits, run, recs, fitted); err != nil {
			return nil, err
		}
		if err := writeAppRankings(&fits, recs, run); err != nil {
			return nil, err
		}
	}
	var named []NamedModel
	for _, f := range fitted {
		named = append(named, NamedModel{Label: f.kind.Name, Model: f.m})
	}
	figs, err := Figures(recs, named)
	if err != nil {
		return nil, err
	}
	if len(figs) > 0 {
		fmt.Fprintf(&fits, "\n## The papers' figures from these records\n\n")
		for _, f := range figs {
			run.Plots = append(run.Plots, f.PlotFile)
			fmt.Fprintf(&fits, "%s\n\n![%s](%s/%s)\n\n", f.Caption, f.Name, results.PlotsDir, f.Name)
		}
	}
	var summary bytes.Buffer
	if err := writeSummary(&summary, recs, fitted, annotated); err != nil {
		return nil, err
	}
	if err := writePt2ptPlots(&summary, run, recs); err != nil {
		return nil, err
	}
	md.Write(fits.Bytes())
	run.Summary = summary.Bytes()
	run.Markdown = slices.Concat(head.Bytes(), run.Summary, md.Bytes())
	// What suite prints ends with the summary, the part read first.
	run.Fits = slices.Concat(fits.Bytes(), []byte("\n"), run.Summary)
	return run, nil
}

// writeRunSummary is report.md's heading: where it ran and when (the first
// record's hosts, the first date), and the records of each bench.
func writeRunSummary(w io.Writer, recs []results.Record) {
	m := recs[0].Meta
	first, _ := dateRange(recs)
	fmt.Fprintf(w, "# commcost run on %s, %s\n\n", orUnknown(strings.Join(m.Hosts, ", ")), orUnknown(first))
	var counts []string
	present := benchesPresent(recs)
	for _, b := range benchOrder(recs) {
		counts = append(counts, fmt.Sprintf("%s %d", b, present[b]))
	}
	fmt.Fprintf(w, "%d records (%s): %s.\n\n", len(recs), results.RecordsFile, strings.Join(counts, ", "))
}

// writeBenchComparison tables every fitted model that predicts the bench
// against its measurements (ModelsOnBench), unless only one model
// predicts it and that model was fitted from it (its section already
// shows its held-out points).
func writeBenchComparison(w io.Writer, bench string, recs []results.Record, fitted []fittedModel) error {
	var models []NamedModel
	for _, f := range fitted {
		models = append(models, NamedModel{Label: f.kind.Name, Model: f.m})
	}
	bm, ok := ModelsOnBench(bench, recs, models)
	if !ok {
		return nil
	}
	if len(bm.Comparison.Models) == 1 {
		for _, f := range fitted {
			if f.kind.Name == bm.Comparison.Models[0] && slices.Contains(f.kind.Benches, bench) {
				return nil
			}
		}
	}
	fmt.Fprintf(w, "\n## Models compared on %s records\n\n", bench)
	fmt.Fprintln(w, "Each model as fitted above, at every measured point (the median of its records): in-sample for the models fitted from these records, a prediction across patterns for the others; * marks the closest prediction of each point.")
	fmt.Fprint(w, "\n```\n")
	if err := bm.Comparison.Write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "```")
	return nil
}

// WriteRunDir writes a run's report.md and plots/ into dir, each file
// whole or not at all: the plots go to a new temporary directory and
// report.md to a temporary file first; only when all are written does
// plots/ get replaced and report.md renamed into place. Errors name the
// file.
func WriteRunDir(dir string, run *Run) error {
	report := filepath.Join(dir, results.ReportFile)
	commit, abort, err := stageFile(report, run.Markdown)
	if err != nil {
		return err
	}
	plots := filepath.Join(dir, results.PlotsDir)
	tmp, err := os.MkdirTemp(dir, "."+results.PlotsDir+".tmp-*")
	if err != nil {
		abort()
		return fmt.Errorf("write %s: %w", plots, err)
	}
	fail := func(err error) error {
		abort()
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail(fmt.Errorf("write %s: %w", plots, err))
	}
	for _, p := range run.Plots {
		if err := os.WriteFile(filepath.Join(tmp, p.Name), p.Data, 0o644); err != nil {
			return fail(fmt.Errorf("write %s: %w", filepath.Join(plots, p.Name), err))
		}
	}
	// Swap plots/: the old one aside, the new one in; then report.md; the
	// old plots go only when both are in place, and come back if
	// report.md cannot be renamed.
	old := ""
	if _, err := os.Lstat(plots); err == nil {
		old = tmp + ".old"
		if err := os.Rename(plots, old); err != nil {
			return fail(fmt.Errorf("write %s: %w", plots, err))
		}
	}
	restore := func() {
		if old != "" {
			os.Rename(old, plots)
		}
	}
	if err := os.Rename(tmp, plots); err != nil {
		restore()
		return fail(fmt.Errorf("write %s: %w", plots, err))
	}
	if err := commit(); err != nil {
		os.RemoveAll(plots)
		restore()
		return err
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("write %s: removing the previous plots: %w", plots, err)
		}
	}
	return nil
}

// ReadRunDir reads dir's records.jsonl. A file cut off in its last record
// (an interrupted run) is accepted without that record: Run.Truncated of
// the built report says so, and the error is nil.
func ReadRunDir(dir string) (recs []results.Record, truncated bool, err error) {
	path := filepath.Join(dir, results.RecordsFile)
	recs, torn, err := results.ReadRecordsFile(path)
	if err != nil {
		return nil, false, err
	}
	if len(recs) == 0 {
		return nil, false, fmt.Errorf("%s holds no records", path)
	}
	return recs, torn != nil, nil
}

// RegenerateRunDir rebuilds dir's report.md and plots/ from its
// records.jsonl alone.
func RegenerateRunDir(dir string) (*Run, error) {
	recs, truncated, err := ReadRunDir(dir)
	if err != nil {
		return nil, err
	}
	run, err := BuildRun(recs, truncated)
	if err != nil {
		return nil, err
	}
	if err := WriteRunDir(dir, run); err != nil {
		return nil, err
	}
	return run, nil
}

// benchesPresent counts the records of each bench.
func benchesPresent(recs []results.Record) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		n[r.Bench]++
	}
	return n
}

// benchOrder lists the benches in the order they first appear.
func benchOrder(recs []results.Record) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range recs {
		if !seen[r.Bench] {
			seen[r.Bench] = true
			out = append(out, r.Bench)
		}
	}
	return out
}

// paramKeys lists the parameter keys of the instances, sorted.
func paramKeys(ins []model.Instance) []string {
	ps := make([]results.Params, len(ins))
	for i, in := range ins {
		ps[i] = in.Params
	}
	return unionKeys(ps...)
}

// unionKeys is the sorted union of the parameter names of ps.
func unionKeys(ps ...results.Params) []string {
	set := map[string]bool{}
	for _, p := range ps {
		for k := range p {
			set[k] = true
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// paramCell formats one parameter of a point: sizes (bytes, l, ...bytes)
// as 8, 1K, 1M; other numbers in their shortest form; strings as they are.
func paramCell(in model.Instance, k string) string {
	v, ok := in.Params[k]
	if !ok {
		return "-"
	}
	if f, err := in.Num(k); err == nil {
		if k == "l" || strings.HasSuffix(k, "bytes") {
			return results.FormatBytes(f)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// instanceKey identifies a point across models.
func instanceKey(in model.Instance) string {
	return fmt.Sprintf("%s %s ranks=%d", in.Pattern, ParamList(in.Params), in.Ranks)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// writeRunApps is the application section of a run report: every
// communication phase of the application records predicted by every model
// fitted above that describes k-k-accesses (paper 000's programs state
// their phases in them), each model on its own, and Table 2 of the errors,
// with the plot of predicted against measured (plots/apps.png). A run's
// sweep that measured only reads predicts the programs' writes as reads
// (Predictor.OpFallback), and the section says how many.
func writeRunApps(w io.Writer, run *Run, recs []results.Record, fitted []fittedModel) ([]results.Record, error) {
	var preds []Predictor
	for _, f := range fitted {
		if len(kkOps(f.m)) > 0 {
			preds = append(preds, Predictor{Name: f.kind.Name, Models: []model.Model{f.m}, Sources: []string{"fitted above"}, OpFallback: "read"})
		}
	}
	var app []results.Record
	for _, r := range recs {
		// Paper 000's programs (k-k-accesses); the message-passing ones
		// are ranked by writeAppRankings from their stored predictions.
		if r.Bench == results.BenchApp && !messagePassing(r) {
			c := r
			c.Derived = nil // predictions are made here, from the fits above
			app = append(app, c)
		}
	}
	fmt.Fprintf(w, "\n## Applications\n\n")
	fmt.Fprintln(w, "Every communication phase of the programs, measured (the median over repetitions of the slowest rank) against each model fitted above that describes its k-k-accesses; error = (T_pred - T_meas)/T_meas, signed (paper 000, section 6.5).")
	if len(preds) == 0 {
		fmt.Fprintln(w, "\nNo model fitted above describes k-k-accesses, so no phase is predicted.")
	}
	for _, n := range AnnotateApps(app, preds) {
		fmt.Fprintf(w, "\n- %s", n)
	}
	fmt.Fprint(w, "\n\n")
	if err := WriteApps(w, app, true); err != nil {
		return nil, err
	}
	img, err := PlotApps(app, "png")
	switch {
	case errors.Is(err, ErrNothingToPlot):
	case err != nil:
		return nil, fmt.Errorf("applications plot: %w", err)
	default:
		const name = "apps.png"
		run.Plots = append(run.Plots, PlotFile{Name: name, Data: img})
		fmt.Fprintf(w, "\n![applications](%s/%s)\n", results.PlotsDir, name)
	}
	return app, nil
}
