/*
 * collective_ref.c: C reference for commcost's 'collective' pattern
 * (patterns/collective.go): one of MPI's collectives with OSU 6.1's
 * buffers and counts (MPI_FLOAT sums for the reductions, equal counts for
 * the v-forms, osu_reduce_scatter's split), --iters calls back to back per
 * repetition, the repetition protocol of ref.h (barrier, timed calls,
 * max-reduction), the median repetition per call.
 *
 *   mpicc -O2 -o collective_ref scripts/ref/collective_ref.c
 *   mpirun -np 4 ./collective_ref --op allreduce --bytes 8 --reps 1000
 *
 * Options: --op (barrier, bcast, reduce, allreduce, gather, gatherv,
 * scatter, scatterv, allgather, allgatherv, alltoall, alltoallv,
 * reduce_scatter_block, reduce_scatter), --bytes (OSU's size column),
 * --iters (1), --reps, --warmup-reps (2), --root (0).
 *
 * --nonblocking 1: the 'nonblocking' pattern (patterns/nonblocking.go), OSU
 * 6.1's overlap measurement: first the pure communication (start the
 * non-blocking form, wait at once), each rank's mean its target; then per
 * repetition start, OSU's dummy compute (a 25 x 25 float kernel, timed per
 * call, until the target has passed; MPI_Test after each of --probes parts),
 * wait. It reports the second measurement's median repetition.
 */
#include "ref.h"

enum {
    BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV,
    ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, RSBLOCK, RS, NOPS
};
static const char *names[NOPS] = {"barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter",
                                  "scatterv", "allgather", "allgatherv", "alltoall", "alltoallv",
                                  "reduce_scatter_block", "reduce_scatter"};

struct coll {
    MPI_Comm comm;
    int op, m, p, me, root, probes;
    long iters;
    char *send, *recv;
    int *counts, *displs, *rscounts;
    double target; /* seconds of dummy compute per overlapped call */
};

/* OSU's dummy compute kernel (osu_util_mpi.c compute_on_host). */
#define DIM 25
static float a[DIM][DIM], x[DIM], y[DIM];

static void compute_on_host(void)
{
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < DIM; j++)
            x[i] = x[i] + a[i][j] * a[j][i] + y[j];
}

static void do_compute(double target)
{
    double elapsed = 0;
    while (elapsed < target) {
        double t1 = MPI_Wtime();
        compute_on_host();
        elapsed += MPI_Wtime() - t1;
    }
}

static void start(struct coll *c, MPI_Request *req)
{
    int m = c->m, n = m / (int)sizeof(float);
    switch (c->op) {
    case BARRIER:
        MPI_Ibarrier(c->comm, req);
        break;
    case BCAST:
        MPI_Ibcast(c->send, m, MPI_BYTE, c->root, c->comm, req);
        break;
    case REDUCE:
        MPI_Ireduce(c->send, c->recv, n, MPI_FLOAT, MPI_SUM, c->root, c->comm, req);
        break;
    case ALLREDUCE:
        MPI_Iallreduce(c->send, c->recv, n, MPI_FLOAT, MPI_SUM, c->comm, req);
        break;
    case GATHER:
        MPI_Igather(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm, req);
        break;
    case GATHERV:
        MPI_Igatherv(c->send, m, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->root, c->comm, req);
        break;
    case SCATTER:
        MPI_Iscatter(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm, req);
        break;
    case SCATTERV:
        MPI_Iscatterv(c->send, c->counts, c->displs, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm, req);
        break;
    case ALLGATHER:
        MPI_Iallgather(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm, req);
        break;
    case ALLGATHERV:
        MPI_Iallgatherv(c->send, m, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->comm, req);
        break;
    case ALLTOALL:
        MPI_Ialltoall(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm, req);
        break;
    case ALLTOALLV:
        MPI_Ialltoallv(c->send, c->counts, c->displs, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->comm, req);
        break;
    }
}

/* overlapped is one repetition of the overlap measurement. */
static double overlapped(void *arg)
{
    struct coll *c = arg;
    MPI_Request req;
    double t0 = MPI_Wtime();
    start(c, &req);
    if (c->target > 0) {
        if (c->probes > 0) {
            for (int i = 0; i < c->probes; i++) {
                int flag;
                do_compute(c->target / c->probes);
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            }
        } else {
            do_compute(c->target);
        }
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

static void call(struct coll *c)
{
    int m = c->m, n = m / (int)sizeof(float);
    switch (c->op) {
    case BARRIER:
        MPI_Barrier(c->comm);
        break;
    case BCAST:
        MPI_Bcast(c->send, m, MPI_BYTE, c->root, c->comm);
        break;
    case REDUCE:
        MPI_Reduce(c->send, c->recv, n, MPI_FLOAT, MPI_SUM, c->root, c->comm);
        break;
    case ALLREDUCE:
        MPI_Allreduce(c->send, c->recv, n, MPI_FLOAT, MPI_SUM, c->comm);
        break;
    case GATHER:
        MPI_Gather(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm);
        break;
    case GATHERV:
        MPI_Gatherv(c->send, m, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->root, c->comm);
        break;
    case SCATTER:
        MPI_Scatter(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm);
        break;
    case SCATTERV:
        MPI_Scatterv(c->send, c->counts, c->displs, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm);
        break;
    case ALLGATHER:
        MPI_Allgather(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm);
        break;
    case ALLGATHERV:
        MPI_Allgatherv(c->send, m, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->comm);
        break;
    case ALLTOALL:
        MPI_Alltoall(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm);
        break;
    case ALLTOALLV:
        MPI_Alltoallv(c->send, c->counts, c->displs, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, c->comm);
        break;
    case RSBLOCK:
        MPI_Reduce_scatter_block(c->send, c->recv, n, MPI_FLOAT, MPI_SUM, c->comm);
        break;
    case RS:
        MPI_Reduce_scatter(c->send, c->recv, c->rscounts, MPI_FLOAT, MPI_SUM, c->comm);
        break;
    }
}

static double kernel(void *arg)
{
    struct coll *c = arg;
    double t0 = MPI_Wtime();
    for (long i = 0; i < c->iters; i++)
        call(c);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct coll c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c.comm, &c.me);
    MPI_Comm_size(c.comm, &c.p);
    const char *op = ref_str(argc, argv, "--op", "allreduce");
    c.m = (int)ref_opt(argc, argv, "--bytes", 8);
    c.iters = ref_opt(argc, argv, "--iters", 1);
    c.root = (int)ref_opt(argc, argv, "--root", 0);
    int reps = (int)ref_opt(argc, argv, "--reps", 1000);
    int wreps = (int)ref_opt(argc, argv, "--warmup-reps", 2);
    int nonblocking = (int)ref_opt(argc, argv, "--nonblocking", 0);
    c.probes = (int)ref_opt(argc, argv, "--probes", 0);
    for (int i = 0; i < DIM; i++) {
        x[i] = y[i] = 1.0f;
        for (int j = 0; j < DIM; j++)
            a[i][j] = 2.0f;
    }
    c.op = -1;
    for (int i = 0; i < NOPS; i++)
        if (strcmp(op, names[i]) == 0)
            c.op = i;
    if (c.p < 2 || c.op < 0 || reps < 1 || c.iters < 1 || c.root >= c.p || (nonblocking && c.op >= RSBLOCK)) {
        if (c.me == 0)
            fprintf(stderr, "collective_ref: needs 2 ranks or more, a known --op, --reps and --iters >= 1, --root < p\n");
        MPI_Finalize();
        return 2;
    }
    if (c.op == BARRIER)
        c.m = 0;
    size_t pm = (size_t)c.p * (size_t)c.m;
    c.send = ref_buffer(pm, 1);
    c.recv = ref_buffer(pm, 0);
    c.counts = malloc(sizeof(int) * (size_t)c.p);
    c.displs = malloc(sizeof(int) * (size_t)c.p);
    c.rscounts = malloc(sizeof(int) * (size_t)c.p);
    int n = c.m / (int)sizeof(float);
    for (int i = 0; i < c.p; i++) {
        c.counts[i] = c.m;
        c.displs[i] = i * c.m;
        /* osu_reduce_scatter.c's split of n floats */
        c.rscounts[i] = n < c.p ? (i < n) : n / c.p + (i < n % c.p);
    }
    char what[200];
    if (nonblocking) {
        double own;
        c.target = 0;
        ref_measure_mean(c.comm, wreps, reps, 0, overlapped, &c, &own);
        c.target = own;
        double med = ref_measure(c.comm, wreps, reps, 0, overlapped, &c);
        snprintf(what, sizeof what, "collective_ref i%s: bytes %d reps %d on %d ranks, seconds per overlapped call", op,
                 c.m, reps, c.p);
        ref_report(what, med, reps);
    } else {
        double med = ref_measure(c.comm, wreps, reps, 0, kernel, &c);
        snprintf(what, sizeof what, "collective_ref %s: bytes %d iters %ld reps %d on %d ranks, seconds per call", op,
                 c.m, c.iters, reps, c.p);
        ref_report(what, med / (double)c.iters, reps);
    }
    MPI_Finalize();
    return 0;
}
