package scripts_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
)

// TestBatchKKArgsCheckedFirst: the kkaccess flags a job is handed in
// COMMCOST_KK_ARGS are checked by commcost's check-only mode in cc_init,
// so a bad one stops the job with status 2 naming the variable before its
// first launch (here a stub that says it measured), not minutes later at
// the kkaccess step; good ones let the job go on.
func TestBatchKKArgsCheckedFirst(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("no mpirun on PATH: the job's launcher")
	}
	dir := t.TempDir()
	bin, err := mpirun.BuildCommcost(dir)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := filepath.Abs("batch/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	slurm := []string{"SLURM_JOB_ID=7", "SLURM_SUBMIT_DIR=" + dir, "SLURM_NTASKS=2", "COMMCOST_LAUNCHER=mpirun",
		"COMMCOST_RESULTS=" + filepath.Join(dir, "runs"), "COMMCOST=" + bin}
	// The first launch ends the job: what reaches it was measured.
	body := "cc_init slurm 2>/dev/null || exit\ncc_launch() { echo \"commcost job: measured: $*\" >&2; exit 0; }\ncc_steps_p2p\n"
	for _, tc := range []struct {
		name, args string
		quick      bool
		status     int
		want       string
	}{
		{"a k of 0", "--k 0", false, 2, "COMMCOST_KK_ARGS='--k 0': commcost kkaccess refuses it: --k 0: "},
		{"a flag kkaccess has not", "--k 1,2 --bogus", false, 2, "COMMCOST_KK_ARGS='--k 1,2 --bogus': commcost kkaccess refuses it: --bogus: no such flag"},
		{"another sweep's flag", "--sizes 8", false, 2, "COMMCOST_KK_ARGS='--sizes 8': commcost kkaccess refuses it: --sizes: no such flag"},
		{"an argument that is no flag", "--k 1 extra", false, 2, "COMMCOST_KK_ARGS='--k 1 extra': commcost kkaccess refuses it: unexpected argument"},
		{"a time limit the quick run's overrides", "--max-time 0", true, 0, "measured: 2 info"},
		{"good flags", "--k 1,2 --l 64,1K --r 1", false, 0, "measured: 2 info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(append([]string(nil), slurm...), "COMMCOST_KK_ARGS="+tc.args)
			if tc.quick {
				env = append(env, "COMMCOST_QUICK=1")
			}
			start := time.Now()
			code, stderr := script(t, env, "-c", "set -euo pipefail\n. "+lib+"\n"+strings.Replace(body, " 2>/dev/null", stderrOf(tc.status), 1))
			if code != tc.status {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.status, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not hold %q:\n%s", tc.want, stderr)
			}
			if tc.status != 0 {
				oneMessage(t, stderr, "commcost job: ", tc.want)
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("refused after %v: it measured first", d)
				}
			}
		})
	}
}

// stderrOf keeps cc_init's messages for a refusal (the one to check) and
// drops its log of the environment for a job that starts.
func stderrOf(status int) string {
	if status != 0 {
		return ""
	}
	return " 2>/dev/null"
}
