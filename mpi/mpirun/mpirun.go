// Package mpirun starts programs under the MPI launcher that matches the
// library this build links, for integration tests and scripts written in
// Go, and formats the launch lines the CLI prints as hints.
//
// Which library is linked is decided by the build tag "mpich", exactly as
// mpi/native's cgo files decide it (Open MPI by default); Linked reports it.
// A test binary built with -tags mpich therefore launches with MPICH's
// mpiexec and builds cmd/commcost with the same tags (BuildCommcost).
//
// The launcher is named explicitly, never taken on trust from plain mpirun:
// Debian installs Open MPI and MPICH side by side, update-alternatives
// decides what plain mpirun and mpiexec are, and Open MPI's mpirun cannot
// start an MPICH program or the reverse. Launcher looks for, in order,
// $COMMCOST_MPIRUN, the implementation's own name (mpirun.openmpi;
// mpiexec.mpich, mpirun.mpich), then plain mpirun and mpiexec (a module
// system's), each accepted only if its --version names the linked
// implementation.
//
// With more ranks than cores Open MPI needs --oversubscribe and
// mpi_yield_when_idle, or spinning ranks starve each other of the cores;
// MPICH's Hydra oversubscribes by default and takes no such flag. The package does not set OMPI_ALLOW_RUN_AS_ROOT: the Makefile and
// scripts export it where running as root is intended.
package mpirun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Impl names an MPI implementation family, with the values
// mpi/native.Implementation returns.
type Impl string

const (
	ImplOpenMPI Impl = "openmpi"
	ImplMPICH   Impl = "mpich"
)

func (i Impl) String() string {
	switch i {
	case ImplOpenMPI:
		return "Open MPI"
	case ImplMPICH:
		return "MPICH"
	}
	return string(i)
}

// LauncherEnv names the environment variable that overrides the launcher
// (a program name on PATH or a path). It must still belong to the linked
// implementation.
const LauncherEnv = "COMMCOST_MPIRUN"

// Linked is the implementation this binary's build tags select: MPICH with
// the tag mpich, Open MPI otherwise (as mpi/native's cgo files).
func Linked() Impl { return linked }

// launcherNames are the implementation's own launcher names, tried before
// the plain names that update-alternatives or a module system provide.
var launcherNames = map[Impl][]string{
	ImplOpenMPI: {"mpirun.openmpi", "mpirun", "mpiexec"},
	ImplMPICH:   {"mpiexec.mpich", "mpirun.mpich", "mpiexec", "mpirun"},
}

// versionImpl tells the implementation from a launcher's --version output:
// Open MPI's mpirun prints "mpirun (Open MPI) 4.1.4" (OpenRTE in older
// releases), MPICH's Hydra "HYDRA build details".
func versionImpl(out string) Impl {
	switch {
	case strings.Contains(out, "Open MPI") || strings.Contains(out, "OpenRTE"):
		return ImplOpenMPI
	case strings.Contains(out, "HYDRA"):
		return ImplMPICH
	}
	return ""
}

// findLauncher returns the launcher for impl; lookPath and version are
// exec.LookPath and "PROG --version" (injected so that tests can play a
// machine with both implementations installed).
func findLauncher(impl Impl, override string, lookPath func(string) (string, error), version func(string) string) (string, error) {
	names := launcherNames[impl]
	if override != "" {
		names = []string{override}
	}
	var seen []string
	for _, name := range names {
		p, err := lookPath(name)
		if err != nil {
			continue
		}
		got := versionImpl(version(p))
		if got == impl {
			return p, nil
		}
		what := "an unknown MPI"
		if got != "" {
			what = got.String() + "'s"
		}
		seen = append(seen, fmt.Sprintf("%s is %s", p, what))
	}
	msg := fmt.Sprintf("no %s launcher found (tried %s)", impl, strings.Join(names, ", "))
	if override != "" {
		msg = fmt.Sprintf("%s=%s is not an %s launcher", LauncherEnv, override, impl)
	}
	if len(seen) > 0 {
		msg += ": " + strings.Join(seen, "; ")
	}
	hint := "run scripts/setup.sh, or module load openmpi"
	if impl == ImplMPICH {
		hint = "run MPI=mpich scripts/setup.sh, or module load mpich"
	}
	return "", errors.New(msg + " (" + hint + ")")
}

var probe struct {
	once sync.Once
	path string
	err  error
}

func detect() {
	version := func(p string) string {
		out, _ := exec.Command(p, "--version").CombinedOutput()
		return string(out)
	}
	probe.path, probe.err = findLauncher(linked, os.Getenv(LauncherEnv), exec.LookPath, version)
}

// Launcher returns the path of the launcher of the linked implementation,
// or why there is none.
func Launcher() (string, error) {
	probe.once.Do(detect)
	return probe.path, probe.err
}

// Available reports why no launcher can be used, or nil.
func Available() error {
	_, err := Launcher()
	return err
}

// OpenMPI reports whether the linked library, and so the launcher, is Open
// MPI's (its mpirun refuses to run as root unless told).
func OpenMPI() bool { return linked == ImplOpenMPI }

// Flags returns the extra launcher flags for np ranks on this machine.
func Flags(np int) []string { return flags(linked, np, runtime.NumCPU()) }

func flags(impl Impl, np, cores int) []string {
	if impl == ImplOpenMPI && np > cores {
		return []string{"--oversubscribe", "--mca", "mpi_yield_when_idle", "1"}
	}
	return nil
}

// Command returns prog args under the launcher with -np np and Flags(np).
func Command(ctx context.Context, np int, prog string, args ...string) (*exec.Cmd, error) {
	path, err := Launcher()
	if err != nil {
		return nil, err
	}
	full := append([]string{"-np", fmt.Sprint(np)}, Flags(np)...)
	full = append(full, prog)
	full = append(full, args...)
	return exec.CommandContext(ctx, path, full...), nil
}

// HangLimit is how long to wait before calling a run of np ranks hung, for
// a run that finishes well within base under Open MPI. With more ranks than
// cores MPICH is much slower on polling code: its ch4 device has no
// yield-when-idle setting and blocking calls spin, so ranks hand the
// processor over late (mpi/native's YieldEnv covers the empty Iprobe only).
// commcost dsm check on 4 ranks on 2 cores runs more than ten times as
// long under MPICH as under Open MPI. HangLimit is then 4 x base;
// otherwise base.
func HangLimit(base time.Duration, np int) time.Duration {
	return hangLimit(linked, base, np, runtime.NumCPU())
}

func hangLimit(impl Impl, base time.Duration, np, cores int) time.Duration {
	if impl == ImplMPICH && np > cores {
		return 4 * base
	}
	return base
}

// LaunchLine is the command a user should type to run prog args on np
// ranks with impl, for hints in error messages: "mpirun -np 8 commcost
// sched comm, adding --oversubscribe --mca mpi_yield_when_idle 1 on fewer
// than 8 cores" for Open MPI, "mpiexec -n 8 commcost sched comm" for MPICH
// (Hydra oversubscribes by itself). The core count is left to the reader
// because the process printing the hint may be bound to one core and cannot
// tell. Arguments holding shell metacharacters are single-quoted.
func LaunchLine(impl Impl, np int, prog string, args ...string) string {
	words := []string{prog}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	cmd := strings.Join(words, " ")
	if impl == ImplMPICH {
		return fmt.Sprintf("mpiexec -n %d %s", np, cmd)
	}
	line := fmt.Sprintf("mpirun -np %d %s", np, cmd)
	if np > 1 {
		line += fmt.Sprintf(", adding --oversubscribe --mca mpi_yield_when_idle 1 on fewer than %d cores", np)
	}
	return line
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`()[]{}*?;&|<>!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var built struct {
	sync.Mutex
	path string
}

// buildTags returns the -tags this binary was built with ("" if none), so
// that a test binary built with -tags mpich builds an MPICH commcost.
// -race is deliberately not passed on: the CLI runs under mpirun in the
// integration tests, which check its behaviour, not data races.
func buildTags() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}

// BuildCommcost builds cmd/commcost into dir with this binary's build tags
// (so it links the same MPI as Linked), once per process: later calls
// return the first build while it exists. A test's temporary directory
// serves that test alone (it is removed when the test ends and the next
// call links again); a package whose tests share the build passes a
// directory that outlives them.
func BuildCommcost(dir string) (string, error) {
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		if _, err := os.Stat(built.path); err == nil {
			return built.path, nil
		}
	}
	out := filepath.Join(dir, "commcost")
	commit := "unknown"
	if rev, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(rev))
	}
	args := []string{"build"}
	if tags := buildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "-ldflags", "-X github.com/commcost/commcost/results.buildCommit="+commit,
		"-o", out, "github.com/commcost/commcost/cmd/commcost")
	cmd := exec.Command("go", args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	built.path = out
	return out, nil
}
