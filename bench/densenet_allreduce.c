/* densenet_allreduce: one training step's gradient exchange for DenseNet-121, the way
 * data-parallel frameworks do it: one all-reduce per tensor, Horovod-style fusion of tensors
 * in gradient-ready order up to a threshold (PyTorch DDP's 25 MiB buckets are one of them), and
 * one flat buffer; in fp32 and in fp16 (Horovod's fp16 compression). The summary gives each
 * strategy's overhead against the flat buffer: what fusion buys on this fabric.
 *
 * The gradients live in one arena in gradient-ready order, so a bucket of consecutive tensors
 * is a slice of it and is reduced in place: the figures are the exchange alone, without the
 * copies into and out of a fusion buffer that Horovod adds (device-to-device copies). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "densenet.h"
#include "fusion.h"
#include "log.h"
#include "registry.h"
#include "units.h"

static const size_t default_thresholds[] = {FB_FUSION_OFF, 1u << 20, 4u << 20, 16u << 20,
                                            25u << 20,     64u << 20, 128u << 20};
static const enum fb_dtype dtypes[] = {FB_DTYPE_FLOAT32, FB_DTYPE_FLOAT16};

struct grad_state {
    const struct fb_ctx *ctx;
    struct fb_stream *stream;
    void *arena;
    enum fb_dtype dtype;
    size_t elements;
    struct fb_bucket *buckets;
    size_t nbuckets;
    struct fb_pattern mine, sum;
};

/* The case's threshold: aux holds it, -1 for the flat buffer. */
static size_t case_threshold(const struct fb_case *c)
{
    return c->aux < 0 ? FB_FUSION_FLAT : (size_t)c->aux;
}

static void strategy_name(size_t threshold, char *buf, size_t len)
{
    char size[24];

    if (threshold == FB_FUSION_OFF) {
        snprintf(buf, len, "per_tensor");
    } else if (threshold == FB_FUSION_FLAT) {
        snprintf(buf, len, "flat");
    } else {
        fb_size_format(threshold, size, sizeof size);
        snprintf(buf, len, "fusion_%s", size);
    }
}

static fb_status grad_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    const struct fb_options *o = ctx->opt;
    const size_t *thresholds = o->nthresholds ? o->thresholds : default_thresholds;
    size_t nthr = o->nthresholds ? o->nthresholds
                                 : sizeof default_thresholds / sizeof default_thresholds[0];
    size_t per_dtype = nthr + 1, k = 0; /* + the flat buffer */
    struct fb_case *cases = calloc(per_dtype * 2, sizeof *cases);
    struct fb_densenet d;
    fb_status st;

    if (!cases)
        return FB_ERR_NOMEM;
    if ((st = fb_densenet121(o->classes, &d)) != FB_OK) {
        free(cases);
        return st;
    }
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < per_dtype; i++) {
            struct fb_case *c = &cases[k++];
            size_t thr = i < nthr ? thresholds[i] : FB_FUSION_FLAT;
            strategy_name(thr, c->name, sizeof c->name);
            snprintf(c->transport, sizeof c->transport, "%s",
                     ctx->s->coll->transport(ctx->world_coll));
            c->dtype = dtypes[t];
            c->typed = true;
            c->count = d.parameters;
            c->bytes = d.parameters * fb_dtype_size(dtypes[t]);
            c->redop = "sum";
            c->active = FB_ALL_RANKS;
            c->report = FB_REPORT_COLLECTIVE;
            c->bus_factor = 2.0 * (ctx->ranks - 1) / ctx->ranks;
            c->aux = thr == FB_FUSION_FLAT ? -1 : (long)thr;
            /* the headline keeps the two ends; the fusion table shows every threshold */
            c->detail = thr != FB_FUSION_FLAT && thr != FB_FUSION_OFF;
        }
    fb_densenet_free(&d);
    *out = cases;
    *n = k;
    return FB_OK;
}

static void grad_teardown(void *p)
{
    struct grad_state *s = p;
    if (!s)
        return;
    s->ctx->be->free(FB_MEM_DEVICE, s->arena);
    free(s->buckets);
    free(s);
}

static fb_status grad_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                            struct fb_stream *stream, void **state)
{
    struct grad_state *s = calloc(1, sizeof *s);
    struct fb_densenet d = {0};
    int64_t offsets = 0;
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    s->ctx = ctx;
    s->stream = stream;
    s->dtype = c->dtype;
    s->elements = c->count;
    for (int r = 0; r < ctx->ranks; r++)
        offsets += fb_pattern_rank_offset(r);
    s->mine = (struct fb_pattern){.seed = 9, .scale = 1,
                                  .offset = fb_pattern_rank_offset(ctx->s->world.rank)};
    s->sum = (struct fb_pattern){.seed = 9, .scale = ctx->ranks, .offset = offsets};
    if ((st = fb_densenet121(ctx->opt->classes, &d)) != FB_OK ||
        (st = fb_fusion_plan(&d, fb_dtype_size(c->dtype), case_threshold(c), &s->buckets,
                             &s->nbuckets)) != FB_OK ||
        (st = ctx->be->alloc(FB_MEM_DEVICE, c->bytes, &s->arena)) != FB_OK ||
        (st = ctx->be->fill(s->arena, s->elements, s->dtype, s->mine, stream)) != FB_OK ||
        (st = ctx->be->stream_sync(stream)) != FB_OK) {
        fb_densenet_free(&d);
        grad_teardown(s);
        return st;
    }
    fb_densenet_free(&d);
    *state = s;
    return FB_OK;
}

/* One step: every bucket reduced in place, in gradient-ready order. */
static fb_status grad_iterate(void *p)
{
    struct grad_state *s = p;
    size_t esize = fb_dtype_size(s->dtype), offset = 0;
    fb_status st;

    /* every bucket, even after a failed one: the other ranks reduce them all (the first
     * failure is returned) */
    fb_status first = FB_OK;
    for (size_t i = 0; i < s->nbuckets; i++) {
        void *slice = (char *)s->arena + offset * esize;
        st = s->ctx->s->coll->allreduce(s->ctx->coll_comm, slice, slice, s->buckets[i].elements,
                                        s->dtype, FB_REDOP_SUM, s->stream);
        first = first != FB_OK ? first : st;
        offset += s->buckets[i].elements;
    }
    return first;
}

static fb_status grad_verify(void *p, size_t *wrong)
{
    struct grad_state *s = p;
    fb_status st;

    /* Timed steps compound the sums in place: start again from known gradients. The buckets
     * are reduced even after a failed refill: the other ranks wait in them. */
    st = s->ctx->be->fill(s->arena, s->elements, s->dtype, s->mine, s->stream);
    fb_status reduced = grad_iterate(s);
    if ((st = st != FB_OK ? st : reduced) != FB_OK)
        return st;
    return s->ctx->be->check(s->arena, s->elements, s->dtype, s->sum, wrong, s->stream);
}

/* The `metric` row of (ranks, dtype, case) from `first` on, or NULL. */
static const struct fb_row *find_row(const struct fb_results *res, size_t first, int ranks,
                                     const char *dtype, const char *kase, const char *metric)
{
    for (size_t i = first; i < res->nrows; i++) {
        const struct fb_row *w = &res->rows[i];
        if (strcmp(w->bench, "densenet_allreduce") == 0 && w->ranks == ranks &&
            strcmp(w->dtype, dtype) == 0 && strcmp(w->kase, kase) == 0 &&
            strcmp(w->metric, metric) == 0)
            return w;
    }
    return NULL;
}

/* Rank 0: each strategy against the flat buffer of the same ranks and dtype, as a table and
 * as `overhead_vs_flat` rows (the ratio of the medians, so one sample). */
static void grad_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    struct fb_densenet d;
    size_t nrows = res->nrows;
    bool one_rank = false, any_time = false;

    /* --timing synced alone writes no batch `time` rows: nothing to set against the flat one */
    for (size_t i = first; i < nrows && !any_time; i++)
        any_time = strcmp(res->rows[i].bench, "densenet_allreduce") == 0 &&
                   strcmp(res->rows[i].metric, "time") == 0;
    if (!any_time || fb_densenet121(ctx->opt->classes, &d) != FB_OK)
        return;
    fb_out("\n# densenet_allreduce: DenseNet-121 (%d classes), %zu parameters in %zu tensors; "
           "one step's exchange against one flat buffer\n", ctx->opt->classes, d.parameters,
           d.ntensors);
    fb_out("# %5s %-8s %-14s %8s %12s %10s %10s %9s\n", "ranks", "dtype", "strategy", "buckets",
           "time_us", "algbw", "busbw", "vs_flat");
    for (size_t i = first; i < nrows; i++) {
        const struct fb_row *w = &res->rows[i], *flat, *alg, *bus;
        struct fb_row extra;
        struct fb_bucket *b = NULL;
        size_t nb = 0, threshold;
        char why[96];
        double pct;

        if (strcmp(w->bench, "densenet_allreduce") != 0 || strcmp(w->metric, "time") != 0 ||
            !(flat = find_row(res, first, w->ranks, w->dtype, "flat", "time")))
            continue;
        /* one rank has no bandwidth rows (time only) */
        alg = find_row(res, first, w->ranks, w->dtype, w->kase, "algbw");
        bus = find_row(res, first, w->ranks, w->dtype, w->kase, "busbw");
        if (w->ranks > 1 && (!alg || !bus))
            continue;
        one_rank |= w->ranks == 1;
        /* The threshold back from the case name the plan gave it. */
        if (strcmp(w->kase, "flat") == 0)
            threshold = FB_FUSION_FLAT;
        else if (strcmp(w->kase, "per_tensor") == 0)
            threshold = FB_FUSION_OFF;
        else if (strncmp(w->kase, "fusion_", 7) != 0 ||
                 fb_size_parse(w->kase + 7, &threshold, why, sizeof why) != FB_OK)
            continue;
        if (fb_fusion_plan(&d, strcmp(w->dtype, "float16") == 0 ? 2 : 4, threshold, &b, &nb) != FB_OK)
            continue;
        free(b);
        pct = (w->st.median / flat->st.median - 1.0) * 100.0;
        if (alg && bus)
            fb_out("  %5d %-8s %-14s %8zu %12.1f %10.3f %10.3f %8.1f%%\n", w->ranks, w->dtype,
                   w->kase, nb, w->st.median, alg->st.median, bus->st.median, pct);
        else
            fb_out("  %5d %-8s %-14s %8zu %12.1f %10s %10s %8.1f%%\n", w->ranks, w->dtype,
                   w->kase, nb, w->st.median, "-", "-", pct);
        extra = *w;
        snprintf(extra.metric, sizeof extra.metric, "overhead_vs_flat");
        snprintf(extra.unit, sizeof extra.unit, "%%");
        extra.st = (struct fb_stats){.samples = 1, .median = pct, .p05 = pct, .p95 = pct,
                                     .min = pct, .max = pct, .mean = pct, .stddev = 0.0};
        extra.detail = true;
        if (fb_results_add(res, &extra) != FB_OK)
            break;
    }
    if (one_rank)
        fb_out("# on one rank nothing crosses a fabric: those times are the calls' own cost\n");
    fb_densenet_free(&d);
}

const struct fb_bench fb_bench_densenet_allreduce = {
    .name = "densenet_allreduce",
    .summary = "DenseNet-121's gradient exchange per step: per tensor, fused (Horovod, DDP), "
               "flat; fp32 and fp16",
    .needs = FB_NEEDS_COLL | FB_SCALES,
    .min_ranks = 1,
    .plan = grad_plan,
    .setup = grad_setup,
    .iterate = grad_iterate,
    .verify = grad_verify,
    .teardown = grad_teardown,
    .summarize = grad_summarize,
};
