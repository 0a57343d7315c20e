package patterns

import (
	"math/bits"

	"github.com/commcost/commcost/mpi"
)

// The algorithms behind the 1-D and 2-D mesh columns of paper 003's table
// "Timings for Various Aggregate Communication Operations" (Grama, Kumar,
// Ranka, Singh, slides; the algorithms are those of Kumar, Grama, Gupta,
// Karypis, "Introduction to Parallel Computing", chapter "Basic
// Communication Operations"), with the ranks mapped onto a virtual mesh:
// ImplMesh1D puts them on a ring 0, 1, ..., p-1 (a 1-D mesh with
// wrap-around), ImplMesh2D row-major on the most nearly square rows x cols
// = Dims2(p) mesh with wrap-around, rows <= cols. Every message goes to a
// neighbour on the virtual mesh, except the broadcast's, which halve their
// distance as on the mesh with cut-through routing (the table's t_h terms).
//
//	op         mesh1d (ring)                                   table, 1-D mesh
//	bcast      binomial tree, distances p/2, p/4, ..., 1       (t_s + t_w m) log p + t_h (p-1)
//	allgather  ring: p-1 steps of m                            (t_s + t_w m)(p-1)
//	scatter    pipeline from the root, farthest block first:   (t_s + t_w m)(p-1)
//	           p-1 steps of m on every busy link
//	alltoall   ring: step k passes p-k blocks of m on          (t_s + t_w m p/2)(p-1)
//	qshift     min(q, p-q) neighbour shifts in the shorter     (t_s + t_w m) floor(p/2) at
//	           direction                                       q = floor(p/2)
//
//	op         mesh2d (rows x cols, r = rows, c = cols)        table, 2-D mesh (sqrt p x sqrt p)
//	bcast      binomial along the root's row, then along       (t_s + t_w m) log p + 2 t_h (sqrt p - 1)
//	           every column
//	allgather  ring along the rows (c-1 steps of m), then      2 t_s (sqrt p - 1) + t_w m (p-1)
//	           along the columns (r-1 steps of c m)
//	scatter    pipeline down the root's column (r-1 steps of   2 t_s (sqrt p - 1) + t_w m (p-1)
//	           c m), then along every row (c-1 steps of m)
//	alltoall   ring all-to-all along the rows with blocks of   (2 t_s + t_w m p)(sqrt p - 1)
//	           r m (one per destination column), then along
//	           the columns with blocks of c m
//	qshift     (q mod c)-shift along the rows, a shift by one  (t_s + t_w m)(2 floor(sqrt p/2) + 1)
//	           down the columns that wrapped, then a           at its worst q
//	           floor(q/c)-shift down the columns, each in the
//	           shorter direction
//
// The NEWS shift is a mesh operation already: ImplMesh2D runs the
// textbook's four shifts on the Grid torus, ImplMesh1D on the ring 1 x p
// (its north and south neighbour is the rank itself).

// ring is a ring of ranks: the members in ring order and this rank's index
// among them.
type ring struct {
	members []int
	me      int
}

func (g ring) n() int { return len(g.members) }

// at is the rank of member i (mod n).
func (g ring) at(i int) int {
	n := g.n()
	return g.members[((i%n)+n)%n]
}

// rel is i - j mod n.
func (g ring) rel(i, j int) int { return ((i-j)%g.n() + g.n()) % g.n() }

// allRanks is the ring 0, 1, ..., p-1.
func (r *aggRun) allRanks() ring {
	m := make([]int, r.p)
	for i := range m {
		m[i] = i
	}
	return ring{members: m, me: r.me}
}

// meshShape is ImplMesh2D's rows x cols.
func meshShape(p int) (rows, cols int) {
	g := Dims2(p)
	return g[0], g[1]
}

// meshRow is the ring of row row (members row*cols + c); meshCol the
// ring of column col.
func (r *aggRun) meshRow(row int) ring {
	_, cols := meshShape(r.p)
	g := ring{members: make([]int, cols), me: r.me % cols}
	for c := range cols {
		g.members[c] = row*cols + c
	}
	return g
}

func (r *aggRun) meshCol(col int) ring {
	rows, cols := meshShape(r.p)
	g := ring{members: make([]int, rows), me: r.me / cols}
	for i := range rows {
		g.members[i] = i*cols + col
	}
	return g
}

// shiftSteps is the number of neighbour steps of a k-shift on a ring of n:
// min(k, n-k), the shorter direction.
func shiftSteps(k, n int) int {
	k = ((k % n) + n) % n
	return min(k, n-k)
}

// meshRounds is the number of communication rounds of the mesh algorithm.
func (a AggregateOp) meshRounds(p int) int {
	rows, cols := p, 1 // the ring, as a column
	if a.Impl == ImplMesh2D {
		rows, cols = meshShape(p)
	}
	lg := func(n int) int { return bits.Len(uint(n - 1)) }
	switch a.Op {
	case AggBcast:
		return lg(cols) + lg(rows)
	case AggAllgather, AggScatter, AggAlltoall:
		return cols - 1 + rows - 1
	case AggQShift:
		if a.Impl == ImplMesh1D {
			return shiftSteps(a.Q, p)
		}
		qc, qr := a.Q%cols, a.Q/cols
		n := shiftSteps(qc, cols) + shiftSteps(qr, rows)
		if qc > 0 && rows > 1 {
			n++ // the columns that wrapped move down one more row
		}
		return n
	}
	return 4
}

// meshWork is the size of the work buffer (tmp) of the mesh algorithm.
func (a AggregateOp) meshWork(p int) int {
	m := a.Bytes
	switch a.Op {
	case AggScatter:
		return 2 * p * m
	case AggAlltoall:
		if a.Impl == ImplMesh2D {
			return 4 * p * m
		}
		return 2 * p * m
	case AggQShift:
		return 2 * m
	}
	return 0
}

// meshProgram builds the mesh algorithm of the operation (not NEWS).
func (r *aggRun) meshProgram() {
	p, m := r.p, r.m
	if r.a.Impl == ImplMesh1D {
		all := r.allRanks()
		switch r.a.Op {
		case AggBcast:
			r.binomialOn(all, r.a.Root, span(aggSend, 0, m))
		case AggAllgather:
			r.copyTo(span(aggRecv, r.me*m, m), span(aggSend, 0, m))
			r.ringAllgather(all, func(i int) mpi.Span { return span(aggRecv, i*m, m) })
		case AggScatter:
			r.ringScatter(all, r.a.Root, m, func(d int) mpi.Span { return span(aggSend, d*m, m) }, span(aggTmp, 0, p*m), span(aggRecv, 0, m))
		case AggAlltoall:
			r.ringAlltoall(all, m, func(d int) mpi.Span { return span(aggSend, d*m, m) }, func(s int) mpi.Span { return span(aggRecv, s*m, m) },
				span(aggTmp, 0, p*m), span(aggTmp, p*m, p*m))
		case AggQShift:
			a, b := span(aggTmp, 0, m), span(aggTmp, m, m)
			r.copyTo(a, span(aggSend, 0, m))
			r.copyTo(span(aggRecv, 0, m), r.ringShift(all, r.a.Q, a, b))
		}
		return
	}
	rows, cols := meshShape(p)
	row, col := r.me/cols, r.me%cols
	switch r.a.Op {
	case AggBcast:
		buf := span(aggSend, 0, m)
		r0, c0 := r.a.Root/cols, r.a.Root%cols
		if row == r0 {
			r.binomialOn(r.meshRow(r0), c0, buf)
		}
		r.binomialOn(r.meshCol(col), r0, buf)
	case AggAllgather:
		r.copyTo(span(aggRecv, r.me*m, m), span(aggSend, 0, m))
		r.ringAllgather(r.meshRow(row), func(c int) mpi.Span { return span(aggRecv, (row*cols+c)*m, m) })
		r.ringAllgather(r.meshCol(col), func(i int) mpi.Span { return span(aggRecv, i*cols*m, cols*m) })
	case AggScatter:
		// Down the root's column by rows of cols blocks, then along the rows.
		r0, c0 := r.a.Root/cols, r.a.Root%cols
		rowBlock := span(aggTmp, p*m, cols*m)
		if col == c0 {
			r.ringScatter(r.meshCol(c0), r0, cols*m, func(d int) mpi.Span { return span(aggSend, d*cols*m, cols*m) }, span(aggTmp, 0, p*m), rowBlock)
		}
		r.ringScatter(r.meshRow(row), c0, m, func(d int) mpi.Span { return span(aggTmp, p*m+d*m, m) }, span(aggTmp, 0, cols*m), span(aggRecv, 0, m))
	case AggAlltoall:
		// Along the rows: the blocks grouped by destination column (rows
		// blocks each, in destination row order), into [source column]
		// [destination row]; along the columns: those regrouped by
		// destination row (cols blocks each, in source column order),
		// into recv by source rank.
		first, second := span(aggTmp, 0, p*m), span(aggTmp, p*m, p*m)
		w0, w1 := span(aggTmp, 2*p*m, p*m), span(aggTmp, 3*p*m, p*m)
		for c := range cols {
			for i := range rows {
				r.copyTo(span(aggTmp, (c*rows+i)*m, m), span(aggSend, (i*cols+c)*m, m))
			}
		}
		r.ringAlltoall(r.meshRow(row), rows*m, func(d int) mpi.Span { return span(aggTmp, first.Off+d*rows*m, rows*m) },
			func(s int) mpi.Span { return span(aggTmp, second.Off+s*rows*m, rows*m) }, w0, w1)
		for i := range rows {
			for c := range cols {
				r.copyTo(span(aggTmp, first.Off+(i*cols+c)*m, m), span(aggTmp, second.Off+(c*rows+i)*m, m))
			}
		}
		r.ringAlltoall(r.meshCol(col), cols*m, func(d int) mpi.Span { return span(aggTmp, first.Off+d*cols*m, cols*m) },
			func(s int) mpi.Span { return span(aggRecv, s*cols*m, cols*m) }, w0, w1)
	case AggQShift:
		a, b := span(aggTmp, 0, m), span(aggTmp, m, m)
		r.copyTo(a, span(aggSend, 0, m))
		qc, qr := r.a.Q%cols, r.a.Q/cols
		cur := r.ringShift(r.meshRow(row), qc, a, b)
		if rows > 1 {
			if qc > 0 && col < qc {
				// The data that wrapped around its row belongs one row
				// further down.
				next := a
				if cur == a {
					next = b
				}
				cg := r.meshCol(col)
				r.sendrecv(cur, cg.at(cg.me+1), next, cg.at(cg.me-1), aggTag)
				cur = next
			}
			other := a
			if cur == a {
				other = b
			}
			cur = r.ringShift(r.meshCol(col), qr, cur, other)
		}
		r.copyTo(span(aggRecv, 0, m), cur)
	}
}

// binomialOn is the binomial-tree broadcast of buf from member root of g:
// relative member v receives from v - 2^j (its lowest set bit) and sends
// to v + 2^i for the smaller powers, ceil(lg n) rounds.
func (r *aggRun) binomialOn(g ring, root int, buf mpi.Span) {
	n := g.n()
	rel := g.rel(g.me, root)
	mask := 1
	for mask < n {
		if rel&mask != 0 {
			r.recvFrom(buf, g.at(g.me-mask))
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < n {
			r.sendTo(buf, g.at(g.me+mask))
		}
	}
}

// ringAllgather: in step s = 0 .. n-2 every member passes block me - s to
// its right neighbour and receives block me - s - 1 from its left one.
func (r *aggRun) ringAllgather(g ring, block func(i int) mpi.Span) {
	n := g.n()
	for s := 0; s < n-1; s++ {
		r.sendrecv(block(g.rel(g.me, s)), g.at(g.me+1), block(g.rel(g.me, s+1)), g.at(g.me-1), aggTag)
	}
}

// ringScatter is the pipelined one-to-all personalized communication on a
// ring: in step t = 1 .. n-1 the root sends the block of relative member
// n - t (the farthest first) to its right neighbour, and every member j
// that holds a block for a member further on passes it on (block n-t+j),
// while receiving the next one (n-t+j-1) from its left; after n-1 steps
// every member holds its own. src(d) is the root's block for member d,
// work holds n blocks of bs by relative member, mine receives the
// member's block.
func (r *aggRun) ringScatter(g ring, root, bs int, src func(d int) mpi.Span, work, mine mpi.Span) {
	n := g.n()
	j := g.rel(g.me, root)
	slot := func(d int) mpi.Span { return span(work.Buf, work.Off+d*bs, bs) }
	for t := 1; t < n; t++ {
		var out, in mpi.Span
		send, recv := false, false
		if j == 0 {
			out, send = src((n-t+root)%n), true
		} else if t >= j+1 && j < n-1 {
			out, send = slot(n-t+j), true
		}
		if j >= 1 && t >= j {
			in, recv = slot(n-t+j-1), true
		}
		switch {
		case send && recv:
			r.sendrecv(out, g.at(g.me+1), in, g.at(g.me-1), aggTag)
		case send:
			r.sendTo(out, g.at(g.me+1))
		case recv:
			r.recvFrom(in, g.at(g.me-1))
		}
	}
	if j == 0 {
		r.copyTo(mine, src(g.me))
	} else {
		r.copyTo(mine, slot(j))
	}
}

// ringAlltoall is the all-to-all personalized communication on a ring: in
// step k = 1 .. n-1 every member passes to its right neighbour the n-k
// blocks it holds for the members after it (its own at first), keeps the
// first block it receives (from member me - k) and passes the rest on.
// src(d) is this member's block for member d, dst(s) where the block from
// member s goes; w0 and w1 hold n-1 blocks of bs each, alternately.
func (r *aggRun) ringAlltoall(g ring, bs int, src, dst func(int) mpi.Span, w0, w1 mpi.Span) {
	n := g.n()
	me := g.me
	r.copyTo(dst(me), src(me))
	for d := 1; d < n; d++ {
		r.copyTo(span(w0.Buf, w0.Off+(d-1)*bs, bs), src((me+d)%n))
	}
	work := [2]mpi.Span{w0, w1}
	cur, ci := span(w0.Buf, w0.Off, (n-1)*bs), 0
	for k := 1; k < n; k++ {
		nx := work[1-ci]
		in := span(nx.Buf, nx.Off, (n-k)*bs)
		r.sendrecv(cur, g.at(me+1), in, g.at(me-1), aggTag)
		r.copyTo(dst(g.rel(me, k)), span(in.Buf, in.Off, bs))
		cur, ci = span(in.Buf, in.Off+bs, (n-k-1)*bs), 1-ci
	}
}

// ringShift moves every member's data k places on along the ring (member
// i's to member i+k) in min(k, n-k) neighbour steps in the shorter
// direction, between the spans a (holding the data) and b; it returns the
// span that holds the result.
func (r *aggRun) ringShift(g ring, k int, a, b mpi.Span) mpi.Span {
	n := g.n()
	k = ((k % n) + n) % n
	dir, steps := 1, k
	if n-k < k {
		dir, steps = -1, n-k
	}
	cur, other := a, b
	for range steps {
		r.sendrecv(cur, g.at(g.me+dir), other, g.at(g.me-dir), aggTag)
		cur, other = other, cur
	}
	return cur
}
