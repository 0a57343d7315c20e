package apps

// Hooks through which a caller counts what an application's communication
// does, without the application knowing the strategy underneath. Paper 004
// compares data management strategies by the congestion they produce (the
// most bytes or messages one mesh link carries) as well as by time; the
// counts belong to the strategy (package divalib keeps them per store), but
// only the application knows where its measured section and its phases
// begin. The applications of paper 004 (bitonic_ms.go, barneshut.go) call
// these hooks; a caller that does not count passes nil.

// Probe is told where the program is. Enter is collective: every rank
// calls it, in the same order, right after a store barrier (for a
// message-passing program: at a point where it has sent everything of the
// section it leaves), so that what the ranks send before the call belongs
// to the section left and what they send after to the new one. Section ""
// is outside the measurement (set-up, warm-up steps, verification). Enter
// may synchronise the ranks with a plain MPI barrier, which is safe at that
// point (a store barrier leaves no access in flight, and a rank returns
// from it only after forwarding everything the barrier needs from it):
// without it, a rank still inside the preceding barrier would serve, and be
// charged for, the new section's first requests. Callers time their phases
// without the Enter calls.
type Probe interface {
	Enter(section string)
}

// Charger accounts one message of n bytes from rank from to rank to. The
// hand-optimised message-passing versions of paper 004's applications
// charge every message they send, so that their congestion is computed on
// the same virtual mesh as the strategies' (divalib.Traffic implements it).
type Charger interface {
	Charge(from, to, n int)
}

// enter calls p.Enter when there is a probe.
func enter(p Probe, section string) {
	if p != nil {
		p.Enter(section)
	}
}
