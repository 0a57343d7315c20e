package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{
		Name:    "compare",
		Summary: "compare runs (medians, ratios, Mann-Whitney verdicts) or models against records",
		Run:     runCompare,
	})
}

const compareUsage = `usage: commcost compare [flags] A B [C ...]
       commcost compare --by KEY [flags] INPUT [INPUT ...]
       commcost compare --models [flags] MODEL.json [MODEL.json ...] RECORDS

Each input is a run directory (its records.jsonl), a JSON Lines file of
records, or either as name=path to label it. One table per bench, one row
per parameter point any input holds (a point an input lacks is shown as
missing): each input's median with its 95% CI, and for every input after
the first its ratio to the first with the verdict of a two-sided
Mann-Whitney U test on the raw repetitions, as benchstat decides it
(significant when p <= --alpha, "~" otherwise; a note when there are too
few repetitions to ever be significant), then the geometric mean of the
ratios. Benches only one input holds are listed, not compared.

--by KEY pools the inputs and compares the records grouped by a metadata
field: mpi_library, hosts, commit or launch (e.g. one file holding Open MPI
and MPICH runs). --by launch also prints (in the table and markdown formats) the spread
of each point between launches next to the spread within one launch.

--models compares fitted models (the JSON of 'commcost fit --format json')
on the records of RECORDS: each model's prediction and relative error per
point and bench, the closest marked.

Bad input (inputs with no bench in common, a file that is not JSON Lines
records, records of different schema versions, a label used twice, an
unknown --by key) exits with status 2 and writes nothing.

flags:
`

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	by := fs.String("by", "", "compare groups of records by a metadata `key`: "+strings.Join(report.MetaKeys, ", "))
	models := fs.Bool("models", false, "compare models (JSON from fit --format json) on the last argument's records")
	format := fs.String("format", "table", "output `format`: "+report.OutputFormatNames)
	plotDir := fs.String("plot", "", "write one PNG per bench of the ratios to the first input into `DIR` (compare-BENCH.png)")
	alpha := fs.Float64("alpha", report.DefaultAlpha, "significance level of the U test")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), compareUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	f, err := report.ParseOutputFormat(*format)
	if err != nil {
		return usagef("--format %s: want one of %s", *format, report.OutputFormatNames)
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usagef("--alpha %v: want a significance level in (0, 1), e.g. 0.05", *alpha)
	}
	if *plotDir != "" {
		if *models {
			return usagef("--plot draws the ratios between runs; it does not go with --models")
		}
		if err := checkPlotDir(*plotDir); err != nil {
			return err
		}
	}
	var out bytes.Buffer
	var warnings []string
	if *models {
		if *by != "" {
			return usagef("--by groups runs; it does not go with --models")
		}
		if warnings, err = compareModels(&out, pos, f); err != nil {
			return err
		}
	} else {
		var plots []report.PlotFile
		if plots, warnings, err = compareRuns(&out, pos, *by, f, *alpha, *plotDir != ""); err != nil {
			return err
		}
		if err := writePlots(*plotDir, plots); err != nil {
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
func readInputs(args []string) ([]report.Input, []string, error) {
	var inputs []report.Input
	var warnings []string
	for _, a := range args {
		in, truncated, err := report.ReadInput(a)
		if err != nil {
			return nil, nil, usagef("input %s: %v", a, err)
		}
		if truncated {
			warnings = append(warnings, fmt.Sprintf("the last line of %s is an incomplete record; it is left out", in.Path))
		}
		inputs = append(inputs, in)
	}
	return inputs, warnings, nil
}

func compareRuns(out *bytes.Buffer, args []string, by string, f report.OutputFormat, alpha float64, plot bool) ([]report.PlotFile, []string, error) {
	switch {
	case by == "" && len(args) < 2:
		return nil, nil, usagef("compare wants at least two inputs A B (run directories or JSON Lines files), got %d; or --by KEY with one", len(args))
	case by != "" && len(args) < 1:
		return nil, nil, usagef("compare --by %s wants at least one input", by)
	}
	inputs, warnings, err := readInputs(args)
	if err != nil {
		return nil, nil, err
	}
	var spreads []report.LaunchSpread
	if by != "" {
		if by == "launch" {
			var recs []results.Record
			for _, in := range inputs {
				recs = append(recs, in.Records...)
			}
			spreads = report.LaunchSpreads(recs)
		}
		if inputs, err = report.GroupBy(inputs, by); err != nil {
			return nil, nil, usagef("--by %s: %v", by, err)
		}
	} else {
		report.DisambiguateLabels(inputs)
	}
	rc, err := report.CompareRuns(inputs, report.CompareOptions{Alpha: alpha})
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	if len(spreads) > 0 && (f == report.OutputTable || f == report.OutputMarkdown) {
		if err := report.WriteLaunchSpreads(out, spreads, f == report.OutputMarkdown); err != nil {
			return nil, nil, err
		}
		fmt.Fprintln(out)
	}
	if err := rc.Write(out, f); err != nil {
		return nil, nil, err
	}
	var plots []report.PlotFile
	if plot {
		for _, bc := range rc.Benches {
			img, err := rc.PlotRatios(bc, "png")
			if errors.Is(err, report.ErrNothingToPlot) {
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			plots = append(plots, report.PlotFile{Name: rc.RatioPlotName(bc, ".png"), Data: img})
		}
	}
	return plots, warnings, nil
}

func compareModels(out *bytes.Buffer, args []string, f report.OutputFormat) ([]string, error) {
	if len(args) < 2 {
		return nil, usagef("compare --models wants MODEL.json [MODEL.json ...] RECORDS, got %d argument(s)", len(args))
	}
	var models []report.NamedModel
	for _, a := range args[:len(args)-1] {
		label, path := "", a
		if _, err := os.Stat(a); err != nil {
			if l, p, ok := strings.Cut(a, "="); ok && l != "" {
				label, path = l, p
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("MODEL.json %s: %v", a, err)
		}
		m, _, err := model.Unmarshal(data)
		if err != nil {
			return nil, usagef("MODEL.json %s: %v", a, err)
		}
		if label == "" {
			base := filepath.Base(path)
			label = strings.TrimSuffix(base, filepath.Ext(base))
		}
		models = append(models, report.NamedModel{Label: label, Model: m})
	}
	in, truncated, err := report.ReadInput(args[len(args)-1])
	if err != nil {
		return nil, usagef("RECORDS %s: %v", args[len(args)-1], err)
	}
	var warnings []string
	if truncated {
		warnings = append(warnings, fmt.Sprintf("the last line of %s is an incomplete record; it is left out", in.Path))
	}
	mc, err := report.CompareModels(models, in.Records)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return warnings, mc.Write(out, f)
}

// checkPlotDir accepts an existing directory or a new one whose parent
// exists (created when the plots are written).
func checkPlotDir(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return usagef("--plot %s: not a directory; want a directory for the PNGs", dir)
		}
		return nil
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return usagef("--plot %s: directory %s does not exist; want a directory for the PNGs", dir, parent)
	}
	return nil
}

// writePlots writes each plot whole into dir, creating dir.
func writePlots(dir string, plots []report.PlotFile) error {
	if dir == "" || len(plots) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--plot %s: %w", dir, err)
	}
	for _, p := range plots {
		if err := report.WriteFile(filepath.Join(dir, p.Name), p.Data); err != nil {
			return err
		}
	}
	return nil
}
