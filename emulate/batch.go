package emulate

import (
	"fmt"

	"github.com/commcost/commcost/globalvar"
)

// ReadBatch implements globalvar.Batcher: every group of k packets is one
// k-access through the network, exactly as the drivers' k-k-access
// (KKAccess, KAccess) sends it: one Access of the group's packets, each
// packet one network packet (SplitOne), sent one after another, then every
// reply awaited before the next group leaves. At most Config.Window
// requests are ever unanswered, so a group keeps min(k, Window) packets in
// flight.
func (s *Store) ReadBatch(pk []globalvar.Packet, k int) error { return s.batch(false, pk, k) }

// WriteBatch implements globalvar.Batcher; a group ends when every packet
// of it is acknowledged.
func (s *Store) WriteBatch(pk []globalvar.Packet, k int) error { return s.batch(true, pk, k) }

func (s *Store) batch(write bool, pk []globalvar.Packet, k int) error {
	if k < 1 {
		return fmt.Errorf("%w: k = %d packets in flight; want k >= 1", globalvar.ErrBatch, k)
	}
	ops := make([]Op, 0, min(k, len(pk)))
	for lo := 0; lo < len(pk); lo += k {
		ops = ops[:0]
		for _, p := range pk[lo:min(lo+k, len(pk))] {
			ops = append(ops, Op{Write: write, Var: p.Var, Off: p.Off, Buf: p.Buf})
		}
		if err := s.AccessSplit(ops, SplitOne); err != nil {
			return err
		}
	}
	return nil
}

var (
	_ globalvar.Batcher = (*Store)(nil)
	_ globalvar.Placer  = (*Store)(nil)
)
