/* rma.c: see rma.h. */
#include <string.h>

#include "rma.h"

#define GUARD_INT()                                                                                                    \
    do {                                                                                                               \
        if (cc_wrong_thread())                                                                                         \
            return CC_ERR_WRONG_THREAD;                                                                                \
    } while (0)

MPI_Win cc_win_null(void) { return MPI_WIN_NULL; }

#if MPI_VERSION >= 3

cc_win_result cc_win_allocate(MPI_Comm comm, long long size)
{
    cc_win_result r;
    memset(&r, 0, sizeof r);
    r.win = MPI_WIN_NULL;
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    r.rc = MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL, comm, &r.base, &r.win);
    if (r.rc == MPI_SUCCESS)
        r.rc = MPI_Win_set_errhandler(r.win, MPI_ERRORS_RETURN);
    if (r.rc == MPI_SUCCESS && size > 0)
        memset(r.base, 0, (size_t)size);
    /* No rank may reach another's window before that one is zeroed:
     * MPI_Win_allocate lets ranks return at different times. */
    if (r.rc == MPI_SUCCESS)
        r.rc = MPI_Barrier(comm);
    return r;
}

int cc_win_free(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_free(&win);
}

int cc_win_name(MPI_Win win, char *name, int n)
{
    GUARD_INT();
    char buf[MPI_MAX_OBJECT_NAME];
    int len = 0;
    int rc = MPI_Win_get_name(win, buf, &len);
    if (rc != MPI_SUCCESS)
        return rc;
    if (len >= n)
        len = n - 1;
    memcpy(name, buf, (size_t)len);
    name[len] = 0;
    return MPI_SUCCESS;
}

int cc_rma_put(MPI_Win win, void *origin, int count, int target, long long disp)
{
    GUARD_INT();
    return MPI_Put(origin, count, MPI_BYTE, target, (MPI_Aint)disp, count, MPI_BYTE, win);
}

int cc_rma_get(MPI_Win win, void *origin, int count, int target, long long disp)
{
    GUARD_INT();
    return MPI_Get(origin, count, MPI_BYTE, target, (MPI_Aint)disp, count, MPI_BYTE, win);
}

int cc_rma_acc(MPI_Win win, void *origin, int count, int dtype, int target, long long disp, int op)
{
    GUARD_INT();
    MPI_Datatype dt = cc_dtype_of(dtype);
    return MPI_Accumulate(origin, count, dt, target, (MPI_Aint)disp, count, dt, cc_op_of(op), win);
}

int cc_rma_get_acc(MPI_Win win, void *origin, void *result, int count, int dtype, int target, long long disp, int op)
{
    GUARD_INT();
    MPI_Datatype dt = cc_dtype_of(dtype);
    return MPI_Get_accumulate(origin, count, dt, result, count, dt, target, (MPI_Aint)disp, count, dt, cc_op_of(op),
                              win);
}

int cc_rma_fop(MPI_Win win, void *origin, void *result, int dtype, int target, long long disp, int op)
{
    GUARD_INT();
    return MPI_Fetch_and_op(origin, result, cc_dtype_of(dtype), target, (MPI_Aint)disp, cc_op_of(op), win);
}

int cc_rma_cas(MPI_Win win, void *origin, void *compare, void *result, int dtype, int target, long long disp)
{
    GUARD_INT();
    return MPI_Compare_and_swap(origin, compare, result, cc_dtype_of(dtype), target, (MPI_Aint)disp, win);
}

int cc_win_lock(MPI_Win win, int target, int exclusive)
{
    GUARD_INT();
    return MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target, 0, win);
}

int cc_win_unlock(MPI_Win win, int target)
{
    GUARD_INT();
    return MPI_Win_unlock(target, win);
}

int cc_win_lock_all(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_lock_all(0, win);
}

int cc_win_unlock_all(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_unlock_all(win);
}

int cc_win_flush(MPI_Win win, int target)
{
    GUARD_INT();
    return MPI_Win_flush(target, win);
}

#else /* MPI-2: no windows here */

cc_win_result cc_win_allocate(MPI_Comm comm, long long size)
{
    cc_win_result r;
    (void)comm;
    (void)size;
    memset(&r, 0, sizeof r);
    r.win = MPI_WIN_NULL;
    r.rc = MPI_ERR_OTHER;
    return r;
}
int cc_win_free(MPI_Win win) { (void)win; return MPI_ERR_OTHER; }
int cc_win_name(MPI_Win win, char *name, int n)
{
    (void)win;
    (void)name;
    (void)n;
    return MPI_ERR_OTHER;
}
int cc_rma_put(MPI_Win w, void *o, int c, int t, long long d) { (void)w; (void)o; (void)c; (void)t; (void)d; return MPI_ERR_OTHER; }
int cc_rma_get(MPI_Win w, void *o, int c, int t, long long d) { (void)w; (void)o; (void)c; (void)t; (void)d; return MPI_ERR_OTHER; }
int cc_rma_acc(MPI_Win w, void *o, int c, int dt, int t, long long d, int op) { (void)w; (void)o; (void)c; (void)dt; (void)t; (void)d; (void)op; return MPI_ERR_OTHER; }
int cc_rma_get_acc(MPI_Win w, void *o, void *r, int c, int dt, int t, long long d, int op) { (void)w; (void)o; (void)r; (void)c; (void)dt; (void)t; (void)d; (void)op; return MPI_ERR_OTHER; }
int cc_rma_fop(MPI_Win w, void *o, void *r, int dt, int t, long long d, int op) { (void)w; (void)o; (void)r; (void)dt; (void)t; (void)d; (void)op; return MPI_ERR_OTHER; }
int cc_rma_cas(MPI_Win w, void *o, void *c, void *r, int dt, int t, long long d) { (void)w; (void)o; (void)c; (void)r; (void)dt; (void)t; (void)d; return MPI_ERR_OTHER; }
int cc_win_lock(MPI_Win w, int t, int e) { (void)w; (void)t; (void)e; return MPI_ERR_OTHER; }
int cc_win_unlock(MPI_Win w, int t) { (void)w; (void)t; return MPI_ERR_OTHER; }
int cc_win_lock_all(MPI_Win w) { (void)w; return MPI_ERR_OTHER; }
int cc_win_unlock_all(MPI_Win w) { (void)w; return MPI_ERR_OTHER; }
int cc_win_flush(MPI_Win w, int t) { (void)w; (void)t; return MPI_ERR_OTHER; }

#endif

int cc_win_fence(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_fence(0, win);
}

/* group_of makes the group of ranks of comm. */
static int group_of(MPI_Comm comm, int *ranks, int n, MPI_Group *group)
{
    MPI_Group all;
    int rc = MPI_Comm_group(comm, &all);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Group_incl(all, n, ranks, group);
    MPI_Group_free(&all);
    return rc;
}

int cc_win_post(MPI_Win win, MPI_Comm comm, int *ranks, int n)
{
    GUARD_INT();
    MPI_Group g;
    int rc = group_of(comm, ranks, n, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Win_post(g, 0, win);
    MPI_Group_free(&g);
    return rc;
}

int cc_win_start(MPI_Win win, MPI_Comm comm, int *ranks, int n)
{
    GUARD_INT();
    MPI_Group g;
    int rc = group_of(comm, ranks, n, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Win_start(g, 0, win);
    MPI_Group_free(&g);
    return rc;
}

int cc_win_complete(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_complete(win);
}

int cc_win_wait(MPI_Win win)
{
    GUARD_INT();
    return MPI_Win_wait(win);
}

int cc_rma_group(MPI_Comm comm, int peer, MPI_Group *group) { return group_of(comm, &peer, 1, group); }

int cc_rma_group_free(MPI_Group *group) { return MPI_Group_free(group); }

#if MPI_VERSION >= 3

/* issue makes operation j of an iteration to target: OSU's j-th message of
 * a window goes j bytes-blocks into the origin buffer and the window. */
static int issue(const cc_rma_kernel *k, int j, int target)
{
    size_t off = (size_t)j * (size_t)k->bytes;
    MPI_Aint disp = (MPI_Aint)off;
    MPI_Datatype dt = cc_dtype_of(k->dtype);
    switch (k->op) {
    case CC_RMA_PUT:
        return MPI_Put(k->origin + off, k->count, MPI_BYTE, target, disp, k->count, MPI_BYTE, k->win);
    case CC_RMA_GET:
        return MPI_Get(k->result + off, k->count, MPI_BYTE, target, disp, k->count, MPI_BYTE, k->win);
    case CC_RMA_ACC:
        return MPI_Accumulate(k->origin + off, k->count, dt, target, disp, k->count, dt, MPI_SUM, k->win);
    case CC_RMA_GET_ACC:
        return MPI_Get_accumulate(k->origin + off, k->count, dt, k->result + off, k->count, dt, target, disp, k->count,
                                  dt, MPI_SUM, k->win);
    case CC_RMA_FOP:
        return MPI_Fetch_and_op(k->origin + off, k->result + off, dt, target, disp, MPI_SUM, k->win);
    case CC_RMA_CAS:
        return MPI_Compare_and_swap(k->origin + off, k->compare + off, k->result + off, dt, target, disp, k->win);
    }
    return MPI_ERR_INTERN;
}

/* ops issues the operations of one iteration: one (lat) or a window. */
static int ops(const cc_rma_kernel *k, int target)
{
    int n = k->mode == CC_RMA_LAT ? 1 : k->window;
    for (int j = 0; j < n; j++) {
        int rc = issue(k, j, target);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != MPI_SUCCESS)                                                                                        \
            return rc_;                                                                                                \
    } while (0)

/* passive runs the origin's side of a passive-target loop. */
static int passive(const cc_rma_kernel *k, double *own)
{
    int p = k->peer;
    if (k->sync == CC_SYNC_FLUSH)
        TRY(MPI_Win_lock(MPI_LOCK_SHARED, p, 0, k->win));
    double t0 = MPI_Wtime();
    for (int i = 0; i < k->iters; i++) {
        switch (k->sync) {
        case CC_SYNC_FLUSH:
            TRY(ops(k, p));
            TRY(MPI_Win_flush(p, k->win));
            break;
        case CC_SYNC_LOCK:
            TRY(MPI_Win_lock(MPI_LOCK_SHARED, p, 0, k->win));
            TRY(ops(k, p));
            TRY(MPI_Win_unlock(p, k->win));
            break;
        default: /* lock_all */
            TRY(MPI_Win_lock_all(0, k->win));
            TRY(ops(k, p));
            TRY(MPI_Win_unlock_all(k->win));
        }
    }
    *own = MPI_Wtime() - t0;
    if (k->sync == CC_SYNC_FLUSH)
        TRY(MPI_Win_unlock(p, k->win));
    return MPI_SUCCESS;
}

/* active runs this rank's side of a fence or PSCW loop (osu_put_latency's,
 * osu_put_bw's and osu_put_bibw's). */
static int active(const cc_rma_kernel *k, double *own)
{
    MPI_Win w = k->win;
    MPI_Group g = k->group;
    int p = k->peer;
    double t0 = MPI_Wtime();
    for (int i = 0; i < k->iters; i++) {
        if (k->mode == CC_RMA_BIBW) {
            if (k->sync == CC_SYNC_FENCE) {
                TRY(MPI_Win_fence(0, w));
                TRY(ops(k, p));
                TRY(MPI_Win_fence(0, w));
            } else {
                TRY(MPI_Win_post(g, 0, w));
                TRY(MPI_Win_start(g, 0, w));
                TRY(ops(k, p));
                TRY(MPI_Win_complete(w));
                TRY(MPI_Win_wait(w));
            }
        } else if (k->mode == CC_RMA_BW) {
            if (k->sync == CC_SYNC_FENCE) {
                TRY(MPI_Win_fence(0, w));
                if (k->first)
                    TRY(ops(k, p));
                TRY(MPI_Win_fence(0, w));
            } else if (k->first) {
                TRY(MPI_Win_start(g, 0, w));
                TRY(ops(k, p));
                TRY(MPI_Win_complete(w));
            } else {
                TRY(MPI_Win_post(g, 0, w));
                TRY(MPI_Win_wait(w));
            }
        } else if (k->sync == CC_SYNC_FENCE) { /* lat: each side in turn */
            TRY(MPI_Win_fence(0, w));
            if (k->first)
                TRY(ops(k, p));
            TRY(MPI_Win_fence(0, w));
            if (!k->first)
                TRY(ops(k, p));
            TRY(MPI_Win_fence(0, w));
        } else if (k->first) {
            TRY(MPI_Win_start(g, 0, w));
            TRY(ops(k, p));
            TRY(MPI_Win_complete(w));
            TRY(MPI_Win_post(g, 0, w));
            TRY(MPI_Win_wait(w));
        } else {
            TRY(MPI_Win_post(g, 0, w));
            TRY(MPI_Win_wait(w));
            TRY(MPI_Win_start(g, 0, w));
            TRY(ops(k, p));
            TRY(MPI_Win_complete(w));
        }
    }
    *own = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

int cc_rma_rep(cc_rma_kernel *k, double *own)
{
    if (k->sync == CC_SYNC_FENCE || k->sync == CC_SYNC_PSCW)
        return active(k, own);
    if (!k->first)
        return MPI_SUCCESS; /* the passive target takes no part */
    return passive(k, own);
}

#else

int cc_rma_rep(cc_rma_kernel *k, double *own)
{
    (void)k;
    (void)own;
    return MPI_ERR_OTHER;
}

#endif
