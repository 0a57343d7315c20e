package apps

import (
	"fmt"
	"sync"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// createVars creates n global variables, variable i named name(i) with
// size(i) bytes, on every rank in the same order (Create is collective)
// and returns their handles.
//
// Where the ranks of env.Comm share this process (mpi.ProcessShared: the
// goroutine ranks of mpi/local) they share one slice of handles, rank 0's,
// instead of holding one each: a handle is 40 bytes, and Barnes-Hut at P =
// 512 with N = 102,400 bodies has 315,000 variables, so P private lists
// would take 512 x 315,000 x 40 B = 6.4 GB. Every rank still
// creates every variable, and checks that its handles are rank 0's (a
// digest of ID, name and size), so a store whose handles differ between
// ranks is an error, not a silent mix-up.
func createVars(env Env, n int, name func(i int) string, size func(i int) int) ([]globalvar.Var, error) {
	c, s := env.Comm, env.Store
	sh, shared := c.(mpi.ProcessShared)
	if !shared || c.Size() == 1 {
		vs := make([]globalvar.Var, n)
		for i := range vs {
			v, err := s.Create(name(i), size(i))
			if err != nil {
				return nil, err
			}
			vs[i] = v
		}
		return vs, nil
	}
	me, p := c.Rank(), c.Size()
	reg := sh.ProcessShared(varListsKey{}, func() any {
		return &varLists{calls: make([]int, p), lists: map[int]*varList{}}
	}).(*varLists)
	l := reg.list(me)
	var vs []globalvar.Var
	if me == 0 {
		vs = make([]globalvar.Var, 0, n)
	}
	d := newVarDigest()
	for i := 0; i < n; i++ {
		v, err := s.Create(name(i), size(i))
		if err != nil {
			return nil, err
		}
		d.add(v)
		if me == 0 {
			vs = append(vs, v)
		}
	}
	if me == 0 {
		reg.mu.Lock()
		l.vars, l.digest = vs, d
		reg.mu.Unlock()
	}
	// The store's barrier (not the communicator's): it serves requests
	// while it waits, so it is safe whatever Create of a store sends. On
	// mpi/local its messages order rank 0's writes above before the
	// reads below.
	if err := s.Barrier(); err != nil {
		return nil, err
	}
	vs, d0 := reg.take(l, p)
	if d != d0 || len(vs) != n {
		return nil, fmt.Errorf("rank %d: the store's handles of %d variables differ from rank 0's, so the ranks of this process cannot share them", me, n)
	}
	return vs, nil
}

type varListsKey struct{}

// varLists are the shared handle lists of one communicator: the k-th
// createVars call of every rank gets list k.
type varLists struct {
	mu    sync.Mutex
	calls []int // per rank: createVars calls so far
	lists map[int]*varList
}

type varList struct {
	vars   []globalvar.Var
	digest varDigest
	taken  int // ranks that have taken the list
}

func (r *varLists) list(rank int) *varList {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.calls[rank]
	r.calls[rank]++
	l := r.lists[k]
	if l == nil {
		l = &varList{}
		r.lists[k] = l
	}
	return l
}

// take returns list l's handles; the last of the p ranks drops it from
// the registry (the ranks' slices keep it alive as long as they need it).
func (r *varLists) take(l *varList, p int) ([]globalvar.Var, varDigest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.taken++
	if l.taken == p {
		for k, x := range r.lists {
			if x == l {
				delete(r.lists, k)
			}
		}
	}
	return l.vars, l.digest
}

// varDigest is FNV-1a over the handles' IDs, names and sizes.
type varDigest uint64

func newVarDigest() varDigest { return 14695981039346656037 }

func (d *varDigest) add(v globalvar.Var) {
	h := uint64(*d)
	mix := func(b byte) { h = (h ^ uint64(b)) * 1099511628211 }
	for _, x := range [2]uint64{uint64(v.ID), uint64(v.Size)} {
		for k := 0; k < 8; k++ {
			mix(byte(x >> (8 * k)))
		}
	}
	for k := 0; k < len(v.Name); k++ {
		mix(v.Name[k])
	}
	mix(0xff)
	*d = varDigest(h)
}
