// Package mpirun starts programs under the system's mpirun, for integration
// tests and scripts written in Go. It adds the flags this project needs when
// there are more ranks than cores (ENVIRONMENT.md: Open MPI needs
// --oversubscribe and mpi_yield_when_idle, or spinning ranks starve each
// other on 2 cores). It does not set OMPI_ALLOW_RUN_AS_ROOT: the Makefile and
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
	"strings"
	"sync"
)

var probe struct {
	once    sync.Once
	path    string
	openMPI bool
	err     error
}

func detect() {
	probe.path, probe.err = exec.LookPath("mpirun")
	if probe.err != nil {
		probe.err = errors.New("mpirun not found on PATH (run scripts/setup.sh, or module load openmpi)")
		return
	}
	out, _ := exec.Command(probe.path, "--version").CombinedOutput()
	probe.openMPI = strings.Contains(string(out), "Open MPI") || strings.Contains(string(out), "OpenRTE")
}

// Available reports why mpirun cannot be used, or nil.
func Available() error {
	probe.once.Do(detect)
	return probe.err
}

// OpenMPI reports whether mpirun is Open MPI's.
func OpenMPI() bool {
	probe.once.Do(detect)
	return probe.openMPI
}

// Flags returns the extra mpirun flags for np ranks on this machine.
func Flags(np int) []string {
	if OpenMPI() && np > runtime.NumCPU() {
		return []string{"--oversubscribe", "--mca", "mpi_yield_when_idle", "1"}
	}
	return nil
}

// Command returns prog args under mpirun -np np with Flags(np).
func Command(ctx context.Context, np int, prog string, args ...string) (*exec.Cmd, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	full := append([]string{"-np", fmt.Sprint(np)}, Flags(np)...)
	full = append(full, prog)
	full = append(full, args...)
	return exec.CommandContext(ctx, probe.path, full...), nil
}

var built struct {
	sync.Mutex
	path map[string]string
}

// BuildCommcost builds cmd/commcost once per process into dir (a test's
// temporary directory is fine; later calls return the first build).
func BuildCommcost(dir string) (string, error) {
	built.Lock()
	defer built.Unlock()
	if p, ok := built.path["commcost"]; ok {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	out := filepath.Join(dir, "commcost")
	commit := "unknown"
	if rev, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(rev))
	}
	cmd := exec.Command("go", "build", "-ldflags", "-X github.com/commcost/commcost/results.buildCommit="+commit,
		"-o", out, "github.com/commcost/commcost/cmd/commcost")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build cmd/commcost: %v\n%s", err, msg)
	}
	if built.path == nil {
		built.path = map[string]string{}
	}
	built.path["commcost"] = out
	return out, nil
}
