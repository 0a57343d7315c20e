package permsched

import (
	"fmt"
	"math"
)

// Schedule is an ordered list of phases over the messages of a Matrix.
//
// In a phased schedule (Async false) every phase is a partial permutation:
// each rank sends at most one and receives at most one message in it, so
// executing it costs one permutation, tau + M phi in the paper's model
// (Section 2.1, assumption 1). Async schedules (AC) list posting rounds:
// each rank sends at most one message per round but receivers may collide,
// and the executor posts all rounds at once.
//
// Schedules are built by a Scheduler and checked by Validate.
type Schedule struct {
	Scheduler string  // name of the scheduler that built it
	M         *Matrix // the matrix whose message ids the phases hold
	Async     bool    // phases are posting rounds, not permutations (AC)
	ids       []int32 // message ids, phase by phase
	off       []int32 // phase k holds ids[off[k]:off[k+1]]; len = phases+1
}

// newSchedule starts an empty schedule with room for the matrix's messages.
func newSchedule(name string, m *Matrix, phasesHint int) *Schedule {
	s := &Schedule{Scheduler: name, M: m, ids: make([]int32, 0, m.Len()), off: make([]int32, 1, phasesHint+1)}
	return s
}

// add appends id to the open phase.
func (s *Schedule) add(id int32) { s.ids = append(s.ids, id) }

// endPhase closes the open phase (possibly empty) and opens the next.
func (s *Schedule) endPhase() { s.off = append(s.off, int32(len(s.ids))) }

// Phases is the number of phases (permutations, or posting rounds for an
// Async schedule), empty phases included: LP keeps its P-1 steps as the
// paper counts them (Table 2: 31 for n = 32).
func (s *Schedule) Phases() int { return len(s.off) - 1 }

// Phase returns the message ids of phase k. The slice belongs to the
// schedule and must not be modified.
func (s *Schedule) Phase(k int) []int32 { return s.ids[s.off[k]:s.off[k+1]:s.off[k+1]] }

// NonEmptyPhases is the number of phases that carry at least one message.
func (s *Schedule) NonEmptyPhases() int {
	c := 0
	for k := 0; k < s.Phases(); k++ {
		if s.off[k+1] > s.off[k] {
			c++
		}
	}
	return c
}

// Pair is one message of a phase as (source, destination).
type Pair struct{ Src, Dst int }

// Pairs returns phase k as (src, dst) pairs in id order within the phase,
// for comparing schedules built on different id numberings.
func (s *Schedule) Pairs(k int) []Pair {
	ph := s.Phase(k)
	out := make([]Pair, len(ph))
	for i, id := range ph {
		out[i] = Pair{int(s.M.src[id]), int(s.M.dst[id])}
	}
	return out
}

// Step is one rank's part of one phase.
type Step struct {
	Phase    int
	SendID   int32 // message this rank sends, or -1
	SendTo   int   // its destination, or -1
	RecvID   int32 // message this rank receives, or -1
	RecvFrom int   // its source, or -1
}

// Plan returns rank's steps in phase order, skipping phases where the rank
// neither sends nor receives: the paper runs phases loosely synchronously,
// without a barrier between them (Section 5). For an Async schedule a step
// may hold several receives of one round; Plan then returns sends and
// receives as separate steps, receives first.
func (s *Schedule) Plan(rank int) []Step {
	var steps []Step
	if s.Async {
		for k := 0; k < s.Phases(); k++ {
			for _, id := range s.Phase(k) {
				if int(s.M.dst[id]) == rank {
					steps = append(steps, Step{Phase: k, SendID: -1, SendTo: -1, RecvID: id, RecvFrom: int(s.M.src[id])})
				}
			}
		}
		for k := 0; k < s.Phases(); k++ {
			for _, id := range s.Phase(k) {
				if int(s.M.src[id]) == rank {
					steps = append(steps, Step{Phase: k, SendID: id, SendTo: int(s.M.dst[id]), RecvID: -1, RecvFrom: -1})
				}
			}
		}
		return steps
	}
	for k := 0; k < s.Phases(); k++ {
		st := Step{Phase: k, SendID: -1, SendTo: -1, RecvID: -1, RecvFrom: -1}
		for _, id := range s.Phase(k) {
			if int(s.M.src[id]) == rank {
				st.SendID, st.SendTo = id, int(s.M.dst[id])
			}
			if int(s.M.dst[id]) == rank {
				st.RecvID, st.RecvFrom = id, int(s.M.src[id])
			}
		}
		if st.SendID >= 0 || st.RecvID >= 0 {
			steps = append(steps, st)
		}
	}
	return steps
}

// ValidationError describes the first way a schedule is wrong.
type ValidationError struct {
	Scheduler string
	Phase     int // -1 when the problem is not in one phase
	Msg       string
}

func (e *ValidationError) Error() string {
	if e.Phase < 0 {
		return fmt.Sprintf("%s schedule: %s", e.Scheduler, e.Msg)
	}
	return fmt.Sprintf("%s schedule: phase %d: %s", e.Scheduler, e.Phase, e.Msg)
}

// Validate checks that s sends every message of s.M exactly once and that
// every phase of a phased schedule is a partial permutation (each rank sends
// at most one and receives at most one message). For an Async schedule it
// checks that each rank sends at most one message per round.
func Validate(s *Schedule) error {
	if s == nil || s.M == nil {
		return &ValidationError{"?", -1, "nil schedule or matrix"}
	}
	bad := func(k int, format string, a ...any) error {
		return &ValidationError{s.Scheduler, k, fmt.Sprintf(format, a...)}
	}
	m := s.M
	if len(s.off) == 0 || s.off[0] != 0 || int(s.off[len(s.off)-1]) != len(s.ids) {
		return bad(-1, "corrupt phase offsets")
	}
	seen := make([]int32, m.Len()) // phase+1 where each message was sent
	sendAt := make([]int32, m.n)   // phase+1 where each rank last sent
	recvAt := make([]int32, m.n)
	sendID := make([]int32, m.n)
	recvID := make([]int32, m.n)
	for k := 0; k < s.Phases(); k++ {
		if s.off[k+1] < s.off[k] {
			return bad(k, "corrupt phase offsets")
		}
		stamp := int32(k + 1)
		for _, id := range s.Phase(k) {
			if id < 0 || int(id) >= m.Len() {
				return bad(k, "message id %d outside 0..%d", id, m.Len()-1)
			}
			if seen[id] != 0 {
				return bad(k, "message %d (%d -> %d) sent again (first in phase %d)", id, m.src[id], m.dst[id], seen[id]-1)
			}
			seen[id] = stamp
			i, j := m.src[id], m.dst[id]
			if sendAt[i] == stamp {
				return bad(k, "rank %d sends twice (messages %d and %d)", i, sendID[i], id)
			}
			sendAt[i], sendID[i] = stamp, id
			if s.Async {
				continue
			}
			if recvAt[j] == stamp {
				return bad(k, "rank %d receives twice (messages %d and %d)", j, recvID[j], id)
			}
			recvAt[j], recvID[j] = stamp, id
		}
	}
	for id, p := range seen {
		if p == 0 {
			return bad(-1, "message %d (%d -> %d) is never sent", id, m.src[id], m.dst[id])
		}
	}
	if s.Phases() > math.MaxInt32-1 {
		return bad(-1, "too many phases")
	}
	return nil
}

// ValidateOptimal is Validate plus the EXACT guarantee: a phased schedule
// with exactly D = m.MaxDegree() phases, none empty.
func ValidateOptimal(s *Schedule) error {
	if err := Validate(s); err != nil {
		return err
	}
	if s.Async {
		return &ValidationError{s.Scheduler, -1, "asynchronous schedule cannot be optimal"}
	}
	if d := s.M.MaxDegree(); s.Phases() != d || s.NonEmptyPhases() != d {
		return &ValidationError{s.Scheduler, -1, fmt.Sprintf("%d phases (%d non-empty), want exactly D = %d", s.Phases(), s.NonEmptyPhases(), d)}
	}
	return nil
}
