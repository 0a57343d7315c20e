package apps

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Helpers shared by the dense linear-algebra programs of paper 003
// (checkerboard and Cannon matrix multiplication, Gaussian elimination):
// reproducible matrix entries that every rank generates for the blocks it
// owns (so distributing the input costs no communication and every
// repetition runs on the same data), process grids, and block products.

// entry is element (i, j) of the matrix named which, a number in [-1, 1)
// drawn from seed by SplitMix64 (Steele, Lea, Flood 2014) of the element's
// coordinates: any rank can generate any block without communication.
func entry(seed int64, which byte, i, j int) float64 {
	z := uint64(seed) ^ uint64(which)<<56 ^ uint64(i)<<28 ^ uint64(j)
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<52) - 1
}

// fillBlock writes the rows x cols block of matrix which whose top-left
// element is (i0, j0), row-major, into dst.
func fillBlock(dst []float64, seed int64, which byte, i0, j0, rows, cols int) {
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			dst[i*cols+j] = entry(seed, which, i0+i, j0+j)
		}
	}
}

// Grid is a process grid of Rows x Cols ranks, rank = row*Cols + col
// (row-major, as MPI_Cart_create numbers a 2-D grid).
type Grid struct{ Rows, Cols int }

func (g Grid) String() string { return fmt.Sprintf("%dx%d", g.Rows, g.Cols) }

// ParseGrid parses ROWSxCOLS.
func ParseGrid(s string) (Grid, error) {
	r, c, ok := strings.Cut(strings.ToLower(s), "x")
	rows, err1 := strconv.Atoi(r)
	cols, err2 := strconv.Atoi(c)
	if !ok || err1 != nil || err2 != nil || rows < 1 || cols < 1 {
		return Grid{}, fmt.Errorf("grid %q: want ROWSxCOLS with positive integers, e.g. 2x2", s)
	}
	if rows > results.MaxRecordRanks || cols > results.MaxRecordRanks {
		// No side is longer than the ranks, and so rows x cols stays far
		// from wrapping around an int.
		return Grid{}, fmt.Errorf("grid %q: each side is at most %d, the most ranks a run has", s, results.MaxRecordRanks)
	}
	return Grid{rows, cols}, nil
}

// SquareGrid returns the q x q grid of p = q^2 ranks, or false.
func SquareGrid(p int) (Grid, bool) {
	q := int(math.Round(math.Sqrt(float64(p))))
	return Grid{q, q}, q*q == p
}

// NearSquareGrid is the most nearly square rows x cols = p with rows <=
// cols (as MPI_Dims_create for two dimensions).
func NearSquareGrid(p int) Grid {
	d := patterns.Dims2(p)
	return Grid{d[0], d[1]}
}

func (g Grid) size() int                  { return g.Rows * g.Cols }
func (g Grid) coords(rank int) (int, int) { return rank / g.Cols, rank % g.Cols }

// row returns the ranks of grid row r, column order.
func (g Grid) row(r int) []int {
	out := make([]int, g.Cols)
	for c := range out {
		out[c] = r*g.Cols + c
	}
	return out
}

// col returns the ranks of grid column c, row order.
func (g Grid) col(c int) []int {
	out := make([]int, g.Rows)
	for r := range out {
		out[r] = r*g.Cols + c
	}
	return out
}

// gemm adds a (m x k, row-major) times b (k x n) to c (m x n).
func gemm(m, n, k int, a, b, c []float64) {
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas64.General{Rows: k, Cols: n, Stride: n, Data: b},
		1, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
}

// checkProduct compares c (the rows x cols block of A B at (i0, j0)) with
// a serial triple loop over the generated entries of A and B (an oracle
// independent of the BLAS kernel and of any communication), within a
// relative tolerance of tol times the sum of |a_ik b_kj|.
func checkProduct(c []float64, seed int64, n, i0, j0, rows, cols int, tol float64) error {
	arow := make([]float64, n)
	bcol := make([][]float64, cols)
	for j := range bcol {
		bcol[j] = make([]float64, n)
		for k := 0; k < n; k++ {
			bcol[j][k] = entry(seed, 'B', k, j0+j)
		}
	}
	for i := 0; i < rows; i++ {
		for k := 0; k < n; k++ {
			arow[k] = entry(seed, 'A', i0+i, k)
		}
		for j := 0; j < cols; j++ {
			var s, abs float64
			for k, a := range arow {
				s += a * bcol[j][k]
				abs += math.Abs(a * bcol[j][k])
			}
			if d := math.Abs(c[i*cols+j] - s); d > tol*abs {
				return fmt.Errorf("C[%d][%d] = %.17g, serial product %.17g (difference %.3g > %.3g)", i0+i, j0+j, c[i*cols+j], s, d, tol*abs)
			}
		}
	}
	return nil
}
