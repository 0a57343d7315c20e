package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
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
	fmt.Fprintf(w, "# commcost run on %s, %s\n\n", results.EscapeMarkdown(orUnknown(strings.Join(m.Hosts, ", "))), results.EscapeMarkdown(orUnknown(first)))
	var counts []string
	present := benchesPresent(recs)
	for _, b := range benchOrder(recs) {
		counts = append(counts, fmt.Sprintf("%s %d", results.EscapeMarkdown(b), present[b]))
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

// ManifestFile, inside plots/, lists the plots WriteRunDir wrote there,
// one name a line: the next WriteRunDir removes those it no longer writes,
// and nothing else of plots/ (a user's own files stay).
const ManifestFile = ".commcost-plots"

// WriteRunDir writes a run's report.md and plots/ into dir, each file
// whole or not at all (a temporary file renamed into place). Every file
// is staged before any is put in place, so a failure to stage one leaves
// dir as it was; report.md goes in first, then the plots, then the
// manifest (ManifestFile), and last the plots of the previous manifest
// that this run no longer makes are removed. Nothing else under plots/ is
// touched. Errors name the file.
//
// Bad input (an *opts.BadInput): a report.md that is a directory, a
// link or a file commcost did not write (its first line is not
// reportHeading's); a
// plots/ that is a symbolic link or a file, not a directory of this
// run's; a file in plots/ with a plot's name that the manifest does not
// list (the user's, not a plot of commcost's) or that is not a regular
// file; a manifest naming a path outside plots/ or a file not a PNG.
func WriteRunDir(dir string, run *Run) error {
	plots := filepath.Join(dir, results.PlotsDir)
	st, err := os.Lstat(plots)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: %w", plots, err)
	case exists && st.Mode()&fs.ModeSymlink != 0:
		return opts.Badf("%s is a symbolic link: commcost writes its plots only into a directory of the run's own (remove the link, or move what it points to, and run again)", plots)
	case exists && !st.IsDir():
		return opts.Badf("%s is not a directory: commcost writes its plots into %s/ (move the file away and run again)", plots, results.PlotsDir)
	}
	// report.md is renamed into place, which fails on a directory only
	// after the plots are staged: refuse it first
	if rst, err := os.Lstat(filepath.Join(dir, results.ReportFile)); err == nil && rst.IsDir() {
		return opts.Badf("%s is a directory, not a regular file: commcost writes its report there (move it away and run again)", filepath.Join(dir, results.ReportFile))
	}
	if err := results.CheckOwn(filepath.Join(dir, results.ReportFile), "report", len(reportHeading), ownReport); err != nil {
		return err
	}
	previous, haveManifest, err := readManifest(plots)
	if err != nil {
		return err
	}
	names := make(map[string]bool, len(run.Plots))
	for _, p := range run.Plots {
		if !safePlotName(p.Name) || p.Name == ManifestFile || names[p.Name] {
			return fmt.Errorf("report: plot name %q is not one new file name of plots/", p.Name)
		}
		names[p.Name] = true
		path := filepath.Join(plots, p.Name)
		if fst, err := os.Lstat(path); err == nil {
			switch {
			case !fst.Mode().IsRegular():
				return opts.Badf("%s is not a regular file: commcost would write its plot %s there (move it away and run again)", path, p.Name)
			case haveManifest && !previous[p.Name]:
				return opts.Badf("%s is not a plot commcost wrote (%s does not list it), and this report makes a plot of that name: move the file away and run again", path, filepath.Join(plots, ManifestFile))
			case ownPNGName(p.Name):
				// Listed or not, only an image commcost marked is its own:
				// a user may have saved a file of their own over a plot
				// (an unmarked PNG, even one a report links, may be
				// theirs).
				if err := CheckOwnPlot(path); err != nil {
					return err
				}
			}
		}
	}
	var aborts []func()
	abortAll := func() {
		for _, a := range aborts {
			a()
		}
	}
	commitReport, abortReport, err := stageFile(filepath.Join(dir, results.ReportFile), run.Markdown)
	if err != nil {
		return err
	}
	aborts = append(aborts, abortReport)
	// Without a plots/ the plots go into a new directory beside it,
	// renamed into place with the rest: a failure leaves no plots/ behind.
	into, newDir := plots, ""
	if !exists {
		if newDir, err = os.MkdirTemp(dir, "."+results.PlotsDir+".tmp-*"); err == nil {
			err = os.Chmod(newDir, 0o755)
		}
		if err != nil {
			abortAll()
			if newDir != "" {
				os.RemoveAll(newDir)
			}
			return fmt.Errorf("write %s: %w", plots, err)
		}
		into = newDir
		aborts = append(aborts, func() { os.RemoveAll(newDir) })
	}
	var commits []func() error
	for _, p := range run.Plots {
		commit, abort, err := stageFile(filepath.Join(into, p.Name), p.Data)
		if err != nil {
			abortAll()
			return err
		}
		commits, aborts = append(commits, commit), append(aborts, abort)
	}
	commitManifest, abortManifest, err := stageFile(filepath.Join(into, ManifestFile), manifest(run.Plots))
	if err != nil {
		abortAll()
		return err
	}
	aborts = append(aborts, abortManifest)
	if err := commitReport(); err != nil {
		abortAll()
		return err
	}
	if newDir != "" {
		// The staged files' own renames first (within the new directory),
		// then the directory into place.
		for _, commit := range append(commits, commitManifest) {
			if err := commit(); err != nil {
				os.RemoveAll(newDir)
				return err
			}
		}
		if err := os.Rename(newDir, plots); err != nil {
			os.RemoveAll(newDir)
			return fmt.Errorf("write %s: %w", plots, err)
		}
		return nil
	}
	for i, commit := range commits {
		if err := commit(); err != nil {
			for _, a := range aborts[i+2:] {
				a()
			}
			return err
		}
	}
	if err := commitManifest(); err != nil {
		return err
	}
	for name := range previous {
		if names[name] {
			continue
		}
		path := filepath.Join(plots, name)
		if CheckOwnPlot(path) != nil {
			continue // a file of the user's saved over an old plot stays
		}
		if fst, err := os.Lstat(path); err == nil && fst.Mode().IsRegular() {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("write %s: removing the previous plot %s: %w", plots, name, err)
			}
		}
	}
	return nil
}

// reportHeading starts every report.md commcost writes (writeRunSummary's
// heading; before it, suite's "# commcost run DIR").
const reportHeading = "# commcost run "

// ownReport reports whether a report.md starting with head is one commcost
// wrote: only those are replaced.
func ownReport(head []byte) bool { return string(head) == reportHeading }

// ownPNGName reports whether a plot of this name is a PNG, which carries
// commcost's mark (MarkPNG).
func ownPNGName(name string) bool { return strings.EqualFold(filepath.Ext(name), ".png") }

// safePlotName reports whether name is one file name fit for plots/: a
// single path element, not hidden and not "." or "..".
func safePlotName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && filepath.Base(name) == name && !strings.ContainsAny(name, `/\`)
}

// manifest is the content of ManifestFile for plots.
func manifest(plots []PlotFile) []byte {
	var b bytes.Buffer
	b.WriteString("# the plots commcost report wrote here; the next report removes these and nothing else\n")
	for _, p := range plots {
		b.WriteString(p.Name)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readManifest reads plots/ManifestFile: the names it lists, and whether
// it exists. A plots/ without one (a run directory of an older commcost,
// or one made by results.NewRunDir) has no plot to remove. A name that is
// not one PNG file of plots/ is refused: the manifest is a file in the
// run directory like any other, and removing what it names must not reach
// outside plots/ nor a file of another kind (commcost draws only PNGs).
func readManifest(plots string) (map[string]bool, bool, error) {
	path := filepath.Join(plots, ManifestFile)
	data, err := results.ReadRegularFile(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, opts.Badf("%s: %v (a list of the plots commcost wrote; remove it and run again)", path, err)
	}
	names := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !safePlotName(line) || line == ManifestFile || !ownPNGName(line) {
			return nil, false, opts.Badf("%s line %d: %q is not a file name in %s (remove the manifest and run again)", path, i+1, results.Printable(line), plots)
		}
		names[line] = true
	}
	return names, true, nil
}

// ReadRunDir reads dir's records.jsonl. A file cut off in its last record
// (an interrupted run) is accepted without that record: Run.Truncated of
// the built report says so, and the error is nil.
func ReadRunDir(dir string) (recs []results.Record, truncated bool, err error) {
	return readRunDir(dir, results.ReadFactor)
}

// ReportReadFactor is report's peak memory per byte of the run's records
// file: the records, and the tables, groups and plots BuildRun makes of
// them. Measured: a peak of 6.7 times the file for 100,000 ping-pong
// records with the collector near its limit (GOGC=10), against 2.5 for
// the records alone; under ulimit -v a report of 81 MB of them still ran
// out at 8 (its large transient slices), so the bound leaves room.
const ReportReadFactor = 10

// ReadReportDir is ReadRunDir for building a report of dir (BuildRun):
// its read demand is ReportReadFactor times the file.
func ReadReportDir(dir string) (recs []results.Record, truncated bool, err error) {
	return readRunDir(dir, ReportReadFactor)
}

// readRunDir is ReadRunDir with the read demand's factor. A dir that is
// a file is refused as not a run directory, not as the bare "open
// FILE/records.jsonl: not a directory".
func readRunDir(dir string, factor float64) (recs []results.Record, truncated bool, err error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, false, fmt.Errorf("%s is not a directory (want a run directory holding %s)", dir, results.RecordsFile)
	}
	path := filepath.Join(dir, results.RecordsFile)
	recs, torn, err := results.ReadRecordsFileDemand(path, factor)
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
	recs, truncated, err := ReadReportDir(dir)
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
