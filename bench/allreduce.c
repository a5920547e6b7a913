/* allreduce: sum all-reduce over a size sweep (8 B to 256 MiB by default), out of place and in
 * place, with algbw and busbw as nccl-tests defines them and every result verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "registry.h"
#include "sweep.h"

static const struct fb_sweep allreduce_defaults = {8, 256u << 20, 2};

struct allreduce_state {
    const struct fb_ctx *ctx;
    struct fb_stream *stream;
    void *send, *recv;
    size_t count;
    enum fb_dtype dtype;
    bool in_place;
    struct fb_pattern mine, sum;
};

static fb_status allreduce_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    size_t nsizes = fb_sweep_sizes(ctx->opt, allreduce_defaults, NULL), k = 0;
    size_t *sizes = malloc(nsizes * sizeof *sizes), esize = fb_dtype_size(ctx->opt->dtype);
    struct fb_case *cases = calloc(2 * nsizes, sizeof *cases);
    int ranks = ctx->ranks;

    if (!sizes || !cases) {
        free(sizes);
        free(cases);
        return FB_ERR_NOMEM;
    }
    fb_sweep_sizes(ctx->opt, allreduce_defaults, sizes);
    for (size_t i = 0; i < nsizes; i++) {
        if (sizes[i] < esize)
            continue; /* smaller than one element */
        for (int in_place = 0; in_place < 2; in_place++) {
            struct fb_case *c = &cases[k++];
            snprintf(c->name, sizeof c->name, "%s", in_place ? "in_place" : "out_of_place");
            snprintf(c->transport, sizeof c->transport, "%s",
                     ctx->s->coll->transport(ctx->world_coll));
            c->count = sizes[i] / esize;
            c->bytes = c->count * esize;
            c->dtype = ctx->opt->dtype;
            c->typed = true;
            c->redop = "sum";
            c->active = FB_ALL_RANKS;
            c->report = FB_REPORT_COLLECTIVE;
            /* Each rank sends and receives 2(n-1)/n of the buffer in a ring (nccl-tests). */
            c->bus_factor = 2.0 * (ranks - 1) / ranks;
            c->variant = in_place;
        }
    }
    free(sizes);
    *out = cases;
    *n = k;
    return FB_OK;
}

static void allreduce_teardown(void *p)
{
    struct allreduce_state *s = p;
    if (!s)
        return;
    s->ctx->be->free(FB_MEM_DEVICE, s->send);
    s->ctx->be->free(FB_MEM_DEVICE, s->recv);
    free(s);
}

static fb_status fill_inputs(struct allreduce_state *s)
{
    return s->ctx->be->fill(s->in_place ? s->recv : s->send, s->count, s->dtype, s->mine,
                            s->stream);
}

static fb_status allreduce_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                                 struct fb_stream *stream, void **state)
{
    struct allreduce_state *s = calloc(1, sizeof *s);
    int ranks = ctx->ranks;
    int64_t offsets = 0;
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    s->ctx = ctx;
    s->stream = stream;
    s->count = c->count;
    s->dtype = c->dtype;
    s->in_place = c->variant == 1;
    for (int r = 0; r < ranks; r++)
        offsets += fb_pattern_rank_offset(r);
    s->mine = (struct fb_pattern){.seed = 5, .scale = 1,
                                  .offset = fb_pattern_rank_offset(ctx->s->world.rank)};
    s->sum = (struct fb_pattern){.seed = 5, .scale = ranks, .offset = offsets};
    if ((!s->in_place && (st = ctx->be->alloc(FB_MEM_DEVICE, c->bytes, &s->send)) != FB_OK) ||
        (st = ctx->be->alloc(FB_MEM_DEVICE, c->bytes, &s->recv)) != FB_OK ||
        (st = fill_inputs(s)) != FB_OK || (st = ctx->be->stream_sync(stream)) != FB_OK) {
        allreduce_teardown(s);
        return st;
    }
    *state = s;
    return FB_OK;
}

static fb_status allreduce_iterate(void *p)
{
    struct allreduce_state *s = p;
    const void *send = s->in_place ? s->recv : s->send;

    return s->ctx->s->coll->allreduce(s->ctx->coll_comm, send, s->recv, s->count, s->dtype,
                                      FB_REDOP_SUM, s->stream);
}

static fb_status allreduce_verify(void *p, size_t *wrong)
{
    struct allreduce_state *s = p;
    const struct fb_pattern poison = {.seed = 0, .scale = 0, .offset = -77};
    fb_status st;

    /* Timed in-place iterations compound the sums, so start again from known inputs. The
     * all-reduce is made even after a failed refill: the other ranks wait in it. */
    st = s->in_place ? FB_OK : s->ctx->be->fill(s->recv, s->count, s->dtype, poison, s->stream);
    if (st == FB_OK)
        st = fill_inputs(s);
    fb_status reduced = allreduce_iterate(s);
    if ((st = st != FB_OK ? st : reduced) != FB_OK)
        return st;
    return s->ctx->be->check(s->recv, s->count, s->dtype, s->sum, wrong, s->stream);
}

const struct fb_bench fb_bench_allreduce = {
    .name = "allreduce",
    .summary = "sum all-reduce over a size sweep, out of place and in place, algbw and busbw "
               "as in nccl-tests",
    .needs = FB_NEEDS_COLL | FB_SCALES | FB_ONE_CALL,
    .min_ranks = 1,
    .plan = allreduce_plan,
    .setup = allreduce_setup,
    .iterate = allreduce_iterate,
    .verify = allreduce_verify,
    .teardown = allreduce_teardown,
};
