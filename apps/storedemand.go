package apps

import (
	"fmt"

	"github.com/commcost/commcost/internal/sysmem"
)

// The memory paper 000's programs over global variables ask of each rank,
// from their parameters, before anything is allocated. What a store holds
// for the same variables depends on the strategy (appexp.StoreRun.Demand
// combines the parts): the direct store and the emulated networks keep
// every variable once, whole on its home; divalib's strategies place
// homes at random and keep a whole copy of every variable a rank reads or
// writes besides.

// StoreNeed is what one configuration of a program over global variables
// asks of each rank, split by who holds it.
type StoreNeed struct {
	// Field is the flag the need grows with ("n"); What names the
	// structures, for the message.
	Field, What string
	// Arrays are the program's own arrays on the rank that holds most:
	// those Setup keeps and those a Run allocates, the serial oracle on
	// the rank that computes it, and the packet lists of its largest
	// access (PacketListBytes).
	Arrays float64
	// Homes are the bytes of the store variables homed on one rank under
	// the program's placement (Module: every rank is the home of one of
	// each of the p per-processor arrays). They stay in the store until it
	// closes: a store has no Free.
	Homes float64
	// Copies are the bytes of the variables homed elsewhere that one rank
	// reads or writes, the most of any rank: what a caching store copies.
	Copies float64
	// InFlight is the payload a rank has in flight at once (k packets of
	// l bytes), which the local backend's queues hold again.
	InFlight float64
	// Largest is the largest store variable: a caching store moves a
	// variable whole in one message.
	Largest float64
}

// StoreDemander is a program over global variables that states its
// StoreNeed on p ranks (the four programs of paper 000).
type StoreDemander interface {
	StoreDemand(p int) StoreNeed
}

// PacketListBytes is what one packet of a batched access costs besides its
// data while the access runs: its globalvar.Packet (a Var of ID, name and
// size, an offset and a slice: 64 bytes) and the direct store's batch
// entry (target, offset and slice: 40 bytes).
const PacketListBytes = 64 + 40

// packetLists is the memory of the packet lists of one access of d bytes
// in packets of l bytes: ceil(d/l) packets.
func packetLists(d, l int) float64 {
	if d <= 0 {
		return 0
	}
	return float64((d+max(l, 1)-1)/max(l, 1)) * PacketListBytes
}

// inFlight is the payload of k packets of l bytes.
func (a Access) inFlight() float64 { return float64(max(a.K, 1)) * float64(max(a.L, 1)) }

// runs counts the repetitions whose arrays a rank holds at its peak: the
// current Run's and the previous one's, garbage the collector (GOGC 100) has not
// reclaimed yet when the next Run allocates; the local backend's copies
// of every message add to that garbage.
const runs = 2

// Demand is the need of MatMul over the direct store (StoreDemand with
// its home copies), for callers that want one figure.
func (m MatMul) Demand(p int) sysmem.Need { return m.StoreDemand(p).Direct() }

// Demand is the need of ConnComp over the direct store.
func (g ConnComp) Demand(p int) sysmem.Need { return g.StoreDemand(p).Direct() }

// Demand is the need of BitonicSort over the direct store.
func (b BitonicSort) Demand(p int) sysmem.Need { return b.StoreDemand(p).Direct() }

// Demand is the need of SampleSort over the direct store.
func (ss SampleSort) Demand(p int) sysmem.Need { return ss.StoreDemand(p).Direct() }

// Direct is the need on a store that keeps every variable once, on its
// home: the arrays and the home copies.
func (n StoreNeed) Direct() sysmem.Need {
	return sysmem.Need{Field: n.Field, What: n.What, Bytes: n.Arrays + n.Homes, InFlight: n.InFlight}
}

// StoreDemand is what MatMul asks of each of p ranks, S = 4 n^2/p bytes a
// submatrix: Setup's A_i and B_i and the oracle's C_i with a row of B
// (3 S + 4n), then the oracle's C_i kept and a Run's A_i, B_j, C_i and
// the C_i read back for the check (4 S, runs of them) and the packet lists of one
// submatrix access; as a store the homes of one A, B and C (3 S), and
// copies of A_i, the p B_j and C_i ((p + 2) S, those not homed on the
// rank fewer).
func (m MatMul) StoreDemand(p int) StoreNeed {
	p = max(p, 1)
	s := float64(m.N) * float64(m.N) / float64(p) * IntBytes
	kept, setup, run := s, 2*s+IntBytes*float64(m.N), 4*s
	return StoreNeed{Field: "n", Arrays: kept + max(setup, runs*run) + packetLists(int(s), m.L),
		Homes: 3 * s, Copies: float64(p+2) * s, InFlight: m.Access.inFlight(), Largest: s,
		What: fmt.Sprintf("matmul's submatrices of %d x %d on %d ranks (A, B, C and the oracle's C)", m.N/p, m.N, p)}
}

// bfsSlack is how much more than its entries an adjacency list grown by
// append holds, with the arrays it outgrew not yet collected.
const bfsSlack = 1.5

// StoreDemand is what ConnComp asks of each of p ranks, A = n^2/(4p)
// bytes a submatrix and F = 4n a forest: Setup's rows and, on rank 0, the
// serial oracle (a union-find of two int slices, 16n, and the labels F,
// kept); runs of a Run's rows, forest, merged forest and union-find, rank 0's check
// (F), and the breadth-first search's adjacency lists: each of the
// (n/p) (n/parts) density edges of the rank's rows twice as an int32
// (bfsSlack for their growth) and n slice headers; as a store the homes
// of A and W (A + F), and copies of A_i, W_i and the log p forests merged.
func (g ConnComp) StoreDemand(p int) StoreNeed {
	g = g.withDefaults()
	p = max(p, 1)
	n := float64(g.N)
	a := float64(g.N) * float64(g.N) / float64(p) / edgesPerInt * IntBytes
	f := IntBytes * n
	uf := 16 * n
	edges := n / float64(p) * (n / float64(g.Parts)) * g.Density
	bfs := bfsSlack*2*4*edges + 24*n + n + 4*n // lists, headers, seen, queue
	run := a + 2*f + uf + bfs + f              // rank 0 reads W_0 back
	return StoreNeed{Field: "n", Arrays: f + max(a+uf, runs*run) + packetLists(int(a), g.L),
		Homes: a + f, Copies: a + float64(1+log2(p))*f, InFlight: g.Access.inFlight(), Largest: max(a, f),
		What: fmt.Sprintf("concomp's %d-vertex graph on %d ranks (adjacency rows, search lists, forests, rank 0's oracle)", g.N, p)}
}

// StoreDemand is what BitonicSort asks of each of p ranks, K = 4n bytes an
// array of keys: the input kept, runs of a Run's x, y, the radix sort's
// scratch and the keys read back for the check (4 K) and the packet lists of one
// access; as a store the home of one A (K), and copies of A_i and the
// log p partners' arrays.
func (b BitonicSort) StoreDemand(p int) StoreNeed {
	p = max(p, 1)
	k := IntBytes * float64(b.N)
	return StoreNeed{Field: "n", Arrays: k + runs*4*k + packetLists(int(k), b.L),
		Homes: k, Copies: float64(1+log2(p)) * k, InFlight: b.Access.inFlight(), Largest: k,
		What: fmt.Sprintf("bitonic's %d keys per rank on %d ranks (input, x, y, scratch, check)", b.N, p)}
}

// StoreDemand is what SampleSort asks of each of p ranks, K = 4n bytes n
// keys: the input and the sample's positions (Perm(n) keeps n ints, 2 K),
// runs of a Run's keys, sample and bucket lists (K, K/64, 2 K for the lists'
// growth), the bucket read, its radix scratch and the keys read back,
// each at most the 2n keys A_i holds (3 x 2 K, Run refuses a larger
// bucket), rank 0's p samples and their scratch (2 p K/64), and the
// packet lists of the largest access; as a store the homes of A_i (2n
// keys), B_i and the lengths, and copies of every A_j (step 6c writes a
// list into each), the p B_j and the p length arrays.
func (ss SampleSort) StoreDemand(p int) StoreNeed {
	p = max(p, 1)
	fp := float64(p)
	k := IntBytes * float64(ss.N)
	sample := IntBytes * float64(max(ss.sample(), p))
	lens := IntBytes * fp
	run := k + k/sampleDivisor + 2*k + 3*2*k + 2*fp*k/sampleDivisor
	arrays := k + 2*k + runs*run + packetLists(2*ss.N*IntBytes, ss.L) + fp*PacketListBytes
	return StoreNeed{Field: "n", Arrays: arrays,
		Homes: 2*k + sample + lens, Copies: fp * (2*k + sample + lens), InFlight: ss.Access.inFlight(), Largest: 2 * k,
		What: fmt.Sprintf("samplesort's %d keys per rank on %d ranks (input, buckets, the 2n-key arrays A_i)", ss.N, p)}
}
