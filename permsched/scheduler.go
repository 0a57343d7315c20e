package permsched

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// Scheduler decomposes a communication matrix into a Schedule.
//
// Schedule must be deterministic for a given (matrix, seed) and must not
// modify m. It returns an error only for resource limits; every valid Matrix
// can be scheduled.
type Scheduler interface {
	Name() string
	Schedule(m *Matrix, seed uint64) (*Schedule, error)
}

// Schedulers returns the five schedulers in the order the paper presents
// them, EXACT last.
func Schedulers() []Scheduler { return []Scheduler{AC{}, LP{}, GM{}, CGM{}, Exact{}} }

// SchedulerNames lists the names ByName accepts.
func SchedulerNames() []string {
	var out []string
	for _, s := range Schedulers() {
		out = append(out, s.Name())
	}
	return out
}

// ByName returns the scheduler with the given name, case-insensitively.
func ByName(name string) (Scheduler, error) {
	for _, s := range Schedulers() {
		if strings.EqualFold(s.Name(), name) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown scheduler %q (want one of %s)", name, strings.Join(SchedulerNames(), ", "))
}

// AC is asynchronous communication (paper Section 3.1, Fig. 2): every rank
// posts all its receives, sends all its messages, then waits. It needs no
// scheduling (the paper's Table 2 gives it 0 ms); its Schedule is Async and
// only fixes the order in which each rank posts its sends: rank i starts at
// its first destination above i and wraps around, so that ranks do not all
// start on the same receiver (for the increasing rows the generators and
// the reader produce, that is the order i+1, i+2, ... mod n). Round r holds
// every rank's r-th send. Cost O(E).
type AC struct{}

// Name is "AC".
func (AC) Name() string { return "AC" }

// Schedule returns the posting rounds; seed is unused.
func (AC) Schedule(m *Matrix, seed uint64) (*Schedule, error) {
	n := m.n
	rounds := m.MaxOutDegree()
	first := make([]int32, n) // per rank: index in its row of the first send
	for i := 0; i < n; i++ {
		row := m.Row(i)
		for k, j := range row {
			if int(j) > i {
				first[i] = int32(k)
				break
			}
		}
	}
	s := newSchedule("AC", m, rounds)
	s.Async = true
	for r := 0; r < rounds; r++ {
		for i := 0; i < n; i++ {
			if d := m.OutDegree(i); r < d {
				s.add(m.off[i] + (first[i]+int32(r))%int32(d))
			}
		}
		s.endPhase()
	}
	return s, nil
}

// LP is linear permutation (paper Section 3.2, Fig. 3): in step k rank i
// exchanges with i XOR k, sending if it has a message for that rank. Steps
// run k = 1 .. P-1 with P the smallest power of two >= n; partners >= n are
// skipped, which is the extension to n not a power of two the paper
// mentions. Every step is a pairwise exchange, hence a partial permutation.
// Extensions beyond Fig. 3: a self-send i -> i (a local copy) goes in the
// first step where rank i neither sends nor receives, and only when there
// is none in a step k = 0 placed first; a multigraph repeats all steps once
// per extra copy of the most repeated (i, j) pair. Empty steps are kept: the
// paper counts n-1 permutations for LP whatever d is (Table 2).
type LP struct{}

// Name is "LP".
func (LP) Name() string { return "LP" }

// Schedule buckets every message into its step; seed is unused. Cost
// O(E + n + P), plus O(P) per rank that sends to itself.
func (LP) Schedule(m *Matrix, seed uint64) (*Schedule, error) {
	n := m.n
	p := 1
	for p < n {
		p <<= 1
	}
	// slot[id] = round*p + step. A copy's round is the number of earlier
	// messages of its row with the same destination.
	seen := make([]int32, n)
	rounds := 1
	slot := make([]int32, m.Len())
	hasSelf := false
	for i := 0; i < n; i++ {
		row := m.Row(i)
		for k, j := range row {
			c := seen[j]
			seen[j]++
			rounds = max(rounds, int(c)+1)
			slot[int(m.off[i])+k] = c*int32(p) + (int32(i) ^ j)
			hasSelf = hasSelf || int(j) == i
		}
		for _, j := range row {
			seen[j] = 0
		}
	}
	if hasSelf {
		placeSelfSends(m, p, slot)
	}
	// Counting sort by slot, then emit slots in order, dropping self steps
	// (k = 0) that carry nothing.
	cnt := make([]int32, rounds*p+1)
	for _, sl := range slot {
		cnt[sl+1]++
	}
	for i := 1; i < len(cnt); i++ {
		cnt[i] += cnt[i-1]
	}
	sorted := make([]int32, m.Len())
	pos := slices.Clone(cnt[:len(cnt)-1])
	for id, sl := range slot {
		sorted[pos[sl]] = int32(id)
		pos[sl]++
	}
	s := newSchedule("LP", m, rounds*p)
	for r := 0; r < rounds; r++ {
		for k := 0; k < p; k++ {
			sl := r*p + k
			if k == 0 && cnt[sl+1] == cnt[sl] {
				continue
			}
			s.ids = append(s.ids, sorted[cnt[sl]:cnt[sl+1]]...)
			s.endPhase()
		}
	}
	return s, nil
}

// placeSelfSends moves each self-send (now in step 0 of its round) to a step
// of the same round where its rank is idle, if there is one.
func placeSelfSends(m *Matrix, p int, slot []int32) {
	n := m.n
	// busy[k] == stamp: the rank sends or receives in step k of the round
	// being placed.
	busy := make([]int32, p)
	stamp := int32(0)
	// Incoming messages by receiver, to see each rank's receive steps.
	inOff := make([]int32, n+1)
	for _, j := range m.dst {
		inOff[j+1]++
	}
	for j := 0; j < n; j++ {
		inOff[j+1] += inOff[j]
	}
	in := make([]int32, m.Len())
	fill := slices.Clone(inOff[:n])
	for id, j := range m.dst {
		in[fill[j]] = int32(id)
		fill[j]++
	}
	for i := 0; i < n; i++ {
		for id := m.off[i]; id < m.off[i+1]; id++ {
			if int(m.dst[id]) != i {
				continue
			}
			round := slot[id] / int32(p)
			stamp++
			mark := func(sl int32) {
				if sl/int32(p) == round {
					busy[sl%int32(p)] = stamp
				}
			}
			for o := m.off[i]; o < m.off[i+1]; o++ {
				mark(slot[o])
			}
			for _, o := range in[inOff[i]:inOff[i+1]] {
				mark(slot[o])
			}
			for k := 1; k < p; k++ {
				if i^k < n && busy[k] != stamp {
					slot[id] = round*int32(p) + int32(k)
					break
				}
			}
		}
	}
}

// GM is global masking (paper Section 3.3, Fig. 4). Each iteration clears
// the receive mask, picks a random start row x, and visits the n rows from
// x cyclically; along row x it scans COM for the first column y with
// COM(x, y) > 0 whose receiver is still free, and takes it. It repeats until
// all messages are sent. A row scan is O(n), an iteration O(n^2): this is
// the scheduling cost the paper's CGM removes. Each iteration is a maximal
// matching, so there are at most 2D-1 of them.
//
// Fig. 4 does not say where the scan along a row starts. Scanning every row
// from column 0 makes all rows compete for the low columns, and on the
// Fig. 7 matrices at n = 32 it needs 6.0, 11.2, 21.8 and 30.6 permutations
// for d = 4, 8, 16, 24, against the paper's 5.64, 10.26, 18.58 and 26.56
// (Tables 2 and 3). Starting row x's scan at column x (cyclically) removes
// the common bias and gives 5.8, 10.3, 18.9 and 26.8, so that is the
// default; FromColumnZero selects the other reading.
type GM struct {
	// FromColumnZero scans every row from column 0 instead of from its
	// own index.
	FromColumnZero bool
}

// Name is "GM".
func (GM) Name() string { return "GM" }

// Schedule runs Fig. 4 on a dense n x n array; seed drives the start rows.
func (g GM) Schedule(m *Matrix, seed uint64) (*Schedule, error) {
	n := m.n
	// byDst lists each row's ids sorted by destination (stable), so copies
	// of one (x, y) pair are adjacent; next[x*n+y] is the position in byDst
	// of the next unsent copy, or -1: COM(x, y) > 0 iff next >= 0.
	byDst := make([]int32, m.Len())
	next := make([]int32, n*n)
	for i := range next {
		next[i] = -1
	}
	for x := 0; x < n; x++ {
		row := byDst[m.off[x]:m.off[x+1]]
		for k := range row {
			row[k] = m.off[x] + int32(k)
		}
		slices.SortStableFunc(row, func(a, b int32) int { return int(m.dst[a]) - int(m.dst[b]) })
		for k := len(row) - 1; k >= 0; k-- {
			next[x*n+int(m.dst[row[k]])] = m.off[x] + int32(k)
		}
	}
	recvl := make([]bool, n)
	r := newRand(seed, streamSched)
	s := newSchedule("GM", m, m.MaxDegree()+4)
	// take scans cells[from:to) of row x and takes the first free entry.
	take := func(x, from, to int) bool {
		cells := next[x*n : x*n+n]
		for y := from; y < to; y++ {
			p := cells[y]
			if p < 0 || recvl[y] {
				continue
			}
			s.add(byDst[p])
			recvl[y] = true
			if p+1 < m.off[x+1] && int(m.dst[byDst[p+1]]) == y {
				cells[y] = p + 1
			} else {
				cells[y] = -1
			}
			return true
		}
		return false
	}
	for left := m.Len(); left > 0; {
		clear(recvl)
		x := r.IntN(n)
		for k := 0; k < n; k++ {
			start := x
			if g.FromColumnZero {
				start = 0
			}
			if take(x, start, n) || take(x, 0, start) {
				left--
			}
			if x++; x == n {
				x = 0
			}
		}
		s.endPhase()
	}
	return s, nil
}

// CGM is compact global masking (paper Section 4, Figs. 5 and 6).
//
// Fig. 5 compresses COM into the n x d array CCOM: row i holds rank i's
// destinations, randomly permuted (Random_Swap) so that rows do not all try
// the same columns first. Fig. 6 then repeats: clear the receive mask, pick
// a random start row x, and for each of the n rows from x cyclically take
// the first entry CCOM(x, z) = y whose receiver y is free; move the row's
// last active entry CCOM(x, prt(x)) into the hole and shorten the row, so
// later scans never visit used entries.
//
// The paper's analysis (eq. 1) gives n ln d + n expected tries per
// iteration and (eq. 4) about d + log2 d iterations, so O(d n ln d) time for
// a d-regular COM; Table 4 reports 6.1, 20.0 and 70.3 permutations at
// n = 512 for d = 4, 16, 64. Each iteration is a maximal matching, so the
// count never exceeds 2D-1.
type CGM struct {
	// Compacted says the matrix rows are already randomly permuted, as
	// ScheduleParallel leaves them after each rank ran Fig. 5 on its own row;
	// Schedule then skips Random_Swap.
	Compacted bool
}

// Name is "CGM".
func (CGM) Name() string { return "CGM" }

// CompactRow applies Fig. 5's Random_Swap to row i's entries: a uniform
// shuffle driven by the stream (seed, row i), so that a rank compacting its
// own row at runtime produces exactly what the sequential scheduler does.
// swap exchanges entries a and b.
func CompactRow(i, length int, seed uint64, swap func(a, b int)) {
	var pcg rand.PCG
	pcg.Seed(seed, streamRow+uint64(i))
	shuffle(&pcg, length, swap)
}

// shuffle is Fisher-Yates with Lemire's bounded draw on a concrete PCG, so
// compacting 64 Ki entries costs microseconds, not an interface call each.
func shuffle(p *rand.PCG, length int, swap func(a, b int)) {
	for k := length - 1; k > 0; k-- {
		swap(k, int(boundedDraw(p, uint64(k+1))))
	}
}

// boundedDraw returns a uniform value in [0, bound) (Lemire 2019, with the
// rejection step that removes bias).
func boundedDraw(p *rand.PCG, bound uint64) uint64 {
	hi, lo := bits.Mul64(p.Uint64(), bound)
	if lo < bound {
		thresh := -bound % bound
		for lo < thresh {
			hi, lo = bits.Mul64(p.Uint64(), bound)
		}
	}
	return hi
}

// Schedule runs Figs. 5 and 6; seed drives Random_Swap and the start rows.
func (c CGM) Schedule(m *Matrix, seed uint64) (*Schedule, error) {
	n := m.n
	w := m.MaxOutDegree()
	// CCOM as two parallel n x w arrays: destinations (scanned) and message
	// ids (read only when an entry is taken). cnt[x] = prt(x)+1.
	cdst := make([]int32, n*w)
	cid := make([]int32, n*w)
	cnt := make([]int32, n)
	var pcg rand.PCG
	for x := 0; x < n; x++ {
		d := cdst[x*w : x*w+m.OutDegree(x)]
		ids := cid[x*w : x*w+len(d)]
		copy(d, m.Row(x))
		for k := range ids {
			ids[k] = m.off[x] + int32(k)
		}
		cnt[x] = int32(len(d))
		if !c.Compacted {
			pcg.Seed(seed, streamRow+uint64(x))
			shuffle(&pcg, len(d), func(a, b int) {
				d[a], d[b] = d[b], d[a]
				ids[a], ids[b] = ids[b], ids[a]
			})
		}
	}
	recvl := make([]bool, n)
	r := newRand(seed, streamSched)
	s := newSchedule("CGM", m, w+bitsLen(w)+4)
	for left := m.Len(); left > 0; {
		clear(recvl)
		x := r.IntN(n)
		for k := 0; k < n; k++ {
			base := x * w
			last := int(cnt[x]) - 1
			row := cdst[base : base+last+1]
			for z, y := range row {
				if recvl[y] {
					continue
				}
				recvl[y] = true
				s.add(cid[base+z])
				// Fig. 6 step 2(c)ii: move the last active entry into
				// the hole, so active entries stay contiguous.
				row[z], cid[base+z] = row[last], cid[base+last]
				cnt[x]--
				left--
				break
			}
			if x++; x == n {
				x = 0
			}
		}
		s.endPhase()
	}
	return s, nil
}

func bitsLen(x int) int {
	b := 0
	for ; x > 0; x >>= 1 {
		b++
	}
	return b
}
