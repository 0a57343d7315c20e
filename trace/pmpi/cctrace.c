/*
 * libcommcost-trace: a PMPI interposition library. Loaded with LD_PRELOAD
 * into an unmodified MPI program, it records every intercepted MPI call of
 * each rank (operation, communicator, peers and roots as world ranks, tag,
 * bytes, requests, the actual source of wildcard receives, entry and exit
 * times) into DIR/rank-N.cct, DIR from COMMCOST_TRACE_DIR. The format is
 * cctrace.h's (version 3), read by package trace.
 *
 * Memory is bounded: a rank buffers CCT_BLOCK_EVENTS events and writes a
 * block when the buffer fills; the file is written as .rank-N.cct.part and
 * renamed at MPI_Finalize, so a rank that never finalises leaves no file
 * that looks complete. The time of each block write is itself an event
 * (CCT_FLUSH) so that it is not mistaken for the program's compute.
 *
 * If the trace file cannot be created or written (a full disk) the program
 * runs on untraced and the unfinished file is removed: the library never
 * changes what the program does. The failure (errno, the operation, the
 * file) goes to the launcher's pipe, fd COMMCOST_TRACE_STATUS_FD, which
 * commcost trace reads after the program exits, else one message to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cctrace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CCT_CLOCK CCT_CLOCK_TSC
static inline int64_t ticks(void) { return (int64_t)__rdtsc(); }
#else
#define CCT_CLOCK CCT_CLOCK_NS
static inline int64_t ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
#endif

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- state ---- */

typedef struct {
	uint64_t handle;
	int32_t local; /* index in comms */
	int32_t size;
	int32_t *world; /* world rank of each comm rank */
	int live;
} comm_info;

static int on;     /* tracing */
static int fd = -1;
static int world_rank, world_size;
static int64_t origin;
static cct_event buf[CCT_BLOCK_EVENTS];
static int nbuf;
static int64_t nevents;
static char path_part[4096], path_final[4096];
static int status_fd = -1; /* the launcher's pipe for a failure, -1 none */
static comm_info *comms;
static int ncomms, capcomms;
static int last_comm = -1;
static uint32_t comm_counter;
static uint64_t null_req; /* MPI_REQUEST_NULL's handle: no completion */

static uint64_t handle_of(const void *h, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, h, n < sizeof v ? n : sizeof v);
	return v;
}
#define HANDLE(x) handle_of(&(x), sizeof(x))

static int write_all(const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fail stops tracing after the operation what ("create", "write", "close",
 * "rename") failed with errno, and removes the unfinished file: a file
 * under the .part name is no trace, and on a full disk it holds space. The
 * launcher's pipe gets one line "ERRNO\tWHAT\tPATH". */
static void fail(const char *what)
{
	int err = errno;
	on = 0;
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlink(path_part);
	if (status_fd >= 0) {
		char line[sizeof path_part + 64];
		int n = snprintf(line, sizeof line, "%d\t%s\t%s", err, what, path_part);
		if (n > 0 && write(status_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) == n) {
			close(status_fd);
			status_fd = -1;
			return;
		}
		close(status_fd);
		status_fd = -1;
	}
	fprintf(stderr, "commcost-trace: rank %d: cannot %s %s: %s; the rest of the run is not traced\n",
		world_rank, what, path_part, strerror(err));
}

/* status_pipe takes the launcher's pipe from COMMCOST_TRACE_STATUS_FD when
 * that names an open FIFO (not a file the program opened), close-on-exec
 * so that programs the rank starts do not hold it. */
static void status_pipe(void)
{
	const char *s = getenv("COMMCOST_TRACE_STATUS_FD");
	if (s == NULL || *s == 0)
		return;
	char *end;
	long v = strtol(s, &end, 10);
	struct stat st;
	if (*end != 0 || v < 3 || v > 1 << 20 || fstat((int)v, &st) < 0 || !S_ISFIFO(st.st_mode))
		return;
	status_fd = (int)v;
	fcntl(status_fd, F_SETFD, FD_CLOEXEC);
}

static void write_block(void)
{
	cct_block_header bh = {CCT_BLOCK_MAGIC, (uint32_t)nbuf, cct_block_sum(buf, nbuf)};
	if (write_all(&bh, sizeof bh) < 0 || write_all(buf, (size_t)nbuf * CCT_EVENT_BYTES) < 0)
		fail("write");
	nbuf = 0;
}

/* next returns the next event slot, writing the buffer first when it is
 * full. The write's own time becomes a FLUSH event that follows the event
 * being recorded, whose call ended before the write began. */
static cct_event *next(void)
{
	if (nbuf == CCT_BLOCK_EVENTS) {
		int64_t t0 = ticks();
		write_block();
		int64_t t1 = ticks();
		cct_event *f = &buf[1];
		memset(f, 0, sizeof *f);
		f->op = CCT_FLUSH;
		f->peer = f->peer2 = CCT_PEER_NONE;
		f->t0 = t0 - origin;
		f->t1 = t1 - origin;
		nbuf = 2;
		nevents += 2;
		return &buf[0];
	}
	nevents++;
	return &buf[nbuf++];
}

static inline cct_event *ev(int op, int64_t t0, int64_t t1)
{
	cct_event *e = next();
	e->op = (uint8_t)op;
	e->flags = 0;
	e->reserved = 0;
	e->comm = 0;
	e->peer = CCT_PEER_NONE;
	e->tag = 0;
	e->peer2 = CCT_PEER_NONE;
	e->tag2 = 0;
	e->bytes = 0;
	e->bytes2 = 0;
	e->req = 0;
	e->t0 = t0 - origin;
	e->t1 = t1 - origin;
	return e;
}

/* polled merges a poll that found nothing (Test, Testany, Testsome,
 * Testall, Iprobe) into the previous event when that is one too: a polling
 * loop becomes one POLL_RUN event from the first call's entry to the last
 * one's exit, bytes counting the calls and peer, tag, peer2, tag2 the
 * calls of Test, Testany, Testsome or Testall, and Iprobe. */
static inline int32_t *poll_count(cct_event *e, int op)
{
	switch (op) {
	case CCT_TEST:
		return &e->peer;
	case CCT_TESTANY:
		return &e->tag;
	case CCT_IPROBE:
		return &e->tag2;
	default:
		return &e->peer2;
	}
}

static inline int failed_poll(const cct_event *p)
{
	if (p->flags & CCT_F_TRUE)
		return 0;
	switch (p->op) {
	case CCT_TEST:
	case CCT_TESTANY:
	case CCT_TESTSOME:
	case CCT_TESTALL:
	case CCT_IPROBE:
		return 1;
	}
	return 0;
}

static inline int polled(int op, int64_t t1)
{
	if (nbuf == 0)
		return 0;
	cct_event *p = &buf[nbuf - 1];
	if (p->op == CCT_POLL_RUN) {
		int32_t *c = poll_count(p, op);
		if (*c == INT32_MAX)
			return 0;
		++*c;
	} else if (failed_poll(p)) {
		int prev = p->op;
		p->op = CCT_POLL_RUN;
		p->flags = 0;
		p->comm = -1;
		p->peer = p->tag = p->peer2 = p->tag2 = 0;
		p->bytes2 = 0;
		p->req = 0;
		*poll_count(p, prev) = 1;
		++*poll_count(p, op);
	} else
		return 0;
	p->t1 = t1 - origin;
	p->bytes++;
	return 1;
}


/* ---- communicators ---- */

static comm_info *comm_add(MPI_Comm c, uint64_t id)
{
	if (ncomms == capcomms) {
		capcomms = capcomms ? 2 * capcomms : 16;
		comms = realloc(comms, (size_t)capcomms * sizeof *comms);
	}
	comm_info *ci = &comms[ncomms];
	ci->handle = HANDLE(c);
	ci->local = ncomms++;
	ci->live = 1;
	PMPI_Comm_size(c, &ci->size);
	ci->world = malloc((size_t)ci->size * sizeof(int32_t));
	MPI_Group g, wg;
	PMPI_Comm_group(c, &g);
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	int *in = malloc((size_t)ci->size * sizeof(int));
	for (int i = 0; i < ci->size; i++)
		in[i] = i;
	PMPI_Group_translate_ranks(g, ci->size, in, wg, (int *)ci->world);
	free(in);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	if (on) {
		/* metadata: times 0 */
		int64_t t = origin;
		cct_event *e = ev(CCT_COMM_DEF, t, t);
		e->comm = ci->local;
		e->peer = ci->size;
		e->req = id;
		for (int i = 0; i < ci->size; i++) {
			cct_event *m = ev(CCT_COMM_MEMBER, t, t);
			m->comm = ci->local;
			m->peer = i;
			m->peer2 = ci->world[i];
		}
	}
	return ci;
}

static comm_info *comm_find(MPI_Comm c)
{
	uint64_t h = HANDLE(c);
	if (last_comm >= 0 && comms[last_comm].handle == h && comms[last_comm].live)
		return &comms[last_comm];
	for (int i = ncomms - 1; i >= 0; i--)
		if (comms[i].handle == h && comms[i].live) {
			last_comm = i;
			return &comms[i];
		}
	return NULL;
}

/* A new communicator's identity is the same on all its ranks: its rank 0's
 * world rank and creation counter, broadcast once at creation. */
static int32_t comm_created(MPI_Comm nc)
{
	if (nc == MPI_COMM_NULL)
		return -1;
	int inter = 0;
	PMPI_Comm_test_inter(nc, &inter);
	if (inter)
		return -1;
	uint64_t id = ((uint64_t)(world_rank + 1) << 32) | ++comm_counter;
	PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, nc);
	return comm_add(nc, id)->local;
}

static inline int32_t world_of(comm_info *ci, int r, uint8_t *flags)
{
	if (r == MPI_ANY_SOURCE) {
		*flags |= CCT_F_ANY_SOURCE;
		return CCT_PEER_ANY;
	}
	if (r == MPI_PROC_NULL)
		return CCT_PEER_NULL;
	if (r < 0)
		return CCT_PEER_NONE;
	if (ci == NULL || r >= ci->size) {
		*flags |= CCT_F_LOCAL_PEER;
		return r;
	}
	return ci->world[r];
}

static inline int32_t comm_index(comm_info *ci) { return ci ? ci->local : -1; }

static inline int64_t tsize(MPI_Datatype t, int count)
{
	int s = 0;
	if (t == MPI_DATATYPE_NULL)
		return 0;
	PMPI_Type_size(t, &s);
	return (int64_t)s * count;
}

static int64_t status_bytes(const MPI_Status *st)
{
	int n = 0;
	PMPI_Get_count(st, MPI_BYTE, &n);
	return n == MPI_UNDEFINED ? -1 : n;
}

/* ---- eager limits from the MPI's control variables ---- */

static int64_t read_cvar(const char *name)
{
	int idx, count;
	MPI_T_cvar_handle h;
	if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS)
		return -1;
	char nm[256], desc[1024];
	int nl = sizeof nm, dl = sizeof desc, verb, bind, scope;
	MPI_Datatype dt;
	MPI_T_enum en;
	if (MPI_T_cvar_get_info(idx, nm, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS)
		return -1;
	if (bind != MPI_T_BIND_NO_OBJECT)
		return -1;
	if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS || count != 1)
		return -1;
	union {
		int i;
		unsigned u;
		unsigned long ul;
		unsigned long long ull;
		char pad[64];
	} v;
	memset(&v, 0, sizeof v);
	int64_t out = -1;
	if (MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
		if (dt == MPI_INT)
			out = v.i;
		else if (dt == MPI_UNSIGNED)
			out = v.u;
		else if (dt == MPI_UNSIGNED_LONG)
			out = (int64_t)v.ul;
		else if (dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_COUNT)
			out = (int64_t)v.ull;
	}
	MPI_T_cvar_handle_free(&h);
	return out;
}

static int64_t first_cvar(const char *const *names)
{
	for (; *names; names++) {
		int64_t v = read_cvar(*names);
		if (v >= 0)
			return v;
	}
	return -1;
}

/* ---- init and finalize ---- */

static void start(int64_t init_t0)
{
	MPI_Request nr = MPI_REQUEST_NULL;
	null_req = HANDLE(nr);
	cct_crc32c_init(0);
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	const char *dir = getenv("COMMCOST_TRACE_DIR");
	if (dir == NULL || *dir == 0)
		dir = "commcost-trace";
	mkdir(dir, 0777);
	status_pipe();
	snprintf(path_part, sizeof path_part, "%s/.rank-%d.cct.part", dir, world_rank);
	snprintf(path_final, sizeof path_final, "%s/rank-%d.cct", dir, world_rank);
	int prov;
	int64_t eshm = -1, enet = -1;
	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) == MPI_SUCCESS) {
		static const char *const shm[] = {"btl_vader_eager_limit", "btl_sm_eager_limit",
						  "MPIR_CVAR_CH4_SHM_POSIX_EAGER_MAX_MSG_SIZE",
						  "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", NULL};
		static const char *const net[] = {"btl_tcp_eager_limit", "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE",
						  "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", NULL};
		eshm = first_cvar(shm);
		enet = first_cvar(net);
		MPI_T_finalize();
	}
	fd = open(path_part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		fail("create");
		return;
	}
	PMPI_Barrier(MPI_COMM_WORLD);
	origin = ticks();
	cct_header hd;
	memset(&hd, 0, sizeof hd);
	memcpy(hd.magic, CCT_MAGIC, sizeof CCT_MAGIC);
	hd.version = CCT_VERSION;
	hd.header_bytes = CCT_HEADER_BYTES;
	hd.event_bytes = CCT_EVENT_BYTES;
	hd.clock = CCT_CLOCK;
	hd.rank = world_rank;
	hd.size = world_size;
	hd.pid = (int32_t)getpid();
	hd.origin_ticks = origin;
	hd.origin_mono_ns = clock_ns(CLOCK_MONOTONIC);
	hd.origin_real_ns = clock_ns(CLOCK_REALTIME);
	hd.init_ticks = origin - init_t0;
	hd.eager_shm = eshm;
	hd.eager_net = enet;
	gethostname(hd.host, sizeof hd.host - 1);
	hd.checksum = cct_header_sum(&hd);
	on = 1;
	if (write_all(&hd, sizeof hd) < 0) {
		fail("write");
		return;
	}
	comm_add(MPI_COMM_WORLD, 0);
	comm_add(MPI_COMM_SELF, ((uint64_t)(world_rank + 1) << 32));
}

int MPI_Init(int *argc, char ***argv)
{
	int64_t t0 = ticks();
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		start(t0);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int64_t t0 = ticks();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		start(t0);
	return rc;
}

int MPI_Finalize(void)
{
	if (!on)
		return PMPI_Finalize();
	int64_t t0 = ticks();
	/* the FINALIZE event is written before the call, as MPI may not be
	 * usable after it; its t1 is the entry time (the call's own time is
	 * teardown, not communication) */
	ev(CCT_FINALIZE, t0, t0);
	cct_event *e = ev(CCT_END, t0, t0);
	e->bytes = nevents;
	e->req = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	e->t1 = ticks(); /* raw: with req, the end anchor of the tick rate */
	write_block();
	on = 0;
	if (fd >= 0) {
		int c = close(fd);
		fd = -1; /* closed even when close fails */
		if (c < 0)
			fail("close");
		else if (rename(path_part, path_final) < 0)
			fail("rename");
	}
	return PMPI_Finalize();
}

/* ---- point to point ---- */

#define P2P_BODY(OP, peerexp)                                        \
	cct_event *e = ev(OP, t0, t1);                                  \
	comm_info *ci = comm_find(comm);                                \
	e->comm = comm_index(ci);                                       \
	e->peer = world_of(ci, peerexp, &e->flags);                     \
	e->tag = tag;                                                   \
	e->bytes = tsize(datatype, count);

#define BLOCKING_SEND(NAME, OP)                                                                      \
	int NAME(const void *b, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)       \
	{                                                                                                \
		if (!on)                                                                                 \
			return P##NAME(b, count, datatype, dest, tag, comm);                             \
		int64_t t0 = ticks();                                                                    \
		int rc = P##NAME(b, count, datatype, dest, tag, comm);                                   \
		int64_t t1 = ticks();                                                                    \
		P2P_BODY(OP, dest)                                                                       \
		return rc;                                                                               \
	}

BLOCKING_SEND(MPI_Send, CCT_SEND)
BLOCKING_SEND(MPI_Ssend, CCT_SSEND)
BLOCKING_SEND(MPI_Bsend, CCT_BSEND)
BLOCKING_SEND(MPI_Rsend, CCT_RSEND)

int MPI_Recv(void *b, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	if (!on)
		return PMPI_Recv(b, count, datatype, source, tag, comm, status);
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	int64_t t0 = ticks();
	int rc = PMPI_Recv(b, count, datatype, source, tag, comm, status);
	int64_t t1 = ticks();
	cct_event *e = ev(CCT_RECV, t0, t1);
	comm_info *ci = comm_find(comm);
	e->comm = comm_index(ci);
	if (source == MPI_ANY_SOURCE)
		e->flags |= CCT_F_ANY_SOURCE;
	if (tag == MPI_ANY_TAG)
		e->flags |= CCT_F_ANY_TAG;
	if (source == MPI_PROC_NULL) {
		e->peer = CCT_PEER_NULL;
		e->tag = tag;
	} else {
		e->peer = world_of(ci, status->MPI_SOURCE, &e->flags);
		e->tag = status->MPI_TAG;
	}
	e->bytes2 = source == MPI_PROC_NULL ? 0 : status_bytes(status);
	e->bytes = tsize(datatype, count); /* the posted buffer */
	return rc;
}

#define NONBLOCKING_SEND(NAME, OP)                                                                   \
	int NAME(const void *b, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,      \
		 MPI_Request *req)                                                                       \
	{                                                                                                \
		if (!on)                                                                                 \
			return P##NAME(b, count, datatype, dest, tag, comm, req);                        \
		int64_t t0 = ticks();                                                                    \
		int rc = P##NAME(b, count, datatype, dest, tag, comm, req);                              \
		int64_t t1 = ticks();                                                                    \
		P2P_BODY(OP, dest)                                                                       \
		e->req = HANDLE(*req);                                                                   \
		return rc;                                                                               \
	}

NONBLOCKING_SEND(MPI_Isend, CCT_ISEND)
NONBLOCKING_SEND(MPI_Issend, CCT_ISSEND)
NONBLOCKING_SEND(MPI_Ibsend, CCT_IBSEND)
NONBLOCKING_SEND(MPI_Irsend, CCT_IRSEND)
NONBLOCKING_SEND(MPI_Send_init, CCT_SEND_INIT)
NONBLOCKING_SEND(MPI_Ssend_init, CCT_SSEND_INIT)
/* Buffered and ready persistent sends match and complete as a standard
 * one whose receive is posted (a ready send's contract): recorded as
 * Send_init, so their Starts are replayed, not refused as unknown. */
NONBLOCKING_SEND(MPI_Bsend_init, CCT_SEND_INIT)
NONBLOCKING_SEND(MPI_Rsend_init, CCT_SEND_INIT)

#define RECV_POST(NAME, OP)                                                                          \
	int NAME(void *b, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,          \
		 MPI_Request *req)                                                                       \
	{                                                                                                \
		if (!on)                                                                                 \
			return P##NAME(b, count, datatype, source, tag, comm, req);                      \
		int64_t t0 = ticks();                                                                    \
		int rc = P##NAME(b, count, datatype, source, tag, comm, req);                            \
		int64_t t1 = ticks();                                                                    \
		P2P_BODY(OP, source)                                                                     \
		if (tag == MPI_ANY_TAG)                                                                  \
			e->flags |= CCT_F_ANY_TAG;                                                       \
		e->req = HANDLE(*req);                                                                   \
		return rc;                                                                               \
	}

RECV_POST(MPI_Irecv, CCT_IRECV)
RECV_POST(MPI_Recv_init, CCT_RECV_INIT)

int MPI_Start(MPI_Request *req)
{
	if (!on)
		return PMPI_Start(req);
	int64_t t0 = ticks();
	int rc = PMPI_Start(req);
	int64_t t1 = ticks();
	ev(CCT_START, t0, t1)->req = HANDLE(*req);
	return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
	if (!on)
		return PMPI_Startall(n, reqs);
	int64_t t0 = ticks();
	int rc = PMPI_Startall(n, reqs);
	int64_t t1 = ticks();
	for (int i = 0; i < n; i++)
		ev(CCT_START, t0, t1)->req = HANDLE(reqs[i]);
	return rc;
}

int MPI_Cancel(MPI_Request *req)
{
	if (!on)
		return PMPI_Cancel(req);
	uint64_t h = HANDLE(*req);
	int64_t t0 = ticks();
	int rc = PMPI_Cancel(req);
	int64_t t1 = ticks();
	ev(CCT_CANCEL, t0, t1)->req = h;
	return rc;
}

int MPI_Request_free(MPI_Request *req)
{
	if (!on)
		return PMPI_Request_free(req);
	uint64_t h = HANDLE(*req);
	int64_t t0 = ticks();
	int rc = PMPI_Request_free(req);
	int64_t t1 = ticks();
	ev(CCT_REQUEST_FREE, t0, t1)->req = h;
	return rc;
}

/* complete writes the completion of one request: its handle and, for a
 * receive, the actual source (a rank of the request's communicator, which
 * the reader translates), tag and bytes. */
static void complete(int64_t t, uint64_t h, const MPI_Status *st)
{
	if (h == null_req)
		return;
	cct_event *e = ev(CCT_COMPLETE, t, t);
	e->req = h;
	e->flags = CCT_F_LOCAL_PEER;
	if (st != NULL) {
		e->peer = st->MPI_SOURCE;
		e->tag = st->MPI_TAG;
		e->bytes2 = status_bytes(st);
	}
}

#define STACK_REQS 64

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	if (!on)
		return PMPI_Wait(req, status);
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	uint64_t h = HANDLE(*req);
	int64_t t0 = ticks();
	int rc = PMPI_Wait(req, status);
	int64_t t1 = ticks();
	ev(CCT_WAIT, t0, t1)->req = h != null_req;
	complete(t1, h, status);
	return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	if (!on)
		return PMPI_Test(req, flag, status);
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	uint64_t h = HANDLE(*req);
	int64_t t0 = ticks();
	int rc = PMPI_Test(req, flag, status);
	int64_t t1 = ticks();
	if (!*flag && polled(CCT_TEST, t1))
		return rc;
	cct_event *e = ev(CCT_TEST, t0, t1);
	e->comm = -1;
	e->tag = 1;
	e->req = *flag ? 1 : 0;
	e->bytes = !*flag;
	if (*flag) {
		e->flags |= CCT_F_TRUE;
		complete(t1, h, status);
	}
	return rc;
}

/* multi records a call on n requests and the completion of those listed in
 * idx (all when idx is NULL and done). */
static void multi(int op, int64_t t0, int64_t t1, int n, const uint64_t *hs, const MPI_Status *sts,
		  int done, const int *idx, int nidx)
{
	int poll = op == CCT_TESTALL || op == CCT_TESTANY || op == CCT_TESTSOME;
	if (!done && poll && polled(op, t1))
		return;
	cct_event *e = ev(op, t0, t1);
	e->tag = n;
	e->comm = -1;
	if (!done) {
		e->req = 0;
		e->bytes = poll;
		return;
	}
	e->flags |= CCT_F_TRUE;
	if (idx == NULL) {
		e->req = (uint64_t)n;
		for (int i = 0; i < n; i++)
			complete(t1, hs[i], &sts[i]);
		return;
	}
	e->req = (uint64_t)nidx;
	for (int k = 0; k < nidx; k++)
		complete(t1, hs[idx[k]], &sts[k]);
}

/* The requests' handles are copied before a multi-request call, which
 * nulls the completed ones; the copies live in buffers kept across calls
 * (grown as needed), so no call allocates. */
static uint64_t *scr_hs;
static MPI_Status *scr_st;
static int scr_cap;

static void scratch(int n, MPI_Request *reqs)
{
	if (n > scr_cap) {
		scr_cap = n > 2 * scr_cap ? n : 2 * scr_cap;
		scr_hs = realloc(scr_hs, (size_t)scr_cap * sizeof *scr_hs);
		scr_st = realloc(scr_st, (size_t)scr_cap * sizeof *scr_st);
	}
	if (sizeof(MPI_Request) == sizeof(uint64_t))
		memcpy(scr_hs, reqs, (size_t)n * sizeof(uint64_t));
	else
		for (int i = 0; i < n; i++)
			scr_hs[i] = HANDLE(reqs[i]);
}


int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	if (!on)
		return PMPI_Waitall(n, reqs, sts);
	scratch(n, reqs);
	MPI_Status *use = sts == MPI_STATUSES_IGNORE ? scr_st : sts;
	int64_t t0 = ticks();
	int rc = PMPI_Waitall(n, reqs, use);
	int64_t t1 = ticks();
	multi(CCT_WAITALL, t0, t1, n, scr_hs, use, 1, NULL, 0);
	return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	if (!on)
		return PMPI_Testall(n, reqs, flag, sts);
	scratch(n, reqs);
	MPI_Status *use = sts == MPI_STATUSES_IGNORE ? scr_st : sts;
	int64_t t0 = ticks();
	int rc = PMPI_Testall(n, reqs, flag, use);
	int64_t t1 = ticks();
	multi(CCT_TESTALL, t0, t1, n, scr_hs, use, *flag, NULL, 0);
	return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	if (!on)
		return PMPI_Waitany(n, reqs, index, status);
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	scratch(n, reqs);
	int64_t t0 = ticks();
	int rc = PMPI_Waitany(n, reqs, index, status);
	int64_t t1 = ticks();
	int done = *index != MPI_UNDEFINED;
	multi(CCT_WAITANY, t0, t1, n, scr_hs, status, done, index, done ? 1 : 0);
	return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	if (!on)
		return PMPI_Testany(n, reqs, index, flag, status);
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	scratch(n, reqs);
	int64_t t0 = ticks();
	int rc = PMPI_Testany(n, reqs, index, flag, status);
	int64_t t1 = ticks();
	int done = *flag && *index != MPI_UNDEFINED;
	multi(CCT_TESTANY, t0, t1, n, scr_hs, status, done, index, done ? 1 : 0);
	return rc;
}

static int some(int op, int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	scratch(n, reqs);
	MPI_Status *use = sts == MPI_STATUSES_IGNORE ? scr_st : sts;
	int64_t t0 = ticks();
	int rc = op == CCT_WAITSOME ? PMPI_Waitsome(n, reqs, outcount, idx, use)
				    : PMPI_Testsome(n, reqs, outcount, idx, use);
	int64_t t1 = ticks();
	int done = *outcount != MPI_UNDEFINED && *outcount > 0;
	multi(op, t0, t1, n, scr_hs, use, done, idx, done ? *outcount : 0);
	return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	if (!on)
		return PMPI_Waitsome(n, reqs, outcount, idx, sts);
	return some(CCT_WAITSOME, n, reqs, outcount, idx, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	if (!on)
		return PMPI_Testsome(n, reqs, outcount, idx, sts);
	return some(CCT_TESTSOME, n, reqs, outcount, idx, sts);
}

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc_, MPI_Datatype rt,
		 int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	if (!on)
		return PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc_, rt, source, rtag, comm, status);
	MPI_Status s;
	if (status == MPI_STATUS_IGNORE)
		status = &s;
	int64_t t0 = ticks();
	int rc = PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc_, rt, source, rtag, comm, status);
	int64_t t1 = ticks();
	cct_event *e = ev(CCT_SENDRECV, t0, t1);
	comm_info *ci = comm_find(comm);
	e->comm = comm_index(ci);
	e->peer = world_of(ci, dest, &e->flags);
	e->tag = stag;
	e->bytes = tsize(st, sc);
	if (source == MPI_ANY_SOURCE)
		e->flags |= CCT_F_ANY_SOURCE;
	if (rtag == MPI_ANY_TAG)
		e->flags |= CCT_F_ANY_TAG;
	if (source == MPI_PROC_NULL) {
		e->peer2 = CCT_PEER_NULL;
		e->tag2 = rtag;
	} else {
		e->peer2 = world_of(ci, status->MPI_SOURCE, &e->flags);
		e->tag2 = status->MPI_TAG;
		e->bytes2 = status_bytes(status);
	}
	return rc;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype datatype, int dest, int stag, int source, int rtag,
			 MPI_Comm comm, MPI_Status *status)
{
	if (!on)
		return PMPI_Sendrecv_replace(b, count, datatype, dest, stag, source, rtag, comm, status);
	MPI_Status s;
	if (status == MPI_STATUS_IGNORE)
		status = &s;
	int64_t t0 = ticks();
	int rc = PMPI_Sendrecv_replace(b, count, datatype, dest, stag, source, rtag, comm, status);
	int64_t t1 = ticks();
	cct_event *e = ev(CCT_SENDRECV_REPLACE, t0, t1);
	comm_info *ci = comm_find(comm);
	e->comm = comm_index(ci);
	e->peer = world_of(ci, dest, &e->flags);
	e->tag = stag;
	e->bytes = tsize(datatype, count);
	if (source == MPI_PROC_NULL) {
		e->peer2 = CCT_PEER_NULL;
		e->tag2 = rtag;
	} else {
		e->peer2 = world_of(ci, status->MPI_SOURCE, &e->flags);
		e->tag2 = status->MPI_TAG;
		e->bytes2 = status_bytes(status);
	}
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	if (!on)
		return PMPI_Probe(source, tag, comm, status);
	MPI_Status s;
	if (status == MPI_STATUS_IGNORE)
		status = &s;
	int64_t t0 = ticks();
	int rc = PMPI_Probe(source, tag, comm, status);
	int64_t t1 = ticks();
	cct_event *e = ev(CCT_PROBE, t0, t1);
	comm_info *ci = comm_find(comm);
	e->comm = comm_index(ci);
	e->peer = world_of(ci, status->MPI_SOURCE, &e->flags);
	e->tag = status->MPI_TAG;
	e->bytes2 = status_bytes(status);
	e->flags |= CCT_F_TRUE;
	return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	if (!on)
		return PMPI_Iprobe(source, tag, comm, flag, status);
	MPI_Status s;
	if (status == MPI_STATUS_IGNORE)
		status = &s;
	int64_t t0 = ticks();
	int rc = PMPI_Iprobe(source, tag, comm, flag, status);
	int64_t t1 = ticks();
	comm_info *ci = comm_find(comm);
	if (!*flag && polled(CCT_IPROBE, t1))
		return rc;
	cct_event *e = ev(CCT_IPROBE, t0, t1);
	e->comm = comm_index(ci);
	if (*flag) {
		e->flags |= CCT_F_TRUE;
		e->peer = world_of(ci, status->MPI_SOURCE, &e->flags);
		e->tag = status->MPI_TAG;
		e->bytes2 = status_bytes(status);
	} else {
		e->peer = world_of(ci, source, &e->flags);
		e->tag = tag;
		e->bytes = 1;
	}
	return rc;
}

/* ---- collectives ---- */

static inline cct_event *coll(int op, int64_t t0, int64_t t1, MPI_Comm comm, int root, comm_info **out)
{
	cct_event *e = ev(op, t0, t1);
	comm_info *ci = comm_find(comm);
	e->comm = comm_index(ci);
	if (root >= 0)
		e->peer = world_of(ci, root, &e->flags);
	if (out)
		*out = ci;
	return e;
}

static int comm_rank(MPI_Comm c)
{
	int r;
	PMPI_Comm_rank(c, &r);
	return r;
}

static int64_t sum_counts(const int *counts, int n, MPI_Datatype t)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += counts[i];
	return s * tsize(t, 1);
}

int MPI_Barrier(MPI_Comm comm)
{
	if (!on)
		return PMPI_Barrier(comm);
	int64_t t0 = ticks();
	int rc = PMPI_Barrier(comm);
	int64_t t1 = ticks();
	coll(CCT_BARRIER, t0, t1, comm, -1, NULL);
	return rc;
}

int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Bcast(b, count, t, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Bcast(b, count, t, root, comm);
	int64_t t1 = ticks();
	cct_event *e = coll(CCT_BCAST, t0, t1, comm, root, NULL);
	e->bytes = e->bytes2 = tsize(t, count);
	return rc;
}

#define REDUCE_LIKE(NAME, OP)                                                                        \
	int NAME(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm)          \
	{                                                                                                \
		if (!on)                                                                                 \
			return P##NAME(sb, rb, count, t, op, comm);                                      \
		int64_t t0 = ticks();                                                                    \
		int rc = P##NAME(sb, rb, count, t, op, comm);                                            \
		int64_t t1 = ticks();                                                                    \
		cct_event *e = coll(OP, t0, t1, comm, -1, NULL);                                         \
		e->bytes = e->bytes2 = tsize(t, count);                                                  \
		if (sb == MPI_IN_PLACE)                                                                  \
			e->flags |= CCT_F_IN_PLACE;                                                      \
		return rc;                                                                               \
	}

REDUCE_LIKE(MPI_Allreduce, CCT_ALLREDUCE)
REDUCE_LIKE(MPI_Scan, CCT_SCAN)
REDUCE_LIKE(MPI_Exscan, CCT_EXSCAN)

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Reduce(sb, rb, count, t, op, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Reduce(sb, rb, count, t, op, root, comm);
	int64_t t1 = ticks();
	cct_event *e = coll(CCT_REDUCE, t0, t1, comm, root, NULL);
	e->bytes = e->bytes2 = tsize(t, count);
	if (sb == MPI_IN_PLACE)
		e->flags |= CCT_F_IN_PLACE;
	return rc;
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Gather(sb, sc, st, rb, rc_, rt, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Gather(sb, sc, st, rb, rc_, rt, root, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_GATHER, t0, t1, comm, root, &ci);
	int me = comm_rank(comm);
	if (me == root) {
		e->bytes2 = tsize(rt, rc_) * (ci ? ci->size : 1);
		e->bytes = sb == MPI_IN_PLACE ? tsize(rt, rc_) : tsize(st, sc);
	} else
		e->bytes = tsize(st, sc);
	if (sb == MPI_IN_PLACE)
		e->flags |= CCT_F_IN_PLACE;
	return rc;
}

int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
		MPI_Datatype rt, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Gatherv(sb, sc, st, rb, rcs, displs, rt, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Gatherv(sb, sc, st, rb, rcs, displs, rt, root, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_GATHERV, t0, t1, comm, root, &ci);
	int me = comm_rank(comm);
	if (me == root) {
		e->bytes2 = sum_counts(rcs, ci ? ci->size : 1, rt);
		e->bytes = sb == MPI_IN_PLACE ? tsize(rt, rcs[me]) : tsize(st, sc);
	} else
		e->bytes = tsize(st, sc);
	return rc;
}

int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Scatter(sb, sc, st, rb, rc_, rt, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Scatter(sb, sc, st, rb, rc_, rt, root, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_SCATTER, t0, t1, comm, root, &ci);
	int me = comm_rank(comm);
	if (me == root) {
		e->bytes = tsize(st, sc) * (ci ? ci->size : 1);
		e->bytes2 = rb == MPI_IN_PLACE ? tsize(st, sc) : tsize(rt, rc_);
	} else
		e->bytes2 = tsize(rt, rc_);
	return rc;
}

int MPI_Scatterv(const void *sb, const int scs[], const int displs[], MPI_Datatype st, void *rb, int rc_,
		 MPI_Datatype rt, int root, MPI_Comm comm)
{
	if (!on)
		return PMPI_Scatterv(sb, scs, displs, st, rb, rc_, rt, root, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Scatterv(sb, scs, displs, st, rb, rc_, rt, root, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_SCATTERV, t0, t1, comm, root, &ci);
	int me = comm_rank(comm);
	if (me == root) {
		e->bytes = sum_counts(scs, ci ? ci->size : 1, st);
		e->bytes2 = rb == MPI_IN_PLACE ? tsize(st, scs[me]) : tsize(rt, rc_);
	} else
		e->bytes2 = tsize(rt, rc_);
	return rc;
}

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm)
{
	if (!on)
		return PMPI_Allgather(sb, sc, st, rb, rc_, rt, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Allgather(sb, sc, st, rb, rc_, rt, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_ALLGATHER, t0, t1, comm, -1, &ci);
	e->bytes2 = tsize(rt, rc_) * (ci ? ci->size : 1);
	e->bytes = sb == MPI_IN_PLACE ? tsize(rt, rc_) : tsize(st, sc);
	if (sb == MPI_IN_PLACE)
		e->flags |= CCT_F_IN_PLACE;
	return rc;
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
		   MPI_Datatype rt, MPI_Comm comm)
{
	if (!on)
		return PMPI_Allgatherv(sb, sc, st, rb, rcs, displs, rt, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Allgatherv(sb, sc, st, rb, rcs, displs, rt, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_ALLGATHERV, t0, t1, comm, -1, &ci);
	e->bytes2 = sum_counts(rcs, ci ? ci->size : 1, rt);
	e->bytes = sb == MPI_IN_PLACE ? tsize(rt, rcs[comm_rank(comm)]) : tsize(st, sc);
	return rc;
}

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm)
{
	if (!on)
		return PMPI_Alltoall(sb, sc, st, rb, rc_, rt, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Alltoall(sb, sc, st, rb, rc_, rt, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_ALLTOALL, t0, t1, comm, -1, &ci);
	int p = ci ? ci->size : 1;
	e->bytes2 = tsize(rt, rc_) * p;
	e->bytes = sb == MPI_IN_PLACE ? e->bytes2 : tsize(st, sc) * p;
	return rc;
}

int MPI_Alltoallv(const void *sb, const int scs[], const int sd[], MPI_Datatype st, void *rb, const int rcs[],
		  const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
	if (!on)
		return PMPI_Alltoallv(sb, scs, sd, st, rb, rcs, rd, rt, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Alltoallv(sb, scs, sd, st, rb, rcs, rd, rt, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_ALLTOALLV, t0, t1, comm, -1, &ci);
	int p = ci ? ci->size : 1;
	e->bytes2 = sum_counts(rcs, p, rt);
	e->bytes = sb == MPI_IN_PLACE ? e->bytes2 : sum_counts(scs, p, st);
	return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	if (!on)
		return PMPI_Reduce_scatter(sb, rb, rcs, t, op, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Reduce_scatter(sb, rb, rcs, t, op, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_REDUCE_SCATTER, t0, t1, comm, -1, &ci);
	e->bytes = sum_counts(rcs, ci ? ci->size : 1, t);
	e->bytes2 = tsize(t, rcs[comm_rank(comm)]);
	return rc;
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	if (!on)
		return PMPI_Reduce_scatter_block(sb, rb, count, t, op, comm);
	int64_t t0 = ticks();
	int rc = PMPI_Reduce_scatter_block(sb, rb, count, t, op, comm);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_REDUCE_SCATTER_BLOCK, t0, t1, comm, -1, &ci);
	e->bytes2 = tsize(t, count);
	e->bytes = e->bytes2 * (ci ? ci->size : 1);
	return rc;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	if (!on)
		return PMPI_Ibarrier(comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Ibarrier(comm, req);
	int64_t t1 = ticks();
	coll(CCT_IBARRIER, t0, t1, comm, -1, NULL)->req = HANDLE(*req);
	return rc;
}

int MPI_Ibcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
	if (!on)
		return PMPI_Ibcast(b, count, t, root, comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Ibcast(b, count, t, root, comm, req);
	int64_t t1 = ticks();
	cct_event *e = coll(CCT_IBCAST, t0, t1, comm, root, NULL);
	e->bytes = e->bytes2 = tsize(t, count);
	e->req = HANDLE(*req);
	return rc;
}

int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	if (!on)
		return PMPI_Iallreduce(sb, rb, count, t, op, comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Iallreduce(sb, rb, count, t, op, comm, req);
	int64_t t1 = ticks();
	cct_event *e = coll(CCT_IALLREDUCE, t0, t1, comm, -1, NULL);
	e->bytes = e->bytes2 = tsize(t, count);
	e->req = HANDLE(*req);
	return rc;
}

int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
		MPI_Request *req)
{
	if (!on)
		return PMPI_Ireduce(sb, rb, count, t, op, root, comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Ireduce(sb, rb, count, t, op, root, comm, req);
	int64_t t1 = ticks();
	cct_event *e = coll(CCT_IREDUCE, t0, t1, comm, root, NULL);
	e->bytes = e->bytes2 = tsize(t, count);
	e->req = HANDLE(*req);
	return rc;
}

int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm,
		   MPI_Request *req)
{
	if (!on)
		return PMPI_Iallgather(sb, sc, st, rb, rc_, rt, comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Iallgather(sb, sc, st, rb, rc_, rt, comm, req);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_IALLGATHER, t0, t1, comm, -1, &ci);
	e->bytes2 = tsize(rt, rc_) * (ci ? ci->size : 1);
	e->bytes = sb == MPI_IN_PLACE ? tsize(rt, rc_) : tsize(st, sc);
	e->req = HANDLE(*req);
	return rc;
}

int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm,
		  MPI_Request *req)
{
	if (!on)
		return PMPI_Ialltoall(sb, sc, st, rb, rc_, rt, comm, req);
	int64_t t0 = ticks();
	int rc = PMPI_Ialltoall(sb, sc, st, rb, rc_, rt, comm, req);
	int64_t t1 = ticks();
	comm_info *ci;
	cct_event *e = coll(CCT_IALLTOALL, t0, t1, comm, -1, &ci);
	int p = ci ? ci->size : 1;
	e->bytes2 = tsize(rt, rc_) * p;
	e->bytes = sb == MPI_IN_PLACE ? e->bytes2 : tsize(st, sc) * p;
	e->req = HANDLE(*req);
	return rc;
}

/* ---- communicator management ---- */

/* comm_event records a call that created nc from parent: the new
 * communicator's definition first (COMM_DEF and its members), then the
 * call with peer2 the new local index (-1 when this rank is not in it).
 * The call's time includes the identity broadcast (comm_created). */
static void comm_event(int op, int64_t t0, MPI_Comm parent, MPI_Comm nc)
{
	int32_t local = comm_created(nc);
	int64_t t1 = ticks();
	cct_event *e = coll(op, t0, t1, parent, -1, NULL);
	e->peer2 = local;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Comm_split(comm, color, key, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_split(comm, color, key, nc);
	comm_event(CCT_COMM_SPLIT, t0, comm, *nc);
	return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Comm_split_type(comm, type, key, info, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_split_type(comm, type, key, info, nc);
	comm_event(CCT_COMM_SPLIT_TYPE, t0, comm, *nc);
	return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Comm_dup(comm, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_dup(comm, nc);
	comm_event(CCT_COMM_DUP, t0, comm, *nc);
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Comm_create(comm, g, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_create(comm, g, nc);
	comm_event(CCT_COMM_CREATE, t0, comm, *nc);
	return rc;
}

int MPI_Cart_create(MPI_Comm comm, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Cart_create(comm, nd, dims, periods, reorder, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Cart_create(comm, nd, dims, periods, reorder, nc);
	comm_event(CCT_CART_CREATE, t0, comm, *nc);
	return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *nc)
{
	if (!on)
		return PMPI_Cart_sub(comm, remain, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Cart_sub(comm, remain, nc);
	comm_event(CCT_CART_SUB, t0, comm, *nc);
	return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group g, int tag, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Comm_create_group(comm, g, tag, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_create_group(comm, g, tag, nc);
	comm_event(CCT_COMM_CREATE_GROUP, t0, comm, *nc);
	return rc;
}

int MPI_Graph_create(MPI_Comm comm, int n, const int index[], const int edges[], int reorder, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Graph_create(comm, n, index, edges, reorder, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Graph_create(comm, n, index, edges, reorder, nc);
	comm_event(CCT_GRAPH_CREATE, t0, comm, *nc);
	return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
				   int outdegree, const int dests[], const int destweights[], MPI_Info info, int reorder,
				   MPI_Comm *nc)
{
	if (!on)
		return PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, dests,
						       destweights, info, reorder, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, dests, destweights,
						 info, reorder, nc);
	comm_event(CCT_GRAPH_CREATE, t0, comm, *nc);
	return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int dests[],
			  const int weights[], MPI_Info info, int reorder, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder, nc);
	comm_event(CCT_GRAPH_CREATE, t0, comm, *nc);
	return rc;
}

int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *nc)
{
	if (!on)
		return PMPI_Intercomm_merge(inter, high, nc);
	int64_t t0 = ticks();
	int rc = PMPI_Intercomm_merge(inter, high, nc);
	comm_event(CCT_INTERCOMM_MERGE, t0, inter, *nc);
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	if (!on)
		return PMPI_Comm_free(comm);
	comm_info *ci = comm_find(*comm);
	int64_t t0 = ticks();
	int rc = PMPI_Comm_free(comm);
	int64_t t1 = ticks();
	cct_event *e = ev(CCT_COMM_FREE, t0, t1);
	e->comm = comm_index(ci);
	if (ci) {
		ci->live = 0;
		last_comm = -1;
	}
	return rc;
}
