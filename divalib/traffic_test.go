package divalib

import "testing"

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
	for i := range all.linkBytes {
		if x.linkBytes[i] != all.linkBytes[i] || x.linkMsgs[i] != all.linkMsgs[i] {
			t.Fatalf("link %d: %d bytes / %d messages, want %d / %d", i, x.linkBytes[i], x.linkMsgs[i], all.linkBytes[i], all.linkMsgs[i])
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
