package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// OutputFormat is how a comparison is written.
type OutputFormat int

// The formats of comparisons, in the order OutputFormatNames lists them.
const (
	OutputTable    OutputFormat = iota // box-drawn terminal tables
	OutputMarkdown                     // markdown tables and notes
	OutputCSV                          // one CSV row per point, values in record units
	OutputJSONL                        // one JSON object per point and per geomean
)

// OutputFormatNames lists the accepted names, for usage messages.
const OutputFormatNames = "table|markdown|csv|jsonl"

// ParseOutputFormat parses one of OutputFormatNames.
func ParseOutputFormat(s string) (OutputFormat, error) {
	for i, n := range strings.Split(OutputFormatNames, "|") {
		if s == n {
			return OutputFormat(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (accepted: %s)", s, strings.ReplaceAll(OutputFormatNames, "|", ", "))
}

// Verdict is the word for a delta: "~" when not significant (benchstat's
// mark), otherwise the direction read in the unit: a larger time is
// slower, a larger bandwidth faster, anything else higher or lower; "-"
// when the point is not in both inputs, "?" when no test could run.
func (d Delta) Verdict(unit string) string {
	switch {
	case !d.Compared:
		return "-"
	case !d.Tested:
		return "?"
	case !d.Significant:
		return "~"
	case math.IsNaN(d.Ratio) || d.Ratio == 1:
		return "differs"
	}
	up := d.Ratio > 1
	switch unit {
	case results.UnitSeconds:
		if up {
			return "slower"
		}
		return "faster"
	case results.UnitBytesPerSec:
		if up {
			return "faster"
		}
		return "slower"
	}
	if up {
		return "higher"
	}
	return "lower"
}

// DeltaPct is benchstat's "vs base" text for a delta: "~" when not
// significant, else the change of the median in percent with two
// decimals and a sign ("+90.91%").
func (d Delta) DeltaPct() string {
	switch {
	case !d.Compared:
		return "-"
	case !d.Tested:
		return "?"
	case !d.Significant:
		return "~"
	case d.Ratio == 1:
		return "0.00%"
	case math.IsNaN(d.Ratio):
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", (d.Ratio-1)*100)
}

// testNote is "p=0.008 n=5+5", as benchstat prints the test.
func (d Delta) testNote() string {
	if !d.Tested {
		return ""
	}
	return fmt.Sprintf("p=%.3f n=%d+%d", d.P, d.N1, d.N2)
}

// ratioCell prints a ratio with three decimals (1.000 reads as "the
// same", 1.050 as 5% up), or four significant digits far from 1.
func ratioCell(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "-"
	}
	if r >= 0.1 && r < 1000 {
		return strconv.FormatFloat(r, 'f', 3, 64)
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}

// paramValue formats one parameter as tables do: sizes (bytes, l,
// ...bytes) as 8, 1K, 1M; other numbers in their shortest form.
func paramValue(k string, v any) string {
	if v == nil {
		return "-"
	}
	if f, ok := toFloat(v); ok {
		if k == "l" || strings.HasSuffix(k, "bytes") {
			return results.FormatBytes(f)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// Write writes the comparison in format f.
func (rc *RunsComparison) Write(w io.Writer, f OutputFormat) error {
	switch f {
	case OutputCSV:
		return rc.writeCSV(w)
	case OutputJSONL:
		return rc.writeJSONL(w)
	}
	return rc.writeTables(w, f == OutputMarkdown)
}

// footnotes numbers distinct warnings in order of first use.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (fn *footnotes) mark(ws []string) string {
	if fn.idx == nil {
		fn.idx = map[string]int{}
	}
	var marks []string
	for _, w := range ws {
		i, ok := fn.idx[w]
		if !ok {
			fn.list = append(fn.list, w)
			i = len(fn.list)
			fn.idx[w] = i
		}
		marks = append(marks, strconv.Itoa(i))
	}
	if len(marks) == 0 {
		return ""
	}
	return " [" + strings.Join(marks, ",") + "]"
}

// writeTables writes one table per bench, then the footnotes and what
// the columns mean.
func (rc *RunsComparison) writeTables(w io.Writer, markdown bool) error {
	var fn footnotes
	base := rc.Labels[0]
	for _, bc := range rc.Benches {
		header, rows := rc.benchCells(bc, &fn)
		title := bc.Bench
		if n := rc.unitsOf(bc.Bench); n > 1 {
			title += " (" + bc.Unit + ")"
		}
		if err := TitledTable(w, title, header, rows, markdown); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	var notes []string
	for _, s := range rc.Skipped {
		notes = append(notes, fmt.Sprintf("%s is only in %s: not compared.", s.Bench, s.Label))
	}
	for i, f := range fn.list {
		notes = append(notes, fmt.Sprintf("[%d] %s", i+1, f))
	}
	notes = append(notes,
		fmt.Sprintf("Each input's median over the repetitions of its records, with the nonparametric 95%% CI of the median (ci95): the spread within one launch (compare --by launch shows the spread between launches). A point an input holds several times pools their repetitions. Ratio: median / %s's median. Verdict: two-sided Mann-Whitney U test of the raw repetitions, as benchstat; significant when p <= %v, ~ otherwise; slower/faster read in the unit. geomean: geometric mean of the ratios over the points both inputs hold.", base, rc.Alpha),
		"Units: times in us, bandwidths in MB/s (MB = 10^6 bytes); sizes K = 2^10, M = 2^20 bytes.")
	return writeNotes(w, notes, markdown)
}

// unitsOf counts the tables of a bench (one per unit).
func (rc *RunsComparison) unitsOf(bench string) int {
	n := 0
	for _, b := range rc.Benches {
		if b.Bench == bench {
			n++
		}
	}
	return n
}

// benchCells is one bench's table.
func (rc *RunsComparison) benchCells(bc BenchComparison, fn *footnotes) ([]string, [][]string) {
	_, unit := Value(1, bc.Unit)
	header := append([]string(nil), bc.ParamKeys...)
	header = append(header, "ranks")
	for _, l := range rc.Labels {
		header = append(header, strings.TrimSpace(l+" "+unit), "ci95")
	}
	base := rc.Labels[0]
	for _, l := range rc.Labels[1:] {
		header = append(header, l+"/"+base, "vs "+base, "test")
	}
	var rows [][]string
	for _, p := range bc.Points {
		var row []string
		for _, k := range bc.ParamKeys {
			row = append(row, paramValue(k, p.Params[k]))
		}
		row = append(row, strconv.Itoa(p.Ranks))
		for _, c := range p.Cells {
			if !c.Present {
				row = append(row, "missing", "")
				continue
			}
			v, _ := Value(c.Median, bc.Unit)
			ci := "-"
			if c.HasCI {
				lo, _ := Value(c.CI95[0], bc.Unit)
				hi, _ := Value(c.CI95[1], bc.Unit)
				ci = "[" + lo + ", " + hi + "]"
			}
			row = append(row, v, ci)
		}
		for _, d := range p.Deltas {
			row = append(row, ratioCell(d.Ratio), d.Verdict(bc.Unit), strings.TrimSpace(d.testNote()+fn.mark(d.Warnings)))
		}
		rows = append(rows, row)
	}
	if len(bc.Points) > 1 {
		row := make([]string, len(header))
		row[0] = "geomean"
		off := len(bc.ParamKeys) + 1 + 2*len(rc.Labels)
		for i, g := range bc.GeoMean {
			row[off+3*i] = ratioCell(g.Ratio)
			note := fmt.Sprintf("%d points", g.Points)
			if g.Points != g.BasePoints || g.Points != g.InputPoints {
				note += fn.mark([]string{fmt.Sprintf("point sets differ: %s has %d points, %s %d, both %d; the geomean is over the common ones",
					base, g.BasePoints, rc.Labels[i+1], g.InputPoints, g.Points)})
			}
			row[off+3*i+2] = note
		}
		rows = append(rows, row)
	}
	return header, rows
}

// csvParamKeys is the union of the benches' parameter names.
func (rc *RunsComparison) csvParamKeys() []string {
	var ps []results.Params
	for _, bc := range rc.Benches {
		for _, p := range bc.Points {
			ps = append(ps, p.Params)
		}
	}
	return unionKeys(ps...)
}

// formatRaw prints a value in record units, "" when undefined.
func formatRaw(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// writeCSV writes one row per point and one per geomean: bench, unit,
// row (point or geomean), param_<name> columns, ranks, then per input
// <label>_median, _ci95_lo, _ci95_hi, _n, _records (values in the
// records' unit, empty where the input lacks the point), then per input
// after the first <label>_ratio, _p, _significant, _verdict.
func (rc *RunsComparison) writeCSV(w io.Writer) error {
	keys := rc.csvParamKeys()
	header := []string{"bench", "unit", "row"}
	for _, k := range keys {
		header = append(header, "param_"+k)
	}
	header = append(header, "ranks")
	for _, l := range rc.Labels {
		for _, c := range []string{"median", "ci95_lo", "ci95_hi", "n", "records"} {
			header = append(header, l+"_"+c)
		}
	}
	for _, l := range rc.Labels[1:] {
		for _, c := range []string{"ratio", "p", "significant", "verdict"} {
			header = append(header, l+"_"+c)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, bc := range rc.Benches {
		for _, p := range bc.Points {
			row := []string{bc.Bench, bc.Unit, "point"}
			for _, k := range keys {
				v, ok := p.Params[k]
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, fmt.Sprint(v))
			}
			row = append(row, strconv.Itoa(p.Ranks))
			for _, c := range p.Cells {
				if !c.Present {
					row = append(row, "", "", "", "", "0")
					continue
				}
				lo, hi := "", ""
				if c.HasCI {
					lo, hi = formatRaw(c.CI95[0]), formatRaw(c.CI95[1])
				}
				row = append(row, formatRaw(c.Median), lo, hi, strconv.Itoa(c.N), strconv.Itoa(c.Records))
			}
			for _, d := range p.Deltas {
				p, sig := "", ""
				if d.Tested {
					p, sig = formatRaw(d.P), strconv.FormatBool(d.Significant)
				}
				row = append(row, formatRaw(d.Ratio), p, sig, d.Verdict(bc.Unit))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		row := make([]string, len(header))
		row[0], row[1], row[2] = bc.Bench, bc.Unit, "geomean"
		off := 3 + len(keys) + 1 + 5*len(rc.Labels)
		for i, g := range bc.GeoMean {
			row[off+4*i] = formatRaw(g.Ratio)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonNum is a float that encodes NaN and ±Inf as null.
type jsonNum float64

func (x jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

type jsonCell struct {
	Label   string      `json:"label"`
	Present bool        `json:"present"`
	Records int         `json:"records"`
	N       int         `json:"n"`
	Median  *jsonNum    `json:"median,omitempty"`
	CI95    *[2]jsonNum `json:"ci95,omitempty"`
}

type jsonDelta struct {
	Label       string   `json:"label"`
	Ratio       jsonNum  `json:"ratio"`
	Tested      bool     `json:"tested"`
	P           *jsonNum `json:"p,omitempty"`
	N1          int      `json:"n1,omitempty"`
	N2          int      `json:"n2,omitempty"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict"`
	Warnings    []string `json:"warnings,omitempty"`
}

type jsonGeo struct {
	Label       string  `json:"label"`
	Ratio       jsonNum `json:"ratio"`
	Points      int     `json:"points"`
	BasePoints  int     `json:"base_points"`
	InputPoints int     `json:"input_points"`
}

type jsonRow struct {
	Row     string         `json:"row"` // "point" or "geomean"
	Bench   string         `json:"bench"`
	Unit    string         `json:"unit"`
	Base    string         `json:"base"`
	Params  results.Params `json:"params,omitempty"`
	Ranks   int            `json:"ranks,omitempty"`
	Inputs  []jsonCell     `json:"inputs,omitempty"`
	VsBase  []jsonDelta    `json:"vs_base,omitempty"`
	GeoMean []jsonGeo      `json:"geomean,omitempty"`
	Alpha   float64        `json:"alpha"`
}

// writeJSONL writes one object per point ("row": "point": each input's
// cell and each later input against the base) and one per bench
// ("row": "geomean"), values in the records' unit, undefined numbers as
// null.
func (rc *RunsComparison) writeJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, bc := range rc.Benches {
		for _, p := range bc.Points {
			row := jsonRow{Row: "point", Bench: bc.Bench, Unit: bc.Unit, Base: rc.Labels[0], Params: p.Params, Ranks: p.Ranks, Alpha: rc.Alpha}
			for i, c := range p.Cells {
				jc := jsonCell{Label: rc.Labels[i], Present: c.Present, Records: c.Records, N: c.N}
				if c.Present {
					m := jsonNum(c.Median)
					jc.Median = &m
					if c.HasCI {
						jc.CI95 = &[2]jsonNum{jsonNum(c.CI95[0]), jsonNum(c.CI95[1])}
					}
				}
				row.Inputs = append(row.Inputs, jc)
			}
			for i, d := range p.Deltas {
				jd := jsonDelta{Label: rc.Labels[i+1], Ratio: jsonNum(d.Ratio), Tested: d.Tested, N1: d.N1, N2: d.N2,
					Significant: d.Significant, Verdict: d.Verdict(bc.Unit), Warnings: d.Warnings}
				if d.Tested {
					pv := jsonNum(d.P)
					jd.P = &pv
				}
				row.VsBase = append(row.VsBase, jd)
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		row := jsonRow{Row: "geomean", Bench: bc.Bench, Unit: bc.Unit, Base: rc.Labels[0], Alpha: rc.Alpha}
		for i, g := range bc.GeoMean {
			row.GeoMean = append(row.GeoMean, jsonGeo{Label: rc.Labels[i+1], Ratio: jsonNum(g.Ratio), Points: g.Points, BasePoints: g.BasePoints, InputPoints: g.InputPoints})
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}
