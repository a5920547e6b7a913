/* pipeline: the input side of a training step, as a DataLoader feeds a GPU. Worker threads
 * decode synthetic ChestX-ray14-like PNGs (or ImageNet-like JPEGs), resize, crop, flip and
 * normalize them into a ring of pinned batches; a copy stream moves each batch to the device
 * while the previous one is consumed. Reports the codec alone, the CPU side per thread count,
 * the raw copy at the same size, the copy side, the whole pipeline, and the stall a consumer at
 * a given rate would see; each rank alone and all ranks at once (GPUs sharing a PCIe uplink). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "image_ring.h"
#include "log.h"
#include "registry.h"

enum variant {
    V_DECODE,   /* the codec alone on the runner's thread: one image per iteration */
    V_CPU,      /* the workers and the ring, the consumer takes and releases */
    V_H2D_RAW,  /* one plain copy of a batch's bytes: the raw figure at this size */
    V_COPY,     /* the copy side alone: batches the workers built, replayed from the ring */
    V_PIPELINE, /* everything: workers, copies, device normalization */
    V_CONSUME,  /* everything, and a consumer computing at a given rate */
};

enum { RES_DEFAULT = 224, BATCH_CUDA = 32, BATCH_HOST = 8 };
/* Calibrated iterations per trial at least, for the cases whose workers run ahead (add_case). */
enum { GATED_MIN_ITERS = 8 };
static const uint32_t AUG_SEED = 42;

/* Consumer rates (images/s) when --rate is not given. cuda: DenseNet-121 training per GPU at
 * 17 GFLOP per image (docs/reference-figures.md "DenseNet-121"; the peaks under "GPUs"): a V100
 * at half its 15.7 TFLOP/s fp32 peak (460/s), at a quarter of its 125 TFLOP/s fp16 tensor peak
 * (1840/s), an H100 at a tenth of 989 TFLOP/s (5800/s).
 * host: around what one and two cores decode of the default data set (about 100 PNG/s each on
 * the 2-core VM, measured 2026-11-30). */
static const double rates_cuda[] = {460, 1840, 5800};
static const double rates_host[] = {50, 100, 200};

struct pl_state {
    const struct fb_backend *be;
    struct fb_stream *stream, *copy_stream;
    enum variant variant;
    enum fb_mem host_kind;
    const struct fb_imageset *set; /* the shared cached set */
    const char *dataset;
    struct fb_batch_spec spec;
    size_t wire_bytes; /* one batch as copied */
    int threads, depth;
    int per_iter;   /* batches per iteration */
    double busy_us; /* the consumer's compute per batch */
    /* decode */
    unsigned char *decoded;
    long next_image;
    /* the ring (image_ring.c) and its consumer */
    struct fb_image_ring *ring;
    struct fb_pipeline *pipe; /* ring->pipe */
    long n;                  /* batches consumed */
    long misordered;         /* batches delivered out of order or twice */
    struct fb_batch pending[2];
    bool has_pending[2], consumed_recorded[2];
    struct fb_batch *held; /* V_COPY: the ring's batches, kept */
    int nheld;
    /* device side: double buffers, and when each was filled and used */
    void *dev_wire[2];
    float *dev_float[2];
    struct fb_event *copied[2], *consumed[2];
    /* h2d_raw: as many host buffers as the ring has slots, into the two device buffers */
    void **host_raw;
    long next_raw;
    /* verify */
    void *check_buf;
};

static const char *codec_name(const char *dataset)
{
    return strcmp(dataset, "imagenet") == 0 ? "libjpeg-turbo" : "libpng";
}

/* The thread count every rank agrees on: the smallest default among them (ranks may be bound to
 * different numbers of CPUs, and the plan must be the same everywhere). Collective. */
static int agreed_threads(const struct fb_ctx *ctx)
{
    int mine = ctx->opt->threads > 0 ? (int)ctx->opt->threads : fb_pipeline_cpus(), all = mine;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ctx->s->world.comm);
    return all;
}

static void add_case(struct fb_case *c, const char *name, const char *transport, enum variant v,
                     long batch, double items, size_t bytes, int threads, double busy_us,
                     int active)
{
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->transport, sizeof c->transport, "%s", transport);
    c->report = FB_REPORT_THROUGHPUT;
    c->variant = v;
    c->batch = batch;
    c->items = items;
    c->bytes = bytes;
    c->aux = threads;
    c->busy_us = busy_us;
    c->active = active;
    /* The workers run ahead of the iterations: a worker finishes the image it is on when the
     * gate closes between trials, and when that image ends its batch, the next trial takes the
     * batch without waiting. With one iteration per trial (a short --trial-ms, tiny batches) a
     * trial could take nothing but such batches and be timed near zero (what was seen:
     * docs/benchmarks/pipeline.md); with GATED_MIN_ITERS the head start is at most about an
     * eighth of a trial. */
    if (v == V_CPU || v == V_PIPELINE || v == V_CONSUME)
        c->min_iters = GATED_MIN_ITERS;
    c->per_rank = active == FB_ALL_RANKS;
}

static fb_status pl_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    const struct fb_options *o = ctx->opt;
    bool host = ctx->be->on_cpu;
    int threads = agreed_threads(ctx), modes = ctx->s->world.size > 1 ? 2 : 1, nk = 0, ks[32];
    size_t nb = o->nbatches ? o->nbatches : 1, nr = o->nrates ? o->nrates : 3, k = 0;
    const double *rates = o->nrates ? o->rates : host ? rates_host : rates_cuda;
    const char *copier = host ? "memcpy" : "cudaMemcpyAsync", *codec = codec_name(o->dataset);
    struct fb_case *cases;
    char name[48];

    /* the CPU side's scaling: 1, 2, 4, ... threads, and the thread count itself */
    for (int t = 1; t < threads && nk < 31; t *= 2)
        ks[nk++] = t;
    ks[nk++] = threads;
    cases = calloc((size_t)modes * nb * ((size_t)nk + 5 + nr), sizeof *cases);
    if (!cases)
        return FB_ERR_NOMEM;
    for (int mode = 0; mode < modes; mode++) {
        int active = mode == 0 ? 0 : FB_ALL_RANKS;
        add_case(&cases[k++], "decode", codec, V_DECODE, 0, 1, 0, 1, 0, active);
        for (size_t b = 0; b < nb; b++) {
            long batch = o->nbatches ? o->batches[b] : host ? BATCH_HOST : BATCH_CUDA;
            struct fb_batch_spec spec = {(int)batch, o->resolution ? (int)o->resolution : RES_DEFAULT,
                                         o->wire_float, AUG_SEED};
            size_t wire = fb_batch_bytes(&spec);
            /* With workers, one iteration is one batch per worker: the round in which each
             * finishes one. Batches finish in bursts of `threads`; a trial of a single batch
             * would land either in a burst (nearly free) or between two (a whole batch). */
            for (int i = 0; i < nk; i++) {
                snprintf(name, sizeof name, "cpu_t%d", ks[i]);
                add_case(&cases[k++], name, codec, V_CPU, batch, (double)(batch * ks[i]), 0, ks[i],
                         0, active);
            }
            add_case(&cases[k++], "h2d_raw", copier, V_H2D_RAW, batch, 0, wire, threads, 0, active);
            /* no images/s: it replays batches already built, so only its GB/s means anything */
            add_case(&cases[k++], "copy", copier, V_COPY, batch, 0, wire, threads, 0, active);
            add_case(&cases[k++], "pipeline", copier, V_PIPELINE, batch, (double)(batch * threads),
                     wire * (size_t)threads, threads, 0, active);
            for (size_t r = 0; r < nr; r++) {
                snprintf(name, sizeof name, "consume_%g", rates[r]);
                add_case(&cases[k++], name, copier, V_CONSUME, batch, (double)(batch * threads),
                         wire * (size_t)threads, threads,
                         (double)(batch * threads) / rates[r] * 1e6, active);
            }
        }
    }
    *out = cases;
    *n = k;
    return FB_OK;
}

static void pl_teardown(void *p)
{
    struct pl_state *s = p;

    if (!s)
        return;
    /* No copy may still read a slot or write a buffer that is about to be freed. */
    if (s->copy_stream)
        (void)s->be->stream_sync(s->copy_stream);
    if (s->stream)
        (void)s->be->stream_sync(s->stream);
    fb_image_ring_stop(s->ring);
    free(s->held);
    for (int b = 0; b < 2; b++) {
        s->be->free(FB_MEM_DEVICE, s->dev_wire[b]);
        s->be->free(FB_MEM_DEVICE, s->dev_float[b]);
        s->be->event_destroy(s->copied[b]);
        s->be->event_destroy(s->consumed[b]);
    }
    for (int i = 0; s->host_raw && i < s->depth; i++)
        s->be->free(s->host_kind, s->host_raw[i]);
    free(s->host_raw);
    s->be->stream_destroy(s->copy_stream);
    free(s->decoded);
    free(s->check_buf);
    free(s);
}

/* Takes the next batch and checks that it is the one expected: in order, once. */
static fb_status take(struct pl_state *s, struct fb_batch *b)
{
    fb_status st = fb_pipeline_take(s->pipe, b);
    if (st == FB_OK && b->seq != s->n)
        s->misordered++;
    return st;
}

static fb_status setup_ring(struct pl_state *s, const struct fb_case *c)
{
    fb_status st;

    if ((st = fb_image_ring_start(s->be, s->host_kind, s->dataset, &s->spec, s->threads, s->depth,
                                  &s->ring)) != FB_OK)
        return st;
    s->pipe = s->ring->pipe;
    if (c->variant == V_COPY) {
        /* The ring's batches, built once and kept: the copies then never wait for a worker. */
        if (!(s->held = calloc((size_t)s->depth, sizeof *s->held)))
            return FB_ERR_NOMEM;
        for (; s->nheld < s->depth; s->nheld++, s->n++)
            if ((st = take(s, &s->held[s->nheld])) != FB_OK)
                return st;
        return FB_OK;
    }
    /* Drain the first ring-full: it was built while nobody waited, and would flatter the first
     * trial. Afterwards every worker is busy and the ring empty: the steady state. */
    for (int i = 0; i < s->depth; i++, s->n++) {
        struct fb_batch b;
        if ((st = take(s, &b)) != FB_OK)
            return st;
        fb_pipeline_release(s->pipe, &b);
    }
    return FB_OK;
}

static fb_status setup_device(struct pl_state *s)
{
    fb_status st;

    if ((st = s->be->stream_create(&s->copy_stream)) != FB_OK)
        return st;
    for (int b = 0; b < 2; b++) {
        if ((st = s->be->alloc(FB_MEM_DEVICE, s->wire_bytes, &s->dev_wire[b])) != FB_OK ||
            (st = s->be->event_create(&s->copied[b])) != FB_OK ||
            (st = s->be->event_create(&s->consumed[b])) != FB_OK)
            return st;
        if (!s->spec.wire_float &&
            (st = s->be->alloc(FB_MEM_DEVICE, s->wire_bytes * sizeof(float),
                               (void **)&s->dev_float[b])) != FB_OK)
            return st;
    }
    return FB_OK;
}

static fb_status pl_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                          struct fb_stream *stream, void **state)
{
    const struct fb_options *o = ctx->opt;
    struct pl_state *s = calloc(1, sizeof *s);
    fb_status st;

    *state = NULL;
    if (!s)
        return FB_ERR_NOMEM;
    s->be = ctx->be;
    s->stream = stream;
    s->variant = (enum variant)c->variant;
    s->dataset = o->dataset;
    s->host_kind = o->pageable ? FB_MEM_PAGEABLE : FB_MEM_PINNED;
    s->spec = (struct fb_batch_spec){(int)(c->batch > 0 ? c->batch : 1),
                                     o->resolution ? (int)o->resolution : RES_DEFAULT,
                                     o->wire_float, AUG_SEED};
    s->wire_bytes = fb_batch_bytes(&s->spec);
    s->threads = (int)c->aux;
    s->depth = o->prefetch > 0 ? (int)o->prefetch : 2 * s->threads;
    s->per_iter = s->variant == V_CPU || s->variant == V_PIPELINE || s->variant == V_CONSUME
                      ? s->threads : 1;
    s->busy_us = c->busy_us / s->per_iter;
    if (s->variant != V_H2D_RAW &&
        (st = fb_image_set_get(o->dataset, &s->set)) != FB_OK)
        goto fail;
    switch (s->variant) {
    case V_DECODE:
        st = (s->decoded = malloc(fb_imageset_decoded_bytes(s->set))) ? FB_OK : FB_ERR_NOMEM;
        break;
    case V_H2D_RAW:
        /* The same buffers the copy side uses, so both read and write the same amount of
         * memory: on host, a single small buffer would be copied from cache instead. */
        if (!(s->host_raw = calloc((size_t)s->depth, sizeof *s->host_raw))) {
            st = FB_ERR_NOMEM;
            break;
        }
        for (int i = 0; i < s->depth && st == FB_OK; i++)
            if ((st = s->be->alloc(s->host_kind, s->wire_bytes, &s->host_raw[i])) == FB_OK)
                fb_pattern_fill_host(s->host_raw[i], s->wire_bytes / 4, FB_DTYPE_INT32,
                                     (struct fb_pattern){.seed = 5, .scale = 1});
        for (int b = 0; b < 2 && st == FB_OK; b++)
            st = s->be->alloc(FB_MEM_DEVICE, s->wire_bytes, &s->dev_wire[b]);
        break;
    case V_CPU:
        st = setup_ring(s, c);
        break;
    default:
        if ((st = setup_device(s)) == FB_OK)
            st = setup_ring(s, c);
        break;
    }
    if (st != FB_OK)
        goto fail;
    *state = s;
    return s->be->stream_sync(stream);
fail:
    pl_teardown(s);
    return st;
}

/* One batch through the device side. The copy of batch n goes on the copy stream into buffer
 * n % 2 once that buffer's previous batch (n - 2) is consumed; the compute stream waits for the
 * copy, normalizes, computes. The host slot of batch n - 1 goes back to the workers once its
 * copy is done, so the host never runs more than two batches ahead of the device. */
static fb_status feed(struct pl_state *s)
{
    const struct fb_backend *be = s->be;
    int b = (int)(s->n % 2), prev = 1 - b;
    size_t plane = (size_t)s->spec.res * (size_t)s->spec.res;
    struct fb_batch batch;
    fb_status st;

    /* A ring of one slot cannot hold the previous batch while the next is taken. */
    if (s->variant != V_COPY && s->depth < 2 && s->has_pending[prev]) {
        if ((st = be->event_sync(s->copied[prev])) != FB_OK)
            return st;
        fb_pipeline_release(s->pipe, &s->pending[prev]);
        s->has_pending[prev] = false;
    }
    if (s->variant == V_COPY)
        batch = s->held[s->n % s->nheld];
    else if ((st = take(s, &batch)) != FB_OK)
        return st;
    if ((s->consumed_recorded[b] &&
         (st = be->stream_wait_event(s->copy_stream, s->consumed[b])) != FB_OK) ||
        (st = be->copy(s->dev_wire[b], batch.data, s->wire_bytes, FB_COPY_H2D, s->copy_stream)) !=
            FB_OK ||
        (st = be->event_record(s->copied[b], s->copy_stream)) != FB_OK ||
        (st = be->stream_wait_event(s->stream, s->copied[b])) != FB_OK)
        return st;
    /* The previous batch's host slot goes back to the workers as soon as its copy is done, before
     * this batch is computed on: the workers fill it while the consumer computes (on host every
     * stream operation returns when done, so releasing after the compute would stop the
     * prefetch for the whole compute). Its copy ran before this one on the same copy stream. */
    if (s->has_pending[prev]) {
        if ((st = be->event_sync(s->copied[prev])) != FB_OK)
            return st;
        if (s->variant != V_COPY)
            fb_pipeline_release(s->pipe, &s->pending[prev]);
        s->has_pending[prev] = false;
    }
    if (s->variant != V_COPY && !s->spec.wire_float &&
        (st = be->normalize_u8(s->dev_float[b], s->dev_wire[b], (size_t)s->spec.batch, plane,
                               fb_augment_mean, fb_augment_inv_std, s->stream)) != FB_OK)
        return st;
    if (s->busy_us > 0 && (st = be->busy_wait(s->busy_us, s->stream)) != FB_OK)
        return st;
    if ((st = be->event_record(s->consumed[b], s->stream)) != FB_OK)
        return st;
    s->consumed_recorded[b] = true;
    s->pending[b] = batch;
    s->has_pending[b] = true;
    s->n++;
    return FB_OK;
}

/* Batches with workers: the gate is open only while an iteration runs, so the ring does not
 * fill up between trials (runner barriers) and hand the next trial batches built off the clock.
 * Between two iterations of a trial it closes for microseconds; a worker that finishes an image
 * then waits that long. */
static fb_status gated(struct pl_state *s)
{
    fb_status st = FB_OK;
    struct fb_batch b;

    fb_pipeline_gate(s->pipe, true);
    for (int i = 0; i < s->per_iter && st == FB_OK; i++) {
        if (s->variant != V_CPU) {
            st = feed(s);
        } else if ((st = take(s, &b)) == FB_OK) {
            fb_pipeline_release(s->pipe, &b);
            s->n++;
        }
    }
    fb_pipeline_gate(s->pipe, false);
    return st;
}

static fb_status pl_iterate(void *p)
{
    struct pl_state *s = p;
    struct fb_image_info info;
    int k;

    switch (s->variant) {
    case V_DECODE:
        k = (int)(s->next_image++ % s->set->count);
        return fb_image_decode(s->set->data[k], s->set->len[k], s->decoded,
                               fb_imageset_decoded_bytes(s->set), &info);
    case V_H2D_RAW:
        k = (int)(s->next_raw++ % s->depth);
        return s->be->copy(s->dev_wire[s->next_raw % 2], s->host_raw[k], s->wire_bytes,
                           FB_COPY_H2D, s->stream);
    case V_COPY:
        return feed(s);
    default:
        return gated(s);
    }
}

/* Every image of one batch against the analytic source; returns the wrong ones. */
static size_t check_batch(const struct pl_state *s, long seq, const void *data, bool normalized)
{
    struct fb_batch_spec spec = s->spec;
    size_t each, wrong = 0;
    double err;

    spec.wire_float = normalized;
    each = fb_batch_image_bytes(&spec);
    for (int i = 0; i < spec.batch; i++) {
        uint64_t image = (uint64_t)seq * (uint64_t)spec.batch + (uint64_t)i;
        if (!fb_imageset_check(s->set, &spec, image, (const unsigned char *)data + i * each, &err)) {
            if (wrong == 0)
                fb_warn("pipeline: batch %ld image %d is wrong (error %.2f levels)", seq, i, err);
            wrong++;
        }
    }
    return wrong;
}

static fb_status pl_verify(void *p, size_t *wrong)
{
    struct pl_state *s = p;
    const struct fb_pattern poison = {.seed = 0, .scale = 0, .offset = -77};
    struct fb_batch b;
    fb_status st;
    size_t out_bytes;
    int k, bi;

    *wrong = 0;
    if (s->pipe) /* the workers build the batch checked */
        fb_pipeline_gate(s->pipe, true);
    switch (s->variant) {
    case V_DECODE: {
        /* the decoded image against the analytic one: exact for PNG, near for JPEG */
        const struct fb_image_info *want = &s->set->info;
        size_t n = fb_imageset_decoded_bytes(s->set), bad = 0;
        double sum = 0.0;
        k = (int)(s->next_image % s->set->count);
        memset(s->decoded, 0x5a, n);
        if ((st = pl_iterate(s)) != FB_OK)
            return st;
        for (int y = 0; y < want->height; y++)
            for (int x = 0; x < want->width; x++)
                for (int c = 0; c < want->channels; c++) {
                    int e = abs((int)s->decoded[((size_t)y * want->width + x) * want->channels + c] -
                                (int)fb_synth_pixel(s->set->seed + (uint32_t)k, want->width,
                                                    want->height, want->channels, x, y, c));
                    bad += e != 0;
                    sum += e;
                }
        *wrong = s->set->format == FB_IMAGE_PNG ? bad != 0 : sum / (double)n > FB_JPEG_MAE_BOUND;
        return FB_OK;
    }
    case V_H2D_RAW:
        bi = (int)((s->next_raw + 1) % 2); /* where the next copy lands */
        if ((st = s->be->fill(s->dev_wire[bi], s->wire_bytes / 4, FB_DTYPE_INT32, poison,
                              s->stream)) != FB_OK ||
            (st = pl_iterate(s)) != FB_OK ||
            (st = s->be->check(s->dev_wire[bi], s->wire_bytes / 4, FB_DTYPE_INT32,
                               (struct fb_pattern){.seed = 5, .scale = 1}, wrong, s->stream)) !=
                FB_OK)
            return st;
        return FB_OK;
    case V_CPU:
        if ((st = take(s, &b)) != FB_OK)
            return st;
        *wrong = (size_t)s->misordered + check_batch(s, b.seq, b.data, s->spec.wire_float);
        fb_pipeline_release(s->pipe, &b);
        s->n++;
        return FB_OK;
    default:
        break;
    }
    /* Device side: poison the buffers the next batch lands in, run it, copy what the consumer
     * would read back to the host and check it (the copy alone leaves uint8 on the device). */
    bi = (int)(s->n % 2);
    out_bytes = s->variant == V_COPY || s->spec.wire_float ? s->wire_bytes
                                                            : s->wire_bytes * sizeof(float);
    if (!(s->check_buf = s->check_buf ? s->check_buf : malloc(out_bytes)))
        return FB_ERR_NOMEM;
    if ((st = s->be->stream_sync(s->copy_stream)) != FB_OK ||
        (st = s->be->stream_sync(s->stream)) != FB_OK ||
        (st = s->be->fill(s->dev_wire[bi], s->wire_bytes / 4, FB_DTYPE_INT32, poison,
                          s->stream)) != FB_OK ||
        (s->dev_float[bi] && (st = s->be->fill(s->dev_float[bi], s->wire_bytes, FB_DTYPE_INT32,
                                               poison, s->stream)) != FB_OK) ||
        (st = s->be->stream_sync(s->stream)) != FB_OK || (st = feed(s)) != FB_OK ||
        (st = s->be->stream_sync(s->stream)) != FB_OK)
        return st;
    memset(s->check_buf, 0xff, out_bytes);
    if ((st = s->be->copy(s->check_buf,
                          out_bytes == s->wire_bytes ? s->dev_wire[bi] : (void *)s->dev_float[bi],
                          out_bytes, FB_COPY_D2H, s->stream)) != FB_OK ||
        (st = s->be->stream_sync(s->stream)) != FB_OK)
        return st;
    *wrong = (size_t)s->misordered +
             check_batch(s, s->pending[bi].seq, s->check_buf, out_bytes != s->wire_bytes ||
                                                                  s->spec.wire_float);
    return FB_OK;
}

/* This benchmark's whole-point row of case `kase` and `metric` for the same ranks, rank and
 * batch as `like` (the decode case has no batch). */
static const struct fb_row *find_row(const struct fb_results *res, size_t first,
                                     const struct fb_row *like, const char *kase,
                                     const char *metric)
{
    for (size_t i = first; i < res->nrows; i++) {
        const struct fb_row *w = &res->rows[i];
        if (strcmp(w->bench, "pipeline") == 0 && !w->detail && w->ranks == like->ranks &&
            w->src == like->src && (w->batch == like->batch || strcmp(kase, "decode") == 0) &&
            strcmp(w->kase, kase) == 0 && strcmp(w->metric, metric) == 0)
            return w;
    }
    return NULL;
}

static fb_status add_ratio(struct fb_results *res, const struct fb_row *like, const char *metric,
                           double pct)
{
    struct fb_row extra = *like;

    snprintf(extra.metric, sizeof extra.metric, "%s", metric);
    snprintf(extra.unit, sizeof extra.unit, "%%");
    extra.st = (struct fb_stats){.samples = 1, .median = pct, .p05 = pct, .p95 = pct,
                                 .min = pct, .max = pct, .mean = pct, .stddev = 0.0};
    extra.detail = true;
    return fb_results_add(res, &extra);
}

/* Rank 0: the CPU side against the codec alone (per thread), the copies against the raw copy
 * of the same bytes, and the stall fractions, as a table and as ratio rows (one sample each:
 * a ratio of medians). */
static void pl_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    size_t nrows = res->nrows;

    fb_out("\n# pipeline (%s, %s wire): CPU side per thread against the codec alone; copies "
           "against a plain copy of the same bytes\n", ctx->opt->dataset,
           ctx->opt->wire_float ? "float" : "uint8");
    fb_out("# %5s %4s %6s %-16s %12s %12s %10s\n", "ranks", "rank", "batch", "case", "figure",
           "reference", "ratio");
    for (size_t i = first; i < nrows; i++) {
        const struct fb_row *w = &res->rows[i], *ref = NULL;
        const char *metric = NULL;
        char who[16];
        double figure = w->st.median, pct;

        if (strcmp(w->bench, "pipeline") != 0 || w->detail)
            continue;
        if (strncmp(w->kase, "cpu_t", 5) == 0 && strcmp(w->metric, "images_per_s") == 0) {
            figure /= atof(w->kase + 5); /* images/s per worker thread */
            ref = find_row(res, first, w, "decode", "images_per_s");
            metric = "cpu_vs_decode";
        } else if ((strcmp(w->kase, "copy") == 0 || strcmp(w->kase, "pipeline") == 0) &&
                   strncmp(w->metric, "bandwidth", 9) == 0) {
            ref = find_row(res, first, w, "h2d_raw", w->metric);
            metric = strcmp(w->kase, "copy") == 0 ? "copy_vs_h2d" : "pipeline_vs_h2d";
        } else if (strcmp(w->metric, "stall_fraction") == 0) {
            snprintf(who, sizeof who, "%s", w->src < 0 ? "all" : "");
            if (w->src >= 0)
                snprintf(who, sizeof who, "%d", w->src);
            fb_out("  %5d %4s %6ld %-16s %12.3f %12s %10s\n", w->ranks, who, w->batch, w->kase,
                   figure, "stall", "");
            continue;
        }
        if (!ref || ref->st.median <= 0)
            continue;
        pct = figure / ref->st.median * 100.0;
        if (w->src >= 0)
            snprintf(who, sizeof who, "%d", w->src);
        else
            snprintf(who, sizeof who, "all");
        fb_out("  %5d %4s %6ld %-16s %12.3f %12.3f %9.1f%%  (%s)\n", w->ranks, who, w->batch,
               w->kase, figure, ref->st.median, pct,
               strcmp(metric, "cpu_vs_decode") == 0 ? "images/s per thread vs decode" : "GB/s vs h2d_raw");
        if (add_ratio(res, w, metric, pct) != FB_OK)
            break;
    }
}

const struct fb_bench fb_bench_pipeline = {
    .name = "pipeline",
    .summary = "input pipeline: PNG/JPEG decode and augmentation on worker threads into a ring of "
               "pinned batches, copied to the device; images/s, copy GB/s, stall fraction",
    .min_ranks = 1,
    .plan = pl_plan,
    .setup = pl_setup,
    .iterate = pl_iterate,
    .verify = pl_verify,
    .teardown = pl_teardown,
    .summarize = pl_summarize,
};
