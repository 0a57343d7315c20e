/* access.c: the access engine of paper 000 (Fischer, Rethmann, Wachsmann,
 * Definitions 1 and 2), one repetition per call; the protocol is the one of
 * package patterns (access.go), which runs it in Go on other backends:
 *   - every rank issues its accesses and serves the requests addressed to
 *     it, one at a time in arrival order, while it waits for its answers;
 *   - the k requests of one access leave one after another without waiting
 *     (the send hot spot k), every answer's receive posted before them;
 *   - the next access of a k-access starts when all k answers are in.
 * With check (mpi.AccessRun.CheckSlot, set when validating) a request for
 * another rank's slot and a request or answer of the wrong length are
 * faults. The lengths are only checked then: MPI_Get_count costs about
 * 16 ns here, two calls per packet, 8% of a k = 1 access on shared memory,
 * which a C benchmark of the protocol does not pay; without the check a
 * short message leaves stale header bytes, whose slot is still checked
 * against the range, so nothing is read or written out of bounds. */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static void put64(char *p, unsigned long long v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (char)(v >> (8 * i));
}

static unsigned long long get64(const char *p)
{
    unsigned long long v = 0;
    for (int i = 0; i < 8; i++)
        v |= (unsigned long long)(unsigned char)p[i] << (8 * i);
    return v;
}

cc_access *cc_access_new(MPI_Comm comm, int write, int k, int l, int slots, int max_steps,
                         int keep_replies, int req_tag, int reply_tag)
{
    cc_access *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->comm = comm;
    a->write = write;
    a->k = k;
    a->l = l;
    a->slots = slots;
    a->max_steps = max_steps;
    a->keep_replies = keep_replies;
    a->req_tag = req_tag;
    a->reply_tag = reply_tag;
    a->req_len = CC_ACCESS_HEADER + (write ? l : 0);
    a->reply_len = write ? CC_ACCESS_HEADER : l;
    size_t replies = (size_t)k * (size_t)a->reply_len * (size_t)(keep_replies ? max_steps : 1);
    /* calloc(0) may return NULL: allocate at least a byte. */
    a->mem = calloc((size_t)slots * (size_t)l + 1, 1);
    a->req_msgs = calloc((size_t)k * (size_t)a->req_len + 1, 1);
    a->replies = calloc(replies + 1, 1);
    a->req_buf = calloc((size_t)a->req_len + 1, 1);
    a->waits = calloc((size_t)k + 1, sizeof(MPI_Request));
    a->req_sends = calloc((size_t)k, sizeof(MPI_Request));
    if (!a->mem || !a->req_msgs || !a->replies || !a->req_buf || !a->waits || !a->req_sends) {
        cc_access_free(a);
        return NULL;
    }
    return a;
}

void cc_access_free(cc_access *a)
{
    if (a == NULL || a->broken)
        return; /* a broken engine's buffers may still be in MPI's hands */
    free(a->mem);
    free(a->req_msgs);
    free(a->replies);
    free(a->req_buf);
    free(a->waits);
    free(a->req_sends);
    free(a->acks);
    free(a->sends);
    free(a->served);
    free(a);
}

/* reserve makes room for n served requests. */
static int reserve(cc_access *a, int n)
{
    if (n <= a->cap)
        return 1;
    char *acks = realloc(a->acks, (size_t)n * CC_ACCESS_HEADER);
    if (acks == NULL)
        return 0;
    a->acks = acks;
    MPI_Request *sends = realloc(a->sends, (size_t)n * sizeof(MPI_Request));
    if (sends == NULL)
        return 0;
    a->sends = sends;
    cc_served *served = realloc(a->served, (size_t)n * sizeof(cc_served));
    if (served == NULL)
        return 0;
    a->served = served;
    a->cap = n;
    return 1;
}

/* serve answers the request that arrived with st into req_buf. */
static int serve(cc_access *a, const MPI_Status *st, int check, int *nsends, cc_access_result *r)
{
    int source = st->MPI_SOURCE;
    if (check) {
        int count = 0;
        MPI_Get_count(st, MPI_BYTE, &count);
        if (count != a->req_len) {
            r->fault = CC_FAULT_REQ_LEN;
            r->rank = source;
            r->count = count;
            r->want = a->req_len;
            return 0;
        }
    }
    unsigned long long slot = get64(a->req_buf), seq = get64(a->req_buf + 8);
    if (slot >= (unsigned long long)a->slots) {
        r->fault = CC_FAULT_SLOT_RANGE;
        r->rank = source;
        r->slot = slot;
        r->want = a->slots;
        return 0;
    }
    if (check && slot != (unsigned long long)(source % a->slots)) {
        r->fault = CC_FAULT_SLOT_OWN;
        r->rank = source;
        r->slot = slot;
        r->want = source % a->slots;
        return 0;
    }
    char *region = a->mem + slot * (unsigned long long)a->l;
    char *answer = region;
    if (a->write) {
        memcpy(region, a->req_buf + CC_ACCESS_HEADER, (size_t)a->l);
        answer = a->acks + (size_t)a->nserved * CC_ACCESS_HEADER;
        memcpy(answer, a->req_buf, CC_ACCESS_HEADER);
    }
    a->served[a->nserved++] = (cc_served){source, slot, seq};
    r->rc = MPI_Isend(answer, a->reply_len, MPI_BYTE, source, a->reply_tag, a->comm, &a->sends[(*nsends)++]);
    return r->rc == MPI_SUCCESS;
}

/* repost posts the request receive while requests remain to be served. */
static int repost(cc_access *a, int incoming, cc_access_result *r)
{
    if (a->nserved >= incoming) {
        a->waits[0] = MPI_REQUEST_NULL;
        return 1;
    }
    r->rc = MPI_Irecv(a->req_buf, a->req_len, MPI_BYTE, MPI_ANY_SOURCE, a->req_tag, a->comm, &a->waits[0]);
    return r->rc == MPI_SUCCESS;
}

cc_access_result cc_access_run(cc_access *a, const int *targets, int steps, int my_slot,
                               int incoming, unsigned long long rep, int check)
{
    cc_access_result r;
    memset(&r, 0, sizeof r);
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    if (!reserve(a, incoming)) {
        r.rc = MPI_ERR_NO_MEM;
        return r;
    }
    const int k = a->k;
    int last = -1;
    for (int x = 0; x < steps; x++)
        if (targets[x * k] >= 0)
            last = x;
    for (int i = 0; i <= k; i++)
        a->waits[i] = MPI_REQUEST_NULL;
    a->nserved = 0;
    int nsends = 0;

    double t0 = MPI_Wtime();
    if (!repost(a, incoming, &r))
        goto broken;
    for (int x = 0; x <= last; x++) {
        const int *row = targets + x * k;
        if (row[0] < 0)
            continue;
        char *replies = a->replies + (a->keep_replies ? (size_t)x * k * a->reply_len : 0);
        for (int j = 0; j < k; j++) {
            r.rc = MPI_Irecv(replies + (size_t)j * a->reply_len, a->reply_len, MPI_BYTE, row[j],
                             a->reply_tag, a->comm, &a->waits[1 + j]);
            if (r.rc != MPI_SUCCESS)
                goto broken;
        }
        for (int j = 0; j < k; j++) {
            char *m = a->req_msgs + (size_t)j * a->req_len;
            put64(m, (unsigned long long)my_slot);
            put64(m + 8, rep << 32 | (unsigned long long)x << 16 | (unsigned long long)j);
            r.rc = MPI_Isend(m, a->req_len, MPI_BYTE, row[j], a->req_tag, a->comm, &a->req_sends[j]);
            if (r.rc != MPI_SUCCESS)
                goto broken;
        }
        for (int pending = k; pending > 0;) {
            int i = MPI_UNDEFINED;
            MPI_Status st;
            r.rc = MPI_Waitany(k + 1, a->waits, &i, &st);
            if (r.rc != MPI_SUCCESS || i == MPI_UNDEFINED) {
                if (r.rc == MPI_SUCCESS)
                    r.rc = MPI_ERR_INTERN; /* answers pending, nothing to wait for */
                goto broken;
            }
            if (i == 0) {
                if (!serve(a, &st, check, &nsends, &r) || !repost(a, incoming, &r))
                    goto broken;
                continue;
            }
            if (check) {
                int count = 0;
                MPI_Get_count(&st, MPI_BYTE, &count);
                if (count != a->reply_len) {
                    r.fault = CC_FAULT_REPLY_LEN;
                    r.rank = row[i - 1];
                    r.count = count;
                    r.want = a->reply_len;
                    goto broken;
                }
            }
            pending--;
        }
        /* Every request was answered, so its send is complete. */
        r.rc = cc_waitall_ignore(k, a->req_sends);
        if (r.rc != MPI_SUCCESS)
            goto broken;
        if (x == last)
            r.seconds = MPI_Wtime() - t0;
    }
    while (a->nserved < incoming) {
        MPI_Status st;
        r.rc = MPI_Wait(&a->waits[0], &st);
        if (r.rc != MPI_SUCCESS || !serve(a, &st, check, &nsends, &r) || !repost(a, incoming, &r))
            goto broken;
    }
    if (nsends > 0) {
        r.rc = cc_waitall_ignore(nsends, a->sends);
        if (r.rc != MPI_SUCCESS)
            goto broken;
    }
    return r;
broken:
    a->broken = 1;
    return r;
}
