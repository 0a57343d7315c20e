/*
 * engine.h: a message protocol's transport in C (package native, engine.go;
 * the interface is mpi.EngineKernel). A library that serves other ranks'
 * requests while it waits (divalib) spends most of a message in the Go
 * request path: Isend, Iprobe, Recv and Test are a cgo crossing each, and a
 * Go polling loop yields its locked OS thread. The engine does the polling,
 * receiving, sending, completion of sends and a combining-tree barrier
 * here, and returns to Go once per protocol message.
 *
 * Wire format, every message on the engine's tag of its communicator but
 * separate bodies, which go on the next tag:
 *   prefix (CC_ENG_PREFIX bytes): kind (int32), sep (int32)
 *   kind CC_ENG_USER: head (head bytes), then the body inline; sep > 0 says
 *     that the body, sep bytes, follows as the next message from the same
 *     sender on tag + 1 (non-overtaking keeps the bodies of one sender in
 *     the order of their heads)
 *   kind CC_ENG_ARRIVE / CC_ENG_RELEASE / CC_ENG_EARLY: node (int32), epoch
 *     (int32), a, b (int64): the combining-tree barrier. A root with one
 *     child on another rank (and others here) sends that child its release
 *     as soon as all the others are in, if it has not arrived yet (EARLY,
 *     with the others' sums, where RELEASE carries the total), and
 *     completes on the child's arrival; the child completes when its own
 *     subtree is in too, with the sums of both. The same messages, one
 *     arrival and one release per edge, but at 2 ranks the two cross
 *     instead of following each other: one message latency instead of two;
 *   kind CC_ENG_DIS: round (int32), epoch (int32), two unused int64: the
 *     dissemination barrier (round k goes to rank me + 2^k mod P).
 *
 * Receiving: every message on the tag fits rcap bytes (prefix, head, an
 * inline body; or a barrier message), so the engine keeps CC_ENG_RING
 * receives of rcap bytes posted (MPI_ANY_SOURCE) and waits on the oldest,
 * as the C kernels pre-post their receives: a message that finds its
 * receive posted is copied once, where MPI_Iprobe then MPI_Recv matched it
 * twice and copied it out of the unexpected queue (nearly twice the time of
 * an 8-byte read on shared memory, scripts/bench_dsm_vs_c.sh).
 * Receives match in the order they were posted, so taking the oldest keeps
 * MPI's order. The slot of a message handed to Go is posted again at the
 * engine's next call, once Go has read it.
 *
 * Answers (mpi.EngineReply, cc_eng_replies): a USER message without a body
 * whose head has byte r_req at r_kind_off is a request; if the table has a
 * body for its key (int32 at r_key_off), the engine sends the answer (the
 * head template with the key, and the body) at once, logs (key, source) in
 * served for Go, and goes on waiting. Go writes the table's entries itself
 * (no crossing): the body is pinned Go memory, tok the token reported when
 * a body sent as a message of its own has left.
 */
#ifndef COMMCOST_NATIVE_ENGINE_H
#define COMMCOST_NATIVE_ENGINE_H

extern int cc_eng_yield_idle;

#include "shim.h"

#define CC_ENG_PREFIX 8
#define CC_ENG_RING 4
#define CC_ENG_REAP 16
enum { CC_ENG_USER = 1, CC_ENG_ARRIVE = 2, CC_ENG_RELEASE = 3, CC_ENG_DIS = 4, CC_ENG_EARLY = 5 };
#define CC_ENG_BARMSG (CC_ENG_PREFIX + 24)

typedef struct {
    const char *body; /* pinned Go memory (NULL for no bytes) */
    int len;
    int on; /* 0: requests with this key go to Go */
    long long tok;
} cc_eng_reply;

typedef struct {
    MPI_Comm comm;
    int tag, head, me, inline_max;
    /* rbuf: the message handed to Go by the last event (prefix, head,
     * inline body), one of the ring's slots of rcap bytes each */
    char *rbuf;
    int rcap;
    char *rslot[CC_ENG_RING];
    MPI_Request rreq[CC_ENG_RING];
    int rhead;  /* oldest posted receive */
    int held;   /* slot handed to Go, posted again at the next call; -1 none */
    int armed;  /* the ring's receives are posted */
    /* outstanding sends; token >= 0 names a body in Go memory, pinned by
     * Go until the engine reports the token complete */
    int ns, scap;
    MPI_Request *sreq;
    char **sbuf; /* C buffer of the slot (NULL for a Go body) */
    long long *stok;
    int *sidx; /* scratch for MPI_Testsome */
    /* C send buffers free for reuse, with their capacities */
    int nfree, freecap;
    char **freebuf;
    int *freelen;
    int *sbuflen;
    /* completed tokens not yet reported */
    int nct, ctcap;
    long long *ct;
    /* barrier: this rank's nodes, leaf first */
    int nb;
    int *b_id, *b_need, *b_pid, *b_prank, *b_koff, *b_kid, *b_krank;
    int *b_cnt[2];
    long long *b_sum[2];
    /* early release (see above), by epoch parity: b_er is the root's
     * index if it releases early, else -1; b_rgot, its remote child has
     * arrived; b_esent, that child was released early. Per node whose
     * parent is on another rank: b_up, it arrived (sums b_us) and waits
     * for its release; b_eg, an early release came first (sums b_es). */
    int b_er, b_rgot[2], b_esent[2];
    int *b_up[2], *b_eg[2];
    long long *b_us[2], *b_es[2];
    int b_epoch;     /* epoch of the barrier this rank entered last */
    int b_done;      /* epoch completed last at this rank */
    long long b_res[2];
    /* dissemination barrier over the p ranks */
    int p, d_rounds, d_epoch, d_done, d_round, d_sent;
    int d_cnt[2][32];
    int completions; /* barriers of either kind completed at this rank */
    /* answers: r_req < 0 when the engine answers nothing */
    int r_req, r_kind_off, r_key_off;
    char *r_head;
    cc_eng_reply *r_tab;
    int r_n;
    int *served; /* key, source pairs since Go last read them */
    int nserved, servedcap;
    int broken;      /* an error left MPI holding buffers: never free them */
} cc_eng;

typedef struct {
    int rc;
    int what;   /* 0: nothing, 1: a user message, 2: the barrier completed */
    int source;
    int count;  /* bytes of the message (prefix included) */
    int sep;    /* bytes of the body that follows in its own message */
    int ndone;  /* tokens written to the caller's array */
} cc_eng_event;

cc_eng *cc_eng_new(MPI_Comm comm, int tag, int head, int inline_max, int me, int p, int nb,
                   const int *id, const int *need, const int *pid, const int *prank,
                   const int *koff, const int *kid, const int *krank);
/* Answer requests (see above) with head template head (e->head bytes). */
int cc_eng_replies(cc_eng *e, int kind_off, int req, int key_off, const char *head);
/* Make the table hold keys 0..n-1 (new entries off). */
int cc_eng_reply_grow(cc_eng *e, int n);
/* Cancel the posted receives (call on the engine's thread, nothing in
 * flight) and free the engine. */
void cc_eng_free(cc_eng *e);
/* Send head (e->head bytes) and body; bodies over inline_max go in a
 * message of their own from the caller's (pinned) memory, named by token. */
int cc_eng_send(cc_eng *e, int dest, const char *head, const char *body, int blen, int inline_max,
                long long token);
/* Every call below that takes (batch, blen) first sends the messages queued
 * in batch: records of dest (int32), body length (int32), head, body. */
int cc_eng_flush(cc_eng *e, const char *batch, int blen);
cc_eng_event cc_eng_next(cc_eng *e, const char *batch, int blen, int block, long long *done, int maxdone);
/* Receive the separate body announced by the last event. */
int cc_eng_recv_body(cc_eng *e, int source, char *buf, int len);
int cc_eng_barrier_start(cc_eng *e, long long a, long long b);
/* Start a barrier and wait as cc_eng_next(block) does: one crossing for a
 * barrier that no user message interrupts. */
cc_eng_event cc_eng_barrier(cc_eng *e, const char *batch, int blen, long long a, long long b, long long *done, int maxdone);
/* The same for the dissemination barrier (no sums). */
cc_eng_event cc_eng_dissemination(cc_eng *e, const char *batch, int blen, long long *done, int maxdone);
/* Wait for every send; returns the number of tokens written (call until 0). */
cc_eng_event cc_eng_drain(cc_eng *e, long long *done, int maxdone);
/* Complete the sends that have finished, without waiting (a Testsome);
 * returns their tokens as cc_eng_drain does (call until fewer than maxdone). */
cc_eng_event cc_eng_reap(cc_eng *e, long long *done, int maxdone);

#endif
