// Package tracetest builds the tracing library and C test programs for
// the tests of the packages that trace real MPI programs (trace, replay),
// as net/http/httptest serves theirs.
package tracetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi/mpirun"
)

// BuildLibrary builds the tracing library and, when progs are given, the
// C programs (paths relative to the repository root) with the same mpicc,
// into dir. It skips the test when no MPI compiler or launcher is there.
func BuildLibrary(t testing.TB, dir string, progs ...string) (lib string, bins []string) {
	t.Helper()
	if err := mpirun.Available(); err != nil {
		t.Skipf("no MPI launcher: %v", err)
	}
	root := RepoRoot(t)
	script := filepath.Join(root, "scripts", "build_trace.sh")
	lib = filepath.Join(dir, "libcommcost-trace.so")
	impl := "MPI=" + string(mpirun.Linked()) // the MPI this test binary runs under
	build := exec.Command(script, lib)
	build.Env = append(os.Environ(), impl, "TAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	ccCmd := exec.Command(script, "--cc")
	ccCmd.Env = build.Env
	cc, err := ccCmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".c"))
		if out, err := exec.Command(strings.TrimSpace(string(cc)), "-O2", "-o", bin, filepath.Join(root, p)).CombinedOutput(); err != nil {
			t.Fatalf("mpicc %s: %v\n%s", p, err, out)
		}
		bins = append(bins, bin)
	}
	return lib, bins
}

// RepoRoot is the directory of go.mod above the working directory.
func RepoRoot(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("no go.mod above " + wd)
	return ""
}

// PreloadArgs are the launcher arguments that set LD_PRELOAD and the trace
// directory for the ranks only (not for the launcher itself).
func PreloadArgs(lib, dir string) []string {
	if mpirun.Linked() == mpirun.ImplMPICH {
		return []string{"-genv", "LD_PRELOAD", lib, "-genv", "COMMCOST_TRACE_DIR", dir}
	}
	return []string{"-x", "LD_PRELOAD=" + lib, "-x", "COMMCOST_TRACE_DIR=" + dir}
}
