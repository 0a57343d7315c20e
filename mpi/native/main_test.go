package native

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
)

// The tests of this package run under mpirun, but `go test ./mpi/native`
// must work without one: when childEnv is unset, TestMain re-executes this
// test binary under mpirun (2 ranks, then 4 oversubscribed ranks) with
// childEnv=1 and the user's test flags, streams the ranks' output, and fails
// if a run fails or outlives its deadline. In a child, TestMain starts MPI,
// runs the tests, and finalises.
const (
	childEnv = "COMMCOST_MPI_CHILD"
	// npEnv overrides the rank counts of the child runs, e.g. "2" or "2,4,8".
	npEnv = "COMMCOST_MPI_NP"
	// launcherEnv overrides the mpirun program (see findLauncher).
	launcherEnv = mpirun.LauncherEnv
	// deadlineEnv overrides the deadline of one child run (default 5m).
	deadlineEnv = "COMMCOST_MPI_DEADLINE"
	// oversubEnv tells the children that they share cores (more ranks than
	// cores), so benchmarks skip; a bound child's runtime.NumCPU is 1 and
	// cannot tell.
	oversubEnv = "COMMCOST_MPI_OVERSUBSCRIBED"
	// levelEnv selects the children's thread level: unset for
	// ThreadSerialized (the tests run on goroutines other than Start's),
	// "single" for the thread-bound run, which checks that calls from other
	// threads are refused (boundTests) after TestMain has used MPI on its
	// own thread (boundSelfTest).
	levelEnv = "COMMCOST_MPI_LEVEL"
)

// boundTests are the tests of the thread-bound child run.
const boundTests = "^TestThreadBound$"

// runDeadline bounds one mpirun of the tests; the children get a slightly
// shorter -test.timeout so a hang prints its goroutines before the kill.
var runDeadline = 5 * time.Minute

const (
	childMargin = 30 * time.Second
	killGrace   = 10 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(childEnv) == "" {
		os.Exit(parentMain(m))
	}
	level := ThreadSerialized
	if os.Getenv(levelEnv) == "single" {
		level = ThreadSingle
	}
	if err := Start(level); err != nil {
		fmt.Fprintln(os.Stderr, "native.Start:", err)
		os.Exit(1)
	}
	code := 0
	if level == ThreadSingle {
		if err := boundSelfTest(); err != nil {
			fmt.Fprintln(os.Stderr, "--- FAIL: thread-bound self-test on the init thread:", err)
			code = 1
		}
	}
	if code == 0 {
		code = m.Run()
	}
	if code != 0 {
		// A rank whose tests failed may have left its peers waiting in a
		// collective that will never complete; MPI_Finalize would then
		// hang too. Abort takes the whole job down at once.
		os.Stdout.Sync()
		os.Stderr.Sync()
		time.Sleep(200 * time.Millisecond) // let mpirun forward the last output
		Abort(code)
	}
	if err := Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "native.Stop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// needMPI skips tests that need an initialised MPI when this process is not
// an MPI child (only possible when mpirun is missing).
func needMPI(t testing.TB) {
	t.Helper()
	if !Initialized() {
		t.Skip("needs MPI: runs in the mpirun children that TestMain starts")
	}
}

func parentMain(m *testing.M) int {
	if s := os.Getenv(deadlineEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= childMargin {
			fmt.Printf("mpi/native: %s=%q: want a duration above %v, like 10m\n", deadlineEnv, s, childMargin)
			return 2
		}
		runDeadline = d
	}
	if got, want := mpirun.Linked(), mpirun.Impl(Implementation()); got != want {
		// mpi/mpirun and this package's cgo files choose the library by
		// the same build tag; if they disagree, every launch would use the
		// other library's launcher.
		fmt.Printf("--- FAIL: mpi/mpirun says this build links %s, but the C headers say %s\n", got, want)
		return 1
	}
	launcher, err := findLauncher()
	if err != nil {
		fmt.Printf("mpi/native: SKIP all MPI tests: %v\n", err)
		fmt.Println("mpi/native: install MPI (scripts/setup.sh) or set " + launcherEnv + "; tests that need no MPI run below")
		return m.Run()
	}
	nps, err := rankCounts()
	if err != nil {
		fmt.Println("mpi/native:", err)
		return 2
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	deadline, childArgs := childFlags()
	failed := false
	for _, np := range nps {
		args := append(launchArgs(np), exe)
		args = append(args, childArgs...)
		fmt.Printf("=== mpi/native: %s %s\n", launcher, strings.Join(args, " "))
		start := time.Now()
		env := append(os.Environ(), childEnv+"=1")
		if np > runtime.NumCPU() {
			env = append(env, oversubEnv+"=1")
		}
		if err := runChild(launcher, args, env, deadline); err != nil {
			fmt.Printf("--- FAIL: mpi/native under %d ranks (%.1fs): %v\n", np, time.Since(start).Seconds(), err)
			failed = true
			continue
		}
		fmt.Printf("--- ok: mpi/native under %d ranks (%.1fs)\n", np, time.Since(start).Seconds())
	}
	if !failed && len(nps) > 0 && wantsBoundRun() {
		// The thread-bound run: 2 ranks (1 if that is all the user asked
		// for) under ThreadSingle, only the tests that need it.
		np := min(nps[0], 2)
		args := append(launchArgs(np), exe)
		args = append(args, childArgs...)
		args = append(args, "-test.run="+boundTests, "-test.bench=^$")
		fmt.Printf("=== mpi/native (%s=single): %s %s\n", levelEnv, launcher, strings.Join(args, " "))
		start := time.Now()
		env := append(os.Environ(), childEnv+"=1", levelEnv+"=single")
		if err := runChild(launcher, args, env, deadline); err != nil {
			fmt.Printf("--- FAIL: mpi/native thread-bound run under %d ranks (%.1fs): %v\n", np, time.Since(start).Seconds(), err)
			failed = true
		} else {
			fmt.Printf("--- ok: mpi/native thread-bound run under %d ranks (%.1fs)\n", np, time.Since(start).Seconds())
		}
	}
	if failed {
		fmt.Println("FAIL")
		return 1
	}
	fmt.Println("PASS")
	return 0
}

// wantsBoundRun reports whether the user's -run/-skip/-bench flags leave
// the thread-bound test selected: a plain `go test` does, `-run TestKernels`
// or a benchmark-only run does not.
func wantsBoundRun() bool {
	const name = "TestThreadBound"
	match := func(flagName string) (set bool, ok bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		re, err := regexp.Compile(f.Value.String())
		if err != nil {
			return true, false
		}
		return true, re.MatchString(name)
	}
	if set, ok := match("test.run"); set && !ok {
		return false
	}
	if set, ok := match("test.skip"); set && ok {
		return false
	}
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return false
	}
	return true
}

// findLauncher is the launcher of the library this binary links
// (mpirun.Launcher: $COMMCOST_MPIRUN, else mpirun.openmpi or mpiexec.mpich,
// else a plain mpirun whose --version names that library): Open MPI's
// mpirun cannot start MPICH processes and vice versa, and
// update-alternatives may point plain mpirun at the other one.
func findLauncher() (string, error) { return mpirun.Launcher() }

func rankCounts() ([]int, error) {
	s := os.Getenv(npEnv)
	if s == "" {
		return []int{2, 4}, nil
	}
	var nps []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a comma-separated list of rank counts like 2,4", npEnv, s)
		}
		nps = append(nps, n)
	}
	return nps, nil
}

// launchArgs are the launcher flags for np ranks: rank-tagged output, and
// with more ranks than cores Open MPI's oversubscription and yielding
// (ENVIRONMENT.md: spinning ranks otherwise starve each other).
func launchArgs(np int) []string {
	n := strconv.Itoa(np)
	over := np > runtime.NumCPU()
	if Implementation() == "mpich" {
		args := []string{"-np", n, "-prepend-rank", "-genv", childEnv, "1"}
		if over {
			args = append(args, "-genv", oversubEnv, "1")
		}
		return args
	}
	args := []string{"-np", n, "--tag-output", "-x", childEnv + "=1"}
	if over {
		args = append(args, "-x", oversubEnv+"=1")
	}
	return append(args, mpirun.Flags(np)...)
}

// forwardFlags are the test flags the children inherit; the rest
// (-test.testlogfile, profiles, -test.paniconexit0, ...) concern the parent
// process only, and several ranks writing one file would corrupt it.
var forwardFlags = map[string]bool{
	"test.run": true, "test.skip": true, "test.count": true, "test.short": true,
	"test.failfast": true, "test.bench": true, "test.benchtime": true,
	"test.benchmem": true, "test.cpu": true, "test.list": true, "test.fullpath": true,
}

// childFlags returns the deadline of one child run and the children's
// flags: the forwarded ones, -test.v (output only shows on failure or with
// -v, and then it should say which subtest), a -test.timeout inside the
// deadline, and a fixed shuffle seed (every rank must run the tests in the
// same order).
func childFlags() (time.Duration, []string) {
	deadline := runDeadline
	var args []string
	flag.Visit(func(f *flag.Flag) {
		switch {
		case forwardFlags[f.Name]:
			args = append(args, "-"+f.Name+"="+f.Value.String())
		case f.Name == "test.shuffle" && f.Value.String() != "off":
			seed := f.Value.String()
			if seed == "on" {
				seed = strconv.FormatInt(rand.Int64(), 10)
			}
			args = append(args, "-test.shuffle="+seed)
		}
	})
	// Benchmarks run as long as the user allows (go test's -timeout).
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		if tf := flag.Lookup("test.timeout"); tf != nil {
			if d, err := time.ParseDuration(tf.Value.String()); err == nil && d > 0 {
				deadline = d + childMargin
			} else if err == nil && d == 0 {
				deadline = 24 * time.Hour
			}
		}
	}
	args = append(args, "-test.v=true", "-test.timeout="+(deadline-childMargin).String())
	return deadline, args
}

// runChild runs the launcher, streams its output with rank labels, and
// kills the whole process group if it outlives deadline.
func runChild(launcher string, args, env []string, deadline time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, launcher, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// mpirun forwards SIGTERM to its ranks and cleans up.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = killGrace
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	pw.Close()
	copied := make(chan struct{})
	go func() {
		relabel(os.Stdout, pr)
		close(copied)
	}()
	err = cmd.Wait()
	// Anything the ranks left behind in the group goes now.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-copied:
	case <-time.After(killGrace):
	}
	pr.Close()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("killed after the %v deadline (a rank hung?)", deadline)
	}
	return err
}

// Open MPI's --tag-output puts "[jobid,rank]<stdout>:" before every chunk
// it forwards, not every line: a benchmark prints its name and its figures
// in two writes, so one output line can hold rank 0's name, then another
// rank's line, then rank 0's figures, each behind its own tag.
var ompiTag = regexp.MustCompile(`\[\d+,(\d+)\]<(std(?:out|err))>:`)

// MPICH's -prepend-rank puts "[rank] " before every chunk the same way.
// Inside a line only two are taken for tags: the line's own rank's, and any
// rank's right after a tab, where go test's write of a benchmark name ends;
// elsewhere "[3] " in a rank's output may be text.
var mpichTag = regexp.MustCompile(`^\[(\d+)\] `)
var mpichMidTag = regexp.MustCompile(`\t\[(\d+)\] |\[(\d+)\] `)

// chunk is a piece of one rank's stream.
type chunk struct{ rank, stream, text string }

// chunks splits one line of launcher output at its tags; nil for a line
// with no tag in front (the launcher's own messages).
func chunks(line string) []chunk {
	if loc := ompiTag.FindAllStringSubmatchIndex(line, -1); loc != nil && loc[0][0] == 0 {
		var cs []chunk
		for i, m := range loc {
			end := len(line)
			if i+1 < len(loc) {
				end = loc[i+1][0]
			}
			cs = append(cs, chunk{line[m[2]:m[3]], line[m[4]:m[5]], line[m[1]:end]})
		}
		return cs
	}
	m := mpichTag.FindStringSubmatchIndex(line)
	if m == nil {
		return nil
	}
	cs := []chunk{{rank: line[m[2]:m[3]], stream: "out"}}
	rest := line[m[1]:]
	for {
		cur := &cs[len(cs)-1]
		next := -1
		var nm []int
		for _, mm := range mpichMidTag.FindAllStringSubmatchIndex(rest, -1) {
			if mm[2] >= 0 { // after a tab: any rank
				next, nm = mm[0]+1, []int{mm[0] + 1, mm[1], mm[2], mm[3]}
				break
			}
			if rest[mm[4]:mm[5]] == cur.rank {
				next, nm = mm[0], []int{mm[0], mm[1], mm[4], mm[5]}
				break
			}
		}
		if next < 0 {
			cur.text += rest
			return cs
		}
		cur.text += rest[:next]
		if r := rest[nm[2]:nm[3]]; r != cur.rank {
			cs = append(cs, chunk{rank: r, stream: "out"})
		}
		rest = rest[nm[1]:]
	}
}

// relabel copies the launcher's output line by line: rank 0's lines
// unchanged, so go test's and benchstat's parsers read them as usual;
// other ranks' lines behind "rank N: ", except their test progress lines
// (=== RUN, --- PASS, PASS), which repeat rank 0's. Their failures and logs
// all show. Chunks are put back together per rank and stream before a line
// is written, so another rank's chunk never lands inside one of rank 0's
// benchmark lines (benchstat would fail to parse it).
func relabel(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	pending := map[[2]string]string{} // (rank, stream) -> its unfinished line
	var order [][2]string             // pending's keys, first seen first
	for {
		line, err := br.ReadString('\n')
		cs := chunks(line)
		if cs == nil {
			io.WriteString(w, line)
		}
		for _, c := range cs {
			key := [2]string{c.rank, c.stream}
			if _, ok := pending[key]; !ok {
				order = append(order, key)
			}
			pending[key] += c.text
			if strings.HasSuffix(pending[key], "\n") {
				io.WriteString(w, labelLine(c.rank, pending[key]))
				pending[key] = ""
			}
		}
		if err != nil {
			break
		}
	}
	for _, key := range order {
		if rest := pending[key]; rest != "" {
			io.WriteString(w, labelLine(key[0], rest+"\n"))
		}
	}
}

// labelLine is rank's line as relabel writes it.
func labelLine(rank, rest string) string {
	switch {
	case rank == "0":
		return rest
	case progressLine(rest):
		return ""
	default:
		return "rank " + rank + ": " + rest
	}
}

func progressLine(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return s == "PASS"
}
