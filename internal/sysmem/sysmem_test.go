package sysmem

import (
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

// TestAvailable: the smallest of MemAvailable and every cgroup level's
// limit minus usage, for cgroup v2 and v1, with "max" meaning no limit.
func TestAvailable(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name  string
		files map[string]string
		want  int64
		src   string
	}{
		{"meminfo only", map[string]string{"proc/meminfo": "MemTotal: 100 kB\nMemAvailable:   2048 kB\n"}, 2048 * 1024, "MemAvailable"},
		{"cgroup v2 tighter", map[string]string{
			"proc/meminfo":                          "MemAvailable: 8388608 kB\n",
			"proc/self/cgroup":                      "0::/job/step\n",
			"sys/fs/cgroup/job/memory.max":          "4294967296\n",
			"sys/fs/cgroup/job/memory.current":      "1073741824\n",
			"sys/fs/cgroup/job/step/memory.max":     "max\n",
			"sys/fs/cgroup/job/step/memory.current": "1073741824\n",
		}, 3 * gib, "memory.max of /job"},
		{"cgroup v1", map[string]string{
			"proc/meminfo":     "MemAvailable: 8388608 kB\n",
			"proc/self/cgroup": "4:memory:/slurm/uid_0/job_7\n3:cpu,cpuacct:/\n",
			"sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes": "2147483648\n",
			"sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes": "536870912\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                   "9223372036854771712\n",
		}, 1536 << 20, "job_7"},
		{"cgroup without limit", map[string]string{
			"proc/meminfo":                 "MemAvailable: 1024 kB\n",
			"proc/self/cgroup":             "0::/\n",
			"sys/fs/cgroup/memory.max":     "max\n",
			"sys/fs/cgroup/memory.current": "5\n",
		}, 1024 * 1024, "MemAvailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
	if _, _, ok := available(t.TempDir()); ok {
		t.Errorf("nothing readable, but ok")
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{512: "512 B", 2048: "2.0 KiB", 3 << 30: "3.0 GiB", 1.5 * (1 << 40): "1.5 TiB"} {
		if got := Format(in); got != want {
			t.Errorf("Format(%g) = %q, want %q", in, got, want)
		}
	}
}
