package results

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoBenchPkg is the "pkg:" configuration value of Go benchmark output.
const GoBenchPkg = "github.com/commcost/commcost"

// GoBenchOptions configures a GoBenchWriter. The zero value writes one line
// per record.
type GoBenchOptions struct {
	// PerSample writes one line per kept raw sample (iteration count 1)
	// instead of one line carrying the median, so that benchstat computes
	// its own median, confidence interval and significance tests from the
	// real distribution. Records without samples still get the median line.
	PerSample bool
}

// GoBenchWriter writes records in the Go benchmark format
// (golang.org/design/14313-benchmark-format) so that benchstat and other
// golang.org/x/perf tools read them:
//
//	goos: linux
//	goarch: amd64
//	pkg: github.com/commcost/commcost
//	commit: 6466eda3c1f2
//	mpi: Open MPI 4.1.6
//	backend: native
//	BenchmarkPingpong/bytes=8/ranks=2-4  1000  1.52e-06 sec/op
//
// Names: "Benchmark", the bench name with its first letter upper-cased, one
// "/key=value" part per parameter in key order, "/ranks=<Ranks>" last, and
// "-<GOMAXPROCS>" when GOMAXPROCS > 1 (as "go test" does). Ranks is last
// because a trailing "-<digits>" would be read as GOMAXPROCS; a record's
// rank count never ends that way. Whitespace and '/' inside names and values
// become '_', and '=' in keys too, because they delimit name parts. A
// parameter named "ranks" is left out when it equals Ranks and is an error
// otherwise.
//
// Values: the iteration count is N and the value is the median (a record
// with N = 0 becomes a "# ..." line, which readers ignore); unit "s" is
// written as "sec/op", other units as they are (benchstat scales B/s
// itself). Derived values, counters and the other statistics are not
// written; the JSON Lines file has them.
//
// Configuration lines (goos, goarch, cpu, pkg, commit, mpi, backend) are
// written before the first record and again whenever a value changes, as the
// format prescribes; an emptied value is written as "key:" which clears it.
// The date, hosts and binding are deliberately not configuration: benchstat
// splits results into separate tables by configuration, and those change
// from record to record. Compare runs across commits or MPI libraries with
// e.g. "benchstat -col commit" or "-ignore commit".
type GoBenchWriter struct {
	w      io.Writer
	opt    GoBenchOptions
	config map[string]string // values last written
}

// NewGoBenchWriter returns a writer to w; each record is flushed (and
// synced, for an *os.File) as it is written. Close does not close w.
func NewGoBenchWriter(w io.Writer, opt GoBenchOptions) *GoBenchWriter {
	return &GoBenchWriter{w: w, opt: opt, config: map[string]string{}}
}

// goBenchConfigKeys is the order of configuration lines.
var goBenchConfigKeys = []string{"goos", "goarch", "cpu", "pkg", "commit", "mpi", "backend"}

// Write writes rec's configuration changes and result line(s) in one write
// call.
func (gw *GoBenchWriter) Write(rec Record) error {
	if rec.Schema == 0 {
		rec.Schema = SchemaVersion
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	name, err := GoBenchName(rec)
	if err != nil {
		return err
	}
	var b strings.Builder
	cfg := goBenchConfig(rec.Meta)
	for _, k := range goBenchConfigKeys {
		v := cfg[k]
		if old, seen := gw.config[k]; v == old && (seen || v == "") {
			continue
		}
		if v == "" {
			fmt.Fprintf(&b, "%s:\n", k)
		} else {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
		gw.config[k] = v
	}
	unit := goBenchUnit(rec.Unit)
	if rec.N == 0 && !(gw.opt.PerSample && len(rec.Samples) > 0) {
		// A value of 0 would read as a measurement; a line benchfmt ignores
		// keeps the record visible to people without lying to tools.
		fmt.Fprintf(&b, "# %s: no finite samples (n=0, invalid=%d)\n", name, rec.Invalid)
	} else if gw.opt.PerSample && len(rec.Samples) > 0 {
		for _, s := range rec.Samples {
			fmt.Fprintf(&b, "%s\t1\t%s %s\n", name, formatValue(s), unit)
		}
	} else {
		fmt.Fprintf(&b, "%s\t%d\t%s %s\n", name, rec.N, formatValue(rec.Median), unit)
	}
	if _, err := io.WriteString(gw.w, b.String()); err != nil {
		return fmt.Errorf("results: writing Go benchmark output: %w", err)
	}
	if err := flushAndSync(gw.w); err != nil {
		return fmt.Errorf("results: flushing Go benchmark output: %w", err)
	}
	return nil
}

// Close flushes; it does not close the underlying writer.
func (gw *GoBenchWriter) Close() error { return flushAndSync(gw.w) }

// goBenchConfig maps Meta to configuration values, each a single line.
func goBenchConfig(m Meta) map[string]string {
	mpi := strings.TrimSpace(m.MPILibrary + " " + m.MPIVersion)
	cfg := map[string]string{
		"goos":    m.GOOS,
		"goarch":  m.GOARCH,
		"cpu":     m.CPU,
		"pkg":     GoBenchPkg,
		"commit":  m.Commit,
		"mpi":     mpi,
		"backend": m.Backend,
	}
	for k, v := range cfg {
		// A newline would end the line and start a bogus one.
		cfg[k] = strings.Join(strings.Fields(v), " ")
	}
	return cfg
}

// GoBenchName is the benchmark name of rec in the Go benchmark format,
// including the "Benchmark" prefix (see GoBenchWriter).
func GoBenchName(rec Record) (string, error) {
	var b strings.Builder
	b.WriteString("Benchmark")
	base := nameSafe(rec.Bench, false)
	r, size := utf8.DecodeRuneInString(base)
	b.WriteRune(unicode.ToUpper(r))
	b.WriteString(base[size:])
	ranks := fmt.Sprint(rec.Ranks)
	for _, k := range sortedKeys(rec.Params) {
		v := formatParam(rec.Params[k])
		if k == "ranks" {
			if v != ranks {
				return "", fmt.Errorf("results: record %s has parameter ranks=%s but ran on %d ranks; rename the parameter", rec.Bench, v, rec.Ranks)
			}
			continue
		}
		fmt.Fprintf(&b, "/%s=%s", nameSafe(k, true), nameSafe(v, false))
	}
	fmt.Fprintf(&b, "/ranks=%s", ranks)
	if rec.Meta.GOMAXPROCS > 1 {
		fmt.Fprintf(&b, "-%d", rec.Meta.GOMAXPROCS)
	}
	return b.String(), nil
}

// nameSafe replaces the characters that delimit benchmark name parts.
func nameSafe(s string, key bool) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' || (key && r == '=') {
			return '_'
		}
		return r
	}, s)
}

// goBenchUnit maps a record unit to a benchmark-format unit: times are per
// operation; white space, which would end the unit, becomes '_'.
func goBenchUnit(u string) string {
	if u == UnitSeconds {
		return "sec/op"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, u)
}
