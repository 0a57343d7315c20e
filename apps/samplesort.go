package apps

import (
	"fmt"
	"slices"
	"sort"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// SampleSort is the sample sort of paper 000, section 6.4 (Blelloch,
// Leiserson, Maggs et al.): N = n p keys, a sample of s = n/64 keys per
// processor, p splitters, and the distribution split into (6a)-(6c).
// Module i holds A_i (2n keys: "with high probability the data is split
// into pieces no larger than 2n"), B_i (the sample, and on module 0 the
// splitters) and the lengths of processor i's lists. Program of processor
// i:
//
//	splitter phase:
//	  (1) read n keys from A_i; choose s of them at random
//	  (2) write the s samples into B_i
//	      synchronize
//	      if i = 0: (3) read the p samples from B_0 .. B_(p-1);
//	                    sort them and take every s-th as a splitter
//	                (4) write the p splitters into B_0
//	distribution phase:
//	      synchronize
//	      if i != 0: (5) read the p splitters from B_0
//	  (6a) put every key into the list of its bucket; write the p list
//	       lengths into module i
//	      synchronize
//	  (6b) read the list lengths of every processor
//	  (6c) write list L_j into A_j at its place, for every j
//	local sort:
//	      synchronize
//	  (7) read the keys of bucket i from A_i; sort them
//	  (8) write the sorted keys into A_i
//
// with the paper's times (E(s, n) n the largest bucket, measured; sizes in
// bytes here, 4 per integer):
//
//	T(1): ceil(n/(k l)) T_kk(k, l, 1)     T(5):  T_kk(1, p, 1)
//	T(2): T_kk(1, s, 1)                    T(6a): T_kk(1, p, 1)
//	T(3): T_kk(p, s, 1/p)                  T(6b): T_kk(p, p, 1)
//	T(4): T_kk(1, p, 1/p)                  T(6c): ceil(n/(k l)) T_kk(k, l, 1)
//	T(7) = T(8): ceil(E(s, n) n/(k l)) T_kk(k, l, 1)
//
// Phases, grouped as the paper's Table 2: "splitter" (1)-(4),
// "distribution" (5)-(6c), "local-sort" (7)-(8) (communication),
// "compute" (sampling, bucketing, the local radix sorts), "sync".
// Counter "expansion" is the measured E(s, n). The result is checked for
// sortedness within and across the buckets and against the input's
// multiset checksum.
type SampleSort struct {
	N int // keys per processor, a multiple of 64
	Access
}

// Phase names and counters of SampleSort.
const (
	PhaseSplitter     = "splitter"
	PhaseDistribution = "distribution"
	PhaseLocalSort    = "local-sort"
	CounterExpansion  = "expansion"   // E(s, n): the largest bucket over n
	CounterSample     = "sample_keys" // s per processor
)

// sampleDivisor is the paper's sample fraction: s = n/64.
const sampleDivisor = 64

func (ss SampleSort) Name() string { return "samplesort" }

func (ss SampleSort) Params() results.Params {
	return results.Params{"n": ss.N, "k": ss.K, "l": ss.L}
}

func (ss SampleSort) Check(p int) error {
	if ss.N < sampleDivisor || ss.N%sampleDivisor != 0 {
		return fmt.Errorf("--n %d: the keys per rank must be a positive multiple of %d (the sample is s = n/%d)", ss.N, sampleDivisor, sampleDivisor)
	}
	if p < 1 {
		return fmt.Errorf("%d ranks: sample sort needs at least one", p)
	}
	keys := func(n int) int { return 2 * n * IntBytes } // A_i holds 2n keys (Setup)
	if err := checkVolume(ss.N, sampleDivisor, keys, "array A_i of 2n keys", ""); err != nil {
		return err
	}
	return ss.Access.check(ss.N*IntBytes, "array of n keys")
}

func (ss SampleSort) sample() int { return ss.N / sampleDivisor }

// Setup creates A_i (2n keys), B_i and the length arrays, the input, and
// the sample's positions.
func (ss SampleSort) Setup(env Env) (any, error) {
	if err := needStore(env, ss.Name()); err != nil {
		return nil, err
	}
	p, i := env.Comm.Size(), env.Comm.Rank()
	if err := ss.Check(p); err != nil {
		return nil, err
	}
	st, err := setupSort(env, ss, ss.N, 2*ss.N)
	if err != nil {
		return nil, err
	}
	if st.bucket, err = blocks(env.Store, varName(ss, "B"), max(ss.sample(), p)*IntBytes, p); err != nil {
		return nil, err
	}
	if st.lengths, err = blocks(env.Store, varName(ss, "len"), p*IntBytes, p); err != nil {
		return nil, err
	}
	// The sample: s distinct positions at random, the same in every run.
	st.sampleIx = newRand(env.Seed, 0x5a+uint64(i)).Perm(ss.N)[:ss.sample()]
	return st, env.Store.Barrier()
}

// Run puts the input into A_i (untimed), runs the program and checks the
// buckets in the store.
func (ss SampleSort) Run(env Env) (Outcome, error) {
	var out Outcome
	st, err := stateOf[*sortState](&env, ss)
	if err != nil {
		return out, err
	}
	s, c := env.Store, env.Comm
	p, i := c.Size(), c.Rank()
	n, sn := ss.N, ss.sample()
	if err := st.restore(s, ss.Access, i); err != nil {
		return out, err
	}
	pl := &poller{s: s}
	sync := func() error { return out.Phases.Time(c, PhaseSync, KindSync, s.Barrier) }
	phase := func(name string, fn func() error) error { return out.Phases.Time(c, name, KindComm, fn) }
	compute := func(fn func() error) error {
		err := out.Phases.Time(c, PhaseCompute, KindComp, fn)
		if err == nil {
			err = pl.err
		}
		return err
	}
	// One packet of the whole buffer (k = 1, l = its size), as (2), (4),
	// (5) and (6a) are.
	one := func(write bool, v globalvar.Var, buf []byte) error {
		a := Access{K: 1, L: max(len(buf), 1)}
		if write {
			return a.write(s, v, 0, buf)
		}
		return a.read(s, v, 0, buf)
	}
	// cross counts this rank's accesses that cross the network (remote),
	// per access of the paper's list: (1), (2), (3) as its packets, (4),
	// (5), (6a), (6b) as its packets, (6c) as k-k-accesses, (7) = (8).
	var cross [9]float64
	remotes := func(vars []globalvar.Var) (n float64) {
		for _, v := range vars {
			n += remote(s, v)
		}
		return n
	}
	// p packets of one buffer each in flight at once, as (3) and (6b).
	many := func(vars []globalvar.Var, bufs [][]byte) error {
		pk := make([]globalvar.Packet, len(vars))
		for j, v := range vars {
			pk[j] = globalvar.Packet{Var: v, Buf: bufs[j]}
		}
		return globalvar.ReadBatch(s, pk, len(pk))
	}

	// Splitter phase.
	cross[0], cross[1], cross[5], cross[8] = remote(s, st.a[i]), remote(s, st.bucket[i]), remote(s, st.lengths[i]), remote(s, st.a[i])
	cross[6] = remotes(st.lengths)
	keys := make([]uint32, n)
	if err := phase(PhaseSplitter, func() error { return ss.Access.read(s, st.a[i], 0, u32Bytes(keys)) }); err != nil { // (1)
		return out, err
	}
	sample := make([]uint32, sn)
	if err := compute(func() error {
		for x, pos := range st.sampleIx {
			sample[x] = keys[pos]
		}
		return nil
	}); err != nil {
		return out, err
	}
	if err := phase(PhaseSplitter, func() error { return one(true, st.bucket[i], u32Bytes(sample)) }); err != nil { // (2)
		return out, err
	}
	if err := sync(); err != nil {
		return out, err
	}
	splitters := make([]uint32, p)
	if i == 0 {
		cross[2], cross[3] = remotes(st.bucket), remote(s, st.bucket[0])
		all := make([]uint32, p*sn)
		bufs := make([][]byte, p)
		for j := range bufs {
			bufs[j] = u32Bytes(all[j*sn : (j+1)*sn])
		}
		if err := phase(PhaseSplitter, func() error { return many(st.bucket, bufs) }); err != nil { // (3)
			return out, err
		}
		if err := compute(func() error {
			radixSort(all, make([]uint32, len(all)), pl)
			for q := range p {
				splitters[q] = all[(q+1)*sn-1]
			}
			return nil
		}); err != nil {
			return out, err
		}
		if err := phase(PhaseSplitter, func() error { return one(true, st.bucket[0], u32Bytes(splitters)) }); err != nil { // (4)
			return out, err
		}
	}

	// Distribution phase.
	if err := sync(); err != nil {
		return out, err
	}
	if i != 0 {
		cross[4] = remote(s, st.bucket[0])
		if err := phase(PhaseDistribution, func() error { return one(false, st.bucket[0], u32Bytes(splitters)) }); err != nil { // (5)
			return out, err
		}
	}
	lists := make([][]uint32, p)
	lens := make([]uint32, p)
	if err := compute(func() error {
		// Key x goes to bucket j with s_(j-1) < x <= s_j; keys above
		// s_(p-2) go to the last bucket.
		bounds := splitters[:p-1]
		for _, x := range keys {
			j := sort.Search(len(bounds), func(q int) bool { return bounds[q] >= x })
			lists[j] = append(lists[j], x)
		}
		for j, l := range lists {
			lens[j] = uint32(len(l))
		}
		pl.poll()
		return nil
	}); err != nil {
		return out, err
	}
	if err := phase(PhaseDistribution, func() error { return one(true, st.lengths[i], u32Bytes(lens)) }); err != nil { // (6a)
		return out, err
	}
	if err := sync(); err != nil {
		return out, err
	}
	allLens := make([]uint32, p*p) // allLens[q*p+j]: processor q's list for bucket j
	lenBufs := make([][]byte, p)
	for q := range lenBufs {
		lenBufs[q] = u32Bytes(allLens[q*p : (q+1)*p])
	}
	if err := phase(PhaseDistribution, func() error { return many(st.lengths, lenBufs) }); err != nil { // (6b)
		return out, err
	}
	// Bucket j's size, and the place of processor i's list in A_j: after
	// the lists of processors 0..i-1. Every rank computes the same sizes
	// from the same lengths, so an overflow stops every rank alike.
	bucketSize := make([]int, p)
	for j := range p {
		for q := range p {
			bucketSize[j] += int(allLens[q*p+j])
		}
		if bucketSize[j] > 2*n {
			_ = s.Barrier() // nobody is left waiting for this rank's answers
			return out, fmt.Errorf("samplesort: bucket %d holds %d keys, above the 2n = %d that A_%d has room for (expansion factor %.2f > 2)",
				j, bucketSize[j], 2*n, j, float64(bucketSize[j])/float64(n))
		}
	}
	var pk []globalvar.Packet
	crossBytes := 0 // (6c): the lists for arrays not kept on this rank
	for j := range p {
		if remote(s, st.a[j]) == 1 {
			crossBytes += len(lists[j]) * IntBytes
		}
		off := 0
		for q := range i {
			off += int(allLens[q*p+j])
		}
		part, err := globalvar.Split(st.a[j], off*IntBytes, u32Bytes(lists[j]), ss.L)
		if err != nil {
			return out, err
		}
		pk = append(pk, part...)
	}
	if err := phase(PhaseDistribution, func() error { return globalvar.WriteBatch(s, pk, ss.K) }); err != nil { // (6c)
		return out, err
	}

	// Local sort.
	if err := sync(); err != nil {
		return out, err
	}
	mine := make([]uint32, bucketSize[i])
	if err := phase(PhaseLocalSort, func() error { return ss.Access.read(s, st.a[i], 0, u32Bytes(mine)) }); err != nil { // (7)
		return out, err
	}
	if err := compute(func() error { radixSort(mine, make([]uint32, len(mine)), pl); return nil }); err != nil {
		return out, err
	}
	if err := phase(PhaseLocalSort, func() error { return ss.Access.write(s, st.a[i], 0, u32Bytes(mine)) }); err != nil { // (8)
		return out, err
	}

	// Check what the store holds.
	if err := s.Barrier(); err != nil {
		return out, err
	}
	got := make([]uint32, bucketSize[i])
	if err := ss.Access.read(s, st.a[i], 0, u32Bytes(got)); err != nil {
		return out, err
	}
	if err := s.Barrier(); err != nil {
		return out, err
	}
	if err := checkSorted(c, ss.Name(), got, st); err != nil {
		return out, err
	}
	// (6c): the paper's ceil(n/(k l)) where every list crosses the network
	// (processors and modules distinct nodes, as in the paper), else the
	// k-k-accesses of the lists that do.
	cross[7] = float64(ss.Access.groups(n * IntBytes))
	if crossBytes < n*IntBytes {
		cross[7] = float64(ss.Access.groups(crossBytes))
	}
	if err := maxOverRanks(c, cross[:]); err != nil {
		return out, err
	}
	x := func(j int) int { return int(cross[j]) }
	largest := slices.Max(bucketSize)
	w, l, k := IntBytes*p, IntBytes*sn, ss.K
	// The paper's T(1)..T(8) over the accesses that cross the network
	// (cross): (3) and (6b) send one packet fewer where a rank keeps its
	// own B_i or lengths (the direct store: B_(p-1) on rank 0, lengths
	// p-1-i on rank i), a count of 0 where none crosses.
	some := func(j int) int { return min(x(j), 1) }
	out.Workload = map[string][]results.WorkItem{
		PhaseSplitter: append(ss.Access.items(x(0), n*IntBytes, 1, opRead, p), // (1)
			kkItem(x(1), 1, l, 1, opWrite, p),                         // (2)
			kkItem(some(2), max(x(2), 1), l, 1/float64(p), opRead, p), // (3)
			kkItem(x(3), 1, w, 1/float64(p), opWrite, p),              // (4)
		),
		PhaseDistribution: {
			kkItem(x(4), 1, w, 1, opRead, p),               // (5)
			kkItem(x(5), 1, w, 1, opWrite, p),              // (6a)
			kkItem(some(6), max(x(6), 1), w, 1, opRead, p), // (6b)
			kkItem(x(7), k, ss.L, 1, opWrite, p),           // (6c)
		},
		PhaseLocalSort: append(ss.Access.items(x(8), largest*IntBytes, 1, opRead, p), // (7)
			ss.Access.items(x(8), largest*IntBytes, 1, opWrite, p)...), // (8)
	}
	out.Counters = map[string]float64{
		CounterExpansion: float64(largest) / float64(n),
		CounterSample:    float64(sn),
	}
	return out, nil
}

func init() {
	RegisterProgram(Program{Name: "samplesort", Paper: "000 sec. 6.4", OverStore: true,
		Summary: "sample sort: splitters, distribution, local radix sort",
		New:     func() Config { return new(SampleSortConfig) },
		Phases: func(results.Params) []string {
			return []string{PhaseSplitter, PhaseCompute, PhaseSync, PhaseDistribution, PhaseLocalSort}
		}})
}

// SampleSortConfig is the configuration of 'commcost app samplesort'.
type SampleSortConfig struct {
	N opts.Counts `flag:"n" default:"16K" usage:"keys per rank n (a multiple of 64): a list; K = 1024"`
	AccessFlags
}

// Apps are the runs: every n x k x l.
func (c *SampleSortConfig) Apps() ([]App, error) {
	return c.each(c.N, func(n int, acc Access) []App { return []App{SampleSort{N: n, Access: acc}} })
}
