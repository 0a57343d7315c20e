package permsched

import (
	"fmt"
	"math"
)

// Matrix is a communication matrix: the paper's COM (Section 2) held as a
// list of messages, so that a rank may send several messages to one
// destination (a multigraph) and each message may have its own size.
//
// Messages are numbered in row order: rank i's messages are the ids
// RowStart(i) .. RowStart(i+1)-1, in the order they were given. The zero
// value is not usable; build a Matrix with NewMatrix, NewWeighted or a
// generator. A Matrix is immutable once built and safe for concurrent reads.
type Matrix struct {
	n     int
	off   []int32 // len n+1: rank i's message ids are off[i]..off[i+1]-1
	src   []int32 // src[id]
	dst   []int32 // dst[id]
	bytes []int64 // bytes[id]; nil for a uniform matrix
}

// maxMessages bounds the number of messages of one matrix: ids are int32.
const maxMessages = math.MaxInt32 - 1

// MaxRanks bounds n for every constructor: schedules index ranks with int32
// and the dense schedulers (GM) allocate n*n cells.
const MaxRanks = 1 << 16

// NewMatrix builds a uniform matrix of n ranks: rows[i] lists the
// destinations of rank i's messages, repeats allowed (a multigraph). rows
// may be shorter than n (missing rows send nothing).
func NewMatrix(n int, rows [][]int32) (*Matrix, error) {
	return newMatrix(n, rows, nil)
}

// NewWeighted builds a matrix whose messages carry sizes: bytes[i][k] is the
// size of rank i's k-th message (rows[i][k]). Sizes must lie in
// [0, mpi.MaxCount].
func NewWeighted(n int, rows [][]int32, bytes [][]int64) (*Matrix, error) {
	if bytes == nil {
		bytes = [][]int64{}
	}
	return newMatrix(n, rows, bytes)
}

func newMatrix(n int, rows [][]int32, bytes [][]int64) (*Matrix, error) {
	if n < 1 || n > MaxRanks {
		return nil, fmt.Errorf("permsched: matrix size n = %d, want 1 <= n <= %d", n, MaxRanks)
	}
	if len(rows) > n {
		return nil, fmt.Errorf("permsched: %d rows for a matrix of %d ranks", len(rows), n)
	}
	total := 0
	for i, r := range rows {
		total += len(r)
		if total > maxMessages {
			return nil, fmt.Errorf("permsched: more than %d messages", maxMessages)
		}
		if bytes != nil {
			var b []int64
			if i < len(bytes) {
				b = bytes[i]
			}
			if len(b) != len(r) {
				return nil, fmt.Errorf("permsched: rank %d has %d destinations but %d sizes", i, len(r), len(b))
			}
		}
	}
	if bytes != nil && len(bytes) > len(rows) {
		for i := len(rows); i < len(bytes); i++ {
			if len(bytes[i]) != 0 {
				return nil, fmt.Errorf("permsched: rank %d has sizes but no destinations", i)
			}
		}
	}
	m := &Matrix{
		n:   n,
		off: make([]int32, n+1),
		src: make([]int32, 0, total),
		dst: make([]int32, 0, total),
	}
	if bytes != nil {
		m.bytes = make([]int64, 0, total)
	}
	for i := 0; i < n; i++ {
		m.off[i] = int32(len(m.dst))
		if i >= len(rows) {
			continue
		}
		for k, j := range rows[i] {
			if j < 0 || int(j) >= n {
				return nil, fmt.Errorf("permsched: rank %d sends to %d, outside 0..%d", i, j, n-1)
			}
			m.src = append(m.src, int32(i))
			m.dst = append(m.dst, j)
			if bytes != nil {
				b := bytes[i][k]
				if b < 0 || b > maxMessageBytes {
					return nil, fmt.Errorf("permsched: rank %d message %d has %d bytes, want 0..%d", i, k, b, maxMessageBytes)
				}
				m.bytes = append(m.bytes, b)
			}
		}
	}
	m.off[n] = int32(len(m.dst))
	return m, nil
}

// maxMessageBytes is the largest message one MPI call carries (mpi.MaxCount).
const maxMessageBytes = math.MaxInt32

// N is the number of ranks.
func (m *Matrix) N() int { return m.n }

// Len is the number of messages.
func (m *Matrix) Len() int { return len(m.dst) }

// Src and Dst are the sender and receiver of message id.
func (m *Matrix) Src(id int) int { return int(m.src[id]) }

// Dst is the receiver of message id.
func (m *Matrix) Dst(id int) int { return int(m.dst[id]) }

// Weighted reports whether messages carry their own sizes.
func (m *Matrix) Weighted() bool { return m.bytes != nil }

// Bytes is the size of message id, or uniform when the matrix is not
// weighted (the executor's message size).
func (m *Matrix) Bytes(id int, uniform int) int {
	if m.bytes == nil {
		return uniform
	}
	return int(m.bytes[id])
}

// RowStart is the first message id of rank i (RowStart(n) = Len()).
func (m *Matrix) RowStart(i int) int { return int(m.off[i]) }

// Row returns the destinations of rank i's messages in id order. The slice
// belongs to the matrix and must not be modified.
func (m *Matrix) Row(i int) []int32 { return m.dst[m.off[i]:m.off[i+1]:m.off[i+1]] }

// RowBytes returns the sizes of rank i's messages, or nil when uniform. The
// slice belongs to the matrix and must not be modified.
func (m *Matrix) RowBytes(i int) []int64 {
	if m.bytes == nil {
		return nil
	}
	return m.bytes[m.off[i]:m.off[i+1]:m.off[i+1]]
}

// OutDegree is the number of messages rank i sends.
func (m *Matrix) OutDegree(i int) int { return int(m.off[i+1] - m.off[i]) }

// InDegrees returns the number of messages each rank receives.
func (m *Matrix) InDegrees() []int {
	in := make([]int, m.n)
	for _, j := range m.dst {
		in[j]++
	}
	return in
}

// MaxOutDegree is the largest number of messages any rank sends.
func (m *Matrix) MaxOutDegree() int {
	d := 0
	for i := 0; i < m.n; i++ {
		d = max(d, m.OutDegree(i))
	}
	return d
}

// MaxInDegree is the largest number of messages any rank receives.
func (m *Matrix) MaxInDegree() int {
	d := 0
	for _, v := range m.InDegrees() {
		d = max(d, v)
	}
	return d
}

// MaxDegree is D = max(max out-degree, max in-degree): no schedule of
// partial permutations has fewer than D phases, and by Konig's theorem D
// phases always suffice (see Exact). The paper's assumption 3 (Section 2.1)
// is the regular case, where D = d.
func (m *Matrix) MaxDegree() int { return max(m.MaxOutDegree(), m.MaxInDegree()) }

// SelfSends is the number of messages i -> i.
func (m *Matrix) SelfSends() int {
	s := 0
	for id, j := range m.dst {
		if m.src[id] == j {
			s++
		}
	}
	return s
}

// TotalBytes is the sum of all message sizes, with uniform for every
// message of a uniform matrix.
func (m *Matrix) TotalBytes(uniform int) int64 {
	if m.bytes == nil {
		return int64(uniform) * int64(len(m.dst))
	}
	var t int64
	for _, b := range m.bytes {
		t += b
	}
	return t
}

// Dense returns the n x n matrix of entries: message counts, or for a
// weighted matrix the total bytes of each (i, j) pair.
func (m *Matrix) Dense() [][]int64 {
	out := make([][]int64, m.n)
	for i := range out {
		out[i] = make([]int64, m.n)
		for k, j := range m.Row(i) {
			if m.bytes == nil {
				out[i][j]++
			} else {
				out[i][j] += m.bytes[int(m.off[i])+k]
			}
		}
	}
	return out
}

// Equal reports whether a and b have the same ranks, messages (in id order)
// and sizes.
func (m *Matrix) Equal(b *Matrix) bool {
	if m.n != b.n || len(m.dst) != len(b.dst) || (m.bytes == nil) != (b.bytes == nil) {
		return false
	}
	for i := range m.off {
		if m.off[i] != b.off[i] {
			return false
		}
	}
	for i := range m.dst {
		if m.dst[i] != b.dst[i] || (m.bytes != nil && m.bytes[i] != b.bytes[i]) {
			return false
		}
	}
	return true
}

// rows returns a copy of the destination lists, for building variants.
func (m *Matrix) rows() [][]int32 {
	out := make([][]int32, m.n)
	for i := range out {
		out[i] = append([]int32(nil), m.Row(i)...)
	}
	return out
}
