// Package trace is commcost's MPI trace: the binary format that the PMPI
// interposition library (trace/pmpi, built as bin/libcommcost-trace.so)
// writes for every rank of an unmodified MPI program, its reader, and the
// summary of a trace (time in MPI against compute, calls by type, message
// sizes, the communication matrix).
//
// # Format, version 3
//
// A trace is a directory holding one file per rank, rank-N.cct for world
// rank N (the library writes .rank-N.cct.part and renames it at
// MPI_Finalize, so a file under the final name is complete unless cut
// later). All integers are little endian. A file is
//
//	header  128 bytes
//	block*  each a 16-byte block header and Count events of 64 bytes
//
// The header:
//
//	off  size  field
//	0    8     magic "CCTRACE\x00"
//	8    2     version (3)
//	10   2     header bytes (128)
//	12   2     event bytes (64)
//	14   2     clock: 0 CLOCK_MONOTONIC ns, 1 x86 time-stamp counter ticks
//	16   4     world rank
//	20   4     world size
//	24   4     pid of the rank's process
//	28   4     header checksum (HeaderSum), version 1: reserved, 0
//	32   8     origin ticks: the clock right after MPI_Init's barrier
//	40   8     origin CLOCK_MONOTONIC ns
//	48   8     origin CLOCK_REALTIME ns
//	56   8     MPI_Init's duration in clock units
//	64   8     eager limit within a host in bytes (the MPI's control variable), -1 unknown
//	72   8     eager limit between hosts, -1 unknown
//	80   48    host name (1 to 47 bytes), NUL padded
//
// The header checksum is CRC-32C (Castagnoli: reflected polynomial
// 0x82F63B78, initial value and final xor 0xFFFFFFFF, as iSCSI and ext4)
// of the 128 header bytes with its own 4 bytes taken as 0. It detects every
// change of up to 32 adjacent bits: a header with a field altered (a rank,
// a world size, a clock kind or anchor) is refused, not read as another
// run's. Version 1 files, written before the checksum, are refused: a
// later header relabelled 1 would pass with any field altered.
//
// A block header is the magic "CCBK" (uint32 0x4b424343), the event count
// (uint32, 1 to BlockEvents) and a checksum (uint64) of the events: their
// CRC-32C (BlockSum) in the low 32 bits, 0 in the high 32. It detects every
// burst of up to 32 flipped bits and every change of 2 bits in a block.
// Version 2 files are refused: their block sum (h = rotl(h, 1) xor w over
// 64-bit words) cancels on two equal bit flips 64 words (8 events) apart.
// The last event of the last block is EndOp; nothing may follow it.
//
// An event:
//
//	off  size  field
//	0    1     op (Op)
//	1    1     flags (Flag*; other bits are refused)
//	2    2     reserved, 0 (other values are refused)
//	4    4     comm: the rank's local communicator index (CommDef), -1 unknown
//	8    4     peer: destination, source or root as a world rank (Peer* when not a rank)
//	12   4     tag
//	16   4     peer2: Sendrecv's actual source; a creating call's new local comm
//	20   4     tag2: Sendrecv's actual receive tag
//	24   8     bytes sent: count x MPI_Type_size (collectives: this rank's total;
//	           Recv, Irecv, Recv_init: the posted buffer)
//	32   8     bytes received (a receive's actual count, -1 undefined)
//	40   8     req: the request handle (non-blocking calls, Start, Complete), or a count
//	48   8     t0: entry, clock units since the origin
//	56   8     t1: exit
//
// Fields by op: a receive (Recv, Probe) carries the actual source and tag
// from its status, the flags say whether it asked for MPI_ANY_SOURCE or
// MPI_ANY_TAG. Wait, Test and their any/some/all forms are followed by one
// CompleteOp event per completed request (req its handle, peer its actual
// source as a rank of the request's communicator, FlagLocalPeer, tag and
// bytes received), and carry in req the number of completions and in tag the number of
// requests of the call; Test* set
// FlagTrue when something completed. Polls that find nothing (Test*,
// Iprobe without FlagTrue) back to back are one PollRunOp event: bytes
// counts the calls, peer, tag, peer2 and tag2 those of Test, Testany,
// Testsome or Testall, and Iprobe; t0 is the first's entry and t1 the
// last's exit, so a polling loop's spinning between its calls counts as
// time in MPI. A cancelled receive completes with a negative source.
// CommDefOp (comm the local index, peer
// the size, req the global identity, the same on every member) is followed
// by one CommMemberOp per member (peer its index, peer2 its world rank);
// MPI_COMM_WORLD is local index 0 with identity 0, MPI_COMM_SELF index 1.
// Definitions have times 0. FlushOp is the library's own write of a block;
// it follows the event that filled the block, so it may fall between a
// call and its completions or a definition's members,
// and EndOp (bytes: events in the file, req: CLOCK_MONOTONIC ns at the
// end, t1: the raw clock at the end) closes the file; with the header's
// origin they give the clock's rate.
//
// The byte counts each op carries (the reader refuses others, as no
// library writes them): a send's bytes received are 0; a Recv's or
// Sendrecv_replace's are at most its buffer (or -1); Irecv's and
// Recv_init's are 0 (the size is the completion's); Probe and a
// completion send 0; Iprobe and Test* have bytes 1 for a poll that found
// nothing and 0 when one found something, bytes received 0 (an Iprobe
// that found a message: its size); Bcast and the reductions carry their
// buffer's size in both; Wait*, Start, Cancel, Request_free, Barrier,
// Ibarrier, the communicator calls, Finalize, definitions and flushes
// carry 0 in both; a poll run counts at least 1 call, as many as its
// per-kind counts in peer, tag, peer2 and tag2 together, and receives 0;
// the end receives 0. No byte count of any op exceeds MaxCallBytes (128
// GiB less 64 B, 2^31-1 elements of 64 bytes), and a receive's status
// (bytes received of Recv, Probe, Iprobe, Sendrecv, Sendrecv_replace and
// a completion) MaxStatusBytes (2^31-1, MPI_Get_count's int).
package trace

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
)

// The format's constants; trace/pmpi/cctrace.h defines the same (checked by
// TestCHeaderAgrees).
// MaxEagerBytes bounds an eager limit in a header: 4 GiB. An eager send
// is buffered whole at the receiver before it is matched; no MPI's
// default or any sensible setting buffers a message of that size, so a
// larger limit is a corrupt field, which would make every send of a
// replay eager.
const MaxEagerBytes = 1 << 32

// MaxTraceNs bounds the times of a trace's events after its origin: 1e8
// s, about 3 years, longer than any batch job, and a tenth of the longest
// time a record holds (results.MaxRecordSeconds), so that a replay's
// times, which add start-up and model terms to the trace's, stay records.
const MaxTraceNs = 1e17

const (
	Magic            = "CCTRACE"
	Version          = 3
	HeaderBytes      = 128
	HeaderSumOffset  = 28
	EventBytes       = 64
	BlockMagic       = 0x4b424343
	BlockHeaderBytes = 16
	BlockEvents      = 1024
	HostBytes        = 48

	ClockNS  = 0
	ClockTSC = 1

	PeerNone = -1
	PeerAny  = -2
	PeerNull = -3

	FlagAnySource = 0x01
	FlagAnyTag    = 0x02
	FlagInPlace   = 0x04
	FlagLocalPeer = 0x08
	FlagTrue      = 0x10
	// FlagsDefined are the bits the library sets; the reader refuses an
	// event with any other, as it refuses nonzero reserved bytes.
	FlagsDefined = FlagAnySource | FlagAnyTag | FlagInPlace | FlagLocalPeer | FlagTrue
)

// castagnoli is CRC-32C's table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// HeaderSum is the checksum of a header (HeaderBytes long): CRC-32C of its
// bytes with the checksum field's 4 taken as 0 (cctrace.h's cct_header_sum).
func HeaderSum(h []byte) uint32 {
	var b [HeaderBytes]byte
	copy(b[:], h[:HeaderBytes])
	binary.LittleEndian.PutUint32(b[HeaderSumOffset:], 0)
	return crc32.Checksum(b[:], castagnoli)
}

// BlockSum is a block's checksum: CRC-32C of its events' bytes (cctrace.h's
// cct_block_sum), stored in the low 32 bits of the block header's checksum
// field, whose high 32 bits are 0.
func BlockSum(events []byte) uint32 { return crc32.Checksum(events, castagnoli) }

// Limits of what the library can record, which the reader holds traces to.
const (
	// TagAny is MPI_ANY_TAG as the library records it (the MPI's own
	// value, -1 in Open MPI and MPICH): a receive may ask for it, and a
	// receive from MPI_PROC_NULL reports it. Every other tag is at least 0.
	TagAny = -1

	// MaxCount is the largest count of an MPI call's buffer (an int).
	MaxCount = 1<<31 - 1
	// MaxTypeBytes bounds the size of one element of a call's buffer as
	// the reader accepts it: twice MPI's largest predefined type
	// (MPI_C_LONG_DOUBLE_COMPLEX, 32 bytes).
	MaxTypeBytes = 64
	// MaxCallBytes is the most bytes one buffer argument describes as
	// the reader accepts it, in bytes sent and (but for a status's count)
	// bytes received of every op: MaxCount elements of MaxTypeBytes, 128
	// GiB less 64 B. The library records count x MPI_Type_size, both ints,
	// so 2^62 could be written, but no rank holds a buffer of more than
	// 128 GiB; a larger count is a corrupt or crafted field, which a
	// replay would price as transfers of hours no run made.
	MaxCallBytes = MaxCount * MaxTypeBytes
	// MaxStatusBytes is the most bytes a receive's status reports: the
	// library records MPI_Get_count with MPI_BYTE, an int, and -1 for
	// MPI_UNDEFINED (a message of more bytes).
	MaxStatusBytes = MaxCount
)

// Op is an event's operation.
type Op uint8

// The operations (cctrace.h's enum cct_op).
const (
	OpFinalize           Op = 1
	OpSend               Op = 2
	OpSsend              Op = 3
	OpBsend              Op = 4
	OpRsend              Op = 5
	OpRecv               Op = 6
	OpIsend              Op = 7
	OpIssend             Op = 8
	OpIbsend             Op = 9
	OpIrsend             Op = 10
	OpIrecv              Op = 11
	OpSendInit           Op = 12
	OpSsendInit          Op = 13
	OpRecvInit           Op = 14
	OpStart              Op = 15
	OpWait               Op = 16
	OpWaitall            Op = 17
	OpWaitany            Op = 18
	OpWaitsome           Op = 19
	OpTest               Op = 20
	OpTestall            Op = 21
	OpTestany            Op = 22
	OpTestsome           Op = 23
	OpComplete           Op = 24
	OpRequestFree        Op = 25
	OpSendrecv           Op = 26
	OpSendrecvReplace    Op = 27
	OpProbe              Op = 28
	OpIprobe             Op = 29
	OpBarrier            Op = 30
	OpBcast              Op = 31
	OpReduce             Op = 32
	OpAllreduce          Op = 33
	OpGather             Op = 34
	OpGatherv            Op = 35
	OpScatter            Op = 36
	OpScatterv           Op = 37
	OpAllgather          Op = 38
	OpAllgatherv         Op = 39
	OpAlltoall           Op = 40
	OpAlltoallv          Op = 41
	OpReduceScatter      Op = 42
	OpReduceScatterBlock Op = 43
	OpScan               Op = 44
	OpExscan             Op = 45
	OpIbarrier           Op = 46
	OpIbcast             Op = 47
	OpIreduce            Op = 48
	OpIallreduce         Op = 49
	OpIallgather         Op = 50
	OpIalltoall          Op = 51
	OpCommSplit          Op = 52
	OpCommDup            Op = 53
	OpCommCreate         Op = 54
	OpCommFree           Op = 55
	OpCommDef            Op = 56
	OpCommMember         Op = 57
	OpFlush              Op = 58
	OpEnd                Op = 59
	OpCommSplitType      Op = 60
	OpCartCreate         Op = 61
	OpPollRun            Op = 62
	OpCancel             Op = 63
	OpCartSub            Op = 64
	OpCommCreateGroup    Op = 65
	OpGraphCreate        Op = 66 // Graph_create, Dist_graph_create, Dist_graph_create_adjacent
	OpIntercommMerge     Op = 67
	opLimit              Op = 68
)

var opNames = [opLimit]string{
	OpFinalize: "Finalize", OpSend: "Send", OpSsend: "Ssend", OpBsend: "Bsend", OpRsend: "Rsend",
	OpRecv: "Recv", OpIsend: "Isend", OpIssend: "Issend", OpIbsend: "Ibsend", OpIrsend: "Irsend",
	OpIrecv: "Irecv", OpSendInit: "Send_init", OpSsendInit: "Ssend_init", OpRecvInit: "Recv_init",
	OpStart: "Start", OpWait: "Wait", OpWaitall: "Waitall", OpWaitany: "Waitany", OpWaitsome: "Waitsome",
	OpTest: "Test", OpTestall: "Testall", OpTestany: "Testany", OpTestsome: "Testsome",
	OpComplete: "(complete)", OpRequestFree: "Request_free", OpSendrecv: "Sendrecv",
	OpSendrecvReplace: "Sendrecv_replace", OpProbe: "Probe", OpIprobe: "Iprobe",
	OpBarrier: "Barrier", OpBcast: "Bcast", OpReduce: "Reduce", OpAllreduce: "Allreduce",
	OpGather: "Gather", OpGatherv: "Gatherv", OpScatter: "Scatter", OpScatterv: "Scatterv",
	OpAllgather: "Allgather", OpAllgatherv: "Allgatherv", OpAlltoall: "Alltoall", OpAlltoallv: "Alltoallv",
	OpReduceScatter: "Reduce_scatter", OpReduceScatterBlock: "Reduce_scatter_block",
	OpScan: "Scan", OpExscan: "Exscan", OpIbarrier: "Ibarrier", OpIbcast: "Ibcast",
	OpIreduce: "Ireduce", OpIallreduce: "Iallreduce", OpIallgather: "Iallgather", OpIalltoall: "Ialltoall",
	OpCommSplit: "Comm_split", OpCommDup: "Comm_dup", OpCommCreate: "Comm_create", OpCommFree: "Comm_free",
	OpCommDef: "(comm def)", OpCommMember: "(comm member)", OpFlush: "(trace flush)", OpEnd: "(end)",
	OpCommSplitType: "Comm_split_type", OpCartCreate: "Cart_create", OpPollRun: "(polls that found nothing)", OpCancel: "Cancel",
	OpCartSub: "Cart_sub", OpCommCreateGroup: "Comm_create_group", OpGraphCreate: "Graph_create", OpIntercommMerge: "Intercomm_merge",
}

// String is the MPI call's name without its MPI_ prefix ("Isend"), or the
// record's kind in parentheses for the records that are not calls.
func (o Op) String() string {
	if o < opLimit && opNames[o] != "" {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Known reports whether o is an operation of this version.
func (o Op) Known() bool { return o < opLimit && opNames[o] != "" }

// Call reports whether the event is an MPI call of the program (its time
// counts as time in MPI), not a record of the format (completions,
// definitions, the library's flushes, the end).
func (o Op) Call() bool {
	switch o {
	case OpComplete, OpCommDef, OpCommMember, OpFlush, OpEnd:
		return false
	}
	return o.Known()
}

// Collective reports whether o is a collective operation (blocking or not).
func (o Op) Collective() bool { return o >= OpBarrier && o <= OpIalltoall }

// CreatesComm reports whether o creates a communicator (its peer2 is the
// new communicator's local index).
func (o Op) CreatesComm() bool {
	switch o {
	case OpCommSplit, OpCommDup, OpCommCreate, OpCommSplitType, OpCartCreate, OpCartSub, OpCommCreateGroup, OpGraphCreate, OpIntercommMerge:
		return true
	}
	return false
}

// Sends reports whether o posts a point-to-point send.
func (o Op) Sends() bool {
	switch o {
	case OpSend, OpSsend, OpBsend, OpRsend, OpIsend, OpIssend, OpIbsend, OpIrsend, OpSendrecv, OpSendrecvReplace:
		return true
	}
	return false
}

// PostsReceive reports whether o is a point-to-point receive whose Bytes
// is its posted buffer (count x type size), not bytes sent: Recv, Irecv,
// Recv_init.
func (o Op) PostsReceive() bool { return o == OpRecv || o == OpIrecv || o == OpRecvInit }
