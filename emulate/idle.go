package emulate

import (
	"runtime"
	"time"
)

// IdlePolicy says how a rank that has nothing to do waits for the next
// message. Ranks poll (Iprobe) rather than block in Probe so that they can
// notice finished sends, enforce the stall timeout and stop on an abort.
// On an oversubscribed machine (16 ranks on 2 cores) a rank that polls
// without pause takes a core from a rank with work, and a rank that sleeps
// adds its wake-up delay to every packet it forwards (a nanosleep of 1 us
// takes about 80 us here). So a waiting rank
//
//  1. polls Spins times back to back;
//  2. then polls with a yield of the processor between polls
//     (runtime.Gosched and sched_yield) for YieldFor: a rank with work runs
//     at once, and the idle ranks take turns polling;
//  3. then sleeps between polls, doubling the sleep from 1 us to MaxSleep,
//     so ranks that are idle for long (between benchmark points, while the
//     application computes) leave the cores alone.
//
// Any event resets the sequence. YieldFor is longer than the gaps between
// the repetitions of a measurement, so during a sweep every rank stays in
// phases 1-2 and no wake-up delay enters the times (with a short YieldFor,
// ranks that a repetition does not touch fall asleep and the next one pays
// for their wake-up, and on ranks sharing cores the medians turn bimodal
// and up to twice as high as with pure yielding). On a
// dedicated core phase 2 costs one system call per poll.
type IdlePolicy struct {
	Spins    int           // back-to-back polls; default 50
	YieldFor time.Duration // polling with yields before sleeping; default 50 ms
	MaxSleep time.Duration // longest sleep between polls; default 1 ms
}

func (p IdlePolicy) withDefaults() IdlePolicy {
	if p.Spins == 0 {
		p.Spins = 50
	}
	if p.YieldFor == 0 {
		p.YieldFor = 50 * time.Millisecond
	}
	if p.MaxSleep == 0 {
		p.MaxSleep = time.Millisecond
	}
	return p
}

// idler carries one rank's position in the IdlePolicy sequence.
type idler struct {
	p          IdlePolicy
	n          int
	yieldStart time.Time
	sleep      time.Duration
}

func (i *idler) reset() { i.n, i.sleep, i.yieldStart = 0, 0, time.Time{} }

// wait pauses once, according to how long the rank has been idle.
func (i *idler) wait() {
	i.n++
	if i.n <= i.p.Spins {
		return // a poll: the caller's next Iprobe is the wait
	}
	if i.sleep == 0 {
		now := time.Now()
		if i.yieldStart.IsZero() {
			i.yieldStart = now
		}
		if now.Sub(i.yieldStart) < i.p.YieldFor {
			runtime.Gosched()
			osYield()
			return
		}
		i.sleep = time.Microsecond
	} else if i.sleep < i.p.MaxSleep {
		i.sleep = min(2*i.sleep, i.p.MaxSleep)
	}
	osSleep(i.sleep)
}
