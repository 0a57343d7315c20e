/*
 * rma_ref.c: C reference for commcost's 'onesided' pattern
 * (patterns/onesided.go): OSU 6.1's one-sided loops (osu_put_latency.c and
 * its siblings) on an MPI_Win_allocate window between ranks 0 and 1, with
 * the repetition protocol of ref.h and rank 0's time, as OSU times it.
 *
 *   mpicc -O2 -o rma_ref scripts/ref/rma_ref.c
 *   mpirun -np 2 ./rma_ref --op put --mode lat --sync flush --bytes 8 --iters 1000 --reps 1000
 *
 * Options: --op put|get|acc|get_acc|fop|cas, --mode lat|bw|bibw, --sync
 * flush|lock|lock_all|fence|pscw, --bytes (per call; fop and cas: one
 * long long), --window (64), --iters, --warmup (untimed iterations), --reps,
 * --warmup-reps (2). It prints the median repetition: seconds per call for
 * lat (halved per round for fence and pscw), seconds per repetition for bw
 * and bibw.
 */
#include "ref.h"

enum { PUT, GET, ACC, GET_ACC, FOP, CAS };
enum { FLUSH, LOCK, LOCK_ALL, FENCE, PSCW };
enum { LAT, BW, BIBW };

struct rma {
    MPI_Win win;
    MPI_Group group;
    int op, sync, mode, bytes, count, window, peer, first;
    long iters;
    char *origin, *result, *compare;
};

static void issue(struct rma *k, int j)
{
    size_t off = (size_t)j * (size_t)k->bytes;
    MPI_Aint disp = (MPI_Aint)off;
    switch (k->op) {
    case PUT:
        MPI_Put(k->origin + off, k->count, MPI_BYTE, k->peer, disp, k->count, MPI_BYTE, k->win);
        break;
    case GET:
        MPI_Get(k->result + off, k->count, MPI_BYTE, k->peer, disp, k->count, MPI_BYTE, k->win);
        break;
    case ACC:
        MPI_Accumulate(k->origin + off, k->count, MPI_SIGNED_CHAR, k->peer, disp, k->count, MPI_SIGNED_CHAR, MPI_SUM,
                       k->win);
        break;
    case GET_ACC:
        MPI_Get_accumulate(k->origin + off, k->count, MPI_SIGNED_CHAR, k->result + off, k->count, MPI_SIGNED_CHAR,
                           k->peer, disp, k->count, MPI_SIGNED_CHAR, MPI_SUM, k->win);
        break;
    case FOP:
        MPI_Fetch_and_op(k->origin + off, k->result + off, MPI_INT64_T, k->peer, disp, MPI_SUM, k->win);
        break;
    case CAS:
        MPI_Compare_and_swap(k->origin + off, k->compare + off, k->result + off, MPI_INT64_T, k->peer, disp, k->win);
        break;
    }
}

static void calls(struct rma *k)
{
    int n = k->mode == LAT ? 1 : k->window;
    for (int j = 0; j < n; j++)
        issue(k, j);
}

static double kernel(void *arg)
{
    struct rma *k = arg;
    MPI_Win w = k->win;
    MPI_Group g = k->group;
    int p = k->peer;
    if (k->sync <= LOCK_ALL && !k->first)
        return 0; /* the passive target takes no part */
    if (k->sync == FLUSH)
        MPI_Win_lock(MPI_LOCK_SHARED, p, 0, w);
    double t0 = MPI_Wtime();
    for (long i = 0; i < k->iters; i++) {
        switch (k->sync) {
        case FLUSH:
            calls(k);
            MPI_Win_flush(p, w);
            break;
        case LOCK:
            MPI_Win_lock(MPI_LOCK_SHARED, p, 0, w);
            calls(k);
            MPI_Win_unlock(p, w);
            break;
        case LOCK_ALL:
            MPI_Win_lock_all(0, w);
            calls(k);
            MPI_Win_unlock_all(w);
            break;
        case FENCE:
            if (k->mode == BIBW) {
                MPI_Win_fence(0, w);
                calls(k);
                MPI_Win_fence(0, w);
            } else if (k->mode == BW) {
                MPI_Win_fence(0, w);
                if (k->first)
                    calls(k);
                MPI_Win_fence(0, w);
            } else {
                MPI_Win_fence(0, w);
                if (k->first)
                    calls(k);
                MPI_Win_fence(0, w);
                if (!k->first)
                    calls(k);
                MPI_Win_fence(0, w);
            }
            break;
        default: /* PSCW */
            if (k->mode == BIBW) {
                MPI_Win_post(g, 0, w);
                MPI_Win_start(g, 0, w);
                calls(k);
                MPI_Win_complete(w);
                MPI_Win_wait(w);
            } else if (k->mode == BW) {
                if (k->first) {
                    MPI_Win_start(g, 0, w);
                    calls(k);
                    MPI_Win_complete(w);
                } else {
                    MPI_Win_post(g, 0, w);
                    MPI_Win_wait(w);
                }
            } else if (k->first) {
                MPI_Win_start(g, 0, w);
                calls(k);
                MPI_Win_complete(w);
                MPI_Win_post(g, 0, w);
                MPI_Win_wait(w);
            } else {
                MPI_Win_post(g, 0, w);
                MPI_Win_wait(w);
                MPI_Win_start(g, 0, w);
                calls(k);
                MPI_Win_complete(w);
            }
        }
    }
    double t = MPI_Wtime() - t0;
    if (k->sync == FLUSH)
        MPI_Win_unlock(p, w);
    return t;
}

static int pick(const char *v, const char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    static const char *ops[] = {"put", "get", "acc", "get_acc", "fop", "cas"};
    static const char *syncs[] = {"flush", "lock", "lock_all", "fence", "pscw"};
    static const char *modes[] = {"lat", "bw", "bibw"};
    struct rma k;
    memset(&k, 0, sizeof k);
    k.op = pick(ref_str(argc, argv, "--op", "put"), ops, 6);
    k.sync = pick(ref_str(argc, argv, "--sync", "flush"), syncs, 5);
    k.mode = pick(ref_str(argc, argv, "--mode", "lat"), modes, 3);
    k.bytes = (int)ref_opt(argc, argv, "--bytes", 8);
    k.window = (int)ref_opt(argc, argv, "--window", 64);
    k.iters = ref_opt(argc, argv, "--iters", 1000);
    long warmup = ref_opt(argc, argv, "--warmup", 0);
    int reps = (int)ref_opt(argc, argv, "--reps", 1000);
    int wreps = (int)ref_opt(argc, argv, "--warmup-reps", 2);
    if (p != 2 || k.op < 0 || k.sync < 0 || k.mode < 0 || reps < 1 || k.window < 1) {
        if (me == 0)
            fprintf(stderr, "rma_ref: needs exactly 2 ranks, a known --op, --sync and --mode, --reps and --window >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (k.op == FOP || k.op == CAS)
        k.bytes = 8;
    k.count = k.op == FOP || k.op == CAS ? 1 : k.bytes;
    if (k.mode == LAT)
        k.window = 1;
    k.peer = 1 - me;
    k.first = me == 0;
    size_t n = (size_t)k.bytes * (size_t)k.window;
    char *base;
    MPI_Win_allocate((MPI_Aint)n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &k.win);
    memset(base, 0, n);
    k.origin = ref_buffer(n, 1);
    k.result = ref_buffer(n, 0);
    k.compare = ref_buffer(n, 0);
    MPI_Group all;
    MPI_Comm_group(MPI_COMM_WORLD, &all);
    MPI_Group_incl(all, 1, &k.peer, &k.group);
    MPI_Barrier(MPI_COMM_WORLD);
    long iters = k.iters;
    k.iters = warmup;
    if (warmup > 0)
        kernel(&k);
    k.iters = iters;
    double med = ref_measure(MPI_COMM_WORLD, wreps, reps, 1, kernel, &k);
    double scale = 1;
    if (k.mode == LAT)
        scale = 1.0 / ((double)iters * (k.sync >= FENCE ? 2 : 1));
    char what[200];
    snprintf(what, sizeof what, "rma_ref %s %s %s: bytes %d window %d iters %ld reps %d, seconds per %s", ops[k.op],
             modes[k.mode], syncs[k.sync], k.bytes, k.window, iters, reps, k.mode == LAT ? "call" : "repetition");
    ref_report(what, med * scale, reps);
    MPI_Group_free(&k.group);
    MPI_Group_free(&all);
    MPI_Win_free(&k.win);
    MPI_Finalize();
    return 0;
}
