/*
 * access_ref.c: C reference for commcost's k-k-access and k-access (paper
 * 000, Definition 2 and section 5; patterns/access.go), with the
 * repetition protocol of ref.h.
 *
 *   mpicc -O2 -o access_ref scripts/ref/access_ref.c
 *   mpirun -np 2 ./access_ref --k 1 --l 64 --a 1 --reps 1000
 *
 * Every rank is an application processor and a memory module. A
 * repetition is a accesses one after another; in access x every rank reads
 * k packets of l bytes, packet j from rank f_j(me), f_j a random
 * permutation without fixed points drawn identically on every rank (r = 1,
 * no receive hot spot: h = 1/p). The k requests (16-byte headers) leave
 * one after another, every answer's receive posted first; while it waits
 * (MPI_Waitany over the request receive and the k answers) a rank serves
 * the requests addressed to it in arrival order. A rank's time runs until
 * the answers of its last access are in; the sample is the maximum over
 * ranks; the result is the median sample divided by a (T_k/a).
 *
 * --nbuf N (default 1) rotates the repetitions over N distinct source and
 * destination buffers, so that a repetition reads memory the previous N-1
 * did not touch: the working set of a store whose every uncached read is
 * of another variable into another buffer (divalib's remote read,
 * scripts/bench_dsm_vs_c.sh). With N = 1 the same l bytes are read into
 * the same buffer every time and stay in the caches: at 64 KiB that alone
 * halves the time on this machine (6.9 us against 13.7 us with N = 100).
 */
#include "ref.h"

#define TAG_REQ 300
#define TAG_REPLY 301
#define HEADER 16

struct acc {
    MPI_Comm comm;
    int me, p, k, l, a;
    int nb, cur; /* buffers rotated over (--nbuf), the repetition's */
    char *mem, *reqbuf, *msgs, *replies;
    MPI_Request *waits, *reqsends, *sends;
    int *targets; /* a rows of k */
};

/* derange fills perm with a random permutation of 0..p-1 without fixed
 * points (rejection: about e tries). */
static void derange(int *perm, int p)
{
    for (;;) {
        for (int i = 0; i < p; i++)
            perm[i] = i;
        for (int i = p - 1; i > 0; i--) {
            int j = rand() % (i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int ok = 1;
        for (int i = 0; i < p; i++)
            ok &= perm[i] != i;
        if (ok)
            return;
    }
}

static void serve(struct acc *s, const MPI_Status *st, int *ns)
{
    MPI_Isend(s->mem + ((size_t)s->cur * (size_t)s->p + (size_t)st->MPI_SOURCE) * (size_t)s->l, s->l, MPI_BYTE, st->MPI_SOURCE, TAG_REPLY, s->comm,
              &s->sends[(*ns)++]);
}

static double access(void *arg)
{
    struct acc *s = arg;
    const int k = s->k, incoming = k * s->a;
    int served = 0, ns = 0;
    double own = 0;
    double t0 = MPI_Wtime();
    MPI_Irecv(s->reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, s->comm, &s->waits[0]);
    for (int x = 0; x < s->a; x++) {
        const int *row = s->targets + x * k;
        for (int j = 0; j < k; j++)
            MPI_Irecv(s->replies + ((size_t)s->cur * (size_t)k + (size_t)j) * s->l, s->l, MPI_BYTE, row[j], TAG_REPLY, s->comm, &s->waits[1 + j]);
        for (int j = 0; j < k; j++) {
            memcpy(s->msgs + j * HEADER, &s->me, sizeof s->me);
            MPI_Isend(s->msgs + j * HEADER, HEADER, MPI_BYTE, row[j], TAG_REQ, s->comm, &s->reqsends[j]);
        }
        for (int pending = k; pending > 0;) {
            int i;
            MPI_Status st;
            MPI_Waitany(k + 1, s->waits, &i, &st);
            if (i != 0) {
                pending--;
                continue;
            }
            serve(s, &st, &ns);
            if (++served < incoming)
                MPI_Irecv(s->reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, s->comm, &s->waits[0]);
        }
        ref_waitall(k, s->reqsends);
        if (x == s->a - 1)
            own = MPI_Wtime() - t0;
    }
    while (served < incoming) {
        MPI_Status st;
        MPI_Wait(&s->waits[0], &st);
        serve(s, &st, &ns);
        if (++served < incoming)
            MPI_Irecv(s->reqbuf, HEADER, MPI_BYTE, MPI_ANY_SOURCE, TAG_REQ, s->comm, &s->waits[0]);
    }
    ref_waitall(ns, s->sends);
    s->cur = (s->cur + 1) % s->nb;
    /* The next repetition's permutations, outside the timed region. */
    int *perm = malloc(sizeof(int) * (size_t)s->p);
    for (int x = 0; x < s->a; x++)
        for (int j = 0; j < k; j++) {
            derange(perm, s->p);
            s->targets[x * k + j] = perm[s->me];
        }
    free(perm);
    return own;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct acc s;
    memset(&s, 0, sizeof s);
    s.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(s.comm, &s.me);
    MPI_Comm_size(s.comm, &s.p);
    s.k = (int)ref_opt(argc, argv, "--k", 1);
    s.l = (int)ref_opt(argc, argv, "--l", 64);
    s.a = (int)ref_opt(argc, argv, "--a", 1);
    int reps = (int)ref_opt(argc, argv, "--reps", 1000);
    int wreps = (int)ref_opt(argc, argv, "--warmup-reps", 2);
    s.nb = (int)ref_opt(argc, argv, "--nbuf", 1);
    if (s.p < 2 || s.k < 1 || s.a < 1 || reps < 1 || s.nb < 1) {
        if (s.me == 0)
            fprintf(stderr, "access_ref: needs 2 ranks or more, --k >= 1, --a >= 1, --reps >= 1, --nbuf >= 1\n");
        MPI_Finalize();
        return 2;
    }
    /* Touch every buffer, as commcost fills the global variable with a
     * pattern: untouched calloc pages all map the one zero page. */
    size_t memlen = (size_t)s.nb * (size_t)s.p * (size_t)s.l;
    s.mem = ref_buffer(memlen, 0);
    for (size_t i = 0; i < memlen; i++)
        s.mem[i] = (char)(s.me * 131 + (int)i * 7 + 3);
    s.reqbuf = ref_buffer(HEADER, 0);
    s.msgs = ref_buffer((size_t)s.k * HEADER, 1);
    s.replies = ref_buffer((size_t)s.nb * (size_t)s.k * (size_t)s.l, 1);
    s.waits = malloc(sizeof(MPI_Request) * (size_t)(s.k + 1));
    s.reqsends = malloc(sizeof(MPI_Request) * (size_t)s.k);
    s.sends = malloc(sizeof(MPI_Request) * (size_t)(s.k * s.a));
    s.targets = malloc(sizeof(int) * (size_t)(s.k * s.a));
    srand(1);
    for (int i = 0; i < s.k * s.a; i++)
        s.targets[i] = (s.me + 1) % s.p; /* the first repetition's; then drawn */
    double med = ref_measure(s.comm, wreps, reps, 0, access, &s);
    char what[160];
    snprintf(what, sizeof what, "access_ref: k %d l %d a %d reps %d on %d ranks, seconds per access (T_k/a)", s.k, s.l,
             s.a, reps, s.p);
    ref_report(what, med / s.a, reps);
    MPI_Finalize();
    return 0;
}
