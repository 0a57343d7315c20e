package apps

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strings"
	"unsafe"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// This file holds what the four applications of paper 000 (Fischer,
// Rethmann, Wachsmann, section 6) share: the access shape (k, l), the placement of each processor's
// data, the workload items, the uint32 views and the local radix sort.
//
// The programs follow the paper's text. Each global array the paper puts in
// "shared memory module i" is one global variable created on module
// Module(i, p) (globalvar.Placer; stores without placement choose
// themselves). Every access of a block of D bytes is a batch of ceil(D/l)
// packets of l bytes in groups of k (globalvar.ReadBatch/WriteBatch), i.e.
// ceil(D/(k l)) k-k-accesses with k packets in flight, as the paper's
// formulas count them. The paper's integers (matrix elements, keys, forest
// entries) are 4 bytes (IntBytes), and volumes and l are in bytes: the
// paper's ceil(n/(k l)) over n integers is ceil(4n/(k l)) here.

// IntBytes is the paper's "integer", the Transputer's 32-bit word.
const IntBytes = 4

// MaxVarBytes is the largest store variable the applications create: one
// MPI message carries at most mpi.MaxCount bytes, less the store's own
// header (divalib's is 40 bytes; 64 leaves room). A larger one is refused
// by the application's Check, before any calibration runs, rather than by
// the store's Create after it.
const MaxVarBytes = mpi.MaxCount - 64

// BenchKKAccess is the bench name of the k-k-access records every
// application's workload names (patterns.KKAccess, cmd kkaccess).
const BenchKKAccess = patterns.BenchKKAccess

// Access ops of workload items, as kkaccess records spell them.
var (
	opRead  = patterns.AccessRead.String()
	opWrite = patterns.AccessWrite.String()
)

// Access is the shape of every block access of a paper-000 program: packets
// of L bytes, K of them in flight at once (the send hot spot k).
type Access struct {
	K int // packets in flight per rank, >= 1
	L int // bytes per packet, >= 1
}

// check refuses a shape that cannot split volume bytes as the paper does:
// k or l below 1, or k l above the volume (then no access would carry k
// packets of l bytes). what names the volume in the message. The
// volume's own bound is checkVolume's.
func (a Access) check(volume int, what string) error {
	switch {
	case a.K < 1:
		return fmt.Errorf("--k %d: the send hot spot must be an integer >= 1", a.K)
	case a.L < 1:
		return fmt.Errorf("--l %d: the packet size must be an integer >= 1 byte", a.L)
	case product(a.K, a.L) > float64(volume):
		return fmt.Errorf("--k %d with --l %d: k l = %s bytes is above the %s (%d bytes, set by --n); want k l <= %d (smaller --k or --l, or a larger --n)", a.K, a.L, results.FormatCount(product(a.K, a.L)), what, volume, volume)
	}
	return nil
}

// checkVolume refuses an n whose store variable, volume(n) bytes, is
// beyond one store variable (MaxVarBytes), naming --n and the largest n
// that fits: the largest multiple of step (the program's divisibility)
// whose volume does. what names the variable; ranks, when the volume
// shrinks with more ranks, says on how many ("on 4 ranks"), else "".
func checkVolume(n, step int, volume func(n int) int, what, ranks string) error {
	if v := volume(n); v >= 0 && v <= MaxVarBytes && n <= maxVolumeN {
		return nil
	}
	want := fmt.Sprintf("want n <= %d", largestN(step, volume))
	if ranks != "" {
		what += " " + ranks
		want += " " + ranks + " (or more ranks)"
	}
	if n > maxVolumeN {
		// Its volume would overflow an int: say what n is and its range.
		return fmt.Errorf("--n %d: the %s would be far more than one store variable holds (%d bytes); %s",
			n, what, MaxVarBytes, want)
	}
	return fmt.Errorf("--n %d: the %s is %d bytes, more than one store variable holds (%d bytes); %s",
		n, what, volume(n), MaxVarBytes, want)
}

// maxVolumeN bounds the n checkVolume considers: n^2 stays within an int.
const maxVolumeN = 1 << 31

// largestN is the largest multiple of step whose volume fits one store
// variable (volume grows with n), 0 when none does.
func largestN(step int, volume func(n int) int) int {
	fits := func(k int) bool { v := volume(k * step); return v >= 0 && v <= MaxVarBytes }
	lo, hi := 0, maxVolumeN/max(step, 1) // fits(lo) or lo == 0; !fits(hi+1)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo * step
}

// groups is ceil(volume/(k l)), the k-k-accesses one access of volume bytes
// takes (globalvar.Groups of globalvar.Packets), the last one partial when
// k l does not divide the volume (items).
func (a Access) groups(volume int) int {
	return globalvar.Groups(globalvar.Packets(volume, a.L), a.K)
}

// items is the workload of n accesses of volume bytes each, at portion r:
// floor(volume/(k l)) full k-k-accesses per access, and, when k l does not
// divide the volume, a last one of what is left: k' = ceil(rest/l) packets
// of l bytes, in flight together. So an access is priced for the packets
// it sends, not for ceil(volume/(k l)) full accesses; only the split's
// short last packet (under l bytes) counts as a whole one, which keeps
// every item on the packet size the calibration measured.
func (a Access) items(n, volume int, r float64, op string, p int) []results.WorkItem {
	full := volume / (a.K * a.L)
	out := []results.WorkItem{kkItem(n*full, a.K, a.L, r, op, p)}
	if rest := volume - full*a.K*a.L; rest > 0 {
		out = append(out, kkItem(n, globalvar.Packets(rest, a.L), a.L, r, op, p))
	}
	return out
}

func (a Access) read(s globalvar.Store, v globalvar.Var, off int, buf []byte) error {
	pk, err := globalvar.Split(v, off, buf, a.L)
	if err != nil {
		return err
	}
	return globalvar.ReadBatch(s, pk, a.K)
}

func (a Access) write(s globalvar.Store, v globalvar.Var, off int, buf []byte) error {
	pk, err := globalvar.Split(v, off, buf, a.L)
	if err != nil {
		return err
	}
	return globalvar.WriteBatch(s, pk, a.K)
}

// Module is the memory module that holds processor i's data among p:
// p-1-i (i XOR (p-1) when p is a power of two). In the paper processor i and
// module i are distinct nodes of the service network (section 1), so every
// access crosses it; on a store whose modules are the ranks themselves
// (directstore) module i is rank i, and placing i's data on rank p-1-i keeps
// it off the accessing rank, where an access would be a memory copy the
// model does not describe (section 6.5, data locality). For p a power of two
// and p >= 4 the bitonic partners i XOR 2^s and the merge partners of
// connected components are then never the accessing rank either; with
// p = 2 they are (module 1-i is rank i's partner), and with p = 1 every
// access stays on the one rank: the workloads count only the accesses
// that cross the network (remote, maxOverRanks).
func Module(i, p int) int { return p - 1 - i }

// remote is 1 when this rank's access of v crosses the network, 0 when
// the store keeps v whole on this rank (globalvar.Keeps): a copy within
// the rank, which sends no message and which the k-k-access does not
// price (paper 000, section 6.5, data locality). On a store that does not
// say (divalib, the emulated networks, whose processors and modules are
// distinct nodes as in the paper) every access crosses.
func remote(s globalvar.Store, v globalvar.Var) float64 {
	if globalvar.Keeps(s, v) {
		return 0
	}
	return 1
}

// maxOverRanks replaces every entry of n, one per access of the program in
// program order (0 where this rank does not access or the access stays on
// it), by its largest value over the ranks (collective): a step's time is
// its slowest rank's, so a workload states the most crossing accesses any
// rank makes in each step. Call it after a store barrier: a rank in the
// reduction serves no requests, so a write still waiting on it as a home
// would never end (a reduction before Setup's barrier deadlocked MatMul).
func maxOverRanks(c mpi.Comm, n []float64) error {
	mx := make([]float64, len(n))
	if err := c.AllreduceFloat64s(n, mx, mpi.OpMax); err != nil {
		return err
	}
	copy(n, mx)
	return nil
}

// totalCount is the sum of xs as a count of accesses.
func totalCount(xs []float64) int {
	var t float64
	for _, x := range xs {
		t += x
	}
	return int(t)
}

// kkItem is a workload item of count k-k-accesses (k, l, r, op) on p ranks,
// named by the kkaccess pattern's own parameters (patterns.KKAccess.Params:
// r the realised portion of p), so a model predicts it as the record of
// that point.
func kkItem(count int, k, l int, r float64, op string, p int) results.WorkItem {
	o, err := patterns.ParseAccessOp(op)
	if err != nil {
		panic("apps: workload op " + op) // the callers pass opRead or opWrite
	}
	kk := patterns.KKAccess{K: k, L: l, R: r, Op: o}
	return results.WorkItem{Count: float64(count), Bench: BenchKKAccess, Params: kk.Params(max(p, 1)), Ranks: p}
}

// blocks creates one variable of size bytes per processor, processor i's on
// Module(i, p), named name.i (collective).
func blocks(s globalvar.Store, name string, size, p int) ([]globalvar.Var, error) {
	vs := make([]globalvar.Var, p)
	for i := range vs {
		var err error
		if vs[i], _, err = globalvar.CreateAt(s, fmt.Sprintf("%s.%d", name, i), size, Module(i, p)); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// varName is the name of an application's variable name of configuration
// a: the parameters are part of it, so several configurations can set up
// on one store (a store has no Free, and names are unique).
func varName(a App, name string) string {
	ps := a.Params()
	keys := make([]string, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(a.Name())
	for _, k := range keys {
		fmt.Fprintf(&b, ".%s=%v", k, ps[k])
	}
	return b.String() + "." + name
}

// stateOf returns this rank's Setup state of the application su: the one
// Measure set up, or, when Run is called on its own, a fresh setup.
func stateOf[T any](env *Env, su Setupper) (T, error) {
	if env.State == nil {
		st, err := su.Setup(*env)
		if err != nil {
			var zero T
			return zero, err
		}
		env.State = st
	}
	return env.State.(T), nil
}

// needStore is the error of a global-variable application run without one.
func needStore(env Env, app string) error {
	if env.Store == nil {
		return fmt.Errorf("%s runs over global variables: Env.Store is nil", app)
	}
	return nil
}

// u32Bytes views v as bytes (the host's byte order on every rank, as MPI_BYTE
// transfers assume).
func u32Bytes(v []uint32) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*IntBytes)
}

// isPow2 reports whether p is a power of two.
func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// RanksError is a program's refusal of its number of ranks alone, not of
// a flag of its own: the caller names what set that number (--np, or the
// launcher's -np), which the program does not know.
type RanksError struct {
	What  string // the program ("bitonic sort")
	Want  string // the numbers it takes ("a power-of-two number of ranks (2, 4, 8, ...)")
	Hint  string // optional: examples that fit ("e.g. 4, 16, 64")
	Ranks int
}

func (e *RanksError) Error() string {
	return fmt.Sprintf("%s needs %s, got %d", e.What, e.Want, e.Ranks) + e.hint()
}

// Needs is what the program takes, with the hint: for a caller that
// names the number of ranks itself.
func (e *RanksError) Needs() string { return e.Want + e.hint() }

func (e *RanksError) hint() string {
	if e.Hint == "" {
		return ""
	}
	return "; " + e.Hint
}

// DivideError is a matrix order --n that the ranks' partition does not
// divide. Error names --n, for an order the user gave; when --n was left
// at its default, the caller tells Default instead, which names what set
// the partition (the rank count, or Flag).
type DivideError struct {
	Program  string // "checkerboard"
	N        int    // the order
	By       string // the partition: "1x3 grid", "3 ranks"
	Multiple int    // n must be a multiple of it
	Why      string // "row-wise partitioning gives every rank n/p rows"
	Flag     string // the program's flag that set the partition ("--grid 1x3"), "" for the rank count
}

func (e *DivideError) Error() string {
	return fmt.Sprintf("--n %d: not divisible by the %s (%s)", e.N, e.By, e.Why)
}

// Default is the refusal of the default --n: ranks names what set the
// rank count (job.RanksText), which chose the partition unless Flag did.
func (e *DivideError) Default(ranks string) string {
	other := "another number of ranks"
	if e.Flag != "" {
		ranks, other = e.Flag, "another grid"
	}
	return fmt.Sprintf("%s: the default --n %d is not divisible by %s's %s; give --n a multiple of %d or %s",
		ranks, e.N, e.Program, e.By, e.Multiple, other)
}

// powerOfTwoRanks is the Want of a program on a power of two of ranks.
const powerOfTwoRanks = "a power-of-two number of ranks (2, 4, 8, 16, ...)"

// log2 is log2 p for a power of two p.
func log2(p int) int { return bits.Len(uint(p)) - 1 }

// newRand is an application's random source: the same seed and stream give
// the same numbers on every rank.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// poller calls the store's Poll (globalvar.Poll) from local computations,
// so a rank that computes still serves the ranks reading from it, and then
// yields the processor (sched_yield): where ranks share cores (the test
// cluster's four hosts on two), a computing rank would otherwise keep a
// core from a rank whose data is waiting in its sockets, which no machine
// with a processor per rank does; with nothing else runnable the yield
// returns at once. The first error is kept and ends the computation's
// caller.
type poller struct {
	s   globalvar.Store
	err error
}

func (p *poller) poll() {
	if p.err == nil {
		p.err = globalvar.Poll(p.s)
	}
	osYield()
}

// radixChunk is how many keys a radix pass handles between two polls.
const radixChunk = 1 << 14

// radixSort sorts keys ascending with an LSD radix sort of four 8-bit
// digits (the paper's local "radix sort", sections 6.3 and 6.4), using tmp
// (len(keys) or more) as scratch, polling pl between chunks.
func radixSort(keys, tmp []uint32, pl *poller) {
	n := len(keys)
	src, dst := keys, tmp[:n]
	for shift := 0; shift < 32; shift += 8 {
		var count [257]int
		for _, k := range src {
			count[(k>>shift)&0xff+1]++
		}
		for d := 1; d < 257; d++ {
			count[d] += count[d-1]
		}
		for i, k := range src {
			d := (k >> shift) & 0xff
			dst[count[d]] = k
			count[d]++
			if i%radixChunk == radixChunk-1 && pl != nil {
				pl.poll()
			}
		}
		src, dst = dst, src
	}
	// Four passes: the sorted keys are back in keys.
}

// keyChecksum is the multiset checksum of keys: the count and the sum of a
// 64-bit mix of every key (splitmix64's finaliser), which a sort must keep
// and which differs, with high probability, for any other multiset.
func keyChecksum(keys []uint32) (n, sum uint64) {
	for _, k := range keys {
		z := uint64(k) + 0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		sum += z ^ (z >> 31)
	}
	return uint64(len(keys)), sum
}

// errVerify is wrapped by every failed check against an oracle.
var errVerify = errors.New("verification failed")
