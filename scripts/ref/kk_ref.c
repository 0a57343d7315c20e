/*
 * kk_ref.c: a standalone C reference for commcost's k-k-access at r = 1
 * (paper 000, Definition 2; the protocol of patterns/access.go and
 * mpi/native/access.c), so the kernel can be compared against plain C on
 * the same machine and MPI library.
 *
 *   mpicc -O2 -o kk_ref scripts/ref/kk_ref.c
 *   mpirun -np 2 ./kk_ref K L [REPS]
 *
 * Every rank reads k packets of L bytes, packet j from rank (me + s_j) mod p
 * with s_j drawn in 1..p-1 identically on all ranks (so step j is a
 * permutation without fixed points), pipelined, while serving the requests
 * addressed to it with an MPI_ANY_SOURCE receive: one MPI_Waitany over the
 * request receive and the k answer receives. A repetition starts after a
 * barrier; its time is the maximum over ranks of each rank's time until its
 * answers are in (as commcost's AggMax). 10 untimed repetitions, then REPS
 * (default 2000) timed.
 *
 * Output (rank 0): "# k l median_us min_us", then "K L median min".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_REQ 300
#define TAG_REPLY 301
#define HEADER 16

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 3 || p < 2) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np P (P >= 2) kk_ref K L [REPS]\n");
        MPI_Finalize();
        return 1;
    }
    int k = atoi(argv[1]), l = atoi(argv[2]), reps = argc > 3 ? atoi(argv[3]) : 2000;
    if (k < 1 || l < 0 || reps < 1) {
        if (me == 0)
            fprintf(stderr, "kk_ref: need K >= 1, L >= 0, REPS >= 1\n");
        MPI_Finalize();
        return 1;
    }
    char *mem = calloc((size_t)p * l + 1, 1), *reqbuf = calloc(HEADER, 1);
    char *msgs = calloc((size_t)k * HEADER, 1), *replies = calloc((size_t)k * l + 1, 1);
    MPI_Request *w = malloc((k + 1) * sizeof *w), *rs = malloc(k * sizeof *rs), *sends = malloc(k * sizeof *sends);
    int *tg = malloc(k * sizeof *tg);
    /* Touch every buffer, as commcost does (it fills the global variable
     * with a pattern): untouched calloc pages all map the one zero page,
     * which would make large answers cache-hot and the reference fast. */
    for (size_t i = 0; i < (size_t)p * l; i++)
        mem[i] = (char)(me * 131 + i * 7 + 3);
    memset(replies, 1, (size_t)k * l);
    memset(msgs, 1, (size_t)k * HEADER);
    double *t = malloc(reps * sizeof *t);
    srand(1);
    for (int it = 0; it < reps + 10; it++) {
        for (int j = 0; j < k; j++)
            tg[j] = (me + 1 + rand() % (p - 1)) % p;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int served = 0, ns = 0;
        MPI_Irecv(reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &w[0]);
        for (int j = 0; j < k; j++)
            MPI_Irecv(replies + (size_t)j * l, l, MPI_BYTE, tg[j], TAG_REPLY, MPI_COMM_WORLD, &w[1 + j]);
        for (int j = 0; j < k; j++) {
            memcpy(msgs + j * HEADER, &me, sizeof me);
            MPI_Isend(msgs + j * HEADER, HEADER, MPI_BYTE, tg[j], TAG_REQ, MPI_COMM_WORLD, &rs[j]);
        }
        for (int pending = k; pending > 0;) {
            int i;
            MPI_Status st;
            MPI_Waitany(k + 1, w, &i, &st);
            if (i != 0) {
                pending--;
                continue;
            }
            MPI_Isend(mem + (size_t)st.MPI_SOURCE * l, l, MPI_BYTE, st.MPI_SOURCE, TAG_REPLY, MPI_COMM_WORLD, &sends[ns++]);
            if (++served < k)
                MPI_Irecv(reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &w[0]);
        }
        MPI_Waitall(k, rs, MPI_STATUSES_IGNORE);
        double own = MPI_Wtime() - t0;
        for (; served < k; served++) {
            MPI_Status st;
            MPI_Wait(&w[0], &st);
            MPI_Isend(mem + (size_t)st.MPI_SOURCE * l, l, MPI_BYTE, st.MPI_SOURCE, TAG_REPLY, MPI_COMM_WORLD, &sends[ns++]);
            if (served + 1 < k)
                MPI_Irecv(reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &w[0]);
        }
        MPI_Waitall(ns, sends, MPI_STATUSES_IGNORE);
        double mx;
        MPI_Allreduce(&own, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 10)
            t[it - 10] = mx;
    }
    qsort(t, reps, sizeof *t, cmp);
    if (me == 0)
        printf("# k l median_us min_us\n%d %d %.4f %.4f\n", k, l, t[reps / 2] * 1e6, t[0] * 1e6);
    MPI_Finalize();
    return 0;
}
