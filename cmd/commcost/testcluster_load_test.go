package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The ground truth is asserted on the machine the run actually met: while
// a launch runs, a sampler measures the CPU that processes outside the
// launch take (the machine's busy time, /proc/stat, less the busy time of
// the launch's own process tree and of the kernel's threads), so the
// cluster's own polling ranks do not count and another job's ranks do,
// whatever the load average said before and after. Time the hypervisor
// stole (/proc/stat's steal) is no process's here: it is kept apart, and
// it slows the launch as another job would. A launch whose others and
// steal took more than clusterOthersMax cores on average, or
// clusterOthersPeak over any one sampling window, is busy:
// its errors are logged against the goal and asserted only against the
// loose bound a wrong model still fails (wrong models miss by 50% to
// 1000%).
const (
	clusterOthersMax  = 0.25 // cores, mean over the launch
	clusterOthersPeak = 1.0  // cores, over one window
	clusterLoadWindow = 500 * time.Millisecond
)

// othersLoad is what processes outside one launch took while it ran.
type othersLoad struct {
	Mean, Peak float64 // cores: processes outside the launch
	PeakAt     float64 // seconds from the launch's start to the peak window's end
	Stolen     float64 // cores the hypervisor took, mean over the launch
	StolenPeak float64 // cores, over one window
	Windows    int
}

// Busy reports whether the launch met others' load, steal included.
func (l othersLoad) Busy() bool {
	return l.Mean+l.Stolen > clusterOthersMax || max(l.Peak, l.StolenPeak) > clusterOthersPeak
}

func (l othersLoad) String() string {
	return fmt.Sprintf("others took %.2f cores on average, %.2f at most over %v (at %.1f s; %d windows); steal %.2f cores on average, %.2f at most", l.Mean, l.Peak, clusterLoadWindow, l.PeakAt, l.Windows, l.Stolen, l.StolenPeak)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100.0

// machineBusy is the busy CPU time of the whole machine in seconds:
// /proc/stat's first line less idle and iowait, less guest and guest_nice,
// which user and nice already hold, and less steal, which it returns
// apart: a vCPU the hypervisor gave to another guest ran none of this
// machine's processes, so no process's times hold it (under a host's
// load, or once a burstable VM's credit is spent, it is a large share of
// a busy vCPU and would be taken for others' work). Irq and softirq stay:
// the kernel charges the interrupts it serves to the process it
// interrupts.
func machineBusy() (busy, steal float64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, fmt.Errorf("/proc/stat is empty")
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", sc.Text())
	}
	for i, s := range fields[1:] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, 0, err
		}
		switch i {
		case 3, 4, 8, 9: // idle, iowait; guest, guest_nice
		case 7:
			steal += v
		default:
			busy += v
		}
	}
	return busy / clockTicks, steal / clockTicks, nil
}

// procKey names one process over its life (a pid is reused).
type procKey struct {
	pid   int
	start string // starttime, clock ticks after boot
}

type procTime struct {
	ppid int
	cpu  float64 // seconds: user and system time, and its reaped children's
}

// procTimes reads every live process's CPU time from /proc.
func procTimes() map[procKey]procTime {
	procs := map[procKey]procTime{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state(0) ppid(1) ... utime(11) stime cutime cstime ... starttime(19)
		if len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		var cpu float64
		for _, k := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseFloat(f[k], 64)
			cpu += v
		}
		procs[procKey{pid, f[19]}] = procTime{ppid: ppid, cpu: cpu / clockTicks}
	}
	return procs
}

// launchTime follows the CPU time of one launch between samples: the
// process tree under root, and the kernel's threads (kthreadd's children,
// which set up and tear down the launch's namespaces and are no other
// job's). A process once seen in the tree stays the launch's when it is
// reparented (Open MPI's agents end up under init when mpirun exits, with
// their ranks' time in their children's time), and each process counts
// only what it gained since the last sample, so one that exits takes
// nothing back.
type launchTime struct {
	root int
	last map[procKey]float64
	ours map[procKey]bool
}

func newLaunchTime(root int) *launchTime {
	l := &launchTime{root: root, last: map[procKey]float64{}, ours: map[procKey]bool{}}
	l.sample()
	return l
}

// sample returns the launch's CPU seconds since the last sample.
func (l *launchTime) sample() float64 {
	const kthreadd = 2
	procs := procTimes()
	ppid := make(map[int]int, len(procs))
	for k, p := range procs {
		ppid[k.pid] = p.ppid
	}
	inTree := func(pid int) bool {
		for n := 0; pid > 1 && n < 64; n++ {
			if pid == l.root || pid == kthreadd {
				return true
			}
			pid = ppid[pid]
		}
		return false
	}
	var gained float64
	last := make(map[procKey]float64, len(procs))
	for k, p := range procs {
		if !l.ours[k] && inTree(k.pid) {
			l.ours[k] = true
		}
		if l.ours[k] {
			gained += max(0, p.cpu-l.last[k])
		}
		last[k] = p.cpu
	}
	l.last = last
	for k := range l.ours {
		if _, ok := procs[k]; !ok {
			delete(l.ours, k)
		}
	}
	return gained
}

// sampleOthers samples others' load every window while cmd runs, until
// stop is closed; call after cmd.Start.
func sampleOthers(cmd *exec.Cmd, stop <-chan struct{}) othersLoad {
	m0, s0, err0 := machineBusy()
	lt, w0 := newLaunchTime(cmd.Process.Pid), time.Now()
	if err0 != nil {
		return othersLoad{Mean: 1e9, Peak: 1e9} // unreadable: taken as busy
	}
	var l othersLoad
	start, others, stolen := w0, 0.0, 0.0
	tick := time.NewTicker(clusterLoadWindow)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			if el := time.Since(start).Seconds(); el > 0 {
				l.Mean, l.Stolen = others/el, stolen/el
			}
			return l
		case <-tick.C:
			m1, s1, err := machineBusy()
			if err != nil {
				continue
			}
			ours, w1 := lt.sample(), time.Now()
			d, ds := max(0, (m1-m0)-ours), max(0, s1-s0)
			others += d
			stolen += ds
			if el := w1.Sub(w0).Seconds(); el > 0 {
				if d/el > l.Peak {
					l.Peak, l.PeakAt = d/el, w1.Sub(start).Seconds()
				}
				l.StolenPeak = max(l.StolenPeak, ds/el)
			}
			l.Windows++
			m0, s0, w0 = m1, s1, w1
		}
	}
}

// measureOthers runs the launch cmd to its end with the sampler beside it.
func measureOthers(cmd *exec.Cmd) (othersLoad, error) {
	if err := cmd.Start(); err != nil {
		return othersLoad{}, err
	}
	stop := make(chan struct{})
	var l othersLoad
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l = sampleOthers(cmd, stop)
	}()
	err := cmd.Wait()
	close(stop)
	wg.Wait()
	return l, err
}

// testClusterLoadSampler: the sampler counts a busy process outside the
// launch (a spinner beside it: about one core) and not the launch's own,
// however busy it is; both against a baseline, a launch that only sleeps,
// so that another job already on the machine fails neither.
func testClusterLoadSampler(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	spin := "end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do :; done"
	base, err := measureOthers(exec.Command("sleep", "3"))
	if err != nil {
		t.Fatal(err)
	}
	if free := float64(runtime.NumCPU()) - base.Mean; free < 1.5 {
		t.Skipf("others already take %.2f of %d cores (%v): no core is free for a spinner to tell the sampler's attribution", base.Mean, runtime.NumCPU(), base)
	}
	own, err := measureOthers(exec.Command("sh", "-c", spin))
	if err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sh", "-c", spin)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Wait()
	loaded, err := measureOthers(exec.Command("sleep", "3"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("baseline: %v; own spinner: %v; another's spinner: %v", base, own, loaded)
	if own.Mean > base.Mean+0.5 { // the spinner is about a core when counted
		t.Errorf("the launch's own spinner counted as others' load: %v against a baseline of %.2f cores", own, base.Mean)
	}
	if want := base.Mean + 0.5*float64(min(runtime.NumCPU(), 2))/2; loaded.Mean < want || !loaded.Busy() {
		t.Errorf("a spinning process outside the launch: %v, want at least %.2f cores and busy", loaded, want)
	}
}
