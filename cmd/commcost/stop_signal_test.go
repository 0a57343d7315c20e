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

// TestStopSignal: a measuring run stopped by SIGTERM or SIGINT once it
// has written a record says on stderr where it was and where its finished
// records are, exits 1, and leaves every record it wrote whole: the
// suite, a pattern, a message-passing program, a scheduler experiment and
// a DSM sweep (one guard serves all, each wires it in its own place).
func TestStopSignal(t *testing.T) {
	bin := commcostBinary(t)
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		args  []string // records go to OUT (a file) or into the run directory DIR
		label string
	}{
		{"suite-SIGTERM", syscall.SIGTERM, []string{"suite", "--backend", "local", "--np", "2", "--rundir", "DIR", "--quiet"}, "suite"},
		{"suite-SIGINT", syscall.SIGINT, []string{"suite", "--backend", "local", "--np", "2", "--rundir", "DIR", "--quiet"}, "suite"},
		{"pingpong", syscall.SIGTERM, []string{"pingpong", "--backend", "local", "--sizes", "1:64M", "--max-time", "0.5", "--out", "OUT"}, "pingpong"},
		{"app-cannon", syscall.SIGINT, []string{"app", "cannon", "--backend", "local", "--np", "4", "--n", "96", "--out", "OUT"}, "app cannon"},
		{"sched-comm", syscall.SIGTERM, []string{"sched", "comm", "--backend", "local", "--np", "4", "--out", "OUT", "--quiet"}, "sched comm"},
		{"dsm-bitonic", syscall.SIGTERM, []string{"dsm", "bitonic", "--backend", "local", "--meshes", "2x2,2x4,4x4", "--keys", "256:65536", "--out", "OUT", "--quiet"}, "dsm bitonic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "records.jsonl")
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				switch a {
				case "DIR":
					args[i] = dir
				case "OUT":
					args[i] = out
				}
			}
			cmd := exec.Command(bin, args...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var records string
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				files, _ := filepath.Glob(filepath.Join(dir, "*", "records.jsonl"))
				files = append(files, out)
				for _, f := range files {
					if b, _ := os.ReadFile(f); bytes.Contains(b, []byte("\n")) {
						records = f
					}
				}
				if records != "" {
					break
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
			name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[tc.sig]
			m := regexp.MustCompile(`commcost: ` + tc.label + `: stopped by ` + name + ` after (\d+) records?, in or after \S+ .*the finished records? (?:is|are) whole in (\S+)`).FindStringSubmatch(msg)
			if m == nil || m[2] != records {
				t.Fatalf("stderr %q does not say the signal, where the run was and that its records are in %s", msg, records)
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
