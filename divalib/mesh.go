package divalib

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// Mesh is the virtual two-dimensional mesh the ranks are arranged in
// (paper 004, section 2): Rows x Cols processors numbered 0..P-1 in row-major
// order, rank = row*Cols + col. The mesh is virtual: on a real cluster the
// physical network is whatever it is; the mesh defines the hierarchical
// decomposition the access trees are built from and the links that the
// congestion accounting charges.
type Mesh struct {
	Rows, Cols int
}

// Size is the number of processors, Rows*Cols.
func (m Mesh) Size() int { return m.Rows * m.Cols }

// Coord returns the row and column of rank r.
func (m Mesh) Coord(r int) (row, col int) { return r / m.Cols, r % m.Cols }

// Rank returns the rank at row, col.
func (m Mesh) Rank(row, col int) int { return row*m.Cols + col }

func (m Mesh) String() string { return fmt.Sprintf("%dx%d", m.Rows, m.Cols) }

// NewMesh returns the Rows x Cols mesh for size ranks. rows = cols = 0 picks
// the most nearly square shape (SquareMesh); otherwise rows*cols must equal
// size.
func NewMesh(rows, cols, size int) (Mesh, error) {
	if size < 1 {
		return Mesh{}, fmt.Errorf("divalib: mesh for %d ranks: need at least one rank", size)
	}
	if rows == 0 && cols == 0 {
		return SquareMesh(size), nil
	}
	if rows < 1 || cols < 1 {
		return Mesh{}, fmt.Errorf("divalib: mesh %dx%d: both sides must be >= 1", rows, cols)
	}
	if rows > size || cols > size || rows*cols != size { // a side beyond size first: rows*cols may wrap around
		return Mesh{}, fmt.Errorf("divalib: mesh %dx%d has %s processors but there are %d ranks", rows, cols, results.FormatCount(float64(rows)*float64(cols)), size)
	}
	return Mesh{Rows: rows, Cols: cols}, nil
}

// SquareMesh returns the most nearly square Rows x Cols = size shape with
// Rows <= Cols (a prime size gives 1 x size).
func SquareMesh(size int) Mesh {
	r := 1
	for d := 1; d*d <= size; d++ {
		if size%d == 0 {
			r = d
		}
	}
	return Mesh{Rows: r, Cols: size / r}
}

// ParseMesh parses "RxC" (e.g. "16x16"); the empty string means "choose".
func ParseMesh(s string) (rows, cols int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	parts := strings.Split(strings.ToLower(s), "x")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("mesh %q: accepted form is ROWSxCOLS, e.g. 16x16", s)
	}
	rows, err1 := strconv.Atoi(parts[0])
	cols, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || rows < 1 || cols < 1 {
		return 0, 0, fmt.Errorf("mesh %q: accepted form is ROWSxCOLS with positive integers, e.g. 16x16", s)
	}
	if rows > results.MaxRecordRanks || cols > results.MaxRecordRanks {
		// No side is longer than the ranks, and so rows x cols stays far
		// from wrapping around an int.
		return 0, 0, fmt.Errorf("mesh %q: each side is at most %d, the most ranks a run has", s, results.MaxRecordRanks)
	}
	return rows, cols, nil
}

// Directions of the directed links leaving a processor. Each physical mesh
// edge is two directed links: the paper's machine moved data at full
// bandwidth in both directions at once (section 3, "The hardware platform"),
// so the two directions are separate resources and separate counters.
const (
	dirEast  = iota // column + 1
	dirWest         // column - 1
	dirSouth        // row + 1
	dirNorth        // row - 1
	numDirs
)

// linkID names the directed link leaving rank r in direction dir.
func linkID(r, dir int) int { return r*numDirs + dir }

// Hops is the length of the dimension-order path from rank a to rank b.
func (m Mesh) Hops(a, b int) int {
	ar, ac := m.Coord(a)
	br, bc := m.Coord(b)
	return abs(ar-br) + abs(ac-bc)
}

// forEachLink calls f with every directed link on the dimension-order path
// from rank a to rank b (paper 004, section 2: "the unique shortest path
// between the two nodes using first edges of dimension 1, then edges of
// dimension 2"). Dimension 1 is the column index (the path first runs along
// a's row), dimension 2 the row index.
func (m Mesh) forEachLink(a, b int, f func(link int)) {
	r, c := m.Coord(a)
	br, bc := m.Coord(b)
	for c < bc {
		f(linkID(m.Rank(r, c), dirEast))
		c++
	}
	for c > bc {
		f(linkID(m.Rank(r, c), dirWest))
		c--
	}
	for r < br {
		f(linkID(m.Rank(r, c), dirSouth))
		r++
	}
	for r > br {
		f(linkID(m.Rank(r, c), dirNorth))
		r--
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Submesh is a rectangle of the mesh: rows Row..Row+Rows-1 and columns
// Col..Col+Cols-1.
type Submesh struct {
	Row, Col, Rows, Cols int
}

// Size is the number of processors in the submesh.
func (s Submesh) Size() int { return s.Rows * s.Cols }

// Contains reports whether the processor at row, col lies in s.
func (s Submesh) Contains(row, col int) bool {
	return row >= s.Row && row < s.Row+s.Rows && col >= s.Col && col < s.Col+s.Cols
}

// split divides s in two along its longer side (paper 004, section 2: with
// m1 >= m2 the submeshes are ceil(m1/2) x m2 and floor(m1/2) x m2; a square
// is split across its rows). It reports false for a single processor, the
// end of the recursion.
func (s Submesh) split() (a, b Submesh, ok bool) {
	switch {
	case s.Rows == 1 && s.Cols == 1:
		return s, s, false
	case s.Rows >= s.Cols:
		h := (s.Rows + 1) / 2
		return Submesh{s.Row, s.Col, h, s.Cols}, Submesh{s.Row + h, s.Col, s.Rows - h, s.Cols}, true
	default:
		w := (s.Cols + 1) / 2
		return Submesh{s.Row, s.Col, s.Rows, w}, Submesh{s.Row, s.Col + w, s.Rows, s.Cols - w}, true
	}
}
