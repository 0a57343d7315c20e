package sysmem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root, path, data string) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeAddressLimit makes the tests independent of the ulimit -v they run
// under; limit, when positive, fakes one of that many bytes.
func fakeAddressLimit(t *testing.T, limit int64) {
	saved := addressLimit
	t.Cleanup(func() { addressLimit = saved })
	addressLimit = func() (uint64, bool) { return uint64(limit), limit > 0 }
}

// TestAvailable: the smallest of MemAvailable, every cgroup level's limit
// minus usage (cgroup v2 and v1, with "max" meaning no limit) and the
// address-space limit (RLIMIT_AS, ulimit -v) minus VmSize, as the heap
// that room holds (a 128 MiB margin, 1.5 bytes mapped per byte).
func TestAvailable(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name  string
		files map[string]string
		as    int64 // RLIMIT_AS, 0 for none
		want  int64
		src   string
	}{
		{"ulimit -v below MemAvailable", map[string]string{
			"proc/meminfo":     "MemAvailable: 8388608 kB\n",
			"proc/self/status": "Name:\tcommcost\nVmPeak:\t 2097152 kB\nVmSize:\t 1048576 kB\n",
		}, 3 * gib, (2*gib - 128<<20) * 2 / 3, "RLIMIT_AS (ulimit -v) of 3.0 GiB, 1.0 GiB of it mapped already, and a Go heap maps about 1.5 times"},
		{"ulimit -v above MemAvailable", map[string]string{
			"proc/meminfo":     "MemAvailable: 1048576 kB\n",
			"proc/self/status": "VmSize:\t 1048576 kB\n",
		}, 64 * gib, 1 * gib, "MemAvailable"},
		{"ulimit -v below a cgroup", map[string]string{
			"proc/meminfo":                     "MemAvailable: 8388608 kB\n",
			"proc/self/cgroup":                 "0::/job\n",
			"sys/fs/cgroup/job/memory.max":     "4294967296\n",
			"sys/fs/cgroup/job/memory.current": "0\n",
			"proc/self/status":                 "VmSize:\t 524288 kB\n",
		}, 1 * gib, (gib/2 - 128<<20) * 2 / 3, "RLIMIT_AS"},
		{"ulimit -v used up", map[string]string{
			"proc/meminfo":     "MemAvailable: 8388608 kB\n",
			"proc/self/status": "VmSize:\t 2097152 kB\n",
		}, 1 * gib, 0, "RLIMIT_AS"},
		{"ulimit -v without a status file", map[string]string{
			"proc/meminfo": "MemAvailable: 8388608 kB\n",
		}, 1 * gib, (gib - 128<<20) * 2 / 3, "RLIMIT_AS"},
		{"meminfo only", map[string]string{"proc/meminfo": "MemTotal: 100 kB\nMemAvailable:   2048 kB\n"}, 0, 2048 * 1024, "MemAvailable"},
		{"cgroup v2 tighter", map[string]string{
			"proc/meminfo":                          "MemAvailable: 8388608 kB\n",
			"proc/self/cgroup":                      "0::/job/step\n",
			"sys/fs/cgroup/job/memory.max":          "4294967296\n",
			"sys/fs/cgroup/job/memory.current":      "1073741824\n",
			"sys/fs/cgroup/job/step/memory.max":     "max\n",
			"sys/fs/cgroup/job/step/memory.current": "1073741824\n",
		}, 0, 3 * gib, "memory.max of /job"},
		{"cgroup v1", map[string]string{
			"proc/meminfo":     "MemAvailable: 8388608 kB\n",
			"proc/self/cgroup": "4:memory:/slurm/uid_0/job_7\n3:cpu,cpuacct:/\n",
			"sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes": "2147483648\n",
			"sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes": "536870912\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                   "9223372036854771712\n",
		}, 0, 1536 << 20, "job_7"},
		{"cgroup without limit", map[string]string{
			"proc/meminfo":                 "MemAvailable: 1024 kB\n",
			"proc/self/cgroup":             "0::/\n",
			"sys/fs/cgroup/memory.max":     "max\n",
			"sys/fs/cgroup/memory.current": "5\n",
		}, 0, 1024 * 1024, "MemAvailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fakeAddressLimit(t, tc.as)
			root := t.TempDir()
			for p, d := range tc.files {
				write(t, root, p, d)
			}
			got, src, ok := available(root)
			if !ok || got != tc.want || !strings.Contains(src, tc.src) {
				t.Errorf("available = %d, %q, %v; want %d from %q", got, src, ok, tc.want, tc.src)
			}
		})
	}
	fakeAddressLimit(t, 0)
	if _, _, ok := available(t.TempDir()); ok {
		t.Errorf("nothing readable, but ok")
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{512: "512 B", 2048: "2.0 KiB", 3 << 30: "3.0 GiB", 1.5 * (1 << 40): "1.5 TiB",
		1408 * (1 << 60): "1408.0 EiB", 9999 * (1 << 60): "9999.0 EiB",
		// multigrid's need at --n 9223372036854775807: three digits, not 22.
		9444732965739290427392 * (1 << 60): "9.44e+21 EiB"} {
		if got := Format(in); got != want {
			t.Errorf("Format(%g) = %q, want %q", in, got, want)
		}
	}
}

// TestAllows: a job's limit (cgroup, ulimit -v) reads "the limit allows",
// the machine's free memory "available".
func TestAllows(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"MemAvailable of /proc/meminfo", "available: 1.0 GiB (MemAvailable of /proc/meminfo)"},
		{"cgroup memory.max of /job (limit 1 bytes, in use 0)", "the limit allows 1.0 GiB (cgroup memory.max of /job"},
		{"the address-space limit RLIMIT_AS (ulimit -v) of 2.0 GiB, 1.0 GiB of it mapped already", "the limit allows 1.0 GiB (the address-space limit RLIMIT_AS (ulimit -v)"},
	} {
		if got := Allows(2<<30, 1<<30, tc.source); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Allows(2 GiB, 1 GiB, %q) = %q, want %q...", tc.source, got, tc.want)
		}
	}
	// Under ulimit -v the message names the limit that holds the need:
	// this process's VmSize, the margin, and 1.5 bytes mapped per byte.
	got := Allows(2<<30, 0, "the address-space limit RLIMIT_AS (ulimit -v) of 2.0 GiB")
	kb, ok := RaiseAddressLimit(2 << 30)
	mapped, err := vmSize("/proc/self/status")
	if !ok || err != nil {
		t.Skipf("no VmSize here: %v", err)
	}
	if want := fmt.Sprintf(": ulimit -v %d or more would hold it", kb); !strings.HasSuffix(got, want) {
		t.Errorf("Allows under ulimit -v = %q, want it to end %q", got, want)
	}
	if low := max((float64(mapped)+goArenaBytes+3<<30)/1024, MinAddressLimitKB); float64(kb) < low || float64(kb) > low+100000 || kb%100000 != 0 {
		t.Errorf("RaiseAddressLimit(2 GiB) = %d kB, want the multiple of 100000 just above %.0f kB", kb, low)
	}
}
