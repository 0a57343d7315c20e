package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// compareRecords is a ping-pong sweep with its raw repetitions (fixed
// seed): 20 repetitions per size, times scale x (1 us + 0.1 ns/B) with 2%
// lognormal jitter; the metadata names the MPI library and the launch.
func compareRecords(seed uint64, scale float64, sizes []int, lib, launch string) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 99))
	var recs []results.Record
	for _, b := range sizes {
		s := make([]float64, 20)
		for i := range s {
			s[i] = scale * (1e-6 + 0.1e-9*float64(b)) * math.Exp(0.02*rng.NormFloat64())
		}
		recs = append(recs, results.Record{Schema: results.SchemaVersion, Bench: "pingpong", Params: results.Params{"bytes": b}, Ranks: 2,
			Unit: "s", Summary: results.Summarize(s), Samples: s,
			Meta: results.Meta{MPILibrary: lib, Backend: "native", Launch: launch, Commit: "0123456789ab"}})
	}
	return recs
}

// TestCompare: two inputs, one a run directory, one a labelled file;
// every output format; the ratio plot; --by on one file holding two MPI
// libraries; --by launch with the spread table; --models.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	runA := filepath.Join(dir, "run-ompi")
	if err := os.Mkdir(runA, 0o755); err != nil {
		t.Fatal(err)
	}
	a := compareRecords(1, 1, []int{8, 1024, 65536}, "Open MPI", "1")
	b := compareRecords(2, 1.5, []int{8, 1024, 65536, 1 << 20}, "MPICH", "2")
	writeJSONL(t, filepath.Join(runA, results.RecordsFile), a)
	fileB := filepath.Join(dir, "mpich.jsonl")
	writeJSONL(t, fileB, b)

	code, out, errs := runCLI(t, "compare", runA, "mpich="+fileB)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"pingpong", "run-ompi us", "mpich us", "mpich/run-ompi", "1.500", "slower", "p=0.000 n=20", "missing", "geomean"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "compare", "--format", "csv", runA, fileB)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 6 || rows[0][0] != "bench" {
		t.Errorf("csv: exit %d, %v, %d rows:\n%s", code, err, len(rows), out)
	}
	// A label of the command line reaches the CSV header escaped.
	code, out, _ = runCLI(t, "compare", "--format", "csv", "a\x1b[31m="+runA, fileB)
	if code != 0 || strings.Contains(out, "\x1b") || !strings.Contains(out, `a\x1b[31m_median`) {
		t.Errorf("csv with a label holding ESC: exit %d:\n%q", code, out)
	}
	code, out, _ = runCLI(t, "compare", "--format", "jsonl", runA, fileB)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 {
		t.Errorf("jsonl: exit %d, %d lines:\n%s", code, len(lines), out)
	}
	var first struct {
		Row    string
		VsBase []struct {
			Ratio       float64
			Significant bool
			Verdict     string
		} `json:"vs_base"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Row != "point" || !first.VsBase[0].Significant || first.VsBase[0].Verdict != "slower" {
		t.Errorf("jsonl first row %q: %+v %v", lines[0], first, err)
	}
	code, out, _ = runCLI(t, "compare", "--format", "markdown", runA, fileB)
	if code != 0 || !strings.Contains(out, "| bytes") || !strings.Contains(out, "**pingpong**") {
		t.Errorf("markdown: exit %d:\n%s", code, out)
	}

	plots := filepath.Join(dir, "plots")
	code, _, errs = runCLI(t, "compare", "--plot", plots, runA, fileB)
	if code != 0 {
		t.Fatalf("--plot: exit %d: %s", code, errs)
	}
	if png, err := os.ReadFile(filepath.Join(plots, "compare-pingpong.png")); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("ratio plot: %v", err)
	}
	// A plot's name taken by a directory is the user's: refused, exit 2.
	taken := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(taken, "compare-pingpong.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "compare", "--plot", taken, runA, fileB)
	if want := "compare-pingpong.png is a directory, not a regular file: commcost writes its plot there"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("--plot over a directory: exit %d, %q; want 2 and %q", code, errs, want)
	}

	// A plot's name taken by a user's file (even an image) is refused and
	// the file kept; compare's own plot of an earlier run is replaced.
	users := filepath.Join(dir, "users")
	mine := filepath.Join(users, "compare-pingpong.png")
	if err := os.MkdirAll(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("\x89PNG\r\n\x1a\nthe user's image"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "compare", "--plot", users, runA, fileB)
	if want := mine + " exists and is not a plot commcost wrote"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("--plot over a user's file: exit %d, %q; want 2 and %q", code, errs, want)
	}
	if data, err := os.ReadFile(mine); err != nil || !strings.HasSuffix(string(data), "the user's image") {
		t.Errorf("the user's file was replaced: %q, %v", data, err)
	}
	if code, _, errs = runCLI(t, "compare", "--plot", plots, runA, fileB); code != 0 {
		t.Errorf("--plot over its own plots: exit %d: %s", code, errs)
	}

	// Both runs in one file: --by mpi_library splits them again.
	both := filepath.Join(dir, "both.jsonl")
	writeJSONL(t, both, append(append([]results.Record(nil), a...), b...))
	code, out, errs = runCLI(t, "compare", "--by", "mpi_library", both)
	if code != 0 || !strings.Contains(out, "MPICH/Open MPI") || !strings.Contains(out, "slower") {
		t.Errorf("--by mpi_library: exit %d %s:\n%s", code, errs, out)
	}

	// Three launches of the same machine, each 10% off: the spread
	// between launches next to the spread within one.
	var launches []results.Record
	for i, s := range []float64{1, 1.1, 0.9} {
		launches = append(launches, compareRecords(uint64(10+i), s, []int{8, 1024}, "Open MPI", []string{"1", "2", "3"}[i])...)
	}
	lf := filepath.Join(dir, "launches.jsonl")
	writeJSONL(t, lf, launches)
	code, out, errs = runCLI(t, "compare", "--by", "launch", lf)
	if code != 0 {
		t.Fatalf("--by launch: exit %d: %s", code, errs)
	}
	for _, want := range []string{"spread between launches and within one", "between ±", "within ±", "2/1", "3/1"} {
		if !strings.Contains(out, want) {
			t.Errorf("--by launch lacks %q:\n%s", want, out)
		}
	}

	// Models: Hockney and piecewise fitted to a ping-pong sweep, compared
	// on it.
	fitRecs := filepath.Join(dir, "fit.jsonl")
	writeJSONL(t, fitRecs, synthetic("piecewise"))
	var modelFiles []string
	for _, kind := range []string{"hockney", "piecewise"} {
		code, out, errs := runCLI(t, "fit", kind, fitRecs, "--format", "json")
		if code != 0 {
			t.Fatalf("fit %s: %s", kind, errs)
		}
		p := filepath.Join(dir, kind+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		modelFiles = append(modelFiles, p)
	}
	code, out, errs = runCLI(t, "compare", "--models", modelFiles[0], "pw="+modelFiles[1], fitRecs)
	if code != 0 {
		t.Fatalf("--models: exit %d: %s", code, errs)
	}
	for _, want := range []string{"Models on pingpong records", "hockney us", "pw us", "closest (*)", "Per bench", "pingpong", " *"} {
		if !strings.Contains(out, want) {
			t.Errorf("--models lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "compare", "--models", "--format", "csv", modelFiles[0], modelFiles[1], fitRecs)
	if rows, err := csv.NewReader(strings.NewReader(out)).ReadAll(); code != 0 || err != nil || len(rows) != 24 || rows[0][len(rows[0])-1] != "best" {
		t.Errorf("--models csv: exit %d %v %d rows", code, err, len(rows))
	}
}

// TestCompareBackendMix: compare compares a native run with a local one,
// which may be meant (what the transport costs), but says on stderr that
// the inputs mix backends, naming the input of each; inputs of one
// backend get no such warning.
func TestCompareBackendMix(t *testing.T) {
	dir := t.TempDir()
	local := compareRecords(3, 0.06, []int{8, 64}, "commcost mpi/local", "")
	for i := range local {
		local[i].Meta.Backend = "local"
	}
	fa, fb, fc := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "c.jsonl")
	writeJSONL(t, fa, compareRecords(1, 1, []int{8, 64}, "Open MPI", ""))
	writeJSONL(t, fb, compareRecords(2, 1, []int{8, 64}, "Open MPI", ""))
	writeJSONL(t, fc, local)
	for _, tc := range []struct {
		name string
		args []string
		want string // "" no warning of a mix
	}{
		{"one backend", []string{"compare", fa, fb}, ""},
		{"native_and_local", []string{"compare", fa, fc}, "commcost: warning: the inputs mix backends: " + fa + ` has "native" records and ` + fc + ` "local" ones; their ratios compare the transports`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != 0 || !strings.Contains(out, "pingpong") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if tc.want == "" && strings.Contains(errs, "mix backends") || tc.want != "" && !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q, want %q", errs, tc.want)
			}
		})
	}
}

// TestCompareTruncated: an interrupted input is used without its last
// line, with a warning on stderr.
func TestCompareTruncated(t *testing.T) {
	dir := t.TempDir()
	fa, fb := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeJSONL(t, fa, compareRecords(1, 1, []int{8, 64}, "Open MPI", ""))
	writeJSONL(t, fb, compareRecords(2, 1, []int{8, 64}, "Open MPI", ""))
	f, err := os.OpenFile(fb, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema":1,"bench":"pingp`)
	f.Close()
	code, out, errs := runCLI(t, "compare", fa, fb)
	if code != 0 || !strings.Contains(errs, "warning: the last line of "+fb) || !strings.Contains(out, "pingpong") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	writeJSONL(t, good, compareRecords(1, 1, []int{8}, "Open MPI", ""))
	other := filepath.Join(dir, "other.jsonl")
	writeJSONL(t, other, []results.Record{{Schema: 1, Bench: "bandwidth", Ranks: 2, Unit: "B/s", Params: results.Params{"bytes": 8, "window": 64, "iters": 100}, Summary: results.Summarize([]float64{1})}})
	foo := filepath.Join(dir, "foo.jsonl")
	writeJSONL(t, foo, []results.Record{{Schema: 1, Bench: "bandwidth", Ranks: 2, Unit: "B/s", Params: results.Params{"bytes": 8, "window": 64, "iters": 100}, Summary: results.Summarize([]float64{1})}})
	editLine(t, foo, 1, `"params":{`, `"params":{"foo":"x",`)
	garbage := filepath.Join(dir, "garbage.jsonl")
	os.WriteFile(garbage, []byte("this is not JSON\n"), 0o644)
	newer := filepath.Join(dir, "newer.jsonl")
	os.WriteFile(newer, []byte(`{"schema":2,"bench":"pingpong","unit":"s","params":{"bytes":8},"meta":{}}`+"\n"), 0o644)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	notDir := filepath.Join(dir, "file")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	os.Mkdir(runDir, 0o755)
	writeJSONL(t, filepath.Join(runDir, "records.jsonl"), compareRecords(1, 1, []int{8}, "Open MPI", ""))
	os.WriteFile(notDir, nil, 0o644)
	model := filepath.Join(dir, "model.json")
	os.WriteFile(model, []byte(`{"model":"nonsense"}`), 0o644)
	negTw := negativeHockney(t, dir)
	goodCopy := filepath.Join(dir, "good-copy.jsonl")
	if data, err := os.ReadFile(good); err != nil || os.WriteFile(goodCopy, data, 0o644) != nil {
		t.Fatal("copying good.jsonl")
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one input", []string{"compare", good}, "at least two inputs"},
		{"no bench in common", []string{"compare", good, other}, "no bench in common"},
		{"not JSON Lines", []string{"compare", good, garbage}, "input " + garbage},
		{"newer schema", []string{"compare", good, newer}, "upgrade commcost"},
		{"a parameter the bench has not", []string{"compare", good, foo}, "input " + foo + ": results: " + foo + `: line 1: record bandwidth: impossible parameter foo = "x": bandwidth records have no parameter foo (theirs: bytes, window, iters)`},
		{"no records", []string{"compare", good, empty}, "holds no records"},
		{"missing file", []string{"compare", good, filepath.Join(dir, "none.jsonl")}, "none.jsonl"},
		{"label twice", []string{"compare", "x=" + good, "x=" + other}, `label "x" used twice`},
		// One file under two names is compared with itself: refused
		// however it is spelt.
		{"same file twice", []string{"compare", good, good}, good + " is given twice: its records would count as two runs"},
		{"same file under two labels", []string{"compare", "a=" + good, "b=" + good}, good + " is given twice"},
		{"a copy of the file", []string{"compare", good, goodCopy}, "input " + goodCopy + " line 1 is the same record as " + good + " line 1 (pingpong bytes=8, every field alike"},
		{"same file through a link", []string{"compare", good, link}, good + " and " + link + " are the same file"},
		{"run directory and its records", []string{"compare", runDir, filepath.Join(runDir, "records.jsonl")}, "records.jsonl is given twice"},
		{"same file with by", []string{"compare", "--by", "mpi_library", good, link}, "are the same file"},
		{"empty label", []string{"compare", good, "=" + good}, "empty name"},
		{"empty path", []string{"compare", good, "a="}, "a=: empty path after '='; want name=path, the path a run directory or a records file"},
		{"empty argument", []string{"compare", good, ""}, "an empty argument; want a run directory, a records file or name=path"},
		{"unknown by", []string{"compare", "--by", "colour", good}, "--by colour: unknown key"},
		{"by one group", []string{"compare", "--by", "mpi_library", good}, "every record has mpi_library Open MPI"},
		{"format", []string{"compare", "--format", "gobench", good, good}, "--format gobench"},
		{"alpha", []string{"compare", "--alpha", "1.5", good, good}, "--alpha 1.5"},
		{"plot is a file", []string{"compare", "--plot", notDir, good, good}, "--plot " + notDir + ": " + notDir + " is a regular file; --plot names a directory (new or existing) for the PNGs"},
		{"plot parent missing", []string{"compare", "--plot", filepath.Join(dir, "no", "plots"), good, good}, "does not exist"},
		{"plot on proc", []string{"compare", "--plot", "/proc/self", good, good}, "--plot /proc/self: /proc/self is on the kernel's proc filesystem, not a place for data; --plot names a directory (new or existing) for the PNGs"},
		{"plot on devtmpfs", []string{"compare", "--plot", "/dev", good, good}, "--plot /dev: /dev is on the kernel's devtmpfs filesystem, not a place for data"},
		{"plot on sysfs", []string{"compare", "--plot", "/sys/kernel", good, good}, "--plot /sys/kernel: /sys/kernel is on the kernel's sysfs filesystem"},
		{"models too few", []string{"compare", "--models", good}, "MODEL.json [MODEL.json ...] RECORDS"},
		{"models bad json", []string{"compare", "--models", model, good}, "MODEL.json " + model},
		{"models negative t_w", []string{"compare", "--models", negTw, good}, "MODEL.json " + negTw + ": model JSON: hockney: t_w = -1e-09 s/B is negative: a message would cost less the longer it is"},
		{"models with by", []string{"compare", "--models", "--by", "launch", model, good}, "--by"},
		{"models with plot", []string{"compare", "--models", "--plot", dir, model, good}, "--plot"},
		{"models with alpha", []string{"compare", "--models", "--alpha", "0.1", model, good}, "--alpha is the level of the U test between runs, which --models does not run"},
		{"unknown flag", []string{"compare", "--bogus", good, good}, "bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
}

// TestLaunchesScript: scripts/launches.sh runs a command N times with
// COMMCOST_LAUNCH_ID = 1..N, the records carry it, and compare --by
// launch reads them back; bad arguments exit 2 and a failing launch stops
// the series with its status.
func TestLaunchesScript(t *testing.T) {
	bin := commcostBinary(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "launches.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "pp.jsonl")
	cmd := exec.Command(script, "3", bin, "pingpong", "--backend", "local", "--sizes", "8,1K", "--iters", "10",
		"--min-reps", "6", "--max-reps", "6", "--samples", "--out", out)
	cmd.Env = append(os.Environ(), "COMMCOST_LAUNCH_ID=")
	if r := runCmd(t, cmd); r.code != 0 {
		t.Fatalf("launches.sh: exit %d: %s", r.code, r.stderr)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.Meta.Launch)
	}
	if got := strings.Join(ids, ","); got != "1,1,2,2,3,3" {
		t.Errorf("launch ids %s, want 1,1,2,2,3,3", got)
	}
	code, stdout, errs := runCLI(t, "compare", "--by", "launch", out)
	if code != 0 || !strings.Contains(stdout, "spread between launches") || !strings.Contains(stdout, "3/1") {
		t.Errorf("compare --by launch: exit %d %s\n%s", code, errs, stdout)
	}

	// With no COMMCOST_LAUNCH_ID at all (the ordinary call), the ids are
	// 1..N: the script runs under set -u.
	unsetMarker := filepath.Join(dir, "ids-unset")
	cmd = exec.Command(script, "2", "sh", "-c", `echo "$COMMCOST_LAUNCH_ID" >> "$0"`, unsetMarker)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COMMCOST_LAUNCH_ID=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if r := runCmd(t, cmd); r.code != 0 {
		t.Fatalf("COMMCOST_LAUNCH_ID unset: exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(unsetMarker); string(b) != "1\n2\n" {
		t.Errorf("ids with COMMCOST_LAUNCH_ID unset %q, want 1 2", b)
	}

	// Inside a batch array task the ids are prefixed with the task's.
	marker := filepath.Join(dir, "ids")
	cmd = exec.Command(script, "2", "sh", "-c", `echo "$COMMCOST_LAUNCH_ID" >> "$0"`, marker)
	cmd.Env = append(os.Environ(), "COMMCOST_LAUNCH_ID=7")
	if r := runCmd(t, cmd); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(marker); string(b) != "7.1\n7.2\n" {
		t.Errorf("ids in an array task %q, want 7.1 7.2", b)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no N", nil, 2, "no N given"},
		{"N zero", []string{"0", "true"}, 2, "N 0: want an integer >= 1"},
		{"N not a number", []string{"x", "true"}, 2, "N x"},
		{"no command", []string{"2"}, 2, "no command given"},
		{"failing launch", []string{"3", "sh", "-c", "exit 5"}, 5, "launch 1 of 3 (COMMCOST_LAUNCH_ID=1) failed with status 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(script, tc.args...)
			cmd.Env = append(os.Environ(), "COMMCOST_LAUNCH_ID=")
			r := runCmd(t, cmd)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}
}

// TestResyncFlag: --resync needs --sync window and a non-zero number; a
// window-mode k-k-access with it runs on local ranks.
func TestResyncFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"without window", []string{"kkaccess", "--backend", "local", "--resync", "2"}, "--resync: the clock is only synchronised with --sync window"},
		{"zero", []string{"kkaccess", "--backend", "local", "--sync", "window", "--resync", "0"}, "--resync 0"},
		{"not a number", []string{"kkaccess", "--sync", "window", "--resync", "x"}, "resync"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUsageError(t, dir, tc.args, tc.want) })
	}
	code, _, errs := runCLI(t, "kkaccess", "--backend", "local", "--np", "2", "--k", "1", "--l", "64", "--r", "1", "--sync", "window",
		"--resync", "-1", "--min-reps", "3", "--max-reps", "3", "--format", "jsonl")
	if code != 0 {
		t.Errorf("offset-only window run: exit %d: %s", code, errs)
	}
}
