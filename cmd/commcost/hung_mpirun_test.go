package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/results"
)

// A hung peer under real mpirun ends the job, and ranks started with
// different commands are refused.

// rankPID finds the process of bin that the launcher started as rank.
func rankPID(bin string, rank int) int {
	ents, _ := os.ReadDir("/proc")
	want := "OMPI_COMM_WORLD_RANK=" + strconv.Itoa(rank)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != bin {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == want {
				return pid
			}
		}
	}
	return 0
}

// TestMPIRunHungPeer stops rank 1 with SIGSTOP in the middle of a
// ping-pong sweep run with --timeout 5: rank 0's watchdog must name the
// point and the peer, end the job through MPI_Abort (exit 1) within about
// the timeout, and leave every record written before it whole. It logs
// the time from the SIGSTOP to the job's exit (how fast a hang ends).
func TestMPIRunHungPeer(t *testing.T) {
	bin := commcostBinary(t)
	if !mpirun.OpenMPI() {
		t.Skip("finding a rank's process by its environment needs Open MPI's OMPI_COMM_WORLD_RANK")
	}
	const timeout = 5.0
	out := filepath.Join(t.TempDir(), "hung.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, err := mpirun.Command(ctx, 2, bin, "pingpong", "--sizes", "0:4M", "--max-time", "1", "--timeout", strconv.FormatFloat(timeout, 'g', -1, 64), "--out", out, "--format", "csv")
	if err != nil {
		t.Skip(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Stop rank 1 once a few points are on disk.
	var pid int
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if recs, _ := results.ReadJSONLFile(out); len(recs) >= 3 {
			pid = rankPID(bin, 1)
			break
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("rank 1 not found or no records; stderr:\n%s", stderr.String())
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	err = cmd.Wait()
	took := time.Since(stopped)
	t.Logf("SIGSTOP of rank 1 to the job's exit with --timeout %g: %.2f s", timeout, took.Seconds())
	syscall.Kill(pid, syscall.SIGKILL) // in case the launcher left it
	code := cmd.ProcessState.ExitCode()
	if code != 1 {
		t.Errorf("exit %d (%v), want 1; stderr:\n%s", code, err, stderr.String())
	}
	msg := stderr.String()
	// Rank 0 waits in the ping-pong kernel, or in the collective that ends
	// each repetition, for rank 1.
	for _, want := range []string{"commcost: rank 0 of 2: pingpong bytes=", "made no progress", "for rank 1", "ending the job"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if took > time.Duration(timeout*float64(time.Second))+20*time.Second {
		t.Errorf("the job took %v to end after the SIGSTOP with --timeout %g", took, timeout)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil || len(recs) < 3 {
		t.Errorf("records before the hang: %d, %v", len(recs), err)
	}
}

// TestMPIRunDifferentCommands: an MPMD launch whose ranks run different
// subcommands or arguments is refused by rank 0 with one message, exit 2,
// nothing written, instead of hanging in mismatched collectives.
func TestMPIRunDifferentCommands(t *testing.T) {
	bin := commcostBinary(t)
	if !mpirun.OpenMPI() {
		t.Skip("the MPMD syntax 'A : B' is tested with Open MPI's mpirun")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "mpmd.jsonl")
	tests := []struct {
		name string
		a, b []string
	}{
		{"different sizes", []string{"pingpong", "--sizes", "8", "--out", out}, []string{"pingpong", "--sizes", "16", "--out", out}},
		{"different subcommands", []string{"pingpong", "--sizes", "8", "--out", out}, []string{"bandwidth", "--sizes", "8", "--out", out}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"-np", "1", bin}, tc.a...)
			args = append(args, ":", "-np", "1", bin)
			args = append(args, tc.b...)
			cmd, err := mpirun.Command(ctx, 1, args[2], args[3:]...)
			if err != nil {
				t.Skip(err)
			}
			// mpirun.Command builds "-np 1 BIN A..."; the second app
			// context follows after ':'.
			r := runCmd(t, cmd)
			if r.code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
			}
			if n := strings.Count(r.stderr, "commcost: the ranks do not all run the same command: rank 0 runs 'commcost "+strings.Join(tc.a, " ")+"', rank(s) 1"); n != 1 {
				t.Errorf("%d messages, want 1; stderr:\n%s", n, r.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written", out)
			}
		})
	}
}
