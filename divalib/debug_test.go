package divalib

import "fmt"

// The invariant checks run in every test of this package: after each
// message, the copy bookkeeping of its variable must agree with the data
// held (a copy flag without data was the symptom of two bugs found here).
func init() {
	debugCheck = func(s *Store, m *msg) {
		if s.cfg.Strategy != AccessTree || m.vr < 0 {
			return
		}
		x := s.vars[m.vr]
		n := 0
		for _, nd := range x.nodes {
			if nd.copy {
				n++
			}
		}
		if n != x.copies || (n > 0) != (x.data != nil) || (x.data != nil && len(x.data) != x.v.Size) {
			panic(fmt.Sprintf("rank %d after kind %d to node %d from %d: var %d copies=%d counted=%d data=%d bytes",
				s.rank, m.kind, m.dst, m.src, x.v.ID, x.copies, n, len(x.data)))
		}
	}
	debugStall = func(s *Store) {
		out := fmt.Sprintf("divalib: rank %d has waited 5 s; op=%+v\n", s.rank, s.op)
		for _, x := range s.vars {
			for id, n := range x.nodes {
				if n.busy || n.pending > 0 || len(n.deferred) > 0 || n.toward == id {
					out += fmt.Sprintf("  var %d node %d: toward=%d copy=%v nbrs=%v busy=%v pending=%d waveFrom=%d deferred=%d\n",
						x.v.ID, id, n.toward, n.copy, n.nbrs, n.busy, n.pending, n.waveFrom, len(n.deferred))
				}
			}
		}
		fmt.Print(out)
	}
}
