package replay

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuSec is the process's user and system CPU time.
func cpuSec() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) * 1e-9
}

// BenchmarkReplay replays a ring program of 10^5, 10^6 and 10^7 events
// (over 4 ranks) under a LogGP model, lowering included, and reports the
// events per second of one core: the speed target is 5 million, and the
// time per event should not grow with the events.
func BenchmarkReplay(b *testing.B) {
	p := loggp(1e-6, 0.3e-6, 0.5e-6, 0.1e-9)
	for _, events := range []int{1e5, 1e6, 1e7} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			tr := ring(4, events/4)
			var n int
			var sec, cpu float64
			for b.Loop() {
				start, c0 := time.Now(), cpuSec()
				prog, err := Lower(tr, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := simulate(prog, engineConfig{pricer: p, eager: 65536, compute: 1}); err != nil {
					b.Fatal(err)
				}
				sec += time.Since(start).Seconds()
				cpu += cpuSec() - c0
				n += prog.Events
			}
			b.ReportMetric(float64(n)/sec, "events/s")
			b.ReportMetric(sec/float64(n)*1e9, "ns/event")
			// on a shared machine the wall time includes waiting for a
			// core; the process's CPU time does not
			b.ReportMetric(float64(n)/cpu, "events/cpu-s")
		})
	}
}
