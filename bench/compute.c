/* compute: a stand-in for a DenseNet-121 training step's compute. Our kernels (the engine of
 * the backend: implicit GEMMs on cuda, im2col + OpenBLAS on host) run the real layer sequence
 * forward and backward for a batch at a resolution; the same GEMM shapes through the vendor
 * BLAS (cuBLAS, OpenBLAS) give the ceiling; each layer group is timed alone, forward and
 * backward. The summary gives our efficiency against the ceiling per group and overall, and
 * when each weight gradient was ready in the backward pass (what the training step overlaps
 * its all-reduces with). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "compute.h"
#include "conv_engine.h"
#include "densenet_step.h"
#include "log.h"
#include "registry.h"

enum { V_STEP_OURS, V_STEP_REF, V_STEP_CONVS, V_FWD, V_BWD, V_FWD_REF, V_BWD_REF, V_COUNT };
/* variant = kind | LAST: the last case of a batch and mode, which frees the shared step */
enum { V_KIND = 0xff, V_LAST = 0x100 };

enum { HOST_BATCH = 8, HOST_RESOLUTION = 64, CUDA_BATCH = 32, CUDA_RESOLUTION = 224 };
enum { MAX_RECORDS = 8, MAX_READY = 512 };

/* Every case of one batch uses the same step (its buffers, filled by one whole step): made by
 * the first setup, kept between cases (a group alone reads what the whole step left, and
 * refilling it per case would cost a step each), freed by the teardown of the last case or by
 * a failed setup. Each setup moves it to its case's stream (the runner destroys a case's
 * stream with the case). One per process: a rank runs one case at a time. */
static struct shared {
    const struct fb_backend *be;
    const struct fb_conv_engine *eng;
    struct fb_conv_ctx *ctx;
    struct fb_densenet_layers layers;
    struct fb_densenet_step *step;
    long batch, resolution;
    enum fb_conv_prec prec;
    bool ready;
} shared;

/* Rank 0's grad-ready times, per batch, taken by the verification of its step_ours alone. */
static struct record {
    long batch;
    size_t n;
    struct {
        char name[48];
        double us;
    } items[MAX_READY];
} records[MAX_RECORDS];
static size_t nrecords;

struct compute_state {
    const struct fb_ctx *ctx;
    const struct fb_case *c;
    struct fb_stream *stream;
    int kind, group;
    bool record; /* rank 0 alone: keep the grad-ready times */
};

/* A defect put back for a test (FB_REPLAY=NAME); never set in a real run. */
static bool replay(const char *name)
{
    const char *e = getenv("FB_REPLAY");
    return e && strcmp(e, name) == 0;
}

static long default_batch(const struct fb_backend *be)
{
    return be->on_cpu ? HOST_BATCH : CUDA_BATCH;
}

static long resolution_of(const struct fb_ctx *ctx)
{
    if (ctx->opt->resolution > 0)
        return ctx->opt->resolution;
    return ctx->be->on_cpu ? HOST_RESOLUTION : CUDA_RESOLUTION;
}

static enum fb_conv_prec default_prec(const struct fb_backend *be)
{
    return be->on_cpu ? FB_CONV_FP32 : FB_CONV_FP16;
}

static void shared_release(void)
{
    if (shared.eng)
        shared.eng->close(shared.ctx);
    fb_densenet_step_free(shared.step);
    fb_densenet_layers_free(&shared.layers);
    memset(&shared, 0, sizeof shared);
}

static fb_status add_case(struct fb_case *c, const struct fb_ctx *ctx, long batch, int kind,
                          int group, int active, const struct fb_densenet_layers *d,
                          const char *ours, const char *ref)
{
    static const char *const pass[] = {[V_FWD] = "fwd", [V_BWD] = "bwd", [V_FWD_REF] = "fwd",
                                       [V_BWD_REF] = "bwd"};
    unsigned passes = kind == V_FWD || kind == V_FWD_REF   ? FB_STEP_FWD
                      : kind == V_BWD || kind == V_BWD_REF ? FB_STEP_BWD
                                                           : FB_STEP_BOTH;
    bool is_ref = kind == V_STEP_REF || kind == V_FWD_REF || kind == V_BWD_REF;

    (void)ctx;
    if (kind <= V_STEP_CONVS)
        snprintf(c->name, sizeof c->name, "%s",
                 kind == V_STEP_OURS ? "step_ours" : kind == V_STEP_REF ? "step_ref" : "step_convs");
    else
        snprintf(c->name, sizeof c->name, "%s_%s%s", pass[kind], fb_layer_group_names[group],
                 is_ref ? "_ref" : "");
    snprintf(c->transport, sizeof c->transport, "%s", is_ref ? ref : ours);
    c->report = FB_REPORT_THROUGHPUT;
    c->active = active;
    c->per_rank = active == FB_ALL_RANKS;
    c->batch = batch;
    c->items = kind <= V_STEP_CONVS ? (double)batch : 0.0; /* a group is not a whole image */
    c->flops = 2.0 * fb_densenet_run_macs(d, kind <= V_STEP_CONVS ? FB_STEP_ALL_GROUPS : group,
                                          passes);
    c->variant = kind;
    c->aux = group;
    /* the headline: our step and its ceiling; the rest feeds the summary's tables */
    c->detail = kind != V_STEP_OURS && kind != V_STEP_REF;
    return FB_OK;
}

/* The engine of the step on this backend and its names (ours, and the ceiling's: ref), each
 * "ENGINE-PRECISION". FB_ERR_UNSUPPORTED where compute is waived (said on stderr when `say`): no
 * engine built for the backend (a dry run plans as the described GPU would, engine or not:
 * run_plan.h), or a precision the host does not run; FB_ERR_USAGE for a bad --precision. */
static fb_status step_engine(const struct fb_ctx *ctx, bool say, char ours[24], char ref[24])
{
    const struct fb_conv_engine *eng = fb_conv_engine_for(ctx->be);
    enum fb_conv_prec prec;

    if (!eng || (!eng->built && !ctx->opt->dry_run)) {
        if (say)
            fb_warn("compute waived on %s: no convolution engine built for it (the CUDA "
                    "kernels of kernels/conv_gemm.h)", ctx->be->name);
        return FB_ERR_UNSUPPORTED;
    }
    if (fb_conv_prec_parse(ctx->opt->precision, default_prec(ctx->be), &prec) != FB_OK)
        return FB_ERR_USAGE;
    if (ctx->be->on_cpu && prec != FB_CONV_FP32) {
        if (say)
            fb_warn("compute waived: --precision %s on host (OpenBLAS runs fp32 only here); "
                    "use --precision fp32", fb_conv_prec_name(prec));
        return FB_ERR_UNSUPPORTED;
    }
    snprintf(ours, 24, "%s-%s", eng->describe(false), fb_conv_prec_name(prec));
    snprintf(ref, 24, "%s-%s", eng->describe(true), fb_conv_prec_name(prec));
    return FB_OK;
}

static fb_status compute_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    const struct fb_options *o = ctx->opt;
    long one_batch = default_batch(ctx->be);
    const long *batches = o->nbatches ? o->batches : &one_batch;
    size_t nb = o->nbatches ? o->nbatches : 1, k = 0;
    int size = ctx->s->world.size, modes = size > 1 ? 2 : 1;
    size_t per_alone = 3 + 4 * FB_LAYER_GROUPS, per_all = 2;
    char ours[24], ref[24];
    struct fb_case *cases;
    fb_status st = FB_OK;

    *out = NULL;
    *n = 0;
    if ((st = step_engine(ctx, ctx->s->world.rank == 0, ours, ref)) == FB_ERR_UNSUPPORTED)
        return FB_OK;
    if (st != FB_OK)
        return st;
    if (!(cases = calloc(nb * (per_alone + (modes > 1 ? per_all : 0)), sizeof *cases)))
        return FB_ERR_NOMEM;
    for (size_t b = 0; b < nb && st == FB_OK; b++) {
        struct fb_densenet_layers d;
        if ((st = fb_densenet_layers_build((int)batches[b], (int)resolution_of(ctx), o->classes,
                                           &d)) != FB_OK)
            break;
        /* Rank 0 alone: the whole step, its ceiling, and every group; then, with more ranks,
         * all ranks at once (do they slow each other down: shared cores, memory, power?). */
        add_case(&cases[k++], ctx, batches[b], V_STEP_OURS, -1, 0, &d, ours, ref);
        add_case(&cases[k++], ctx, batches[b], V_STEP_REF, -1, 0, &d, ours, ref);
        add_case(&cases[k++], ctx, batches[b], V_STEP_CONVS, -1, 0, &d, ours, ref);
        for (int g = 0; g < FB_LAYER_GROUPS; g++)
            for (int kind = V_FWD; kind <= V_BWD_REF; kind++)
                add_case(&cases[k++], ctx, batches[b], kind, g, 0, &d, ours, ref);
        cases[k - 1].variant |= V_LAST;
        if (modes > 1) {
            add_case(&cases[k++], ctx, batches[b], V_STEP_OURS, -1, FB_ALL_RANKS, &d, ours, ref);
            add_case(&cases[k++], ctx, batches[b], V_STEP_REF, -1, FB_ALL_RANKS, &d, ours, ref);
            cases[k - 1].variant |= V_LAST;
        }
        fb_densenet_layers_free(&d);
    }
    if (st != FB_OK) {
        free(cases);
        return st;
    }
    *out = cases;
    *n = k;
    return FB_OK;
}

fb_status fb_compute_step_case(const struct fb_ctx *ctx, long batch, struct fb_case *c)
{
    struct fb_densenet_layers d;
    char ours[24], ref[24];
    fb_status st;

    memset(c, 0, sizeof *c);
    if ((st = step_engine(ctx, false, ours, ref)) != FB_OK)
        return st;
    if (batch <= 0)
        batch = default_batch(ctx->be);
    if ((st = fb_densenet_layers_build((int)batch, (int)resolution_of(ctx), ctx->opt->classes,
                                       &d)) != FB_OK)
        return st;
    add_case(c, ctx, batch, V_STEP_OURS, -1, FB_ALL_RANKS, &d, ours, ref);
    c->variant |= V_LAST; /* the one case of its step: its teardown frees the step */
    fb_densenet_layers_free(&d);
    return FB_OK;
}

static void compute_teardown(void *p)
{
    struct compute_state *s = p;

    if (s && (s->c->variant & V_LAST))
        shared_release();
    free(s);
}

/* The shared step for this case's batch: reused, or made and filled by one whole step. */
static fb_status shared_get(const struct fb_ctx *ctx, const struct fb_case *c,
                            struct fb_stream *stream)
{
    long res = resolution_of(ctx);
    enum fb_conv_prec prec;
    char why[256] = "";
    fb_status st;

    if ((st = fb_conv_prec_parse(ctx->opt->precision, default_prec(ctx->be), &prec)) != FB_OK)
        return st;
    if (shared.ready && shared.batch == c->batch && shared.resolution == res &&
        shared.prec == prec && shared.be == ctx->be)
        return FB_OK;
    shared_release();
    shared.be = ctx->be;
    shared.batch = c->batch;
    shared.resolution = res;
    shared.prec = prec;
    shared.eng = fb_conv_engine_for(ctx->be);
    if ((st = shared.eng->open(ctx->be, prec, &shared.ctx, why, sizeof why)) != FB_OK) {
        fb_error("compute: cannot open the %s engine for %s: %s", shared.eng->name,
                 fb_conv_prec_name(prec), why);
        shared.eng = NULL;
        goto fail;
    }
    if ((st = fb_densenet_layers_build((int)c->batch, (int)res, ctx->opt->classes,
                                       &shared.layers)) != FB_OK ||
        (st = fb_densenet_step_create(&shared.layers, ctx->be, shared.eng, shared.ctx, prec,
                                      FB_STEP_WITH_TRAIN | FB_STEP_WITH_REF, stream,
                                      &shared.step)) != FB_OK ||
        (st = fb_densenet_step_run(shared.step, FB_STEP_OURS, FB_STEP_ALL_GROUPS,
                                   FB_STEP_BOTH)) != FB_OK ||
        (st = ctx->be->stream_sync(stream)) != FB_OK)
        goto fail;
    shared.ready = true;
    return FB_OK;
fail:
    shared_release(); /* a failed setup leaves nothing behind */
    return st;
}

static fb_status compute_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                               struct fb_stream *stream, void **state)
{
    struct compute_state *s = calloc(1, sizeof *s);
    int kind = c->variant & V_KIND;
    const char *missing;
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    *s = (struct compute_state){.ctx = ctx, .c = c, .stream = stream, .kind = kind,
                                .group = (int)c->aux,
                                .record = c->active == 0 && ctx->s->world.rank == 0};
    if ((st = shared_get(ctx, c, stream)) != FB_OK) {
        free(s);
        return st;
    }
    /* The step's work is timed on this case's stream: the first case's is destroyed by now.
     * FB_REPLAY=compute-stream keeps it, as compute once did, for the test that shows
     * host-strict catching it (docs/strict.md). */
    if (!replay("compute-stream") &&
        (st = fb_densenet_step_use_stream(shared.step, stream)) != FB_OK) {
        shared_release();
        free(s);
        return st;
    }
    if ((kind == V_STEP_REF || kind == V_FWD_REF || kind == V_BWD_REF) &&
        (missing = shared.eng->ref_missing(shared.ctx))) {
        if (ctx->s->world.rank == 0)
            fb_warn("compute %s waived: %s", c->name, missing);
        if (c->variant & V_LAST)
            shared_release();
        free(s);
        return FB_ERR_UNSUPPORTED;
    }
    *state = s;
    return FB_OK;
}

static fb_status compute_iterate(void *p)
{
    struct compute_state *s = p;

    switch (s->kind) {
    case V_STEP_OURS:
        return fb_densenet_step_run(shared.step, FB_STEP_OURS, FB_STEP_ALL_GROUPS, FB_STEP_BOTH);
    case V_STEP_CONVS:
        return fb_densenet_step_run(shared.step, FB_STEP_CONVS, FB_STEP_ALL_GROUPS, FB_STEP_BOTH);
    case V_STEP_REF:
        return fb_densenet_step_run(shared.step, FB_STEP_REF, FB_STEP_ALL_GROUPS, FB_STEP_BOTH);
    case V_FWD: return fb_densenet_step_run(shared.step, FB_STEP_OURS, s->group, FB_STEP_FWD);
    case V_BWD: return fb_densenet_step_run(shared.step, FB_STEP_OURS, s->group, FB_STEP_BWD);
    case V_FWD_REF: return fb_densenet_step_run(shared.step, FB_STEP_REF, s->group, FB_STEP_FWD);
    default: return fb_densenet_step_run(shared.step, FB_STEP_REF, s->group, FB_STEP_BWD);
    }
}

/* The last 3x3 convolution of the sequence (the smallest map), at its real shape for up to
 * two images: each pass of our engine against a direct convolution in double. */
static fb_status check_conv(struct compute_state *s, bool all_passes, size_t *wrong)
{
    const struct fb_densenet_layers *d = &shared.layers;
    struct fb_kconv cv = {0};
    fb_status st = FB_OK;

    for (size_t i = 0; i < d->nlayers; i++)
        if (d->layers[i].kind == FB_LAYER_CONV && d->layers[i].r == 3)
            cv = fb_layer_kconv(&d->layers[i]);
    cv.n = cv.n < 2 ? cv.n : 2;
    for (int pass = FB_CONV_FWD; pass <= FB_CONV_WGRAD && st == FB_OK; pass++) {
        size_t bad = 0;
        st = fb_conv_check(shared.eng, shared.ctx, s->ctx->be, shared.prec, &cv, pass,
                           17u + (uint32_t)pass, s->stream, &bad);
        *wrong += bad;
    }
    if (st == FB_OK && all_passes) {
        /* and the strided 7x7 stem convolution, one image */
        size_t bad = 0;
        cv = fb_layer_kconv(&d->layers[0]);
        cv.n = 1;
        st = fb_conv_check(shared.eng, shared.ctx, s->ctx->be, shared.prec, &cv, FB_CONV_FWD,
                           23u, s->stream, &bad);
        *wrong += bad;
    }
    return st;
}

static void record_grad_ready(long batch)
{
    struct fb_grad_ready *g = calloc(MAX_READY, sizeof *g);
    struct record *r = NULL;
    size_t n;

    if (!g)
        return;
    for (size_t i = 0; i < nrecords; i++)
        if (records[i].batch == batch)
            r = &records[i];
    if (!r && nrecords < MAX_RECORDS)
        r = &records[nrecords++];
    if (r) {
        n = fb_densenet_step_grad_ready(shared.step, g, MAX_READY);
        r->batch = batch;
        r->n = 0;
        for (size_t i = 0; i < n && i < MAX_READY; i++) {
            const struct fb_layer *l = &shared.layers.layers[g[i].layer];
            if (l->kind != FB_LAYER_CONV && l->kind != FB_LAYER_LINEAR)
                continue; /* one row per weight tensor of a GEMM keeps the CSV small */
            snprintf(r->items[r->n].name, sizeof r->items[r->n].name, "%.47s", l->name);
            r->items[r->n++].us = g[i].us;
        }
    }
    free(g);
}

static fb_status compute_verify(void *p, size_t *wrong)
{
    struct compute_state *s = p;
    unsigned passes = s->kind == V_FWD ? FB_STEP_FWD : s->kind == V_BWD ? FB_STEP_BWD : FB_STEP_BOTH;
    int group = s->kind == V_FWD || s->kind == V_BWD ? s->group : FB_STEP_ALL_GROUPS;
    size_t bad = 0;
    fb_status st;

    *wrong = 0;
    if (s->kind == V_STEP_REF || s->kind == V_FWD_REF || s->kind == V_BWD_REF) {
        /* the ceiling computes: an odd-sized product against double */
        st = fb_conv_check_gemm(shared.eng, shared.ctx, s->ctx->be, shared.prec, 67, 45, 129,
                                s->stream, wrong);
        return st;
    }
    if ((st = compute_iterate(s)) != FB_OK || (st = s->ctx->be->stream_sync(s->stream)) != FB_OK)
        return st;
    if (s->kind == V_STEP_OURS && s->record)
        record_grad_ready(s->c->batch);
    /* nothing the run produced may be infinite or NaN */
    if ((st = fb_densenet_step_nonfinite(shared.step, group, passes, &bad)) != FB_OK)
        return st;
    *wrong += bad;
    return check_conv(s, s->kind == V_STEP_OURS, wrong);
}

/* The statistics row of (batch, case, metric) of rank 0 alone, or NULL. */
static const struct fb_row *find_row(const struct fb_results *res, size_t first, long batch,
                                     const char *kase, const char *metric)
{
    for (size_t i = first; i < res->nrows; i++) {
        const struct fb_row *w = &res->rows[i];
        if (strcmp(w->bench, "compute") == 0 && w->batch == batch && w->ranks == 1 &&
            w->src == 0 && strcmp(w->kase, kase) == 0 && strcmp(w->metric, metric) == 0)
            return w;
    }
    return NULL;
}

static void add_row(struct fb_results *res, const struct fb_row *like, const char *kase,
                    const char *metric, const char *unit, double v, bool detail, int src)
{
    struct fb_row row = *like;

    snprintf(row.kase, sizeof row.kase, "%s", kase);
    snprintf(row.metric, sizeof row.metric, "%s", metric);
    snprintf(row.unit, sizeof row.unit, "%s", unit);
    row.st = (struct fb_stats){.samples = 1, .median = v, .p05 = v, .p95 = v, .min = v,
                               .max = v, .mean = v, .stddev = 0.0};
    row.detail = detail;
    row.src = src;
    row.dst = -1;
    row.wrong = -1;
    fb_results_add(res, &row);
}

/* Rank 0: per batch, a table of every group's forward and backward time, our TFLOP/s and the
 * ceiling's, and `efficiency` rows; then `grad_ready` rows. */
static void compute_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    size_t nrows = res->nrows, batches = 0, more = 0;

    /* The rows read below are pointed at while rows are added: make room for every row added
     * first, so no addition moves them (per batch: three efficiency rows per group, the step's
     * two, and the grad_ready rows). */
    for (size_t i = first; i < nrows; i++)
        batches += strcmp(res->rows[i].bench, "compute") == 0 &&
                   strcmp(res->rows[i].kase, "step_ours") == 0 &&
                   strcmp(res->rows[i].metric, "tflops") == 0 && res->rows[i].ranks == 1 &&
                   res->rows[i].src == 0;
    for (size_t r = 0; r < nrecords; r++)
        more += records[r].n;
    if (fb_results_reserve(res, batches * (3 * FB_LAYER_GROUPS + 2) + more) != FB_OK) {
        fb_error("compute: no memory for the summary rows");
        return;
    }
    for (size_t i = first; i < nrows; i++) {
        const struct fb_row *w = &res->rows[i], *ref, *convs;
        long batch = w->batch;

        if (strcmp(w->bench, "compute") != 0 || strcmp(w->kase, "step_ours") != 0 ||
            strcmp(w->metric, "tflops") != 0 || w->ranks != 1 || w->src != 0)
            continue;
        fb_out("\n# compute: DenseNet-121, batch %ld, %ldx%ld, %s; TFLOP/s = 2 x multiply-"
               "accumulates / time; ref = the same GEMMs alone through %s\n",
               batch, resolution_of(ctx), resolution_of(ctx), w->transport,
               fb_conv_engine_for(ctx->be)->describe(true));
        fb_out("# %-12s %11s %11s %9s %9s %9s %9s %6s\n", "group", "fwd_us", "bwd_us", "fwd_TF/s",
               "bwd_TF/s", "ours_TF/s", "ref_TF/s", "eff%");
        for (int g = 0; g < FB_LAYER_GROUPS; g++) {
            const char *gn = fb_layer_group_names[g];
            char name[4][48];
            const struct fb_row *t[4], *f[4];
            double ours, refv, eff;
            bool ok = true;
            snprintf(name[0], sizeof name[0], "fwd_%s", gn);
            snprintf(name[1], sizeof name[1], "bwd_%s", gn);
            snprintf(name[2], sizeof name[2], "fwd_%s_ref", gn);
            snprintf(name[3], sizeof name[3], "bwd_%s_ref", gn);
            for (int j = 0; j < 4; j++) {
                t[j] = find_row(res, first, batch, name[j], "time");
                f[j] = find_row(res, first, batch, name[j], "tflops");
                ok &= t[j] && f[j];
            }
            if (!t[0] || !t[1] || !f[0] || !f[1])
                continue;
            /* a group's rate over both passes: its FLOPs over its time */
            ours = (f[0]->st.median * t[0]->st.median + f[1]->st.median * t[1]->st.median) /
                   (t[0]->st.median + t[1]->st.median);
            refv = ok ? (f[2]->st.median * t[2]->st.median + f[3]->st.median * t[3]->st.median) /
                            (t[2]->st.median + t[3]->st.median)
                      : NAN;
            eff = ok && refv > 0 ? 100.0 * ours / refv : NAN;
            fb_out("  %-12s %11.1f %11.1f %9.4f %9.4f %9.4f %9.4f %6.1f\n", gn, t[0]->st.median,
                   t[1]->st.median, f[0]->st.median, f[1]->st.median, ours, refv, eff);
            if (!ok)
                continue;
            for (int j = 0; j < 2; j++)
                if (f[j + 2]->st.median > 0)
                    add_row(res, f[j], name[j], "efficiency", "%",
                            100.0 * f[j]->st.median / f[j + 2]->st.median, true, 0);
            if (isfinite(eff)) /* a reference of 0 has no ratio; readers refuse nan */
                add_row(res, f[0], gn, "efficiency", "%", eff, true, 0);
        }
        if ((ref = find_row(res, first, batch, "step_ref", "tflops")) && ref->st.median > 0) {
            double eff = 100.0 * w->st.median / ref->st.median;
            fb_out("  %-12s %35s %9.4f %9.4f %6.1f\n", "step", "", w->st.median, ref->st.median,
                   eff);
            add_row(res, w, "step", "efficiency", "%", eff, false, 0);
            if ((convs = find_row(res, first, batch, "step_convs", "tflops"))) {
                eff = 100.0 * convs->st.median / ref->st.median;
                fb_out("  %-12s %35s %9.4f %9.4f %6.1f\n", "step_convs", "", convs->st.median,
                       ref->st.median, eff);
                add_row(res, convs, "step_convs", "efficiency", "%", eff, true, 0);
            }
        }
        fb_out("# step: the whole step (GEMMs, BatchNorm+ReLU, concatenations, pools) against "
               "its GEMMs alone on the vendor BLAS; step_convs: our GEMMs alone\n");
        for (size_t r = 0; r < nrecords; r++) {
            const struct record *rec = &records[r];
            if (rec->batch != batch || rec->n == 0)
                continue;
            fb_out("# grad_ready: %zu weight gradients (convolutions and classifier), the first "
                   "after %.1f us of backward, the last after %.1f us\n",
                   rec->n, rec->items[0].us, rec->items[rec->n - 1].us);
            /* measured on rank 0 alone: a row about one rank (src 0, results/SCHEMA.md) */
            for (size_t j = 0; j < rec->n; j++)
                add_row(res, w, rec->items[j].name, "grad_ready", "us", rec->items[j].us, true,
                        0);
        }
    }
}

const struct fb_bench fb_bench_compute = {
    .name = "compute",
    .summary = "DenseNet-121 training step's compute: our conv kernels vs the vendor BLAS "
               "ceiling, per layer group, images/s and TFLOP/s",
    .min_ranks = 1,
    .plan = compute_plan,
    .setup = compute_setup,
    .iterate = compute_iterate,
    .verify = compute_verify,
    .teardown = compute_teardown,
    .summarize = compute_summarize,
};
