package local_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestQueuedMessagesReused checks that a buffered message costs no
// allocation once a mailbox has taken some: count-based runs send millions
// of short protocol messages, and a fresh queue entry for each one (192
// bytes) made the collector count those allocated during its marking as
// live, 150 to 380 MB of Barnes-Hut's heap at 16x32 with fewer than 2,000
// queued at any time. It also checks that the values are intact, since a
// reused entry must not leak one message's header or body into the next.
func TestQueuedMessagesReused(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const tag = 3
	cases := []struct {
		name string
		// one sends a few messages to this rank and receives them, checking
		// their contents (i varies them; b is scratch memory of 80 bytes,
		// made once, so that the test's own buffers do not count).
		one func(c mpi.Comm, i int, b []byte) error
	}{
		{"IsendRef and RecvRef, header and body", func(c mpi.Comm, i int, buf []byte) error {
			rs := c.(mpi.RefSender)
			head, got := buf[:40], buf[40:80]
			body := bodies[i%len(bodies)]
			for k := 0; k < 4; k++ {
				head[0], head[1] = byte(i), byte(k)
				if _, err := rs.IsendRef(head, body, 0, tag); err != nil {
					return err
				}
			}
			for k := 0; k < 4; k++ {
				b, st, err := rs.RecvRef(got, mpi.AnySource, mpi.AnyTag)
				if err != nil {
					return err
				}
				if got[0] != byte(i) || got[1] != byte(k) || !bytes.Equal(b, body) || st.Count != 40+len(body) {
					return fmt.Errorf("message %d.%d: header %d.%d, body %q, count %d", i, k, got[0], got[1], b, st.Count)
				}
			}
			return nil
		}},
		{"Isend and Recv of a 16-byte message", func(c mpi.Comm, i int, buf []byte) error {
			out, in := buf[:16], buf[16:32]
			out[0] = byte(i)
			if _, err := c.Isend(out, 0, tag); err != nil {
				return err
			}
			if _, err := c.Recv(in, 0, tag); err != nil {
				return err
			}
			if !bytes.Equal(in, out) {
				return fmt.Errorf("received %v, sent %v", in, out)
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := local.Run(1, func(c mpi.Comm) error {
				buf := make([]byte, 80)
				for i := 0; i < 8; i++ { // fill the free list
					if err := tc.one(c, i, buf); err != nil {
						return err
					}
				}
				i := 0
				var ferr error
				allocs := testing.AllocsPerRun(200, func() {
					if err := tc.one(c, i, buf); err != nil && ferr == nil {
						ferr = err
					}
					i++
				})
				if ferr != nil {
					return ferr
				}
				// A few may come from the runtime; one per message (4 or
				// 1 an iteration) is the growth this guards against.
				if allocs >= 0.5 {
					return fmt.Errorf("%.2f allocations per iteration, want none", allocs)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

var bodies = [][]byte{nil, []byte("a"), []byte("body of several bytes"), make([]byte, 100)}
