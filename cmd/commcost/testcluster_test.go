//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// Ground truth on a shaped multi-host cluster built from network namespaces
// by scripts/testcluster.sh: the models must recover link rates
// that were configured, not measured. The checks need root, ip netns, tc
// tbf and mpirun, and skip with the reason otherwise (and under -short).
//
// Everything the script creates is removed by its own trap (EXIT, INT,
// TERM, HUP); the script also stops COMMAND after --timeout, gets SIGTERM
// when this test process dies (Pdeathsig) or its context ends, and
// t.Cleanup runs `testcluster.sh --cleanup` for the case it was killed
// outright. A run that crashed anyway is cleaned up by the next one (same
// prefix).

const (
	clusterPrefix = "cct-" // not the script's default, so a user's cc- cluster is never touched
	clusterMTU    = 1500   // veth default
)

var clusterScript = filepath.Join("..", "..", "scripts", "testcluster.sh")

// clusterRounds: each sweep runs this many times, each round under its own
// mpirun, some seconds apart, so that a burst of load from other work on
// the machine cannot spoil every repetition of a point.
const clusterRounds = 3

// rounds repeats a shell command clusterRounds times, stopping at the
// first failure.
func rounds(cmd string) string {
	return fmt.Sprintf("for round in %s; do %s || exit 1; done", strings.TrimSpace(strings.Repeat("x ", clusterRounds)), cmd)
}

// testClusterBinary skips unless this machine can host a test cluster and
// returns the commcost binary to run on it.
func testClusterBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("test cluster: skipped under -short (builds network namespaces and runs mpirun, about 2 minutes)")
	}
	if os.Geteuid() != 0 {
		t.Skip("test cluster: needs root (ip netns, tc and /etc/hosts); run go test as root or in CI")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("test cluster: ip (iproute2) not found, so no ip netns")
	}
	if err := mpirun.Available(); err != nil {
		t.Skipf("test cluster: %v", err)
	}
	if !mpirun.OpenMPI() {
		t.Skipf("test cluster: scripts/testcluster.sh starts ranks through Open MPI's rsh agent; this build links %s", mpirun.Linked())
	}
	var out bytes.Buffer
	cmd := exec.Command(clusterScript, "--check", "--prefix", clusterPrefix)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Skipf("test cluster: %s", strings.TrimSpace(out.String()))
		}
		t.Fatalf("%s --check: %v\n%s", clusterScript, err, out.String())
	}
	return commcostBinary(t)
}

// runCluster runs command on a cluster built with the given options and
// returns its output; a non-zero exit fails the test.
func runCluster(t *testing.T, limit time.Duration, opts []string, command string) string {
	t.Helper()
	out, _ := runClusterLoad(t, limit, opts, command)
	return out
}

// runClusterLoad is runCluster that also says what load others put on the
// machine while the launch ran (sampleOthers).
func runClusterLoad(t *testing.T, limit time.Duration, opts []string, command string) (string, othersLoad) {
	t.Helper()
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 30*time.Second; left < limit {
			limit = left
		}
		if limit < 60*time.Second {
			t.Fatalf("test cluster: only %v left before go test's -timeout; raise -timeout", limit)
		}
	}
	t.Cleanup(func() {
		// Idempotent; waits for the run's lock if the script is still
		// stopping.
		out, err := exec.Command(clusterScript, "--cleanup", "--prefix", clusterPrefix, "--lock-wait", "60", "-q").CombinedOutput()
		if err != nil {
			t.Errorf("%s --cleanup: %v\n%s", clusterScript, err, out)
		}
	})
	// The script's own watchdog stops COMMAND first; the context is the
	// backstop for a script that does not return.
	const lockWait = 120 * time.Second // another cluster (another go test) may be running
	ctx, cancel := context.WithTimeout(context.Background(), lockWait+limit+45*time.Second)
	defer cancel()
	args := append([]string{"--prefix", clusterPrefix, "--timeout", fmt.Sprint(int(limit.Seconds())),
		"--lock-wait", fmt.Sprint(int(lockWait.Seconds())), "--stats"}, opts...)
	args = append(args, "--", command)
	cmd := exec.CommandContext(ctx, clusterScript, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // let the trap clean up
	cmd.WaitDelay = 30 * time.Second
	// If this process dies (a panic on -timeout, a kill), the script gets
	// SIGTERM and cleans up. Pdeathsig follows the thread that started the
	// child, so keep this goroutine on it until the script has ended.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	load, err := measureOthers(cmd)
	t.Logf("testcluster.sh %s (%.0f s; %v):\n%s", strings.Join(opts, " "), time.Since(start).Seconds(), load, out.String())
	if err != nil {
		t.Fatalf("testcluster.sh %s -- %s: %v", strings.Join(opts, " "), command, err)
	}
	return out.String(), load
}

// fitJSON runs `commcost fit KIND FILE ARGS... --format json` and decodes
// the model; the table form goes to the test log.
func fitJSON(t *testing.T, kind, file string, args ...string) model.Model {
	t.Helper()
	base := append([]string{"fit", kind, file}, args...)
	code, table, stderr := runCLI(t, base...)
	t.Logf("commcost %s:\n%s%s", strings.Join(base, " "), table, stderr)
	code, out, stderr := runCLI(t, append(base, "--format", "json")...)
	if code != 0 {
		t.Fatalf("commcost fit %s: exit %d\n%s", kind, code, stderr)
	}
	m, _, err := model.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rateFromTw is the link rate in bit/s whose wire time per TCP payload byte
// is tw (the inverse of model.TCPWireSecPerByte).
func rateFromTw(tw float64) float64 { return model.TCPWireSecPerByte(1, clusterMTU) / tw }

// lowerEnvelope writes src's records to a new file, one per point (bench,
// ranks, parameters), the one with the smallest minimum over all rounds,
// with that minimum as its median: the fastest of all repetitions.
//
// Why the minimum: a tbf-shaped link is a hard cap, so no repetition can
// beat the wire time (but for the bucket, 1 ms of data, which shifts the
// intercept, not the slope), while everything else on a loaded 2-core
// machine only adds time: ranks that do not get a core in time leave the
// link idle (zero windows, late rendezvous answers). The fastest
// repetition is the one closest to what the network alone allows; the
// medians, which commcost fit uses as MEASURE.md says, are fitted too and
// logged for comparison.
func lowerEnvelope(t *testing.T, src string) string {
	t.Helper()
	recs, err := results.ReadJSONLFile(src)
	if err != nil {
		t.Fatal(err)
	}
	best := map[string]int{}
	var order []string
	for i, r := range recs {
		keys := make([]string, 0, len(r.Params))
		for k, v := range r.Params {
			keys = append(keys, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(keys)
		key := fmt.Sprintf("%s ranks=%d %s", r.Bench, r.Ranks, strings.Join(keys, " "))
		j, ok := best[key]
		if !ok {
			order = append(order, key)
		}
		if !ok || r.Min < recs[j].Min {
			best[key] = i
		}
	}
	out := make([]results.Record, 0, len(order))
	for _, k := range order {
		r := recs[best[k]]
		r.Median, r.CI95 = r.Min, [2]float64{r.Min, r.Min}
		// The predictions the record carries were judged against the
		// median it no longer holds (a reader refuses such errors); the
		// checks refit them. A pattern's derived values (a ping-pong's
		// round trip, twice the median) are of that median too.
		if r.Bench != results.BenchApp {
			r.Derived = nil
		}
		for key := range r.Derived {
			if strings.HasPrefix(key, "pred_") {
				delete(r.Derived, key)
			}
		}
		out = append(out, r)
	}
	dst := strings.TrimSuffix(src, ".jsonl") + "-min.jsonl"
	writeJSONL(t, dst, out)
	return dst
}

// clusterSizes are the ping-pong sizes on the shaped link: powers of two
// and the midpoints between them, 64 KiB to 2 MiB, so that holding out
// every fourth leaves points on both sides of each held-out one.
const clusterSizes = "64K,96K,128K,192K,256K,384K,512K,768K,1M,1536K,2M"

// TestTestCluster runs both ground-truth checks with one build of the
// binary (a build lives in the building test's temporary directory).
func TestTestCluster(t *testing.T) {
	bin := testClusterBinary(t)
	t.Run("LoadSampler", testClusterLoadSampler)
	t.Run("Hockney", func(t *testing.T) { testClusterHockney(t, bin) })
	t.Run("AllToAllBus", func(t *testing.T) { testClusterAllToAllBus(t, bin) })
	t.Run("Medium", func(t *testing.T) { testClusterMedium(t, bin) })
	t.Run("Trilinear", func(t *testing.T) { testClusterTrilinear(t, bin) })
	t.Run("Apps", func(t *testing.T) { testClusterApps(t, bin) })
	t.Run("AppsMP", func(t *testing.T) { testClusterAppsMP(t, bin) })
	t.Run("Collectives", func(t *testing.T) { testClusterColl(t, bin) })
}

// testClusterApps: paper 000's four applications on the direct store over
// four hosts shaped to 200 Mbit/s, predicted by the trilinear model fitted
// on kkaccess records alone (reads and writes apart, k = 1, 2, 4 x l = 64K,
// 128K x r = 1/4, 1/2, 1, a = 4 accesses back to back per repetition, each
// a block: --block), the store whose protocol is the pattern's.
// Asserted: the phases whose every k-k-access cell lies in the fitted
// (k, l, r) range are predicted with a median relative error of at most
// 10% (goal 5%), on the medians, as the trilinear check, when the launch
// met no load from others (othersLoad; the cluster's own ranks do not
// count). Under others' load the phases, which run for hundreds of
// milliseconds with computation between their accesses, vary by tens of
// percent from run to run; the test then asserts 35%, which still fails a
// wrong workload (a count off by (p+2)/p, a write priced as nothing) or a
// store whose protocol is not the pattern's, and logs that the 10% goal
// was not checked. Every
// phase's error, in range or not, is logged, and the fit of the fastest
// repetitions for comparison.
//
// Why blocks (kkaccess --block): each of the programs' accesses sends its
// k packets to one home, where the variable's block is, and the paper's
// k-k-access draws the k packets' modules independently. On these links
// the two cost the same for reads, while k written packets cost more
// spread than as a block (up to half as much again at k = 4), so bitonic
// sort, which writes as much as it reads, was priced far too high from a
// spread calibration (the calibration and the programs repeating closely:
// the error was the calibration's, not noise). Calibration and programs
// launch with eager TCP messages (clusterEagerTCP: with four ranks on two
// cores Open MPI's rendezvous ran exchanges at full or half rate at
// random); under rendezvous sample sort's local sort, whose nine accesses
// in a row go to one home, had the largest error
// (docs/findings/applications.md and model-truth.md have the runs).
//
// The configurations: every access carries k l >= 64 KiB (a k-k-access of
// one tbf bucket, 25 KB, or less rides the bucket in the calibration, while
// a program's back-to-back accesses empty it), and blocks of many k l (the
// paper's ceil(D/(k l)) counts a partial last access as a whole one). The
// calibration times a = 4 accesses in a row for the same reason: a single
// access after a barrier meets idle links and cores, and with a = 1 the
// phases other than the matrix product were priced 15-35% low, with a = 4
// their errors fall on both sides of zero (docs/findings/applications.md).
// The matrix product's workload counts the p+1 of its p+2 submatrix
// accesses that cross the network (its own B block is a copy within the
// rank; MatMul, globalvar.Keeps), where the paper's formula was 6/5 too
// much at p = 4 (section 6.5, data locality). The four hosts share two
// cores, so computing ranks yield after every poll of the store.
//
// A run whose median misses its bound is measured once more (calibration
// and applications), and the test fails only if that run misses too, as
// testClusterAppsMP does (clusterAppsMPRetry): under others' load the
// phases that drive the median (bitonic, the matrix product) move by tens
// of points from run to run (docs/findings/applications.md).
func testClusterApps(t *testing.T, bin string) {
	if measureClusterApps(t, bin, false) {
		t.Log("the median missed its bound: measuring again, and only this run is asserted")
		measureClusterApps(t, bin, true)
	}
}

// measureClusterApps is one run of testClusterApps: it logs every phase's
// error and reports whether the asserted median missed its bound, which is
// an error when final (else logged).
func measureClusterApps(t *testing.T, bin string, final bool) (missed bool) {
	t.Helper()
	const goal, loaded = 0.10, 0.35
	dir := t.TempDir()
	kk, out := filepath.Join(dir, "kkaccess.jsonl"), filepath.Join(dir, "apps.jsonl")
	rd, wr := filepath.Join(dir, "read.json"), filepath.Join(dir, "write.json")
	app := func(name, args string) string {
		return fmt.Sprintf("$CC_MPIRUN %s %s app %s %s --store direct --model %s --model %s --min-reps 7 --max-reps 40 --max-time 2 --format jsonl --out %s >/dev/null",
			clusterEagerTCP, bin, name, args, rd, wr, out)
	}
	// The models fitted here only let the applications run; the assertion
	// refits the records below.
	_, load := runClusterLoad(t, 240*time.Second, []string{"--hosts", fmt.Sprint(clusterAppsHosts), "--rate", "200mbit"}, strings.Join([]string{
		fmt.Sprintf("$CC_MPIRUN %s %s kkaccess --k 1,2,4 --l 64K,128K --r 0.25,0.5,1 --op read,write --a 4 --block --min-reps 10 --max-reps 60 --max-time 0.7 --format jsonl --out %s >/dev/null", clusterEagerTCP, bin, kk),
		fmt.Sprintf("%s fit trilinear %s --op read --format json > %s", bin, kk, rd),
		fmt.Sprintf("%s fit trilinear %s --op write --format json > %s", bin, kk, wr),
		app("bitonic", "--n 64K --k 2,4 --l 64K"),
		app("matmul", "--n 512 --k 2 --l 64K"),
		app("samplesort", "--n 128K --k 1 --l 64K"),
		app("concomp", "--n 16384 --density 0.02 --k 1 --l 64K"),
	}, " && "))
	limit := goal
	if load.Busy() {
		limit = loaded
		t.Logf("busy machine (%v): asserting a median error of at most %.0f%% (gross errors); the %.0f%% goal is asserted when others take at most %.2f cores on average and %.2f in any window",
			load, 100*loaded, 100*goal, clusterOthersMax, clusterOthersPeak)
	}
	inRange := func(items []results.WorkItem) bool {
		num := func(v any) float64 {
			switch x := v.(type) {
			case int:
				return float64(x)
			case float64:
				return x
			}
			return math.NaN()
		}
		for _, it := range items {
			k, l, r := num(it.Params["k"]), num(it.Params["l"]), num(it.Params["r"])
			if !(k >= 1 && k <= 4 && l >= 64<<10 && l <= 128<<10 && r >= 0.25 && r <= 1) {
				return false
			}
		}
		return true
	}
	for _, v := range []struct {
		name     string
		kk, apps string
		assert   bool
	}{
		{"medians (asserted)", kk, out, true},
		{"fastest repetitions (for comparison)", lowerEnvelope(t, kk), lowerEnvelope(t, out), false},
	} {
		models := []model.Model{
			fitJSON(t, "trilinear", v.kk, "--op", "read", "--holdout", "none"),
			fitJSON(t, "trilinear", v.kk, "--op", "write", "--holdout", "none"),
		}
		preds, err := report.NewPredictors(models, []string{"read", "write"}, true)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := results.ReadJSONLFile(v.apps)
		if err != nil {
			t.Fatal(err)
		}
		// A phase whose every cell lies in the fitted range must be
		// predicted by both models; outside it (sample sort's 16-byte
		// splitter accesses) the trilinear surface may extrapolate below
		// zero, which the report shows as "-" and this test only logs.
		var in, out []results.Record
		for _, r := range recs {
			if inRange(r.Workload) {
				in = append(in, r)
			} else {
				out = append(out, r)
			}
		}
		if notes := report.AnnotateApps(in, preds); len(notes) > 0 {
			t.Errorf("%s: phases in the fitted range: %v", v.name, notes)
		}
		if notes := report.AnnotateApps(out, preds); len(notes) > 0 {
			t.Logf("%s: phases outside the fitted range (not asserted): %v", v.name, notes)
		}
		var rep strings.Builder
		var errs []float64
		fmt.Fprintf(&rep, "%s: phase, measured, predicted, error (* = every cell in the fitted range)\n", v.name)
		for _, e := range report.AppErrors(recs, preds[0].Name) {
			mark := " "
			if inRange(e.Record.Workload) {
				mark = "*"
				errs = append(errs, math.Abs(e.Err))
			}
			fmt.Fprintf(&rep, " %s %-40s %-14v %9.2f ms %9.2f ms %+7.1f%%\n", mark,
				fmt.Sprintf("%v %v %v", e.Record.Params["app"], e.Record.Params["phase"], e.Record.Params["sync"]),
				fmt.Sprintf("k=%v n=%v", e.Record.Params["k"], e.Record.Params["n"]), e.Record.Median*1e3, e.Predicted*1e3, 100*e.Err)
		}
		sort.Float64s(errs)
		med := math.NaN()
		if len(errs) > 0 {
			med = errs[len(errs)/2]
			if len(errs)%2 == 0 {
				med = (errs[len(errs)/2-1] + errs[len(errs)/2]) / 2
			}
		}
		fmt.Fprintf(&rep, "median |error| over the %d phases in range: %.1f%% (goal 10%%, 5%% ideally)", len(errs), 100*med)
		t.Log(rep.String())
		if v.assert && (len(errs) < 7 || !(med <= limit)) {
			missed = true
			msg := fmt.Sprintf("%s: median |error| %.1f%% over %d phases in the fitted range; want <= %.0f%% over at least 7", v.name, 100*med, len(errs), 100*limit)
			if final {
				t.Error(msg)
			} else {
				t.Log("not asserted here: " + msg)
			}
		}
	}
	return missed
}

// testClusterTrilinear: the k-k-access of paper 000 on four hosts whose
// links are shaped to R = 200 Mbit/s (one switch), the setting the
// trilinear model was made for: a network that moves every byte at one
// rate, so T(k, l, r) is linear in each parameter. Packets of 32 KiB and
// more (with the tbf bucket of 1 ms = 25 KB, smaller accesses ride it at
// link speed and T stops being linear in l). Asserted: held-out cells
// (every fourth of k = 1, 2, 4, 8 x l = 32K, 64K, 128K x r = 1/4, 1/2, 1)
// are predicted with a median relative error within the cluster's goal of
// 7%.
// Logged: at r = 1/4 one host reads k l bytes through its downlink, so
// c5 + c7/4 should be the wire time per byte, 8/R x 1514/1448; at r = 1
// every host also sends as much, and its ACKs queue behind that data in
// the uplink's tbf queue, which the r terms absorb.
//
// A sweep whose held-out median misses is measured once more and only
// that sweep is asserted, as the applications' checks do: the median sits
// near 4%, and a load above 4 on the two cores once spoiled one cell
// enough to pass 7% (docs/findings/model-truth.md); the pattern measures
// a = 1.
func testClusterTrilinear(t *testing.T, bin string) {
	if measureClusterTrilinear(t, bin, false) {
		t.Log("the held-out median missed its bound: measuring again, and only this sweep is asserted")
		measureClusterTrilinear(t, bin, true)
	}
}

// measureClusterTrilinear is one sweep of testClusterTrilinear; it
// reports whether the held-out median missed (an error when final).
func measureClusterTrilinear(t *testing.T, bin string, final bool) (missed bool) {
	t.Helper()
	const rate = 200e6
	file := filepath.Join(t.TempDir(), "kkaccess.jsonl")
	runCluster(t, 200*time.Second, []string{"--hosts", "4", "--rate", "200mbit"},
		fmt.Sprintf("$CC_MPIRUN %s kkaccess --k 1,2,4,8 --l 32K,64K,128K --r 0.25,0.5,1 --min-reps 5 --max-reps 100 --max-time 1 --out %s", bin, file))
	tr := fitJSON(t, "trilinear", file).(*model.Trilinear)
	wire := model.TCPWireSecPerByte(rate, clusterMTU)
	perByte := tr.Coef(5) + tr.Coef(7)/4
	t.Logf("r = 1/4: c5 + c7/4 = %.2f ns/B, wire time %.2f ns/B (%+.1f%%), recovered rate %.1f Mbit/s",
		perByte*1e9, wire*1e9, 100*(perByte/wire-1), rateFromTw(perByte)/1e6)
	return heldOut(t, "trilinear", file, model.Options{}, 0.07, 5, final)
}

// heldOut checks the cluster's held-out goal for kind on the medians of file:
// every fourth point predicted from a fit of the others, at least minTest
// of them, with a median relative error of at most maxMedian. It reports
// whether the goal was missed, an error when final (else logged).
func heldOut(t *testing.T, kind, file string, opt model.Options, maxMedian float64, minTest int, final bool) (missed bool) {
	t.Helper()
	recs, err := results.ReadJSONLFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := model.CrossValidate(kind, recs, opt, model.Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s held-out (%s): %d points predicted from %d, median relative error %.2f%%, p95 %.2f%%, max %.2f%%",
		kind, v.Scheme, v.NTest, v.NTrain, 100*v.MedianRelErr, 100*v.P95RelErr, 100*v.MaxRelErr)
	if v.NTest < minTest || v.MedianRelErr > maxMedian {
		msg := fmt.Sprintf("%s held-out median relative error %.2f%% over %d points; want <= %g%% over at least %d",
			kind, 100*v.MedianRelErr, v.NTest, 100*maxMedian, minTest)
		if !final {
			t.Log("not asserted here: " + msg)
			return true
		}
		t.Error(msg)
		return true
	}
	return false
}

// testClusterHockney: a ping-pong between two hosts whose links are
// shaped to R = 200 Mbit/s. Hockney fitted over 64 KiB..2 MiB (smaller
// messages ride the tbf bucket) must give t_w within 5% of the wire time
// per payload byte, 8/R x 1514/1448 (a 1500-byte MTU frame is 1514 bytes
// on the wire, Ethernet header included, and carries 1448 bytes of TCP
// payload; a measured slope matches it to 0.1%). Asserted on the
// lower envelope (see lowerEnvelope); the fit of the medians is logged.
func testClusterHockney(t *testing.T, bin string) {
	const rate = 200e6
	file := filepath.Join(t.TempDir(), "pingpong.jsonl")
	runCluster(t, 150*time.Second, []string{"--hosts", "2", "--rate", "200mbit"},
		rounds(fmt.Sprintf("$CC_MPIRUN %s pingpong --sizes %s --iters 1 --warmup 1 --min-reps 10 --max-reps 40 --max-time 3 --out %s", bin, clusterSizes, file)))
	want := model.TCPWireSecPerByte(rate, clusterMTU)
	med := fitJSON(t, "hockney", file, "--min-bytes", "64K").(*model.Hockney)
	env := fitJSON(t, "hockney", lowerEnvelope(t, file), "--min-bytes", "64K").(*model.Hockney)
	for _, f := range []struct {
		name string
		h    *model.Hockney
	}{{"fastest repetitions (asserted)", env}, {"medians (for comparison)", med}} {
		got := f.h.Tw.Value
		t.Logf("%s: configured %.1f Mbit/s, t_w = 8/R x 1514/1448 = %.3f ns/B; fitted %.3f ns/B (95%% CI %.3f..%.3f), error %+.2f%%; recovered rate %.1f Mbit/s",
			f.name, rate/1e6, want*1e9, got*1e9, f.h.Tw.CI95[0]*1e9, f.h.Tw.CI95[1]*1e9, 100*(got/want-1), rateFromTw(got)/1e6)
	}
	// Held-out prediction (the cluster's goal for Hockney: median relative
	// error <= 3%) on the medians.
	heldOut(t, "hockney", file, model.Options{MinBytes: 64 << 10}, 0.03, 2, true)
	if relErr := env.Tw.Value/want - 1; math.Abs(relErr) > 0.05 {
		t.Errorf("t_w = %.3f ns/B is %+.1f%% from the wire time %.3f ns/B of %g Mbit/s (tolerance 5%%)",
			env.Tw.Value*1e9, 100*relErr, want*1e9, rate/1e6)
	}
}

// testClusterAllToAllBus: four hosts (links 1 Gbit/s) behind one shared
// medium of C = 200 Mbit/s (--groups 1: every packet between any two hosts
// leaves one router through one tbf queue), the Ethernet case of paper 001.
// All-to-all over the first n = 2, 3, 4 hosts puts n(n-1) messages through
// the network block, so eq. 4 predicts
//
//	b(n) = max{2(n-1) b_w, n(n-1) b_c},  b_c = 8/C x 1514/1448,
//	b_w = 8/(1 Gbit/s) x 1514/1448 = b_c/5,
//
// i.e. b(n) = n(n-1) b_c here: 2, 6, 12 times b_c (a switched network would
// grow as n-1). The per-n hyperbolic fits T(x; a(n), b(n)) of the fastest
// repetitions (see lowerEnvelope) must match it:
//
//   - b(n) / eq. 4 within [0.95, 1.10]. Below: tbf is a hard cap; only its
//     bucket can make the network look faster: 1 ms of data passes at
//     link speed, a constant that the hyperbola (asymptote through the
//     origin) turns into a lower b, by 1 ms / T(512 KiB) = 2.3% at n = 2
//     (0.8% at n = 3), plus fit noise. Above, known excess: TCP ACKs cross
//     the same medium (about 1-2% of the bytes), the hyperbola's asymptote
//     runs through the origin so b(n) absorbs a(n)/T at the largest size
//     (about 1% at n = 2), rendezvous round trips in Open MPI's TCP
//     transport, and ranks that miss their turn on 2 cores shared by four
//     hosts and by other work.
//   - the growth b(n)/b(2) within 10% of eq. 4's n(n-1)/2 = 3 and 6 (the
//     common excess cancels; a switched network gives 2 and 3);
//   - b_c, which the model takes as b(4)/12, recovers C within the first
//     bound.
//
// The fit of the medians is logged next to it.
func testClusterAllToAllBus(t *testing.T, bin string) {
	const hostRate, busRate = 1e9, 200e6
	file := filepath.Join(t.TempDir(), "bus.jsonl")
	reps := "--min-reps 5 --max-reps 30 --max-time 2"
	runCluster(t, 200*time.Second, []string{"--hosts", "4", "--rate", "1gbit", "--bottleneck", "200mbit", "--groups", "1"},
		fmt.Sprintf("$CC_MPIRUN %[1]s roundtrip --sizes 0,128K,512K --iters 1 %[2]s --out %[3]s && ", bin, reps, file)+
			rounds(fmt.Sprintf("$CC_MPIRUN %[1]s alltoall --ranks 2,3,4 --sizes 0,128K,256K,512K %[2]s --out %[3]s", bin, reps, file)))
	w := model.Block{B: model.TCPWireSecPerByte(hostRate, clusterMTU)}
	c := model.Block{B: model.TCPWireSecPerByte(busRate, clusterMTU)}
	med := fitJSON(t, "hyperbolic", file, "--holdout", "none").(*model.Hyperbolic)
	env := fitJSON(t, "hyperbolic", lowerEnvelope(t, file), "--holdout", "none").(*model.Hyperbolic)
	t.Logf("hosts %g Mbit/s behind one %g Mbit/s medium; eq. 4: b(n) = max{2(n-1) b_w, n(n-1) b_c}, b_w = %.3f, b_c = %.3f ns/B",
		hostRate/1e6, busRate/1e6, w.B*1e9, c.B*1e9)
	for _, f := range []struct {
		name   string
		h      *model.Hyperbolic
		assert bool
	}{{"fastest repetitions (asserted)", env, true}, {"medians (for comparison)", med, false}} {
		errorf := t.Errorf
		if !f.assert {
			errorf = func(string, ...any) {}
		}
		fitted := map[int]float64{}
		for _, cv := range f.h.Curves {
			fitted[cv.N] = cv.B.Value
		}
		if fitted[2] <= 0 || f.h.Bc == nil {
			errorf("%s: no all-to-all fit at n = 2 or no b_c: %+v", f.name, f.h)
			continue
		}
		var rep strings.Builder
		fmt.Fprintf(&rep, "%s:\n  n  b(n) fitted   b(n) eq. 4   ratio  b(n)/b(2)  eq. 4\n", f.name)
		for _, n := range []int{2, 3, 4} {
			got, ok := fitted[n]
			if !ok {
				errorf("%s: no all-to-all fit at n = %d", f.name, n)
				continue
			}
			pred := model.AllToAll(w, c, n).B
			growth, predGrowth := got/fitted[2], pred/model.AllToAll(w, c, 2).B
			fmt.Fprintf(&rep, "  %d  %7.2f ns/B  %7.2f ns/B  %.3f  %6.3f     %.0f\n", n, got*1e9, pred*1e9, got/pred, growth, predGrowth)
			if r := got / pred; r < 0.95 || r > 1.10 {
				errorf("%s: n = %d: b(n) = %.2f ns/B is %.3f x eq. 4's %.2f ns/B (want 0.95..1.10)", f.name, n, got*1e9, r, pred*1e9)
			}
			if n > 2 && math.Abs(growth/predGrowth-1) > 0.10 {
				errorf("%s: n = %d: b(n)/b(2) = %.3f, eq. 4 predicts %.0f (tolerance 10%%)", f.name, n, growth, predGrowth)
			}
		}
		bc := f.h.Bc.Value
		fmt.Fprintf(&rep, "  b_c fitted %.3f ns/B (n = %d) vs configured %.3f ns/B: ratio %.3f; recovered medium rate %.1f Mbit/s (configured %g)",
			bc*1e9, f.h.Curves[len(f.h.Curves)-1].N, c.B*1e9, bc/c.B, rateFromTw(bc)/1e6, busRate/1e6)
		t.Log(rep.String())
		if r := bc / c.B; r < 0.95 || r > 1.10 {
			errorf("%s: b_c = %.3f ns/B is %.3f x the configured %.3f ns/B (want 0.95..1.10)", f.name, bc*1e9, r, c.B*1e9)
		}
	}
}

// clusterAppsHosts is the hosts of testClusterApps' cluster, one rank
// each, every rank on the run queue while it polls: the load the test
// itself puts on the machine, which does not count as others' load.
const clusterAppsHosts = 4

// TestTestClusterScriptUsage: the script's bad input exits 2 with a
// message naming the option and the accepted form, before it builds
// anything (no root needed).
func TestTestClusterScriptUsage(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", "2", "--burst", "1514"}, "--burst 1514: want the tbf bucket in bytes, a whole number from 3028"},
		{[]string{"--hosts", "2", "--burst", "25K"}, "--burst 25K: want the tbf bucket in bytes"},
		{[]string{"--hosts", "2", "--burst", "100000001"}, "--burst 100000001: want"},
		{[]string{"--hosts", "2", "--rate", "fast"}, "--rate fast: want a tc rate"},
		{[]string{"--hosts", "0"}, "--hosts 0: want a whole number of hosts"},
	} {
		args := append(append([]string{}, tc.args...), "--prefix", "ccu-", "--", "true")
		out, err := exec.Command(clusterScript, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: exit %v, want status 2\n%s", tc.args, err, out)
			continue
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: output does not say %q:\n%s", tc.args, tc.want, out)
		}
	}
}
