package divalib

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestTrafficReduce checks the sparse per-pair counters and their
// reduction at rank 0 against a dense per-link count of the same messages.
func TestTrafficReduce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mesh       Mesh
		msgs, seed uint64
	}{
		{"1x1", Mesh{1, 1}, 10, 1},
		{"4x4", Mesh{4, 4}, 500, 2},
		{"3x5", Mesh{3, 5}, 300, 3},
		{"8x8 few", Mesh{8, 8}, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.mesh.Size()
			// Every rank's messages, drawn from one seed per rank.
			charges := func(r int) [][3]int {
				rng := rand.New(rand.NewPCG(tc.seed, uint64(r)))
				var out [][3]int
				for range tc.msgs {
					out = append(out, [3]int{r, rng.IntN(p), 1 + rng.IntN(5000)})
				}
				return out
			}
			var want Congestion
			dense := make([][2]int64, p*numDirs)
			for r := 0; r < p; r++ {
				var starts int64
				for _, ch := range charges(r) {
					if ch[0] == ch[1] {
						continue
					}
					starts++
					want.Startups++
					want.BytesSent += int64(ch[2])
					tc.mesh.forEachLink(ch[0], ch[1], func(l int) {
						dense[l][0] += int64(ch[2])
						dense[l][1]++
					})
				}
				want.MaxStartups = max(want.MaxStartups, starts)
			}
			for _, d := range dense {
				want.MaxLinkBytes = max(want.MaxLinkBytes, d[0])
				want.MaxLinkMessages = max(want.MaxLinkMessages, d[1])
				want.LoadBytes += d[0]
				want.LoadMessages += d[1]
			}
			var mu sync.Mutex
			got := make([]Congestion, p)
			err := local.Run(p, func(c mpi.Comm) error {
				tr := NewTraffic(tc.mesh)
				tr.Charge(c.Rank(), (c.Rank()+1)%p, 99) // reset away
				tr.Reset()
				for _, ch := range charges(c.Rank()) {
					tr.Charge(ch[0], ch[1], ch[2])
				}
				g, err := tr.Reduce(c)
				mu.Lock()
				got[c.Rank()] = g
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for r, g := range got {
				if g != want {
					t.Fatalf("rank %d: %+v, want %+v", r, g, want)
				}
			}
		})
	}
}

// TestTrafficAdd: charging messages into two counters and adding them gives
// the counters of charging all into one.
func TestTrafficAdd(t *testing.T) {
	m := Mesh{Rows: 3, Cols: 4}
	msgs := []struct{ a, b, n int }{{0, 11, 100}, {5, 6, 40}, {11, 0, 7}, {3, 3, 999}, {4, 7, 1}, {7, 4, 2}}
	all, x, y := NewTraffic(m), NewTraffic(m), NewTraffic(m)
	for i, msg := range msgs {
		all.Charge(msg.a, msg.b, msg.n)
		if i%2 == 0 {
			x.Charge(msg.a, msg.b, msg.n)
		} else {
			y.Charge(msg.a, msg.b, msg.n)
		}
	}
	x.Add(y)
	xb, xm := m.links(x.flows)
	ab, am := m.links(all.flows)
	for i := range ab {
		if xb[i] != ab[i] || xm[i] != am[i] {
			t.Fatalf("link %d: %d bytes / %d messages, want %d / %d", i, xb[i], xm[i], ab[i], am[i])
		}
	}
	if x.startups != all.startups || x.bytes != all.bytes || x.startups != 5 {
		t.Fatalf("startups %d bytes %d, want %d and %d", x.startups, x.bytes, all.startups, all.bytes)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("adding counters of another mesh did not panic")
		}
	}()
	x.Add(NewTraffic(Mesh{Rows: 4, Cols: 3}))
}
