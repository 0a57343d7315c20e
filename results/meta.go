package results

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// buildCommit, when set at link time, wins over the build info's VCS stamp:
//
//	go build -ldflags "-X github.com/commcost/commcost/results.buildCommit=$(git rev-parse --short HEAD)"
//
// It exists because binaries built with -buildvcs=false (or by "go run" and
// "go test", which never stamp) carry no revision.
var buildCommit string

// NewMeta fills the fields of Meta this process can know by itself: Commit,
// Date (now, UTC), GOMAXPROCS, Command (os.Args), Binding, GOOS, GOARCH,
// GoVersion, CPU and Launch (from LaunchEnv), with Backend set to backend
// ("native" or "local"). MPILibrary, MPIVersion, Hosts and RanksPerHost
// come from MPI and are the caller's to fill; Seed too when the run uses
// one.
func NewMeta(backend string) Meta {
	return Meta{
		Commit:     BuildCommit(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Binding:    Binding(),
		Backend:    backend,
		Date:       FormatDate(time.Now()),
		Command:    slices.Clone(os.Args),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GoVersion:  runtime.Version(),
		CPU:        cpuModel(),
		Launch:     strings.TrimSpace(os.Getenv(LaunchEnv)),
		Cores:      hostCores(),
		Load1:      loadAverage(),
	}
}

// hostCores is the number of online CPUs of the host
// (/sys/devices/system/cpu/online, "0-1,4"), not the process's affinity
// mask; 0 when it cannot be read.
func hostCores() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if rng {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return 0
		}
		n += z - a + 1
	}
	return n
}

// loadAverage is the host's one-minute load average (/proc/loadavg), 0
// when it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// LaunchEnv is the environment variable NewMeta reads Meta.Launch from.
// scripts/launches.sh and the batch job scripts set it, one value per
// launch, so that records tell which launch (one sample of process
// placement and memory layout) they come from.
const LaunchEnv = "COMMCOST_LAUNCH_ID"

// MaxLaunchLen is the longest launch identifier a record carries.
const MaxLaunchLen = 256

// CheckLaunchEnv refuses a LaunchEnv value no record should carry: control
// characters (an escape sequence pasted by mistake) or more than
// MaxLaunchLen bytes; empty is no launch.
func CheckLaunchEnv() error {
	v := strings.TrimSpace(os.Getenv(LaunchEnv))
	switch {
	case len(v) > MaxLaunchLen:
		return fmt.Errorf("%s holds %d bytes: a launch identifier is at most %d (e.g. the job id and the launch's number, 4711.3)", LaunchEnv, len(v), MaxLaunchLen)
	case strings.ContainsFunc(v, unicode.IsControl):
		return fmt.Errorf("%s=%s holds control characters: give it in plain text (e.g. 4711.3)", LaunchEnv, Printable(v))
	}
	return nil
}

// FormatDate is the Meta.Date form of t: RFC 3339 in UTC, to the second.
func FormatDate(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// BuildCommit identifies the source the running binary was built from: the
// link-time value of buildCommit if set, else the first 12 hex digits of the
// build info's vcs.revision with "-dirty" appended when vcs.modified is true,
// else "unknown". It never runs git: the working directory of a job on a
// cluster node need not be the checkout the binary came from.
func BuildCommit() string {
	if buildCommit != "" {
		return buildCommit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return commitFromSettings(info.Settings)
}

func commitFromSettings(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	// 12 digits, as in Go pseudo-versions: unique in any real repository
	// and accepted by git wherever a commit is expected.
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// bindingEnv lists, in output order, the environment variables that describe
// where an MPI launcher placed and bound this process. Each one set is
// recorded as key=value under a short key.
var bindingEnv = []struct{ key, env string }{
	{"ompi_local_rank", "OMPI_COMM_WORLD_LOCAL_RANK"},   // Open MPI mpirun
	{"ompi_bind", "OMPI_MCA_hwloc_base_binding_policy"}, // Open MPI --bind-to (hwloc)
	{"ompi_map", "OMPI_MCA_rmaps_base_mapping_policy"},  // Open MPI --map-by
	{"mpich_local_rank", "MPI_LOCALRANKID"},             // MPICH Hydra
	{"hydra_bind", "HYDRA_BINDING"},                     // MPICH mpiexec -bind-to
	{"slurm_local_id", "SLURM_LOCALID"},                 // srun
	{"slurm_cpu_bind", "SLURM_CPU_BIND"},                // srun --cpu-bind
}

// Binding describes this process's CPU binding as space-separated key=value
// pairs: "cpus=<Cpus_allowed_list>" from /proc/self/status (the CPUs the
// kernel lets this process run on, e.g. "0-3" or "2"), then, for each of
// the launcher variables that is set, its value under a short key:
// ompi_local_rank, ompi_bind (OMPI_MCA_hwloc_base_binding_policy), ompi_map,
// mpich_local_rank, hydra_bind, slurm_local_id, slurm_cpu_bind (README.md
// lists the variables). It is "unknown" when nothing is available,
// e.g. off Linux outside a launcher.
func Binding() string {
	status, _ := os.ReadFile("/proc/self/status")
	return bindingFrom(status, os.Getenv)
}

func bindingFrom(status []byte, getenv func(string) string) string {
	var parts []string
	if cpus := procField(status, "Cpus_allowed_list"); cpus != "" {
		parts = append(parts, "cpus="+cpus)
	}
	for _, b := range bindingEnv {
		if v := getenv(b.env); v != "" {
			// Values with spaces would break the key=value split.
			parts = append(parts, b.key+"="+strings.Join(strings.Fields(v), ","))
		}
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, " ")
}

// procField returns the value of "key:" in a /proc "key:\tvalue" file.
func procField(data []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "" off Linux or
// on architectures whose cpuinfo has no such line.
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return procField(data, "model name")
}
