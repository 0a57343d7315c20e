package apps

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeSplit checks merge&split against sorting the union.
func TestMergeSplit(t *testing.T) {
	tests := []struct {
		name        string
		mine, their []uint32
	}{
		{"one key each", []uint32{5}, []uint32{3}},
		{"interleaved", []uint32{1, 4, 6, 9}, []uint32{2, 3, 7, 8}},
		{"disjoint low", []uint32{1, 2, 3}, []uint32{7, 8, 9}},
		{"disjoint high", []uint32{7, 8, 9}, []uint32{1, 2, 3}},
		{"duplicates", []uint32{2, 2, 5, 5}, []uint32{2, 5, 5, 6}},
		{"extremes", []uint32{0, 0, 1<<32 - 1}, []uint32{0, 1<<32 - 1, 1<<32 - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := len(tt.mine)
			all := append(slices.Clone(tt.mine), tt.their...)
			slices.Sort(all)
			lo, hi := make([]uint32, m), make([]uint32, m)
			mergeSplit(tt.mine, tt.their, lo, true)
			mergeSplit(tt.mine, tt.their, hi, false)
			if !slices.Equal(lo, all[:m]) || !slices.Equal(hi, all[m:]) {
				t.Fatalf("low %v high %v, want %v and %v", lo, hi, all[:m], all[m:])
			}
		})
	}
}

// TestBitonicCircuitSorts runs the circuit serially (every step's pairs one
// after the other, which the parallel steps are equivalent to) with
// merge&split on random blocks and compares with a plain sort.
func TestBitonicCircuitSorts(t *testing.T) {
	for _, tc := range []struct{ p, m int }{{1, 5}, {2, 1}, {4, 3}, {8, 1}, {16, 16}, {64, 7}, {256, 2}} {
		rng := rand.New(rand.NewPCG(3, uint64(tc.p*1000+tc.m)))
		blocks := make([][]uint32, tc.p)
		var all []uint32
		for w := range blocks {
			blocks[w] = make([]uint32, tc.m)
			for i := range blocks[w] {
				blocks[w][i] = rng.Uint32N(50) // many duplicates
			}
			slices.Sort(blocks[w])
			all = append(all, blocks[w]...)
		}
		steps := BitonicSteps(tc.p)
		if d := len(steps); tc.p > 1 && d != (bits.Len(uint(tc.p))-1)*((bits.Len(uint(tc.p))-1)+1)/2 {
			t.Fatalf("p=%d: %d steps, want d(d+1)/2", tc.p, d)
		}
		for _, st := range steps {
			next := make([][]uint32, tc.p)
			for w := range blocks {
				partner, low := st.Partner(w)
				if back, _ := st.Partner(partner); back != w {
					t.Fatalf("p=%d step %v: partner of %d is %d, whose partner is %d", tc.p, st, w, partner, back)
				}
				if _, plow := st.Partner(partner); plow == low {
					t.Fatalf("p=%d step %v: wires %d and %d keep the same half", tc.p, st, w, partner)
				}
				next[w] = make([]uint32, tc.m)
				mergeSplit(blocks[w], blocks[partner], next[w], low)
			}
			blocks = next
		}
		var got []uint32
		for _, b := range blocks {
			got = append(got, b...)
		}
		slices.Sort(all)
		if !slices.Equal(got, all) {
			t.Errorf("p=%d m=%d: circuit output %v, want %v", tc.p, tc.m, got, all)
		}
	}
}

// TestKeyBlock checks that a key block's keys and its wire form agree
// (4 bytes per key, little-endian) through both forms: the view a
// little-endian host uses and the copying form of other hosts, forced.
func TestKeyBlock(t *testing.T) {
	const m = 37
	rng := rand.New(rand.NewPCG(1, 2))
	host := newKeyBlock(m)
	if hostLittleEndian && !host.view {
		t.Errorf("little-endian host: the key block copies instead of sharing its bytes")
	}
	copying := keyBlock{raw: make([]byte, 4*m), keys: make([]uint32, m)}
	for _, b := range []keyBlock{host, copying} {
		for i := range b.keys {
			b.keys[i] = rng.Uint32()
		}
		b.toWire()
		for i, k := range b.keys {
			if got := binary.LittleEndian.Uint32(b.raw[4*i:]); got != k {
				t.Fatalf("view %v: key %d is %#x, its wire form %#x", b.view, i, k, got)
			}
		}
		want := make([]uint32, m)
		for i := range want {
			want[i] = rng.Uint32()
			binary.LittleEndian.PutUint32(b.raw[4*i:], want[i])
		}
		b.fromWire()
		if !slices.Equal(b.keys, want) {
			t.Fatalf("view %v: keys after fromWire %v, want %v", b.view, b.keys, want)
		}
	}
}
