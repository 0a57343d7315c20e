package mpirun

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// machine is a PATH for findLauncher: program name -> path, and path ->
// what its --version prints.
type machine struct {
	path    map[string]string
	version map[string]string
}

func (m machine) lookPath(name string) (string, error) {
	if p, ok := m.path[name]; ok {
		return p, nil
	}
	return "", errors.New("not found")
}

func (m machine) run(p string) string { return m.version[p] }

const (
	ompiVersion  = "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
	hydraVersion = "HYDRA build details:\n    Version:                                 4.0.2\n"
)

// Debian with both installed: the .openmpi/.mpich names are the real
// programs, and update-alternatives points plain mpirun/mpiexec at one.
func debianBoth(plain string) machine {
	m := machine{
		path: map[string]string{
			"mpirun.openmpi": "/usr/bin/mpirun.openmpi",
			"mpiexec.mpich":  "/usr/bin/mpiexec.mpich",
			"mpirun.mpich":   "/usr/bin/mpirun.mpich",
			"mpirun":         "/usr/bin/mpirun",
			"mpiexec":        "/usr/bin/mpiexec",
		},
		version: map[string]string{
			"/usr/bin/mpirun.openmpi": ompiVersion,
			"/usr/bin/mpiexec.mpich":  hydraVersion,
			"/usr/bin/mpirun.mpich":   hydraVersion,
		},
	}
	m.version["/usr/bin/mpirun"] = plain
	m.version["/usr/bin/mpiexec"] = plain
	return m
}

// A module system: only plain names, of one implementation.
func module(version string) machine {
	return machine{
		path:    map[string]string{"mpirun": "/opt/mpi/bin/mpirun", "mpiexec": "/opt/mpi/bin/mpiexec"},
		version: map[string]string{"/opt/mpi/bin/mpirun": version, "/opt/mpi/bin/mpiexec": version},
	}
}

func TestFindLauncher(t *testing.T) {
	tests := []struct {
		name     string
		m        machine
		impl     Impl
		override string
		want     string   // path, or "" for an error
		errHas   []string // substrings of the error
	}{
		// Installing MPICH must not move the Open MPI tests to MPICH's
		// mpirun, whatever update-alternatives chose.
		{"openmpi, plain mpirun is MPICH's", debianBoth(hydraVersion), ImplOpenMPI, "", "/usr/bin/mpirun.openmpi", nil},
		{"openmpi, plain mpirun is Open MPI's", debianBoth(ompiVersion), ImplOpenMPI, "", "/usr/bin/mpirun.openmpi", nil},
		{"mpich, plain mpirun is Open MPI's", debianBoth(ompiVersion), ImplMPICH, "", "/usr/bin/mpiexec.mpich", nil},
		{"openmpi from a module", module(ompiVersion), ImplOpenMPI, "", "/opt/mpi/bin/mpirun", nil},
		{"mpich from a module", module(hydraVersion), ImplMPICH, "", "/opt/mpi/bin/mpiexec", nil},
		{"openmpi build, only MPICH installed", module(hydraVersion), ImplOpenMPI, "", "",
			[]string{"no Open MPI launcher", "/opt/mpi/bin/mpirun is MPICH's", "scripts/setup.sh"}},
		{"mpich build, only Open MPI installed", module(ompiVersion), ImplMPICH, "", "",
			[]string{"no MPICH launcher", "is Open MPI's", "MPI=mpich scripts/setup.sh"}},
		{"nothing installed", machine{}, ImplOpenMPI, "", "", []string{"no Open MPI launcher", "mpirun.openmpi, mpirun, mpiexec"}},
		{"unknown launcher", module("some other mpirun 1.0"), ImplOpenMPI, "", "", []string{"is an unknown MPI"}},
		{"override of the right kind", debianBoth(hydraVersion), ImplMPICH, "mpirun.mpich", "/usr/bin/mpirun.mpich", nil},
		{"override of the wrong kind", debianBoth(hydraVersion), ImplOpenMPI, "mpirun", "",
			[]string{LauncherEnv + "=mpirun is not an Open MPI launcher", "/usr/bin/mpirun is MPICH's"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findLauncher(tc.impl, tc.override, tc.m.lookPath, tc.m.run)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("findLauncher = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("findLauncher = %q; want an error", got)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestFlags(t *testing.T) {
	ompi := []string{"--oversubscribe", "--mca", "mpi_yield_when_idle", "1"}
	tests := []struct {
		name      string
		impl      Impl
		np, cores int
		want      []string
	}{
		{"openmpi, a core per rank", ImplOpenMPI, 2, 2, nil},
		{"openmpi, oversubscribed", ImplOpenMPI, 3, 2, ompi},
		{"mpich, oversubscribed: Hydra allows it and has no such flag", ImplMPICH, 16, 2, nil},
	}
	for _, tc := range tests {
		if got := flags(tc.impl, tc.np, tc.cores); !slices.Equal(got, tc.want) {
			t.Errorf("%s: flags = %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestHangLimit(t *testing.T) {
	tests := []struct {
		name      string
		impl      Impl
		np, cores int
		want      time.Duration
	}{
		{"open mpi oversubscribed", ImplOpenMPI, 16, 2, time.Minute},
		{"mpich a core each", ImplMPICH, 2, 2, time.Minute},
		{"mpich oversubscribed", ImplMPICH, 4, 2, 4 * time.Minute},
	}
	for _, tc := range tests {
		if got := hangLimit(tc.impl, time.Minute, tc.np, tc.cores); got != tc.want {
			t.Errorf("%s: hangLimit = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestLaunchLine(t *testing.T) {
	tests := []struct {
		name string
		impl Impl
		np   int
		args []string
		want string
	}{
		{"openmpi", ImplOpenMPI, 8, []string{"sched", "comm"},
			"mpirun -np 8 commcost sched comm, adding --oversubscribe --mca mpi_yield_when_idle 1 on fewer than 8 cores"},
		{"mpich", ImplMPICH, 8, []string{"sched", "comm"}, "mpiexec -n 8 commcost sched comm"},
		{"quoted argument", ImplMPICH, 16, []string{"emulate", "kk", "--net", "BF(2)"}, "mpiexec -n 16 commcost emulate kk --net 'BF(2)'"},
		{"one rank needs no oversubscription", ImplOpenMPI, 1, []string{"info"}, "mpirun -np 1 commcost info"},
	}
	for _, tc := range tests {
		if got := LaunchLine(tc.impl, tc.np, "commcost", tc.args...); got != tc.want {
			t.Errorf("%s: LaunchLine = %q; want %q", tc.name, got, tc.want)
		}
	}
}

// TestLinkedFollowsTags: the constant chosen by this package's build-tagged
// files agrees with the tags BuildCommcost passes on, so the CLI it builds
// links the library whose launcher Command uses.
func TestLinkedFollowsTags(t *testing.T) {
	tags := strings.FieldsFunc(buildTags(), func(r rune) bool { return r == ',' || r == ' ' })
	if got, want := Linked() == ImplMPICH, slices.Contains(tags, "mpich"); got != want {
		t.Errorf("Linked() = %s but the build tags are %q", Linked(), buildTags())
	}
}

// TestBuildCommcostHonoursTags builds the CLI and reads its build settings
// back (go version -m): the -tags it was built with are this test binary's
// (make test TAGS="-tags mpich" must test an MPICH CLI).
func TestBuildCommcostHonoursTags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds cmd/commcost")
	}
	bin, err := BuildCommcost(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	var got string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "-tags=") {
			got = strings.TrimPrefix(f[1], "-tags=")
		}
	}
	if want := buildTags(); got != want {
		t.Errorf("commcost was built with -tags %q; this test binary with %q", got, want)
	}
	if again, err := BuildCommcost(t.TempDir()); err != nil || again != bin {
		t.Errorf("second BuildCommcost = %q, %v; want the first build %q", again, err, bin)
	}
}
