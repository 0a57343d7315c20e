package local_test

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// TestRefSend checks mpi.RefSender: every combination of a by-reference
// and a copying send with a by-reference and a copying receive delivers the
// same bytes; a by-reference send received by reference with the sender's
// split hands over the sender's memory.
func TestRefSend(t *testing.T) {
	head, body := []byte("HEADER"), []byte("the payload, by reference")
	whole := append(append([]byte(nil), head...), body...)
	for _, tc := range []struct {
		name      string
		refSend   bool
		headLen   int  // receiver's head length (-1: a plain Recv of the whole)
		sameBody  bool // the body returned must be the sender's memory
		posted    bool // the receive is posted before the send (Irecv)
		wantCount int
	}{
		{name: "ref/ref same split", refSend: true, headLen: len(head), sameBody: true, wantCount: len(whole)},
		{name: "ref/ref shorter head", refSend: true, headLen: 2, wantCount: len(whole)},
		{name: "ref/ref longer head", refSend: true, headLen: 10, wantCount: len(whole)},
		{name: "ref/ref head holds all", refSend: true, headLen: 64, wantCount: len(whole)},
		{name: "ref/Recv", refSend: true, headLen: -1, wantCount: len(whole)},
		{name: "ref/posted Irecv", refSend: true, headLen: -1, posted: true, wantCount: len(whole)},
		{name: "Send/ref", refSend: false, headLen: len(head), wantCount: len(whole)},
		{name: "Send/ref empty head", refSend: false, headLen: 0, wantCount: len(whole)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runTest(2, func(c mpi.Comm) error {
				rs := c.(mpi.RefSender)
				if c.Rank() == 0 {
					if tc.posted {
						// Rank 1's receive is posted once it says go.
						if _, err := c.Recv(make([]byte, 8), 1, 1); err != nil {
							return err
						}
					}
					if tc.refSend {
						_, err := rs.IsendRef(head, body, 1, 5)
						return err
					}
					return c.Send(whole, 1, 5)
				}
				var got []byte
				var st mpi.Status
				switch {
				case tc.posted:
					buf := make([]byte, 64)
					req, err := c.Irecv(buf, 0, 5)
					if err != nil {
						return err
					}
					if err := c.Send(make([]byte, 8), 0, 1); err != nil {
						return err
					}
					if st, err = req.Wait(); err != nil {
						return err
					}
					got = buf[:st.Count]
				case tc.headLen < 0:
					buf := make([]byte, 64)
					var err error
					if st, err = c.Recv(buf, 0, 5); err != nil {
						return err
					}
					got = buf[:st.Count]
				default:
					h := make([]byte, tc.headLen)
					b, s, err := rs.RecvRef(h, 0, 5)
					if err != nil {
						return err
					}
					st = s
					if tc.sameBody && (len(b) == 0 || &b[0] != &body[0]) {
						return errors.New("body was copied, want the sender's memory")
					}
					got = append(h[:min(len(h), st.Count)], b...)
				}
				if st.Count != tc.wantCount || !bytes.Equal(got, whole) || st.Source != 0 || st.Tag != 5 {
					return errors.New("got " + string(got) + " / count mismatch")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRefSendProbeAndTruncate: a probe counts head and body; a receive too
// short for both is truncated, as for a plain send.
func TestRefSendProbeAndTruncate(t *testing.T) {
	err := runTest(2, func(c mpi.Comm) error {
		if c.Rank() == 0 {
			_, err := c.(mpi.RefSender).IsendRef([]byte("abc"), []byte("defgh"), 1, 2)
			return err
		}
		st, err := c.Probe(0, 2)
		if err != nil {
			return err
		}
		if st.Count != 8 {
			return errors.New("probe count is not head + body")
		}
		_, err = c.Recv(make([]byte, 5), 0, 2)
		var e *mpi.Error
		if !errors.As(err, &e) || e.Class != mpi.ErrTruncate {
			return errors.New("a 5-byte receive of 8 bytes was not truncated")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProcessShared: one value per key and communicator, made once, the
// same on every rank; a duplicate communicator has its own.
func TestProcessShared(t *testing.T) {
	var made atomic.Int32
	var mu sync.Mutex
	seen := map[mpi.Comm]*int{}
	vals := map[*int]bool{}
	type key struct{}
	err := runTest(8, func(c mpi.Comm) error {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		mk := func() any { made.Add(1); return new(int) }
		a := c.(mpi.ProcessShared).ProcessShared(key{}, mk).(*int)
		b := d.(mpi.ProcessShared).ProcessShared(key{}, mk).(*int)
		a2 := c.(mpi.ProcessShared).ProcessShared(key{}, mk).(*int)
		if a != a2 || a == b {
			return errors.New("same key gave different values, or two communicators one value")
		}
		mu.Lock()
		seen[c] = a
		vals[a], vals[b] = true, true
		mu.Unlock()
		return d.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
	if made.Load() != 2 || len(vals) != 2 || len(seen) != 8 {
		t.Fatalf("mk called %d times, %d distinct values over %d ranks; want 2, 2, 8", made.Load(), len(vals), len(seen))
	}
}
