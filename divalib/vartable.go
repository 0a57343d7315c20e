package divalib

import "github.com/commcost/commcost/mpi"

// varTable is one rank's state of the variables by ID: nil (absent) until
// the rank touches the variable.
//
// A dense slice costs 8 bytes per variable on every rank, touched or not.
// That is nothing for a rank of its own process, but on mpi/local the P
// ranks of a process pay P times over: Barnes-Hut at P = 512 with N =
// 102,400 bodies has 315,000 variables, and the slices alone would take
// 512 x 315,000 x 8 B = 1.3 GB while a rank touches a few thousand of the variables. So where the ranks
// share the process (mpi.ProcessShared) the table turns into a map of the
// touched variables once the dense slices of all ranks would exceed
// denseBudget. The dense form stays where it is cheap: its lookup is one
// index (the cached read is about 17 ns in all, a map lookup would add
// about half of that).
type varTable struct {
	n      int                 // variables created
	dense  []*variable         // by ID while sparse is nil
	sparse map[int32]*variable // touched variables, once dense costs too much
	// sharers is the number of ranks whose tables live in this process
	// (the communicator's size on mpi/local, else 1).
	sharers int
}

// denseBudget is the most bytes the dense tables of all ranks in one
// process may take (8 bytes per variable and rank). A variable so that
// tests can run the sparse form at small sizes.
var denseBudget = 64 << 20

func newVarTable(c mpi.Comm) varTable {
	t := varTable{sharers: 1}
	if _, ok := c.(mpi.ProcessShared); ok {
		t.sharers = c.Size()
	}
	return t
}

// get returns the state of variable id (< n), nil if the rank has none.
func (t *varTable) get(id int) *variable {
	if t.sparse == nil {
		return t.dense[id]
	}
	return t.sparse[int32(id)]
}

// set records the state of variable id (< n).
func (t *varTable) set(id int, x *variable) {
	if t.sparse == nil {
		t.dense[id] = x
		return
	}
	t.sparse[int32(id)] = x
}

// add records one more variable, without state.
func (t *varTable) add() {
	t.n++
	if t.sparse != nil {
		return
	}
	if 8*t.n*t.sharers <= denseBudget {
		t.dense = append(t.dense, nil)
		return
	}
	t.sparse = make(map[int32]*variable)
	for id, x := range t.dense {
		if x != nil {
			t.sparse[int32(id)] = x
		}
	}
	t.dense = nil
}
