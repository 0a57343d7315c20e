package globalvar

import (
	"errors"
	"fmt"
	"testing"
)

func TestSplit(t *testing.T) {
	v := Var{ID: 0, Name: "v", Size: 100}
	for _, tc := range []struct {
		off, n, l int
		want      []int // packet lengths
		err       error
	}{
		{0, 100, 100, []int{100}, nil},
		{0, 100, 30, []int{30, 30, 30, 10}, nil},
		{10, 20, 7, []int{7, 7, 6}, nil},
		{0, 0, 8, nil, nil},
		{0, 10, 0, nil, ErrBatch},
		{95, 10, 4, nil, ErrRange},
	} {
		t.Run(fmt.Sprintf("off%d_n%d_l%d", tc.off, tc.n, tc.l), func(t *testing.T) {
			buf := make([]byte, tc.n)
			pk, err := Split(v, tc.off, buf, tc.l)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if len(pk) != len(tc.want) {
				t.Fatalf("%d packets, want %d", len(pk), len(tc.want))
			}
			off := tc.off
			for i, p := range pk {
				if len(p.Buf) != tc.want[i] || p.Off != off || p.Var != v {
					t.Errorf("packet %d: %d bytes at %d, want %d at %d", i, len(p.Buf), p.Off, tc.want[i], off)
				}
				if len(p.Buf) > 0 && &p.Buf[0] != &buf[off-tc.off] {
					t.Errorf("packet %d does not alias the buffer", i)
				}
				off += len(p.Buf)
			}
			if tc.err == nil && Packets(tc.n, tc.l) != len(tc.want) {
				t.Errorf("Packets(%d, %d) = %d", tc.n, tc.l, Packets(tc.n, tc.l))
			}
		})
	}
}

// TestGroups: ceil(ceil(D/l)/k) = ceil(D/(k l)), paper 000's count.
func TestGroups(t *testing.T) {
	for d := 0; d <= 300; d += 7 {
		for l := 1; l <= 40; l += 3 {
			for k := 1; k <= 9; k++ {
				want := (d + k*l - 1) / (k * l)
				if got := Groups(Packets(d, l), k); got != want {
					t.Fatalf("D=%d l=%d k=%d: %d groups, want ceil(D/(k l)) = %d", d, l, k, got, want)
				}
			}
		}
	}
}
