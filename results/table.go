package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// TableOptions configures RenderTable. The zero value renders a compact
// box-drawn table for a terminal.
type TableOptions struct {
	// Markdown renders GitHub-flavoured markdown tables (report.md) instead
	// of box-drawn terminal tables.
	Markdown bool
	// Wide adds the mean, p90, p99 and max columns.
	Wide bool
}

// RenderTable writes recs as one table per bench, in order of first
// appearance, each preceded by the bench name, with rows in input order and
// footnotes for the units used. Columns: one per parameter (union over the
// bench's records, in name order), ranks, n, median, the median's 95% CI,
// its relative half-width (±%, "-" below MinCISamples), min, then with
// opt.Wide mean, p90, p99 and max, then columns that appear only when some
// record has them: dropped and invalid counts, the per-rank spread of
// medians, the stop reason, and one column per derived value.
//
// Values are scaled for people: times in ns, us, ms or s with three
// significant digits; bandwidths (unit B/s) in MB/s with MB = 10^6 bytes;
// parameters whose name ends in "bytes" as 8, 512, 1K, 64K, 1M with
// K = 2^10 and M = 2^20 bytes (exact multiples only; others in full).
// Derived values whose name ends in "_s" are times and in "_B_per_s"
// bandwidths; other derived values and counts print with four significant
// digits. Counters are not shown (CSV and JSON Lines have them).
func RenderTable(w io.Writer, recs []Record, opt TableOptions) error {
	if len(recs) == 0 {
		_, err := io.WriteString(w, "(no records)\n")
		return err
	}
	var notes noteSet
	for _, g := range groupByBench(recs) {
		title := g[0].Bench
		if opt.Markdown {
			title = "**" + escapeMarkdown(title) + "**\n"
		}
		if _, err := fmt.Fprintf(w, "%s\n", title); err != nil {
			return err
		}
		header, rows := tableCells(g, opt, &notes)
		if err := renderCells(w, header, rows, opt.Markdown); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	for _, n := range notes.list() {
		line := n
		if opt.Markdown {
			line = "- " + escapeMarkdown(n)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// groupByBench splits recs by bench name, keeping first-appearance order.
func groupByBench(recs []Record) [][]Record {
	var groups [][]Record
	index := map[string]int{}
	for _, r := range recs {
		i, ok := index[r.Bench]
		if !ok {
			i = len(groups)
			index[r.Bench] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

// tableCells builds the header and rows for one bench.
func tableCells(recs []Record, opt TableOptions, notes *noteSet) (header []string, rows [][]string) {
	var params, derived []string
	var anyDropped, anyInvalid, anySpread, anyStop bool
	for _, r := range recs {
		params = append(params, sortedKeys(r.Params)...)
		derived = append(derived, sortedKeys(r.Derived)...)
		anyDropped = anyDropped || r.Dropped > 0
		anyInvalid = anyInvalid || r.Invalid > 0
		anySpread = anySpread || r.RankMin != 0 || r.RankAvg != 0 || r.RankMax != 0
		anyStop = anyStop || r.Stop != ""
	}
	params, derived = sortedUnique(params), sortedUnique(derived)

	header = append(header, params...)
	// The record's sample count is "n"; a pattern parameter of that name
	// (prtt's messages per round trip, an application's problem size)
	// keeps it, and the count is labelled reps.
	count := "n"
	for _, p := range params {
		if p == "n" {
			count = "reps"
		}
	}
	header = append(header, "ranks", count, "median", "ci95", "±%", "min")
	if opt.Wide {
		header = append(header, "mean", "p90", "p99", "max")
	}
	if anyDropped {
		header = append(header, "dropped")
	}
	if anyInvalid {
		header = append(header, "invalid")
	}
	if anySpread {
		header = append(header, "rank min/avg/max")
	}
	if anyStop {
		header = append(header, "stop")
	}
	header = append(header, derived...)

	for _, r := range recs {
		var row []string
		for _, k := range params {
			v, ok := r.Params[k]
			switch {
			case !ok:
				row = append(row, "")
			case strings.HasSuffix(strings.ToLower(k), "bytes"):
				row = append(row, formatSize(v, notes))
			case strings.HasSuffix(k, "_s") && isFloat(v):
				// A duration parameter (prtt's delay_s): measured, so it
				// prints as a time, not as the float's 17 digits.
				f := v.(float64)
				if f == 0 {
					row = append(row, "0")
				} else {
					row = append(row, scaleFor(UnitSeconds, f, notes).format(f))
				}
			default:
				row = append(row, formatParam(v))
			}
		}
		sc := scaleFor(r.Unit, r.Median, notes)
		row = append(row, strconv.Itoa(r.Ranks), strconv.Itoa(r.N))
		if r.N == 0 {
			row = append(row, "-", "-", "-", "-")
		} else {
			rel := "-"
			if h := RelCIHalfWidth(r.Summary); !math.IsInf(h, 0) && !math.IsNaN(h) {
				rel = strconv.FormatFloat(100*h, 'f', 1, 64)
			}
			row = append(row, sc.format(r.Median),
				"["+sc.number(r.CI95[0])+", "+sc.number(r.CI95[1])+"]"+sc.suffix(),
				rel, scaleFor(r.Unit, r.Min, notes).format(r.Min))
		}
		if opt.Wide {
			for _, v := range []float64{r.Mean, r.P90, r.P99, r.Max} {
				if r.N == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, scaleFor(r.Unit, v, notes).format(v))
			}
		}
		if anyDropped {
			row = append(row, strconv.Itoa(r.Dropped))
		}
		if anyInvalid {
			row = append(row, strconv.Itoa(r.Invalid))
		}
		if anySpread {
			s := scaleFor(r.Unit, r.RankMax, notes)
			row = append(row, s.number(r.RankMin)+" / "+s.number(r.RankAvg)+" / "+s.number(r.RankMax)+s.suffix())
		}
		if anyStop {
			row = append(row, r.Stop)
		}
		for _, k := range derived {
			v, ok := r.Derived[k]
			if !ok {
				row = append(row, "")
				continue
			}
			row = append(row, scaleFor(derivedUnit(k), v, notes).format(v))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// renderCells draws one table with tablewriter: text left-aligned, numbers
// right-aligned, header text left as given (tablewriter upper-cases headers
// by default, which would turn "us" into "US").
func renderCells(w io.Writer, header []string, rows [][]string, markdown bool) error {
	align := make([]tw.Align, len(header))
	for c := range header {
		align[c] = tw.AlignRight
		for _, row := range rows {
			if c < len(row) && row[c] != "" && !looksNumeric(row[c]) {
				align[c] = tw.AlignLeft
				break
			}
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	// Cells may hold strings of records read from a file: no control
	// sequence reaches the terminal (Printable; a no-op on clean text).
	header = mapCells(header, Printable)
	for i := range rows {
		rows[i] = mapCells(rows[i], Printable)
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
		// tablewriter's markdown renderer does not escape cell text; a '|'
		// would split a cell.
		header = mapCells(header, escapeMarkdown)
		for i := range rows {
			rows[i] = mapCells(rows[i], escapeMarkdown)
		}
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return fmt.Errorf("results: table row: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("results: rendering table: %w", err)
	}
	return nil
}

// looksNumeric reports whether a cell starts like a number ("1.52 us",
// "[1.50, 1.55] us", "64K", "-"), so its column is right-aligned.
func looksNumeric(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimLeft(s, "[+-")
	return s != "" && (s[0] >= '0' && s[0] <= '9' || strings.HasPrefix(s, "NaN") || strings.HasPrefix(s, "Inf"))
}

func mapCells(cells []string, f func(string) string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = f(c)
	}
	return out
}

// escapeMarkdown is EscapeMarkdown.
func escapeMarkdown(s string) string { return EscapeMarkdown(s) }

// EscapeMarkdown escapes the characters that would change markdown text
// or a table: '|' splits cells, '*', '_' and '`' start emphasis or code,
// '\' escapes, and '<', '>' and '&' would be HTML to a renderer (a
// records file's strings are anyone's: a host named "<script>" stays text).
func EscapeMarkdown(s string) string {
	return markdownEscaper.Replace(s)
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "&", "&amp;")

// MarkdownCode is s as a markdown code span: fenced by one backtick more
// than the longest run of them in s, so none of s ends it early.
func MarkdownCode(s string) string {
	run, most := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", most+1)
	return fence + " " + s + " " + fence
}

// scale is a unit to show a value in: the value is divided by div and
// followed by unit.
type scale struct {
	div  float64
	unit string
	sig  bool // three significant digits (times, bandwidths) rather than %.4g
}

// timeScales are tried from the top; the first whose threshold the
// magnitude reaches wins.
var timeScales = []struct {
	min float64
	scale
}{
	{1, scale{1, "s", true}},
	{1e-3, scale{1e-3, "ms", true}},
	{1e-6, scale{1e-6, "us", true}},
	{0, scale{1e-9, "ns", true}},
}

// scaleFor picks how to show v of unit u, recording the footnote it needs.
func scaleFor(u string, v float64, notes *noteSet) scale {
	switch u {
	case UnitSeconds:
		a := math.Abs(v)
		for _, t := range timeScales {
			if a >= t.min {
				return t.scale
			}
		}
	case UnitBytesPerSec:
		notes.add(noteMB)
		return scale{1e6, "MB/s", true}
	case UnitCount, "":
		return scale{div: 1}
	}
	return scale{div: 1, unit: u}
}

// derivedUnit reads the unit from a derived value's name (README.md
// "Derived values").
func derivedUnit(key string) string {
	switch {
	case strings.HasSuffix(strings.ToLower(key), "_b_per_s"): // before "_s", which it ends in
		return UnitBytesPerSec
	case strings.HasSuffix(key, "_s"):
		return UnitSeconds
	}
	return UnitCount
}

func (s scale) format(v float64) string { return s.number(v) + s.suffix() }

func (s scale) suffix() string {
	if s.unit == "" {
		return ""
	}
	return " " + s.unit
}

// number formats v in the scale without the unit.
func (s scale) number(v float64) string {
	x := v / s.div
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	if !s.sig {
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	// Three significant digits for magnitudes below 1000 (the scales keep
	// them there except for very slow or very fast links); whole numbers
	// above.
	a := math.Abs(x)
	prec := 0
	switch {
	case a == 0:
		prec = 0
	case a < 10:
		prec = 2
	case a < 100:
		prec = 1
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// formatSize shows a size parameter with FormatBytes, and notes the K/M/G
// footnote when it used a suffix. Values that are not numbers are shown as
// they are.
func formatSize(v any, notes *noteSet) string {
	var b float64
	switch x := v.(type) {
	case int:
		b = float64(x)
	case int64:
		b = float64(x)
	case int32:
		b = float64(x)
	case float64:
		b = x
	default:
		return formatParam(v)
	}
	s := FormatBytes(b)
	if strings.HasSuffix(s, "K") || strings.HasSuffix(s, "M") || strings.HasSuffix(s, "G") {
		notes.add(noteSizes)
	}
	return s
}

// FormatBytes shows a byte count the way commcost's tables, usage lines and
// messages do: 8, 1K, 64K, 1M, 1G when it is a non-zero exact multiple of
// 2^10, 2^20 or 2^30 bytes (K = 2^10, M = 2^20, G = 2^30, the units of
// --sizes), and in full otherwise (1536, 0, 0.5), so the text reads back as
// the same number. It is the one byte formatter of the module.
func FormatBytes(b float64) string {
	if b != 0 && b == math.Trunc(b) && math.Abs(b) < 1<<62 {
		n := int64(b)
		for _, u := range []struct {
			shift  uint
			suffix string
		}{{30, "G"}, {20, "M"}, {10, "K"}} {
			if n%(1<<u.shift) == 0 {
				return strconv.FormatInt(n>>u.shift, 10) + u.suffix
			}
		}
	}
	return formatFloatExact(b)
}

// Footnotes, printed once under the tables that need them.
const (
	noteMB    = "MB/s: MB = 10^6 bytes."
	noteSizes = "Sizes: K = 2^10 bytes, M = 2^20 bytes, G = 2^30 bytes."
	noteCI    = "median: median over n repetitions; ci95: nonparametric 95% confidence interval of the median (order statistics) over the repetitions of one launch, not the spread between launches; ±%: its half-width relative to the median (- when n < 6)."
)

type noteSet struct{ notes []string }

func (s *noteSet) add(n string) {
	if !slices.Contains(s.notes, n) {
		s.notes = append(s.notes, n)
	}
}

// list returns the CI note first, then the unit notes in first-use order.
func (s *noteSet) list() []string { return append([]string{noteCI}, s.notes...) }

func isFloat(v any) bool { _, ok := v.(float64); return ok }
