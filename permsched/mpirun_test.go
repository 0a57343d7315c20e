package permsched_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// commcostUnderMPI builds cmd/commcost once and returns a function that runs
// it under mpirun with np ranks (--oversubscribe and mpi_yield_when_idle
// above the core count, from package mpirun). It skips the test, saying
// why, when mpirun is missing or would refuse to run as root.
func commcostUnderMPI(t *testing.T) func(np int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test under mpirun; -short skips it")
	}
	if err := mpirun.Available(); err != nil {
		t.Skipf("integration test needs mpirun: %v", err)
	}
	if os.Geteuid() == 0 && mpirun.OpenMPI() && (os.Getenv("OMPI_ALLOW_RUN_AS_ROOT") == "" || os.Getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "") {
		t.Skip("running as root: Open MPI's mpirun refuses unless OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are exported (make test does)")
	}
	bin, err := mpirun.BuildCommcost(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return func(np int, args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd, err := mpirun.Command(ctx, np, bin, args...)
		if err != nil {
			t.Skip(err)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v: %v", cmd.Args, err)
		}
		return code, out.String(), errb.String()
	}
}

// TestMPIRunExecutor carries every scheduler's schedule and MPI_Alltoallv
// out under real mpirun with 4 and 8 ranks (oversubscribed on 2 cores). The
// executor checks every received byte after every repetition and fails the
// run on a mismatch, so exit status 0 means every byte arrived, for every
// scheduler, size and density.
func TestMPIRunExecutor(t *testing.T) {
	run := commcostUnderMPI(t)
	dir := t.TempDir()
	sizes := []string{"0", "4K", "64K"}
	for _, c := range []struct {
		np int
		ds []int
	}{{4, []int{1, 3}}, {8, []int{3, 7}}} {
		t.Run(fmt.Sprintf("np=%d", c.np), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("np%d.jsonl", c.np))
			ds := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.ds)), ","), "[]")
			code, stdout, stderr := run(c.np, "sched", "comm", "--d", ds, "--sizes", strings.Join(sizes, ","),
				"--warmup", "1", "--min-reps", "2", "--max-reps", "2", "--out", out, "--quiet")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			methods := len(permsched.DefaultMethods())
			if want := len(sizes) + len(c.ds)*(len(permsched.Schedulers())+len(sizes)*methods); len(recs) != want {
				t.Errorf("%d records, want %d", len(recs), want)
			}
			for _, r := range recs {
				if r.Meta.Backend != "native" || r.Ranks != c.np || r.N != 2 {
					t.Errorf("record %s %v: backend %q, ranks %d, n %d", r.Bench, r.Params, r.Meta.Backend, r.Ranks, r.N)
				}
			}
			if !strings.Contains(stdout, "Alltoallv") || !strings.Contains(stdout, fmt.Sprintf("d = %d", c.ds[1])) {
				t.Errorf("tables missing:\n%s", stdout)
			}
		})
	}

	t.Run("np=4 multigraph trace", func(t *testing.T) {
		// Parallel messages, self-sends, a silent rank, a hot receiver.
		path := filepath.Join(dir, "multi.txt")
		if err := os.WriteFile(path, []byte("1 2 0 1\n0 0 3 1\n0 0 0 0\n2 1 1 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(4, "sched", "comm", "--matrix", path, "--entries", "count", "--sizes", "1,3000",
			"--warmup", "0", "--min-reps", "2", "--max-reps", "2", "--no-perm1", "--quiet")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("np=4 rank count differs from the matrix", func(t *testing.T) {
		path := filepath.Join(dir, "five.txt")
		if err := os.WriteFile(path, []byte("0 1 0 0 0\n0 0 1 0 0\n0 0 0 1 0\n0 0 0 0 1\n1 0 0 0 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "never.jsonl")
		code, stdout, stderr := run(4, "sched", "comm", "--matrix", path, "--out", out)
		if code != 2 {
			t.Fatalf("exit %d, want 2\n%s\n%s", code, stdout, stderr)
		}
		if n := strings.Count(stderr, "5 ranks but the run has 4"); n != 1 {
			t.Errorf("the error is printed %d times, want once:\n%s", n, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("--out was created on bad input")
		}
	})
}
