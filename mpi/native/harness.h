/*
 * harness.h: batches of timed repetitions (mpi.BatchKernels, batch.go).
 *
 * One call runs a batch of repetitions of one kernel. With sync set, every
 * repetition is the harness's SyncBarrier repetition (patterns/harness.go):
 * MPI_Barrier, the kernel timed with MPI_Wtime from right after the barrier
 * returns, then one MPI_Allreduce (max) of this rank's contribution (its
 * time, or -inf on ranks other than 0 with rank0) and of a failure flag, so
 * every rank stops after the same repetition when one fails. Without sync
 * the repetitions run back to back on this rank alone.
 */
#ifndef COMMCOST_NATIVE_HARNESS_H
#define COMMCOST_NATIVE_HARNESS_H

#include "shim.h"

/* Returned as rc when an access repetition found a protocol violation; the
 * fault is in cc_access_batch_result.fault. Negative, never an MPI code. */
#define CC_ERR_FAULT (-1001)

typedef struct {
    int rc;          /* this rank's error (MPI code, CC_ERR_*), 0 for none */
    int done;        /* repetitions completed on every rank */
    int peer_failed; /* another rank failed in repetition `done` */
} cc_batch_result;

/* Every batch function takes the batch first: reps repetitions, sync and
 * rank0 as above, this rank's number me, own[reps] for this rank's times
 * and, with sync, samples[reps] for the reduced ones. */
cc_batch_result cc_pingpong_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                                  void *sbuf, void *rbuf, int count, int peer, int tag, int iters, int initiator);
cc_batch_result cc_bandwidth_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                                   void *buf, int count, int peer, int tag, int window, int iters, int sender);
/* report: 0 elapsed, 1 the server's arrivals, 2 nothing (mpi.PRTTReport). */
cc_batch_result cc_prtt_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                              void *buf, int count, int peer, int tag, int n, double delay, int iters, int client,
                              int server_delay, int report);
cc_batch_result cc_bibw_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                              void *sbuf, void *rbuf, int count, int peer, int tag, int window, int iters, int first);
cc_batch_result cc_alltoall_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                                  char *send, char *recv, int block, int n, int tag, int iters);

/* Programs of steps (mpi.Step): the operations, their buffers by index,
 * byte offsets and lengths; aux holds the Alltoallv counts of a step from
 * index aux (4 * size ints). */
enum {
    CC_STEP_SEND = 1,
    CC_STEP_RECV,
    CC_STEP_SENDRECV,
    CC_STEP_COPY,
    CC_STEP_BCAST,
    CC_STEP_ALLGATHER,
    CC_STEP_SCATTER,
    CC_STEP_ALLTOALL,
    CC_STEP_ALLTOALLV
};

#define CC_STEP_BUFFERS 4

typedef struct {
    long long soff, roff;
    int op, sbuf, rbuf, slen, rlen, peer, from, tag, aux;
} cc_step;

/* Repetition i runs program i (nprogs == reps) or program 0 (nprogs == 1):
 * steps[start[j] .. start[j+1]) is program j. */
cc_batch_result cc_steps_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                               char *b0, char *b1, char *b2, char *b3, const cc_step *steps, const int *start,
                               int nprogs, const int *aux, int size, int iters);

/* Collectives (mpi.CollOp; the values are the Go constants'). count is the
 * MPI count argument: bytes of the byte collectives (the root's buffer of
 * bcast, one rank's block of gather, scatter, allgather and alltoall, this
 * rank's own block of the v-forms), elements of the reductions (per rank
 * for reduce_scatter_block); counts, displs, rcounts and rdispls are the
 * v-forms' arrays and reduce_scatter's counts. */
enum {
    CC_COLL_BARRIER = 1,
    CC_COLL_BCAST,
    CC_COLL_REDUCE,
    CC_COLL_ALLREDUCE,
    CC_COLL_GATHER,
    CC_COLL_GATHERV,
    CC_COLL_SCATTER,
    CC_COLL_SCATTERV,
    CC_COLL_ALLGATHER,
    CC_COLL_ALLGATHERV,
    CC_COLL_ALLTOALL,
    CC_COLL_ALLTOALLV,
    CC_COLL_REDUCE_SCATTER_BLOCK,
    CC_COLL_REDUCE_SCATTER
};

/* iters calls per repetition, back to back, timed together. */
cc_batch_result cc_coll_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                              int op, int dtype, int rop, int root, int count, void *sbuf, void *rbuf, int *counts,
                              int *displs, int *rcounts, int *rdispls, int iters);

/* OSU's overlap measurement (mpi.OverlapKernels): per repetition the
 * non-blocking form of the collective, compute seconds of OSU's dummy
 * kernel (MPI_Test after each of probes parts), the wait; cpu[i] and
 * test[i] receive the compute and test times. Without MPI-3 it fails with
 * MPI_ERR_OTHER. */
cc_batch_result cc_overlap_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                                 int op, int dtype, int rop, int root, int count, void *sbuf, void *rbuf, int *counts,
                                 int *displs, int *rcounts, int *rdispls, double compute, int probes, double *cpu,
                                 double *test);

/* OSU's one-sided loops (rma.h): k's repetition per repetition. */
#include "rma.h"
cc_batch_result cc_rma_batch(MPI_Comm comm, int reps, int sync, int rank0, int me, double *own, double *samples,
                             cc_rma_kernel *k);

/* iters MPI_Reduce_local calls per repetition (mpi.LocalReduceKernels). */
cc_batch_result cc_reduce_local_batch(int reps, int sync, int rank0, int me, double *own, double *samples,
                                      MPI_Comm comm, void *in, void *inout, int count, int dtype, int op, int iters);

/* cc_dummy_compute runs OSU's dummy kernel for seconds (the Go tests time
 * it). */
void cc_dummy_compute(double seconds);

typedef struct {
    cc_batch_result b;
    cc_access_result fault; /* the failing repetition's result, when b.rc is CC_ERR_FAULT */
} cc_access_batch_result;

/* Repetition i: targets[i*steps*k ..] (steps rows of k), incoming[i] requests
 * to serve, sequence numbers from rep0 + i. */
cc_access_batch_result cc_access_batch(cc_access *a, int reps, int sync, int rank0, int me, double *own,
                                       double *samples, const int *targets, int steps, const int *incoming,
                                       int my_slot, unsigned long long rep0, int check);

#endif
