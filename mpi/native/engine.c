/* engine.c: see engine.h. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* cc_eng_yield_idle: set from Go (yield.go) when an empty poll should
 * yield the processor. */
int cc_eng_yield_idle = 0;

static void put32(char *p, int v) { memcpy(p, &v, 4); }
static int get32(const char *p) { int v; memcpy(&v, p, 4); return v; }
static void put64(char *p, long long v) { memcpy(p, &v, 8); }
static long long get64(const char *p) { long long v; memcpy(&v, p, 8); return v; }

static int *dupints(const int *src, int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (p != NULL && n > 0)
        memcpy(p, src, (size_t)n * sizeof *p);
    return p;
}

cc_eng *cc_eng_new(MPI_Comm comm, int tag, int head, int inline_max, int me, int p, int nb,
                   const int *id, const int *need, const int *pid, const int *prank,
                   const int *koff, const int *kid, const int *krank)
{
    cc_eng *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    /* The rest stays zero (calloc's, and the literal's). */
    *e = (cc_eng){.comm = comm, .tag = tag, .head = head, .me = me, .p = p, .inline_max = inline_max, .r_req = -1};
    while ((1 << e->d_rounds) < p)
        e->d_rounds++;
    e->rcap = CC_ENG_PREFIX + head + inline_max;
    if (e->rcap < CC_ENG_BARMSG)
        e->rcap = CC_ENG_BARMSG;
    int slots_ok = 1;
    for (int i = 0; i < CC_ENG_RING; i++) {
        e->rslot[i] = malloc((size_t)e->rcap);
        e->rreq[i] = MPI_REQUEST_NULL;
        slots_ok &= e->rslot[i] != NULL;
    }
    e->rbuf = e->rslot[0];
    e->held = -1;
    e->nb = nb;
    int nk = nb > 0 ? koff[nb] : 0;
    e->b_id = dupints(id, nb);
    e->b_need = dupints(need, nb);
    e->b_pid = dupints(pid, nb);
    e->b_prank = dupints(prank, nb);
    e->b_koff = dupints(koff, nb + 1);
    e->b_kid = dupints(kid, nk);
    e->b_krank = dupints(krank, nk);
    int arrays_ok = 1;
    for (int p = 0; p < 2; p++) {
        e->b_cnt[p] = calloc((size_t)nb + 1, sizeof(int));
        e->b_sum[p] = calloc(2 * (size_t)nb + 2, sizeof(long long));
        e->b_up[p] = calloc((size_t)nb + 1, sizeof(int));
        e->b_us[p] = calloc(2 * (size_t)nb + 2, sizeof(long long));
        e->b_eg[p] = calloc((size_t)nb + 1, sizeof(int));
        e->b_es[p] = calloc(2 * (size_t)nb + 2, sizeof(long long));
        arrays_ok &= e->b_cnt[p] && e->b_sum[p] && e->b_up[p] && e->b_us[p] && e->b_eg[p] && e->b_es[p];
    }
    if (!slots_ok || !arrays_ok || !e->b_id || !e->b_need || !e->b_pid || !e->b_prank || !e->b_koff || !e->b_kid ||
        !e->b_krank) {
        cc_eng_free(e);
        return NULL;
    }
    /* The root (last of the list) may release early if exactly one of its
     * children is on another rank and one at least is here. */
    e->b_er = -1;
    if (nb > 0 && pid[nb - 1] < 0 && koff[nb] - koff[nb - 1] == 1 && need[nb - 1] > 1)
        e->b_er = nb - 1;
    return e;
}

void cc_eng_free(cc_eng *e)
{
    if (e == NULL || e->broken)
        return; /* MPI may still hold the buffers of a broken engine */
    for (int i = 0; i < CC_ENG_RING; i++) {
        if (e->rreq[i] == MPI_REQUEST_NULL)
            continue;
        /* Nothing is in flight when the owner closes: the receive is
         * cancelled, or (a message MPI matched all the same) completed;
         * either way MPI lets go of the buffer. */
        MPI_Cancel(&e->rreq[i]);
        if (MPI_Wait(&e->rreq[i], MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return; /* MPI may still hold the slot: keep everything */
    }
    for (int i = 0; i < e->ns; i++)
        free(e->sbuf[i]);
    for (int i = 0; i < e->nfree; i++)
        free(e->freebuf[i]);
    for (int i = 0; i < CC_ENG_RING; i++)
        free(e->rslot[i]);
    free(e->sreq);
    free(e->sbuf);
    free(e->sbuflen);
    free(e->stok);
    free(e->sidx);
    free(e->freebuf);
    free(e->freelen);
    free(e->ct);
    free(e->b_id);
    free(e->b_need);
    free(e->b_pid);
    free(e->b_prank);
    free(e->b_koff);
    free(e->b_kid);
    free(e->b_krank);
    for (int p = 0; p < 2; p++) {
        free(e->b_cnt[p]);
        free(e->b_sum[p]);
        free(e->b_up[p]);
        free(e->b_us[p]);
        free(e->b_eg[p]);
        free(e->b_es[p]);
    }
    free(e->r_head);
    free(e->r_tab);
    free(e->served);
    free(e);
}

int cc_eng_replies(cc_eng *e, int kind_off, int req, int key_off, const char *head)
{
    if (kind_off < 0 || kind_off >= e->head || key_off < 0 || key_off + 4 > e->head || req < 0 || req > 255)
        return MPI_ERR_ARG;
    char *h = malloc((size_t)e->head + 1);
    if (h == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(h, head, (size_t)e->head);
    free(e->r_head);
    e->r_head = h;
    e->r_kind_off = kind_off;
    e->r_key_off = key_off;
    e->r_req = req;
    return MPI_SUCCESS;
}

int cc_eng_reply_grow(cc_eng *e, int n)
{
    if (n <= e->r_n)
        return MPI_SUCCESS;
    cc_eng_reply *t = realloc(e->r_tab, (size_t)n * sizeof *t);
    if (t == NULL)
        return MPI_ERR_NO_MEM;
    memset(t + e->r_n, 0, (size_t)(n - e->r_n) * sizeof *t);
    e->r_tab = t;
    e->r_n = n;
    return MPI_SUCCESS;
}

/* slot makes room for one more outstanding send. */
static int slot(cc_eng *e)
{
    if (e->ns < e->scap)
        return MPI_SUCCESS;
    int n = e->scap ? 2 * e->scap : 16;
    MPI_Request *r = realloc(e->sreq, (size_t)n * sizeof *r);
    if (r == NULL)
        return MPI_ERR_NO_MEM;
    e->sreq = r;
    char **b = realloc(e->sbuf, (size_t)n * sizeof *b);
    if (b == NULL)
        return MPI_ERR_NO_MEM;
    e->sbuf = b;
    int *bl = realloc(e->sbuflen, (size_t)n * sizeof *bl);
    if (bl == NULL)
        return MPI_ERR_NO_MEM;
    e->sbuflen = bl;
    long long *t = realloc(e->stok, (size_t)n * sizeof *t);
    if (t == NULL)
        return MPI_ERR_NO_MEM;
    e->stok = t;
    int *x = realloc(e->sidx, (size_t)n * sizeof *x);
    if (x == NULL)
        return MPI_ERR_NO_MEM;
    e->sidx = x;
    e->scap = n;
    return MPI_SUCCESS;
}

/* getbuf returns a C send buffer of at least n bytes (reused if one is free). */
static char *getbuf(cc_eng *e, int n, int *cap)
{
    for (int i = e->nfree - 1; i >= 0; i--) {
        if (e->freelen[i] >= n) {
            char *b = e->freebuf[i];
            *cap = e->freelen[i];
            e->nfree--;
            e->freebuf[i] = e->freebuf[e->nfree];
            e->freelen[i] = e->freelen[e->nfree];
            return b;
        }
    }
    *cap = n < 64 ? 64 : n;
    return malloc((size_t)*cap);
}

/* putbuf keeps a finished send buffer for reuse (a few small ones only). */
static void putbuf(cc_eng *e, char *b, int cap)
{
    if (b == NULL)
        return;
    if (e->nfree == e->freecap) {
        if (e->nfree >= 64) {
            free(b);
            return;
        }
        int n = e->freecap ? 2 * e->freecap : 8;
        char **fb = realloc(e->freebuf, (size_t)n * sizeof *fb);
        int *fl = fb ? realloc(e->freelen, (size_t)n * sizeof *fl) : NULL;
        if (fb) e->freebuf = fb;
        if (fl == NULL) {
            free(b);
            return;
        }
        e->freelen = fl;
        e->freecap = n;
    }
    e->freebuf[e->nfree] = b;
    e->freelen[e->nfree] = cap;
    e->nfree++;
}

static int note_token(cc_eng *e, long long tok)
{
    if (e->nct == e->ctcap) {
        int n = e->ctcap ? 2 * e->ctcap : 16;
        long long *c = realloc(e->ct, (size_t)n * sizeof *c);
        if (c == NULL)
            return MPI_ERR_NO_MEM;
        e->ct = c;
        e->ctcap = n;
    }
    e->ct[e->nct++] = tok;
    return MPI_SUCCESS;
}

/* reap completes finished sends (all of them when wait). */
static int reap(cc_eng *e, int wait)
{
    if (e->ns == 0)
        return MPI_SUCCESS;
    int n = 0, rc;
    if (wait) {
        rc = cc_waitall_ignore(e->ns, e->sreq);
        if (rc != MPI_SUCCESS)
            return rc;
        for (int i = 0; i < e->ns; i++)
            e->sidx[i] = i;
        n = e->ns;
    } else {
        rc = cc_testsome_ignore(e->ns, e->sreq, &n, e->sidx);
        if (rc != MPI_SUCCESS)
            return rc;
        if (n == MPI_UNDEFINED || n == 0)
            return MPI_SUCCESS;
    }
    for (int k = 0; k < n; k++) {
        int i = e->sidx[k];
        if (e->stok[i] >= 0) {
            rc = note_token(e, e->stok[i]);
            if (rc != MPI_SUCCESS)
                return rc;
        } else {
            putbuf(e, e->sbuf[i], e->sbuflen[i]);
        }
        e->sreq[i] = MPI_REQUEST_NULL;
    }
    int j = 0;
    for (int i = 0; i < e->ns; i++) {
        if (e->sreq[i] != MPI_REQUEST_NULL) {
            e->sreq[j] = e->sreq[i];
            e->sbuf[j] = e->sbuf[i];
            e->sbuflen[j] = e->sbuflen[i];
            e->stok[j] = e->stok[i];
            j++;
        }
    }
    e->ns = j;
    return MPI_SUCCESS;
}

/* post sends n bytes from buf (a C buffer of capacity cap, or a Go body
 * named by token >= 0). */
static int post(cc_eng *e, int dest, int tag, char *buf, int n, int cap, long long token)
{
    int rc = slot(e);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Isend(buf, n, MPI_BYTE, dest, tag, e->comm, &e->sreq[e->ns]);
    if (rc != MPI_SUCCESS)
        return rc;
    e->sbuf[e->ns] = token >= 0 ? NULL : buf;
    e->sbuflen[e->ns] = cap;
    e->stok[e->ns] = token;
    e->ns++;
    return MPI_SUCCESS;
}

int cc_eng_send(cc_eng *e, int dest, const char *head, const char *body, int blen, int inline_max,
                long long token)
{
    if (cc_wrong_thread())
        return CC_ERR_WRONG_THREAD;
    int sep = blen > inline_max ? blen : 0;
    int n = CC_ENG_PREFIX + e->head + (sep ? 0 : blen), cap = 0;
    char *b = getbuf(e, n, &cap);
    if (b == NULL)
        return MPI_ERR_NO_MEM;
    put32(b, CC_ENG_USER);
    put32(b + 4, sep);
    memcpy(b + CC_ENG_PREFIX, head, (size_t)e->head);
    if (!sep && blen > 0)
        memcpy(b + CC_ENG_PREFIX + e->head, body, (size_t)blen);
    int rc = post(e, dest, e->tag, b, n, cap, -1);
    if (rc != MPI_SUCCESS) {
        free(b);
        e->broken = 1;
        return rc;
    }
    if (sep) {
        rc = post(e, dest, e->tag + 1, (char *)body, blen, 0, token);
        if (rc != MPI_SUCCESS) {
            e->broken = 1;
            return rc;
        }
    }
    return MPI_SUCCESS;
}

static int bar_send(cc_eng *e, int kind, int dest, int node, int epoch, long long a, long long b)
{
    int cap = 0;
    char *m = getbuf(e, CC_ENG_BARMSG, &cap);
    if (m == NULL)
        return MPI_ERR_NO_MEM;
    put32(m, kind);
    put32(m + 4, 0);
    put32(m + 8, node);
    put32(m + 12, epoch);
    put64(m + 16, a);
    put64(m + 24, b);
    int rc = post(e, dest, e->tag, m, CC_ENG_BARMSG, cap, -1);
    if (rc != MPI_SUCCESS)
        free(m);
    return rc;
}

/* bar_release releases local node i: its remote children by message
 * (but the one released early, if skip), its local child (the previous
 * entry, if that one's parent is i) directly. */
static int bar_release(cc_eng *e, int i, int epoch, long long a, long long b, int skip)
{
    for (;;) {
        for (int k = e->b_koff[i]; k < e->b_koff[i + 1] && !skip; k++) {
            int rc = bar_send(e, CC_ENG_RELEASE, e->b_krank[k], e->b_kid[k], epoch, a, b);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        skip = 0;
        if (i == 0) {
            e->completions++;
            e->b_done = epoch;
            e->b_res[0] = a;
            e->b_res[1] = b;
            return MPI_SUCCESS;
        }
        if (e->b_prank[i - 1] != e->me)
            return MPI_SUCCESS; /* its release comes by message */
        i--;
    }
}

/* bar_arrive counts one arrival (with its sums) at local node i; remote:
 * it came by message, from a child on another rank. At the root with one
 * remote child (b_er), once every other child is in and that one is not,
 * the child gets its release at once (CC_ENG_EARLY, with the others'
 * sums) and the root completes on its arrival: see engine.h. */
static int bar_arrive(cc_eng *e, int i, int epoch, long long a, long long b, int remote)
{
    for (;;) {
        int p = epoch & 1, rc;
        e->b_cnt[p][i]++;
        e->b_sum[p][2 * i] += a;
        e->b_sum[p][2 * i + 1] += b;
        if (i == e->b_er) {
            if (remote) {
                e->b_rgot[p] = 1;
            } else if (!e->b_rgot[p] && e->b_cnt[p][i] == e->b_need[i] - 1) {
                int k = e->b_koff[i];
                rc = bar_send(e, CC_ENG_EARLY, e->b_krank[k], e->b_kid[k], epoch, e->b_sum[p][2 * i], e->b_sum[p][2 * i + 1]);
                if (rc != MPI_SUCCESS)
                    return rc;
                e->b_esent[p] = 1;
            }
        }
        if (e->b_cnt[p][i] < e->b_need[i])
            return MPI_SUCCESS;
        a = e->b_sum[p][2 * i];
        b = e->b_sum[p][2 * i + 1];
        e->b_cnt[p][i] = 0;
        e->b_sum[p][2 * i] = e->b_sum[p][2 * i + 1] = 0;
        if (e->b_pid[i] < 0) {
            int skip = i == e->b_er && e->b_esent[p];
            e->b_rgot[p] = e->b_esent[p] = 0;
            return bar_release(e, i, epoch, a, b, skip);
        }
        if (e->b_prank[i] != e->me) {
            rc = bar_send(e, CC_ENG_ARRIVE, e->b_prank[i], e->b_pid[i], epoch, a, b);
            if (rc != MPI_SUCCESS)
                return rc;
            if (e->b_eg[p][i]) {
                /* released early: the total is the parent's sums and ours */
                e->b_eg[p][i] = 0;
                return bar_release(e, i, epoch, e->b_es[p][2 * i] + a, e->b_es[p][2 * i + 1] + b, 0);
            }
            e->b_up[p][i] = 1;
            e->b_us[p][2 * i] = a;
            e->b_us[p][2 * i + 1] = b;
            return MPI_SUCCESS;
        }
        i++; /* the parent is the next node of this rank */
        remote = 0;
    }
}

/* bar_released handles a release (early or not) of local node i, whose
 * parent is on another rank. */
static int bar_released(cc_eng *e, int i, int epoch, long long a, long long b, int early)
{
    int p = epoch & 1;
    if (!early) {
        e->b_up[p][i] = 0;
        return bar_release(e, i, epoch, a, b, 0);
    }
    if (e->b_up[p][i]) {
        e->b_up[p][i] = 0;
        return bar_release(e, i, epoch, a + e->b_us[p][2 * i], b + e->b_us[p][2 * i + 1], 0);
    }
    e->b_eg[p][i] = 1; /* before this node's own arrival: kept until then */
    e->b_es[p][2 * i] = a;
    e->b_es[p][2 * i + 1] = b;
    return MPI_SUCCESS;
}

/* dis_advance runs the rounds of the current dissemination barrier whose
 * message has arrived, sending each round's message on entering it. */
static int dis_advance(cc_eng *e)
{
    int par = e->d_epoch & 1;
    while (e->d_round < e->d_rounds) {
        if (!e->d_sent) {
            int rc = bar_send(e, CC_ENG_DIS, (e->me + (1 << e->d_round)) % e->p, e->d_round, e->d_epoch, 0, 0);
            if (rc != MPI_SUCCESS)
                return rc;
            e->d_sent = 1;
        }
        if (e->d_cnt[par][e->d_round] == 0)
            return MPI_SUCCESS;
        e->d_cnt[par][e->d_round]--;
        e->d_round++;
        e->d_sent = 0;
    }
    e->d_done = e->d_epoch;
    e->completions++;
    return MPI_SUCCESS;
}

static int bar_index(cc_eng *e, int node)
{
    for (int i = 0; i < e->nb; i++)
        if (e->b_id[i] == node)
            return i;
    return -1;
}

int cc_eng_barrier_start(cc_eng *e, long long a, long long b)
{
    if (cc_wrong_thread())
        return CC_ERR_WRONG_THREAD;
    if (e->nb == 0)
        return MPI_ERR_ARG;
    e->b_epoch++;
    int rc = bar_arrive(e, 0, e->b_epoch, a, b, 0);
    if (rc != MPI_SUCCESS)
        e->broken = 1;
    return rc;
}

/* answer sends the answer to key's request to dest and logs it. The same
 * messages cc_eng_send makes of Go's head and body: a body over inline_max
 * goes apart, from the pinned Go memory, under the entry's token. */
static int answer(cc_eng *e, int dest, int key)
{
    const cc_eng_reply *r = &e->r_tab[key];
    if (e->nserved == e->servedcap) {
        int n = e->servedcap ? 2 * e->servedcap : 16;
        int *s = realloc(e->served, 2 * (size_t)n * sizeof *s);
        if (s == NULL)
            return MPI_ERR_NO_MEM;
        e->served = s;
        e->servedcap = n;
    }
    int sep = r->len > e->inline_max ? r->len : 0;
    int n = CC_ENG_PREFIX + e->head + (sep ? 0 : r->len), cap = 0;
    char *b = getbuf(e, n, &cap);
    if (b == NULL)
        return MPI_ERR_NO_MEM;
    put32(b, CC_ENG_USER);
    put32(b + 4, sep);
    memcpy(b + CC_ENG_PREFIX, e->r_head, (size_t)e->head);
    put32(b + CC_ENG_PREFIX + e->r_key_off, key);
    if (!sep && r->len > 0)
        memcpy(b + CC_ENG_PREFIX + e->head, r->body, (size_t)r->len);
    int rc = post(e, dest, e->tag, b, n, cap, -1);
    if (rc != MPI_SUCCESS) {
        free(b);
        return rc;
    }
    if (sep) {
        rc = post(e, dest, e->tag + 1, (char *)r->body, r->len, 0, r->tok);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    e->served[2 * e->nserved] = key;
    e->served[2 * e->nserved + 1] = dest;
    e->nserved++;
    return MPI_SUCCESS;
}

/* request_key returns the key of message m (count bytes) if the engine
 * answers it, else -1. */
static int request_key(const cc_eng *e, const char *m, int count)
{
    if (e->r_req < 0 || count != CC_ENG_PREFIX + e->head || get32(m + 4) != 0 ||
        (unsigned char)m[CC_ENG_PREFIX + e->r_kind_off] != e->r_req)
        return -1;
    int key = get32(m + CC_ENG_PREFIX + e->r_key_off);
    if (key < 0 || key >= e->r_n || !e->r_tab[key].on)
        return -1;
    return key;
}

int cc_eng_flush(cc_eng *e, const char *batch, int blen)
{
    if (cc_wrong_thread())
        return CC_ERR_WRONG_THREAD;
    for (int off = 0; off + 8 + e->head <= blen;) {
        int dest = get32(batch + off), n = get32(batch + off + 4);
        const char *head = batch + off + 8;
        int rc = cc_eng_send(e, dest, head, head + e->head, n, n, -1);
        if (rc != MPI_SUCCESS)
            return rc;
        off += 8 + e->head + n;
    }
    return MPI_SUCCESS;
}

/* repost posts slot i again once the engine has read its message. */
static int repost(cc_eng *e, int i)
{
    return MPI_Irecv(e->rslot[i], e->rcap, MPI_BYTE, MPI_ANY_SOURCE, e->tag, e->comm, &e->rreq[i]);
}

/* arm posts the ring's receives on first use and posts again the slot
 * whose message the last event handed to Go (it becomes the newest). */
static int arm(cc_eng *e)
{
    if (!e->armed) {
        for (int i = 0; i < CC_ENG_RING; i++) {
            int rc = repost(e, i);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        e->armed = 1;
        e->rhead = 0;
        return MPI_SUCCESS;
    }
    if (e->held >= 0) {
        int i = e->held;
        e->held = -1;
        return repost(e, i);
    }
    return MPI_SUCCESS;
}

/* eng_enter is the prologue of the calls that wait (cc_eng_next,
 * cc_eng_dissemination): a zero event, the thread check, then the caller's
 * batch sent. A nonzero rc is returned as is. Inline: cc_eng_next is the
 * engine's hot path, so the prologue costs no call of its own. */
static inline cc_eng_event eng_enter(cc_eng *e, const char *batch, int blen)
{
    cc_eng_event ev;
    memset(&ev, 0, sizeof ev);
    if (cc_wrong_thread()) {
        ev.rc = CC_ERR_WRONG_THREAD;
        return ev;
    }
    ev.rc = cc_eng_flush(e, batch, blen);
    if (ev.rc == MPI_SUCCESS)
        ev.rc = arm(e);
    return ev;
}

cc_eng_event cc_eng_next(cc_eng *e, const char *batch, int blen, int block, long long *done, int maxdone)
{
    cc_eng_event ev = eng_enter(e, batch, blen);
    if (ev.rc != MPI_SUCCESS)
        return ev;
    int was_done = e->completions;
    for (;;) {
        /* Completing sends only recycles their buffers and reports Go's
         * bodies; done for every message it is a Testsome between a
         * request's arrival and the next wait (an answer's, at the home),
         * so it waits until CC_ENG_REAP sends are outstanding. */
        if (e->ns >= CC_ENG_REAP) {
            ev.rc = reap(e, 0);
            if (ev.rc != MPI_SUCCESS)
                goto broken;
        }
        int flag = 0, slot = e->rhead;
        MPI_Status st;
        if (block && !cc_eng_yield_idle) /* the library polls; sends complete inside it */
            ev.rc = MPI_Wait(&e->rreq[slot], &st), flag = 1;
        else
            ev.rc = MPI_Test(&e->rreq[slot], &flag, &st);
        if (ev.rc != MPI_SUCCESS)
            goto broken;
        if (!flag) {
            if (!block)
                break;
            /* More ranks than cores under an MPI that spins without
             * yielding (MPICH): a blocking wait would hold the core the
             * sender needs, so poll and give the processor away. */
            sched_yield();
            continue;
        }
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        char *m = e->rslot[slot];
        e->rhead = (slot + 1) % CC_ENG_RING;
        int kind = count >= CC_ENG_PREFIX ? get32(m) : 0;
        if (kind == CC_ENG_USER) {
            int key = request_key(e, m, count);
            if (key >= 0) {
                /* Answered here; the slot is read, post it again. */
                ev.rc = answer(e, st.MPI_SOURCE, key);
                if (ev.rc == MPI_SUCCESS)
                    ev.rc = repost(e, slot);
                if (ev.rc != MPI_SUCCESS)
                    goto broken;
                continue;
            }
        }
        if (kind == CC_ENG_USER && count >= CC_ENG_PREFIX + e->head) {
            ev.what = 1;
            e->rbuf = m;
            e->held = slot; /* Go reads it; posted again at the next call */
            ev.source = st.MPI_SOURCE;
            ev.count = count;
            ev.sep = get32(m + 4);
            break;
        }
        if (kind == CC_ENG_DIS && count == CC_ENG_BARMSG) {
            int round = get32(m + 8), epoch = get32(m + 12);
            if (round < 0 || round >= e->d_rounds || epoch < e->d_done + 1 || epoch > e->d_done + 2) {
                ev.rc = MPI_ERR_INTERN;
                ev.source = st.MPI_SOURCE;
                goto broken;
            }
            e->d_cnt[epoch & 1][round]++;
            ev.rc = repost(e, slot);
            if (ev.rc != MPI_SUCCESS)
                goto broken;
            if (epoch == e->d_epoch && e->d_done != e->d_epoch) {
                ev.rc = dis_advance(e);
                if (ev.rc != MPI_SUCCESS)
                    goto broken;
            }
            if (e->completions != was_done) {
                ev.what = 2;
                break;
            }
            continue;
        }
        if ((kind == CC_ENG_ARRIVE || kind == CC_ENG_RELEASE || kind == CC_ENG_EARLY) && count == CC_ENG_BARMSG) {
            int i = bar_index(e, get32(m + 8));
            int epoch = get32(m + 12);
            if (i < 0 || epoch < e->b_done + 1 || epoch > e->b_done + 2) {
                ev.rc = MPI_ERR_INTERN; /* a barrier message this rank cannot place */
                ev.source = st.MPI_SOURCE;
                goto broken;
            }
            long long a = get64(m + 16), b = get64(m + 24);
            ev.rc = repost(e, slot);
            if (ev.rc != MPI_SUCCESS)
                goto broken;
            if (kind == CC_ENG_ARRIVE)
                ev.rc = bar_arrive(e, i, epoch, a, b, 1);
            else if (e->b_pid[i] < 0 || e->b_prank[i] == e->me)
                ev.rc = MPI_ERR_INTERN; /* a release for a node whose parent is here */
            else
                ev.rc = bar_released(e, i, epoch, a, b, kind == CC_ENG_EARLY);
            if (ev.rc != MPI_SUCCESS)
                goto broken;
            if (e->completions != was_done) {
                ev.what = 2;
                break;
            }
            continue;
        }
        ev.rc = MPI_ERR_INTERN; /* not a message of this engine */
        ev.source = st.MPI_SOURCE;
        ev.count = count;
        goto broken;
    }
    while (ev.ndone < maxdone && e->nct > 0)
        done[ev.ndone++] = e->ct[--e->nct];
    return ev;
broken:
    e->broken = 1;
    return ev;
}

cc_eng_event cc_eng_barrier(cc_eng *e, const char *batch, int blen, long long a, long long b, long long *done, int maxdone)
{
    cc_eng_event ev;
    memset(&ev, 0, sizeof ev);
    ev.rc = cc_eng_flush(e, batch, blen);
    if (ev.rc != MPI_SUCCESS)
        return ev;
    ev.rc = cc_eng_barrier_start(e, a, b);
    if (ev.rc != MPI_SUCCESS)
        return ev;
    if (e->b_done == e->b_epoch) {
        ev.what = 2; /* complete already (a one-rank tree) */
        return ev;
    }
    return cc_eng_next(e, NULL, 0, 1, done, maxdone);
}

cc_eng_event cc_eng_dissemination(cc_eng *e, const char *batch, int blen, long long *done, int maxdone)
{
    cc_eng_event ev = eng_enter(e, batch, blen);
    if (ev.rc != MPI_SUCCESS)
        return ev;
    e->d_epoch++;
    e->d_round = 0;
    e->d_sent = 0;
    ev.rc = dis_advance(e);
    if (ev.rc != MPI_SUCCESS) {
        e->broken = 1;
        return ev;
    }
    if (e->d_done == e->d_epoch) {
        ev.what = 2; /* one rank: no rounds */
        return ev;
    }
    return cc_eng_next(e, NULL, 0, 1, done, maxdone);
}

int cc_eng_recv_body(cc_eng *e, int source, char *buf, int len)
{
    if (cc_wrong_thread())
        return CC_ERR_WRONG_THREAD;
    MPI_Status st;
    int rc = MPI_Recv(buf, len, MPI_BYTE, source, e->tag + 1, e->comm, &st);
    if (rc != MPI_SUCCESS)
        e->broken = 1;
    return rc;
}

/* completed reaps the finished sends (all of them, waiting, when wait)
 * and hands their tokens to Go, at most maxdone a call. */
static cc_eng_event completed(cc_eng *e, int wait, long long *done, int maxdone)
{
    cc_eng_event ev;
    memset(&ev, 0, sizeof ev);
    if (cc_wrong_thread()) {
        ev.rc = CC_ERR_WRONG_THREAD;
        return ev;
    }
    ev.rc = reap(e, wait);
    if (ev.rc != MPI_SUCCESS) {
        e->broken = 1;
        return ev;
    }
    while (ev.ndone < maxdone && e->nct > 0)
        done[ev.ndone++] = e->ct[--e->nct];
    return ev;
}

cc_eng_event cc_eng_drain(cc_eng *e, long long *done, int maxdone)
{
    return completed(e, 1, done, maxdone);
}

cc_eng_event cc_eng_reap(cc_eng *e, long long *done, int maxdone)
{
    return completed(e, 0, done, maxdone);
}
