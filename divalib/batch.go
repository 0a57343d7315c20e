package divalib

import (
	"fmt"

	"github.com/commcost/commcost/globalvar"
)

var (
	_ globalvar.Batcher = (*Store)(nil)
	_ globalvar.Poller  = (*Store)(nil)
)

// ReadBatch implements globalvar.Batcher: the packets leave in groups of k,
// the accesses of a group in flight at once (paper 000's k-access; the send
// hot spot k), the next group once every answer of the previous one is in.
//
// divalib keeps whole variables, so a group's packets of one variable are
// one access: the first fetches the copy, the others read it. The accesses
// a group starts are ordinary accesses of the strategy, each on its own
// variable (a rank has at most one access per variable in flight), so
// coherence is per access as for Read; packets of a variable whose access
// is still in flight wait for the next round of their group.
func (s *Store) ReadBatch(pk []globalvar.Packet, k int) error {
	return s.batch(pk, k, false)
}

// WriteBatch implements globalvar.Batcher: WriteBatch is ReadBatch's
// grouping for writes; two packets of one variable in a group are written
// one after the other, in order. It returns when every write has completed
// (the strategy's write: invalidations acknowledged).
func (s *Store) WriteBatch(pk []globalvar.Packet, k int) error {
	return s.batch(pk, k, true)
}

func (s *Store) batch(pk []globalvar.Packet, k int, write bool) error {
	if k < 1 {
		return fmt.Errorf("%w: k = %d packets in flight; want k >= 1", globalvar.ErrBatch, k)
	}
	xs := make([]*variable, len(pk))
	for i, p := range pk {
		x, err := s.lookup(p.Var)
		if err != nil {
			return fmt.Errorf("packet %d of %d: %w", i+1, len(pk), err)
		}
		if err := globalvar.CheckRange(p.Var, p.Off, len(p.Buf)); err != nil {
			return fmt.Errorf("packet %d of %d (%d bytes at %d of %q, %d bytes): %w", i+1, len(pk), len(p.Buf), p.Off, p.Var.Name, p.Var.Size, err)
		}
		xs[i] = x
	}
	if s.closed {
		return errClosed
	}
	done := make([]bool, min(k, len(pk)))
	var started []*variable
	for g := 0; g < len(pk); g += k {
		end := min(g+k, len(pk))
		clear(done)
		for left := end - g; left > 0; {
			started = started[:0]
			for i := g; i < end; i++ {
				x := xs[i]
				if done[i-g] || x.acc != nil {
					continue // done, or its variable's access of this round is out
				}
				p := pk[i]
				if write {
					s.stats.Writes++
					if s.writeStart(x, p.Off, p.Buf) {
						s.pollIfDue()
						done[i-g] = true
						left--
						continue
					}
				} else {
					s.stats.Reads++
					if data, hit := s.readStart(x); hit {
						if err := s.deliver(x, data, p.Off, p.Buf); err != nil {
							return err
						}
						s.pollIfDue()
						done[i-g] = true
						left--
						continue
					}
				}
				x.acc.pkt = i
				started = append(started, x)
			}
			err := s.progress(func() bool {
				for _, x := range started {
					if !x.acc.done {
						return false
					}
				}
				return true
			})
			if err != nil {
				return err
			}
			for _, x := range started {
				i := x.acc.pkt
				res := s.finish(x)
				if !write {
					if err := s.deliver(x, res, pk[i].Off, pk[i].Buf); err != nil {
						return err
					}
				}
				done[i-g] = true
				left--
			}
		}
	}
	return nil
}

// Poll implements globalvar.Poller: it serves the messages that have
// arrived, without waiting, so that a rank in a long computation still
// answers the others.
func (s *Store) Poll() error {
	if s.closed {
		return errClosed
	}
	for s.pollOnce() {
	}
	s.reapSends()
	s.flush()
	return s.err
}
