package apps

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"unsafe"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// Bitonic sorting with merge&split, paper 004 (Krick, Meyer auf der Heide,
// Räcke, Vöcking, Westermann), section 3.2 and Figure 5.
//
// Batcher's bitonic sorting circuit on P = 2^d wires, one wire per rank.
// Phase i = 1..d consists of i parallel steps j = i-1, ..., 0; in step j
// wire w is paired with wire w XOR 2^j, and the pair sorts ascending when
// bit i of w is 0, descending otherwise (in the last phase, bit d is 0 for
// every wire: everything ascends). The merging circuits of phase i cover
// 2^i neighbouring wires: this is the locality the access tree exploits.
// Every wire holds m keys, sorted locally first, and the comparator is
// replaced by merge&split: of the 2m keys of a pair the wire that receives
// the minimum keeps the lower m, the other the upper m. Merge&split of
// sorted blocks sorts whenever the comparator network sorts single keys
// (Knuth, TAOCP vol. 3, 5.3.4, exercise 38), so the result is the P*m keys
// sorted in wire order.
//
// Wires are placed on ranks by BitonicConfig.Wires. Paper 004 numbers the
// processors along the leaves of the mesh-decomposition tree from left to
// right (section 3.3, "Analogously to the sorting algorithm ..."), so that
// a merging circuit of 2^i wires lies in a submesh of 2^i processors; the
// experiments (package dsmexp) pass that order.
//
// Keys are uint32 (4 bytes, the integers of the paper's machine), drawn from
// the seed per wire, identically in every repetition.

// BitonicConfig is the configuration both versions share.
type BitonicConfig struct {
	// Keys is m, the keys per rank (>= 1).
	Keys int
	// Wires maps wire w to the rank that simulates it (a permutation of
	// 0..P-1); nil means wire w on rank w.
	Wires []int
	// Probe, if set, is told the measured section: "sort" from the first
	// local sort to the barrier after the last merge&split, "" before and
	// after (the keys' initial placement, the verification).
	Probe Probe
}

// Check reports a configuration that cannot run on p ranks.
func (c BitonicConfig) Check(p int) error {
	if c.Keys < 1 {
		return fmt.Errorf("keys per rank m = %d: must be >= 1", c.Keys)
	}
	if p < 1 || p&(p-1) != 0 {
		return &RanksError{What: "bitonic sorting", Want: "a power-of-two number of ranks (one wire of the circuit each)", Ranks: p}
	}
	if c.Wires != nil {
		if len(c.Wires) != p {
			return fmt.Errorf("wire placement lists %d ranks, want %d", len(c.Wires), p)
		}
		seen := make([]bool, p)
		for w, r := range c.Wires {
			if r < 0 || r >= p || seen[r] {
				return fmt.Errorf("wire placement is not a permutation of the ranks (wire %d on rank %d)", w, r)
			}
			seen[r] = true
		}
	}
	return nil
}

// wireOf returns the wire rank r simulates.
func (c BitonicConfig) wireOf(r int) int {
	if c.Wires == nil {
		return r
	}
	return slices.Index(c.Wires, r)
}

// rankOf returns the rank simulating wire w.
func (c BitonicConfig) rankOf(w int) int {
	if c.Wires == nil {
		return w
	}
	return c.Wires[w]
}

// BitonicStep is one parallel merge&split step of the circuit: phase I
// (1-based), distance 2^J.
type BitonicStep struct{ I, J int }

// BitonicSteps lists the circuit's steps for p = 2^d wires: d(d+1)/2 of
// them.
func BitonicSteps(p int) []BitonicStep {
	d := bits.Len(uint(p)) - 1
	var out []BitonicStep
	for i := 1; i <= d; i++ {
		for j := i - 1; j >= 0; j-- {
			out = append(out, BitonicStep{i, j})
		}
	}
	return out
}

// Partner returns the wire paired with w in the step, and whether w keeps
// the lower half of the pair's keys.
func (s BitonicStep) Partner(w int) (partner int, keepLow bool) {
	partner = w ^ 1<<s.J
	ascending := w>>s.I&1 == 0
	return partner, (w < partner) == ascending
}

// bitonicKeys draws wire w's m input keys.
func bitonicKeys(seed int64, w, m int) []uint32 {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)+0x62697463))
	out := make([]uint32, m)
	for i := range out {
		out[i] = rng.Uint32()
	}
	return out
}

// mergeSplit merges the sorted blocks mine and theirs (equal lengths) and
// writes the lower (keepLow) or upper half into out.
func mergeSplit(mine, theirs, out []uint32, keepLow bool) {
	m := len(mine)
	if keepLow {
		a, b := 0, 0
		for k := 0; k < m; k++ {
			if b >= m || a < m && mine[a] <= theirs[b] {
				out[k] = mine[a]
				a++
			} else {
				out[k] = theirs[b]
				b++
			}
		}
		return
	}
	a, b := m-1, m-1
	for k := m - 1; k >= 0; k-- {
		if b < 0 || a >= 0 && mine[a] > theirs[b] {
			out[k] = mine[a]
			a--
		} else {
			out[k] = theirs[b]
			b--
		}
	}
}

// keyBlock is a wire's block of m keys and its form in messages and in
// the global variable: 4m bytes, little-endian. On a little-endian host
// the two share memory (keys is a view of raw) and the conversions are
// free; elsewhere they are copies. The merge&split steps of a 64x64 mesh
// convert 2.6 billion keys per strategy otherwise, a quarter of the
// local backend's time outside the store at that scale.
type keyBlock struct {
	raw  []byte
	keys []uint32
	view bool
}

// hostLittleEndian says whether uint32s are laid out little-endian here.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func newKeyBlock(m int) keyBlock {
	raw := make([]byte, 4*m)
	if p := unsafe.SliceData(raw); m > 0 && hostLittleEndian && uintptr(unsafe.Pointer(p))%unsafe.Alignof(uint32(0)) == 0 {
		return keyBlock{raw: raw, keys: unsafe.Slice((*uint32)(unsafe.Pointer(p)), m), view: true}
	}
	return keyBlock{raw: raw, keys: make([]uint32, m)}
}

// fromWire makes keys hold what was received into raw.
func (b keyBlock) fromWire() {
	if !b.view {
		getKeys(b.keys, b.raw)
	}
}

// toWire makes raw hold keys.
func (b keyBlock) toWire() {
	if !b.view {
		putKeys(b.raw, b.keys)
	}
}

func putKeys(dst []byte, keys []uint32) {
	for i, k := range keys {
		binary.LittleEndian.PutUint32(dst[4*i:], k)
	}
}

func getKeys(keys []uint32, src []byte) {
	for i := range keys {
		keys[i] = binary.LittleEndian.Uint32(src[4*i:])
	}
}

// BitonicName is the application's name (record param "app"); paper
// 000's bitonic sort is another program.
const BitonicName = "bitonic-ms"

// BitonicMaxKeys is the most keys per rank a bitonic run takes: a rank's
// block of 4-byte keys is one message, with room for the store's header.
const BitonicMaxKeys = (mpi.MaxCount - 64) / 4

// Bitonic phases (record param "phase").
const (
	BitonicLocalSort = "local-sort" // sorting the rank's m keys (comp)
	BitonicExchange  = "exchange"   // reads/writes of the global variables and barriers, or the messages (comm)
	BitonicMerge     = "merge"      // merge&split of two blocks (comp)
)

// bitonicVerify checks that the wires' final keys are sorted in wire order
// and are a permutation of the input, as the Sort Benchmark's valsort
// checks a sort (checkSortedIn): every rank checks its own block's order,
// the blocks' first and last keys are exchanged, and the output's
// multiset checksum is compared with the input's, which each rank
// regenerates for its wire from the seed. No rank gathers or sorts the
// world's keys, so the check takes O(m) on every rank at once and none
// waits on another's serial work. The verdict is collective.
func bitonicVerify(c mpi.Comm, cfg BitonicConfig, seed int64, mine []uint32, extra error) error {
	n, sum, err := sumChecksum(c, bitonicKeys(seed, cfg.wireOf(c.Rank()), cfg.Keys))
	if err != nil {
		return err
	}
	if extra != nil {
		return AgreeErr(c, extra)
	}
	return checkSortedIn(c, "bitonic", mine, cfg.Wires, n, sum)
}

// BitonicStore is bitonic sorting with merge&split over a global-variable
// store: wire w's keys are the global variable "bitonic/m/K[w]" of 4m
// bytes. In each step both wires of a pair read the other's variable, a
// barrier separates the reads from the writes of the new blocks (a wire
// must not overwrite its keys before its partner has read them), and a
// second barrier makes the writes visible to the next step. Before the
// measured section wire w's rank writes its input, so it holds the only
// copy (as p_ij holds A[i,j] in the matrix square); the measured section
// starts with the local sort, whose result replaces the input in the
// variable before the first step.
type BitonicStore struct {
	BitonicConfig
}

// NewBitonicStore returns the store version.
func NewBitonicStore(cfg BitonicConfig) *BitonicStore { return &BitonicStore{BitonicConfig: cfg} }

// Setup creates the P key variables (collective; apps.Setupper): every run
// of one measurement uses them.
func (b *BitonicStore) Setup(env Env) (any, error) {
	if err := needStore(env, b.Name()); err != nil {
		return nil, err
	}
	p := env.Comm.Size()
	if err := b.Check(p); err != nil {
		return nil, err
	}
	vs := make([]globalvar.Var, p)
	prefix := "bitonic/" + strconv.Itoa(b.Keys) + "/K["
	for w := range vs {
		// Every rank names all P variables: P^2 names on goroutine ranks
		// (16.7 million at 64x64), so no fmt here.
		v, err := env.Store.Create(prefix+strconv.Itoa(w)+"]", 4*b.Keys)
		if err != nil {
			return nil, err
		}
		vs[w] = v
	}
	return vs, nil
}

func (b *BitonicStore) Name() string { return BitonicName }

func (b *BitonicStore) Params() results.Params {
	return results.Params{"keys": b.Keys, "impl": "store"}
}

// Run sorts once (collective over env.Comm and env.Store).
func (b *BitonicStore) Run(env Env) (Outcome, error) {
	var out Outcome
	c, s := env.Comm, env.Store
	if err := needStore(env, b.Name()); err != nil {
		return out, err
	}
	p := c.Size()
	if err := b.Check(p); err != nil {
		return out, err
	}
	vars, err := stateOf[[]globalvar.Var](&env, b)
	if err != nil {
		return out, err
	}
	if len(vars) != p {
		return out, fmt.Errorf("bitonic: Env.State holds %d variables, want one per rank (%d)", len(vars), p)
	}
	m := b.Keys
	w := b.wireOf(c.Rank())
	// mine: the wire's keys; in: the partner's, read; next: the merge's
	// result, which becomes mine.
	mine, in, next := newKeyBlock(m), newKeyBlock(m), newKeyBlock(m)
	copy(mine.keys, bitonicKeys(env.Seed, w, m))
	mine.toWire()
	// Initial placement, not measured: the wire's rank holds the only
	// copy. Written twice: the first write may leave copies on the way
	// from wherever the variable was (the access-tree root of a fresh
	// variable, an earlier run's readers), the second removes them, so
	// every run starts from the same state and counts the same messages,
	// with or without warm-up runs before it.
	for i := 0; i < 2; i++ {
		if err := s.Write(vars[w], 0, mine.raw); err != nil {
			return out, err
		}
	}
	if err := s.Barrier(); err != nil {
		return out, err
	}
	enter(b.Probe, "sort")
	steps := BitonicSteps(p)
	_ = out.Phases.Time(c, BitonicLocalSort, KindComp, func() error {
		slices.Sort(mine.keys)
		mine.toWire()
		return nil
	})
	// The rank's block replaces its variable; the barrier makes it visible
	// to the next step. The first time, the sorted block replaces the
	// input (this rank holds the only copy: no message but the barrier's).
	writeOwn := func() error {
		if err := s.Write(vars[w], 0, mine.raw); err != nil {
			return err
		}
		return s.Barrier()
	}
	if err := out.Phases.Time(c, BitonicExchange, KindComm, writeOwn); err != nil {
		return out, err
	}
	for _, st := range steps {
		partner, low := st.Partner(w)
		if err := out.Phases.Time(c, BitonicExchange, KindComm, func() error {
			if err := s.Read(vars[partner], 0, in.raw); err != nil {
				return err
			}
			return s.Barrier()
		}); err != nil {
			return out, err
		}
		_ = out.Phases.Time(c, BitonicMerge, KindComp, func() error {
			in.fromWire()
			mergeSplit(mine.keys, in.keys, next.keys, low)
			mine, next = next, mine
			mine.toWire()
			return nil
		})
		if err := out.Phases.Time(c, BitonicExchange, KindComm, writeOwn); err != nil {
			return out, err
		}
	}
	enter(b.Probe, "")
	// The store must hold what this rank computed: read it back (its own
	// copy, no message) before the independent check of the keys.
	var own error
	if err := s.Read(vars[w], 0, in.raw); err != nil {
		return out, err
	}
	in.fromWire()
	if !slices.Equal(in.keys, mine.keys) {
		own = fmt.Errorf("bitonic: rank %d: the store's copy of K[%d] differs from the keys the rank wrote", c.Rank(), w)
	}
	// The verification is plain MPI, and a rank blocked in it serves no
	// store request: no read may be left waiting for it.
	if err := s.Barrier(); err != nil {
		return out, err
	}
	if err := bitonicVerify(c, b.BitonicConfig, env.Seed, mine.keys, own); err != nil {
		return out, err
	}
	out.Workload = b.Workload(p)
	return out, nil
}

// Workload returns the phases' communication on p ranks: per step every
// rank reads one remote block of 4m bytes (a 1-1-access; the pairs form a
// permutation); the write goes to the rank's own variable, whose data does
// not travel.
func (b *BitonicStore) Workload(p int) map[string][]results.WorkItem {
	return b.exchange(p, "read")
}

// exchange is the exchange phase of op: one 1-1-access of a block of 4m
// bytes per merge&split step.
func (c BitonicConfig) exchange(p int, op string) map[string][]results.WorkItem {
	return map[string][]results.WorkItem{
		BitonicExchange: {{Count: float64(len(BitonicSteps(p))), Bench: "kkaccess", Params: results.Params{"k": 1, "l": 4 * c.Keys, "r": 1, "op": op}, Ranks: p}},
	}
}

// bitonicTag is the tag of the hand-optimised version's messages (on its
// own duplicate of the communicator).
const bitonicTag = 0xb170

// BitonicHand is the hand-optimised message-passing version of paper 004,
// section 3.2: "exchanges two messages between every pair of nodes jointly
// computing a merge&split operation", each along the dimension-order path
// (the caller's Charger counts them on its mesh). No barrier: the exchange
// itself synchronises the pair.
type BitonicHand struct {
	BitonicConfig
	// Links, if set, is charged 4m bytes for each of the two messages of
	// every merge&split pair in the measured section.
	Links Charger
}

// NewBitonicHand returns the message-passing version.
func NewBitonicHand(cfg BitonicConfig, links Charger) *BitonicHand {
	return &BitonicHand{BitonicConfig: cfg, Links: links}
}

func (b *BitonicHand) Name() string { return BitonicName }

func (b *BitonicHand) Params() results.Params {
	return results.Params{"keys": b.Keys, "impl": "hand"}
}

// Run sorts once (collective over env.Comm).
func (b *BitonicHand) Run(env Env) (Outcome, error) {
	var out Outcome
	c := env.Comm
	p := c.Size()
	if err := b.Check(p); err != nil {
		return out, err
	}
	dup, err := c.Dup()
	if err != nil {
		return out, err
	}
	defer dup.Free()
	m := b.Keys
	me := c.Rank()
	w := b.wireOf(me)
	mine, in, next := newKeyBlock(m), newKeyBlock(m), newKeyBlock(m)
	copy(mine.keys, bitonicKeys(env.Seed, w, m))
	if err := c.Barrier(); err != nil {
		return out, err
	}
	enter(b.Probe, "sort")
	steps := BitonicSteps(p)
	_ = out.Phases.Time(c, BitonicLocalSort, KindComp, func() error {
		slices.Sort(mine.keys)
		mine.toWire()
		return nil
	})
	for _, st := range steps {
		partner, low := st.Partner(w)
		peer := b.rankOf(partner)
		if err := out.Phases.Time(c, BitonicExchange, KindComm, func() error {
			if b.Links != nil {
				b.Links.Charge(me, peer, len(mine.raw))
			}
			_, err := dup.Sendrecv(mine.raw, peer, bitonicTag, in.raw, peer, bitonicTag)
			return err
		}); err != nil {
			return out, err
		}
		_ = out.Phases.Time(c, BitonicMerge, KindComp, func() error {
			in.fromWire()
			mergeSplit(mine.keys, in.keys, next.keys, low)
			mine, next = next, mine
			mine.toWire()
			return nil
		})
	}
	enter(b.Probe, "")
	if err := bitonicVerify(c, b.BitonicConfig, env.Seed, mine.keys, nil); err != nil {
		return out, err
	}
	out.Workload = b.Workload(p)
	return out, nil
}

// Workload returns the phases' communication on p ranks: per step every
// rank sends its 4m bytes to its partner (the pairs form a permutation)
// and receives the partner's.
func (b *BitonicHand) Workload(p int) map[string][]results.WorkItem {
	return b.exchange(p, "write")
}
