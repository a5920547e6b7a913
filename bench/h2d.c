/* h2d: host-to-device and device-to-host copy bandwidth over a size sweep, from pinned and
 * from pageable host memory, each rank alone and then all ranks at once (several GPUs behind
 * one PCIe uplink share it; a rank on the wrong socket reads slower). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "registry.h"
#include "sweep.h"
#include "units.h"

enum { V_PINNED_H2D, V_PINNED_D2H, V_PAGEABLE_H2D, V_PAGEABLE_D2H, V_COUNT };

static const char *const variant_name[V_COUNT] = {"pinned_h2d", "pinned_d2h", "pageable_h2d",
                                                  "pageable_d2h"};

static const struct fb_sweep h2d_defaults = {4096, 256u << 20, 4};

struct h2d_state {
    const struct fb_backend *be;
    struct fb_stream *stream;
    enum fb_mem host_kind;
    bool to_device;
    void *host, *dev;
    size_t bytes;
    struct fb_pattern src;
};

/* --beyond-llc: the size past the last-level cache (fb_size_past_cache), or 0 when the sweep
 * already reaches it or the cache is unknown (run says so). The same on every rank: the job's
 * largest cache (struct fb_session). Measured in the last mode only (all ranks at once, the
 * headline's; one rank: its only mode): a VM may report a whole socket's L3 (508 MiB on the
 * older 2-core EPYC VM kind, docs/testing.md round twelve), and a 1 GiB copy in every mode would
 * make the quick run far longer. */
static size_t beyond_llc(const struct fb_ctx *ctx, const size_t *sizes, size_t nsizes)
{
    size_t big = ctx->opt->beyond_llc ? fb_size_past_cache(ctx->s->llc_bytes) : 0;

    if (!big)
        return 0;
    for (size_t i = 0; i < nsizes; i++)
        if (sizes[i] >= big)
            return 0;
    return big;
}

size_t fb_h2d_largest_bytes(const struct fb_options *o, unsigned long long llc_bytes)
{
    size_t n = fb_sweep_sizes(o, h2d_defaults, NULL), most = 0, big;
    size_t *sizes = malloc((n ? n : 1) * sizeof *sizes);

    if (!sizes)
        return SIZE_MAX;
    fb_sweep_sizes(o, h2d_defaults, sizes);
    for (size_t i = 0; i < n; i++)
        most = sizes[i] > most ? sizes[i] : most;
    free(sizes);
    big = o->beyond_llc ? fb_size_past_cache(llc_bytes) : 0;
    return big > most ? big : most;
}

static fb_status h2d_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    size_t nsizes = fb_sweep_sizes(ctx->opt, h2d_defaults, NULL), k = 0;
    int size = ctx->s->world.size;
    int modes = size > 1 ? size + 1 : 1; /* each rank alone, then all at once */
    size_t *sizes = malloc((nsizes + 1) * sizeof *sizes);
    struct fb_case *cases = calloc((size_t)V_COUNT * (size_t)modes * (nsizes + 1), sizeof *cases);

    if (!sizes || !cases) {
        free(sizes);
        free(cases);
        return FB_ERR_NOMEM;
    }
    fb_sweep_sizes(ctx->opt, h2d_defaults, sizes);
    sizes[nsizes] = beyond_llc(ctx, sizes, nsizes);
    for (int v = 0; v < V_COUNT; v++)
        for (int mode = 0; mode < modes; mode++)
            for (size_t i = 0; i < nsizes + (sizes[nsizes] && mode == modes - 1); i++) {
                struct fb_case *c = &cases[k++];
                snprintf(c->name, sizeof c->name, "%s", variant_name[v]);
                snprintf(c->transport, sizeof c->transport, "%s",
                         ctx->be->on_cpu ? "memcpy" : "cudaMemcpyAsync");
                c->bytes = sizes[i];
                c->active = mode < size ? mode : FB_ALL_RANKS;
                c->per_rank = c->active == FB_ALL_RANKS;
                c->variant = v;
            }
    free(sizes);
    *out = cases;
    *n = k;
    return FB_OK;
}

static void h2d_teardown(void *p)
{
    struct h2d_state *s = p;
    if (!s)
        return;
    s->be->free(s->host_kind, s->host);
    s->be->free(FB_MEM_DEVICE, s->dev);
    free(s);
}

/* The pattern is checked in 4-byte words; a size that is not a multiple of 4 leaves its last
 * bytes unchecked. */
static size_t words(size_t bytes) { return bytes / 4; }

static fb_status h2d_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                           struct fb_stream *stream, void **state)
{
    struct h2d_state *s = calloc(1, sizeof *s);
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    s->be = ctx->be;
    s->stream = stream;
    s->bytes = c->bytes;
    s->host_kind = c->variant <= V_PINNED_D2H ? FB_MEM_PINNED : FB_MEM_PAGEABLE;
    s->to_device = c->variant == V_PINNED_H2D || c->variant == V_PAGEABLE_H2D;
    s->src = (struct fb_pattern){.seed = 11u + (uint32_t)c->variant, .scale = 1,
                                 .offset = fb_pattern_rank_offset(ctx->s->world.rank)};
    if ((st = s->be->alloc(s->host_kind, s->bytes, &s->host)) != FB_OK ||
        (st = s->be->alloc(FB_MEM_DEVICE, s->bytes, &s->dev)) != FB_OK)
        goto fail;
    if (s->to_device)
        fb_pattern_fill_host(s->host, words(s->bytes), FB_DTYPE_INT32, s->src);
    else if ((st = s->be->fill(s->dev, words(s->bytes), FB_DTYPE_INT32, s->src, stream)) != FB_OK)
        goto fail;
    *state = s;
    return s->be->stream_sync(stream);
fail:
    h2d_teardown(s);
    return st;
}

static fb_status h2d_iterate(void *p)
{
    struct h2d_state *s = p;
    if (s->to_device)
        return s->be->copy(s->dev, s->host, s->bytes, FB_COPY_H2D, s->stream);
    return s->be->copy(s->host, s->dev, s->bytes, FB_COPY_D2H, s->stream);
}

static fb_status h2d_verify(void *p, size_t *wrong)
{
    struct h2d_state *s = p;
    const struct fb_pattern poison = {.seed = 0, .scale = 0, .offset = -77};
    size_t n = words(s->bytes);
    fb_status st;

    /* Poison the destination first, so a copy that did nothing cannot pass. */
    if (s->to_device) {
        if ((st = s->be->fill(s->dev, n, FB_DTYPE_INT32, poison, s->stream)) != FB_OK ||
            (st = h2d_iterate(s)) != FB_OK ||
            (st = s->be->check(s->dev, n, FB_DTYPE_INT32, s->src, wrong, s->stream)) != FB_OK)
            return st;
        return FB_OK;
    }
    fb_pattern_fill_host(s->host, n, FB_DTYPE_INT32, poison);
    if ((st = h2d_iterate(s)) != FB_OK || (st = s->be->stream_sync(s->stream)) != FB_OK)
        return st;
    *wrong = fb_pattern_check_host(s->host, n, FB_DTYPE_INT32, s->src);
    return FB_OK;
}

const struct fb_bench fb_bench_h2d = {
    .name = "h2d",
    .summary = "host-to-device and device-to-host copy bandwidth, pinned and pageable, each rank "
               "alone and all at once",
    .min_ranks = 1,
    .needs = FB_NEEDS_MEMCPY_REF,
    .plan = h2d_plan,
    .setup = h2d_setup,
    .iterate = h2d_iterate,
    .verify = h2d_verify,
    .teardown = h2d_teardown,
};
