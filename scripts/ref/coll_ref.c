/*
 * coll_ref.c: C reference for commcost's multi-rank patterns (paper 001's
 * all-to-all, paper 002's permutations, paper 003's aggregate operations,
 * patterns/), with the repetition protocol of ref.h: the maximum over ranks
 * of each rank's time for --iters operations, divided by --iters.
 *
 *   mpicc -O2 -o coll_ref scripts/ref/coll_ref.c
 *   mpirun -np 4 ./coll_ref --mode aggregate --op bcast --impl textbook --bytes 8 --reps 1000
 *
 * Modes:
 *   alltoall      every rank posts MPI_Irecv from me-s and MPI_Isend to me+s
 *                 (s = 1..p-1) of --bytes each, then one MPI_Waitall
 *   permutations  per repetition a random permutation without fixed points;
 *                 one MPI_Sendrecv of --bytes to pi(me) and from pi^-1(me)
 *   aggregate     --op bcast|allgather|scatter|alltoall|qshift|news with
 *                 --impl mpi (the library's collective; MPI_Alltoallv for the
 *                 shifts) or textbook (binomial tree, recursive doubling or
 *                 ring, pairwise exchange, direct shifts); m = --bytes
 * Options: --bytes, --iters (1), --reps, --warmup-reps (2), --root (0),
 * --q (1).
 */
#include "ref.h"

#define TAG 360

enum { BCAST, ALLGATHER, SCATTER, ALLTOALL, QSHIFT, NEWS };

struct coll {
    MPI_Comm comm;
    int me, p, m, op, textbook, root, q;
    long iters;
    char *send, *recv, *tmp;
    MPI_Request *reqs;
    int nb[4];                   /* NEWS neighbours N, S, W, E */
    int *sc, *sd, *rc, *rd;      /* Alltoallv layout of the shifts */
    int dst, src;                /* this repetition's permutation */
    int *perm;
};

static int pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

static void sendrecv(struct coll *c, char *s, int n, int to, char *r, int from, int tag)
{
    MPI_Sendrecv(s, n, MPI_BYTE, to, tag, r, n, MPI_BYTE, from, tag, c->comm, MPI_STATUS_IGNORE);
}

/* One textbook operation (paper 003's cost table, hypercube column). */
static void textbook(struct coll *c)
{
    int p = c->p, m = c->m, me = c->me;
    switch (c->op) {
    case BCAST: { /* binomial tree from the root */
        int rel = (me - c->root + p) % p, mask = 1;
        for (; mask < p; mask <<= 1)
            if (rel & mask) {
                MPI_Recv(c->send, m, MPI_BYTE, (me - mask + p) % p, TAG, c->comm, MPI_STATUS_IGNORE);
                break;
            }
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (rel + mask < p)
                MPI_Send(c->send, m, MPI_BYTE, (me + mask) % p, TAG, c->comm);
        break;
    }
    case SCATTER: { /* binomial tree, the data halving at every level */
        int rel = (me - c->root + p) % p, mask = 1, cnt = 0;
        if (rel == 0) {
            for (int i = 0; i < p; i++)
                memcpy(c->tmp + (size_t)i * m, c->send + (size_t)((i + c->root) % p) * m, (size_t)m);
            cnt = p;
        }
        for (; mask < p; mask <<= 1)
            if (rel & mask) {
                cnt = mask < p - rel ? mask : p - rel;
                MPI_Recv(c->tmp, cnt * m, MPI_BYTE, (me - mask + p) % p, TAG, c->comm, MPI_STATUS_IGNORE);
                break;
            }
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (rel + mask < p) {
                MPI_Send(c->tmp + (size_t)mask * m, (cnt - mask) * m, MPI_BYTE, (me + mask) % p, TAG, c->comm);
                cnt = mask;
            }
        memcpy(c->recv, c->tmp, (size_t)m);
        break;
    }
    case ALLGATHER:
        memcpy(c->recv + (size_t)me * m, c->send, (size_t)m);
        if (pow2(p)) { /* recursive doubling */
            for (int mask = 1; mask < p; mask <<= 1) {
                int mine = me & ~(mask - 1), theirs = mine ^ mask;
                sendrecv(c, c->recv + (size_t)mine * m, mask * m, me ^ mask, c->recv + (size_t)theirs * m, me ^ mask,
                         TAG);
            }
        } else { /* ring */
            for (int s = 0; s < p - 1; s++) {
                int out = (me - s + p) % p, in = (me - s - 1 + p) % p;
                sendrecv(c, c->recv + (size_t)out * m, m, (me + 1) % p, c->recv + (size_t)in * m, (me - 1 + p) % p, TAG);
            }
        }
        break;
    case ALLTOALL: /* pairwise exchange, i XOR j on a power of two */
        memcpy(c->recv + (size_t)me * m, c->send + (size_t)me * m, (size_t)m);
        for (int j = 1; j < p; j++) {
            int to = pow2(p) ? me ^ j : (me + j) % p, from = pow2(p) ? me ^ j : (me - j + p) % p;
            sendrecv(c, c->send + (size_t)to * m, m, to, c->recv + (size_t)from * m, from, TAG);
        }
        break;
    case QSHIFT:
        sendrecv(c, c->send, m, (me + c->q) % p, c->recv, (me - c->q + p) % p, TAG);
        break;
    case NEWS: {
        static const int opposite[4] = {1, 0, 3, 2};
        for (int d = 0; d < 4; d++)
            sendrecv(c, c->send + (size_t)d * m, m, c->nb[d], c->recv + (size_t)d * m, c->nb[opposite[d]], TAG + d);
        break;
    }
    }
}

static void library(struct coll *c)
{
    int m = c->m;
    switch (c->op) {
    case BCAST:
        MPI_Bcast(c->send, m, MPI_BYTE, c->root, c->comm);
        break;
    case ALLGATHER:
        MPI_Allgather(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm);
        break;
    case SCATTER:
        MPI_Scatter(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->root, c->comm);
        break;
    case ALLTOALL:
        MPI_Alltoall(c->send, m, MPI_BYTE, c->recv, m, MPI_BYTE, c->comm);
        break;
    default:
        MPI_Alltoallv(c->op == NEWS ? c->tmp : c->send, c->sc, c->sd, MPI_BYTE, c->recv, c->rc, c->rd, MPI_BYTE, c->comm);
    }
}

static double aggregate(void *arg)
{
    struct coll *c = arg;
    double t0 = MPI_Wtime();
    for (long i = 0; i < c->iters; i++) {
        if (c->textbook)
            textbook(c);
        else
            library(c);
    }
    return MPI_Wtime() - t0;
}

static double alltoall(void *arg)
{
    struct coll *c = arg;
    int p = c->p, m = c->m, me = c->me;
    double t0 = MPI_Wtime();
    for (long i = 0; i < c->iters; i++) {
        int n = 0;
        for (int s = 1; s < p; s++) {
            int from = (me - s + p) % p;
            MPI_Irecv(c->recv + (size_t)from * m, m, MPI_BYTE, from, TAG, c->comm, &c->reqs[n++]);
        }
        for (int s = 1; s < p; s++) {
            int to = (me + s) % p;
            MPI_Isend(c->send + (size_t)to * m, m, MPI_BYTE, to, TAG, c->comm, &c->reqs[n++]);
        }
        ref_waitall(n, c->reqs);
    }
    return MPI_Wtime() - t0;
}

/* draw picks the next repetition's permutation (the same on every rank). */
static void draw(struct coll *c)
{
    for (;;) {
        for (int i = 0; i < c->p; i++)
            c->perm[i] = i;
        for (int i = c->p - 1; i > 0; i--) {
            int j = rand() % (i + 1), t = c->perm[i];
            c->perm[i] = c->perm[j];
            c->perm[j] = t;
        }
        int ok = 1;
        for (int i = 0; i < c->p; i++)
            ok &= c->perm[i] != i;
        if (ok)
            break;
    }
    c->dst = c->perm[c->me];
    for (int i = 0; i < c->p; i++)
        if (c->perm[i] == c->me)
            c->src = i;
}

static double permutation(void *arg)
{
    struct coll *c = arg;
    double t0 = MPI_Wtime();
    for (long i = 0; i < c->iters; i++)
        sendrecv(c, c->send, c->m, c->dst, c->recv, c->src, TAG);
    double t = MPI_Wtime() - t0;
    draw(c); /* the next permutation, outside the timed region */
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct coll c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c.comm, &c.me);
    MPI_Comm_size(c.comm, &c.p);
    const char *mode = ref_str(argc, argv, "--mode", "");
    const char *op = ref_str(argc, argv, "--op", "bcast");
    c.textbook = strcmp(ref_str(argc, argv, "--impl", "mpi"), "textbook") == 0;
    c.m = (int)ref_opt(argc, argv, "--bytes", 8);
    c.iters = ref_opt(argc, argv, "--iters", 1);
    c.root = (int)ref_opt(argc, argv, "--root", 0);
    c.q = (int)ref_opt(argc, argv, "--q", 1);
    int reps = (int)ref_opt(argc, argv, "--reps", 1000);
    int wreps = (int)ref_opt(argc, argv, "--warmup-reps", 2);
    static const char *ops[] = {"bcast", "allgather", "scatter", "alltoall", "qshift", "news"};
    c.op = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(op, ops[i]) == 0)
            c.op = i;
    if (c.p < 2 || c.op < 0 || reps < 1 || c.iters < 1 || c.root >= c.p || c.q < 1 || c.q >= c.p) {
        if (c.me == 0)
            fprintf(stderr, "coll_ref: needs 2 ranks or more, a known --op, --reps and --iters >= 1, --root < p, 1 <= --q < p\n");
        MPI_Finalize();
        return 2;
    }
    size_t pm = (size_t)c.p * (size_t)c.m;
    c.send = ref_buffer(pm > 4 * (size_t)c.m ? pm : 4 * (size_t)c.m, 'a' + c.me);
    c.recv = ref_buffer(pm > 4 * (size_t)c.m ? pm : 4 * (size_t)c.m, 0);
    c.tmp = ref_buffer(pm > 4 * (size_t)c.m ? pm : 4 * (size_t)c.m, 0);
    c.reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * c.p));
    c.perm = malloc(sizeof(int) * (size_t)c.p);
    c.sc = calloc((size_t)c.p, sizeof(int));
    c.sd = calloc((size_t)c.p, sizeof(int));
    c.rc = calloc((size_t)c.p, sizeof(int));
    c.rd = calloc((size_t)c.p, sizeof(int));
    /* NEWS on the most nearly square rows x cols torus (MPI_Dims_create). */
    int rows = 1;
    for (int r = 1; r * r <= c.p; r++)
        if (c.p % r == 0)
            rows = r;
    int cols = c.p / rows, row = c.me / cols, col = c.me % cols;
#define AT(rw, cl) ((((rw) + rows) % rows) * cols + ((cl) + cols) % cols)
    c.nb[0] = AT(row - 1, col);
    c.nb[1] = AT(row + 1, col);
    c.nb[2] = AT(row, col - 1);
    c.nb[3] = AT(row, col + 1);
    if (c.op == QSHIFT) {
        c.sc[(c.me + c.q) % c.p] = c.m;
        c.rc[(c.me - c.q + c.p) % c.p] = c.m;
    } else if (c.op == NEWS) {
        static const int opposite[4] = {1, 0, 3, 2};
        for (int d = 0; d < 4; d++) {
            c.sc[c.nb[d]] += c.m;
            c.rc[c.nb[opposite[d]]] += c.m;
        }
        for (int i = 1; i < c.p; i++) {
            c.sd[i] = c.sd[i - 1] + c.sc[i - 1];
            c.rd[i] = c.rd[i - 1] + c.rc[i - 1];
        }
    }
    ref_kernel kernel = aggregate;
    if (strcmp(mode, "alltoall") == 0)
        kernel = alltoall;
    else if (strcmp(mode, "permutations") == 0) {
        kernel = permutation;
        srand(1);
        draw(&c);
    } else if (strcmp(mode, "aggregate") != 0) {
        if (c.me == 0)
            fprintf(stderr, "coll_ref: --mode alltoall|permutations|aggregate\n");
        MPI_Finalize();
        return 2;
    }
    double med = ref_measure(c.comm, wreps, reps, 0, kernel, &c);
    char what[200];
    snprintf(what, sizeof what, "coll_ref %s %s %s: bytes %d iters %ld reps %d on %d ranks, seconds per operation", mode,
             kernel == aggregate ? op : "", kernel == aggregate ? (c.textbook ? "textbook" : "mpi") : "", c.m, c.iters,
             reps, c.p);
    ref_report(what, med / (double)c.iters, reps);
    MPI_Finalize();
    return 0;
}
