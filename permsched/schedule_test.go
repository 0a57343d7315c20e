package permsched

import (
	"strings"
	"testing"
)

// handSchedule builds a schedule from explicit phases of message ids.
func handSchedule(m *Matrix, async bool, phases ...[]int32) *Schedule {
	s := newSchedule("hand", m, len(phases))
	s.Async = async
	for _, p := range phases {
		for _, id := range p {
			s.add(id)
		}
		s.endPhase()
	}
	return s
}

// TestValidate: the validator every test relies on rejects each way a
// schedule can be wrong, and accepts the right ones.
func TestValidate(t *testing.T) {
	// Messages: 0: 0->1, 1: 0->2, 2: 1->2, 3: 1->2 (parallel copy),
	// 4: 2->0, 5: 2->2 (self). D = 4: rank 2 receives 1, 2, 3 and 5.
	m, err := NewMatrix(3, [][]int32{{1, 2}, {2, 2}, {0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	first := []int32{0, 2, 4}
	tests := []struct {
		name    string
		s       *Schedule
		wantErr string
	}{
		{"optimal", handSchedule(m, false, first, []int32{1}, []int32{3}, []int32{5}), ""},
		{"missing message", handSchedule(m, false, first, []int32{1}, []int32{3}), "message 5 (2 -> 2) is never sent"},
		{"sent twice", handSchedule(m, false, first, []int32{1, 0}, []int32{3}, []int32{5}), "sent again"},
		{"rank sends twice", handSchedule(m, false, []int32{0, 1}, []int32{2}, []int32{3}, []int32{4}, []int32{5}), "rank 0 sends twice"},
		{"rank receives twice", handSchedule(m, false, []int32{1, 2}, []int32{0}, []int32{3}, []int32{4}, []int32{5}), "rank 2 receives twice"},
		{"self-send takes the receive slot", handSchedule(m, false, []int32{5, 1}, []int32{0, 2, 4}, []int32{3}), "rank 2 receives twice"},
		{"self-send takes the send slot", handSchedule(m, false, []int32{4, 5}, []int32{0, 2}, []int32{1}, []int32{3}), "rank 2 sends twice"},
		{"bad id", handSchedule(m, false, []int32{7}), "outside"},
		{"async allows a shared receiver", handSchedule(m, true, []int32{1, 2, 5}, []int32{0, 3, 4}), ""},
		{"async still one send per rank and round", handSchedule(m, true, []int32{0, 1}, []int32{2, 4}, []int32{3, 5}), "rank 0 sends twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.s)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	// A valid schedule with an empty fifth phase is not optimal.
	five := handSchedule(m, false, first, []int32{1}, []int32{3}, []int32{5}, nil)
	if err := Validate(five); err != nil {
		t.Fatal(err)
	}
	if err := ValidateOptimal(handSchedule(m, false, first, []int32{1}, []int32{3}, []int32{5})); err != nil {
		t.Errorf("ValidateOptimal of the 4-phase schedule: %v", err)
	}
	if err := ValidateOptimal(five); err == nil || !strings.Contains(err.Error(), "want exactly D = 4") {
		t.Errorf("ValidateOptimal of 5 phases: %v", err)
	}
}

// TestPlan: every rank's plan has each of its sends and receives once, in
// phase order.
func TestPlan(t *testing.T) {
	m, _ := Fig7(12, 5, 3)
	for _, s := range Schedulers() {
		sc, _ := s.Schedule(m, 1)
		sends, recvs := 0, 0
		for r := 0; r < m.N(); r++ {
			last := -1
			for _, st := range sc.Plan(r) {
				if !sc.Async && st.Phase <= last {
					t.Fatalf("%s rank %d: phases out of order", s.Name(), r)
				}
				last = st.Phase
				if st.SendID >= 0 {
					sends++
					if m.Src(int(st.SendID)) != r || m.Dst(int(st.SendID)) != st.SendTo {
						t.Fatalf("%s: bad send step %+v", s.Name(), st)
					}
				}
				if st.RecvID >= 0 {
					recvs++
					if m.Dst(int(st.RecvID)) != r || m.Src(int(st.RecvID)) != st.RecvFrom {
						t.Fatalf("%s: bad receive step %+v", s.Name(), st)
					}
				}
			}
		}
		if sends != m.Len() || recvs != m.Len() {
			t.Errorf("%s: plans hold %d sends and %d receives, want %d each", s.Name(), sends, recvs, m.Len())
		}
	}
}
