package patterns

import "strconv"

// PRTTDelay is one delay of a PRTT sweep: DelaySec seconds, or with Auto
// the median of the plain round trip PRTT(1,0,s) measured for the same
// size just before (netgauge's choice of d; paper 003, LogGP section:
// PRTT(n,d,s) with d at least one round trip separates the sends).
type PRTTDelay struct {
	Sec  float64
	Auto bool
}

// String is the delay as --delay lists it: seconds, or auto.
func (d PRTTDelay) String() string {
	if d.Auto {
		return "auto"
	}
	return strconv.FormatFloat(d.Sec, 'g', -1, 64)
}

// PRTTSweep is netgauge's LogGP measurement over sizes, message counts
// and delays: for each size s, PRTT(1,0,s) first (the base of every
// derivation and the auto delay), then PRTT(n,d,s) for every n > 1 and
// delay d, and with Server the server's side of each one with d > 0 (the
// records model.FitLogGP reads for o_r). Base is the configuration every
// point shares (Peer, Iters, Warmup, Validate, Reps); its Bytes, N,
// DelaySec and Server are set per point.
type PRTTSweep struct {
	Sizes  []int
	N      []int
	Delays []PRTTDelay
	Server bool
	Base   PRTT
}

func (sw PRTTSweep) point(s, n int, d float64, server bool) PRTT {
	p := sw.Base
	p.Bytes, p.N, p.DelaySec, p.Server = s, n, d, server
	return p
}

// Plan is the sweep's points for checks before the run (memory, rank
// count, progress): an auto delay is not measured yet and counts as none,
// and the server sides are left out (they cost what their client points
// cost).
func (sw PRTTSweep) Plan() []Pattern {
	var out []Pattern
	for _, s := range sw.Sizes {
		out = append(out, sw.point(s, 1, 0, false))
		for _, n := range sw.N {
			if n == 1 {
				continue
			}
			for _, d := range sw.Delays {
				out = append(out, sw.point(s, n, d.Sec, false))
			}
		}
	}
	return out
}

// Records is how many records Run hands to emit: PRTT(1,0,s) only when
// N lists 1, one per client point, and a server record after every client
// point with a delay that is or may be (auto) above zero.
func (sw PRTTSweep) Records() int {
	count := 0
	for range sw.Sizes {
		for _, n := range sw.N {
			if n == 1 {
				count++
				continue
			}
			for _, d := range sw.Delays {
				count++
				if sw.Server && (d.Auto || d.Sec > 0) {
					count++
				}
			}
		}
	}
	return count
}

// Run measures the sweep in order. measure runs one point on every rank
// (the caller adds its watchdog and agreement) and returns its
// measurement; with emit false the point only feeds the auto delay and
// its record is not written. It stops at the first error.
func (sw PRTTSweep) Run(measure func(p PRTT, emit bool) (Measurement, error)) error {
	wantOne := false
	for _, n := range sw.N {
		wantOne = wantOne || n == 1
	}
	for _, s := range sw.Sizes {
		one, err := measure(sw.point(s, 1, 0, false), wantOne)
		if err != nil {
			return err
		}
		for _, n := range sw.N {
			if n == 1 {
				continue // the delay only separates messages
			}
			for _, dl := range sw.Delays {
				d := dl.Sec
				if dl.Auto {
					d = one.Summary.Median
				}
				if _, err := measure(sw.point(s, n, d, false), true); err != nil {
					return err
				}
				if sw.Server && d > 0 {
					if _, err := measure(sw.point(s, n, d, true), true); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
