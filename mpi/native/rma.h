/*
 * rma.h: one-sided communication (mpi.Window, window.go) and OSU 6.1's
 * one-sided benchmark loops (osu_put_latency.c and its siblings; the
 * batch of repetitions is harness.c's cc_rma_batch). Every window gets
 * MPI_ERRORS_RETURN. Without MPI-3 the calls fail with MPI_ERR_OTHER.
 */
#ifndef COMMCOST_NATIVE_RMA_H
#define COMMCOST_NATIVE_RMA_H

#include "shim.h"

typedef struct {
    int rc;
    MPI_Win win;
    void *base;
} cc_win_result;

cc_win_result cc_win_allocate(MPI_Comm comm, long long size);
int cc_win_free(MPI_Win win);
/* The window's name (MPI_Win_get_name) into name[n], NUL-terminated: Open
 * MPI names a window after its one-sided component ("rdma window 3"). */
int cc_win_name(MPI_Win win, char *name, int n);
MPI_Win cc_win_null(void);

/* Communication calls: disp in bytes (displacement unit 1); count in bytes
 * for put and get, in elements of dtype for the others. */
int cc_rma_put(MPI_Win win, void *origin, int count, int target, long long disp);
int cc_rma_get(MPI_Win win, void *origin, int count, int target, long long disp);
int cc_rma_acc(MPI_Win win, void *origin, int count, int dtype, int target, long long disp, int op);
int cc_rma_get_acc(MPI_Win win, void *origin, void *result, int count, int dtype, int target, long long disp, int op);
int cc_rma_fop(MPI_Win win, void *origin, void *result, int dtype, int target, long long disp, int op);
int cc_rma_cas(MPI_Win win, void *origin, void *compare, void *result, int dtype, int target, long long disp);

/* Synchronisation. Groups are ranks of comm. */
int cc_win_lock(MPI_Win win, int target, int exclusive);
int cc_win_unlock(MPI_Win win, int target);
int cc_win_lock_all(MPI_Win win);
int cc_win_unlock_all(MPI_Win win);
int cc_win_flush(MPI_Win win, int target);
int cc_win_fence(MPI_Win win);
int cc_win_post(MPI_Win win, MPI_Comm comm, int *ranks, int n);
int cc_win_start(MPI_Win win, MPI_Comm comm, int *ranks, int n);
int cc_win_complete(MPI_Win win);
int cc_win_wait(MPI_Win win);

/* OSU's one-sided benchmarks: the operation, the synchronisation and the
 * shape of the loop. */
enum { CC_RMA_PUT = 1, CC_RMA_GET, CC_RMA_ACC, CC_RMA_GET_ACC, CC_RMA_FOP, CC_RMA_CAS };
enum { CC_SYNC_FLUSH = 1, CC_SYNC_LOCK, CC_SYNC_LOCK_ALL, CC_SYNC_FENCE, CC_SYNC_PSCW };
enum { CC_RMA_LAT = 1, CC_RMA_BW, CC_RMA_BIBW };

typedef struct {
    MPI_Win win;
    int op, sync, mode;
    char *origin, *result, *compare; /* window x bytes each */
    int count, dtype, bytes;         /* per operation: MPI count, its bytes */
    int window;                      /* operations per iteration (bw, bibw) */
    int peer, first;                 /* the other rank; first: the origin of lat and bw (OSU's rank 0) */
    int iters;
    MPI_Group group; /* {peer}, for PSCW */
} cc_rma_kernel;

/* cc_rma_rep runs one repetition of iters iterations: this rank's time
 * around them in *own (0 for the target of a passive-target loop, which
 * takes no part); a passive epoch's lock is taken and released outside
 * the timed region, as OSU's flush loop takes it around its timer. */
int cc_rma_rep(cc_rma_kernel *k, double *own);

/* cc_rma_group makes the PSCW group {peer} of comm. */
int cc_rma_group(MPI_Comm comm, int peer, MPI_Group *group);
int cc_rma_group_free(MPI_Group *group);

#endif
