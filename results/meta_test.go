package results

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestCommitFromSettings(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"no vcs stamp", nil, "unknown"},
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, "0123456789ab"},
		{"dirty", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, "0123456789ab-dirty"},
		{"short revision", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "abc"},
	}
	for _, tc := range tests {
		if got := commitFromSettings(tc.settings); got != tc.want {
			t.Errorf("%s: commitFromSettings = %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestBindingFrom(t *testing.T) {
	status := []byte("Name:\tcommcost\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name   string
		status []byte
		env    map[string]string
		want   string
	}{
		{"nothing known", nil, nil, "unknown"},
		{"proc only", status, nil, "cpus=0-1"},
		{"open mpi", status, map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_MCA_hwloc_base_binding_policy": "core"},
			"cpus=0-1 ompi_local_rank=1 ompi_bind=core"},
		{"slurm, spaces folded", nil, map[string]string{"SLURM_LOCALID": "0", "SLURM_CPU_BIND": "quiet, mask_cpu:0x1"},
			"slurm_local_id=0 slurm_cpu_bind=quiet,,mask_cpu:0x1"},
	}
	for _, tc := range tests {
		if got := bindingFrom(tc.status, env(tc.env)); got != tc.want {
			t.Errorf("%s: bindingFrom = %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestNewMeta(t *testing.T) {
	before := time.Now().UTC().Truncate(time.Second)
	m := NewMeta("local")
	date, err := time.Parse(time.RFC3339, m.Date)
	if err != nil {
		t.Fatalf("Date %q is not RFC 3339: %v", m.Date, err)
	}
	if _, off := date.Zone(); off != 0 || date.Before(before) || date.After(time.Now().Add(time.Second)) {
		t.Errorf("Date %q is not now in UTC", m.Date)
	}
	if m.Backend != "local" || m.GOMAXPROCS != runtime.GOMAXPROCS(0) || m.Commit == "" || m.Binding == "" ||
		len(m.Command) == 0 || m.GOOS != runtime.GOOS || m.GOARCH != runtime.GOARCH || m.GoVersion != runtime.Version() {
		t.Errorf("NewMeta left a field unset or wrong: %+v", m)
	}
	if m.MPILibrary != "" || m.Hosts != nil {
		t.Errorf("NewMeta filled MPI fields that are the caller's: %+v", m)
	}
}

func TestFormatDate(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600))
	if got, want := FormatDate(at), "2025-03-04T04:06:07Z"; got != want {
		t.Errorf("FormatDate = %q; want %q", got, want)
	}
}

// TestCheckLaunchEnv: a launch identifier with control characters or
// longer than MaxLaunchLen is refused, naming the variable; a plain one
// or none passes.
func TestCheckLaunchEnv(t *testing.T) {
	for _, tc := range []struct{ v, want string }{
		{"", ""},
		{"4711.3", ""},
		{strings.Repeat("x", MaxLaunchLen), ""},
		{"a\x1b[2J", `COMMCOST_LAUNCH_ID=a\x1b[2J holds control characters`},
		{"a\nb", "holds control characters"},
		{strings.Repeat("x", MaxLaunchLen+1), "COMMCOST_LAUNCH_ID holds 257 bytes"},
	} {
		t.Setenv(LaunchEnv, tc.v)
		err := CheckLaunchEnv()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.v, err, tc.want)
		}
	}
}
