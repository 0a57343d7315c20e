/*
 * shim.h: the C side of package native. Every MPI call the Go code makes goes
 * through one of these wrappers, for three reasons:
 *   - MPI handles and constants are macros or pointers in Open MPI and ints
 *     in MPICH (MPI_COMM_WORLD, MPI_BYTE, MPI_ANY_SOURCE...); cgo cannot use
 *     the pointer macros, and the wrappers hide the difference.
 *   - Results come back as small structs by value, so a hot call allocates
 *     nothing on the Go side (a Go pointer passed to C escapes to the heap).
 *   - The benchmark kernels run their whole timed loop here, one cgo
 *     crossing per batch.
 * The wildcards and error classes at this interface are the mpi package's
 * (CC_ANY_SOURCE, CC_ANY_TAG, the standard class numbers 0..17), translated
 * to the linked library's values here.
 */
#ifndef COMMCOST_NATIVE_SHIM_H
#define COMMCOST_NATIVE_SHIM_H

#include <mpi.h>

/* Wildcards as the Go package spells them (mpi.AnySource, mpi.AnyTag). */
#define CC_ANY_SOURCE (-1)
#define CC_ANY_TAG (-1)

/* Returned as rc by every wrapper that enters MPI when it is called from
 * another thread than the one that initialised MPI under MPI_THREAD_SINGLE or
 * MPI_THREAD_FUNNELED. Negative, so it is never an MPI error code. */
#define CC_ERR_WRONG_THREAD (-1000)

/* Datatypes and operations of the typed reductions, and their MPI handles. */
enum { CC_FLOAT64 = 0, CC_INT64 = 1, CC_FLOAT32 = 2, CC_INT32 = 3, CC_INT8 = 4 };
enum { CC_SUM = 0, CC_MIN = 1, CC_MAX = 2 };
MPI_Datatype cc_dtype_of(int dtype);
MPI_Op cc_op_of(int op);

/* A valid address for zero-length buffers: some MPI argument checks reject
 * NULL even with count 0, and a Go pointer to a zero-size object is best kept
 * away from C. */
extern char cc_zero_buf[8];

typedef struct {
    int rc;
    int provided;
} cc_init_result;

typedef struct {
    int rc;
    int source;
    int tag;
    int count; /* bytes (MPI_Get_count on MPI_BYTE) */
} cc_status;

typedef struct {
    int rc;
    MPI_Request req;
} cc_req_result;

typedef struct {
    int rc;
    int flag;
    cc_status st;
    MPI_Request req; /* MPI_REQUEST_NULL once complete */
} cc_test_result;

typedef struct {
    int rc;
    int index; /* -1 for MPI_UNDEFINED */
    cc_status st;
} cc_any_result;

typedef struct {
    int rc;
    MPI_Comm comm; /* MPI_COMM_NULL for MPI_UNDEFINED colors */
    int rank;
    int size;
} cc_comm_result;

typedef struct {
    int rc;
    double seconds;
} cc_time_result;

/* Environment. */
const char *cc_implementation(void);
cc_init_result cc_init_thread(int level);
int cc_finalize(void);
int cc_initialized(void);
int cc_finalized(void);
void cc_abort(int code);
int cc_thread_level_std(int provided);
int cc_library_version(char *out, int outlen);
int cc_processor_name(char *out, int outlen);
int cc_version(int *major, int *minor);
void cc_noop(void);

/* Errors: standard class of a code (-1 if not one of 0..17), text, and the
 * library's own class value for a standard class. */
int cc_error_class_std(int code);
int cc_error_string(int code, char *out, int outlen);
int cc_native_class(int std);

/* Communicators. */
MPI_Comm cc_comm_world(void);
MPI_Comm cc_comm_null(void);
MPI_Request cc_request_null(void);
cc_comm_result cc_comm_setup(MPI_Comm comm);
cc_comm_result cc_comm_split(MPI_Comm comm, int color, int key);
cc_comm_result cc_comm_dup(MPI_Comm comm);
int cc_comm_free(MPI_Comm comm);
double cc_wtime(void);
double cc_wtick(void);

/* Point-to-point on MPI_BYTE. */
int cc_send(MPI_Comm comm, void *buf, int count, int dest, int tag);
int cc_ssend(MPI_Comm comm, void *buf, int count, int dest, int tag);
cc_status cc_recv(MPI_Comm comm, void *buf, int count, int source, int tag);
cc_status cc_sendrecv(MPI_Comm comm, void *sbuf, int scount, int dest, int stag,
                      void *rbuf, int rcount, int source, int rtag);
cc_req_result cc_isend(MPI_Comm comm, void *buf, int count, int dest, int tag);
cc_req_result cc_irecv(MPI_Comm comm, void *buf, int count, int source, int tag);
cc_status cc_wait(MPI_Request req);
cc_test_result cc_test(MPI_Request req);
cc_any_result cc_waitany(int n, MPI_Request *reqs);
cc_status cc_probe(MPI_Comm comm, int source, int tag);
cc_test_result cc_iprobe(MPI_Comm comm, int source, int tag);

/* Collectives on MPI_BYTE. */
int cc_barrier(MPI_Comm comm);
int cc_bcast(MPI_Comm comm, void *buf, int count, int root);
int cc_gather(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root);
int cc_gatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs, int root);
int cc_allgather(MPI_Comm comm, void *sbuf, int count, void *rbuf);
int cc_allgatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs);
int cc_scatter(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root);
int cc_scatterv(MPI_Comm comm, void *sbuf, int *counts, int *displs, void *rbuf, int rcount, int root);
int cc_alltoall(MPI_Comm comm, void *sbuf, int count, void *rbuf);
int cc_alltoallv(MPI_Comm comm, void *sbuf, int *scounts, int *sdispls,
                 void *rbuf, int *rcounts, int *rdispls);
/* Reductions; in_place uses MPI_IN_PLACE for the send buffer (root only for
 * reduce). */
int cc_reduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int root, int in_place);
int cc_allreduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int in_place);
/* MPI_Reduce_scatter_block (count elements per rank) and MPI_Reduce_scatter
 * (counts per rank). */
int cc_reduce_scatter_block(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op);
int cc_reduce_scatter(MPI_Comm comm, void *sbuf, void *rbuf, int *counts, int dtype, int op);
/* MPI_Reduce_local: inout = in op inout. */
int cc_reduce_local(void *in, void *inout, int count, int dtype, int op);

/* 1 when the library was built for MPI-3 or later (non-blocking
 * collectives, MPI_Win_allocate, lock_all, flush), from its mpi.h. */
int cc_mpi3(void);

/* Non-blocking collectives (MPI-3) on MPI_BYTE, or on dtype for the
 * reductions. Without MPI-3 they return MPI_ERR_OTHER. */
cc_req_result cc_ibarrier(MPI_Comm comm);
cc_req_result cc_ibcast(MPI_Comm comm, void *buf, int count, int root);
cc_req_result cc_igather(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root);
cc_req_result cc_igatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs, int root);
cc_req_result cc_iscatter(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root);
cc_req_result cc_iscatterv(MPI_Comm comm, void *sbuf, int *counts, int *displs, void *rbuf, int rcount, int root);
cc_req_result cc_iallgather(MPI_Comm comm, void *sbuf, int count, void *rbuf);
cc_req_result cc_iallgatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs);
cc_req_result cc_ialltoall(MPI_Comm comm, void *sbuf, int count, void *rbuf);
cc_req_result cc_ialltoallv(MPI_Comm comm, void *sbuf, int *scounts, int *sdispls, void *rbuf, int *rcounts,
                            int *rdispls);
cc_req_result cc_ireduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int root, int in_place);
cc_req_result cc_iallreduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int in_place);

/* Benchmark kernels (OSU methodology); seconds on this rank around the loop. */
cc_time_result cc_pingpong(MPI_Comm comm, void *sbuf, void *rbuf, int count, int peer, int tag,
                           int iters, int initiator);
cc_time_result cc_bandwidth(MPI_Comm comm, void *buf, int count, int peer, int tag,
                            int window, int iters, int sender);

/* osu_bibw's loop: both ranks post window Irecvs and window Isends per
 * iteration; first waits for its sends first. */
cc_time_result cc_bibw(MPI_Comm comm, void *sbuf, void *rbuf, int count, int peer, int tag, int window, int iters,
                       int first);

cc_time_result cc_alltoall_pt2pt(MPI_Comm comm, char *send, char *recv, int block, int n, int me,
                                 int tag, int iters);

typedef struct {
    int rc;
    double seconds;  /* this rank, around the whole loop */
    double arrivals; /* server with time_arrivals: sum of first-to-last arrival times */
} cc_prtt_result;
/* time_arrivals: the server reads the clock around its receives (two
 * MPI_Wtime per exchange, between its last receive and its answer); only
 * when the caller reports the arrivals, since the client's round trip
 * would pay for them in every exchange. */
cc_prtt_result cc_prtt(MPI_Comm comm, void *buf, int count, int peer, int tag, int n, double delay,
                       int iters, int client, int server_delay, int time_arrivals);

/* The access engine of paper 000 (package patterns, access.go), one
 * repetition per call. All buffers are C memory owned by the cc_access, so
 * requests left in flight by an error never point into Go memory. */
/* Request header: slot and sequence number, uint64 little endian each. */
#define CC_ACCESS_HEADER 16

/* 1 when the calling thread may not enter MPI (see shim.c). */
int cc_wrong_thread(void);
/* MPI_Waitall with MPI_STATUSES_IGNORE (see shim.c for why a function). */
int cc_waitall_ignore(int n, MPI_Request *reqs);
/* MPI_Testsome with MPI_STATUSES_IGNORE, for the same reason. */
int cc_testsome_ignore(int n, MPI_Request *reqs, int *outcount, int *indices);

enum { CC_FAULT_REQ_LEN = 1, CC_FAULT_REPLY_LEN = 2, CC_FAULT_SLOT_RANGE = 3, CC_FAULT_SLOT_OWN = 4 };

typedef struct {
    int source;
    unsigned long long slot;
    unsigned long long seq;
} cc_served;

typedef struct {
    MPI_Comm comm;
    int write, k, l, slots, max_steps, keep_replies, req_tag, reply_tag;
    int req_len, reply_len;
    char *mem, *req_msgs, *replies, *req_buf;
    MPI_Request *waits; /* k+1: the request receive, then the k answers */
    MPI_Request *req_sends; /* k */
    int cap; /* capacity of acks, sends and served */
    char *acks;
    MPI_Request *sends;
    cc_served *served;
    int nserved;
    int broken; /* an error left requests in flight: never free the buffers */
} cc_access;

typedef struct {
    int rc;
    double seconds;
    int fault; /* CC_FAULT_*, 0 for none */
    int rank, count, want;
    unsigned long long slot;
} cc_access_result;

cc_access *cc_access_new(MPI_Comm comm, int write, int k, int l, int slots, int max_steps,
                         int keep_replies, int req_tag, int reply_tag);
void cc_access_free(cc_access *a);
cc_access_result cc_access_run(cc_access *a, const int *targets, int steps, int my_slot,
                               int incoming, unsigned long long rep, int check);

/* The direct store's server (package directstore): the access protocol
 * above, open-ended. Requests carry (offset, length | flags) in the header;
 * the request receive stays posted between calls and every wait serves.
 * The home memory and every buffer MPI may hold between calls are C memory. */
#define CC_STORE_WRITE (1ULL << 63)
#define CC_STORE_CLOSE (1ULL << 62)
#define CC_STORE_LEN_MASK 0xffffffffULL

typedef struct {
    MPI_Comm comm;
    int me, req_tag, reply_tag, max_packet;
    char *mem;
    size_t mem_len;
    char *req_buf;  /* header + max_packet */
    MPI_Request req; /* the posted request receive */
    /* Requester side, grown to the largest group and request bytes. */
    int kcap;
    MPI_Request *waits; /* 1 + kcap, or 1 + extra requests in cc_store_wait */
    int wcap;
    MPI_Request *req_sends;
    char *req_msgs;
    size_t msgs_cap;
    char *acks_in; /* kcap acknowledgements of this rank's writes */
    /* Server side: answers in flight. */
    int scap, nsends;
    char *acks;
    MPI_Request *sends;
    long long served_reads, served_writes;
    int closed;
    int broken;
} cc_store;

cc_store *cc_store_new(MPI_Comm comm, int req_tag, int reply_tag, int max_packet, int *rc);
int cc_store_grow(cc_store *s, size_t n);
cc_access_result cc_store_batch(cc_store *s, int write, int n, int k, const int *targets,
                                const long long *offs, const int *lens, char *base,
                                const long long *boffs, char **bufs);
typedef struct {
    cc_access_result r;
    int index; /* of the extra request that completed, -1 if none */
    cc_status st;
} cc_store_wait_result;
cc_store_wait_result cc_store_wait(cc_store *s, int n, MPI_Request *reqs);
cc_access_result cc_store_poll(cc_store *s);
cc_access_result cc_store_close(cc_store *s);
void cc_store_free(cc_store *s);

#endif
