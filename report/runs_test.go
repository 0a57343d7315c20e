package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/results"
)

// benchstatVersion is the benchstat the verdict golden was made with:
// golang.org/x/perf at 2026-09-08, the version scripts/check_benchstat.sh
// pins. BENCHSTAT_VERSION overrides it for the live test.
const benchstatVersion = "v0.0.0-20260908200009-22c9c6c9d4da"

// verdictCase is one point of the benchstat comparison: how the two
// inputs' repetitions are drawn.
type verdictCase struct {
	bench  string
	unit   string
	bytes  int
	n1, n2 int     // repetitions in A and B; 0 = the input lacks the point
	shift  float64 // B's scale over A's (0 means 1)
	quant  float64 // > 0: values rounded to multiples of this (ties)
	same   bool    // every repetition the same value (no test possible)
}

// verdictCases cover each branch of the U test benchstat uses: the exact
// distribution without ties (n <= 50) and with ties (n <= 25), the normal
// approximation beyond them, samples too small to ever be significant,
// all values equal, unequal sizes, a bandwidth (higher is faster), and
// points one input lacks.
var verdictCases = []verdictCase{
	{bench: "pingpong", unit: "s", bytes: 8, n1: 10, n2: 10, shift: 1.2},
	{bench: "pingpong", unit: "s", bytes: 64, n1: 10, n2: 10, shift: 1},
	{bench: "pingpong", unit: "s", bytes: 512, n1: 10, n2: 12, shift: 1.03},
	{bench: "pingpong", unit: "s", bytes: 1024, n1: 3, n2: 3, shift: 1.5},
	{bench: "pingpong", unit: "s", bytes: 2048, n1: 4, n2: 4, shift: 1.5},
	{bench: "pingpong", unit: "s", bytes: 4096, n1: 30, n2: 40, shift: 0.97},
	{bench: "pingpong", unit: "s", bytes: 16384, n1: 50, n2: 50, shift: 1.01},
	{bench: "pingpong", unit: "s", bytes: 65536, n1: 60, n2: 70, shift: 1.02},
	{bench: "pingpong", unit: "s", bytes: 131072, n1: 12, n2: 12, shift: 1.1, quant: 1e-6},
	{bench: "pingpong", unit: "s", bytes: 262144, n1: 20, n2: 25, shift: 1, quant: 1e-6},
	{bench: "pingpong", unit: "s", bytes: 524288, n1: 40, n2: 40, shift: 1.05, quant: 2e-6},
	{bench: "pingpong", unit: "s", bytes: 1 << 20, n1: 5, n2: 5, same: true},
	{bench: "pingpong", unit: "s", bytes: 1 << 21, n1: 6, n2: 0},
	{bench: "pingpong", unit: "s", bytes: 1 << 22, n1: 0, n2: 6},
	{bench: "bandwidth", unit: "B/s", bytes: 65536, n1: 8, n2: 8, shift: 0.8},
	{bench: "bandwidth", unit: "B/s", bytes: 1 << 20, n1: 15, n2: 15, shift: 1},
}

// verdictRecords draws the two inputs of verdictCases (fixed seed): the
// time of a point is 1 us + 0.1 ns/B, each repetition that times 1 plus
// a lognormal jitter of 5%; bandwidths are bytes over a similar time.
func verdictRecords() (a, b []results.Record) {
	rng := rand.New(rand.NewPCG(16, 2025))
	meta := results.Meta{Commit: "0123456789ab", MPILibrary: "Open MPI", MPIVersion: "4.1.4", GOMAXPROCS: 1,
		Backend: "native", GOOS: "linux", GOARCH: "amd64", Date: "2025-06-01T12:00:00Z"}
	draw := func(c verdictCase, n int, scale float64) []float64 {
		base := 1e-6 + 0.1e-9*float64(c.bytes)
		out := make([]float64, n)
		for i := range out {
			t := base * math.Exp(0.05*rng.NormFloat64())
			if c.same {
				t = base
			}
			v := t * scale
			if c.unit == "B/s" {
				v = float64(c.bytes) / t * scale
			}
			if c.quant > 0 {
				v = math.Round(v/c.quant) * c.quant
			}
			out[i] = v
		}
		return out
	}
	shift := func(c verdictCase) float64 {
		if c.shift == 0 {
			return 1
		}
		return c.shift
	}
	rec := func(c verdictCase, samples []float64) results.Record {
		return results.Record{Schema: results.SchemaVersion, Bench: c.bench, Params: results.Params{"bytes": c.bytes}, Ranks: 2,
			Unit: c.unit, Summary: results.Summarize(samples), Samples: samples, Meta: meta}
	}
	for _, c := range verdictCases {
		if c.n1 > 0 {
			a = append(a, rec(c, draw(c, c.n1, 1)))
		}
		if c.n2 > 0 {
			b = append(b, rec(c, draw(c, c.n2, shift(c))))
		}
	}
	return a, b
}

// goBenchFile writes recs in the Go benchmark format, one line per
// repetition, as `commcost ... --format gobench` does for benchstat.
func goBenchFile(t *testing.T, path string, recs []results.Record) {
	t.Helper()
	var buf bytes.Buffer
	gw := results.NewGoBenchWriter(&buf, results.GoBenchOptions{PerSample: true})
	for _, r := range recs {
		if err := gw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchstatRow is one result row of benchstat's CSV output.
type benchstatRow struct {
	delta string // "~", "+12.34%", ...
	note  string // "p=0.008 n=5" or "p=0.008 n=5+6"
}

// parseBenchstatCSV reads benchstat -format csv output: per unit a table
// with two header lines, then rows "name,center,ci,center,ci,delta,note".
func parseBenchstatCSV(t *testing.T, data []byte) (map[string]benchstatRow, map[string]string) {
	t.Helper()
	rows := map[string]benchstatRow{}
	geo := map[string]string{} // unit -> geomean delta
	unit := ""
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("benchstat CSV: %v", err)
		}
		switch {
		case len(f) < 2 || strings.HasSuffix(f[0], ":"):
			continue // configuration and blank lines
		case f[0] == "":
			if len(f) > 1 && f[1] != "" && !strings.HasSuffix(f[1], ".txt") {
				unit = f[1] // the units header
			}
			continue
		case f[0] == "geomean":
			if len(f) > 5 {
				geo[unit] = f[5]
			}
			continue
		}
		row := benchstatRow{}
		if len(f) > 6 {
			row.delta, row.note = f[5], f[6]
		}
		rows[f[0]] = row
	}
	return rows, geo
}

// benchstatName is benchstat's row name for a record: the Go benchmark
// name without "Benchmark".
func benchstatName(t *testing.T, r results.Record) string {
	name, err := results.GoBenchName(r)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(name, "Benchmark")
}

// checkAgainstBenchstat compares CompareRuns on a and b with benchstat's
// CSV of their Go benchmark exports: for every point both hold, the same
// "vs base" verdict (~ or the signed percentage) and the same p-value and
// sample sizes; points one lacks must have no benchstat delta; and the
// geomean of the ratios per unit.
func checkAgainstBenchstat(t *testing.T, a, b []results.Record, out []byte) {
	t.Helper()
	rows, geo := parseBenchstatCSV(t, out)
	rc, err := CompareRuns([]Input{{Label: "A", Path: "a", Records: a}, {Label: "B", Path: "b", Records: b}}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, bc := range rc.Benches {
		for _, p := range bc.Points {
			r := results.Record{Bench: bc.Bench, Params: p.Params, Ranks: p.Ranks, Meta: results.Meta{GOMAXPROCS: 1}}
			name := benchstatName(t, r)
			want, ok := rows[name]
			if !ok {
				t.Errorf("%s: not in benchstat's output", name)
				continue
			}
			d := p.Deltas[0]
			if !d.Compared {
				if want.delta != "" {
					t.Errorf("%s: in one input only, but benchstat compares it: %q", name, want.delta)
				}
				continue
			}
			checked++
			n := fmt.Sprintf("n=%d+%d", d.N1, d.N2)
			if d.N1 == d.N2 {
				n = fmt.Sprintf("n=%d", d.N1)
			}
			if got, w := fmt.Sprintf("p=%.3f %s", d.P, n), want.note; got != w {
				t.Errorf("%s: test %q, benchstat %q", name, got, w)
			}
			if got := d.DeltaPct(); got != want.delta {
				t.Errorf("%s: verdict %q (ratio %.5f, p %.4f), benchstat %q", name, got, d.Ratio, d.P, want.delta)
			}
		}
		g := bc.GeoMean[0]
		unit := map[string]string{"s": "sec/op", "B/s": "B/s"}[bc.Unit]
		if got := fmt.Sprintf("%+.2f%%", (g.Ratio-1)*100); got != geo[unit] {
			t.Errorf("%s geomean %s over %d points, benchstat %q", bc.Bench, got, g.Points, geo[unit])
		}
	}
	if checked < 10 {
		t.Errorf("only %d points compared", checked)
	}
}

const verdictGolden = "testdata/benchstat/verdicts.csv"

// TestCompareRunsBenchstat: compare's verdicts, p-values and geomeans on
// verdictCases are those benchstat printed for the Go benchmark export of
// the same records (testdata/benchstat/verdicts.csv, made by
// TestCompareRunsBenchstatLive with the pinned benchstat).
func TestCompareRunsBenchstat(t *testing.T) {
	if *update {
		t.Skip("-update: TestCompareRunsBenchstatLive rewrites the golden")
	}
	out, err := os.ReadFile(verdictGolden)
	if err != nil {
		t.Fatal(err)
	}
	a, b := verdictRecords()
	checkAgainstBenchstat(t, a, b, out)
}

// TestCompareRunsBenchstatLive installs the pinned benchstat from the Go
// module proxy, runs it on the Go benchmark export of verdictCases and
// checks that it prints the golden (so the golden is benchstat's, not
// ours) and that compare agrees with it. Skipped when benchstat cannot be
// installed (no network and no module cache), unless COMMCOST_BENCHSTAT=1.
func TestCompareRunsBenchstatLive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: installs benchstat")
	}
	dir := t.TempDir()
	version := benchstatVersion
	if v := os.Getenv("BENCHSTAT_VERSION"); v != "" {
		version = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "go", "install", "golang.org/x/perf/cmd/benchstat@"+version)
	// Outside the module, so go.mod and go.sum are left alone.
	install.Dir = dir
	install.Env = append(os.Environ(), "GOBIN="+filepath.Join(dir, "bin"), "GOFLAGS=")
	if msg, err := install.CombinedOutput(); err != nil {
		if os.Getenv("COMMCOST_BENCHSTAT") == "1" {
			t.Fatalf("installing benchstat %s: %v\n%s", version, err, msg)
		}
		t.Skipf("benchstat %s cannot be installed here (%v); COMMCOST_BENCHSTAT=1 makes this a failure", version, err)
	}
	a, b := verdictRecords()
	fa, fb := filepath.Join(dir, "A.txt"), filepath.Join(dir, "B.txt")
	goBenchFile(t, fa, a)
	goBenchFile(t, fb, b)
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "bin", "benchstat"), "-format", "csv", "A.txt", "B.txt")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat: %v\n%s", err, stderr.String())
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(verdictGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(verdictGolden, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(verdictGolden); err != nil || !bytes.Equal(want, stdout.Bytes()) {
		t.Errorf("benchstat %s printed\n%s\nthe golden %s holds\n%s", version, stdout.String(), verdictGolden, want)
	}
	checkAgainstBenchstat(t, a, b, stdout.Bytes())
}

func TestMinUTestP(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{
		{1, 1, 1},
		{3, 3, 0.1},                  // 2/20, benchstat's table
		{4, 4, 0.02857142857142857},  // 2/70
		{5, 5, 0.007936507936507936}, // 2/252
		{2, 5, 2.0 / 21},
		{3, 10, 2.0 / 286},
	} {
		if got := minUTestP(tc.n1, tc.n2); !scalar.EqualWithinRel(got, tc.want, 1e-12) {
			t.Errorf("minUTestP(%d, %d) = %g, want %g", tc.n1, tc.n2, got, tc.want)
		}
	}
}

// TestCompareRunsCells: pooling, missing points, ratios, verdict words
// and warnings on hand-made inputs.
func TestCompareRunsCells(t *testing.T) {
	mk := func(bench, unit string, bytes int, samples ...float64) results.Record {
		return results.Record{Schema: 1, Bench: bench, Params: results.Params{"bytes": bytes}, Ranks: 2, Unit: unit,
			Summary: results.Summarize(samples), Samples: samples}
	}
	base := []float64{10, 11, 12, 13, 14, 15, 16}
	slow := []float64{20, 21, 22, 23, 24, 25, 26}
	a := []results.Record{
		mk("pingpong", "s", 8, base...),
		mk("pingpong", "s", 16, base...),
		mk("pingpong", "s", 32, 1, 2, 3),
		mk("bandwidth", "B/s", 8, base...),
		mk("aonly", "s", 8, base...),
	}
	b := []results.Record{
		// Point 8 measured twice: the repetitions are pooled.
		mk("pingpong", "s", 8, slow[:4]...),
		mk("pingpong", "s", 8, slow[4:]...),
		mk("pingpong", "s", 32, 2, 3, 4),
		mk("pingpong", "s", 64, base...),
		mk("bandwidth", "B/s", 8, slow...),
	}
	rc, err := CompareRuns([]Input{{Label: "A", Path: "a", Records: a}, {Label: "B", Path: "b", Records: b}}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Benches) != 2 || len(rc.Skipped) != 1 || rc.Skipped[0] != (SkippedBench{"aonly", "A"}) {
		t.Fatalf("benches %d, skipped %v", len(rc.Benches), rc.Skipped)
	}
	pp := rc.Benches[0]
	if pp.Bench != "pingpong" || len(pp.Points) != 4 {
		t.Fatalf("pingpong table: %+v", pp)
	}
	type want struct {
		bytes           int
		present         [2]bool
		records         int
		ratio           float64 // NaN: not compared
		verdict         string
		warningContains string
	}
	for i, w := range []want{
		{8, [2]bool{true, true}, 2, 23.0 / 13, "slower", ""},
		{16, [2]bool{true, false}, 0, math.NaN(), "-", ""},
		{32, [2]bool{true, true}, 1, 1.5, "~", "smallest possible p is 0.100"},
		{64, [2]bool{false, true}, 1, math.NaN(), "-", ""},
	} {
		p := pp.Points[i]
		if p.Params["bytes"] != w.bytes || p.Cells[0].Present != w.present[0] || p.Cells[1].Present != w.present[1] {
			t.Errorf("point %d: %v present %v %v, want %+v", i, p.Params, p.Cells[0].Present, p.Cells[1].Present, w)
			continue
		}
		if p.Cells[1].Records != w.records {
			t.Errorf("bytes=%d: B pools %d records, want %d", w.bytes, p.Cells[1].Records, w.records)
		}
		d := p.Deltas[0]
		if math.IsNaN(w.ratio) != !d.Compared || d.Compared && !scalar.EqualWithinRel(d.Ratio, w.ratio, 1e-12) {
			t.Errorf("bytes=%d: ratio %g compared %v, want %g", w.bytes, d.Ratio, d.Compared, w.ratio)
		}
		if v := d.Verdict("s"); v != w.verdict {
			t.Errorf("bytes=%d: verdict %q, want %q", w.bytes, v, w.verdict)
		}
		if w.warningContains != "" && !strings.Contains(strings.Join(d.Warnings, "; "), w.warningContains) {
			t.Errorf("bytes=%d: warnings %q lack %q", w.bytes, d.Warnings, w.warningContains)
		}
	}
	if c := pp.Points[0].Cells[1]; c.N != 7 || c.Median != 23 {
		t.Errorf("pooled cell %+v, want n=7 median 23", c)
	}
	// Geomean over the two points both hold: sqrt(23/13 * 1.5).
	if g := pp.GeoMean[0]; !scalar.EqualWithinRel(g.Ratio, math.Sqrt(23.0/13*1.5), 1e-12) || g.Points != 2 || g.BasePoints != 3 || g.InputPoints != 3 {
		t.Errorf("geomean %+v", g)
	}
	bw := rc.Benches[1]
	if v := bw.Points[0].Deltas[0].Verdict("B/s"); v != "faster" {
		t.Errorf("a higher bandwidth reads %q, want faster", v)
	}

	for _, f := range []OutputFormat{OutputTable, OutputMarkdown, OutputCSV, OutputJSONL} {
		var buf bytes.Buffer
		if err := rc.Write(&buf, f); err != nil {
			t.Fatalf("format %d: %v", f, err)
		}
		out := buf.String()
		switch f {
		case OutputTable, OutputMarkdown:
			for _, s := range []string{"missing", "slower", "1.769", "geomean", "aonly is only in A", "smallest possible p"} {
				if !strings.Contains(out, s) {
					t.Errorf("format %d lacks %q:\n%s", f, s, out)
				}
			}
		case OutputCSV:
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			// header + 4 pingpong points + geomean + 1 bandwidth point + geomean
			if len(recs) != 8 || recs[0][0] != "bench" || recs[1][len(recs[1])-1] != "slower" {
				t.Errorf("CSV:\n%s", out)
			}
		case OutputJSONL:
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 7 {
				t.Errorf("JSONL has %d lines:\n%s", len(lines), out)
			}
			for _, l := range lines {
				var v map[string]any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Errorf("JSONL line %q: %v", l, err)
				}
			}
		}
	}
}

func TestCompareRunsErrors(t *testing.T) {
	rec := func(bench string, schema int) results.Record {
		return results.Record{Schema: schema, Bench: bench, Unit: "s", Params: results.Params{"bytes": 8}, Summary: results.Summarize([]float64{1})}
	}
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   string
	}{
		{"one input", []Input{{Label: "a", Records: []results.Record{rec("x", 1)}}}, "at least two inputs"},
		{"label twice", []Input{{Label: "a", Path: "p1", Records: []results.Record{rec("x", 1)}}, {Label: "a", Path: "p2", Records: []results.Record{rec("x", 1)}}}, `label "a" used twice`},
		{"no bench in common", []Input{{Label: "a", Records: []results.Record{rec("x", 1)}}, {Label: "b", Records: []results.Record{rec("y", 1)}}}, "no bench in common"},
		{"schemas differ", []Input{{Label: "a", Path: "p1", Records: []results.Record{rec("x", 1)}}, {Label: "b", Path: "p2", Records: []results.Record{rec("x", 2)}}}, "different schema versions"},
		{"empty input", []Input{{Label: "a", Path: "p1", Records: []results.Record{rec("x", 1)}}, {Label: "b", Path: "p2"}}, "holds no records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompareRuns(tc.inputs, CompareOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := CompareRuns([]Input{{Label: "a", Records: []results.Record{rec("x", 1)}}, {Label: "b", Records: []results.Record{rec("y", 1)}}}, CompareOptions{}); !errors.Is(err, ErrNoCommonBench) {
		t.Errorf("no common bench: %v does not wrap ErrNoCommonBench", err)
	}
}

// TestGroupBy: one input per value of the key, launch ids in numeric
// order, and refusals for one group and unknown keys.
func TestGroupBy(t *testing.T) {
	rec := func(lib, launch string) results.Record {
		return results.Record{Schema: 1, Bench: "pingpong", Unit: "s", Meta: results.Meta{MPILibrary: lib, Launch: launch}}
	}
	in := []Input{{Label: "f", Path: "f.jsonl", Records: []results.Record{
		rec("Open MPI", "10"), rec("MPICH", "2"), rec("Open MPI", "2"), rec("MPICH\nVersion: 4.0.2", "10"),
	}}}
	g, err := GroupBy(in, "mpi_library")
	if err != nil || len(g) != 2 || g[0].Label != "Open MPI" || g[1].Label != "MPICH" || len(g[1].Records) != 2 {
		t.Errorf("by mpi_library: %v %+v", err, g)
	}
	g, err = GroupBy(in, "launch")
	if err != nil || len(g) != 2 || g[0].Label != "2" || g[1].Label != "10" {
		t.Errorf("by launch: %v %+v", err, g)
	}
	if _, err := GroupBy(in, "commit"); err == nil || !strings.Contains(err.Error(), "every record has commit (none)") {
		t.Errorf("one group: %v", err)
	}
	if _, err := GroupBy(in, "color"); err == nil || !strings.Contains(err.Error(), "accepted: mpi_library, hosts, commit, launch") {
		t.Errorf("unknown key: %v", err)
	}
}
