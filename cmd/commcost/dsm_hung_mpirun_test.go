package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/results"
)

// TestMPIRunDSMHungPeer stops rank 1 with SIGSTOP in the middle of a dsm
// run with --timeout 5: rank 0's watchdog must name the point (as its
// record names it) and end the job through MPI_Abort (exit 1) within a few
// seconds of the timeout, leaving the records written before it whole.
// One case runs through the sweep driver and package apps (bitonic), one
// through divalib's experiments under job.Measure (check). It logs the
// time from the SIGSTOP to the job's exit.
func TestMPIRunDSMHungPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the mpirun integration test")
	}
	bin := commcostBinary(t)
	if !mpirun.OpenMPI() {
		t.Skip("finding a rank's process by its environment needs Open MPI's OMPI_COMM_WORLD_RANK")
	}
	const timeout = 5.0
	for _, tc := range []struct {
		name  string
		args  []string
		point string // the stalled point's name starts so
	}{
		{"bitonic", []string{"dsm", "bitonic", "--keys", "64:64K", "--reps", "20"}, "dsm-bitonic keys="},
		{"check", []string{"dsm", "check", "--ops", "300000"}, "dsm-check strategy="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hung.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			args := append(tc.args, "--timeout", strconv.FormatFloat(timeout, 'g', -1, 64), "--out", out, "--format", "csv")
			cmd, err := mpirun.Command(ctx, 2, bin, args...)
			if err != nil {
				t.Skip(err)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Stop rank 1 once a record is on disk: the run is past its
			// start-up and inside its points.
			var pid int
			for deadline := time.Now().Add(90 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				select {
				case err := <-done:
					t.Fatalf("the job ended (%v) before rank 1 was stopped; stderr:\n%s", err, stderr.String())
				default:
				}
				if recs, _ := results.ReadJSONLFile(out); len(recs) >= 1 {
					pid = rankPID(bin, 1)
				}
			}
			if pid == 0 {
				cmd.Process.Kill()
				<-done
				t.Fatalf("rank 1 not found or no records; stderr:\n%s", stderr.String())
			}
			before, _ := results.ReadJSONLFile(out)
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()
			err = <-done
			took := time.Since(stopped)
			t.Logf("SIGSTOP of rank 1 after %d records to the job's exit with --timeout %g: %.2f s", len(before), timeout, took.Seconds())
			syscall.Kill(pid, syscall.SIGKILL) // in case the launcher left it
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit %d (%v), want 1; stderr:\n%s", code, err, stderr.String())
			}
			msg := stderr.String()
			for _, want := range []string{"commcost: rank 0 of 2: " + tc.point, "made no progress", "ending the job"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr lacks %q:\n%s", want, msg)
				}
			}
			if took > time.Duration(timeout*float64(time.Second))+10*time.Second {
				t.Errorf("the job took %v to end after the SIGSTOP with --timeout %g", took, timeout)
			}
			recs, err := results.ReadJSONLFile(out)
			if err != nil || len(recs) < len(before) {
				t.Errorf("records after the hang: %d (%v), %d before it", len(recs), err, len(before))
			}
		})
	}
}
