/*
 * osu_ref.c: a standalone C reference for commcost's point-to-point kernels,
 * following the OSU Micro-Benchmarks methodology (osu_latency.c, osu_bw.c),
 * so that the Go binding (mpi/native) can be compared against plain C on the
 * same machine and MPI library.
 *
 *   mpicc -O2 -o osu_ref scripts/ref/osu_ref.c
 *   mpirun -np 2 ./osu_ref --mode lat --sizes 8,1048576
 *   mpirun -np 2 ./osu_ref --mode bw  --sizes 8,1048576 [--window 64]
 *
 * Options: --mode lat|bw, --sizes a,b,c (bytes), --iters N and --warmup N
 * (timed and untimed iterations; default: OSU's counts, see below),
 * --window W (bandwidth only, default 64). "--opt=value" works as well.
 *
 * Output (rank 0, stdout): lines starting with '#' are comments; every other
 * line is "size value" with size in bytes and value
 *   lat: half round-trip time in microseconds (latency_us)
 *   bw:  MB/s with MB = 10^6 bytes (MBps) = size*window*iters / elapsed.
 * Exit status 0 on success, 1 on a usage error, MPI errors abort the job.
 *
 * Only world ranks 0 and 1 take part; further ranks just wait in MPI_Finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OSU defaults (osu_util.h): small messages run more iterations. */
#define LARGE_MESSAGE_SIZE 8192
#define LAT_ITERS_SMALL 10000
#define LAT_SKIP_SMALL 100
#define LAT_ITERS_LARGE 1000
#define LAT_SKIP_LARGE 10
#define BW_ITERS_SMALL 100
#define BW_SKIP_SMALL 10
#define BW_ITERS_LARGE 20
#define BW_SKIP_LARGE 2
#define DEFAULT_WINDOW 64
#define MAX_SIZES 256
#define TAG_DATA 100
#define TAG_ACK 101
#define ACK_BYTES 4

enum mode { MODE_LAT, MODE_BW };

struct options {
    enum mode mode;
    long sizes[MAX_SIZES];
    int nsizes;
    long iters;  /* < 0: OSU default for the size */
    long warmup; /* < 0: OSU default for the size */
    int window;
};

static void usage(const char *msg)
{
    fprintf(stderr, "osu_ref: %s\n"
            "usage: osu_ref --mode lat|bw --sizes N[,N...] [--iters N] [--warmup N] [--window W]\n",
            msg);
}

static int parse_long(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_sizes(const char *s, struct options *o)
{
    char buf[4096];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->nsizes = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        long v;
        /* the MPI count argument is a C int */
        if (o->nsizes == MAX_SIZES || parse_long(tok, &v) != 0 || v > 2147483647L)
            return -1;
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

/* parse_args returns 0 on success; on error it prints to stderr. */
static int parse_args(int argc, char **argv, struct options *o)
{
    int have_mode = 0, have_sizes = 0;
    o->iters = -1;
    o->warmup = -1;
    o->window = DEFAULT_WINDOW;
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i], *val = NULL;
        char key[64];
        const char *eq = strchr(name, '=');
        if (strncmp(name, "--", 2) != 0) {
            usage("unexpected argument");
            return -1;
        }
        if (eq != NULL) {
            size_t n = (size_t)(eq - name);
            if (n >= sizeof key) {
                usage("option too long");
                return -1;
            }
            memcpy(key, name, n);
            key[n] = '\0';
            val = eq + 1;
        } else {
            if (strlen(name) >= sizeof key) {
                usage("option too long");
                return -1;
            }
            strcpy(key, name);
            if (i + 1 >= argc) {
                usage("option needs a value");
                return -1;
            }
            val = argv[++i];
        }
        long v;
        if (strcmp(key, "--mode") == 0) {
            if (strcmp(val, "lat") == 0)
                o->mode = MODE_LAT;
            else if (strcmp(val, "bw") == 0)
                o->mode = MODE_BW;
            else {
                usage("--mode must be lat or bw");
                return -1;
            }
            have_mode = 1;
        } else if (strcmp(key, "--sizes") == 0) {
            if (parse_sizes(val, o) != 0) {
                usage("--sizes must be a comma-separated list of byte counts in [0, 2^31-1]");
                return -1;
            }
            have_sizes = 1;
        } else if (strcmp(key, "--iters") == 0) {
            if (parse_long(val, &v) != 0 || v < 1) {
                usage("--iters must be a positive integer");
                return -1;
            }
            o->iters = v;
        } else if (strcmp(key, "--warmup") == 0) {
            if (parse_long(val, &v) != 0) {
                usage("--warmup must be a non-negative integer");
                return -1;
            }
            o->warmup = v;
        } else if (strcmp(key, "--window") == 0) {
            if (parse_long(val, &v) != 0 || v < 1 || v > 1 << 20) {
                usage("--window must be an integer in [1, 1048576]");
                return -1;
            }
            o->window = (int)v;
        } else {
            usage("unknown option");
            return -1;
        }
    }
    if (!have_mode || !have_sizes) {
        usage("--mode and --sizes are required");
        return -1;
    }
    return 0;
}

/* latency returns the half round-trip time in seconds (meaningful on rank 0). */
static double latency(MPI_Comm pair, char *sbuf, char *rbuf, int size, long iters, long skip, int rank)
{
    double t0 = 0.0, t1;
    MPI_Barrier(pair);
    for (long i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(sbuf, size, MPI_BYTE, 1, TAG_DATA, pair);
            MPI_Recv(rbuf, size, MPI_BYTE, 1, TAG_DATA, pair, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, size, MPI_BYTE, 0, TAG_DATA, pair, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, size, MPI_BYTE, 0, TAG_DATA, pair);
        }
    }
    t1 = MPI_Wtime();
    return (t1 - t0) / (2.0 * (double)iters);
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC's
 * -Wstringop-overflow takes for a zero-size array. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static int waitall_ignore(int n, MPI_Request *reqs)
{
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* bandwidth returns the elapsed seconds of the timed windows (rank 0). */
static double bandwidth(MPI_Comm pair, char *sbuf, char *rbuf, int size, long iters, long skip,
                        int window, MPI_Request *reqs, int rank)
{
    char ack[ACK_BYTES];
    double t0 = 0.0, t1;
    memset(ack, 0, sizeof ack);
    MPI_Barrier(pair);
    for (long i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, size, MPI_BYTE, 1, TAG_DATA, pair, &reqs[w]);
            waitall_ignore(window, reqs);
            MPI_Recv(ack, ACK_BYTES, MPI_BYTE, 1, TAG_ACK, pair, MPI_STATUS_IGNORE);
        } else {
            /* As OSU does, every receive of a window lands in the same buffer. */
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf, size, MPI_BYTE, 0, TAG_DATA, pair, &reqs[w]);
            waitall_ignore(window, reqs);
            MPI_Send(ack, ACK_BYTES, MPI_BYTE, 0, TAG_ACK, pair);
        }
    }
    t1 = MPI_Wtime();
    return t1 - t0;
}

static void *alloc_touched(size_t n, int fill)
{
    void *p = NULL;
    /* page-aligned like OSU, and at least one byte so size 0 has a valid pointer */
    if (posix_memalign(&p, 4096, n > 0 ? n : 1) != 0)
        return NULL;
    memset(p, fill, n > 0 ? n : 1);
    return p;
}

int main(int argc, char **argv)
{
    struct options o;
    int rank, nranks;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o) != 0) {
        MPI_Finalize();
        return 1;
    }
    if (nranks < 2) {
        if (rank == 0)
            usage("needs at least 2 ranks (mpirun -np 2)");
        MPI_Finalize();
        return 1;
    }
    long maxsize = 0;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsize)
            maxsize = o.sizes[k];
    char *sbuf = alloc_touched((size_t)maxsize, 'a');
    char *rbuf = alloc_touched((size_t)maxsize, 'b');
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (sbuf == NULL || rbuf == NULL || reqs == NULL) {
        fprintf(stderr, "osu_ref: out of memory for %ld-byte buffers\n", maxsize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank == 0) {
        MPI_Get_library_version(version, &vlen);
        char *nl = strchr(version, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (o.mode == MODE_LAT)
            printf("# osu_ref latency: half round trip, ranks 0-1 of %d\n# library: %s\n# size latency_us\n",
                   nranks, version);
        else
            printf("# osu_ref bandwidth: window %d, MB = 10^6 bytes, ranks 0-1 of %d\n# library: %s\n# size MBps\n",
                   o.window, nranks, version);
        fflush(stdout);
    }

    /* ranks 0 and 1 get their own communicator, so the barriers inside the
     * kernels do not wait for ranks that take no part */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (rank < 2) {
        for (int k = 0; k < o.nsizes; k++) {
            int size = (int)o.sizes[k];
            int large = size > LARGE_MESSAGE_SIZE;
            if (o.mode == MODE_LAT) {
                long iters = o.iters > 0 ? o.iters : (large ? LAT_ITERS_LARGE : LAT_ITERS_SMALL);
                long skip = o.warmup >= 0 ? o.warmup : (large ? LAT_SKIP_LARGE : LAT_SKIP_SMALL);
                double t = latency(pair, sbuf, rbuf, size, iters, skip, rank);
                if (rank == 0)
                    printf("%d %.3f\n", size, t * 1e6);
            } else {
                long iters = o.iters > 0 ? o.iters : (large ? BW_ITERS_LARGE : BW_ITERS_SMALL);
                long skip = o.warmup >= 0 ? o.warmup : (large ? BW_SKIP_LARGE : BW_SKIP_SMALL);
                double t = bandwidth(pair, sbuf, rbuf, size, iters, skip, o.window, reqs, rank);
                if (rank == 0)
                    printf("%d %.2f\n", size, (double)size / 1e6 * (double)o.window * (double)iters / t);
            }
            if (rank == 0)
                fflush(stdout);
        }
        MPI_Comm_free(&pair);
    }

    free(reqs);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
