package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSuiteStopSignal: a suite stopped by SIGTERM or SIGINT once it has
// written a record says on stderr where it was and where its finished
// records are, exits 1, and leaves every record it wrote whole.
func TestSuiteStopSignal(t *testing.T) {
	bin := commcostBinary(t)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGTERM", syscall.SIGTERM},
		{"SIGINT", syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, "suite", "--backend", "local", "--np", "2", "--rundir", dir, "--quiet")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var records string
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				files, _ := filepath.Glob(filepath.Join(dir, "*", "records.jsonl"))
				if len(files) == 1 {
					if b, _ := os.ReadFile(files[0]); bytes.Contains(b, []byte("\n")) {
						records = files[0]
						break
					}
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no record written in 60 s; stderr %q", errb.String())
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit %v, want status 1; stderr %q", err, errb.String())
			}
			msg := errb.String()
			m := regexp.MustCompile(`stopped by ` + tc.name + ` after (\d+) records?, in or after \w+ .*the finished records? (?:is|are) whole in (\S+) `).FindStringSubmatch(msg)
			if m == nil || m[2] != records {
				t.Fatalf("stderr %q does not say the signal, where the suite was and that its records are in %s", msg, records)
			}
			b, err := os.ReadFile(records)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if n, _ := strconv.Atoi(m[1]); n != len(lines) || !strings.HasSuffix(string(b), "\n") {
				t.Errorf("message says %s records, the file has %d lines (ending in a newline: %v)", m[1], len(lines), strings.HasSuffix(string(b), "\n"))
			}
			for i, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Errorf("record %d is not whole: %q", i+1, l)
				}
			}
		})
	}
}
