/* locate's benchmarks: what bench/locate.h lists. Each point measures through the hooks of p2p
 * (pairs both ways), h2d (copies) or its own (the node's all-reduce, the compute-free loop), so
 * the runner times them all; the test-only slowdown (FB_TEST_LOCATE_SLOW) sleeps after the work
 * a culprit does. */
#define _POSIX_C_SOURCE 200809L
#include "locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "compute.h"
#include "log.h"
#include "p2p_matrix.h"
#include "registry.h"

enum { DEFAULT_BYTES = 4u << 20, LOOP_OPS = 50000, LOOP_MIN_ITERS = 300 };
/* the test-only slowdown's least sleep per transfer: more than the noise of this machine's
 * oversubscribed ranks, whose transfers of 256 KiB vary widely; per loop (judged as a trial's
 * mean over 300 or more), 9 times the loop, 2 ms at least */
enum { SLOW_MIN_US = 5000, SLOW_MIN_LOOP_US = 2000 };
enum { L_H2D, L_P2P, L_ALLREDUCE, L_COMPUTE, L_PAIRS, L_LOOP };

fb_status fb_locate_test_slow(char *kind, int *a, int *b)
{
    const char *t = getenv("FB_TEST_LOCATE_SLOW");
    int n = 0;

    *kind = 0;
    *a = *b = -1;
    if (!t || !*t)
        return FB_OK;
    if (sscanf(t, "node:%d%n", a, &n) == 1 && !t[n] && *a >= 0)
        *kind = 'n';
    else if (sscanf(t, "compute:%d%n", a, &n) == 1 && !t[n] && *a >= 0)
        *kind = 'c';
    else if (sscanf(t, "link:%d-%d%n", a, b, &n) == 2 && !t[n] && *a >= 0 && *b >= 0)
        *kind = 'l';
    else if (sscanf(t, "rank:%d%n", a, &n) == 1 && !t[n] && *a >= 0)
        *kind = 'r';
    else {
        fb_error("FB_TEST_LOCATE_SLOW: '%s' is not node:N, compute:N, link:A-B or rank:R", t);
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

struct loc_state {
    const struct fb_ctx *ctx;
    const struct fb_bench *inner; /* p2p or h2d, or NULL for the own hooks */
    void *in;
    struct fb_stream *stream;
    struct fb_case inner_case; /* compute's: its hooks keep a pointer to their case */
    int variant;
    bool slow; /* FB_TEST_LOCATE_SLOW names this rank's transfers or loop */
    /* the node's all-reduce */
    MPI_Comm node;
    struct fb_coll_comm *cc;
    void *send, *recv;
    size_t count;
    struct fb_pattern mine, sum;
};

static size_t msg_bytes(const struct fb_ctx *ctx)
{
    return ctx->opt->matrix_bytes ? ctx->opt->matrix_bytes : DEFAULT_BYTES;
}

static struct fb_case *add(struct fb_case **v, size_t *n, size_t cap, const char *name,
                           const char *transport, int variant, size_t bytes)
{
    struct fb_case *c;

    if (*n >= cap)
        return NULL;
    c = &(*v)[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->transport, sizeof c->transport, "%s", transport);
    c->bytes = bytes;
    c->active = FB_ALL_RANKS;
    c->per_rank = true;
    c->detail = true;
    c->report = FB_REPORT_BANDWIDTH;
    c->variant = variant;
    return c;
}

static fb_status node_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    size_t cap = 3 + 2 * ctx->opt->npairings;
    struct fb_case *v = calloc(cap, sizeof *v);
    const char *coll = ctx->s->coll->transport(ctx->world_coll);
    int most = ctx->s->world.local_size;
    struct fb_case *c;

    if (!v)
        return FB_ERR_NOMEM;
    *n = 0;
    add(&v, n, cap, "node_h2d", ctx->be->on_cpu ? "memcpy" : "cudaMemcpyAsync", L_H2D,
        msg_bytes(ctx));
    for (size_t i = 0; i < ctx->opt->npairings; i++) {
        c = add(&v, n, cap, ctx->opt->pairings[i].name, coll, L_P2P, msg_bytes(ctx));
        c->partners = ctx->opt->pairings[i].partner;
        c->aux = FB_P2P_VIA_COLL;
        if (!ctx->be->on_cpu && ctx->be->ipc_export) { /* CUDA IPC inside the node */
            c = add(&v, n, cap, ctx->opt->pairings[i].name, "ipc", L_P2P, msg_bytes(ctx));
            c->partners = ctx->opt->pairings[i].partner;
            c->aux = FB_P2P_VIA_IPC;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, ctx->s->world.comm);
    if (most > 1) {
        c = add(&v, n, cap, "node_allreduce", coll, L_ALLREDUCE, msg_bytes(ctx));
        c->typed = true;
        c->dtype = FB_DTYPE_FLOAT32;
        c->count = c->bytes / 4;
        c->redop = "sum";
    }
    *out = v;
    return FB_OK;
}

/* The compute stand-in: compute's whole step on every rank at once (1 image at the host's
 * --resolution, which locate sets to 32; the GPU's default batch); no case where compute cannot
 * run. */
static fb_status compute_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    struct fb_case *v = calloc(1, sizeof *v), step, *c;

    if (!v)
        return FB_ERR_NOMEM;
    *n = 0;
    if (fb_compute_step_case(ctx, ctx->be->on_cpu ? 1 : 0, &step) == FB_OK) {
        c = add(&v, n, 1, "node_compute", step.transport, L_COMPUTE, 0);
        c->report = FB_REPORT_THROUGHPUT;
        c->batch = step.batch;
        c->flops = step.flops;
        c->items = step.items;
    }
    *out = v;
    return FB_OK;
}

static fb_status pairs_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    size_t cap = ctx->opt->npairings ? ctx->opt->npairings : 1;
    struct fb_case *v = calloc(cap, sizeof *v);
    const char *coll = ctx->s->coll->transport(ctx->world_coll);

    if (!v)
        return FB_ERR_NOMEM;
    *n = 0;
    for (size_t i = 0; i < ctx->opt->npairings; i++) {
        struct fb_case *c = add(&v, n, cap, ctx->opt->pairings[i].name, coll, L_PAIRS,
                                msg_bytes(ctx));
        c->partners = ctx->opt->pairings[i].partner;
        c->aux = FB_P2P_VIA_COLL;
    }
    *out = v;
    return FB_OK;
}

static fb_status arrive_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    struct fb_case *v = calloc(1, sizeof *v);

    (void)ctx;
    if (!v)
        return FB_ERR_NOMEM;
    *n = 0;
    add(&v, n, 1, "loop", "cpu", L_LOOP, 0);
    v->report = FB_REPORT_THROUGHPUT;
    /* trials of 300 loops or more, long enough that a CPU quota's period (100 ms) shows in
     * every trial */
    v->min_iters = LOOP_MIN_ITERS;
    *out = v;
    return FB_OK;
}

/* Whether the test-only slowdown applies to this rank in case c. */
static bool slowed(const struct fb_ctx *ctx, const struct fb_case *c)
{
    char kind;
    int a, b, me = ctx->s->world.rank, mine = ctx->s->world.node, theirs;

    if (fb_locate_test_slow(&kind, &a, &b) != FB_OK || !kind)
        return false;
    if (c->variant == L_LOOP)
        return kind == 'r' && a == me;
    if (c->variant == L_COMPUTE)
        return kind == 'c' && a == mine;
    if (c->variant != L_PAIRS || !c->partners || c->partners[me] < 0)
        return false;
    theirs = ctx->node_of[c->partners[me]];
    /* One end sleeps (its partner waits for it, so both directions slow down); were both to
     * sleep on what they took, each would also sleep on the other's sleep. */
    if (kind == 'n')
        return mine == a;
    if (kind == 'l')
        return mine == a && theirs == b;
    return false;
}

static void loc_teardown(void *p)
{
    struct loc_state *s = p;

    if (!s)
        return;
    if (s->inner)
        s->inner->teardown(s->in);
    if (s->cc)
        s->ctx->s->coll->comm_destroy(s->cc);
    if (s->node != MPI_COMM_NULL)
        MPI_Comm_free(&s->node);
    s->ctx->be->free(FB_MEM_DEVICE, s->send);
    s->ctx->be->free(FB_MEM_DEVICE, s->recv);
    free(s);
}

/* The node's all-reduce: a communicator of its ranks (every rank of the world enters the
 * split), inputs as allreduce.c fills them. */
static fb_status allreduce_setup(struct loc_state *s, const struct fb_case *c)
{
    const struct fb_ctx *ctx = s->ctx;
    const struct fb_world *w = &ctx->s->world;
    int64_t offsets = 0, mine = fb_pattern_rank_offset(w->rank);
    fb_status st = FB_OK;

    if (MPI_Comm_split(w->comm, w->node, w->rank, &s->node) != MPI_SUCCESS) {
        s->node = MPI_COMM_NULL;
        return FB_ERR_MPI;
    }
    if ((st = ctx->s->coll->comm_split(ctx->world_coll, s->node, &s->cc)) != FB_OK)
        return st;
    MPI_Allreduce(&mine, &offsets, 1, MPI_INT64_T, MPI_SUM, s->node);
    s->count = c->count;
    s->mine = (struct fb_pattern){.seed = 5, .scale = 1, .offset = mine};
    s->sum = (struct fb_pattern){.seed = 5, .scale = w->local_size, .offset = offsets};
    if ((st = ctx->be->alloc(FB_MEM_DEVICE, c->bytes, &s->send)) != FB_OK ||
        (st = ctx->be->alloc(FB_MEM_DEVICE, c->bytes, &s->recv)) != FB_OK ||
        (st = ctx->be->fill(s->send, s->count, FB_DTYPE_FLOAT32, s->mine, s->stream)) != FB_OK)
        return st;
    return ctx->be->stream_sync(s->stream);
}

static fb_status loc_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                           struct fb_stream *stream, void **state)
{
    struct loc_state *s = calloc(1, sizeof *s);
    struct fb_case inner = *c;
    fb_status st = FB_OK;

    *state = s;
    if (!s)
        return FB_ERR_NOMEM;
    s->ctx = ctx;
    s->stream = stream;
    s->variant = c->variant;
    s->node = MPI_COMM_NULL;
    s->slow = slowed(ctx, c);
    switch (c->variant) {
    case L_H2D:
        s->inner = &fb_bench_h2d;
        inner.variant = 0; /* h2d.c's first variant: pinned host to device */
        break;
    case L_P2P:
    case L_PAIRS:
        s->inner = &fb_bench_p2p;
        inner.variant = FB_P2P_MATRIX_BIDIR;
        break;
    case L_ALLREDUCE: return allreduce_setup(s, c);
    case L_COMPUTE:
        s->inner = &fb_bench_compute;
        if ((st = fb_compute_step_case(ctx, c->batch, &s->inner_case)) != FB_OK)
            return st;
        return s->inner->setup(ctx, &s->inner_case, stream, &s->in);
    default: return FB_OK;
    }
    st = s->inner->setup(ctx, &inner, stream, &s->in);
    return st;
}

/* The compute-free loop: the same integer work on every rank. */
static void spin(long ops)
{
    volatile unsigned long x = 1;
    for (long i = 0; i < ops; i++)
        x = x * 2862933555777941757UL + 3037000493UL;
}

/* This process's CPU time (all its threads), microseconds. */
static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static fb_status loc_iterate(void *p)
{
    struct loc_state *s = p;
    double t0 = s->slow ? fb_clock_now_us() : 0.0, c0 = s->slow ? cpu_us() : 0.0;
    fb_status st = FB_OK;

    if (s->inner)
        st = s->inner->iterate(s->in);
    else if (s->variant == L_ALLREDUCE)
        st = s->ctx->s->coll->allreduce(s->cc, s->send, s->recv, s->count, FB_DTYPE_FLOAT32,
                                        FB_REDOP_SUM, s->stream);
    else
        spin(LOOP_OPS);
    if (st == FB_OK && s->slow) {
        /* test only: 9 times the work, 5 ms (a loop 2 ms) at least, asleep; the compute stand-in
         * 49 times its work, busy. Pretend nodes share the CPUs and run phase 1 each at its own
         * pace: were the slowed node to sleep, the others would have the CPU meanwhile and its
         * own step then run nearly alone (on one shared core it read far less slowed than its
         * work was made, and the others' figures spread); busy, it takes its share of the CPU
         * as a node of slow compute would. Counted in this process's CPU time, so waiting for
         * the shared CPU is not multiplied too. */
        double us, end;
        struct timespec ts;
        if ((st = s->ctx->be->stream_sync(s->stream)) != FB_OK)
            return st;
        if (s->variant == L_COMPUTE) {
            double c1 = cpu_us();
            for (end = c1 + 49.0 * (c1 - c0); cpu_us() < end;)
                spin(1000);
            return st;
        }
        us = 9.0 * (fb_clock_now_us() - t0);
        double least = s->variant == L_LOOP ? SLOW_MIN_LOOP_US : SLOW_MIN_US;
        us = us > least ? us : least;
        ts.tv_sec = (time_t)(us / 1e6);
        ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
        nanosleep(&ts, NULL);
    }
    return st;
}

static fb_status loc_verify(void *p, size_t *wrong)
{
    struct loc_state *s = p;
    fb_status st;

    *wrong = 0;
    if (s->inner)
        return s->inner->verify(s->in, wrong);
    if (s->variant != L_ALLREDUCE)
        return FB_OK;
    if ((st = loc_iterate(s)) != FB_OK)
        return st;
    return s->ctx->be->check(s->recv, s->count, FB_DTYPE_FLOAT32, s->sum, wrong, s->stream);
}

const struct fb_bench fb_bench_locate_node = {
    .name = "locate_node",
    .summary = "locate phase 1: every node alone at once (h2d, p2p and all-reduce inside it)",
    .needs = FB_NEEDS_COLL,
    .min_ranks = 1,
    .plan = node_plan,
    .setup = loc_setup,
    .iterate = loc_iterate,
    .verify = loc_verify,
    .teardown = loc_teardown,
};

const struct fb_bench fb_bench_locate_compute = {
    .name = "locate_compute",
    .summary = "locate phase 1: the compute stand-in (compute's training step) on every rank at "
               "once",
    .needs = 0,
    .min_ranks = 1,
    .plan = compute_plan,
    .setup = loc_setup,
    .iterate = loc_iterate,
    .verify = loc_verify,
    .teardown = loc_teardown,
};

const struct fb_bench fb_bench_locate_pairs = {
    .name = "locate_pairs",
    .summary = "locate phase 2: rounds of disjoint node pairs, both ways, all pairs at once",
    .needs = FB_NEEDS_COLL,
    .min_ranks = 2,
    .plan = pairs_plan,
    .setup = loc_setup,
    .iterate = loc_iterate,
    .verify = loc_verify,
    .teardown = loc_teardown,
};

const struct fb_bench fb_bench_locate_arrive = {
    .name = "locate_arrive",
    .summary = "locate: each rank's compute-free loop at once (stragglers)",
    .needs = 0,
    .min_ranks = 1,
    .plan = arrive_plan,
    .setup = loc_setup,
    .iterate = loc_iterate,
    .verify = loc_verify,
    .teardown = loc_teardown,
};
