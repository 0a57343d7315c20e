package replay

import (
	"math/bits"

	"github.com/commcost/commcost/trace"
)

// CollectiveModel prices whole collective calls. Replay decomposes every
// collective into the point-to-point messages of a classic algorithm
// (Decompose) unless a CollectiveModel describes it; then the call is one
// synchronising step of the priced duration: it ends for every member at
// the last member's arrival plus the price.
type CollectiveModel interface {
	// PriceCollective returns the seconds of one op over ranks ranks when
	// each sends bytes (as the trace records them, the calling rank's
	// total), and false when the model does not describe op.
	PriceCollective(op trace.Op, ranks int, bytes int64) (float64, bool)
}

// round is one step of a rank's part in a collective: its messages are
// posted together, then waited for together.
type round = []Xfer

// Xfer is one message of a round: to (Send) or from (receive) the member
// of index Peer, of Bytes bytes.
type Xfer struct {
	Peer  int
	Bytes int64
	Send  bool
}

// Decompose returns the rounds of member me of p (root the root's index,
// sent and recvd the bytes the call sent and received on this rank) for
// the algorithms of Thakur, Rabenseifner and Gropp, "Optimization of
// Collective Communication Operations in MPICH" (IJHPCA 19(1), 2005):
// dissemination barrier (section 4.5, after Hensgen, Finkel, Manber),
// binomial-tree broadcast and reduce (sections 4.1, 4.4), gather and
// scatter (binomial, the data of a subtree per message), ring allgather
// (section 4.3), allreduce by recursive doubling for messages up to
// AllreduceRingBytes and the ring (reduce-scatter then allgather, each
// p-1 steps of m/p bytes) above, alltoall by Bruck's algorithm up to
// BruckBlockBytes per block and pairwise exchange above (section 4.6),
// reduce-scatter by pairwise exchange, scan by recursive doubling. The
// vector forms use the average block. A member sends the whole round's
// messages before its receives complete, as MPICH's Isend/Irecv/Waitall
// rounds do.
func Decompose(op trace.Op, me, p, root int, sent, recvd int64) [][]Xfer {
	if p <= 1 {
		return nil
	}
	var rs [][]Xfer
	add := func(r ...Xfer) { rs = append(rs, r) }
	rel := func(v int) int { return (v + root) % p } // virtual rank to member
	vr := (me - root + p) % p
	switch op {
	case trace.OpBarrier, trace.OpIbarrier:
		for k := 1; k < p; k <<= 1 {
			add(Xfer{Peer: (me + k) % p, Send: true}, Xfer{Peer: (me - k + p) % p})
		}
	case trace.OpBcast, trace.OpIbcast:
		m := max(sent, recvd)
		mask := 1
		for ; mask < p; mask <<= 1 {
			if vr&mask != 0 {
				add(Xfer{Peer: rel(vr - mask), Bytes: m})
				break
			}
		}
		var sends round
		for mask >>= 1; mask > 0; mask >>= 1 {
			if vr+mask < p {
				sends = append(sends, Xfer{Peer: rel(vr + mask), Bytes: m, Send: true})
			}
		}
		if len(sends) > 0 {
			rs = append(rs, sends)
		}
	case trace.OpReduce, trace.OpIreduce:
		for mask := 1; mask < p; mask <<= 1 {
			if vr&mask == 0 {
				if vr|mask < p {
					add(Xfer{Peer: rel(vr | mask), Bytes: sent})
				}
			} else {
				add(Xfer{Peer: rel(vr &^ mask), Bytes: sent, Send: true})
				break
			}
		}
	case trace.OpGather, trace.OpGatherv:
		block := sent
		if vr == 0 {
			block = recvd / int64(p)
		}
		for mask := 1; mask < p; mask <<= 1 {
			if vr&mask == 0 {
				if src := vr | mask; src < p {
					add(Xfer{Peer: rel(src), Bytes: block * int64(min(mask, p-src))})
				}
			} else {
				add(Xfer{Peer: rel(vr &^ mask), Bytes: block * int64(min(mask, p-vr)), Send: true})
				break
			}
		}
	case trace.OpScatter, trace.OpScatterv:
		block := recvd
		if vr == 0 {
			block = sent / int64(p)
		}
		mask := 1
		for ; mask < p; mask <<= 1 {
			if vr&mask != 0 {
				add(Xfer{Peer: rel(vr - mask), Bytes: block * int64(min(mask, p-vr))})
				break
			}
		}
		var sends round
		for mask >>= 1; mask > 0; mask >>= 1 {
			if dst := vr + mask; dst < p {
				sends = append(sends, Xfer{Peer: rel(dst), Bytes: block * int64(min(mask, p-dst)), Send: true})
			}
		}
		if len(sends) > 0 {
			rs = append(rs, sends)
		}
	case trace.OpAllgather, trace.OpAllgatherv, trace.OpIallgather:
		block := recvd / int64(p)
		for k := 1; k < p; k++ {
			add(Xfer{Peer: (me + 1) % p, Bytes: block, Send: true}, Xfer{Peer: (me - 1 + p) % p, Bytes: block})
		}
	case trace.OpAllreduce, trace.OpIallreduce:
		if sent > AllreduceRingBytes {
			block := (sent + int64(p) - 1) / int64(p)
			for k := 1; k < 2*p-1; k++ {
				add(Xfer{Peer: (me + 1) % p, Bytes: block, Send: true}, Xfer{Peer: (me - 1 + p) % p, Bytes: block})
			}
			break
		}
		pof2 := 1
		for pof2*2 <= p {
			pof2 *= 2
		}
		rem := p - pof2
		newrank := me - rem
		if me < 2*rem {
			if me%2 == 0 {
				add(Xfer{Peer: me + 1, Bytes: sent, Send: true})
				newrank = -1
			} else {
				add(Xfer{Peer: me - 1, Bytes: sent})
				newrank = me / 2
			}
		}
		if newrank >= 0 {
			for mask := 1; mask < pof2; mask <<= 1 {
				nd := newrank ^ mask
				dst := nd + rem
				if nd < rem {
					dst = nd*2 + 1
				}
				add(Xfer{Peer: dst, Bytes: sent, Send: true}, Xfer{Peer: dst, Bytes: sent})
			}
		}
		if me < 2*rem {
			if me%2 == 1 {
				add(Xfer{Peer: me - 1, Bytes: sent, Send: true})
			} else {
				add(Xfer{Peer: me + 1, Bytes: sent})
			}
		}
	case trace.OpAlltoall, trace.OpAlltoallv, trace.OpIalltoall:
		block := sent / int64(p)
		if block <= BruckBlockBytes {
			for dist := 1; dist < p; dist <<= 1 {
				n := int64(0)
				for j := 0; j < p; j++ {
					if j&dist != 0 {
						n++
					}
				}
				add(Xfer{Peer: (me + dist) % p, Bytes: block * n, Send: true}, Xfer{Peer: (me - dist + p) % p, Bytes: block * n})
			}
			break
		}
		for k := 1; k < p; k++ {
			add(Xfer{Peer: (me + k) % p, Bytes: block, Send: true}, Xfer{Peer: (me - k + p) % p, Bytes: block})
		}
	case trace.OpReduceScatter, trace.OpReduceScatterBlock:
		block := sent / int64(p)
		for k := 1; k < p; k++ {
			add(Xfer{Peer: (me + k) % p, Bytes: block, Send: true}, Xfer{Peer: (me - k + p) % p, Bytes: block})
		}
	case trace.OpScan, trace.OpExscan:
		for mask := 1; mask < p; mask <<= 1 {
			var r round
			if me+mask < p {
				r = append(r, Xfer{Peer: me + mask, Bytes: sent, Send: true})
			}
			if me-mask >= 0 {
				r = append(r, Xfer{Peer: me - mask, Bytes: sent})
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// Xfers is the number of messages in Decompose(op, me, p, root, sent,
// recvd), counted without building them: what lowering a collective costs,
// known before it is lowered. TestDecompose holds the two together.
func Xfers(op trace.Op, me, p, root int, sent, recvd int64) int {
	if p <= 1 {
		return 0
	}
	vr := (me - root + p) % p
	doublings := bits.Len(uint(p - 1)) // distances 1, 2, 4, ... below p
	switch op {
	case trace.OpBarrier, trace.OpIbarrier:
		return 2 * doublings
	case trace.OpBcast, trace.OpIbcast, trace.OpScatter, trace.OpScatterv:
		n, mask := 0, 1
		for ; mask < p; mask <<= 1 {
			if vr&mask != 0 {
				n++
				break
			}
		}
		for mask >>= 1; mask > 0; mask >>= 1 {
			if vr+mask < p {
				n++
			}
		}
		return n
	case trace.OpReduce, trace.OpIreduce, trace.OpGather, trace.OpGatherv:
		n := 0
		for mask := 1; mask < p; mask <<= 1 {
			if vr&mask != 0 {
				return n + 1
			}
			if vr|mask < p {
				n++
			}
		}
		return n
	case trace.OpAllgather, trace.OpAllgatherv, trace.OpIallgather, trace.OpReduceScatter, trace.OpReduceScatterBlock:
		return 2 * (p - 1)
	case trace.OpAllreduce, trace.OpIallreduce:
		if sent > AllreduceRingBytes {
			return 2 * (2*p - 2)
		}
		pof2 := 1 << (bits.Len(uint(p)) - 1)
		rem := p - pof2
		if me < 2*rem {
			if me%2 == 0 {
				return 2 // it hands its data to me+1 and gets the result back
			}
			return 2 + 2*(bits.Len(uint(pof2))-1)
		}
		return 2 * (bits.Len(uint(pof2)) - 1)
	case trace.OpAlltoall, trace.OpAlltoallv, trace.OpIalltoall:
		if sent/int64(p) <= BruckBlockBytes {
			return 2 * doublings
		}
		return 2 * (p - 1)
	case trace.OpScan, trace.OpExscan:
		n := 0
		for mask := 1; mask < p; mask <<= 1 {
			if me+mask < p {
				n++
			}
			if me-mask >= 0 {
				n++
			}
		}
		return n
	}
	return 0
}

// The algorithms' switch points, MPICH's defaults (Thakur et al. 2005):
// recursive doubling for allreduce messages up to 2 KiB... the ring above;
// Bruck's alltoall for blocks up to 256 bytes.
const (
	AllreduceRingBytes = 2048
	BruckBlockBytes    = 256
)
