package results

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestGoBenchName(t *testing.T) {
	base := Record{Bench: "pingpong", Unit: UnitSeconds, Ranks: 2, Params: Params{"bytes": 8}}
	tests := []struct {
		name string
		mod  func(*Record)
		want string
	}{
		{"basic", func(*Record) {}, "BenchmarkPingpong/bytes=8/ranks=2"},
		{"gomaxprocs", func(r *Record) { r.Meta.GOMAXPROCS = 4 }, "BenchmarkPingpong/bytes=8/ranks=2-4"},
		{"gomaxprocs 1 omitted", func(r *Record) { r.Meta.GOMAXPROCS = 1 }, "BenchmarkPingpong/bytes=8/ranks=2"},
		{"sorted keys, big sizes in full", func(r *Record) { r.Params = Params{"window": 64, "bytes": 1 << 20} },
			"BenchmarkPingpong/bytes=1048576/window=64/ranks=2"},
		{"delimiters replaced", func(r *Record) { r.Params = Params{"a b=c": "x/y z"} }, "BenchmarkPingpong/a_b_c=x_y_z/ranks=2"},
		{"negative value not read as gomaxprocs", func(r *Record) { r.Params = Params{"offset": -1} },
			"BenchmarkPingpong/offset=-1/ranks=2"},
		{"ranks param equal to Ranks", func(r *Record) { r.Params = Params{"ranks": 2, "bytes": 8} }, "BenchmarkPingpong/bytes=8/ranks=2"},
	}
	for _, tc := range tests {
		r := base
		r.Params = Params{"bytes": 8}
		tc.mod(&r)
		got, err := GoBenchName(r)
		if err != nil || got != tc.want {
			t.Errorf("%s: GoBenchName = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	r := base
	r.Params = Params{"ranks": 3}
	if _, err := GoBenchName(r); err == nil {
		t.Errorf("a ranks parameter that contradicts Ranks was accepted")
	}
}

// benchLine and configLine are the Go benchmark format's rules
// (golang.org/x/perf/benchfmt): a result is "Benchmark<name>", an iteration
// count and value/unit pairs, all separated by white space; a configuration
// line's key starts lower-case and has no space or upper-case letter, then
// ": value" or a bare ":".
var (
	benchLine  = regexp.MustCompile(`^Benchmark\S+\s+\d+(\s+\S+\s+\S+)+$`)
	configLine = regexp.MustCompile(`^[a-z][^\sA-Z:]*:( \S.*)?$`)
)

func writeGoBench(t *testing.T, opt GoBenchOptions, recs []Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewGoBenchWriter(&buf, opt)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoBenchGolden(t *testing.T) {
	recs := testRecords()
	// A change of MPI library mid-stream must re-emit the config line, and
	// a record without samples gets a comment, not a fake 0.
	other := recs[0]
	other.Meta.MPILibrary, other.Meta.MPIVersion = "MPICH", "4.2.0"
	empty := recs[0]
	empty.Summary = Summary{Invalid: 3}
	empty.Meta = other.Meta
	empty.Meta.CPU = ""
	recs = append(recs, other, empty)
	for _, tc := range []struct {
		golden string
		opt    GoBenchOptions
	}{
		{"gobench.golden", GoBenchOptions{}},
		{"gobench-persample.golden", GoBenchOptions{PerSample: true}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out := writeGoBench(t, tc.opt, recs)
			checkGolden(t, tc.golden, out)
			for i, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if !benchLine.MatchString(line) && !configLine.MatchString(line) && !strings.HasPrefix(line, "# ") {
					t.Errorf("line %d is neither a result nor a config line: %q", i+1, line)
				}
			}
		})
	}
}

// TestGoBenchBenchstat writes a Go benchmark file and, when asked to, runs
// benchstat on it through scripts/check_benchstat.sh (which downloads
// golang.org/x/perf, so it is opt-in). COMMCOST_GOBENCH_OUT=path keeps the
// file, which is how the script generates its input.
func TestGoBenchBenchstat(t *testing.T) {
	out := writeGoBench(t, GoBenchOptions{PerSample: true}, testRecords())
	path := os.Getenv("COMMCOST_GOBENCH_OUT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "bench.txt")
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("COMMCOST_BENCHSTAT") != "1" {
		t.Skip("set COMMCOST_BENCHSTAT=1 to check the output with benchstat (scripts/check_benchstat.sh; needs the Go module proxy)")
	}
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "check_benchstat.sh"), path)
	msg, err := cmd.CombinedOutput()
	t.Logf("%s", msg)
	if err != nil {
		t.Fatalf("check_benchstat.sh: %v", err)
	}
}
