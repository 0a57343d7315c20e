package patterns

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
)

// faultyComm is a world whose windows crash in 8-byte compare-and-swap,
// as Open MPI 4's osc/rdma does (mpi.RMAFaulty).
type faultyComm struct{ mpi.Comm }

type faultyWindow struct{ mpi.Window }

var errCrashes = errors.New("MPI_Compare_and_swap on 8-byte elements crashes this library")

func (w faultyWindow) Fault(op mpi.RMAOp, dt mpi.Datatype) error {
	if op == mpi.RMACompareAndSwap && dt.Size() == 8 {
		return errCrashes
	}
	return nil
}

func (c faultyComm) AllocateWindow(size int) (mpi.Window, error) {
	w, err := c.Comm.(mpi.WindowAllocator).AllocateWindow(size)
	return faultyWindow{w}, err
}

// TestOneSidedLeavesOutCrashingCalls: a call the library crashes in is
// refused, naming --ops, when the user named it, and left out of the
// default --ops with a note; calls it runs stay in the plan.
func TestOneSidedLeavesOutCrashingCalls(t *testing.T) {
	all := []mpi.RMAOp{mpi.RMAPut, mpi.RMAFetchAndOp, mpi.RMACompareAndSwap}
	tests := []struct {
		name     string
		given    opts.Given
		typ      mpi.Datatype
		wantErr  bool
		wantNote string
		wantOps  []mpi.RMAOp
	}{
		{"default ops, OSU's long", opts.Given{}, 0, false, "cas is left out of the default --ops", []mpi.RMAOp{mpi.RMAPut, mpi.RMAFetchAndOp}},
		{"--ops named, OSU's long", opts.Given{"Ops": true}, 0, true, "", nil},
		{"--ops named, --type int", opts.Given{"Ops": true, "Type": true}, mpi.Int32, false, "", all},
		{"default ops, --type double", opts.Given{"Type": true}, mpi.Float64, false, "cas is left out", []mpi.RMAOp{mpi.RMAPut, mpi.RMAFetchAndOp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &OneSidedSweep{Ops: all, Modes: []mpi.RMAMode{mpi.RMALatency}, Sizes: opts.Sizes{8}, Window: 64, Type: tt.typ, Set: tt.given}
			s.RepLimits = RepLimits{MinReps: 2, MaxReps: 2, MaxTime: 1, RelCI: 0.03}
			notes := make([]string, 2)
			errs := make([]error, 2)
			if err := local.Run(2, func(c mpi.Comm) error {
				notes[c.Rank()], errs[c.Rank()] = s.CheckWorld(faultyComm{c})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if errs[0] == nil != (errs[1] == nil) || notes[0] != notes[1] {
				t.Fatalf("the ranks disagree: %q %v, %q %v", notes[0], errs[0], notes[1], errs[1])
			}
			if tt.wantErr {
				var fe *opts.FieldError
				if !errors.As(errs[0], &fe) || fe.Field != "Ops" || !strings.Contains(errs[0].Error(), errCrashes.Error()) {
					t.Fatalf("err = %v, want a --ops refusal saying %q", errs[0], errCrashes)
				}
				return
			}
			if errs[0] != nil || !strings.Contains(notes[0], tt.wantNote) || (tt.wantNote == "") != (notes[0] == "") {
				t.Fatalf("note %q, err %v; want a note holding %q", notes[0], errs[0], tt.wantNote)
			}
			pts, err := s.Plan(2)
			if err != nil {
				t.Fatal(err)
			}
			var ops []mpi.RMAOp
			for _, p := range pts {
				if op := p.(OneSided).Op; !slices.Contains(ops, op) {
					ops = append(ops, op)
				}
			}
			if !slices.Equal(ops, tt.wantOps) {
				t.Errorf("planned calls %v, want %v", ops, tt.wantOps)
			}
		})
	}
}
