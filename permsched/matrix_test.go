package permsched

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewMatrix(t *testing.T) {
	tests := []struct {
		name          string
		n             int
		rows          [][]int32
		sizes         [][]int64
		wantErr       string
		len, out, in  int
		maxDeg, selfs int
	}{
		{name: "empty n=1", n: 1, len: 0},
		{name: "multigraph", n: 3, rows: [][]int32{{1, 1, 2}, {0}, {2}}, len: 5, out: 3, in: 2, maxDeg: 3, selfs: 1},
		{name: "in > out", n: 4, rows: [][]int32{{3}, {3}, {3}, {0}}, len: 4, out: 1, in: 3, maxDeg: 3},
		{name: "weighted", n: 2, rows: [][]int32{{1}, {0, 1}}, sizes: [][]int64{{5}, {0, 7}}, len: 3, out: 2, in: 2, maxDeg: 2, selfs: 1},
		{name: "n=0", n: 0, wantErr: "n = 0"},
		{name: "n too big", n: MaxRanks + 1, wantErr: "n = "},
		{name: "too many rows", n: 1, rows: [][]int32{{0}, {0}}, wantErr: "2 rows"},
		{name: "destination out of range", n: 2, rows: [][]int32{{2}}, wantErr: "outside 0..1"},
		{name: "negative destination", n: 2, rows: [][]int32{{-1}}, wantErr: "outside"},
		{name: "sizes mismatch", n: 2, rows: [][]int32{{1}}, sizes: [][]int64{{1, 2}}, wantErr: "sizes"},
		{name: "negative size", n: 2, rows: [][]int32{{1}}, sizes: [][]int64{{-3}}, wantErr: "-3 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m *Matrix
			var err error
			if tc.sizes != nil {
				m, err = NewWeighted(tc.n, tc.rows, tc.sizes)
			} else {
				m, err = NewMatrix(tc.n, tc.rows)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() != tc.len || m.MaxOutDegree() != tc.out || m.MaxInDegree() != tc.in || m.MaxDegree() != tc.maxDeg || m.SelfSends() != tc.selfs {
				t.Errorf("len %d out %d in %d D %d self %d, want %d %d %d %d %d", m.Len(), m.MaxOutDegree(), m.MaxInDegree(), m.MaxDegree(), m.SelfSends(),
					tc.len, tc.out, tc.in, tc.maxDeg, tc.selfs)
			}
			for id := 0; id < m.Len(); id++ {
				i := m.Src(id)
				if id < m.RowStart(i) || id >= m.RowStart(i+1) {
					t.Errorf("message %d of rank %d outside its row", id, i)
				}
			}
		})
	}
}

// TestGenerators checks the degree structure each generator promises, for
// several seeds, and determinism.
func TestGenerators(t *testing.T) {
	tests := []struct {
		gen        string
		n, d       int
		regular    bool // every rank receives exactly d
		noSelf     bool
		hotSkewed  bool // D well above d
		wantLength int
	}{
		{GenFig7, 64, 5, true, false, false, 64 * 5},
		{GenFig7, 7, 6, true, false, false, 42},
		{GenFig7, 1, 0, true, false, false, 0},
		{GenFig7NoSelf, 50, 49, true, true, false, 50 * 49},
		{GenFig7NoSelf, 12, 3, true, true, false, 36},
		{GenUniform, 100, 10, false, true, false, 1000},
		{GenUniform, 9, 8, true, true, false, 72},
		{GenSkewed, 256, 8, false, true, true, 256 * 8},
	}
	for _, tc := range tests {
		for seed := uint64(0); seed < 5; seed++ {
			m, err := Generate(tc.gen, tc.n, tc.d, seed)
			if err != nil {
				t.Fatalf("%s n=%d d=%d: %v", tc.gen, tc.n, tc.d, err)
			}
			if m.Len() != tc.wantLength {
				t.Errorf("%s: %d messages, want %d", tc.gen, m.Len(), tc.wantLength)
			}
			for i := 0; i < tc.n; i++ {
				row := m.Row(i)
				if len(row) != tc.d {
					t.Fatalf("%s: rank %d sends %d, want %d", tc.gen, i, len(row), tc.d)
				}
				if !slices.IsSorted(row) || len(slices.Compact(slices.Clone(row))) != len(row) {
					t.Errorf("%s: rank %d row %v not sorted distinct", tc.gen, i, row)
				}
				if tc.noSelf && slices.Contains(row, int32(i)) {
					t.Errorf("%s: rank %d sends to itself", tc.gen, i)
				}
			}
			if tc.regular && m.MaxInDegree() != tc.d {
				t.Errorf("%s: max in-degree %d, want %d", tc.gen, m.MaxInDegree(), tc.d)
			}
			if tc.hotSkewed && m.MaxInDegree() < 3*tc.d {
				t.Errorf("%s: max in-degree %d, want a hot spot well above d = %d", tc.gen, m.MaxInDegree(), tc.d)
			}
			again, _ := Generate(tc.gen, tc.n, tc.d, seed)
			if !m.Equal(again) {
				t.Errorf("%s seed %d: not deterministic", tc.gen, seed)
			}
		}
	}
	for _, bad := range []struct{ n, d int }{{0, 0}, {4, 4}, {4, -1}, {MaxRanks + 1, 1}} {
		for _, g := range GenKinds() {
			if _, err := Generate(g, bad.n, bad.d, 1); err == nil {
				t.Errorf("%s n=%d d=%d: want an error", g, bad.n, bad.d)
			}
		}
	}
	if _, err := Generate("ring", 4, 1, 1); err == nil {
		t.Error("unknown generator: want an error")
	}
}

func TestSampleSortTrace(t *testing.T) {
	const n, keys = 16, 500
	m, err := SampleSortTrace(n, keys, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Weighted() {
		t.Fatal("trace is not weighted")
	}
	// Every key goes somewhere exactly once: each row's bytes add up.
	for i := 0; i < n; i++ {
		sum := int64(0)
		for _, b := range m.RowBytes(i) {
			sum += b
		}
		if sum != keys*8 {
			t.Errorf("rank %d sends %d bytes, want %d", i, sum, keys*8)
		}
	}
	// Regular sampling balances buckets: no rank receives more than twice
	// its share (PSRS guarantees < 2x).
	in := make([]int64, n)
	for id := 0; id < m.Len(); id++ {
		in[m.Dst(id)] += int64(m.Bytes(id, 0))
	}
	for j, b := range in {
		if b > 2*keys*8 {
			t.Errorf("rank %d receives %d bytes, more than twice its share", j, b)
		}
	}
}

func TestReadWriteMatrix(t *testing.T) {
	tests := []struct {
		name, text string
		kind       EntryKind
		wantErr    string
		n, len     int
	}{
		{name: "count", text: "# c\n0 2 1\n\n1 0 0\n0 0 3\n", kind: EntryCount, n: 3, len: 7},
		{name: "bytes with commas and tabs", text: "0,16\t4\n8 0 0\n0 0 0\n", kind: EntryBytes, n: 3, len: 3},
		{name: "crlf", text: "1 0\r\n0 1\r\n", kind: EntryCount, n: 2, len: 2},
		{name: "1x1", text: "5\n", kind: EntryBytes, n: 1, len: 1},
		{name: "empty", text: "# nothing\n", kind: EntryBytes, wantErr: "no rows"},
		{name: "too few rows", text: "0 1\n", kind: EntryBytes, wantErr: "square"},
		{name: "too many rows", text: "0\n1\n", kind: EntryBytes, wantErr: "more than 1 rows"},
		{name: "short row", text: "0 1 1\n1 1\n0 0 0\n", kind: EntryBytes, wantErr: "line 2"},
		{name: "negative", text: "0 -1\n0 0\n", kind: EntryCount, wantErr: "non-negative"},
		{name: "garbage", text: "0 1\nx 0\n", kind: EntryCount, wantErr: "not an integer"},
		{name: "float", text: "0 1.5\n0 0\n", kind: EntryBytes, wantErr: "not an integer"},
		{name: "huge bytes", text: "0 4294967296\n0 0\n", kind: EntryBytes, wantErr: "at most"},
		{name: "huge count", text: "0 100000\n0 0\n", kind: EntryCount, wantErr: "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadMatrix(strings.NewReader(tc.text), tc.kind)
			if tc.wantErr != "" {
				var me *MatrixError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &me) {
					t.Fatalf("err = %v, want a *MatrixError with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.N() != tc.n || m.Len() != tc.len {
				t.Fatalf("n %d len %d, want %d %d", m.N(), m.Len(), tc.n, tc.len)
			}
			var buf bytes.Buffer
			if err := WriteMatrix(&buf, m); err != nil {
				t.Fatal(err)
			}
			back, err := ReadMatrix(&buf, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Equal(back) {
				t.Errorf("round trip changed the matrix:\n%s", buf.String())
			}
		})
	}
}

// FuzzReadMatrix: the reader never panics, and whatever it accepts is a
// valid square matrix that survives a write/read round trip.
func FuzzReadMatrix(f *testing.F) {
	for _, s := range []string{"0 1\n1 0\n", "# x\n3\n", "0,1,2\n1 0 0\n0\t0 9\n", "0 -1\n0 0\n", "1 2\n3\n", "", "\n\n", "99999999999999999999\n"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, count bool) {
		kind := EntryBytes
		if count {
			kind = EntryCount
		}
		m, err := ReadMatrix(strings.NewReader(text), kind)
		if err != nil {
			return
		}
		if m.N() < 1 {
			t.Fatalf("accepted a matrix of %d ranks", m.N())
		}
		for id := 0; id < m.Len(); id++ {
			if m.Dst(id) < 0 || m.Dst(id) >= m.N() || m.Bytes(id, 0) < 0 {
				t.Fatalf("bad message %d: %d -> %d, %d bytes", id, m.Src(id), m.Dst(id), m.Bytes(id, 0))
			}
		}
		var buf bytes.Buffer
		if err := WriteMatrix(&buf, m); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMatrix(&buf, kind)
		if err != nil {
			t.Fatalf("re-reading written matrix: %v", err)
		}
		if !m.Equal(back) {
			t.Fatal("round trip changed the matrix")
		}
	})
}
