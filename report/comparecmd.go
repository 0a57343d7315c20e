package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// CompareCommand is 'commcost compare': its settings (flags) and the inputs
// (run directories, records files, name=path labels), and Run, which
// compares runs point by point (CompareRuns), groups of one input by a
// metadata key (GroupBy), or fitted models on records (CompareModels).
type CompareCommand struct {
	By      string  `flag:"by" value:"key"`
	Models  bool    `flag:"models" usage:"compare models (JSON from fit --format json) on the last argument's records"`
	Format  string  `flag:"format" default:"table" value:"format"`
	PlotDir string  `flag:"plot" value:"DIR" usage:"write one PNG per bench of the ratios to the first input into DIR (compare-BENCH.png)"`
	Alpha   float64 `flag:"alpha" usage:"significance level of the U test"`
	Set     opts.Given

	// Inputs are the positional arguments.
	Inputs []string
	format OutputFormat
}

// Usage names the accepted metadata keys and formats.
func (c *CompareCommand) Usage() map[string]string {
	return map[string]string{
		"by":     "compare groups of records by a metadata `key`: " + strings.Join(MetaKeys, ", "),
		"format": "output `format`: " + OutputFormatNames,
	}
}

// Defaults is the significance level benchstat uses.
func (c *CompareCommand) Defaults() map[string]string {
	return map[string]string{"alpha": strconv.FormatFloat(DefaultAlpha, 'g', -1, 64)}
}

// Validate checks the settings.
func (c *CompareCommand) Validate() error {
	f, err := ParseOutputFormat(c.Format)
	if err != nil {
		return opts.Field("Format", c.Format, "want one of %s", OutputFormatNames)
	}
	c.format = f
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return opts.Field("Alpha", c.Alpha, "want a significance level in (0, 1), e.g. 0.05")
	}
	if c.PlotDir != "" {
		if c.Models {
			return opts.Badf("{PlotDir} draws the ratios between runs; it does not go with {Models}")
		}
		if err := checkPlotDir(c.PlotDir); err != nil {
			return err
		}
	}
	if c.Models && c.By != "" {
		return opts.Badf("{By} groups runs; it does not go with {Models}")
	}
	if c.Models && c.Set.Has("Alpha") {
		return opts.Badf("{Alpha} is the level of the U test between runs, which {Models} does not run; it does not go with {Models}")
	}
	return nil
}

// Run compares and writes the tables to stdout (whole, after every input
// was read), the plots into PlotDir, and the warnings (an input's torn
// last line) to stderr.
func (c *CompareCommand) Run(stdout, stderr io.Writer) error {
	var out bytes.Buffer
	var warnings []string
	var err error
	if c.Models {
		if warnings, err = compareModels(&out, c.Inputs, c.format); err != nil {
			return err
		}
	} else {
		var plots []PlotFile
		if plots, warnings, err = compareRuns(&out, c.Inputs, c.By, c.format, c.Alpha, c.PlotDir != ""); err != nil {
			return err
		}
		if err := writePlots(c.PlotDir, plots); err != nil {
			return err
		}
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "commcost: warning:", w)
	}
	return nil
}

// readInputs reads the run inputs, turning every problem into a usage
// error naming the argument.
func readInputs(args []string) ([]Input, []string, error) {
	var inputs []Input
	var warnings, files []string
	for _, a := range args {
		in, truncated, err := ReadInput(a)
		if err != nil {
			return nil, nil, opts.Badf("input %s: %v", a, err)
		}
		if truncated {
			warnings = append(warnings, fmt.Sprintf("the last line of %s is an incomplete record; it is left out", in.Path))
		}
		inputs = append(inputs, in)
		files = append(files, in.File)
	}
	// One file under two names would be compared with itself: every
	// ratio 1, "~" everywhere: agreement that was never measured.
	if err := results.DistinctFiles(files); err != nil {
		return nil, nil, opts.Badf("%v", err)
	}
	// A copy of one file under another name, or a record pasted from
	// one into another, is the same comparison of a run with itself.
	set := results.NewRecordSet()
	for _, in := range inputs {
		if err := set.Add(in.File, in.Records, in.Lines); err != nil {
			return nil, nil, opts.Badf("input %v", err)
		}
	}
	return inputs, warnings, nil
}

func compareRuns(out *bytes.Buffer, args []string, by string, f OutputFormat, alpha float64, plot bool) ([]PlotFile, []string, error) {
	switch {
	case by == "" && len(args) < 2:
		return nil, nil, opts.Badf("compare wants at least two inputs A B (run directories or JSON Lines files), got %d; or --by KEY with one", len(args))
	case by != "" && len(args) < 1:
		return nil, nil, opts.Badf("compare --by %s wants at least one input", by)
	}
	inputs, warnings, err := readInputs(args)
	if err != nil {
		return nil, nil, err
	}
	if w := backendMixNote(inputs); w != "" {
		warnings = append(warnings, w)
	}
	var spreads []LaunchSpread
	if by != "" {
		if by == "launch" {
			var recs []results.Record
			for _, in := range inputs {
				recs = append(recs, in.Records...)
			}
			spreads = LaunchSpreads(recs)
		}
		if inputs, err = GroupBy(inputs, by); err != nil {
			return nil, nil, opts.Badf("--by %s: %v", by, err)
		}
	} else {
		DisambiguateLabels(inputs)
	}
	rc, err := CompareRuns(inputs, CompareOptions{Alpha: alpha})
	if err != nil {
		return nil, nil, opts.Badf("%v", err)
	}
	if len(spreads) > 0 && (f == OutputTable || f == OutputMarkdown) {
		if err := WriteLaunchSpreads(out, spreads, f == OutputMarkdown); err != nil {
			return nil, nil, err
		}
		fmt.Fprintln(out)
	}
	if err := rc.Write(out, f); err != nil {
		return nil, nil, err
	}
	var plots []PlotFile
	if plot {
		for _, bc := range rc.Benches {
			img, err := rc.PlotRatios(bc, "png")
			if errors.Is(err, ErrNothingToPlot) {
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			plots = append(plots, PlotFile{Name: rc.RatioPlotName(bc, ".png"), Data: img})
		}
	}
	return plots, warnings, nil
}

func compareModels(out *bytes.Buffer, args []string, f OutputFormat) ([]string, error) {
	if len(args) < 2 {
		return nil, opts.Badf("compare --models wants MODEL.json [MODEL.json ...] RECORDS, got %d argument(s)", len(args))
	}
	var models []NamedModel
	for _, a := range args[:len(args)-1] {
		label, path := "", a
		if _, err := os.Stat(a); err != nil {
			if l, p, ok := strings.Cut(a, "="); ok && l != "" {
				label, path = l, p
			}
		}
		m, _, err := model.ReadFile(path)
		if err != nil {
			return nil, opts.Badf("MODEL.json %s: %v", a, err)
		}
		if label == "" {
			base := filepath.Base(path)
			label = strings.TrimSuffix(base, filepath.Ext(base))
		}
		models = append(models, NamedModel{Label: label, Model: m})
	}
	in, truncated, err := ReadInput(args[len(args)-1])
	if err != nil {
		return nil, opts.Badf("RECORDS %s: %v", args[len(args)-1], err)
	}
	var warnings []string
	if truncated {
		warnings = append(warnings, fmt.Sprintf("the last line of %s is an incomplete record; it is left out", in.Path))
	}
	mc, err := CompareModels(models, in.Records)
	if err != nil {
		return nil, opts.Badf("%v", err)
	}
	return warnings, mc.Write(out, f)
}

// checkPlotDir accepts an existing directory or a new one whose parent
// exists (created when the plots are written).
func checkPlotDir(dir string) error {
	if what := opts.NotDir(dir); what != "" {
		return opts.Badf("--plot %s: %s is %s; --plot names a directory (new or existing) for the PNGs", opts.Echo(dir), opts.Echo(dir), what)
	}
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return opts.Badf("--plot %s: directory %s does not exist; want a directory for the PNGs", dir, parent)
	}
	return nil
}

// writePlots writes each plot whole into dir, creating dir.
func writePlots(dir string, plots []PlotFile) error {
	if dir == "" || len(plots) == 0 {
		return nil
	}
	// Every target is checked before any is written: a name taken by a
	// directory, a link, a FIFO or a file that is not a plot commcost drew
	// is the user's, and refused whole.
	for _, p := range plots {
		if err := CheckOwnPlot(filepath.Join(dir, p.Name)); err != nil {
			return opts.Badf("--plot %s: %v", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--plot %s: %w", dir, err)
	}
	for _, p := range plots {
		if err := WriteFile(filepath.Join(dir, p.Name), p.Data); err != nil {
			return err
		}
	}
	return nil
}

// backendMixNote is a warning when the inputs' records mix backends
// (results.MixedBackends), naming the input of each: a native run against
// a local one is a comparison a user may want (what the transport costs),
// but its ratios compare MPI with goroutine ranks in one process rather
// than one setup with itself, so compare says so rather than refusing.
func backendMixNote(inputs []Input) string {
	var all []results.Record
	var from []string
	for _, in := range inputs {
		all = append(all, in.Records...)
		for range in.Records {
			from = append(from, in.Path)
		}
	}
	i, j, mixed := results.MixedBackends(all)
	if !mixed {
		return ""
	}
	return fmt.Sprintf("the inputs mix backends: %s has %q records and %s %q ones; their ratios compare the transports (MPI against goroutine ranks exchanging through memory), not two runs of one setup",
		opts.Echo(from[i]), results.Printable(all[i].Meta.Backend), opts.Echo(from[j]), results.Printable(all[j].Meta.Backend))
}
