/*
 * pt2pt_ref.c: C reference for commcost's two-party and paired patterns,
 * with the repetition protocol of ref.h, so bench_vs_c.sh can compare
 * commcost's timed loops with plain C of the same protocol.
 *
 *   mpicc -O2 -o pt2pt_ref scripts/ref/pt2pt_ref.c
 *   mpirun -np 2 ./pt2pt_ref --mode pingpong --bytes 8 --iters 1000 --warmup 100 --reps 1000
 *
 * Modes (the commcost subcommand of the same name, patterns/):
 *   pingpong   ranks 0 and 1, iters blocking round trips per repetition,
 *              separate send and receive buffers; rank 0's time / (2 iters)
 *   bandwidth  rank 0 posts window MPI_Isend of bytes, MPI_Waitall, receives
 *              a 4-byte ack; rank 1 the matching MPI_Irecv into one buffer;
 *              iters windows per repetition; rank 0's time (seconds)
 *   roundtrip  rank 0 and the last rank, blocking round trips; rank 0's
 *              time / iters (the full round trip)
 *   pairwise   rank i < n with n + i, all pairs at once (n = p/2); max over
 *              ranks of the time / (2 iters)
 *   rowcontention  rank i < n with 2n - 1 - i; as pairwise
 *   prtt       netgauge's PRTT(n, 0, s): rank 0 sends --n messages to the
 *              last rank and receives one answer; rank 0's time / iters
 *   bibw       osu_bibw: ranks 0 and 1 each post window MPI_Irecv and window
 *              MPI_Isend, rank 0 waits for its sends first, rank 1 for its
 *              receives; iters windows per repetition; rank 0's time
 *   mbwmr      osu_mbw_mr: rank i < --pairs (p/2) streams to i + pairs as
 *              bandwidth does, all pairs at once; max over ranks of the time
 *              per repetition (seconds)
 *   multilat   osu_multi_lat: rank i < p/2 ping-pongs with i + p/2, all at
 *              once (the pairwise protocol); max over ranks / (2 iters)
 * Options: --bytes, --iters, --warmup (untimed iterations before the
 * repetitions), --reps, --warmup-reps (default 2), --window (64), --n (1),
 * --pairs (p/2).
 */
#include "ref.h"

#define TAG 1

struct pp {
    MPI_Comm comm;
    char *sbuf, *rbuf;
    int bytes, peer, initiator, window, n;
    long iters;
    MPI_Request *reqs;
};

static double pingpong(void *arg)
{
    struct pp *a = arg;
    if (a->peer < 0)
        return 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < a->iters; i++) {
        if (a->initiator) {
            MPI_Send(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm);
            MPI_Recv(a->rbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(a->rbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, MPI_STATUS_IGNORE);
            MPI_Send(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm);
        }
    }
    return MPI_Wtime() - t0;
}

static double bandwidth(void *arg)
{
    struct pp *a = arg;
    char ack[4] = {0};
    if (a->peer < 0)
        return 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < a->iters; i++) {
        for (int w = 0; w < a->window; w++) {
            if (a->initiator)
                MPI_Isend(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, &a->reqs[w]);
            else
                MPI_Irecv(a->rbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, &a->reqs[w]);
        }
        ref_waitall(a->window, a->reqs);
        if (a->initiator)
            MPI_Recv(ack, 4, MPI_BYTE, a->peer, TAG, a->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, 4, MPI_BYTE, a->peer, TAG, a->comm);
    }
    return MPI_Wtime() - t0;
}

static double bibw(void *arg)
{
    struct pp *a = arg;
    if (a->peer < 0)
        return 0;
    MPI_Request *recvs = a->reqs, *sends = a->reqs + a->window;
    double t0 = MPI_Wtime();
    for (long i = 0; i < a->iters; i++) {
        for (int w = 0; w < a->window; w++)
            MPI_Irecv(a->rbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, &recvs[w]);
        for (int w = 0; w < a->window; w++)
            MPI_Isend(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, &sends[w]);
        ref_waitall(a->window, a->initiator ? sends : recvs);
        ref_waitall(a->window, a->initiator ? recvs : sends);
    }
    return MPI_Wtime() - t0;
}

static double prtt(void *arg)
{
    struct pp *a = arg;
    if (a->peer < 0)
        return 0;
    double t0 = MPI_Wtime();
    for (long e = 0; e < a->iters; e++) {
        if (a->initiator) {
            for (int i = 0; i < a->n; i++)
                MPI_Send(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm);
            MPI_Recv(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < a->n; i++)
                MPI_Recv(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm, MPI_STATUS_IGNORE);
            MPI_Send(a->sbuf, a->bytes, MPI_BYTE, a->peer, TAG, a->comm);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *mode = ref_str(argc, argv, "--mode", "");
    struct pp a;
    memset(&a, 0, sizeof a);
    a.comm = MPI_COMM_WORLD;
    a.bytes = (int)ref_opt(argc, argv, "--bytes", 8);
    a.iters = ref_opt(argc, argv, "--iters", 1000);
    a.window = (int)ref_opt(argc, argv, "--window", 64);
    a.n = (int)ref_opt(argc, argv, "--n", 1);
    long warmup = ref_opt(argc, argv, "--warmup", 0);
    int reps = (int)ref_opt(argc, argv, "--reps", 1000);
    int wreps = (int)ref_opt(argc, argv, "--warmup-reps", 2);
    if (p < 2 || reps < 1 || a.window < 1) {
        if (me == 0)
            fprintf(stderr, "pt2pt_ref: needs 2 ranks or more, --reps >= 1, --window >= 1\n");
        MPI_Finalize();
        return 2;
    }
    a.sbuf = ref_buffer((size_t)a.bytes, 'a' + me);
    a.rbuf = ref_buffer((size_t)a.bytes, 'z');
    a.reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * a.window));
    ref_kernel kernel = pingpong;
    int rank0 = 1;
    double scale = 1.0 / (2.0 * (double)a.iters);
    a.peer = -1;
    if (strcmp(mode, "pingpong") == 0 || strcmp(mode, "bandwidth") == 0 || strcmp(mode, "roundtrip") == 0 ||
        strcmp(mode, "prtt") == 0 || strcmp(mode, "bibw") == 0) {
        int other = strcmp(mode, "roundtrip") == 0 || strcmp(mode, "prtt") == 0 ? p - 1 : 1;
        if (me == 0 || me == other)
            a.peer = me == 0 ? other : 0;
        a.initiator = me == 0;
        if (strcmp(mode, "bandwidth") == 0 || strcmp(mode, "bibw") == 0) {
            kernel = strcmp(mode, "bibw") == 0 ? bibw : bandwidth;
            scale = 1;
        } else if (strcmp(mode, "roundtrip") == 0) {
            scale = 1.0 / (double)a.iters;
        } else if (strcmp(mode, "prtt") == 0) {
            kernel = prtt;
            scale = 1.0 / (double)a.iters;
        }
    } else if (strcmp(mode, "pairwise") == 0 || strcmp(mode, "rowcontention") == 0 || strcmp(mode, "multilat") == 0) {
        int n = p / 2;
        rank0 = 0;
        if (me < 2 * n) {
            a.peer = strcmp(mode, "rowcontention") != 0 ? (me < n ? n + me : me - n) : 2 * n - 1 - me;
            a.initiator = me < n;
        }
    } else if (strcmp(mode, "mbwmr") == 0) {
        int n = (int)ref_opt(argc, argv, "--pairs", p / 2);
        if (n < 1 || n > p / 2) {
            if (me == 0)
                fprintf(stderr, "pt2pt_ref: --pairs %d: need 1 <= pairs <= p/2\n", n);
            MPI_Finalize();
            return 2;
        }
        rank0 = 0;
        kernel = bandwidth;
        scale = 1;
        if (me < 2 * n) {
            a.peer = me < n ? n + me : me - n;
            a.initiator = me < n;
        }
    } else {
        if (me == 0)
            fprintf(stderr, "pt2pt_ref: --mode pingpong|bandwidth|roundtrip|pairwise|rowcontention|prtt|bibw|mbwmr|multilat\n");
        MPI_Finalize();
        return 2;
    }
    /* Untimed iterations first, as commcost runs them before its repetitions. */
    long iters = a.iters;
    a.iters = warmup;
    MPI_Barrier(a.comm);
    if (a.peer >= 0 && warmup > 0)
        kernel(&a);
    a.iters = iters;
    double med = ref_measure(a.comm, wreps, reps, rank0, kernel, &a);
    char what[160];
    snprintf(what, sizeof what, "pt2pt_ref %s: bytes %d iters %ld reps %d, seconds per %s", mode, a.bytes, iters, reps,
             kernel == bandwidth || kernel == bibw ? "repetition" : "operation");
    ref_report(what, med * scale, reps);
    free(a.sbuf);
    free(a.rbuf);
    free(a.reqs);
    MPI_Finalize();
    return 0;
}
