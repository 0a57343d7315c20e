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

/* page_zalloc returns n zeroed bytes (at least one) on a page boundary, as
 * the C reference allocates its buffers (scripts/ref/ref.h ref_buffer).
 * calloc returns 16-byte alignment: an l-byte packet then straddles one
 * more cache line and the copies into and out of the library's
 * shared-memory fragments run slower (a misaligned 16 KiB memcpy costs
 * up to several times an aligned one; docs/findings/trust.md). Freed with free. */
static void *page_zalloc(size_t n)
{
    void *p = NULL;
    if (n == 0)
        n = 1;
    if (posix_memalign(&p, 4096, n) != 0)
        return NULL;
    memset(p, 0, n);
    return p;
}

cc_access *cc_access_new(MPI_Comm comm, int write, int k, int l, int slots, int max_steps,
                         int keep_replies, int req_tag, int reply_tag)
{
    cc_access *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    /* The rest stays zero (calloc's, and the literal's). */
    *a = (cc_access){.comm = comm, .write = write, .k = k, .l = l, .slots = slots, .max_steps = max_steps,
                     .keep_replies = keep_replies, .req_tag = req_tag, .reply_tag = reply_tag,
                     .req_len = CC_ACCESS_HEADER + (write ? l : 0), .reply_len = write ? CC_ACCESS_HEADER : l};
    size_t replies = (size_t)k * (size_t)a->reply_len * (size_t)(keep_replies ? max_steps : 1);
    /* The message buffers are page-aligned (page_zalloc); at least a byte each. */
    a->mem = page_zalloc((size_t)slots * (size_t)l);
    a->req_msgs = page_zalloc((size_t)k * (size_t)a->req_len);
    a->replies = page_zalloc(replies);
    a->req_buf = page_zalloc((size_t)a->req_len);
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

/* ---- The direct store's server (package directstore) ----
 *
 * The same protocol as cc_access_run, open-ended: a store does not know how
 * many requests it will serve, so the request receive stays posted from
 * cc_store_new to cc_store_close, and every wait of every call (a batch's
 * answers, the caller's own requests in cc_store_wait) also completes
 * arriving requests and serves them, one at a time in arrival order.
 * Request header: word 0 the byte offset in the home memory, word 1 the data
 * length with CC_STORE_WRITE / CC_STORE_CLOSE. Answers: the data of a read,
 * sent from the home memory; the header of a write, as its acknowledgement.
 * Every call returns with no answer send in flight, so the home memory may
 * be moved (cc_store_grow) between calls. */

static int store_post(cc_store *s, cc_access_result *r)
{
    r->rc = MPI_Irecv(s->req_buf, CC_ACCESS_HEADER + s->max_packet, MPI_BYTE, MPI_ANY_SOURCE, s->req_tag,
                      s->comm, &s->req);
    return r->rc == MPI_SUCCESS;
}

cc_store *cc_store_new(MPI_Comm comm, int req_tag, int reply_tag, int max_packet, int *rc)
{
    *rc = MPI_SUCCESS;
    cc_store *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->comm = comm;
    s->req_tag = req_tag;
    s->reply_tag = reply_tag;
    s->max_packet = max_packet;
    s->req = MPI_REQUEST_NULL;
    s->req_buf = malloc((size_t)CC_ACCESS_HEADER + (size_t)max_packet);
    s->mem = calloc(1, 1);
    if (s->req_buf == NULL || s->mem == NULL) {
        cc_store_free(s);
        return NULL;
    }
    cc_access_result r;
    memset(&r, 0, sizeof r);
    if ((*rc = MPI_Comm_rank(comm, &s->me)) != MPI_SUCCESS || !store_post(s, &r)) {
        if (*rc == MPI_SUCCESS)
            *rc = r.rc;
        cc_store_free(s);
        return NULL;
    }
    return s;
}

void cc_store_free(cc_store *s)
{
    if (s == NULL || s->broken)
        return; /* a broken server's buffers may still be in MPI's hands */
    free(s->mem);
    free(s->req_buf);
    free(s->waits);
    free(s->req_sends);
    free(s->req_msgs);
    free(s->acks_in);
    free(s->acks);
    free(s->sends);
    free(s);
}

int cc_store_grow(cc_store *s, size_t n)
{
    if (n <= s->mem_len)
        return 1;
    char *m = realloc(s->mem, n);
    if (m == NULL)
        return 0;
    memset(m + s->mem_len, 0, n - s->mem_len);
    s->mem = m;
    s->mem_len = n;
    return 1;
}

/* store_flush completes the answers in flight. Their receives were posted
 * before the requests left (the requester's side of the protocol), so this
 * waits only for MPI to move them. */
static int store_flush(cc_store *s, cc_access_result *r)
{
    if (s->nsends == 0)
        return 1;
    r->rc = cc_waitall_ignore(s->nsends, s->sends);
    s->nsends = 0;
    return r->rc == MPI_SUCCESS;
}

/* store_serve answers the request that arrived with st into req_buf. */
static int store_serve(cc_store *s, const MPI_Status *st, cc_access_result *r)
{
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    int source = st->MPI_SOURCE;
    if (count < CC_ACCESS_HEADER) {
        r->fault = CC_FAULT_REQ_LEN;
        r->rank = source;
        r->count = count;
        r->want = CC_ACCESS_HEADER;
        return 0;
    }
    unsigned long long off = get64(s->req_buf), w1 = get64(s->req_buf + 8);
    if (w1 & CC_STORE_CLOSE) {
        if (source != s->me || count != CC_ACCESS_HEADER) {
            r->fault = CC_FAULT_REQ_LEN;
            r->rank = source;
            r->count = count;
            r->want = CC_ACCESS_HEADER;
            return 0;
        }
        s->closed = 1;
        return 1;
    }
    unsigned long long len = w1 & CC_STORE_LEN_MASK;
    int write = (w1 & CC_STORE_WRITE) != 0;
    int want = CC_ACCESS_HEADER + (write ? (int)len : 0);
    if (len > (unsigned long long)s->max_packet || count != want) {
        r->fault = CC_FAULT_REQ_LEN;
        r->rank = source;
        r->count = count;
        r->want = want;
        return 0;
    }
    if (off > s->mem_len || len > s->mem_len - off) {
        r->fault = CC_FAULT_SLOT_RANGE;
        r->rank = source;
        r->slot = off;
        r->want = (int)(s->mem_len > 0x7fffffff ? 0x7fffffff : s->mem_len);
        return 0;
    }
    /* A write must not change memory an earlier read's answer is still
     * being sent from, and the arrays of answers in flight are bounded:
     * both are settled by completing the answers in flight first. */
    if ((write && s->nsends > 0) || s->nsends == s->scap) {
        if (!store_flush(s, r))
            return 0;
    }
    if (s->scap == 0) {
        s->scap = 64;
        s->acks = malloc((size_t)s->scap * CC_ACCESS_HEADER);
        s->sends = malloc((size_t)s->scap * sizeof(MPI_Request));
        if (s->acks == NULL || s->sends == NULL) {
            r->rc = MPI_ERR_NO_MEM;
            return 0;
        }
    }
    char *answer = s->mem + off;
    int alen = (int)len;
    if (write) {
        memcpy(s->mem + off, s->req_buf + CC_ACCESS_HEADER, (size_t)len);
        answer = s->acks + (size_t)s->nsends * CC_ACCESS_HEADER;
        memcpy(answer, s->req_buf, CC_ACCESS_HEADER);
        alen = CC_ACCESS_HEADER;
        s->served_writes++;
    } else {
        s->served_reads++;
    }
    r->rc = MPI_Isend(answer, alen, MPI_BYTE, source, s->reply_tag, s->comm, &s->sends[s->nsends++]);
    return r->rc == MPI_SUCCESS;
}

/* store_reserve makes room for a group of k packets of req bytes in all. */
static int store_reserve(cc_store *s, int k, size_t req)
{
    if (k + 1 > s->wcap) {
        MPI_Request *w = realloc(s->waits, (size_t)(k + 1) * sizeof(MPI_Request));
        if (w == NULL)
            return 0;
        s->waits = w;
        s->wcap = k + 1;
    }
    if (k > s->kcap) {
        MPI_Request *q = realloc(s->req_sends, (size_t)k * sizeof(MPI_Request));
        if (q == NULL)
            return 0;
        s->req_sends = q;
        char *a = realloc(s->acks_in, (size_t)k * CC_ACCESS_HEADER);
        if (a == NULL)
            return 0;
        s->acks_in = a;
        s->kcap = k;
    }
    if (req > s->msgs_cap) {
        char *m = realloc(s->req_msgs, req);
        if (m == NULL)
            return 0;
        s->req_msgs = m;
        s->msgs_cap = req;
    }
    return 1;
}

cc_access_result cc_store_batch(cc_store *s, int write, int n, int k, const int *targets,
                                const long long *offs, const int *lens, char *base,
                                const long long *boffs, char **bufs)
{
    cc_access_result r;
    memset(&r, 0, sizeof r);
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    /* Packet j's buffer: base + boffs[j] when the packets are pieces of one
     * buffer (no per-packet pinning on the Go side), else bufs[j]. */
#define PACKET_BUF(j) (base != NULL ? base + boffs[j] : (bufs[j] ? bufs[j] : cc_zero_buf))
    double t0 = MPI_Wtime();
    for (int g = 0; g < n; g += k) {
        int m = n - g < k ? n - g : k;
        size_t req = 0;
        for (int j = 0; j < m; j++)
            req += CC_ACCESS_HEADER + (write ? (size_t)lens[g + j] : 0);
        if (!store_reserve(s, m, req)) {
            r.rc = MPI_ERR_NO_MEM;
            return r;
        }
        s->waits[0] = s->req;
        /* Every answer's receive is posted before the first request leaves,
         * so no answer ever waits for a receive. */
        for (int j = 0; j < m; j++) {
            char *into = write ? s->acks_in + (size_t)j * CC_ACCESS_HEADER : PACKET_BUF(g + j);
            int len = write ? CC_ACCESS_HEADER : lens[g + j];
            r.rc = MPI_Irecv(into, len, MPI_BYTE, targets[g + j], s->reply_tag, s->comm, &s->waits[1 + j]);
            if (r.rc != MPI_SUCCESS)
                goto broken;
        }
        char *msg = s->req_msgs;
        for (int j = 0; j < m; j++) {
            int len = lens[g + j];
            put64(msg, (unsigned long long)offs[g + j]);
            put64(msg + 8, (unsigned long long)len | (write ? CC_STORE_WRITE : 0));
            if (write && len > 0)
                memcpy(msg + CC_ACCESS_HEADER, PACKET_BUF(g + j), (size_t)len);
            int mlen = CC_ACCESS_HEADER + (write ? len : 0);
            r.rc = MPI_Isend(msg, mlen, MPI_BYTE, targets[g + j], s->req_tag, s->comm, &s->req_sends[j]);
            if (r.rc != MPI_SUCCESS)
                goto broken;
            msg += mlen;
        }
        for (int pending = m; pending > 0;) {
            int i = MPI_UNDEFINED;
            MPI_Status st;
            r.rc = MPI_Waitany(m + 1, s->waits, &i, &st);
            if (r.rc != MPI_SUCCESS || i == MPI_UNDEFINED) {
                if (r.rc == MPI_SUCCESS)
                    r.rc = MPI_ERR_INTERN;
                goto broken;
            }
            if (i == 0) {
                s->req = MPI_REQUEST_NULL;
                if (!store_serve(s, &st, &r) || !store_post(s, &r))
                    goto broken;
                s->waits[0] = s->req;
                continue;
            }
            int count = 0, want = write ? CC_ACCESS_HEADER : lens[g + i - 1];
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != want) {
                r.fault = CC_FAULT_REPLY_LEN;
                r.rank = targets[g + i - 1];
                r.count = count;
                r.want = want;
                goto broken;
            }
            pending--;
        }
        /* Every request was answered, so its send is complete. */
        r.rc = cc_waitall_ignore(m, s->req_sends);
        if (r.rc != MPI_SUCCESS)
            goto broken;
    }
    if (!store_flush(s, &r))
        goto broken;
    r.seconds = MPI_Wtime() - t0;
    return r;
broken:
    s->broken = 1;
    return r;
#undef PACKET_BUF
}

cc_store_wait_result cc_store_wait(cc_store *s, int n, MPI_Request *reqs)
{
    cc_store_wait_result w;
    memset(&w, 0, sizeof w);
    w.index = -1;
    if (cc_wrong_thread()) {
        w.r.rc = CC_ERR_WRONG_THREAD;
        return w;
    }
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= reqs[i] != MPI_REQUEST_NULL;
    if (!any)
        return w;
    if (!store_reserve(s, n, 0)) {
        w.r.rc = MPI_ERR_NO_MEM;
        return w;
    }
    s->waits[0] = s->req;
    memcpy(s->waits + 1, reqs, (size_t)n * sizeof(MPI_Request));
    for (;;) {
        int i = MPI_UNDEFINED;
        MPI_Status st;
        w.r.rc = MPI_Waitany(n + 1, s->waits, &i, &st);
        if (w.r.rc != MPI_SUCCESS || i == MPI_UNDEFINED) {
            if (w.r.rc == MPI_SUCCESS)
                w.r.rc = MPI_ERR_INTERN;
            s->broken = 1;
            return w;
        }
        if (i == 0) {
            s->req = MPI_REQUEST_NULL;
            if (!store_serve(s, &st, &w.r) || !store_post(s, &w.r)) {
                s->broken = 1;
                return w;
            }
            s->waits[0] = s->req;
            continue;
        }
        reqs[i - 1] = s->waits[i]; /* MPI_REQUEST_NULL now */
        w.index = i - 1;
        w.st.rc = 0; /* MPI_Waitany returned MPI_SUCCESS; st.MPI_ERROR is undefined */
        w.st.source = st.MPI_SOURCE;
        w.st.tag = st.MPI_TAG;
        int count = 0;
        if (MPI_Get_count(&st, MPI_BYTE, &count) == MPI_SUCCESS && count != MPI_UNDEFINED)
            w.st.count = count;
        break;
    }
    if (!store_flush(s, &w.r))
        s->broken = 1;
    return w;
}

cc_access_result cc_store_poll(cc_store *s)
{
    cc_access_result r;
    memset(&r, 0, sizeof r);
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    for (;;) {
        int flag = 0;
        MPI_Status st;
        r.rc = MPI_Test(&s->req, &flag, &st);
        if (r.rc != MPI_SUCCESS)
            goto broken;
        if (!flag)
            break;
        if (!store_serve(s, &st, &r) || !store_post(s, &r))
            goto broken;
    }
    if (!store_flush(s, &r))
        goto broken;
    return r;
broken:
    s->broken = 1;
    return r;
}

cc_access_result cc_store_close(cc_store *s)
{
    cc_access_result r;
    memset(&r, 0, sizeof r);
    if (cc_wrong_thread()) {
        r.rc = CC_ERR_WRONG_THREAD;
        return r;
    }
    char hdr[CC_ACCESS_HEADER];
    put64(hdr, 0);
    put64(hdr + 8, CC_STORE_CLOSE);
    MPI_Request send;
    r.rc = MPI_Isend(hdr, CC_ACCESS_HEADER, MPI_BYTE, s->me, s->req_tag, s->comm, &send);
    if (r.rc != MPI_SUCCESS)
        goto broken;
    /* Requests of others arriving before the close are still served. */
    while (!s->closed) {
        MPI_Status st;
        r.rc = MPI_Wait(&s->req, &st);
        if (r.rc != MPI_SUCCESS || !store_serve(s, &st, &r))
            goto broken;
        if (!s->closed && !store_post(s, &r))
            goto broken;
    }
    r.rc = MPI_Wait(&send, MPI_STATUS_IGNORE);
    if (r.rc != MPI_SUCCESS || !store_flush(s, &r))
        goto broken;
    return r;
broken:
    s->broken = 1;
    return r;
}
