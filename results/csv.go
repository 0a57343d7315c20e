package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvFixed are the CSV columns every record has, in order. Samples are not
// exported (the JSON Lines file keeps them); list fields are joined with
// spaces so that a cell stays one CSV field.
var csvFixed = []string{
	"schema", "bench", "ranks", "unit",
	"n", "min", "median", "mean", "max", "p90", "p99", "ci95_lo", "ci95_hi", "dropped", "invalid",
	"rank_min", "rank_avg", "rank_max", "aggregate", "stop",
	"commit", "mpi_library", "mpi_version", "hosts", "ranks_per_host", "gomaxprocs",
	"binding", "backend", "date", "command", "seed", "goos", "goarch", "go_version", "cpu",
	"launch",
}

// Prefixes of the variable columns: one per parameter, derived value and
// counter name.
const (
	csvParamPrefix   = "param_"
	csvDerivedPrefix = "derived_"
	csvCounterPrefix = "counter_"
)

// CSVWriter writes records as CSV (RFC 4180, via encoding/csv) with a header
// line: the fixed columns (csvFixed, the Record fields under their JSON
// names, ci95 split into ci95_lo and ci95_hi), then param_<name>,
// derived_<name> and counter_<name> columns, each group in name order.
//
// A stream has to commit to its header before it has seen every record, so
// the variable columns are those of the first record written, or the ones
// given to NewCSVWriterColumns. A later record that lacks one of them gets
// an empty cell; a later record with a name the header does not have is an
// error naming the column, and nothing of it is written. To export records
// that are all known in advance, use WriteCSV, which takes the union of
// their names.
type CSVWriter struct {
	w       io.Writer
	cw      *csv.Writer
	cols    csvColumns
	started bool // cols are fixed
	header  bool // header line written
}

// csvColumns are the variable column names, without their prefixes.
type csvColumns struct{ params, derived, counters []string }

// NewCSVWriter returns a writer whose variable columns come from the first
// record written. Each record is flushed (and synced, for an *os.File) as it
// is written. Close does not close w.
func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: w, cw: csv.NewWriter(w)}
}

// NewCSVWriterColumns returns a writer with a fixed set of parameter, derived
// and counter names (without prefixes); the header is written with the first
// record.
func NewCSVWriterColumns(w io.Writer, params, derived, counters []string) *CSVWriter {
	cw := NewCSVWriter(w)
	cw.cols = csvColumns{params: sortedUnique(params), derived: sortedUnique(derived), counters: sortedUnique(counters)}
	cw.started = true
	return cw
}

// WriteCSV writes recs to w with variable columns for the union of their
// parameter, derived and counter names.
func WriteCSV(w io.Writer, recs []Record) error {
	var p, d, c []string
	for _, r := range recs {
		p = append(p, sortedKeys(r.Params)...)
		d = append(d, sortedKeys(r.Derived)...)
		c = append(c, sortedKeys(r.Counters)...)
	}
	cw := NewCSVWriterColumns(w, p, d, c)
	for _, r := range recs {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	if len(recs) == 0 {
		// A header alone still tells a reader what the columns are.
		if err := cw.writeHeader(); err != nil {
			return err
		}
	}
	return cw.Close()
}

// Write validates rec and writes it as one row, after the header if this is
// the first record.
func (cw *CSVWriter) Write(rec Record) error {
	if rec.Schema == 0 {
		rec.Schema = SchemaVersion
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if !cw.started {
		cw.cols = csvColumns{params: sortedKeys(rec.Params), derived: sortedKeys(rec.Derived), counters: sortedKeys(rec.Counters)}
		cw.started = true
	}
	if err := cw.checkColumns(rec); err != nil {
		return err
	}
	if err := cw.writeHeader(); err != nil {
		return err
	}
	if err := cw.cw.Write(cw.row(rec)); err != nil {
		return fmt.Errorf("results: writing CSV: %w", err)
	}
	return cw.flush()
}

// writeHeader writes the header line once.
func (cw *CSVWriter) writeHeader() error {
	if cw.header {
		return nil
	}
	h := append([]string(nil), csvFixed...)
	h = appendPrefixed(h, csvParamPrefix, cw.cols.params)
	h = appendPrefixed(h, csvDerivedPrefix, cw.cols.derived)
	h = appendPrefixed(h, csvCounterPrefix, cw.cols.counters)
	if err := cw.cw.Write(h); err != nil {
		return fmt.Errorf("results: writing CSV header: %w", err)
	}
	cw.header = true
	return cw.flush()
}

// checkColumns refuses a record with a name the header has no column for.
func (cw *CSVWriter) checkColumns(rec Record) error {
	check := func(prefix string, have []string, names []string) error {
		for _, n := range names {
			if !slices.Contains(have, n) {
				return fmt.Errorf("results: CSV header has no column %s%s for record %s %s (columns are fixed by the first record; write one file per bench or use WriteCSV)",
					prefix, n, rec.Bench, paramString(rec.Params))
			}
		}
		return nil
	}
	if err := check(csvParamPrefix, cw.cols.params, sortedKeys(rec.Params)); err != nil {
		return err
	}
	if err := check(csvDerivedPrefix, cw.cols.derived, sortedKeys(rec.Derived)); err != nil {
		return err
	}
	return check(csvCounterPrefix, cw.cols.counters, sortedKeys(rec.Counters))
}

// row is rec's cells in header order.
func (cw *CSVWriter) row(r Record) []string {
	m := r.Meta
	row := []string{
		strconv.Itoa(r.Schema), r.Bench, strconv.Itoa(r.Ranks), r.Unit,
		strconv.Itoa(r.N), formatValue(r.Min), formatValue(r.Median), formatValue(r.Mean), formatValue(r.Max),
		formatValue(r.P90), formatValue(r.P99), formatValue(r.CI95[0]), formatValue(r.CI95[1]),
		strconv.Itoa(r.Dropped), strconv.Itoa(r.Invalid),
		formatValue(r.RankMin), formatValue(r.RankAvg), formatValue(r.RankMax), r.Reduction, r.Stop,
		m.Commit, m.MPILibrary, m.MPIVersion, strings.Join(m.Hosts, " "), joinInts(m.RanksPerHost), strconv.Itoa(m.GOMAXPROCS),
		m.Binding, m.Backend, m.Date, strings.Join(m.Command, " "), strconv.FormatInt(m.Seed, 10),
		m.GOOS, m.GOARCH, m.GoVersion, m.CPU, m.Launch,
	}
	for _, k := range cw.cols.params {
		v, ok := r.Params[k]
		if !ok {
			row = append(row, "")
			continue
		}
		row = append(row, formatParam(v))
	}
	for _, k := range cw.cols.derived {
		row = append(row, optValue(r.Derived, k))
	}
	for _, k := range cw.cols.counters {
		row = append(row, optValue(r.Counters, k))
	}
	return row
}

// Close flushes buffered output; it does not close the underlying writer.
func (cw *CSVWriter) Close() error { return cw.flush() }

func (cw *CSVWriter) flush() error {
	cw.cw.Flush()
	if err := cw.cw.Error(); err != nil {
		return fmt.Errorf("results: writing CSV: %w", err)
	}
	if err := flushAndSync(cw.w); err != nil {
		return fmt.Errorf("results: flushing CSV: %w", err)
	}
	return nil
}

func optValue(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return formatValue(v)
	}
	return ""
}

func appendPrefixed(dst []string, prefix string, names []string) []string {
	for _, n := range names {
		dst = append(dst, prefix+n)
	}
	return dst
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}

func sortedUnique(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
