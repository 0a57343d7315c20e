/*
 * The commcost trace format, version 3: the C side's layout. Go's
 * trace/format.go documents the same layout and a test there checks that
 * every constant below has the same value in Go.
 *
 * A rank's file is a 128-byte header, then blocks. A block is a 16-byte
 * block header (magic, event count, CRC-32C of the events) followed by
 * that many 64-byte events. The last block ends with a CCT_END event; a
 * file without it is torn. All integers are little endian. The header's
 * checksum (since version 2; version 1 has 0 there) is cct_header_sum's;
 * the block's (version 3; version 2 had a rotate-xor that two equal bit
 * flips 64 words apart cancel) is cct_block_sum's.
 */
#ifndef COMMCOST_CCTRACE_H
#define COMMCOST_CCTRACE_H

#include <stdint.h>

#include "cccrc.h"

#define CCT_MAGIC "CCTRACE"      /* 7 characters and a NUL: 8 bytes */
#define CCT_VERSION 3
#define CCT_HEADER_BYTES 128
#define CCT_HEADER_SUM_OFFSET 28 /* offsetof(cct_header, checksum) */
#define CCT_EVENT_BYTES 64
#define CCT_BLOCK_MAGIC 0x4b424343u /* "CCBK" little endian */
#define CCT_BLOCK_HEADER_BYTES 16
#define CCT_BLOCK_EVENTS 1024     /* events buffered per rank before a write */
#define CCT_HOST_BYTES 48

/* Clock kinds (header.clock): raw ticks of the x86 time-stamp counter,
 * converted to ns from the anchors in the header and the END event, or
 * CLOCK_MONOTONIC nanoseconds. */
#define CCT_CLOCK_NS 0
#define CCT_CLOCK_TSC 1

/* Peer values that are not ranks. */
#define CCT_PEER_NONE (-1)
#define CCT_PEER_ANY (-2)
#define CCT_PEER_NULL (-3)

/* Event flags. */
#define CCT_F_ANY_SOURCE 0x01 /* the call asked for MPI_ANY_SOURCE */
#define CCT_F_ANY_TAG 0x02    /* the call asked for MPI_ANY_TAG */
#define CCT_F_IN_PLACE 0x04   /* MPI_IN_PLACE */
#define CCT_F_LOCAL_PEER 0x08 /* peer is a rank of comm, not of the world */
#define CCT_F_TRUE 0x10       /* a test or probe that reported true */

enum cct_op {
	CCT_FINALIZE = 1,
	CCT_SEND = 2,
	CCT_SSEND = 3,
	CCT_BSEND = 4,
	CCT_RSEND = 5,
	CCT_RECV = 6,
	CCT_ISEND = 7,
	CCT_ISSEND = 8,
	CCT_IBSEND = 9,
	CCT_IRSEND = 10,
	CCT_IRECV = 11,
	CCT_SEND_INIT = 12,
	CCT_SSEND_INIT = 13,
	CCT_RECV_INIT = 14,
	CCT_START = 15,
	CCT_WAIT = 16,
	CCT_WAITALL = 17,
	CCT_WAITANY = 18,
	CCT_WAITSOME = 19,
	CCT_TEST = 20,
	CCT_TESTALL = 21,
	CCT_TESTANY = 22,
	CCT_TESTSOME = 23,
	CCT_COMPLETE = 24,
	CCT_REQUEST_FREE = 25,
	CCT_SENDRECV = 26,
	CCT_SENDRECV_REPLACE = 27,
	CCT_PROBE = 28,
	CCT_IPROBE = 29,
	CCT_BARRIER = 30,
	CCT_BCAST = 31,
	CCT_REDUCE = 32,
	CCT_ALLREDUCE = 33,
	CCT_GATHER = 34,
	CCT_GATHERV = 35,
	CCT_SCATTER = 36,
	CCT_SCATTERV = 37,
	CCT_ALLGATHER = 38,
	CCT_ALLGATHERV = 39,
	CCT_ALLTOALL = 40,
	CCT_ALLTOALLV = 41,
	CCT_REDUCE_SCATTER = 42,
	CCT_REDUCE_SCATTER_BLOCK = 43,
	CCT_SCAN = 44,
	CCT_EXSCAN = 45,
	CCT_IBARRIER = 46,
	CCT_IBCAST = 47,
	CCT_IREDUCE = 48,
	CCT_IALLREDUCE = 49,
	CCT_IALLGATHER = 50,
	CCT_IALLTOALL = 51,
	CCT_COMM_SPLIT = 52,
	CCT_COMM_DUP = 53,
	CCT_COMM_CREATE = 54,
	CCT_COMM_FREE = 55,
	CCT_COMM_DEF = 56,
	CCT_COMM_MEMBER = 57,
	CCT_FLUSH = 58,
	CCT_END = 59,
	CCT_COMM_SPLIT_TYPE = 60,
	CCT_CART_CREATE = 61,
	CCT_POLL_RUN = 62,
	CCT_CANCEL = 63,
	CCT_CART_SUB = 64,
	CCT_COMM_CREATE_GROUP = 65,
	CCT_GRAPH_CREATE = 66,
	CCT_INTERCOMM_MERGE = 67,
	CCT_OP_LIMIT = 68
};

/* One event: 64 bytes. Fields by op are documented in trace/format.go. */
typedef struct {
	uint8_t op;
	uint8_t flags;
	uint16_t reserved;
	int32_t comm;  /* the rank's local communicator index (COMM_DEF) */
	int32_t peer;  /* destination, source or root as a world rank */
	int32_t tag;
	int32_t peer2; /* Sendrecv's source */
	int32_t tag2;  /* Sendrecv's receive tag */
	int64_t bytes; /* bytes sent (count x MPI_Type_size) */
	int64_t bytes2; /* bytes received */
	uint64_t req;  /* request handle, or a count */
	int64_t t0;    /* call entry, clock ticks since the origin */
	int64_t t1;    /* call exit */
} cct_event;

typedef struct {
	char magic[8];
	uint16_t version;
	uint16_t header_bytes;
	uint16_t event_bytes;
	uint16_t clock;
	int32_t rank;
	int32_t size;
	int32_t pid;
	uint32_t checksum;      /* cct_header_sum of the header */
	int64_t origin_ticks;   /* the clock at the origin (after MPI_Init's barrier) */
	int64_t origin_mono_ns; /* CLOCK_MONOTONIC at the origin */
	int64_t origin_real_ns; /* CLOCK_REALTIME at the origin */
	int64_t init_ticks;     /* duration of MPI_Init, in clock units */
	int64_t eager_shm;      /* the MPI's eager limit in bytes within a host, -1 unknown */
	int64_t eager_net;      /* and between hosts, -1 unknown */
	char host[CCT_HOST_BYTES];
} cct_header;

typedef struct {
	uint32_t magic;
	uint32_t count;
	uint64_t checksum; /* cct_block_sum of the events; the high 32 bits are 0 */
} cct_block_header;

/* cct_header_sum is the header's checksum: CRC-32C (reflected polynomial
 * 0x82F63B78, initial value and final xor 0xFFFFFFFF) of its
 * CCT_HEADER_BYTES bytes with the checksum field taken as 0. Go's
 * trace.HeaderSum computes the same (TestCHeaderSumAgrees). Once per file,
 * so the table is fast enough. */
static inline uint32_t cct_header_sum(const cct_header *h)
{
	static const unsigned char zero[4];
	const unsigned char *p = (const unsigned char *)h;
	uint32_t crc = cct_crc32c_table(0, p, CCT_HEADER_SUM_OFFSET);
	crc = cct_crc32c_table(crc, zero, sizeof zero);
	return cct_crc32c_table(crc, p + CCT_HEADER_SUM_OFFSET + 4, CCT_HEADER_BYTES - CCT_HEADER_SUM_OFFSET - 4);
}

/* cct_block_sum is a block's checksum: CRC-32C of its n events' bytes,
 * stored in the low 32 bits of cct_block_header.checksum. CRC-32C detects
 * every burst of up to 32 flipped bits and every change of 2 bits in a
 * block of 1024 events. Hardware CRC where the CPU has it
 * (cct_crc32c_init). */
static inline uint32_t cct_block_sum(const cct_event *e, int n)
{
	return cct_crc32c(0, e, (size_t)n * CCT_EVENT_BYTES);
}

_Static_assert(sizeof(cct_event) == CCT_EVENT_BYTES, "event size");
_Static_assert(sizeof(cct_header) == CCT_HEADER_BYTES, "header size");
_Static_assert(sizeof(cct_block_header) == CCT_BLOCK_HEADER_BYTES, "block header size");
_Static_assert(__builtin_offsetof(cct_header, checksum) == CCT_HEADER_SUM_OFFSET, "header checksum offset");

#endif
