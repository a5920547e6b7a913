/* step: a DenseNet-121 data-parallel training step as Horovod or PyTorch DDP runs it: the input
 * pipeline's batch, its copy to the device, forward and backward on our kernels, the gradients
 * all-reduced in fusion buckets while backward runs (or after it, to compare), and an SGD
 * momentum update (harness/train/train_step.c). Per GPU count and batch: images/s in total and per
 * GPU, scaling efficiency against one GPU, and the step split into data wait, copy, compute,
 * exposed communication, update and the rest, with the GPU busy and input stall fractions.
 * One point's first steps after warm-up go to a Chrome-trace timeline.json. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "conv_engine.h"
#include "densenet.h"
#include "fusion.h"
#include "input_pipeline.h"
#include "log.h"
#include "memfit.h"
#include "overlap.h"
#include "registry.h"
#include "trace.h"
#include "train_step.h"
#include "units.h"

enum {
    HOST_RESOLUTION = 64, CUDA_RESOLUTION = 224,
    HOST_BATCH_CAP = 4,   /* a default host run stays short: 1, 2, 4 */
    CUDA_BATCH_CAP = 512,
    TRACE_STEPS = 5,      /* steps in the timeline */
    TRACE_PER_STEP = 8 + 512, /* spans of a step: its phases and up to 512 buckets (DenseNet-121
                                 has 364 tensors, the most buckets there can be) */
    HISTORY = 1 << 16,    /* steps remembered for the per-trial means */
};
static const size_t DEFAULT_THRESHOLD = (size_t)25 << 20; /* DDP's bucket_cap_mb = 25 */
static const size_t HOST_BUDGET = (size_t)1 << 30;         /* memfit's host default */

/* variant bits: overlap, the traced point, and the agreed worker count above them */
enum { V_OVERLAP = 1, V_TRACE = 2, V_THREADS_SHIFT = 8 };

struct step_state {
    const struct fb_ctx *ctx;
    struct fb_train_step *ts;
    struct fb_trace trace;
    bool tracing;
    long steps;                       /* steps run since setup */
    struct fb_step_times *history;    /* the last HISTORY steps, step n at n % HISTORY */
};

/* Rank 0: the traced point's spans, kept until summarize writes them. */
static struct {
    struct fb_span *spans;
    size_t n;
    int ranks;
} timeline;

static bool on_host(const struct fb_ctx *ctx) { return ctx->be->on_cpu; }

static long resolution_of(const struct fb_ctx *ctx)
{
    return ctx->opt->resolution > 0 ? ctx->opt->resolution
                                    : on_host(ctx) ? HOST_RESOLUTION : CUDA_RESOLUTION;
}

/* The smallest of every rank's default worker count: the plan must be the same everywhere.
 * Host: one worker, so the CPUs stay with the compute (the host's "GPU"). Collective. */
static int agreed_threads(const struct fb_ctx *ctx)
{
    int mine = ctx->opt->threads > 0 ? (int)ctx->opt->threads
                                     : on_host(ctx) ? 1 : fb_pipeline_cpus(),
        all = mine;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ctx->s->world.comm);
    return all;
}

/* Default batches: 1, 2, 4, ... up to the largest memfit's model says fits every rank's
 * device (host: the --memory-budget, 1G by default; host-strict with --device-memory: that), at most HOST_BATCH_CAP on host. With
 * SGD momentum's one fp32 state per weight. Collective. */
static size_t default_batches(const struct fb_ctx *ctx, enum fb_conv_prec prec, long *out,
                              size_t cap)
{
    struct fb_memfit_config cfg = {(int)resolution_of(ctx), ctx->opt->classes,
                                   prec == FB_CONV_FP32 ? 4 : 2, 1,
                                   ctx->opt->fp16_allreduce ? 2 : 4};
    unsigned long long mine = 0, least = 0;
    size_t free_bytes = 0, total = 0, n = 0;
    long fit, limit;

    if (on_host(ctx) && !fb_backend_capacity(ctx->be))
        mine = ctx->opt->memory_budget ? ctx->opt->memory_budget : HOST_BUDGET;
    else if (ctx->be->mem_info(&free_bytes, &total) == FB_OK)
        mine = free_bytes;
    MPI_Allreduce(&mine, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->s->world.comm);
    fit = fb_memfit_batch_for(&cfg, (size_t)least);
    limit = on_host(ctx) ? HOST_BATCH_CAP : CUDA_BATCH_CAP;
    for (long b = 1; b <= fit && b <= limit && n < cap; b *= 2)
        out[n++] = b;
    return n;
}

static fb_status step_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    static bool noted;
    const struct fb_options *o = ctx->opt;
    const struct fb_conv_engine *eng = fb_conv_engine_for(ctx->be);
    bool rank0 = ctx->s->world.rank == 0, overlap_ok;
    long batches[FB_MAX_SIZES];
    size_t nb, nthr = o->nthresholds ? o->nthresholds : 1, k = 0;
    const size_t *thresholds = o->nthresholds ? o->thresholds : &DEFAULT_THRESHOLD;
    int modes[2], nmodes = 0, threads;
    enum fb_conv_prec prec;
    enum fb_dtype dtype = o->fp16_allreduce ? FB_DTYPE_FLOAT16 : FB_DTYPE_FLOAT32;
    struct fb_densenet model;
    struct fb_densenet_layers one;
    struct fb_case *cases;
    double image_flops;
    char why[200];
    fb_status st;

    *out = NULL;
    *n = 0;
    /* a dry run plans as the described GPU would, engine or not (run_plan.h) */
    if (!eng || (!eng->built && !o->dry_run)) {
        if (rank0)
            fb_warn("step waived on %s: no convolution engine built for it", ctx->be->name);
        return FB_OK;
    }
    if (fb_conv_prec_parse(o->precision, on_host(ctx) ? FB_CONV_FP32 : FB_CONV_FP16, &prec) !=
        FB_OK)
        return FB_ERR_USAGE;
    if (on_host(ctx) && prec != FB_CONV_FP32) {
        if (rank0)
            fb_warn("step waived: --precision %s on host (OpenBLAS runs fp32 only here)",
                    fb_conv_prec_name(prec));
        return FB_OK;
    }
    threads = agreed_threads(ctx);
    if (o->nbatches) {
        memcpy(batches, o->batches, o->nbatches * sizeof *batches);
        nb = o->nbatches;
    } else if ((nb = default_batches(ctx, prec, batches, FB_MAX_SIZES)) == 0) {
        if (rank0)
            fb_warn("step waived: memfit's model says not even one image fits at resolution %ld",
                    resolution_of(ctx));
        return FB_OK;
    }
    overlap_ok = fb_overlap_possible(ctx->s->coll, why, sizeof why);
    if (strcmp(o->overlap, "off") != 0) {
        if (overlap_ok)
            modes[nmodes++] = 1;
        else if (rank0 && !noted)
            fb_warn("step: overlap off: %s", why);
    }
    if (strcmp(o->overlap, "on") != 0 || nmodes == 0)
        modes[nmodes++] = 0;
    noted = true;
    if ((st = fb_densenet121(o->classes, &model)) != FB_OK)
        return st;
    /* one image's forward and backward, for a dry run's floor (not reported: run_plan.h) */
    if ((st = fb_densenet_layers_build(1, (int)resolution_of(ctx), o->classes, &one)) != FB_OK) {
        fb_densenet_free(&model);
        return st;
    }
    image_flops = 2.0 * fb_densenet_step_macs(&one);
    fb_densenet_layers_free(&one);
    if (!(cases = calloc(nb * nthr * (size_t)nmodes, sizeof *cases))) {
        fb_densenet_free(&model);
        return FB_ERR_NOMEM;
    }
    for (size_t b = 0; b < nb; b++)
        for (size_t t = 0; t < nthr; t++)
            for (int m = 0; m < nmodes; m++) {
                struct fb_case *c = &cases[k++];
                snprintf(c->name, sizeof c->name, "%s", modes[m] ? "step" : "step_no_overlap");
                snprintf(c->transport, sizeof c->transport, "%s",
                         ctx->s->coll->transport(ctx->world_coll));
                c->report = FB_REPORT_THROUGHPUT;
                c->active = FB_ALL_RANKS;
                c->batch = batches[b];
                c->items = (double)batches[b] * ctx->ranks; /* images/s of the whole group */
                c->work_flops = image_flops * (double)batches[b];
                c->bytes = thresholds[t];
                c->bytes_label = true;
                c->aux = (long)thresholds[t];
                c->typed = true;
                c->dtype = dtype;
                c->count = model.parameters;
                c->redop = "sum";
                c->variant = (modes[m] ? V_OVERLAP : 0) | (threads << V_THREADS_SHIFT);
            }
    /* The timeline: the first point on every rank of the job. */
    if (k > 0 && ctx->ranks == ctx->s->world.size)
        cases[0].variant |= V_TRACE;
    fb_densenet_free(&model);
    *out = cases;
    *n = k;
    return FB_OK;
}

static void step_teardown(void *p)
{
    struct step_state *s = p;

    if (!s)
        return;
    fb_train_step_free(s->ts);
    fb_trace_release(&s->trace);
    free(s->history);
    free(s);
}

static fb_status step_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                            struct fb_stream *stream, void **state)
{
    const struct fb_options *o = ctx->opt;
    struct step_state *s = NULL;
    struct fb_train_step_config cfg;
    int threads = c->variant >> V_THREADS_SHIFT, rank = 0;
    double origin = 0.0;
    enum fb_conv_prec prec;
    fb_status st;

    *state = NULL;
    /* Collective first, before anything can fail: the ranks' clocks meet at a barrier, and
     * each takes its timeline's origin as it leaves. */
    if (c->variant & V_TRACE) {
        MPI_Barrier(ctx->comm);
        origin = fb_clock_now_us();
    }
    if (!(s = calloc(1, sizeof *s)) || !(s->history = calloc(HISTORY, sizeof *s->history))) {
        free(s);
        return FB_ERR_NOMEM;
    }
    s->ctx = ctx;
    if ((c->variant & V_TRACE) &&
        (st = fb_trace_init(&s->trace, TRACE_STEPS * TRACE_PER_STEP)) != FB_OK)
        goto fail;
    if (c->variant & V_TRACE) {
        s->tracing = true;
        MPI_Comm_rank(ctx->comm, &s->trace.rank);
        s->trace.origin_us = origin;
    }
    if ((st = fb_conv_prec_parse(o->precision, on_host(ctx) ? FB_CONV_FP32 : FB_CONV_FP16,
                                 &prec)) != FB_OK)
        goto fail;
    MPI_Comm_rank(ctx->comm, &rank);
    cfg = (struct fb_train_step_config){
        .be = ctx->be, .coll = ctx->s->coll, .comm = ctx->coll_comm, .rank = rank,
        .ranks = ctx->ranks, .batch = (int)c->batch, .resolution = (int)resolution_of(ctx),
        .classes = o->classes, .prec = prec, .dataset = o->dataset, .threads = threads,
        .depth = o->prefetch > 0 ? (int)o->prefetch : 2 * threads,
        .host_kind = o->pageable ? FB_MEM_PAGEABLE : FB_MEM_PINNED, .threshold = (size_t)c->aux,
        .fp16_allreduce = c->dtype == FB_DTYPE_FLOAT16, .overlap = (c->variant & V_OVERLAP) != 0,
        .stream = stream, .skip_bucket = -1};
    if ((st = fb_train_step_create(&cfg, &s->ts)) != FB_OK)
        goto fail;
    *state = s;
    return FB_OK;
fail:
    step_teardown(s);
    return st;
}

static fb_status step_iterate(void *p)
{
    struct step_state *s = p;
    long warmup = s->ctx->opt->warmup;
    bool traced = s->tracing && s->steps >= warmup && s->steps < warmup + TRACE_STEPS;
    fb_status st = fb_train_step_run(s->ts, traced ? &s->trace : NULL,
                                     (int)(s->steps - warmup), &s->history[s->steps % HISTORY]);

    s->steps++;
    return st;
}

/* The trial's figures: the means over its `iters` steps (the last ones run). */
static fb_status step_trial_values(void *p, long iters, struct fb_value *out, size_t *n)
{
    const struct step_state *s = p;
    long k = iters < s->steps ? iters : s->steps;
    double sum[6] = {0}, mean[6], parts = 0.0;

    k = k < HISTORY ? k : HISTORY;
    for (long i = s->steps - k; i < s->steps; i++) {
        const struct fb_step_times *t = &s->history[i % HISTORY];
        sum[0] += t->step_us;
        sum[1] += t->data_wait_us;
        sum[2] += t->h2d_us;
        sum[3] += t->compute_us;
        sum[4] += t->comm_exposed_us;
        sum[5] += t->update_us;
    }
    for (int i = 0; i < 6; i++)
        mean[i] = k > 0 ? sum[i] / (double)k : 0.0;
    for (int i = 1; i < 6; i++)
        parts += mean[i];
    {
        const struct fb_value v[] = {
            {"data_wait_us", "us", mean[1]},
            {"h2d_us", "us", mean[2]},
            {"compute_us", "us", mean[3]},
            {"comm_exposed_us", "us", mean[4]},
            {"update_us", "us", mean[5]},
            {"other_us", "us", mean[0] - parts},
            /* the device's own work over the step: what nvidia-smi's utilization approaches */
            {"gpu_busy_fraction", "fraction", mean[0] > 0 ? (mean[3] + mean[5]) / mean[0] : 0.0},
            {"stall_fraction", "fraction", mean[0] > 0 ? mean[1] / mean[0] : 0.0},
        };
        memcpy(out, v, sizeof v);
        *n = sizeof v / sizeof v[0];
    }
    return FB_OK;
}

static fb_status step_verify(void *p, size_t *wrong)
{
    struct step_state *s = p;
    struct fb_span *all = NULL;
    size_t nall = 0;
    fb_status st = FB_OK;

    /* The traced point runs on every rank: its spans meet on rank 0 first, collectively. */
    if (s->tracing) {
        st = fb_trace_gather(&s->trace, s->ctx->comm, &all, &nall);
        if (s->trace.rank == 0 && st == FB_OK) {
            free(timeline.spans);
            timeline.spans = all;
            timeline.n = nall;
            timeline.ranks = s->ctx->ranks;
        } else {
            free(all);
        }
        if (s->trace.dropped)
            fb_warn("step: %zu timeline spans did not fit and were left out", s->trace.dropped);
    }
    if (st == FB_OK)
        st = fb_train_step_check(s->ts, wrong);
    return st;
}

/* Rank 0: the `metric` row of bench step with these keys, from `first` on. */
static const struct fb_row *find_row(const struct fb_results *res, size_t first,
                                      const struct fb_row *like, int ranks, const char *metric)
{
    for (size_t i = first; i < res->nrows; i++) {
        const struct fb_row *w = &res->rows[i];
        if (strcmp(w->bench, "step") == 0 && w->ranks == ranks && w->batch == like->batch &&
            w->bytes == like->bytes && strcmp(w->kase, like->kase) == 0 &&
            strcmp(w->dtype, like->dtype) == 0 && strcmp(w->metric, metric) == 0)
            return w;
    }
    return NULL;
}

static void scaled_row(struct fb_results *res, const struct fb_row *like, const char *metric,
                       const char *unit, double factor)
{
    struct fb_row row = *like;

    snprintf(row.metric, sizeof row.metric, "%s", metric);
    snprintf(row.unit, sizeof row.unit, "%s", unit);
    row.st.median *= factor;
    row.st.p05 *= factor;
    row.st.p95 *= factor;
    row.st.min *= factor;
    row.st.max *= factor;
    row.st.mean *= factor;
    row.st.stddev *= factor;
    fb_results_add(res, &row);
}

static void one_sample_row(struct fb_results *res, const struct fb_row *like, const char *metric,
                           const char *unit, double v)
{
    struct fb_row row = *like;

    snprintf(row.metric, sizeof row.metric, "%s", metric);
    snprintf(row.unit, sizeof row.unit, "%s", unit);
    row.st = (struct fb_stats){.samples = 1, .median = v, .p05 = v, .p95 = v, .min = v,
                               .max = v, .mean = v, .stddev = 0.0};
    fb_results_add(res, &row);
}

static double median_of(const struct fb_results *res, size_t first, const struct fb_row *like,
                        const char *metric)
{
    const struct fb_row *w = find_row(res, first, like, like->ranks, metric);
    return w ? w->st.median : NAN;
}

/* Rank 0: images/s per GPU (the total's statistics over the group's size, trial by trial),
 * scaling efficiency against one GPU (a ratio of medians: one sample), a table of the split,
 * and the timeline. */
static void step_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    size_t nrows = res->nrows, more = 0;
    char path[4200], size[24];

    for (size_t i = first; i < nrows; i++)
        more += strcmp(res->rows[i].bench, "step") == 0 &&
                strcmp(res->rows[i].metric, "images_per_s") == 0;
    if (fb_results_reserve(res, 2 * more) != FB_OK) {
        fb_error("step: no memory for the summary rows");
        return;
    }
    fb_out("\n# step: DenseNet-121 training step (%s), %ldx%ld, %s; times in us per step, the "
           "slowest rank's; busy = (compute + update) / step\n", ctx->opt->dataset,
           resolution_of(ctx), resolution_of(ctx), ctx->s->coll->name);
    fb_out("# %5s %-16s %5s %7s %-7s %10s %10s %9s %8s %8s %10s %9s %8s %8s %5s %5s %6s\n",
           "ranks", "case", "batch", "fusion", "dtype", "step_us", "images/s", "per_gpu",
           "data", "h2d", "compute", "exposed", "update", "other", "busy", "stall", "eff");
    for (size_t i = first; i < nrows; i++) {
        const struct fb_row *w = &res->rows[i], *one;
        double eff = NAN;

        if (strcmp(w->bench, "step") != 0 || strcmp(w->metric, "images_per_s") != 0)
            continue;
        scaled_row(res, w, "images_per_s_per_gpu", "images/s", 1.0 / w->ranks);
        if (w->ranks > 1 && (one = find_row(res, first, w, 1, "images_per_s")) &&
            one->st.median > 0) {
            eff = w->st.median / w->ranks / one->st.median;
            one_sample_row(res, w, "scaling_efficiency", "fraction", eff);
        }
        if (w->bytes > 0)
            fb_size_format((size_t)w->bytes, size, sizeof size);
        else
            snprintf(size, sizeof size, "off");
        fb_out("  %5d %-16s %5ld %7s %-7s %10.0f %10.2f %9.2f %8.0f %8.0f %10.0f %9.0f %8.0f "
               "%8.0f %5.2f %5.2f %6.3f\n",
               w->ranks, w->kase, w->batch, size, w->dtype, median_of(res, first, w, "time"),
               w->st.median, w->st.median / w->ranks, median_of(res, first, w, "data_wait_us"),
               median_of(res, first, w, "h2d_us"), median_of(res, first, w, "compute_us"),
               median_of(res, first, w, "comm_exposed_us"), median_of(res, first, w, "update_us"),
               median_of(res, first, w, "other_us"), median_of(res, first, w, "gpu_busy_fraction"),
               median_of(res, first, w, "stall_fraction"), eff);
    }
    fb_out("# exposed: from the end of backward until every bucket is reduced; other: what the "
           "phases leave of the step; eff: per-GPU images/s against 1 rank\n");
    if (timeline.spans) {
        snprintf(path, sizeof path, "%s/timeline.json", res->dir);
        if (fb_trace_write(path, timeline.spans, timeline.n, timeline.ranks) == FB_OK)
            fb_out("# timeline: %s (%zu spans, %d steps after warm-up of the first point on "
                   "all %d ranks; Perfetto or chrome://tracing)\n",
                   path, timeline.n, TRACE_STEPS, timeline.ranks);
        free(timeline.spans);
        memset(&timeline, 0, sizeof timeline);
    }
}

const struct fb_bench fb_bench_step = {
    .name = "step",
    .summary = "DenseNet-121 training step as Horovod/DDP runs it: input pipeline, copy, "
               "forward, backward with bucketed all-reduce overlap, SGD update; images/s, "
               "scaling, the step's split",
    .needs = FB_NEEDS_COLL | FB_SCALES,
    .min_ranks = 1,
    .plan = step_plan,
    .setup = step_setup,
    .iterate = step_iterate,
    .verify = step_verify,
    .teardown = step_teardown,
    .summarize = step_summarize,
    .trial_values = step_trial_values,
};
