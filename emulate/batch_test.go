package emulate

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/commcost/commcost/globalvar"
)

// TestBatch: a batch of packets in groups of k, written to another rank's
// module and read back through the network, sends one request packet per
// packet.
func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		spec         string
		k, l, n, win int
	}{
		{"BF(2)", 4, 64, 1000, 0},
		{"SE(2)", 3, 100, 999, 0},
		{"BF(2)", 8, 10, 200, 2}, // the window caps a group's packets in flight
	} {
		t.Run(fmt.Sprintf("%s_k%d_l%d_w%d", tc.spec, tc.k, tc.l, tc.win), func(t *testing.T) {
			runLocal(t, tc.spec, Config{Seed: 3, Window: tc.win}, func(s *Store) error {
				p, me := s.Apps(), s.Rank()
				vars := make([]globalvar.Var, p)
				for i := range vars {
					var err error
					if vars[i], err = s.CreateAt(fmt.Sprintf("blk%d", i), tc.n, i); err != nil {
						return err
					}
				}
				data := make([]byte, tc.n)
				for i := range data {
					data[i] = byte(me*13 + i)
				}
				target := vars[(me+1)%p]
				pk, err := globalvar.Split(target, 0, data, tc.l)
				if err != nil {
					return err
				}
				before := s.issuedWrites
				if err := globalvar.WriteBatch(s, pk, tc.k); err != nil {
					return err
				}
				if n := s.issuedWrites - before; n != int64(len(pk)) {
					return fmt.Errorf("%d write requests for %d packets", n, len(pk))
				}
				if err := s.Barrier(); err != nil {
					return err
				}
				got := make([]byte, tc.n)
				pk, _ = globalvar.Split(target, 0, got, tc.l)
				if err := globalvar.ReadBatch(s, pk, tc.k); err != nil {
					return err
				}
				if !bytes.Equal(got, data) {
					return fmt.Errorf("rank %d read back different bytes", me)
				}
				return nil
			})
		})
	}
}
