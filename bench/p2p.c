/* p2p: bandwidth and latency between every pair of ranks, one pair at a time with the others
 * idle, and all ranks at once; over the collectives library's send/recv (NCCL, or MPI), and
 * inside a node also as direct copies into the peer's memory through IPC handles and as copies
 * staged through shared host memory. A size sweep follows for chosen pairs, and the summary
 * prints rank x rank matrices and names the slowest pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "log.h"
#include "p2p_matrix.h"
#include "p2p_sample.h"
#include "registry.h"
#include "sweep.h"

static const struct fb_sweep sweep_defaults = {4, 64u << 20, 4};
enum { MATRIX_BYTES = 64u << 20, LATENCY_BYTES = 8 };

/* Message tags of the IPC handshakes; collectives never use tags. */
enum { TAG_HANDLE = 0x7f01, TAG_READY, TAG_DONE, TAG_CLOSED };

struct p2p_state {
    const struct fb_ctx *ctx;
    struct fb_stream *stream;
    enum fb_p2p_kind kind;
    enum fb_p2p_via via;
    size_t bytes;
    int to, from;       /* whom this rank sends to and receives from; -1 for none */
    bool ping_first;    /* latency over send/recv: this rank sends first */
    bool exchanged;     /* handles were swapped: teardown must say when it is done with them */
    void *send, *recv;  /* own buffers: recv is where `from` puts its data */
    void *peer_recv;    /* ipc: `to`'s recv buffer, mapped here */
    void *stage_in;     /* staged: own shared pinned buffer that `from` fills */
    void *peer_stage;   /* staged: `to`'s stage_in, mapped here */
    struct fb_pattern mine, theirs;
};

static int peer_or_null(int rank) { return rank >= 0 ? rank : MPI_PROC_NULL; }

/* The roles of `rank` in case c. */
static void roles(const struct fb_case *c, int rank, int *to, int *from, bool *ping_first)
{
    struct fb_case one;

    *to = *from = -1;
    *ping_first = false;
    /* Disjoint pairs at once (locate's rounds): both ways with this rank's partner. */
    if (c->partners) {
        *to = *from = c->partners[rank];
        return;
    }
    /* A pair repeated on every node (p2p_sample.h): this rank's pair is its own node's. */
    if (c->pair && c->stride > 0) {
        int base = rank - rank % c->stride;
        one = *c;
        one.active += base;
        one.peer += base;
        one.stride = 0;
        c = &one;
    }
    switch ((enum fb_p2p_kind)c->variant) {
    case FB_P2P_ALL_PAIRS:
        *to = (rank + c->shift) % c->group;
        *from = (rank - c->shift + c->group) % c->group;
        return;
    case FB_P2P_MATRIX_BIDIR:
    case FB_P2P_SWEEP_BIDIR:
        *to = *from = rank == c->active ? c->peer : c->active;
        return;
    case FB_P2P_MATRIX_LATENCY:
        if (c->aux != FB_P2P_VIA_IPC) { /* a ping-pong; over IPC, one-way copies */
            *to = *from = rank == c->active ? c->peer : c->active;
            *ping_first = rank == c->active;
            return;
        }
        *to = rank == c->active ? c->peer : -1;
        *from = rank == c->active ? -1 : c->active;
        return;
    case FB_P2P_MATRIX_UNI:
    case FB_P2P_SWEEP_UNI:
        *to = rank == c->active ? c->peer : -1;
        *from = rank == c->active ? -1 : c->active;
        return;
    case FB_P2P_KIND_COUNT: return;
    }
}

/* ---- plan ---- */

struct plan {
    const struct fb_ctx *ctx;
    struct fb_case *cases;
    size_t n, cap;
    uint64_t hash; /* of the sampled pairs: every rank must plan the same */
};

static struct fb_case *add_case(struct plan *p, enum fb_p2p_via via, enum fb_p2p_kind kind,
                                size_t bytes)
{
    struct fb_case *c;

    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct fb_case *grown = realloc(p->cases, cap * sizeof *grown);
        if (!grown)
            return NULL;
        p->cases = grown;
        p->cap = cap;
    }
    c = &p->cases[p->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", fb_p2p_matrix_kind_name[kind]);
    if (via == FB_P2P_VIA_COLL)
        snprintf(c->transport, sizeof c->transport, "%s",
                 p->ctx->s->coll->transport(p->ctx->world_coll));
    else
        snprintf(c->transport, sizeof c->transport, "%s", fb_p2p_matrix_via_name[via]);
    c->bytes = bytes;
    c->variant = kind;
    c->aux = via;
    c->report = kind == FB_P2P_MATRIX_LATENCY ? FB_REPORT_LATENCY : FB_REPORT_BANDWIDTH;
    /* A ping-pong is two one-way trips; an IPC latency point is one copy. */
    c->legs = via == FB_P2P_VIA_IPC ? 1 : 2;
    c->detail = kind != FB_P2P_SWEEP_UNI && kind != FB_P2P_SWEEP_BIDIR; /* shown as matrices */
    return c;
}

static bool add_pair(struct plan *p, enum fb_p2p_via via, enum fb_p2p_kind kind, size_t bytes,
                     int a, int b)
{
    struct fb_case *c = add_case(p, via, kind, bytes);

    if (!c)
        return false;
    c->active = a;
    c->pair = true;
    c->peer = b;
    c->stride = 0;
    /* Both directions at once: the total and each direction's own figure. */
    c->per_rank = kind == FB_P2P_MATRIX_BIDIR || kind == FB_P2P_SWEEP_BIDIR;
    return true;
}

/* A matrix point: one pair, or a pair of local ranks on every node at once. */
static bool add_point(struct plan *p, enum fb_p2p_via via, enum fb_p2p_kind kind, size_t bytes,
                      const struct fb_p2p_point *pt)
{
    if (!add_pair(p, via, kind, bytes, pt->a, pt->b))
        return false;
    p->cases[p->n - 1].stride = pt->stride;
    return true;
}

static bool plan_via(struct plan *p, enum fb_p2p_via via)
{
    const struct fb_ctx *ctx = p->ctx;
    const struct fb_options *o = ctx->opt;
    size_t big = o->matrix_bytes ? o->matrix_bytes : MATRIX_BYTES;
    size_t small = o->latency_bytes ? o->latency_bytes : LATENCY_BYTES;
    size_t nsizes = fb_sweep_sizes(o, sweep_defaults, NULL);
    size_t *sizes = malloc(nsizes * sizeof *sizes);
    int n = ctx->ranks, sweep_pairs[FB_MAX_SIZES + 1][2], npairs = 0;
    bool ok = sizes != NULL;
    bool ipc = via != FB_P2P_VIA_COLL;
    struct fb_p2p_sample smp;

    /* IPC reaches only the processes of one node. Above FB_P2P_SAMPLE_THRESHOLD ranks (or with
     * --matrix sampled) a sample of the pairs: p2p_sample.h. */
#define SAME_NODE(a, b) (ctx->node_of[(a)] == ctx->node_of[(b)])
    ok = ok && fb_p2p_sample_plan(n, ctx->node_of, fb_p2p_sample_mode_parse(o->matrix), ipc,
                                  &smp) == FB_OK;
    for (size_t i = 0; ok && i < smp.nuni; i++)
        ok = add_point(p, via, FB_P2P_MATRIX_UNI, big, &smp.uni[i]);
    for (size_t i = 0; ok && i < smp.nsym; i++)
        ok = add_point(p, via, FB_P2P_MATRIX_BIDIR, big, &smp.sym[i]);
    for (size_t i = 0; ok && i < smp.nsym && via != FB_P2P_VIA_STAGED; i++)
        ok = add_point(p, via, FB_P2P_MATRIX_LATENCY, small, &smp.sym[i]);
    for (size_t i = 0; ok && i < smp.nshifts; i++) {
        struct fb_case *c;
        if (!(c = add_case(p, via, FB_P2P_ALL_PAIRS, big))) {
            ok = false;
            break;
        }
        c->active = FB_ALL_RANKS;
        c->shift = smp.shifts[i];
        c->per_rank = true;
        /* one point per shift: the name keeps their rows apart */
        snprintf(c->name, sizeof c->name, "%s+%d", fb_p2p_matrix_kind_name[FB_P2P_ALL_PAIRS],
                 c->shift);
    }
    if (ok && p->ctx->s->world.rank == 0 && smp.sampled)
        fb_info("p2p over %s: a sample of the pairs (%d ranks on %d nodes): %zu of %lld one-way "
                "cells (every pair inside each node, %s), %zu of %lld unordered pairs both ways",
                via == FB_P2P_VIA_COLL ? p->ctx->s->coll->transport(p->ctx->world_coll)
                                    : fb_p2p_matrix_via_name[via],
                n, smp.nodes, smp.cells_uni,
                ipc ? (long long)smp.cells_uni : (long long)n * (n - 1),
                ipc ? "IPC stays inside nodes" : "a ring across the nodes and random pairs",
                smp.cells_sym, ipc ? (long long)smp.cells_sym : (long long)n * (n - 1) / 2);
    if (ok)
        p->hash = p->hash * 31 + fb_p2p_sample_hash(&smp);
    fb_p2p_sample_release(&smp);

    /* The sweep: the pairs asked for, or 0 -> 1 and 0 -> the first rank of another node. */
    if (o->npairs) {
        for (size_t i = 0; i < o->npairs; i++) {
            sweep_pairs[npairs][0] = o->pairs[i][0];
            sweep_pairs[npairs++][1] = o->pairs[i][1];
        }
    } else {
        sweep_pairs[npairs][0] = 0;
        sweep_pairs[npairs++][1] = 1;
        for (int b = 2; b < n; b++)
            if (!SAME_NODE(0, b)) {
                sweep_pairs[npairs][0] = 0;
                sweep_pairs[npairs++][1] = b;
                break;
            }
    }
    if (ok)
        fb_sweep_sizes(o, sweep_defaults, sizes);
    for (int i = 0; ok && i < npairs; i++) {
        int a = sweep_pairs[i][0], b = sweep_pairs[i][1];
        if (ipc && !SAME_NODE(a, b))
            continue;
        for (size_t k = 0; ok && k < nsizes; k++)
            ok = add_pair(p, via, FB_P2P_SWEEP_UNI, sizes[k], a, b);
        for (size_t k = 0; ok && k < nsizes; k++)
            ok = add_pair(p, via, FB_P2P_SWEEP_BIDIR, sizes[k], a, b);
    }
#undef SAME_NODE
    free(sizes);
    return ok;
}

static fb_status p2p_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    struct plan p = {.ctx = ctx};
    bool ok;

    /* --pairs was checked against the job's size before the run began. */
    ok = plan_via(&p, FB_P2P_VIA_COLL);
    if (ok && ctx->be->ipc_export)
        ok = plan_via(&p, FB_P2P_VIA_IPC) && plan_via(&p, FB_P2P_VIA_STAGED);
    if (!ok) {
        free(p.cases);
        return FB_ERR_NOMEM;
    }
    /* The plan is computed on every rank from the same inputs; a rank that planned other pairs
     * would wait in a pair nobody else runs. Compared before anything is measured. */
    {
        uint64_t lo = 0, hi = 0;
        MPI_Allreduce(&p.hash, &lo, 1, MPI_UINT64_T, MPI_MIN, ctx->s->world.comm);
        MPI_Allreduce(&p.hash, &hi, 1, MPI_UINT64_T, MPI_MAX, ctx->s->world.comm);
        if (lo != hi) {
            if (ctx->s->world.rank == 0)
                fb_error("p2p: the ranks planned different pairs (plan checksums differ)");
            free(p.cases);
            return FB_ERR_MPI;
        }
    }
    *out = p.cases;
    *n = p.n;
    return FB_OK;
}

/* ---- setup and teardown ---- */

/* Swaps handles of the buffers peers write into: mine goes to `from` (who writes into it),
 * `to`'s comes back. Always called by both sides, even after a failed allocation, so that
 * neither waits forever; the status travels with the handle. */
static fb_status swap_handles(struct p2p_state *s, enum fb_mem kind, void *own, void **peer)
{
    const struct fb_backend *be = s->ctx->be;
    struct {
        int32_t st;
        struct fb_ipc_handle h;
    } out, in;
    fb_status st = FB_OK;

    memset(&out, 0, sizeof out);
    memset(&in, 0, sizeof in);
    if (s->from >= 0)
        out.st = own ? be->ipc_export(kind, own, &out.h) : FB_ERR_NOMEM;
    MPI_Sendrecv(&out, (int)sizeof out, MPI_BYTE, peer_or_null(s->from), TAG_HANDLE, &in,
                 (int)sizeof in, MPI_BYTE, peer_or_null(s->to), TAG_HANDLE, s->ctx->s->world.comm,
                 MPI_STATUS_IGNORE);
    s->exchanged = true;
    if (out.st != FB_OK)
        return (fb_status)out.st;
    if (s->to >= 0) {
        char why[256] = "";
        /* the partner could not allocate: its failure, which it reports itself */
        if (in.st == FB_ERR_NOMEM)
            return FB_ERR_PEER;
        if (in.st != FB_OK)
            return (fb_status)in.st;
        /* A peer's memory this rank cannot map waives the pair's point (the runner says so):
         * a warning with the reason, not an error line in a run that goes on (issue 29). */
        if ((st = be->ipc_open(kind, &in.h, peer, why, sizeof why)) == FB_ERR_BACKEND)
            fb_warn("p2p: rank %d cannot map rank %d's %s memory, so this pair's %s point is "
                    "waived: %s", s->ctx->s->world.rank, s->to,
                    kind == FB_MEM_SHARED_PINNED ? "pinned" : "device",
                    kind == FB_MEM_SHARED_PINNED ? "staged" : "IPC", why);
    }
    return st;
}

/* The handshakes of IPC copies: this rank's status goes to `a` while `b`'s arrives; returns
 * this rank's own failure, else FB_ERR_PEER where `b` failed (b names its own). Sent even after
 * a failure, so a partner never waits for a message that will not come, and learns that the
 * step failed. */
static fb_status token(MPI_Comm comm, int a, int b, int tag, fb_status mine)
{
    int32_t out = (int32_t)mine, in = FB_OK;

    MPI_Sendrecv(&out, 1, MPI_INT32_T, peer_or_null(a), tag, &in, 1, MPI_INT32_T, peer_or_null(b),
                 tag, comm, MPI_STATUS_IGNORE);
    return mine != FB_OK ? mine : in != FB_OK ? FB_ERR_PEER : FB_OK;
}

static void p2p_teardown(void *p)
{
    struct p2p_state *s = p;
    const struct fb_backend *be;

    if (!s)
        return;
    be = s->ctx->be;
    if (s->peer_recv)
        be->ipc_close(FB_MEM_SHARED_DEVICE, s->peer_recv);
    if (s->peer_stage)
        be->ipc_close(FB_MEM_SHARED_PINNED, s->peer_stage);
    /* Free what a peer mapped only after it has let go of it. */
    if (s->exchanged)
        (void)token(s->ctx->s->world.comm, s->to, s->from, TAG_CLOSED, FB_OK);
    be->free(FB_MEM_DEVICE, s->send);
    be->free(s->via == FB_P2P_VIA_IPC ? FB_MEM_SHARED_DEVICE : FB_MEM_DEVICE, s->recv);
    be->free(FB_MEM_SHARED_PINNED, s->stage_in);
    free(s);
}

/* Setup that failed before the handles could be swapped still swaps a status, so the partner
 * is not left waiting. */
static fb_status swap_failure(MPI_Comm comm, int to, int from, fb_status st)
{
    struct {
        int32_t st;
        struct fb_ipc_handle h;
    } out, in;

    memset(&out, 0, sizeof out);
    out.st = st;
    MPI_Sendrecv(&out, (int)sizeof out, MPI_BYTE, peer_or_null(from), TAG_HANDLE, &in,
                 (int)sizeof in, MPI_BYTE, peer_or_null(to), TAG_HANDLE, comm, MPI_STATUS_IGNORE);
    return st;
}

static fb_status p2p_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                           struct fb_stream *stream, void **state)
{
    struct p2p_state *s = calloc(1, sizeof *s);
    const struct fb_backend *be = ctx->be;
    int rank = ctx->s->world.rank, to, from;
    bool ping_first;
    fb_status st = FB_OK, swapped = FB_OK;

    *state = s;
    roles(c, rank, &to, &from, &ping_first);
    if (!s)
        return c->aux == FB_P2P_VIA_COLL ? FB_ERR_NOMEM
                                       : swap_failure(ctx->s->world.comm, to, from, FB_ERR_NOMEM);
    s->ctx = ctx;
    s->stream = stream;
    s->kind = (enum fb_p2p_kind)c->variant;
    s->via = (enum fb_p2p_via)c->aux;
    s->bytes = c->bytes;
    s->to = to;
    s->from = from;
    s->ping_first = ping_first;
    /* Each sender's data differs, so a message from the wrong rank is caught; every byte is
     * checked. */
    s->mine = (struct fb_pattern){.seed = 100u + (uint32_t)rank, .scale = 1, .offset = 0};
    s->theirs = (struct fb_pattern){.seed = 100u + (uint32_t)s->from, .scale = 1, .offset = 0};

    if (s->to >= 0 && (st = be->alloc(FB_MEM_DEVICE, c->bytes, &s->send)) == FB_OK)
        st = be->fill(s->send, c->bytes, FB_DTYPE_INT8, s->mine, stream);
    if (st == FB_OK && s->from >= 0)
        st = be->alloc(s->via == FB_P2P_VIA_IPC ? FB_MEM_SHARED_DEVICE : FB_MEM_DEVICE, c->bytes,
                       &s->recv);
    if (s->via == FB_P2P_VIA_STAGED && st == FB_OK && s->from >= 0)
        st = be->alloc(FB_MEM_SHARED_PINNED, c->bytes, &s->stage_in);
    if (s->via == FB_P2P_VIA_IPC)
        swapped = swap_handles(s, FB_MEM_SHARED_DEVICE, st == FB_OK ? s->recv : NULL, &s->peer_recv);
    else if (s->via == FB_P2P_VIA_STAGED)
        swapped = swap_handles(s, FB_MEM_SHARED_PINNED, st == FB_OK ? s->stage_in : NULL,
                               &s->peer_stage);
    /* A peer's memory that cannot be mapped here (no peer access between the GPUs, /proc out of
     * reach) waives this pair's IPC point; it does not stop the benchmark. */
    if (st == FB_OK && swapped != FB_OK)
        st = swapped == FB_ERR_NOMEM || swapped == FB_ERR_PEER ? swapped : FB_ERR_UNSUPPORTED;
    if (st == FB_OK)
        st = be->stream_sync(stream);
    return st;
}

/* ---- one iteration ---- */

static fb_status iterate_coll(struct p2p_state *s)
{
    const struct fb_coll *coll = s->ctx->s->coll;
    struct fb_coll_comm *cc = s->ctx->world_coll;
    fb_status st;

    if (s->kind != FB_P2P_MATRIX_LATENCY)
        return coll->sendrecv(cc, s->send, s->to, s->recv, s->from, s->bytes, s->stream);
    /* Ping-pong: the first rank sends then waits for the answer; the other answers. Both legs
     * are made even after a failed one (each still sends or receives, coll.h), so the partner
     * is never left with a message nobody takes; the first failure is returned. */
    fb_status second;
    if (s->ping_first) {
        st = coll->sendrecv(cc, s->send, s->to, NULL, -1, s->bytes, s->stream);
        second = coll->sendrecv(cc, NULL, -1, s->recv, s->from, s->bytes, s->stream);
    } else {
        st = coll->sendrecv(cc, NULL, -1, s->recv, s->from, s->bytes, s->stream);
        second = coll->sendrecv(cc, s->send, s->to, NULL, -1, s->bytes, s->stream);
    }
    return st != FB_OK ? st : second;
}

/* Staged through host memory, as a transport without peer access must: the sender copies into
 * the receiver's shared pinned buffer, says so, the receiver copies it out and says it is free
 * again. Not pipelined: the time is both copies plus two handshakes. */
static fb_status iterate_staged(struct p2p_state *s)
{
    const struct fb_backend *be = s->ctx->be;
    MPI_Comm comm = s->ctx->s->world.comm;
    fb_status st = FB_OK;

    if (s->to >= 0 && (st = be->copy(s->peer_stage, s->send, s->bytes, FB_COPY_D2H, s->stream)) == FB_OK)
        st = be->stream_sync(s->stream);
    st = token(comm, s->to, s->from, TAG_READY, st);
    if (st == FB_OK && s->from >= 0 &&
        (st = be->copy(s->recv, s->stage_in, s->bytes, FB_COPY_H2D, s->stream)) == FB_OK)
        st = be->stream_sync(s->stream);
    return token(comm, s->from, s->to, TAG_DONE, st);
}

static fb_status p2p_iterate(void *p)
{
    struct p2p_state *s = p;

    switch (s->via) {
    case FB_P2P_VIA_COLL: return iterate_coll(s);
    case FB_P2P_VIA_IPC: {
        /* A direct copy into the peer's memory; the receiver has nothing to do. Latency too is
         * back-to-back copies, the batch timed between two events and waited for once, as the
         * NCCL and MPI cells beside it are: a wait per copy put a host round trip (launch,
         * completion seen by the host) in this cell alone (issue 29). */
        if (s->to >= 0)
            return s->ctx->be->copy(s->peer_recv, s->send, s->bytes, FB_COPY_PEER, s->stream);
        return FB_OK;
    }
    case FB_P2P_VIA_STAGED: return iterate_staged(s);
    case FB_P2P_VIA_COUNT: break;
    }
    return FB_ERR_USAGE;
}

static fb_status p2p_verify(void *p, size_t *wrong)
{
    struct p2p_state *s = p;
    const struct fb_backend *be = s->ctx->be;
    MPI_Comm comm = s->ctx->s->world.comm;
    const struct fb_pattern poison = {.seed = 0, .scale = 0, .offset = -77};
    fb_status st = FB_OK;

    *wrong = 0;
    /* Poison what arrives, tell the writer, let it write once, and hear that it has; the
     * handshakes carry failures across, so no side waits on one that gave up. */
    if (s->from >= 0 && (st = be->fill(s->recv, s->bytes, FB_DTYPE_INT8, poison, s->stream)) == FB_OK)
        st = be->stream_sync(s->stream);
    /* Every step runs whatever happened before it, so all ranks exchange the same messages. */
    st = token(comm, s->from, s->to, TAG_READY, st);
    {
        fb_status it = p2p_iterate(s);
        if (it == FB_OK)
            it = be->stream_sync(s->stream);
        st = st != FB_OK ? st : it;
    }
    st = token(comm, s->to, s->from, TAG_DONE, st);
    if (st == FB_OK && s->from >= 0)
        st = be->check(s->recv, s->bytes, FB_DTYPE_INT8, s->theirs, wrong, s->stream);
    return st;
}

const struct fb_bench fb_bench_p2p = {
    .name = "p2p",
    .summary = "bandwidth and latency between every pair of ranks (send/recv, IPC, staged), "
               "matrices and a size sweep",
    .needs = FB_NEEDS_COLL | FB_NEEDS_LINKS,
    .min_ranks = 2,
    .plan = p2p_plan,
    .setup = p2p_setup,
    .iterate = p2p_iterate,
    .verify = p2p_verify,
    .teardown = p2p_teardown,
    .summarize = fb_p2p_matrix_summarize,
};
