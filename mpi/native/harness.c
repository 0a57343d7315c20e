/* harness.c: batches of timed repetitions; see harness.h and batch.go.
 *
 * The kernels themselves are those of shim.c and access.c (one repetition
 * each); this file adds the repetition loop around them, so that nothing
 * runs between a repetition's barrier and its timer but C. */
#include <math.h>
#include <string.h>

#include "harness.h"

typedef struct {
    int reps, sync, rank0, me;
    double *own, *samples;
} batch;

/* rep_fn runs repetition i of a kernel, stores this rank's time in *own
 * (left 0 when the rank takes no part) and returns an MPI code. */
typedef int (*rep_fn)(void *kernel, int i, double *own);

/* run_batch is the repetition loop of patterns.Measure under SyncBarrier
 * (MEASURE.md: barrier before each timed repetition, maximum over ranks):
 * the barrier, the kernel, and one MPI_Allreduce (max) of the contribution
 * and a failure flag. The rank whose kernel failed returns its code; the
 * others learn it from the flag in the same repetition and return
 * peer_failed, so no rank is left in a barrier the others never reach. */
static cc_batch_result run_batch(const batch *b, MPI_Comm comm, rep_fn rep, void *kernel)
{
    cc_batch_result r;
    memset(&r, 0, sizeof r);
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    for (int i = 0; i < b->reps; i++) {
        if (b->sync && (r.rc = MPI_Barrier(comm)) != MPI_SUCCESS)
            return r;
        double t = 0;
        int rc = rep(kernel, i, &t);
        b->own[i] = t;
        if (!b->sync) {
            if (rc != MPI_SUCCESS) {
                r.rc = rc;
                return r;
            }
            r.done++;
            continue;
        }
        double in[2] = {b->rank0 && b->me != 0 ? -HUGE_VAL : t, rc != MPI_SUCCESS ? 1.0 : 0.0};
        double out[2] = {0, 0};
        int arc = MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (rc != MPI_SUCCESS || arc != MPI_SUCCESS) {
            r.rc = rc != MPI_SUCCESS ? rc : arc;
            return r;
        }
        if (out[1] > 0) {
            r.peer_failed = 1;
            return r;
        }
        b->samples[i] = out[0];
        r.done++;
    }
    return r;
}

#define BATCH_ARGS int reps, int sync, int rank0, int me, double *own, double *samples
#define BATCH {reps, sync, rank0, me, own, samples}

typedef struct {
    MPI_Comm comm;
    void *sbuf, *rbuf;
    int count, peer, tag, iters, initiator;
} pingpong;

static int pingpong_rep(void *kernel, int i, double *own)
{
    const pingpong *k = kernel;
    (void)i;
    if (k->peer < 0)
        return MPI_SUCCESS;
    cc_time_result t = cc_pingpong(k->comm, k->sbuf, k->rbuf, k->count, k->peer, k->tag, k->iters, k->initiator);
    *own = t.seconds;
    return t.rc;
}

cc_batch_result cc_pingpong_batch(MPI_Comm comm, BATCH_ARGS, void *sbuf, void *rbuf, int count, int peer, int tag,
                                  int iters, int initiator)
{
    batch b = BATCH;
    pingpong k = {comm, sbuf, rbuf, count, peer, tag, iters, initiator};
    return run_batch(&b, comm, pingpong_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    void *buf;
    int count, peer, tag, window, iters, sender;
} bandwidth;

static int bandwidth_rep(void *kernel, int i, double *own)
{
    const bandwidth *k = kernel;
    (void)i;
    if (k->peer < 0)
        return MPI_SUCCESS;
    cc_time_result t = cc_bandwidth(k->comm, k->buf, k->count, k->peer, k->tag, k->window, k->iters, k->sender);
    *own = t.seconds;
    return t.rc;
}

cc_batch_result cc_bandwidth_batch(MPI_Comm comm, BATCH_ARGS, void *buf, int count, int peer, int tag, int window,
                                   int iters, int sender)
{
    batch b = BATCH;
    bandwidth k = {comm, buf, count, peer, tag, window, iters, sender};
    return run_batch(&b, comm, bandwidth_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    void *sbuf, *rbuf;
    int count, peer, tag, window, iters, first;
} bibw;

static int bibw_rep(void *kernel, int i, double *own)
{
    const bibw *k = kernel;
    (void)i;
    if (k->peer < 0)
        return MPI_SUCCESS;
    cc_time_result t = cc_bibw(k->comm, k->sbuf, k->rbuf, k->count, k->peer, k->tag, k->window, k->iters, k->first);
    *own = t.seconds;
    return t.rc;
}

cc_batch_result cc_bibw_batch(MPI_Comm comm, BATCH_ARGS, void *sbuf, void *rbuf, int count, int peer, int tag,
                              int window, int iters, int first)
{
    batch b = BATCH;
    bibw k = {comm, sbuf, rbuf, count, peer, tag, window, iters, first};
    return run_batch(&b, comm, bibw_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    void *buf;
    int count, peer, tag, n;
    double delay;
    int iters, client, server_delay, report;
} prtt;

static int prtt_rep(void *kernel, int i, double *own)
{
    const prtt *k = kernel;
    (void)i;
    if (k->peer < 0)
        return MPI_SUCCESS;
    cc_prtt_result t = cc_prtt(k->comm, k->buf, k->count, k->peer, k->tag, k->n, k->delay, k->iters, k->client,
                               k->server_delay, k->report == 1);
    switch (k->report) {
    case 0:
        *own = t.seconds;
        break;
    case 1:
        *own = t.arrivals;
        break;
    }
    return t.rc;
}

cc_batch_result cc_prtt_batch(MPI_Comm comm, BATCH_ARGS, void *buf, int count, int peer, int tag, int n,
                              double delay, int iters, int client, int server_delay, int report)
{
    batch b = BATCH;
    prtt k = {comm, buf, count, peer, tag, n, delay, iters, client, server_delay, report};
    return run_batch(&b, comm, prtt_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    char *send, *recv;
    int block, n, me, tag, iters;
} alltoall;

static int alltoall_rep(void *kernel, int i, double *own)
{
    const alltoall *k = kernel;
    (void)i;
    if (k->me >= k->n)
        return MPI_SUCCESS;
    cc_time_result t = cc_alltoall_pt2pt(k->comm, k->send, k->recv, k->block, k->n, k->me, k->tag, k->iters);
    *own = t.seconds;
    return t.rc;
}

cc_batch_result cc_alltoall_batch(MPI_Comm comm, BATCH_ARGS, char *send, char *recv, int block, int n, int tag,
                                  int iters)
{
    batch b = BATCH;
    alltoall k = {comm, send, recv, block, n, me, tag, iters};
    return run_batch(&b, comm, alltoall_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    char *bufs[CC_STEP_BUFFERS];
    const cc_step *steps;
    const int *start;
    int nprogs;
    const int *aux;
    int size, iters;
} program;

/* exec_step runs one step; the spans were checked in Go (mpi.CheckSteps). */
static int exec_step(const program *k, const cc_step *s)
{
    char *sb = k->bufs[s->sbuf] + s->soff, *rb = k->bufs[s->rbuf] + s->roff;
    int p = k->size;
    switch (s->op) {
    case CC_STEP_SEND:
        return MPI_Send(sb, s->slen, MPI_BYTE, s->peer, s->tag, k->comm);
    case CC_STEP_RECV:
        return MPI_Recv(rb, s->rlen, MPI_BYTE, s->from, s->tag, k->comm, MPI_STATUS_IGNORE);
    case CC_STEP_SENDRECV:
        return MPI_Sendrecv(sb, s->slen, MPI_BYTE, s->peer, s->tag, rb, s->rlen, MPI_BYTE, s->from, s->tag, k->comm,
                            MPI_STATUS_IGNORE);
    case CC_STEP_COPY:
        memmove(rb, sb, (size_t)s->slen); /* Go's copy: the spans may overlap */
        return MPI_SUCCESS;
    case CC_STEP_BCAST:
        return MPI_Bcast(sb, s->slen, MPI_BYTE, s->peer, k->comm);
    case CC_STEP_ALLGATHER:
        return MPI_Allgather(sb, s->slen, MPI_BYTE, rb, s->slen, MPI_BYTE, k->comm);
    case CC_STEP_SCATTER:
        return MPI_Scatter(sb, s->rlen, MPI_BYTE, rb, s->rlen, MPI_BYTE, s->peer, k->comm);
    case CC_STEP_ALLTOALL:
        return MPI_Alltoall(sb, s->slen / p, MPI_BYTE, rb, s->slen / p, MPI_BYTE, k->comm);
    case CC_STEP_ALLTOALLV: {
        const int *c = k->aux + s->aux;
        return MPI_Alltoallv(sb, c, c + p, MPI_BYTE, rb, c + 2 * p, c + 3 * p, MPI_BYTE, k->comm);
    }
    }
    return MPI_ERR_INTERN;
}

static int program_rep(void *kernel, int i, double *own)
{
    const program *k = kernel;
    int j = k->nprogs == 1 ? 0 : i;
    const cc_step *first = k->steps + k->start[j], *end = k->steps + k->start[j + 1];
    if (first == end)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (int it = 0; it < k->iters; it++)
        for (const cc_step *s = first; s < end; s++) {
            int rc = exec_step(k, s);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    *own = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

cc_batch_result cc_steps_batch(MPI_Comm comm, BATCH_ARGS, char *b0, char *b1, char *b2, char *b3,
                               const cc_step *steps, const int *start, int nprogs, const int *aux, int size, int iters)
{
    batch b = BATCH;
    program k = {comm, {b0, b1, b2, b3}, steps, start, nprogs, aux, size, iters};
    return run_batch(&b, comm, program_rep, &k);
}

typedef struct {
    MPI_Comm comm;
    int op, dtype, rop, root, count;
    void *sbuf, *rbuf;
    int *counts, *displs, *rcounts, *rdispls;
    int iters;
} coll;

/* coll_call makes one call; the arguments were checked in Go. */
static int coll_call(const coll *k)
{
    MPI_Comm comm = k->comm;
    MPI_Datatype dt = cc_dtype_of(k->dtype);
    MPI_Op op = cc_op_of(k->rop);
    switch (k->op) {
    case CC_COLL_BARRIER:
        return MPI_Barrier(comm);
    case CC_COLL_BCAST:
        return MPI_Bcast(k->sbuf, k->count, MPI_BYTE, k->root, comm);
    case CC_COLL_REDUCE:
        return MPI_Reduce(k->sbuf, k->rbuf, k->count, dt, op, k->root, comm);
    case CC_COLL_ALLREDUCE:
        return MPI_Allreduce(k->sbuf, k->rbuf, k->count, dt, op, comm);
    case CC_COLL_GATHER:
        return MPI_Gather(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm);
    case CC_COLL_GATHERV:
        return MPI_Gatherv(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->counts, k->displs, MPI_BYTE, k->root, comm);
    case CC_COLL_SCATTER:
        return MPI_Scatter(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm);
    case CC_COLL_SCATTERV:
        return MPI_Scatterv(k->sbuf, k->counts, k->displs, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm);
    case CC_COLL_ALLGATHER:
        return MPI_Allgather(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm);
    case CC_COLL_ALLGATHERV:
        return MPI_Allgatherv(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->counts, k->displs, MPI_BYTE, comm);
    case CC_COLL_ALLTOALL:
        return MPI_Alltoall(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm);
    case CC_COLL_ALLTOALLV:
        return MPI_Alltoallv(k->sbuf, k->counts, k->displs, MPI_BYTE, k->rbuf, k->rcounts, k->rdispls, MPI_BYTE, comm);
    case CC_COLL_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(k->sbuf, k->rbuf, k->count, dt, op, comm);
    case CC_COLL_REDUCE_SCATTER:
        return MPI_Reduce_scatter(k->sbuf, k->rbuf, k->counts, dt, op, comm);
    }
    return MPI_ERR_INTERN;
}

static int coll_rep(void *kernel, int i, double *own)
{
    const coll *k = kernel;
    (void)i;
    double t0 = MPI_Wtime();
    for (int it = 0; it < k->iters; it++) {
        int rc = coll_call(k);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *own = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

cc_batch_result cc_coll_batch(MPI_Comm comm, BATCH_ARGS, int op, int dtype, int rop, int root, int count, void *sbuf,
                              void *rbuf, int *counts, int *displs, int *rcounts, int *rdispls, int iters)
{
    batch b = BATCH;
    coll k = {comm, op, dtype, rop, root, count, sbuf, rbuf, counts, displs, rcounts, rdispls, iters};
    return run_batch(&b, comm, coll_rep, &k);
}

/* coll_start starts the non-blocking form of k's call into *req. */
static int coll_start(const coll *k, MPI_Request *req)
{
#if MPI_VERSION >= 3
    MPI_Comm comm = k->comm;
    MPI_Datatype dt = cc_dtype_of(k->dtype);
    MPI_Op op = cc_op_of(k->rop);
    switch (k->op) {
    case CC_COLL_BARRIER:
        return MPI_Ibarrier(comm, req);
    case CC_COLL_BCAST:
        return MPI_Ibcast(k->sbuf, k->count, MPI_BYTE, k->root, comm, req);
    case CC_COLL_REDUCE:
        return MPI_Ireduce(k->sbuf, k->rbuf, k->count, dt, op, k->root, comm, req);
    case CC_COLL_ALLREDUCE:
        return MPI_Iallreduce(k->sbuf, k->rbuf, k->count, dt, op, comm, req);
    case CC_COLL_GATHER:
        return MPI_Igather(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm, req);
    case CC_COLL_GATHERV:
        return MPI_Igatherv(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->counts, k->displs, MPI_BYTE, k->root, comm, req);
    case CC_COLL_SCATTER:
        return MPI_Iscatter(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm, req);
    case CC_COLL_SCATTERV:
        return MPI_Iscatterv(k->sbuf, k->counts, k->displs, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, k->root, comm, req);
    case CC_COLL_ALLGATHER:
        return MPI_Iallgather(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm, req);
    case CC_COLL_ALLGATHERV:
        return MPI_Iallgatherv(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->counts, k->displs, MPI_BYTE, comm, req);
    case CC_COLL_ALLTOALL:
        return MPI_Ialltoall(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm, req);
    case CC_COLL_ALLTOALLV:
        return MPI_Ialltoallv(k->sbuf, k->counts, k->displs, MPI_BYTE, k->rbuf, k->rcounts, k->rdispls, MPI_BYTE, comm,
                              req);
    }
    return MPI_ERR_INTERN;
#else
    (void)k;
    (void)req;
    return MPI_ERR_OTHER;
#endif
}

/* OSU's dummy compute (osu_util_mpi.c): compute_on_host over DIM x DIM
 * floats, repeated until the target has passed, each call timed. The
 * arrays are globals, so the compiler keeps the work. */
#define DUMMY_DIM 25
static float dummy_a[DUMMY_DIM][DUMMY_DIM], dummy_x[DUMMY_DIM], dummy_y[DUMMY_DIM];
static int dummy_ready;

static void dummy_init(void)
{
    for (int i = 0; i < DUMMY_DIM; i++) {
        dummy_x[i] = dummy_y[i] = 1.0f;
        for (int j = 0; j < DUMMY_DIM; j++)
            dummy_a[i][j] = 2.0f;
    }
    dummy_ready = 1;
}

static void compute_on_host(void)
{
    for (int i = 0; i < DUMMY_DIM; i++)
        for (int j = 0; j < DUMMY_DIM; j++)
            dummy_x[i] = dummy_x[i] + dummy_a[i][j] * dummy_a[j][i] + dummy_y[j];
}

void cc_dummy_compute(double seconds)
{
    if (!dummy_ready)
        dummy_init();
    double elapsed = 0;
    while (elapsed < seconds) {
        double t1 = MPI_Wtime();
        compute_on_host();
        elapsed += MPI_Wtime() - t1;
    }
}

typedef struct {
    coll c;
    double compute;
    int probes;
    double *cpu, *test;
} overlap;

/* overlap_rep is one iteration of OSU's second loop (pure communication
 * when compute is 0): start, dummy compute with optional MPI_Test probes,
 * wait. */
static int overlap_rep(void *kernel, int i, double *own)
{
    overlap *k = kernel;
    double t0 = MPI_Wtime();
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = coll_start(&k->c, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    double tc = MPI_Wtime(), test = 0;
    if (k->compute > 0) {
        if (k->probes > 0) {
            for (int n = 0; n < k->probes && rc == MPI_SUCCESS; n++) {
                cc_dummy_compute(k->compute / k->probes);
                int flag = 0;
                double t1 = MPI_Wtime();
                rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                test += MPI_Wtime() - t1;
            }
        } else {
            cc_dummy_compute(k->compute);
        }
    }
    tc = MPI_Wtime() - tc;
    int wrc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    *own = MPI_Wtime() - t0;
    k->cpu[i] = tc;
    k->test[i] = test;
    return rc != MPI_SUCCESS ? rc : wrc;
}

cc_batch_result cc_overlap_batch(MPI_Comm comm, BATCH_ARGS, int op, int dtype, int rop, int root, int count,
                                 void *sbuf, void *rbuf, int *counts, int *displs, int *rcounts, int *rdispls,
                                 double compute, int probes, double *cpu, double *test)
{
    batch b = BATCH;
    if (!dummy_ready)
        dummy_init();
    overlap k = {{comm, op, dtype, rop, root, count, sbuf, rbuf, counts, displs, rcounts, rdispls, 1}, compute, probes,
                 cpu, test};
    return run_batch(&b, comm, overlap_rep, &k);
}

typedef struct {
    void *in, *inout;
    int count, dtype, op, iters;
} reduce_local;

static int reduce_local_rep(void *kernel, int i, double *own)
{
    const reduce_local *k = kernel;
    MPI_Datatype dt = cc_dtype_of(k->dtype);
    MPI_Op op = cc_op_of(k->op);
    (void)i;
    double t0 = MPI_Wtime();
    for (int it = 0; it < k->iters; it++) {
        int rc = MPI_Reduce_local(k->in, k->inout, k->count, dt, op);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *own = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

cc_batch_result cc_reduce_local_batch(BATCH_ARGS, MPI_Comm comm, void *in, void *inout, int count, int dtype, int op,
                                      int iters)
{
    batch b = BATCH;
    reduce_local k = {in, inout, count, dtype, op, iters};
    return run_batch(&b, comm, reduce_local_rep, &k);
}

static int rma_rep(void *kernel, int i, double *own)
{
    (void)i;
    return cc_rma_rep(kernel, own);
}

cc_batch_result cc_rma_batch(MPI_Comm comm, BATCH_ARGS, cc_rma_kernel *k)
{
    batch b = BATCH;
    return run_batch(&b, comm, rma_rep, k);
}

typedef struct {
    cc_access *a;
    const int *targets, *incoming;
    int steps, my_slot, check;
    unsigned long long rep0;
    cc_access_result last;
} access_batch;

static int access_rep(void *kernel, int i, double *own)
{
    access_batch *k = kernel;
    const size_t row = (size_t)k->steps * (size_t)k->a->k;
    k->last = cc_access_run(k->a, k->targets + (size_t)i * row, k->steps, k->my_slot, k->incoming[i],
                            k->rep0 + (unsigned long long)i, k->check);
    *own = k->last.seconds;
    if (k->last.rc != MPI_SUCCESS)
        return k->last.rc;
    return k->last.fault != 0 ? CC_ERR_FAULT : MPI_SUCCESS;
}

cc_access_batch_result cc_access_batch(cc_access *a, BATCH_ARGS, const int *targets, int steps, const int *incoming,
                                       int my_slot, unsigned long long rep0, int check)
{
    batch b = BATCH;
    access_batch k;
    memset(&k, 0, sizeof k);
    k.a = a;
    k.targets = targets;
    k.incoming = incoming;
    k.steps = steps;
    k.my_slot = my_slot;
    k.check = check;
    k.rep0 = rep0;
    cc_access_batch_result r;
    r.b = run_batch(&b, a->comm, access_rep, &k);
    r.fault = k.last;
    return r;
}
