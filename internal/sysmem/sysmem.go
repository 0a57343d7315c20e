// Package sysmem says how much memory this process may still take: the
// smallest of the kernel's estimate of available memory (MemAvailable in
// /proc/meminfo), what the process's memory cgroup still allows (its
// limit minus its usage, at every level of the hierarchy, cgroup v2 or
// v1), and what its address-space limit still allows (RLIMIT_AS, set by
// `ulimit -v`, minus the address space already mapped, VmSize). Batch
// systems confine jobs with cgroups or with ulimit -v, so on a cluster node
// the job's limit, not the node, is usually the bound. commcost checks what
// a run needs against it before allocating.
package sysmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available is the memory this process may still allocate, in bytes, and
// where the bound comes from ("MemAvailable", "cgroup memory.max of
// /job/…"). ok is false when neither source can be read (not Linux):
// callers then skip the check.
func Available() (bytes int64, source string, ok bool) {
	return available("/")
}

// addressLimit is the soft RLIMIT_AS of this process, ok false when there
// is none (RLIM_INFINITY) or it cannot be read; a variable for tests.
var addressLimit = rlimitAS

// Shared is the part of Available that the processes of this machine, or
// of this job's cgroup, draw on together (MemAvailable and the cgroup
// limits): the ranks on one host divide it among them.
func Shared() (bytes int64, source string, ok bool) {
	return shared("/")
}

// Own is the part of Available that is this process's alone: the room
// under its RLIMIT_AS (ulimit -v limits each process by itself, so ranks
// on one host do not divide it). ok is false when there is no such limit.
func Own() (bytes int64, source string, ok bool) {
	r, found := addressSpaceRoom("/")
	return max(r.room, 0), r.source, found
}

// available reads the files under root (a test's fake /proc and /sys).
func available(root string) (int64, string, bool) {
	best, src, ok := shared(root)
	if r, found := addressSpaceRoom(root); found && (!ok || r.room < best) {
		best, src, ok = r.room, r.source, true
	}
	return max(best, 0), src, ok
}

// shared is Shared under root.
func shared(root string) (int64, string, bool) {
	best, src, ok := int64(-1), "", false
	if v, err := memAvailable(filepath.Join(root, "proc/meminfo")); err == nil {
		best, src, ok = v, "MemAvailable of /proc/meminfo", true
	}
	for _, c := range cgroupRooms(root) {
		if !ok || c.room < best {
			best, src, ok = c.room, c.source, true
		}
	}
	return max(best, 0), src, ok
}

// memAvailable parses MemAvailable (kB) from a meminfo file.
func memAvailable(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no MemAvailable")
}

type room struct {
	room   int64
	source string
}

// addressSpaceRoom is the heap this process may still grow by under its
// RLIMIT_AS: the limit minus VmSize of /proc/self/status, less
// goArenaBytes, divided by goAddressFactor. Every allocation maps address
// space, so under `ulimit -v` an allocation beyond it fails (Go's runtime
// then dies with "fatal error: out of memory") while MemAvailable shows
// plenty; and the address space a Go heap maps is more than what it holds
// (arenas of 64 MiB, span and bitmap metadata, pages returned to the
// kernel but still mapped), so the room in bytes of heap is less than the
// room in address space.
func addressSpaceRoom(root string) (room, bool) {
	lim, ok := addressLimit()
	if !ok || lim >= 1<<62 {
		return room{}, false
	}
	mapped, err := vmSize(filepath.Join(root, "proc/self/status"))
	if err != nil {
		mapped = 0
	}
	heap := max(float64(int64(lim)-mapped)-goArenaBytes, 0) / goAddressFactor
	return room{room: int64(heap), source: fmt.Sprintf("the address-space limit RLIMIT_AS (ulimit -v) of %s, %s of it mapped already, and a Go heap maps about %g times what it holds", Format(float64(lim)), Format(float64(mapped)), goAddressFactor)}, true
}

// The address space a Go heap maps beyond what it holds (addressSpaceRoom):
// a margin for one heap arena reserved ahead and the threads the runtime
// and MPI still start (8 MiB of stack each), and a factor on the rest.
// Under mpirun the ranks' VmSize grew by 1.25-1.45 times their resident
// memory (Barnes-Hut at 60000-400000 bodies on 2 and 3 ranks); 1.5 keeps
// the check on the safe side of that. With less than about 100 MiB of
// room left after MPI started, ranks died creating a thread.
const (
	goArenaBytes    = 128 << 20
	goAddressFactor = 1.5
)

// vmSize parses VmSize (kB) from a /proc/PID/status file.
func vmSize(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "VmSize:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmSize")
}

// cgroupRooms lists limit minus usage of every memory cgroup level of
// this process that has a limit.
func cgroupRooms(root string) []room {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil
	}
	var out []room
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2
			out = append(out, levels(root, "sys/fs/cgroup", parts[2], "memory.max", "memory.current")...)
			out = append(out, levels(root, "sys/fs/cgroup/unified", parts[2], "memory.max", "memory.current")...)
		case hasController(parts[1], "memory"): // cgroup v1
			out = append(out, levels(root, "sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes", "memory.usage_in_bytes")...)
		}
	}
	return out
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// levels walks from the process's cgroup up to the mount's root and
// returns the room at each level with a limit. A container often mounts
// its own cgroup as the root, so the path may not exist below the mount;
// the levels that exist are read.
func levels(root, mount, cg, limitFile, usageFile string) []room {
	var out []room
	p := filepath.Clean("/" + cg)
	for {
		dir := filepath.Join(root, mount, p)
		if lim, err := readNumber(filepath.Join(dir, limitFile)); err == nil && lim > 0 && lim < 1<<62 {
			use, _ := readNumber(filepath.Join(dir, usageFile))
			out = append(out, room{room: lim - use, source: fmt.Sprintf("cgroup %s of %s (limit %d bytes, in use %d)", limitFile, p, lim, use)})
		}
		if p == "/" {
			return out
		}
		p = filepath.Dir(p)
	}
}

// readNumber reads a cgroup file holding one integer ("max" is no limit).
func readNumber(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, errors.New("no limit")
	}
	return strconv.ParseInt(s, 10, 64)
}

// Format prints a byte count in binary units (4.0 GiB), as the messages
// that compare a need with what is available do; beyond 9999 EiB (a need
// no machine has, from a size near the integers' end) in three digits and
// an exponent (9.44e+21 EiB), not 22 digits of EiB.
func Format(b float64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%.0f B", b)
	}
	exp, div := 0, float64(unit)
	for n := b / unit; n >= unit && exp < 5; n /= unit {
		div *= unit
		exp++
	}
	if v := b / div; v >= 1e4 {
		return fmt.Sprintf("%.3g %ciB", v, "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", b/div, "KMGTPE"[exp])
}
