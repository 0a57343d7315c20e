/*
 * ref.h: what every C reference program of scripts/bench_vs_c.sh shares:
 * the repetition protocol of commcost's harness written as a C user would
 * write it (patterns/harness.go and MEASURE.md, not commcost's code), and a
 * small option parser.
 *
 * A repetition is: MPI_Barrier, this rank's kernel timed with MPI_Wtime,
 * and one MPI_Allreduce (max) of the ranks' times (or of rank 0's alone for
 * the two-party benchmarks, which report the initiator's time as OSU does).
 * warmup_reps untimed repetitions come first; the result is the median of
 * reps timed repetitions, times scale (1/(2 iters) for a half round trip).
 *
 * Output (rank 0, stdout): "# ..." comment lines, then one line
 * "median_s reps" with the median in seconds.
 */
#ifndef COMMCOST_REF_H
#define COMMCOST_REF_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ref_kernel runs one repetition on this rank and returns its time in
 * seconds, 0 when the rank takes no part. */
typedef double (*ref_kernel)(void *arg);

static inline int ref_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ref_measure_mean runs the repetitions and returns the median sample
 * (every rank gets the same value); with own_mean it also stores this
 * rank's mean time over the timed repetitions there. */
static inline double ref_measure_mean(MPI_Comm comm, int warmup_reps, int reps, int rank0, ref_kernel kernel, void *arg,
                                      double *own_mean)
{
    int me;
    MPI_Comm_rank(comm, &me);
    double *samples = malloc(sizeof(double) * (size_t)reps);
    if (samples == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double sum = 0;
    for (int i = -warmup_reps; i < reps; i++) {
        MPI_Barrier(comm);
        double t = kernel(arg);
        double in = rank0 && me != 0 ? -1.0 : t, out;
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (i >= 0) {
            samples[i] = out;
            sum += t;
        }
    }
    qsort(samples, (size_t)reps, sizeof *samples, ref_cmp);
    double med = reps % 2 ? samples[reps / 2] : (samples[reps / 2 - 1] + samples[reps / 2]) / 2;
    free(samples);
    if (own_mean != NULL)
        *own_mean = sum / reps;
    return med;
}

/* ref_measure is ref_measure_mean without the mean. */
static inline double ref_measure(MPI_Comm comm, int warmup_reps, int reps, int rank0, ref_kernel kernel, void *arg)
{
    return ref_measure_mean(comm, warmup_reps, reps, rank0, kernel, arg, NULL);
}

/* ref_report prints the result on rank 0. */
static inline void ref_report(const char *what, double median, int reps)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        printf("# %s\n%.9g %d\n", what, median, reps);
        fflush(stdout);
    }
}

/* ref_opt returns the integer value of option name ("--bytes 8" or
 * "--bytes=8"), or def when absent; a malformed value ends the program. */
static inline long ref_opt(int argc, char **argv, const char *name, long def)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], name) == 0 && i + 1 < argc)
            v = argv[i + 1];
        else if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            v = argv[i] + n + 1;
        if (v == NULL)
            continue;
        char *end;
        long x = strtol(v, &end, 10);
        if (*v == '\0' || *end != '\0' || x < 0) {
            fprintf(stderr, "%s %s: want a non-negative integer\n", name, v);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        return x;
    }
    return def;
}

/* ref_str returns the string value of option name, or def. */
static inline const char *ref_str(int argc, char **argv, const char *name, const char *def)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], name) == 0 && i + 1 < argc)
            return argv[i + 1];
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    }
    return def;
}

/* ref_buffer allocates n bytes (at least one), page-aligned and touched. */
static inline char *ref_buffer(size_t n, int fill)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n > 0 ? n : 1) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(p, fill, n > 0 ? n : 1);
    return p;
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC's
 * -Wstringop-overflow takes for a zero-size array. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline int ref_waitall(int n, MPI_Request *reqs)
{
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif
