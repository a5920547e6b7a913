/* memfit: the largest per-GPU batch of fabricbench's DenseNet-121 training step that fits. The
 * model in harness/model/memfit.c (the one the step allocates by) estimates it from the memory
 * free at the start (or, on host, a budget; host-strict with --device-memory: that device), then
 * every buffer a step holds is really allocated, one by one, to find the batch the device
 * actually takes: the confirmed maximum, and what it leaves of the device's memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "log.h"
#include "memfit.h"
#include "registry.h"

enum { DEFAULT_RESOLUTION = 224, PAGE = 4096 };
static const size_t default_host_budget = (size_t)1 << 30;

struct memfit_state {
    const struct fb_backend *be;
    struct fb_memfit_config cfg;
    size_t budget;       /* what the batch must fit in */
    size_t total;        /* the device's memory (host: the budget) */
    bool host;           /* the budget is ours to enforce */
    long estimate, confirmed;
    size_t bytes_estimate, bytes_confirmed, per_image, fixed;
    double fraction;     /* of the device's memory in use while holding the confirmed batch */
};

static int act_bytes_of(const char *precision) { return strcmp(precision, "fp32") == 0 ? 4 : 2; }

static const char *precision_of(const struct fb_ctx *ctx)
{
    if (ctx->opt->precision[0])
        return ctx->opt->precision;
    return ctx->be->on_cpu ? "fp32" : "fp16";
}

static int opt_slots_of(const char *optimizer)
{
    return strcmp(optimizer, "adam") == 0 ? 2 : strcmp(optimizer, "momentum") == 0 ? 1 : 0;
}

static fb_status memfit_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    struct fb_case *c = calloc(1, sizeof *c);
    long res = ctx->opt->resolution ? ctx->opt->resolution : DEFAULT_RESOLUTION;

    if (!c)
        return FB_ERR_NOMEM;
    snprintf(c->name, sizeof c->name, "%s_%s_r%ld", precision_of(ctx), ctx->opt->optimizer, res);
    snprintf(c->transport, sizeof c->transport, "%s",
             ctx->be->on_cpu ? "malloc" : "cudaMalloc");
    c->active = FB_ALL_RANKS; /* every GPU answers for itself; the point is the smallest */
    c->per_rank = true;
    c->report = FB_REPORT_THROUGHPUT;
    *out = c;
    *n = 1;
    return FB_OK;
}

/* Allocates every buffer of a step at `batch`, one by one as a framework would, and frees
 * them. FB_ERR_NOMEM when the device (or, on host, the budget) runs out. While they are held,
 * *in_use is the device memory in use (host: the bytes held, pages rounded). */
static fb_status fits(struct memfit_state *s, long batch, size_t *held, double *in_use)
{
    struct fb_memfit_buf *bufs = NULL;
    size_t n = 0, i = 0, used = 0;
    void **ptrs = NULL;
    fb_status st;

    *held = 0;
    if ((st = fb_memfit_plan(&s->cfg, (int)batch, FB_MEMFIT_ALL, &bufs, &n)) != FB_OK)
        return st;
    if (!(ptrs = calloc(n, sizeof *ptrs))) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < n; i++) {
        size_t rounded = (bufs[i].bytes + PAGE - 1) / PAGE * PAGE;
        if (s->host && used + rounded > s->budget) {
            st = FB_ERR_NOMEM;
            break;
        }
        if ((st = s->be->probe_alloc(bufs[i].bytes, &ptrs[i])) != FB_OK)
            break;
        used += rounded;
        *held += bufs[i].bytes;
    }
    if (st == FB_OK) {
        size_t free_now = 0, total = 0;
        if (!s->host && s->be->mem_info(&free_now, &total) == FB_OK && total)
            *in_use = 1.0 - (double)free_now / (double)total;
        else
            *in_use = (double)used / (double)s->total;
    }
out:
    while (ptrs && i-- > 0)
        s->be->free(FB_MEM_DEVICE, ptrs[i]);
    free(ptrs);
    free(bufs);
    return st;
}

/* The confirmed maximum: up from the estimate in growing steps while it fits, then halving
 * the gap; down by bisection when the estimate itself does not fit. */
static fb_status search(struct memfit_state *s)
{
    long lo = 0, hi, step = 1;       /* lo fits (0: nothing yet), hi does not */
    size_t held;
    double use;
    fb_status st;

    if (s->estimate >= 1 && (st = fits(s, s->estimate, &held, &use)) != FB_ERR_NOMEM) {
        if (st != FB_OK)
            return st;
        lo = s->estimate;
        for (hi = lo + step; (st = fits(s, hi, &held, &use)) == FB_OK; hi = lo + step) {
            lo = hi;
            step *= 2;
        }
    } else {
        hi = s->estimate >= 1 ? s->estimate : 1;
        st = FB_ERR_NOMEM;
    }
    if (st != FB_ERR_NOMEM)
        return st;
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if ((st = fits(s, mid, &held, &use)) == FB_OK)
            lo = mid;
        else if (st == FB_ERR_NOMEM)
            hi = mid;
        else
            return st;
    }
    s->confirmed = lo;
    if (lo >= 1 && (st = fits(s, lo, &s->bytes_confirmed, &s->fraction)) != FB_OK)
        return st; /* it fitted a moment ago: something else took the memory */
    return FB_OK;
}

static fb_status memfit_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                              struct fb_stream *stream, void **state)
{
    struct memfit_state *s = calloc(1, sizeof *s);
    struct fb_memfit_parts parts, two;
    size_t free_bytes = 0, total = 0;
    fb_status st;

    (void)c;
    (void)stream;
    *state = s;
    if (!s)
        return FB_ERR_NOMEM;
    s->be = ctx->be;
    /* a CPU with a device memory (--device-memory) is sized as that device */
    s->host = ctx->be->on_cpu && !fb_backend_capacity(ctx->be);
    s->cfg.resolution = (int)(ctx->opt->resolution ? ctx->opt->resolution : DEFAULT_RESOLUTION);
    s->cfg.classes = ctx->opt->classes;
    s->cfg.act_bytes = act_bytes_of(precision_of(ctx));
    s->cfg.opt_slots = opt_slots_of(ctx->opt->optimizer);
    s->cfg.grad_bytes = ctx->opt->fp16_allreduce ? 2 : 4; /* the step's all-reduced gradients */
    if ((st = s->be->mem_info(&free_bytes, &total)) != FB_OK)
        return st;
    if (s->host) {
        /* The host's memory is everybody's: fit a budget, never more than is available. */
        s->budget = ctx->opt->memory_budget ? ctx->opt->memory_budget : default_host_budget;
        if (s->budget > free_bytes) {
            fb_warn("memfit: budget of %zu bytes is more than the %zu available; using those",
                    s->budget, free_bytes);
            s->budget = free_bytes;
        }
        s->total = s->budget;
    } else {
        s->budget = free_bytes;
        s->total = total;
    }
    s->estimate = fb_memfit_batch_for(&s->cfg, s->budget);
    if ((st = fb_memfit_estimate(&s->cfg, 1, &parts)) != FB_OK ||
        (st = fb_memfit_estimate(&s->cfg, 2, &two)) != FB_OK)
        return st;
    s->per_image = two.total - parts.total;
    s->fixed = parts.total - s->per_image;
    if (s->estimate >= 1 &&
        (st = fb_memfit_estimate(&s->cfg, (int)s->estimate, &parts)) != FB_OK)
        return st;
    s->bytes_estimate = s->estimate >= 1 ? parts.total : 0;
    return search(s);
}

static fb_status memfit_values(void *p, struct fb_value *v, size_t *n)
{
    const struct memfit_state *s = p;
    const struct fb_value out[] = {
        {"batch_estimate", "images", (double)s->estimate},
        {"batch_max", "images", (double)s->confirmed},
        {"bytes_estimate", "bytes", (double)s->bytes_estimate},
        {"bytes_max", "bytes", (double)s->bytes_confirmed},
        {"memory_fraction", "fraction", s->fraction},
        {"bytes_per_image", "bytes", (double)s->per_image},
        {"bytes_fixed", "bytes", (double)s->fixed},
        {"budget", "bytes", (double)s->budget},
    };

    memcpy(v, out, sizeof out);
    *n = sizeof out / sizeof out[0];
    return FB_OK;
}

static void memfit_teardown(void *p) { free(p); }

const struct fb_bench fb_bench_memfit = {
    .name = "memfit",
    .summary = "the largest DenseNet-121 training batch per GPU: estimated, then confirmed by "
               "allocating it",
    .needs = FB_REPORTS_VALUES,
    .min_ranks = 1,
    .plan = memfit_plan,
    .setup = memfit_setup,
    .values = memfit_values,
    .teardown = memfit_teardown,
};
