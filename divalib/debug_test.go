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
		x := s.vars.get(int(m.vr))
		if x == nil {
			return
		}
		n := 0
		for _, nd := range x.nodes {
			if nd.copy {
				n++
			}
		}
		if n != int(x.copies) || (n > 0) != (x.data != nil) || (x.data != nil && len(x.data) != x.v.Size) {
			panic(fmt.Sprintf("rank %d after kind %d to node %d from %d: var %d copies=%d counted=%d data=%d bytes",
				s.rank, m.kind, m.dst, m.src, x.v.ID, x.copies, n, len(x.data)))
		}
	}
}
