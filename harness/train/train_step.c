/* The step engine: one batch through copy, forward, backward with bucketed all-reduces, and the
 * optimizer update, with an event at each phase boundary. */
#include "train_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "clock.h"
#include "densenet.h"
#include "densenet_layers.h"
#include "densenet_step.h"
#include "image_ring.h"
#include "log.h"
#include "memfit.h"
#include "nvtx.h"
#include "overlap.h"

/* SGD's hyper-parameters: any values do for the cost; these keep the weights finite. */
static const float LR = 0.01f, MOMENTUM = 0.9f;
static const uint32_t GRAD_SEED = 11, AUG_SEED = 42;

enum { EV_ANCHOR, EV_COPY0, EV_COPY1, EV_FWD0, EV_BWD0, EV_BWD1, EV_REDUCED, EV_UPD1, EV_COUNT };

struct fb_train_step {
    struct fb_train_step_config cfg;
    const struct fb_backend *be;
    const struct fb_conv_engine *eng;
    struct fb_conv_ctx *ctx;
    struct fb_densenet_layers layers;
    struct fb_densenet_step *step;
    struct fb_densenet model;
    struct fb_image_ring *ring;
    struct fb_batch_spec spec;
    size_t wire_bytes;
    void *dev_wire;     /* the batch on the device, uint8 */
    float *dev_input;   /* normalized */
    struct fb_stream *copy;
    struct fb_event *ev[EV_COUNT];
    enum fb_dtype gdtype;
    void *grad_send, *grad_recv;   /* the flat gradient buffer, in ready order */
    float *weights, *momentum;     /* fp32 master weights and their momentum */
    struct fb_pattern mine, sum;
    struct fb_overlap *ov;
    double *span_start, *span_end; /* each bucket's all-reduce, for the trace */
    struct fb_memfit_buf *plan;    /* the memory model's step-own buffers (alloc_buffers) */
    size_t nplan, at;
};

static fb_status on_ready(void *arg, size_t layer, struct fb_event *ready)
{
    struct fb_train_step *ts = arg;
    /* fb_layer params: the classifier's weight and bias. The stand-in computes no bias
     * gradient (a sum of the loss gradient over the batch, negligible work), so the bias is
     * taken as ready with its weight, as it is in a framework's backward. */
    return fb_overlap_ready(ts->ov, ts->layers.layers[layer].params, ready);
}

void fb_train_step_free(struct fb_train_step *ts)
{
    const struct fb_backend *be;

    if (!ts)
        return;
    be = ts->be;
    if (ts->copy)
        (void)be->stream_sync(ts->copy);
    if (ts->cfg.stream)
        (void)be->stream_sync(ts->cfg.stream);
    fb_overlap_free(ts->ov);
    fb_image_ring_stop(ts->ring);
    fb_densenet_step_free(ts->step);
    if (ts->eng)
        ts->eng->close(ts->ctx);
    fb_densenet_layers_free(&ts->layers);
    fb_densenet_free(&ts->model);
    for (int i = 0; i < EV_COUNT; i++)
        be->event_destroy(ts->ev[i]);
    be->stream_destroy(ts->copy);
    be->free(FB_MEM_DEVICE, ts->dev_wire);
    be->free(FB_MEM_DEVICE, ts->dev_input);
    be->free(FB_MEM_DEVICE, ts->grad_send);
    be->free(FB_MEM_DEVICE, ts->grad_recv);
    be->free(FB_MEM_DEVICE, ts->weights);
    be->free(FB_MEM_DEVICE, ts->momentum);
    free(ts->span_start);
    free(ts->span_end);
    free(ts->plan);
    free(ts);
}

static fb_status open_compute(struct fb_train_step *ts)
{
    const struct fb_train_step_config *c = &ts->cfg;
    char why[256] = "";
    fb_status st;

    ts->eng = fb_conv_engine_for(ts->be);
    if (!ts->eng || !ts->eng->built) {
        fb_error("step: no convolution engine built for backend '%s'", ts->be->name);
        ts->eng = NULL;
        return FB_ERR_NOT_BUILT;
    }
    if ((st = ts->eng->open(ts->be, c->prec, &ts->ctx, why, sizeof why)) != FB_OK) {
        fb_error("step: cannot open the %s engine for %s: %s", ts->eng->name,
                 fb_conv_prec_name(c->prec), why);
        ts->eng = NULL;
        return st;
    }
    if ((st = fb_densenet_layers_build(c->batch, c->resolution, c->classes, &ts->layers)) !=
            FB_OK ||
        (st = fb_densenet_step_create(&ts->layers, ts->be, ts->eng, ts->ctx, c->prec,
                                      FB_STEP_WITH_TRAIN, c->stream, &ts->step)) != FB_OK)
        return st;
    fb_densenet_step_on_ready(ts->step, on_ready, ts);
    return FB_OK;
}

/* The next of the step's own buffers in the memory model's plan (model/memfit.c), allocated;
 * what the step needs must be that entry to the byte (densenet_step.c does the same for the
 * network's). */
static fb_status take_own(struct fb_train_step *ts, enum fb_memfit_role role, size_t bytes,
                          void **out)
{
    fb_status st = fb_memfit_take(ts->plan, ts->nplan, &ts->at, role, -1, bytes);
    return st != FB_OK ? st : ts->be->alloc(FB_MEM_DEVICE, bytes, out);
}

static fb_status alloc_buffers(struct fb_train_step *ts)
{
    const struct fb_backend *be = ts->be;
    const struct fb_train_step_config *c = &ts->cfg;
    size_t n = ts->model.parameters, gbytes = n * fb_dtype_size(ts->gdtype);
    /* the step's optimizer is SGD with momentum: one fp32 slot per weight */
    const struct fb_memfit_config mc = {c->resolution, c->classes,
                                        (int)fb_conv_prec_size(c->prec), 1,
                                        (int)fb_dtype_size(ts->gdtype)};
    int64_t offsets = 0;
    fb_status st;

    if ((st = fb_memfit_plan(&mc, c->batch, FB_MEMFIT_STEP, &ts->plan, &ts->nplan)) != FB_OK)
        return st;
    for (int r = 0; r < c->ranks; r++)
        offsets += fb_pattern_rank_offset(r);
    ts->mine = (struct fb_pattern){.seed = GRAD_SEED, .scale = 1,
                                   .offset = fb_pattern_rank_offset(c->rank)};
    ts->sum = (struct fb_pattern){.seed = GRAD_SEED, .scale = c->ranks, .offset = offsets};
    if ((st = be->stream_create(&ts->copy)) != FB_OK)
        return st;
    for (int i = 0; i < EV_COUNT; i++)
        if ((st = be->event_create(&ts->ev[i])) != FB_OK)
            return st;
    if ((st = take_own(ts, FB_BUF_WIRE, ts->wire_bytes, &ts->dev_wire)) != FB_OK ||
        (st = take_own(ts, FB_BUF_INPUT, ts->wire_bytes * sizeof(float),
                       (void **)&ts->dev_input)) != FB_OK ||
        (st = take_own(ts, FB_BUF_GRAD_SEND, gbytes, &ts->grad_send)) != FB_OK ||
        (st = take_own(ts, FB_BUF_GRAD_RECV, gbytes, &ts->grad_recv)) != FB_OK ||
        (st = take_own(ts, FB_BUF_MASTER, n * sizeof(float), (void **)&ts->weights)) != FB_OK ||
        (st = take_own(ts, FB_BUF_OPT_STATE, n * sizeof(float), (void **)&ts->momentum)) != FB_OK)
        return st;
    if ((st = fb_memfit_took_all(ts->plan, ts->nplan, ts->at)) != FB_OK)
        return st;
    free(ts->plan); /* taken */
    ts->plan = NULL;
    /* weights: small values; momentum starts at zero, as PyTorch's buffer does */
    if ((st = be->fill(ts->grad_send, n, ts->gdtype, ts->mine, c->stream)) != FB_OK ||
        (st = be->fill(ts->grad_recv, n, ts->gdtype, ts->sum, c->stream)) != FB_OK ||
        (st = be->fill(ts->weights, n, FB_DTYPE_FLOAT32,
                       (struct fb_pattern){.seed = 3, .scale = 1}, c->stream)) != FB_OK ||
        (st = be->fill(ts->momentum, n, FB_DTYPE_FLOAT32, (struct fb_pattern){0}, c->stream)) !=
            FB_OK)
        return st;
    return be->stream_sync(c->stream);
}

fb_status fb_train_step_create(const struct fb_train_step_config *cfg, struct fb_train_step **out)
{
    struct fb_train_step *ts = calloc(1, sizeof *ts);
    struct fb_overlap_config oc;
    fb_status st = FB_ERR_NOMEM;

    *out = NULL;
    if (!ts)
        return st;
    ts->cfg = *cfg;
    ts->be = cfg->be;
    ts->gdtype = cfg->fp16_allreduce ? FB_DTYPE_FLOAT16 : FB_DTYPE_FLOAT32;
    ts->spec = (struct fb_batch_spec){cfg->batch, cfg->resolution, false, AUG_SEED};
    ts->wire_bytes = fb_batch_bytes(&ts->spec);
    if ((st = fb_densenet121(cfg->classes, &ts->model)) != FB_OK || (st = open_compute(ts)) != FB_OK ||
        (st = alloc_buffers(ts)) != FB_OK)
        goto fail;
    oc = (struct fb_overlap_config){.be = ts->be, .coll = cfg->coll, .comm = cfg->comm,
                                    .model = &ts->model, .threshold = cfg->threshold,
                                    .dtype = ts->gdtype, .send = ts->grad_send,
                                    .recv = ts->grad_recv, .compute = cfg->stream,
                                    .overlap = cfg->overlap, .skip_bucket = cfg->skip_bucket};
    if ((st = fb_overlap_create(&oc, &ts->ov)) != FB_OK)
        goto fail;
    st = FB_ERR_NOMEM;
    if (!(ts->span_start = calloc(fb_overlap_nbuckets(ts->ov) + 1, sizeof *ts->span_start)) ||
        !(ts->span_end = calloc(fb_overlap_nbuckets(ts->ov) + 1, sizeof *ts->span_end)))
        goto fail;
    /* the workers start filling last, once everything else is in place */
    if ((st = fb_image_ring_start(ts->be, cfg->host_kind, cfg->dataset, &ts->spec, cfg->threads,
                                  cfg->depth, &ts->ring)) != FB_OK)
        goto fail;
    *out = ts;
    return FB_OK;
fail:
    fb_train_step_free(ts);
    return st;
}

size_t fb_train_step_nbuckets(const struct fb_train_step *ts) { return fb_overlap_nbuckets(ts->ov); }
size_t fb_train_step_parameters(const struct fb_train_step *ts) { return ts->model.parameters; }
const char *fb_train_step_engine(const struct fb_train_step *ts) { return ts->eng->describe(false); }

/* Everything of one step up to the end-of-step sync, with NVTX ranges around the phases. */
static fb_status enqueue(struct fb_train_step *ts, struct fb_batch *batch, double *t_taken)
{
    const struct fb_backend *be = ts->be;
    struct fb_stream *s = ts->cfg.stream;
    size_t plane = (size_t)ts->spec.res * (size_t)ts->spec.res;
    fb_status st;

    fb_nvtx_push("data wait");
    st = fb_pipeline_take(ts->ring->pipe, batch);
    *t_taken = fb_clock_now_us();
    fb_nvtx_pop();
    if (st != FB_OK)
        return st;
    fb_nvtx_push("copy");
    if ((st = be->event_record(ts->ev[EV_COPY0], ts->copy)) == FB_OK &&
        (st = be->copy(ts->dev_wire, batch->data, ts->wire_bytes, FB_COPY_H2D, ts->copy)) == FB_OK &&
        (st = be->event_record(ts->ev[EV_COPY1], ts->copy)) == FB_OK)
        st = be->stream_wait_event(s, ts->ev[EV_COPY1]);
    fb_nvtx_pop();
    if (st != FB_OK)
        return st;
    fb_nvtx_push("forward");
    if ((st = be->event_record(ts->ev[EV_FWD0], s)) == FB_OK &&
        (st = be->normalize_u8(ts->dev_input, ts->dev_wire, (size_t)ts->spec.batch, plane,
                               fb_augment_mean, fb_augment_inv_std, s)) == FB_OK &&
        (st = fb_densenet_step_run(ts->step, FB_STEP_OURS, FB_STEP_ALL_GROUPS, FB_STEP_FWD)) ==
            FB_OK)
        st = be->event_record(ts->ev[EV_BWD0], s);
    fb_nvtx_pop();
    if (st != FB_OK)
        return st;
    fb_nvtx_push("backward");
    if ((st = fb_overlap_begin(ts->ov)) == FB_OK &&
        (st = fb_densenet_step_run(ts->step, FB_STEP_OURS, FB_STEP_ALL_GROUPS, FB_STEP_BWD)) ==
            FB_OK)
        st = be->event_record(ts->ev[EV_BWD1], s);
    fb_nvtx_pop();
    /* the ring's slot goes back to the workers once its copy is done (long since, by now) */
    if (st == FB_OK)
        st = be->event_sync(ts->ev[EV_COPY1]);
    if (st != FB_OK)
        return st;
    fb_pipeline_release(ts->ring->pipe, batch);
    batch->data = NULL;
    fb_nvtx_push("allreduce wait");
    if ((st = fb_overlap_finish(ts->ov)) == FB_OK)
        st = be->event_record(ts->ev[EV_REDUCED], s);
    fb_nvtx_pop();
    if (st != FB_OK)
        return st;
    fb_nvtx_push("update");
    if ((st = be->sgd_momentum(ts->weights, ts->momentum, ts->grad_recv, ts->gdtype,
                               ts->model.parameters, LR, MOMENTUM, 1.0f / (float)ts->cfg.ranks,
                               s)) == FB_OK)
        st = be->event_record(ts->ev[EV_UPD1], s);
    fb_nvtx_pop();
    return st;
}

static double elapsed(const struct fb_train_step *ts, int a, int b)
{
    double us = 0.0;
    return ts->be->event_elapsed_us(ts->ev[a], ts->ev[b], &us) == FB_OK ? us : 0.0;
}

/* The step's spans on the host clock: events are placed through the anchor recorded (and
 * waited for) at the step's start. */
static fb_status add_spans(struct fb_train_step *ts, struct fb_trace *tr, int step, double t0,
                           double t_taken, double t_end, double anchor_us)
{
    static const struct {
        int track, from, to;
        const char *name;
    } phases[] = {
        {FB_TRACK_COPY, EV_COPY0, EV_COPY1, "copy"},
        {FB_TRACK_COMPUTE, EV_FWD0, EV_BWD0, "forward"},
        {FB_TRACK_COMPUTE, EV_BWD0, EV_BWD1, "backward"},
        {FB_TRACK_COMPUTE, EV_BWD1, EV_REDUCED, "comm wait"},
        {FB_TRACK_COMPUTE, EV_REDUCED, EV_UPD1, "update"},
    };
    size_t nb = fb_overlap_nbuckets(ts->ov);
    char name[32];
    fb_status st;

    fb_trace_add(tr, FB_TRACK_HOST, step, "step", t0, t_end);
    fb_trace_add(tr, FB_TRACK_DATA, step, "data wait", t0, t_taken);
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        double a = anchor_us + elapsed(ts, EV_ANCHOR, phases[i].from),
               b = anchor_us + elapsed(ts, EV_ANCHOR, phases[i].to);
        if (phases[i].from == EV_BWD1 && b - a < 1.0)
            continue; /* nothing exposed: no span */
        fb_trace_add(tr, phases[i].track, step, phases[i].name, a, b);
    }
    if ((st = fb_overlap_spans(ts->ov, ts->ev[EV_ANCHOR], anchor_us, ts->span_start,
                               ts->span_end)) != FB_OK)
        return st;
    for (size_t i = 0; i < nb; i++) {
        snprintf(name, sizeof name, "allreduce %zu", i);
        fb_trace_add(tr, FB_TRACK_COMM, step, name, ts->span_start[i], ts->span_end[i]);
    }
    return FB_OK;
}

fb_status fb_train_step_run(struct fb_train_step *ts, struct fb_trace *trace, int step,
                            struct fb_step_times *t)
{
    const struct fb_backend *be = ts->be;
    struct fb_batch batch = {0};
    double t0, t_taken = 0.0, t_end, anchor_us = 0.0;
    fb_status st = FB_OK, synced;

    if (trace) {
        /* the anchor: an event the device has passed, at a known host time (the stream is
         * idle between steps, so it completes at once) */
        if ((st = fb_overlap_anchor(be, ts->ev[EV_ANCHOR], ts->cfg.stream, &anchor_us)) !=
            FB_OK)
            return st;
    }
    t0 = fb_clock_now_us();
    st = enqueue(ts, &batch, &t_taken);
    /* synchronised whatever happened, so nothing is left running on failure */
    synced = be->stream_sync(ts->cfg.stream);
    if (synced == FB_OK)
        synced = be->stream_sync(ts->copy);
    if (batch.data)
        fb_pipeline_release(ts->ring->pipe, &batch);
    t_end = fb_clock_now_us();
    if ((st = st != FB_OK ? st : synced) != FB_OK)
        return st;
    *t = (struct fb_step_times){
        .step_us = t_end - t0,
        .data_wait_us = t_taken - t0,
        .h2d_us = elapsed(ts, EV_COPY0, EV_COPY1),
        .compute_us = elapsed(ts, EV_FWD0, EV_BWD1),
        .comm_exposed_us = elapsed(ts, EV_BWD1, EV_REDUCED),
        .update_us = elapsed(ts, EV_REDUCED, EV_UPD1),
    };
    if (trace)
        st = add_spans(ts, trace, step, t0, t_taken, t_end, anchor_us);
    return st;
}

fb_status fb_train_step_check(struct fb_train_step *ts, size_t *wrong)
{
    const struct fb_pattern poison = {.seed = 0, .scale = 0, .offset = -77};
    struct fb_step_times t;
    size_t bad = 0;
    fb_status st;

    *wrong = 0;
    if ((st = ts->be->fill(ts->grad_recv, ts->model.parameters, ts->gdtype, poison,
                           ts->cfg.stream)) != FB_OK ||
        (st = ts->be->stream_sync(ts->cfg.stream)) != FB_OK ||
        (st = fb_train_step_run(ts, NULL, 0, &t)) != FB_OK ||
        (st = ts->be->check(ts->grad_recv, ts->model.parameters, ts->gdtype, ts->sum, wrong,
                            ts->cfg.stream)) != FB_OK)
        return st;
    /* and nothing the stand-in computed may be infinite or NaN */
    if ((st = fb_densenet_step_nonfinite(ts->step, FB_STEP_ALL_GROUPS, FB_STEP_BOTH, &bad)) != FB_OK)
        return st;
    *wrong += bad;
    return FB_OK;
}
