package apps

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// privateComm hides mpi.ProcessShared, as a communicator of mpi/native
// has none.
type privateComm struct{ mpi.Comm }

// renaming gives rank `rank` handles other than everybody's.
type renaming struct {
	globalvar.Store
	rank, me int
}

func (r renaming) Create(name string, size int) (globalvar.Var, error) {
	v, err := r.Store.Create(name, size)
	if r.me == r.rank {
		v.Name += "'"
	}
	return v, err
}

// TestCreateVarsShared: on goroutine ranks every rank gets the same
// handles in one shared slice, so the handles cost a process one list
// whatever P is (per-rank lists grew as P x N: 6.4 GB for Barnes-Hut at P
// = 512, N = 102,400); without mpi.ProcessShared each rank keeps its own;
// successive calls give successive lists; a store whose handles differ
// between ranks is refused.
func TestCreateVarsShared(t *testing.T) {
	const n = 50
	tests := []struct {
		name    string
		np      int
		private bool // hide mpi.ProcessShared
		odd     int  // rank with other handles, -1 for none
		shared  bool // all ranks' slices are one
		wantErr string
	}{
		{"one rank", 1, false, -1, true, ""},
		{"4 local ranks", 4, false, -1, true, ""},
		{"16 local ranks", 16, false, -1, true, ""},
		{"separate processes", 4, true, -1, false, ""},
		{"handles differ", 4, false, 2, true, "differ from rank 0's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			first := map[int]map[*globalvar.Var]bool{} // call -> backing arrays seen
			err := local.Run(tt.np, func(c mpi.Comm) error {
				s, err := divalib.New(c, divalib.Config{Seed: 1})
				if err != nil {
					return err
				}
				env := Env{Comm: c, Store: renaming{Store: s, rank: tt.odd, me: c.Rank()}}
				if tt.private {
					env.Comm = privateComm{c}
				}
				for call := 0; call < 2; call++ {
					vs, err := createVars(env, n, func(i int) string { return fmt.Sprintf("c%d/v%d", call, i) }, func(i int) int { return 8 + i })
					if err != nil {
						return err
					}
					for i, v := range vs {
						if v.ID != call*n+i || v.Name != fmt.Sprintf("c%d/v%d", call, i) || v.Size != 8+i {
							return fmt.Errorf("call %d: handle %d is %+v", call, i, v)
						}
					}
					mu.Lock()
					if first[call] == nil {
						first[call] = map[*globalvar.Var]bool{}
					}
					first[call][&vs[0]] = true
					mu.Unlock()
				}
				return s.Close()
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for call, arrays := range first {
				want := tt.np
				if tt.shared {
					want = 1
				}
				if len(arrays) != want {
					t.Errorf("call %d: %d distinct handle lists over %d ranks, want %d", call, len(arrays), tt.np, want)
				}
			}
		})
	}
}
