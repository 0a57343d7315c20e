/* shim.c: see shim.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shim.h"

char cc_zero_buf[8];

/* The ack of the bandwidth kernel (MEASURE.md, OSU osu_bw.c). */
#define CC_ACK_BYTES 4

/* Thread-bound levels. Under MPI_THREAD_SINGLE and MPI_THREAD_FUNNELED only
 * the thread that initialised MPI may call it. cc_init_thread marks that
 * thread in a thread-local flag, and every wrapper that enters the MPI
 * library checks it first (a thread-local load, about a nanosecond) and
 * returns CC_ERR_WRONG_THREAD instead of calling MPI from another thread.
 * Under SERIALIZED and MULTIPLE any thread may call and the check is off.
 * Exempt: clocks, error strings and classes, versions, processor name,
 * Initialized/Finalized and Abort (local queries or a last resort). */
static _Thread_local int on_init_thread;
static int thread_bound;
#define WRONG_THREAD() (thread_bound && !on_init_thread)
#define GUARD_INT() do { if (WRONG_THREAD()) return CC_ERR_WRONG_THREAD; } while (0)
#define GUARD_STRUCT(type) do { if (WRONG_THREAD()) { type w_; memset(&w_, 0, sizeof w_); w_.rc = CC_ERR_WRONG_THREAD; return w_; } } while (0)

int cc_wrong_thread(void) { return WRONG_THREAD(); }

static int src(int s) { return s == CC_ANY_SOURCE ? MPI_ANY_SOURCE : s; }
static int tg(int t) { return t == CC_ANY_TAG ? MPI_ANY_TAG : t; }

static void fill_status(cc_status *out, int rc, const MPI_Status *st)
{
    out->rc = rc;
    out->source = st->MPI_SOURCE;
    out->tag = st->MPI_TAG;
    out->count = 0;
    int n = 0;
    if (MPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED)
        out->count = n;
    if (out->source == MPI_ANY_SOURCE || out->source == MPI_PROC_NULL)
        out->source = CC_ANY_SOURCE;
    if (out->tag == MPI_ANY_TAG)
        out->tag = CC_ANY_TAG;
}

const char *cc_implementation(void)
{
#if defined(OPEN_MPI)
    return "openmpi";
#elif defined(MPICH)
    return "mpich";
#else
    return "unknown";
#endif
}

static int level_native(int std)
{
    switch (std) {
    case 0: return MPI_THREAD_SINGLE;
    case 1: return MPI_THREAD_FUNNELED;
    case 2: return MPI_THREAD_SERIALIZED;
    default: return MPI_THREAD_MULTIPLE;
    }
}

int cc_thread_level_std(int provided)
{
    if (provided == MPI_THREAD_MULTIPLE) return 3;
    if (provided == MPI_THREAD_SERIALIZED) return 2;
    if (provided == MPI_THREAD_FUNNELED) return 1;
    return 0;
}

cc_init_result cc_init_thread(int level)
{
    cc_init_result r;
    r.provided = MPI_THREAD_SINGLE;
    r.rc = MPI_Init_thread(NULL, NULL, level_native(level), &r.provided);
    if (r.rc != MPI_SUCCESS)
        return r;
    r.provided = cc_thread_level_std(r.provided);
    on_init_thread = 1;
    thread_bound = r.provided < 2; /* SINGLE or FUNNELED */
    /* Errors come back as return codes from here on (MPI_Init_thread itself
     * can only use the default, fatal handler). */
    r.rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (r.rc == MPI_SUCCESS)
        r.rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return r;
}

int cc_finalize(void)
{
    GUARD_INT();
    return MPI_Finalize();
}

int cc_initialized(void)
{
    int flag = 0;
    MPI_Initialized(&flag);
    return flag;
}

int cc_finalized(void)
{
    int flag = 0;
    MPI_Finalized(&flag);
    return flag;
}

void cc_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

/* copy_string copies the n bytes of v into out (outlen bytes), cut to fit
 * and NUL-terminated, after the MPI call that filled v returned rc. */
static int copy_string(int rc, const char *v, int n, char *out, int outlen)
{
    if (rc != MPI_SUCCESS)
        return rc;
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, v, (size_t)n);
    out[n] = '\0';
    return MPI_SUCCESS;
}

int cc_library_version(char *out, int outlen)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    int rc = MPI_Get_library_version(v, &n);
    return copy_string(rc, v, n, out, outlen);
}

int cc_processor_name(char *out, int outlen)
{
    char v[MPI_MAX_PROCESSOR_NAME];
    int n = 0;
    int rc = MPI_Get_processor_name(v, &n);
    return copy_string(rc, v, n, out, outlen);
}

int cc_version(int *major, int *minor) { return MPI_Get_version(major, minor); }

void cc_noop(void) {}

/* The class numbers differ between libraries (MPICH: MPI_ERR_ROOT is 7,
 * MPI_ERR_TRUNCATE 14; Open MPI: 8 and 15), so translate by name to the
 * numbering of the mpi package, which is Open MPI's. */
int cc_error_class_std(int code)
{
    int cls = 0;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return -1;
    if (cls == MPI_SUCCESS) return 0;
    if (cls == MPI_ERR_BUFFER) return 1;
    if (cls == MPI_ERR_COUNT) return 2;
    if (cls == MPI_ERR_TYPE) return 3;
    if (cls == MPI_ERR_TAG) return 4;
    if (cls == MPI_ERR_COMM) return 5;
    if (cls == MPI_ERR_RANK) return 6;
    if (cls == MPI_ERR_REQUEST) return 7;
    if (cls == MPI_ERR_ROOT) return 8;
    if (cls == MPI_ERR_GROUP) return 9;
    if (cls == MPI_ERR_OP) return 10;
    if (cls == MPI_ERR_TOPOLOGY) return 11;
    if (cls == MPI_ERR_DIMS) return 12;
    if (cls == MPI_ERR_ARG) return 13;
    if (cls == MPI_ERR_UNKNOWN) return 14;
    if (cls == MPI_ERR_TRUNCATE) return 15;
    if (cls == MPI_ERR_OTHER) return 16;
    if (cls == MPI_ERR_INTERN) return 17;
    return -1;
}

int cc_native_class(int std)
{
    static const int table[] = {
        MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG,
        MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP,
        MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN,
        MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
    };
    if (std < 0 || std >= (int)(sizeof table / sizeof table[0]))
        return MPI_ERR_OTHER;
    return table[std];
}

int cc_error_string(int code, char *out, int outlen)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    int rc = MPI_Error_string(code, s, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, s, (size_t)n);
    out[n] = '\0';
    return MPI_SUCCESS;
}

MPI_Comm cc_comm_world(void) { return MPI_COMM_WORLD; }
MPI_Comm cc_comm_null(void) { return MPI_COMM_NULL; }
MPI_Request cc_request_null(void) { return MPI_REQUEST_NULL; }

cc_comm_result cc_comm_setup(MPI_Comm comm)
{
    GUARD_STRUCT(cc_comm_result);
    cc_comm_result r;
    r.comm = comm;
    r.rank = -1;
    r.size = 0;
    /* Every communicator returns errors instead of aborting; new ones inherit
     * the parent's handler, but say so explicitly rather than rely on it. */
    r.rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (r.rc == MPI_SUCCESS)
        r.rc = MPI_Comm_rank(comm, &r.rank);
    if (r.rc == MPI_SUCCESS)
        r.rc = MPI_Comm_size(comm, &r.size);
    return r;
}

cc_comm_result cc_comm_split(MPI_Comm comm, int color, int key)
{
    GUARD_STRUCT(cc_comm_result);
    cc_comm_result r;
    MPI_Comm nc = MPI_COMM_NULL;
    r.rc = MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, &nc);
    r.comm = nc;
    r.rank = -1;
    r.size = 0;
    if (r.rc != MPI_SUCCESS || nc == MPI_COMM_NULL)
        return r;
    return cc_comm_setup(nc);
}

cc_comm_result cc_comm_dup(MPI_Comm comm)
{
    GUARD_STRUCT(cc_comm_result);
    cc_comm_result r;
    MPI_Comm nc = MPI_COMM_NULL;
    r.rc = MPI_Comm_dup(comm, &nc);
    r.comm = nc;
    r.rank = -1;
    r.size = 0;
    if (r.rc != MPI_SUCCESS)
        return r;
    return cc_comm_setup(nc);
}

int cc_comm_free(MPI_Comm comm)
{
    GUARD_INT();
    return MPI_Comm_free(&comm);
}

double cc_wtime(void) { return MPI_Wtime(); }
double cc_wtick(void) { return MPI_Wtick(); }

int cc_send(MPI_Comm comm, void *buf, int count, int dest, int tag)
{
    GUARD_INT();
    return MPI_Send(buf, count, MPI_BYTE, dest, tag, comm);
}

int cc_ssend(MPI_Comm comm, void *buf, int count, int dest, int tag)
{
    GUARD_INT();
    return MPI_Ssend(buf, count, MPI_BYTE, dest, tag, comm);
}

cc_status cc_recv(MPI_Comm comm, void *buf, int count, int source, int tag)
{
    GUARD_STRUCT(cc_status);
    cc_status r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Recv(buf, count, MPI_BYTE, src(source), tg(tag), comm, &st);
    fill_status(&r, rc, &st);
    return r;
}

cc_status cc_sendrecv(MPI_Comm comm, void *sbuf, int scount, int dest, int stag,
                      void *rbuf, int rcount, int source, int rtag)
{
    GUARD_STRUCT(cc_status);
    cc_status r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Sendrecv(sbuf, scount, MPI_BYTE, dest, stag,
                          rbuf, rcount, MPI_BYTE, src(source), tg(rtag), comm, &st);
    fill_status(&r, rc, &st);
    return r;
}

cc_req_result cc_isend(MPI_Comm comm, void *buf, int count, int dest, int tag)
{
    GUARD_STRUCT(cc_req_result);
    cc_req_result r;
    r.req = MPI_REQUEST_NULL;
    r.rc = MPI_Isend(buf, count, MPI_BYTE, dest, tag, comm, &r.req);
    return r;
}

cc_req_result cc_irecv(MPI_Comm comm, void *buf, int count, int source, int tag)
{
    GUARD_STRUCT(cc_req_result);
    cc_req_result r;
    r.req = MPI_REQUEST_NULL;
    r.rc = MPI_Irecv(buf, count, MPI_BYTE, src(source), tg(tag), comm, &r.req);
    return r;
}

cc_status cc_wait(MPI_Request req)
{
    GUARD_STRUCT(cc_status);
    cc_status r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Wait(&req, &st);
    fill_status(&r, rc, &st);
    return r;
}

cc_any_result cc_waitany(int n, MPI_Request *reqs)
{
    GUARD_STRUCT(cc_any_result);
    cc_any_result r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int idx = MPI_UNDEFINED;
    r.rc = MPI_Waitany(n, reqs, &idx, &st);
    fill_status(&r.st, r.rc, &st);
    r.index = idx == MPI_UNDEFINED ? -1 : idx;
    return r;
}

cc_test_result cc_test(MPI_Request req)
{
    GUARD_STRUCT(cc_test_result);
    cc_test_result r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    r.flag = 0;
    int rc = MPI_Test(&req, &r.flag, &st);
    fill_status(&r.st, rc, &st);
    r.rc = rc;
    r.req = req;
    return r;
}

cc_status cc_probe(MPI_Comm comm, int source, int tag)
{
    GUARD_STRUCT(cc_status);
    cc_status r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Probe(src(source), tg(tag), comm, &st);
    fill_status(&r, rc, &st);
    return r;
}

cc_test_result cc_iprobe(MPI_Comm comm, int source, int tag)
{
    GUARD_STRUCT(cc_test_result);
    cc_test_result r;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    r.flag = 0;
    int rc = MPI_Iprobe(src(source), tg(tag), comm, &r.flag, &st);
    fill_status(&r.st, rc, &st);
    r.rc = rc;
    r.req = MPI_REQUEST_NULL;
    return r;
}

int cc_barrier(MPI_Comm comm)
{
    GUARD_INT();
    return MPI_Barrier(comm);
}

int cc_bcast(MPI_Comm comm, void *buf, int count, int root)
{
    GUARD_INT();
    return MPI_Bcast(buf, count, MPI_BYTE, root, comm);
}

int cc_gather(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root)
{
    GUARD_INT();
    return MPI_Gather(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, root, comm);
}

int cc_gatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs, int root)
{
    GUARD_INT();
    return MPI_Gatherv(sbuf, scount, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, root, comm);
}

int cc_allgather(MPI_Comm comm, void *sbuf, int count, void *rbuf)
{
    GUARD_INT();
    return MPI_Allgather(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, comm);
}

int cc_allgatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs)
{
    GUARD_INT();
    return MPI_Allgatherv(sbuf, scount, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, comm);
}

int cc_scatter(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root)
{
    GUARD_INT();
    return MPI_Scatter(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, root, comm);
}

int cc_scatterv(MPI_Comm comm, void *sbuf, int *counts, int *displs, void *rbuf, int rcount, int root)
{
    GUARD_INT();
    return MPI_Scatterv(sbuf, counts, displs, MPI_BYTE, rbuf, rcount, MPI_BYTE, root, comm);
}

int cc_alltoall(MPI_Comm comm, void *sbuf, int count, void *rbuf)
{
    GUARD_INT();
    return MPI_Alltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, comm);
}

int cc_alltoallv(MPI_Comm comm, void *sbuf, int *scounts, int *sdispls,
                 void *rbuf, int *rcounts, int *rdispls)
{
    GUARD_INT();
    return MPI_Alltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf, rcounts, rdispls, MPI_BYTE, comm);
}

MPI_Datatype cc_dtype_of(int d)
{
    switch (d) {
    case CC_INT64: return MPI_INT64_T;
    case CC_FLOAT32: return MPI_FLOAT;
    case CC_INT32: return MPI_INT32_T;
    case CC_INT8: return MPI_SIGNED_CHAR;
    default: return MPI_DOUBLE;
    }
}

MPI_Op cc_op_of(int op)
{
    switch (op) {
    case CC_MIN: return MPI_MIN;
    case CC_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

int cc_reduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int root, int in_place)
{
    GUARD_INT();
    return MPI_Reduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, count, cc_dtype_of(dtype), cc_op_of(op), root, comm);
}

int cc_allreduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int in_place)
{
    GUARD_INT();
    return MPI_Allreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, count, cc_dtype_of(dtype), cc_op_of(op), comm);
}

int cc_reduce_scatter_block(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op)
{
    GUARD_INT();
    return MPI_Reduce_scatter_block(sbuf, rbuf, count, cc_dtype_of(dtype), cc_op_of(op), comm);
}

int cc_reduce_scatter(MPI_Comm comm, void *sbuf, void *rbuf, int *counts, int dtype, int op)
{
    GUARD_INT();
    return MPI_Reduce_scatter(sbuf, rbuf, counts, cc_dtype_of(dtype), cc_op_of(op), comm);
}

int cc_reduce_local(void *in, void *inout, int count, int dtype, int op)
{
    GUARD_INT();
    return MPI_Reduce_local(in, inout, count, cc_dtype_of(dtype), cc_op_of(op));
}

int cc_mpi3(void) { return MPI_VERSION >= 3; }

/* NB_POST runs one MPI-3 posting call into r.req, or refuses it on an
 * older library. */
#if MPI_VERSION >= 3
#define NB_POST(call)                                                                                              \
    do {                                                                                                           \
        GUARD_STRUCT(cc_req_result);                                                                               \
        cc_req_result r;                                                                                           \
        r.req = MPI_REQUEST_NULL;                                                                                  \
        r.rc = (call);                                                                                             \
        return r;                                                                                                  \
    } while (0)
#else
#define NB_POST(call)                                                                                              \
    do {                                                                                                           \
        cc_req_result r;                                                                                           \
        r.req = MPI_REQUEST_NULL;                                                                                  \
        r.rc = MPI_ERR_OTHER;                                                                                      \
        return r;                                                                                                  \
    } while (0)
#endif

cc_req_result cc_ibarrier(MPI_Comm comm) { NB_POST(MPI_Ibarrier(comm, &r.req)); }

cc_req_result cc_ibcast(MPI_Comm comm, void *buf, int count, int root)
{
    NB_POST(MPI_Ibcast(buf, count, MPI_BYTE, root, comm, &r.req));
}

cc_req_result cc_igather(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root)
{
    NB_POST(MPI_Igather(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, root, comm, &r.req));
}

cc_req_result cc_igatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs, int root)
{
    NB_POST(MPI_Igatherv(sbuf, scount, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, root, comm, &r.req));
}

cc_req_result cc_iscatter(MPI_Comm comm, void *sbuf, int count, void *rbuf, int root)
{
    NB_POST(MPI_Iscatter(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, root, comm, &r.req));
}

cc_req_result cc_iscatterv(MPI_Comm comm, void *sbuf, int *counts, int *displs, void *rbuf, int rcount, int root)
{
    NB_POST(MPI_Iscatterv(sbuf, counts, displs, MPI_BYTE, rbuf, rcount, MPI_BYTE, root, comm, &r.req));
}

cc_req_result cc_iallgather(MPI_Comm comm, void *sbuf, int count, void *rbuf)
{
    NB_POST(MPI_Iallgather(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, comm, &r.req));
}

cc_req_result cc_iallgatherv(MPI_Comm comm, void *sbuf, int scount, void *rbuf, int *counts, int *displs)
{
    NB_POST(MPI_Iallgatherv(sbuf, scount, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, comm, &r.req));
}

cc_req_result cc_ialltoall(MPI_Comm comm, void *sbuf, int count, void *rbuf)
{
    NB_POST(MPI_Ialltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, comm, &r.req));
}

cc_req_result cc_ialltoallv(MPI_Comm comm, void *sbuf, int *scounts, int *sdispls, void *rbuf, int *rcounts,
                            int *rdispls)
{
    NB_POST(MPI_Ialltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf, rcounts, rdispls, MPI_BYTE, comm, &r.req));
}

cc_req_result cc_ireduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int root, int in_place)
{
    NB_POST(MPI_Ireduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, count, cc_dtype_of(dtype), cc_op_of(op), root, comm, &r.req));
}

cc_req_result cc_iallreduce(MPI_Comm comm, void *sbuf, void *rbuf, int count, int dtype, int op, int in_place)
{
    NB_POST(MPI_Iallreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, count, cc_dtype_of(dtype), cc_op_of(op), comm, &r.req));
}

/* OSU latency inner loop: the initiator sends then receives, the peer
 * receives then sends; both send from sbuf and receive into rbuf (OSU's
 * s_buf and r_buf). No barrier: the caller synchronises before the batch. */
cc_time_result cc_pingpong(MPI_Comm comm, void *sbuf, void *rbuf, int count, int peer, int tag,
                           int iters, int initiator)
{
    GUARD_STRUCT(cc_time_result);
    cc_time_result r;
    r.rc = MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (initiator) {
            r.rc = MPI_Send(sbuf, count, MPI_BYTE, peer, tag, comm);
            if (r.rc != MPI_SUCCESS)
                break;
            r.rc = MPI_Recv(rbuf, count, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        } else {
            r.rc = MPI_Recv(rbuf, count, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            if (r.rc != MPI_SUCCESS)
                break;
            r.rc = MPI_Send(sbuf, count, MPI_BYTE, peer, tag, comm);
        }
        if (r.rc != MPI_SUCCESS)
            break;
    }
    r.seconds = MPI_Wtime() - t0;
    return r;
}

/* abandon completes the first n requests of a window that failed part way,
 * so no MPI operation still refers to the Go buffer after the call returns:
 * cancel (honoured for receives) and wait. */
static void abandon(MPI_Request *reqs, int n)
{
    for (int j = 0; j < n; j++) {
        if (reqs[j] == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(&reqs[j]);
        MPI_Wait(&reqs[j], MPI_STATUS_IGNORE);
    }
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC's
 * -Wstringop-overflow takes for a zero-size array. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
int cc_waitall_ignore(int n, MPI_Request *reqs)
{
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}

int cc_testsome_ignore(int n, MPI_Request *reqs, int *outcount, int *indices)
{
    return MPI_Testsome(n, reqs, outcount, indices, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* OSU bandwidth inner loop: per iteration the sender posts window Isends of
 * the same buffer, waits for all, then receives a 4-byte ack; the receiver
 * posts window Irecvs into the same buffer (as osu_bw does), waits, and sends
 * the ack. The ack travels the other way, so it can share the data tag. */
cc_time_result cc_bandwidth(MPI_Comm comm, void *buf, int count, int peer, int tag,
                            int window, int iters, int sender)
{
    GUARD_STRUCT(cc_time_result);
    cc_time_result r;
    char ack[CC_ACK_BYTES];
    memset(ack, 0, sizeof ack);
    r.seconds = 0.0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)window);
    if (reqs == NULL) {
        r.rc = MPI_ERR_NO_MEM;
        return r;
    }
    r.rc = MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && r.rc == MPI_SUCCESS; i++) {
        int posted = 0;
        for (int w = 0; w < window; w++) {
            reqs[w] = MPI_REQUEST_NULL;
            if (sender)
                r.rc = MPI_Isend(buf, count, MPI_BYTE, peer, tag, comm, &reqs[w]);
            else
                r.rc = MPI_Irecv(buf, count, MPI_BYTE, peer, tag, comm, &reqs[w]);
            if (r.rc != MPI_SUCCESS)
                break;
            posted++;
        }
        if (r.rc != MPI_SUCCESS) {
            abandon(reqs, posted);
            break;
        }
        r.rc = cc_waitall_ignore(window, reqs);
        if (r.rc != MPI_SUCCESS) {
            abandon(reqs, window);
            break;
        }
        if (sender)
            r.rc = MPI_Recv(ack, CC_ACK_BYTES, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        else
            r.rc = MPI_Send(ack, CC_ACK_BYTES, MPI_BYTE, peer, tag, comm);
    }
    r.seconds = MPI_Wtime() - t0;
    free(reqs);
    return r;
}

/* OSU bidirectional bandwidth inner loop (osu_bibw.c): per iteration both
 * ranks post window Irecvs into rbuf and window Isends from sbuf; the first
 * rank (OSU's rank 0) waits for its sends then its receives, the other for
 * its receives then its sends. No ack: each side's receives complete only
 * once the other has sent. */
cc_time_result cc_bibw(MPI_Comm comm, void *sbuf, void *rbuf, int count, int peer, int tag, int window, int iters,
                       int first)
{
    GUARD_STRUCT(cc_time_result);
    cc_time_result r;
    r.seconds = 0.0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * window));
    if (reqs == NULL) {
        r.rc = MPI_ERR_NO_MEM;
        return r;
    }
    MPI_Request *recvs = reqs, *sends = reqs + window;
    r.rc = MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && r.rc == MPI_SUCCESS; i++) {
        for (int w = 0; w < 2 * window; w++)
            reqs[w] = MPI_REQUEST_NULL;
        for (int w = 0; w < window && r.rc == MPI_SUCCESS; w++)
            r.rc = MPI_Irecv(rbuf, count, MPI_BYTE, peer, tag, comm, &recvs[w]);
        for (int w = 0; w < window && r.rc == MPI_SUCCESS; w++)
            r.rc = MPI_Isend(sbuf, count, MPI_BYTE, peer, tag, comm, &sends[w]);
        if (r.rc == MPI_SUCCESS) {
            MPI_Request *a = first ? sends : recvs, *b = first ? recvs : sends;
            r.rc = cc_waitall_ignore(window, a);
            if (r.rc == MPI_SUCCESS)
                r.rc = cc_waitall_ignore(window, b);
        }
        if (r.rc != MPI_SUCCESS)
            abandon(reqs, 2 * window);
    }
    r.seconds = MPI_Wtime() - t0;
    free(reqs);
    return r;
}

/* spin busy-waits sec seconds on MPI_Wtime (netgauge's delay d). */
static void spin(double sec)
{
    if (sec <= 0)
        return;
    double until = MPI_Wtime() + sec;
    while (MPI_Wtime() < until)
        ;
}

/* netgauge's PRTT(n, d, s) exchanges (patterns/prtt.go): the client sends n
 * messages, spinning delay between consecutive sends, and receives one
 * answer; the server receives n, spinning delay before each after the
 * first when server_delay (the o_r run), and answers. arrivals sums the
 * server's first-to-last arrival times. */
cc_prtt_result cc_prtt(MPI_Comm comm, void *buf, int count, int peer, int tag, int n, double delay,
                       int iters, int client, int server_delay, int time_arrivals)
{
    GUARD_STRUCT(cc_prtt_result);
    cc_prtt_result r;
    memset(&r, 0, sizeof r);
    double t0 = MPI_Wtime();
    for (int e = 0; e < iters && r.rc == MPI_SUCCESS; e++) {
        if (client) {
            for (int i = 0; i < n && r.rc == MPI_SUCCESS; i++) {
                if (i > 0)
                    spin(delay);
                r.rc = MPI_Send(buf, count, MPI_BYTE, peer, tag, comm);
            }
            if (r.rc == MPI_SUCCESS)
                r.rc = MPI_Recv(buf, count, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            continue;
        }
        r.rc = MPI_Recv(buf, count, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        double first = time_arrivals ? MPI_Wtime() : 0;
        for (int i = 1; i < n && r.rc == MPI_SUCCESS; i++) {
            if (server_delay)
                spin(delay);
            r.rc = MPI_Recv(buf, count, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        }
        if (time_arrivals)
            r.arrivals += MPI_Wtime() - first;
        if (r.rc == MPI_SUCCESS)
            r.rc = MPI_Send(buf, count, MPI_BYTE, peer, tag, comm);
    }
    r.seconds = MPI_Wtime() - t0;
    return r;
}

/* The personalised all-to-all of patterns/alltoall.go among ranks 0..n-1,
 * iters times: receives from me-s and sends to me+s (s = 1..n-1) of block
 * bytes each, then one MPI_Waitall. */
cc_time_result cc_alltoall_pt2pt(MPI_Comm comm, char *send, char *recv, int block, int n, int me,
                                 int tag, int iters)
{
    GUARD_STRUCT(cc_time_result);
    cc_time_result r;
    r.rc = MPI_SUCCESS;
    r.seconds = 0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * (n - 1) + 1));
    if (reqs == NULL) {
        r.rc = MPI_ERR_NO_MEM;
        return r;
    }
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && r.rc == MPI_SUCCESS; i++) {
        int posted = 0;
        for (int s = 1; s < n && r.rc == MPI_SUCCESS; s++) {
            int src = (me - s + n) % n;
            r.rc = MPI_Irecv(recv + (size_t)src * block, block, MPI_BYTE, src, tag, comm, &reqs[posted]);
            if (r.rc == MPI_SUCCESS)
                posted++;
        }
        for (int s = 1; s < n && r.rc == MPI_SUCCESS; s++) {
            int d = (me + s) % n;
            r.rc = MPI_Isend(send + (size_t)d * block, block, MPI_BYTE, d, tag, comm, &reqs[posted]);
            if (r.rc == MPI_SUCCESS)
                posted++;
        }
        if (r.rc != MPI_SUCCESS) {
            abandon(reqs, posted);
            break;
        }
        r.rc = cc_waitall_ignore(posted, reqs);
    }
    r.seconds = MPI_Wtime() - t0;
    free(reqs);
    return r;
}

/* Below this address-space limit (ulimit -v) the Go runtime and the MPI
 * library linked into the process cannot be relied on to start: together
 * they reserve about 1.6 GiB at start, and past that the runtime dies in
 * its own allocator or creating a thread, with a stack dump and no word
 * of the limit. A constructor runs before the Go runtime starts, so the
 * limit is refused here, once, with the limit that works (exit status 2,
 * bad input: the job's setting). */
#define CC_MIN_ADDRESS_SPACE (2ULL << 30)
#define CC_ADVISED_LIMIT_KB 2200000ULL

__attribute__((constructor)) static void cc_check_address_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= CC_MIN_ADDRESS_SPACE)
        return;
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "commcost: the address-space limit (ulimit -v) of %llu kB is below the %llu kB the Go runtime "
                     "and the MPI library need to start (they reserve about 1.6 GiB at start): run under ulimit -v "
                     "%llu or more, or unlimited\n",
                     (unsigned long long)(r.rlim_cur / 1024), CC_MIN_ADDRESS_SPACE / 1024, CC_ADVISED_LIMIT_KB);
    if (n > 0 && write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1)) < 0)
        n = 0;
    _exit(2);
}
