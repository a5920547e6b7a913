/* all_gather, reduce_scatter, alltoall, broadcast and reduce: nccl-tests' other collectives over
 * a size sweep, one implementation driven by a table of each collective's facts (its buffers in
 * blocks, its bus factor, whether it reduces, has a root or an in-place form, how its result is
 * checked). Sizes, counts, algbw and busbw are nccl-tests' (docs/benchmarks/collectives.md);
 * every result is verified after the trials, as allreduce's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "registry.h"
#include "sweep.h"

static const struct fb_sweep coll_defaults = {8, 256u << 20, 2};

enum coll_kind { K_ALLGATHER, K_REDUCE_SCATTER, K_ALLTOALL, K_BROADCAST, K_REDUCE };

/* What the shared implementation needs to know about one collective. A buffer is measured in
 * blocks of `count` elements: 1, or n (N) for n ranks. */
enum { N = -1 };
struct coll_facts {
    enum coll_kind kind;
    int send_blocks, recv_blocks;
    bool ring;     /* busbw = algbw * (n-1)/n (nccl-tests); else busbw = algbw */
    bool in_place; /* has an in-place form */
    bool reduces;  /* a sum: redop "sum", expected values n-fold */
    bool rooted;   /* root 0 sends (broadcast) or receives (reduce) */
};

static const struct coll_facts facts[] = {
    [K_ALLGATHER] = {K_ALLGATHER, 1, N, true, true, false, false},
    [K_REDUCE_SCATTER] = {K_REDUCE_SCATTER, N, 1, true, true, true, false},
    [K_ALLTOALL] = {K_ALLTOALL, N, N, true, false, false, false},
    [K_BROADCAST] = {K_BROADCAST, 1, 1, false, true, false, true},
    [K_REDUCE] = {K_REDUCE, 1, 1, false, true, true, true},
};

enum { ROOT = 0 }; /* nccl-tests' default root */

static int blocks_of(int b, int n)
{
    return b == N ? n : b;
}

/* The pattern of block b of rank r's input: each block its own seed, each rank its own
 * offset, so a block delivered to the wrong place or from the wrong rank is caught. */
static struct fb_pattern input_of(int r, int b)
{
    return (struct fb_pattern){.seed = 5 + 7 * (uint32_t)b, .scale = 1,
                               .offset = fb_pattern_rank_offset(r)};
}

/* The sum over n ranks of their block b. */
static struct fb_pattern sum_of(int n, int b)
{
    int64_t offsets = 0;

    for (int r = 0; r < n; r++)
        offsets += fb_pattern_rank_offset(r);
    return (struct fb_pattern){.seed = 5 + 7 * (uint32_t)b, .scale = n, .offset = offsets};
}

struct coll_state {
    const struct fb_ctx *ctx;
    const struct coll_facts *f;
    struct fb_stream *stream;
    void *send, *recv; /* send == recv in place */
    size_t count;      /* elements per block */
    enum fb_dtype dtype;
    int n, rank;
    int recv_blocks; /* the blocks of recv (in place, of the one buffer) */
    bool in_place;
    bool short_count; /* FB_REPLAY=collective-short: a defect put back for the test */
};

static fb_status coll_plan(const struct fb_ctx *ctx, const struct coll_facts *f,
                           struct fb_case **out, size_t *n)
{
    size_t nsizes = fb_sweep_sizes(ctx->opt, coll_defaults, NULL), k = 0, last = 0;
    size_t *sizes = malloc(nsizes * sizeof *sizes), esize = fb_dtype_size(ctx->opt->dtype);
    struct fb_case *cases = calloc(2 * nsizes, sizeof *cases);
    int ranks = ctx->ranks;
    /* nccl-tests' size is the biggest buffer: n blocks where there are n (all-gather's
     * receive, reduce-scatter's and all-to-all's send), else one. */
    size_t per = f->send_blocks == N || f->recv_blocks == N ? (size_t)ranks : 1;

    if (!sizes || !cases) {
        free(sizes);
        free(cases);
        return FB_ERR_NOMEM;
    }
    fb_sweep_sizes(ctx->opt, coll_defaults, sizes);
    for (size_t i = 0; i < nsizes; i++) {
        size_t count = sizes[i] / esize / per;

        /* smaller than a block of one element each, or the same point as the last */
        if (count == 0 || count * esize * per == last)
            continue;
        last = count * esize * per;
        for (int in_place = 0; in_place < (f->in_place ? 2 : 1); in_place++) {
            struct fb_case *c = &cases[k++];
            snprintf(c->name, sizeof c->name, "%s", in_place ? "in_place" : "out_of_place");
            snprintf(c->transport, sizeof c->transport, "%s",
                     ctx->s->coll->transport(ctx->world_coll));
            c->count = count; /* nccl-tests' count: elements per block */
            c->bytes = count * esize * per;
            c->dtype = ctx->opt->dtype;
            c->typed = true;
            c->redop = f->reduces ? "sum" : NULL;
            c->rooted = f->rooted;
            c->root = ROOT;
            c->active = FB_ALL_RANKS;
            c->report = FB_REPORT_COLLECTIVE;
            c->bus_factor = f->ring ? (double)(ranks - 1) / ranks : 1.0;
            c->variant = in_place;
        }
    }
    free(sizes);
    *out = cases;
    *n = k;
    return FB_OK;
}

static void coll_teardown(void *p)
{
    struct coll_state *s = p;
    if (!s)
        return;
    if (s->send != s->recv)
        s->ctx->be->free(FB_MEM_DEVICE, s->send);
    s->ctx->be->free(FB_MEM_DEVICE, s->recv);
    free(s);
}

static size_t block_bytes(const struct coll_state *s)
{
    return s->count * fb_dtype_size(s->dtype);
}

static void *block(void *buf, const struct coll_state *s, int b)
{
    return (char *)buf + (size_t)b * block_bytes(s);
}

/* Poisons the buffer the result goes to (out of place; in place, the blocks not refilled). */
static fb_status poison(struct coll_state *s)
{
    const struct fb_pattern bad = {.seed = 0, .scale = 0, .offset = -77};

    return s->ctx->be->fill(s->recv, (size_t)s->recv_blocks * s->count, s->dtype, bad,
                            s->stream);
}

/* This rank's inputs, where the collective reads them. */
static fb_status fill_inputs(struct coll_state *s)
{
    const struct fb_backend *be = s->ctx->be;
    void *in = s->in_place ? s->recv : s->send;
    fb_status st = FB_OK;

    switch (s->f->kind) {
    case K_ALLGATHER: /* in place: this rank's block already sits at block `rank` */
        return be->fill(s->in_place ? block(s->recv, s, s->rank) : s->send, s->count, s->dtype,
                        input_of(s->rank, 0), s->stream);
    case K_REDUCE_SCATTER:
    case K_ALLTOALL:
        for (int b = 0; b < s->n && st == FB_OK; b++)
            st = be->fill(block(in, s, b), s->count, s->dtype, input_of(s->rank, b), s->stream);
        return st;
    case K_BROADCAST:
        return s->rank == ROOT || !s->in_place
                   ? be->fill(in, s->count, s->dtype, input_of(s->rank, 0), s->stream)
                   : FB_OK;
    case K_REDUCE:
        return be->fill(in, s->count, s->dtype, input_of(s->rank, 0), s->stream);
    }
    return FB_ERR_USAGE;
}

static fb_status coll_setup(const struct fb_ctx *ctx, const struct coll_facts *f,
                            const struct fb_case *c, struct fb_stream *stream, void **state)
{
    struct coll_state *s = calloc(1, sizeof *s);
    const char *replay = getenv("FB_REPLAY");
    int send_blocks;
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    s->ctx = ctx;
    s->f = f;
    s->stream = stream;
    s->count = c->count;
    s->dtype = c->dtype;
    s->n = ctx->ranks;
    s->rank = ctx->s->world.rank; /* the group is the first `ranks` ranks of the world */
    s->in_place = c->variant == 1;
    s->short_count = replay && strcmp(replay, "collective-short") == 0;
    send_blocks = blocks_of(f->send_blocks, s->n);
    s->recv_blocks = blocks_of(f->recv_blocks, s->n);
    if (s->in_place && send_blocks > s->recv_blocks)
        s->recv_blocks = send_blocks;
    if ((st = ctx->be->alloc(FB_MEM_DEVICE, (size_t)s->recv_blocks * block_bytes(s), &s->recv)) !=
        FB_OK) {
        coll_teardown(s);
        return st;
    }
    s->send = s->recv;
    if (!s->in_place &&
        (st = ctx->be->alloc(FB_MEM_DEVICE, (size_t)send_blocks * block_bytes(s), &s->send)) !=
            FB_OK) {
        s->send = NULL;
        coll_teardown(s);
        return st;
    }
    if ((st = poison(s)) != FB_OK || (st = fill_inputs(s)) != FB_OK ||
        (st = ctx->be->stream_sync(stream)) != FB_OK) {
        coll_teardown(s);
        return st;
    }
    *state = s;
    return FB_OK;
}

static fb_status coll_iterate(void *p)
{
    struct coll_state *s = p;
    const struct fb_coll *coll = s->ctx->s->coll;
    struct fb_coll_comm *comm = s->ctx->coll_comm;
    /* the defect of the verification test: the last element of each block left out */
    size_t count = s->short_count && s->count > 0 ? s->count - 1 : s->count;

    switch (s->f->kind) {
    case K_ALLGATHER:
        return coll->allgather(comm, s->send, s->recv, count, s->dtype, s->stream);
    case K_REDUCE_SCATTER:
        return coll->reduce_scatter(comm, s->send, s->recv, count, s->dtype, FB_REDOP_SUM,
                                    s->stream);
    case K_ALLTOALL:
        return coll->alltoall(comm, s->send, s->recv, count, s->dtype, s->stream);
    case K_BROADCAST:
        return coll->broadcast(comm, s->send, s->recv, count, s->dtype, ROOT, s->stream);
    case K_REDUCE:
        return coll->reduce(comm, s->send, s->recv, count, s->dtype, FB_REDOP_SUM, ROOT,
                            s->stream);
    }
    return FB_ERR_USAGE;
}

/* Adds the wrong elements of block `at` of recv against p. */
static fb_status check_block(struct coll_state *s, int at, struct fb_pattern p, size_t *wrong)
{
    size_t w = 0;
    fb_status st = s->ctx->be->check(block(s->recv, s, at), s->count, s->dtype, p, &w, s->stream);

    *wrong += w;
    return st;
}

static fb_status coll_verify(void *p, size_t *wrong)
{
    struct coll_state *s = p;
    fb_status st = FB_OK;

    *wrong = 0;
    /* Timed in-place iterations compound sums: start again from known inputs. The collective
     * is called even after a failed refill: the other ranks wait in it. */
    if ((st = poison(s)) == FB_OK)
        st = fill_inputs(s);
    fb_status called = coll_iterate(s);
    st = st != FB_OK ? st : called;
    if (st != FB_OK || (st = s->ctx->be->stream_sync(s->stream)) != FB_OK)
        return st;
    switch (s->f->kind) {
    case K_ALLGATHER: /* block b from rank b */
        for (int b = 0; b < s->n && st == FB_OK; b++)
            st = check_block(s, b, input_of(b, 0), wrong);
        return st;
    case K_REDUCE_SCATTER: /* this rank's block summed; in place, at block `rank` */
        return check_block(s, s->in_place ? s->rank : 0, sum_of(s->n, s->rank), wrong);
    case K_ALLTOALL: /* block b from rank b: its block `rank` */
        for (int b = 0; b < s->n && st == FB_OK; b++)
            st = check_block(s, b, input_of(b, s->rank), wrong);
        return st;
    case K_BROADCAST:
        return check_block(s, 0, input_of(ROOT, 0), wrong);
    case K_REDUCE:
        return s->rank == ROOT ? check_block(s, 0, sum_of(s->n, 0), wrong) : FB_OK;
    }
    return FB_ERR_USAGE;
}

/* The five benchmarks: the shared hooks bound to each one's facts. */
#define COLL_BENCH(ident, kname, text)                                                          \
    static fb_status ident##_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)   \
    {                                                                                           \
        return coll_plan(ctx, &facts[kname], out, n);                                          \
    }                                                                                           \
    static fb_status ident##_setup(const struct fb_ctx *ctx, const struct fb_case *c,          \
                                   struct fb_stream *stream, void **state)                     \
    {                                                                                           \
        return coll_setup(ctx, &facts[kname], c, stream, state);                               \
    }                                                                                           \
    const struct fb_bench fb_bench_##ident = {                                                  \
        .name = #ident,                                                                         \
        .summary = text,                                                                        \
        .needs = FB_NEEDS_COLL | FB_SCALES | FB_ONE_CALL,                                       \
        .min_ranks = 1,                                                                         \
        .plan = ident##_plan,                                                                   \
        .setup = ident##_setup,                                                                 \
        .iterate = coll_iterate,                                                                \
        .verify = coll_verify,                                                                  \
        .teardown = coll_teardown,                                                              \
    }

COLL_BENCH(all_gather, K_ALLGATHER,
           "all-gather over a size sweep, out of place and in place, algbw and busbw as in "
           "nccl-tests");
COLL_BENCH(reduce_scatter, K_REDUCE_SCATTER,
           "sum reduce-scatter over a size sweep, out of place and in place, algbw and busbw as "
           "in nccl-tests");
COLL_BENCH(alltoall, K_ALLTOALL,
           "all-to-all over a size sweep, out of place, algbw and busbw as in nccl-tests");
COLL_BENCH(broadcast, K_BROADCAST,
           "broadcast from rank 0 over a size sweep, out of place and in place, algbw and busbw "
           "as in nccl-tests");
COLL_BENCH(reduce, K_REDUCE,
           "sum reduce to rank 0 over a size sweep, out of place and in place, algbw and busbw "
           "as in nccl-tests");
