package apps

import (
	"fmt"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BitonicSort is the bitonic sort of paper 000, section 6.3 (Batcher's
// network as Culler et al. run it on processors: the blocks are sorted
// locally, then log p merge stages in which partner processors exchange
// their keys, keep the lower or the upper half and sort locally again, by
// radix sort). Module i holds the array A_i of the n keys of processor i.
// Program of processor i (p a power of two):
//
//	read the keys of the global array A_i; sort them locally
//	for j := 1 to log p do
//	    for s := j-1 downto 0 do
//	        synchronize; write the keys into A_i; synchronize
//	        read the keys y of the partner's array A_(i XOR 2^s)
//	        if bit(s, i) XOR bit(j, i) = 1 then x := swapmax(x, y)
//	        else x := swapmin(x, y)
//	        sort x locally
//	synchronize; write the keys into A_i
//
// Every block is kept ascending, so swapmin pairs x_t with y_(n-1-t): the
// two sorted blocks then form a bitonic sequence whose elementwise minima
// are exactly the n smallest keys of both (the paper sorts the partners in
// opposite directions instead; the communication is the same). Every access
// involves all processors (r = 1):
//
//	T_bitonic(k, l) = (2 + log^2 p + log p) ceil(n/(k l)) T_kk(k, l, r)
//
// with the array's 4n bytes, over the accesses that cross the network
// (crossingBitonic: on the direct store with p = 2 the partner's array is
// on the reading rank, and the paper's count would price 4/3 of the time).
// The result is checked for sortedness within
// and across the blocks and against the input's multiset checksum. Phases:
// "bitonic" (communication), "compute" (the local sorts and exchanges),
// "sync".
type BitonicSort struct {
	N int // keys per processor
	Access
}

// PhaseBitonic is the communication phase of BitonicSort.
const PhaseBitonic = "bitonic"

func (b BitonicSort) Name() string { return "bitonic" }

func (b BitonicSort) Params() results.Params {
	return results.Params{"n": b.N, "k": b.K, "l": b.L}
}

func (b BitonicSort) Check(p int) error {
	if b.N < 1 {
		return fmt.Errorf("--n %d: the keys per rank must be an integer >= 1", b.N)
	}
	if !isPow2(p) {
		return &RanksError{What: "bitonic sort", Want: powerOfTwoRanks, Ranks: p}
	}
	keys := func(n int) int { return n * IntBytes }
	if err := checkVolume(b.N, 1, keys, "array of n keys", ""); err != nil {
		return err
	}
	return b.Access.check(b.N*IntBytes, "array of n keys")
}

type sortState struct {
	a        []globalvar.Var
	input    []uint32
	inSum    uint64 // multiset checksum of every rank's input
	inCount  uint64
	bucket   []globalvar.Var // sample sort: B_i
	lengths  []globalvar.Var // sample sort: the list lengths of processor i
	sampleIx []int           // sample sort: the positions of the sample
	// bitonic sort: its accesses of a whole array that cross the network,
	// summed over the steps of the most of any rank in each (the
	// workload; crossingBitonic).
	reads, writes int
}

// restore puts processor i's input into A_i (untimed) and waits for every
// rank's: the program starts from the same input in every repetition.
func (st *sortState) restore(s globalvar.Store, a Access, i int) error {
	if err := a.write(s, st.a[i], 0, u32Bytes(st.input)); err != nil {
		return err
	}
	return s.Barrier()
}

// sortInput is processor i's n input keys for a seed.
func sortInput(seed int64, i, n int) []uint32 {
	rng := newRand(seed, 0x5047+uint64(i))
	keys := make([]uint32, n)
	for x := range keys {
		keys[x] = rng.Uint32()
	}
	return keys
}

// setupSort creates the arrays A_i of size keys and the input, and sums the
// input's checksum over the ranks.
func setupSort(env Env, app App, n, size int) (*sortState, error) {
	s, c := env.Store, env.Comm
	p, i := c.Size(), c.Rank()
	st := &sortState{input: sortInput(env.Seed, i, n)}
	var err error
	if st.a, err = blocks(s, varName(app, "A"), size*IntBytes, p); err != nil {
		return nil, err
	}
	st.inCount, st.inSum, err = sumChecksum(c, st.input)
	return st, err
}

// sumChecksum is keyChecksum summed over the ranks (collective).
func sumChecksum(c mpi.Comm, keys []uint32) (n, sum uint64, err error) {
	ln, ls := keyChecksum(keys)
	all := make([]int64, 2*c.Size())
	if err := mpi.AllgatherInt64s(c, []int64{int64(ln), int64(ls)}, all); err != nil {
		return 0, 0, err
	}
	for r := 0; r < c.Size(); r++ {
		n += uint64(all[2*r])
		sum += uint64(all[2*r+1])
	}
	return n, sum, nil
}

// checkSorted verifies, collectively, that the ranks' keys in rank order
// are one ascending sequence with the input's multiset checksum. It is
// called after a store barrier; keys may be empty on some ranks.
func checkSorted(c mpi.Comm, app string, keys []uint32, st *sortState) error {
	return checkSortedIn(c, app, keys, nil, st.inCount, st.inSum)
}

// checkSortedIn is checkSorted with the blocks in the order of order
// (order[k] is the rank holding the k-th block; nil: rank order) against
// an input of inCount keys with checksum inSum (sumChecksum).
func checkSortedIn(c mpi.Comm, app string, keys []uint32, order []int, inCount, inSum uint64) error {
	var verr error
	for x := 1; x < len(keys); x++ {
		if keys[x-1] > keys[x] {
			verr = fmt.Errorf("%w: %s: rank %d keys %d and %d are %d > %d", errVerify, app, c.Rank(), x-1, x, keys[x-1], keys[x])
			break
		}
	}
	// Boundaries: every block's smallest key is at least the largest key
	// of every block before it (-1 marks an empty rank).
	lohi := []int64{-1, -1}
	if len(keys) > 0 {
		lohi = []int64{int64(keys[0]), int64(keys[len(keys)-1])}
	}
	all := make([]int64, 2*c.Size())
	if err := mpi.AllgatherInt64s(c, lohi, all); err != nil {
		return err
	}
	prev := int64(-1)
	for k := 0; k < c.Size() && verr == nil; k++ {
		r := k
		if order != nil {
			r = order[k]
		}
		lo, hi := all[2*r], all[2*r+1]
		if lo < 0 {
			continue
		}
		if lo < prev && r == c.Rank() {
			verr = fmt.Errorf("%w: %s: rank %d (block %d) starts with %d, below the largest key %d of an earlier block", errVerify, app, r, k, lo, prev)
		}
		prev = max(prev, hi)
	}
	n, sum, err := sumChecksum(c, keys)
	if err != nil {
		return err
	}
	if verr == nil && (n != inCount || sum != inSum) {
		verr = fmt.Errorf("%w: %s: the sorted keys are %d with checksum %#x, the input %d with %#x (keys lost, added or changed)", errVerify, app, n, sum, inCount, inSum)
	}
	return AgreeErr(c, verr)
}

// Setup creates the arrays and the input.
func (b BitonicSort) Setup(env Env) (any, error) {
	if err := needStore(env, b.Name()); err != nil {
		return nil, err
	}
	if err := b.Check(env.Comm.Size()); err != nil {
		return nil, err
	}
	st, err := setupSort(env, b, b.N, b.N)
	if err != nil {
		return nil, err
	}
	if err := env.Store.Barrier(); err != nil {
		return nil, err
	}
	return st, st.crossingBitonic(env.Store, env.Comm)
}

// crossingBitonic counts the accesses of Run that cross the network: the
// read of A_i, the read of the partner's array in each step and the
// steps + 1 writes of A_i, each the most of any rank (collective, after a
// store barrier). On the direct store with p = 2 the partner's array is
// on the reading rank (Module), so 1 + steps of the 2 + 2 steps array
// accesses cross; with p = 1 none; from p = 4 on, and on every store that
// does not keep variables on a rank, all of them (paper 000's count).
func (st *sortState) crossingBitonic(s globalvar.Store, c mpi.Comm) error {
	p, i := c.Size(), c.Rank()
	n := []float64{remote(s, st.a[i]), remote(s, st.a[i])} // writes of A_i, read of A_i
	for j := 1; j <= log2(p); j++ {
		for sb := j - 1; sb >= 0; sb-- {
			n = append(n, remote(s, st.a[i^1<<sb]))
		}
	}
	if err := maxOverRanks(c, n); err != nil {
		return err
	}
	steps := len(n) - 2
	st.writes, st.reads = (steps+1)*int(n[0]), totalCount(n[1:])
	return nil
}

// accessBounds is the workload of the sort on p ranks (accessBounder)
// where none and where all of its accesses cross (crossingBitonic): 1 +
// steps reads and steps + 1 writes of n keys.
func (b BitonicSort) accessBounds(p int) (lo, hi map[string][]results.WorkItem) {
	d, steps := b.N*IntBytes, log2(p)*(log2(p)+1)/2
	ws := func(reads, writes int) map[string][]results.WorkItem {
		return map[string][]results.WorkItem{PhaseBitonic: append(b.Access.items(reads, d, 1, opRead, p), b.Access.items(writes, d, 1, opWrite, p)...)}
	}
	return ws(0, 0), ws(1+steps, steps+1)
}

// Run puts the input into A_i (untimed), runs the program and checks the
// result in the store.
func (b BitonicSort) Run(env Env) (Outcome, error) {
	var out Outcome
	st, err := stateOf[*sortState](&env, b)
	if err != nil {
		return out, err
	}
	s, c := env.Store, env.Comm
	p, i := c.Size(), c.Rank()
	if err := st.restore(s, b.Access, i); err != nil {
		return out, err
	}
	pl := &poller{s: s}
	x := make([]uint32, b.N)
	y := make([]uint32, b.N)
	tmp := make([]uint32, b.N)
	comm := func(fn func() error) error { return out.Phases.Time(c, PhaseBitonic, KindComm, fn) }
	sync := func() error { return out.Phases.Time(c, PhaseSync, KindSync, s.Barrier) }
	compute := func(fn func()) error {
		_ = out.Phases.Time(c, PhaseCompute, KindComp, func() error { fn(); return nil })
		return pl.err
	}
	if err := comm(func() error { return b.Access.read(s, st.a[i], 0, u32Bytes(x)) }); err != nil {
		return out, err
	}
	if err := compute(func() { radixSort(x, tmp, pl) }); err != nil {
		return out, err
	}
	bit := func(k, v int) int { return v >> k & 1 }
	for j := 1; j <= log2(p); j++ {
		for sb := j - 1; sb >= 0; sb-- {
			if err := sync(); err != nil {
				return out, err
			}
			if err := comm(func() error { return b.Access.write(s, st.a[i], 0, u32Bytes(x)) }); err != nil {
				return out, err
			}
			if err := sync(); err != nil {
				return out, err
			}
			partner := i ^ 1<<sb
			if err := comm(func() error { return b.Access.read(s, st.a[partner], 0, u32Bytes(y)) }); err != nil {
				return out, err
			}
			high := bit(sb, i)^bit(j, i) == 1
			if err := compute(func() {
				n := len(x)
				for t := range x {
					if high {
						x[t] = max(x[t], y[n-1-t])
					} else {
						x[t] = min(x[t], y[n-1-t])
					}
				}
				radixSort(x, tmp, pl)
			}); err != nil {
				return out, err
			}
		}
	}
	if err := sync(); err != nil {
		return out, err
	}
	if err := comm(func() error { return b.Access.write(s, st.a[i], 0, u32Bytes(x)) }); err != nil {
		return out, err
	}
	// Check what the store holds.
	if err := s.Barrier(); err != nil {
		return out, err
	}
	got := make([]uint32, b.N)
	if err := b.Access.read(s, st.a[i], 0, u32Bytes(got)); err != nil {
		return out, err
	}
	if err := s.Barrier(); err != nil {
		return out, err
	}
	if err := checkSorted(c, b.Name(), got, st); err != nil {
		return out, err
	}
	d := b.N * IntBytes
	// 1 + steps reads, steps + 1 writes: (2 + log^2 p + log p) in all, as
	// steps = log p (log p + 1)/2, of which those that cross the network
	// (crossingBitonic).
	out.Workload = map[string][]results.WorkItem{
		PhaseBitonic: append(b.Access.items(st.reads, d, 1, opRead, p), b.Access.items(st.writes, d, 1, opWrite, p)...),
	}
	return out, nil
}

func init() {
	RegisterProgram(Program{Name: "bitonic", Paper: "000 sec. 6.3", OverStore: true,
		Summary: "bitonic sort (Culler et al.'s variant, local radix sort)",
		New:     func() Config { return new(BitonicSortConfig) },
		Phases:  func(results.Params) []string { return []string{PhaseBitonic, PhaseCompute, PhaseSync} }})
}

// BitonicSortConfig is the configuration of 'commcost app bitonic'.
type BitonicSortConfig struct {
	N opts.Counts `flag:"n" default:"16K" usage:"keys per rank n (p must be a power of two): a list; K = 1024"`
	AccessFlags
}

// Apps are the runs: every n x k x l.
func (c *BitonicSortConfig) Apps() ([]App, error) {
	return c.each(c.N, func(n int, acc Access) []App { return []App{BitonicSort{N: n, Access: acc}} })
}
