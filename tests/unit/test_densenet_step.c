/* The training step's sequence on the host engine: its FLOP count against the published
 * 2.834 G multiply-accumulates per 224x224 image (a step = 3x forward, less the stem
 * convolution's data gradient), the groups adding up to the whole, a real step at a small
 * shape that produces finite values, and one grad-ready time per parameter layer, in backward
 * order and non-decreasing. And its memory: every device allocation the step makes is the
 * memory model's (model/memfit.c) to the byte, in order, layer by layer, in fp32 and fp16; on
 * host-strict with a 32 GiB device, the whole step at memfit's batch fits and twice it does not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend_strict.h"
#include "densenet_step.h"
#include "memfit.h"
#include "test.h"

/* The host backend with its device allocations recorded. */
static struct {
    size_t bytes[4096];
    size_t n;
} rec;
static struct fb_backend recording;

static fb_status record_alloc(enum fb_mem kind, size_t bytes, void **out)
{
    if (kind == FB_MEM_DEVICE && rec.n < 4096)
        rec.bytes[rec.n++] = bytes;
    return fb_backend_host.alloc(kind, bytes, out);
}

/* The step's allocations at `batch` images of `res` in `prec` against the model's plan of the
 * network's buffers: the same count, and each the same bytes, in order; then per layer. */
static void agrees(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx, struct fb_stream *s,
                   int batch, int res, enum fb_conv_prec prec)
{
    const struct fb_memfit_config mc = {res, 14, prec == FB_CONV_FP32 ? 4 : 2, 0, 4};
    struct fb_densenet_layers d;
    struct fb_densenet_step *st = NULL;
    struct fb_memfit_buf *plan = NULL;
    size_t n = 0, *per_layer_plan, *per_layer_step;

    CHECK(fb_densenet_layers_build(batch, res, 14, &d) == FB_OK);
    CHECK(fb_memfit_plan(&mc, batch, FB_MEMFIT_NET, &plan, &n) == FB_OK);
    per_layer_plan = calloc(d.nlayers + 1, sizeof *per_layer_plan);
    per_layer_step = calloc(d.nlayers + 1, sizeof *per_layer_step);
    rec.n = 0;
    CHECK(fb_densenet_step_create(&d, &recording, e, ctx, prec, FB_STEP_WITH_TRAIN, s, &st) ==
          FB_OK);
    CHECK(rec.n == n);
    for (size_t i = 0; i < n && i < rec.n && per_layer_plan; i++) {
        CHECK(rec.bytes[i] == plan[i].bytes);
        per_layer_plan[plan[i].layer + 1] += plan[i].bytes;
        per_layer_step[plan[i].layer + 1] += rec.bytes[i];
    }
    for (size_t l = 0; l <= d.nlayers && per_layer_plan; l++)
        CHECK(per_layer_plan[l] == per_layer_step[l]);
    fb_densenet_step_free(st);
    free(plan);
    free(per_layer_plan);
    free(per_layer_step);
    fb_densenet_layers_free(&d);
}

/* On host-strict with a device of `capacity`: the network's buffers (the step) and the step's
 * own (in the plan's sizes, as train_step.c takes them) at `batch`. FB_ERR_NOMEM past it. */
static fb_status whole_step(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx,
                            struct fb_stream *s, const struct fb_memfit_config *mc, int batch)
{
    const struct fb_backend *be = &fb_backend_host_strict;
    struct fb_densenet_layers d;
    struct fb_densenet_step *st = NULL;
    struct fb_memfit_buf *own = NULL;
    void *p[8] = {0};
    size_t n = 0, k = 0;
    fb_status rc;

    if ((rc = fb_densenet_layers_build(batch, mc->resolution, mc->classes, &d)) != FB_OK)
        return rc;
    rc = fb_densenet_step_create(&d, be, e, ctx, FB_CONV_FP16, FB_STEP_WITH_TRAIN, s, &st);
    if (rc == FB_OK)
        rc = fb_memfit_plan(mc, batch, FB_MEMFIT_STEP, &own, &n);
    for (k = 0; rc == FB_OK && k < n && k < 8; k++)
        rc = be->alloc(FB_MEM_DEVICE, own[k].bytes, &p[k]);
    while (k-- > 0)
        be->free(FB_MEM_DEVICE, p[k]);
    fb_densenet_step_free(st);
    free(own);
    fb_densenet_layers_free(&d);
    return rc;
}

int main(void)
{
    const struct fb_backend *be = &fb_backend_host;
    const struct fb_conv_engine *e = &fb_conv_engine_host;
    struct fb_densenet_layers d;
    struct fb_densenet_step *st = NULL;
    struct fb_conv_ctx *ctx = NULL;
    struct fb_stream *s = NULL;
    struct fb_grad_ready g[600];
    double fwd, step, groups = 0;
    size_t n, bad = 99, convs = 0, norms = 0, linears = 0;
    char why[256];

    /* FLOPs at batch 1, 224x224 */
    CHECK(fb_densenet_layers_build(1, 224, 1000, &d) == FB_OK);
    fwd = fb_densenet_run_macs(&d, FB_STEP_ALL_GROUPS, FB_STEP_FWD);
    step = fb_densenet_run_macs(&d, FB_STEP_ALL_GROUPS, FB_STEP_BOTH);
    CHECK(fabs(fwd / 1e9 - 2.834) < 0.0005);
    /* conv0: 112 x 112 outputs x 64 filters x 7 x 7 x 3 */
    CHECK(fabs(step - (3.0 * fwd - 112.0 * 112 * 64 * 7 * 7 * 3)) < 1.0);
    CHECK(fabs(step - fb_densenet_step_macs(&d)) < 1.0);
    for (int gi = 0; gi < FB_LAYER_GROUPS; gi++)
        groups += fb_densenet_run_macs(&d, gi, FB_STEP_FWD) + fb_densenet_run_macs(&d, gi, FB_STEP_BWD);
    CHECK(fabs(groups - step) < 1.0);
    fb_densenet_layers_free(&d);

    /* a real step on the CPU: 2 images of 32x32 */
    CHECK(fb_densenet_layers_build(2, 32, 14, &d) == FB_OK);
    CHECK(be->stream_create(&s) == FB_OK);
    CHECK(e->open(be, FB_CONV_FP32, &ctx, why, sizeof why) == FB_OK);
    CHECK(fb_densenet_step_create(&d, be, e, ctx, FB_CONV_FP32,
                                  FB_STEP_WITH_TRAIN | FB_STEP_WITH_REF, s, &st) == FB_OK);
    if (!st)
        TEST_DONE();
    CHECK(fb_densenet_step_run(st, FB_STEP_OURS, FB_STEP_ALL_GROUPS, FB_STEP_BOTH) == FB_OK);
    CHECK(be->stream_sync(s) == FB_OK);
    CHECK(fb_densenet_step_nonfinite(st, FB_STEP_ALL_GROUPS, FB_STEP_BOTH, &bad) == FB_OK);
    CHECK(bad == 0);

    n = fb_densenet_step_grad_ready(st, g, sizeof g / sizeof g[0]);
    CHECK(n == 242); /* 120 convolutions, 121 BatchNorms, the classifier */
    for (size_t i = 0; i < n && i < 600; i++) {
        enum fb_layer_kind k = d.layers[g[i].layer].kind;
        convs += k == FB_LAYER_CONV;
        norms += k == FB_LAYER_NORM;
        linears += k == FB_LAYER_LINEAR;
        CHECK(g[i].us >= 0);
        if (i > 0) {
            CHECK(g[i].layer < g[i - 1].layer); /* backward order */
            CHECK(g[i].us >= g[i - 1].us);
        }
    }
    CHECK(convs == 120 && norms == 121 && linears == 1);
    CHECK(g[0].layer == d.nlayers - 1 && g[n - 1].layer == 0); /* classifier first, conv0 last */

    /* every group alone, both ways, and the reference */
    for (int gi = 0; gi < FB_LAYER_GROUPS; gi++) {
        CHECK(fb_densenet_step_run(st, FB_STEP_OURS, gi, FB_STEP_FWD) == FB_OK);
        CHECK(fb_densenet_step_run(st, FB_STEP_OURS, gi, FB_STEP_BWD) == FB_OK);
        CHECK(fb_densenet_step_nonfinite(st, gi, FB_STEP_BOTH, &bad) == FB_OK && bad == 0);
    }
    CHECK(fb_densenet_step_run(st, FB_STEP_REF, FB_STEP_ALL_GROUPS, FB_STEP_BOTH) == FB_OK);
    CHECK(fb_densenet_step_run(st, FB_STEP_CONVS, FB_STEP_ALL_GROUPS, FB_STEP_BOTH) == FB_OK);
    fb_densenet_step_free(st);
    fb_densenet_step_free(NULL);

    /* a step made for the reference alone cannot run ours */
    CHECK(fb_densenet_step_create(&d, be, e, ctx, FB_CONV_FP32, FB_STEP_WITH_REF, s, &st) == FB_OK);
    CHECK(fb_densenet_step_run(st, FB_STEP_OURS, FB_STEP_ALL_GROUPS, FB_STEP_FWD) == FB_ERR_USAGE);
    fb_densenet_step_free(st);

    /* the memory model is what the step allocates, to the byte */
    recording = fb_backend_host;
    recording.alloc = record_alloc;
    agrees(e, ctx, s, 2, 32, FB_CONV_FP32);
    agrees(e, ctx, s, 3, 64, FB_CONV_FP16);
    agrees(e, ctx, s, 1, 224, FB_CONV_BF16);
    be->stream_destroy(s);
    e->close(ctx);

    /* a 32 GiB device on a CPU: memfit's batch (fp16, SGD momentum as the step) fits, twice it
     * does not, and nothing is left held */
    {
        const struct fb_backend *strict = &fb_backend_host_strict;
        const struct fb_memfit_config mc = {224, 14, 2, 1, 4};
        struct fb_device_info info;
        long fit = fb_memfit_batch_for(&mc, (size_t)32 << 30);
        CHECK(fit > 200 && fit < 300);
        CHECK(strict->set_capacity((size_t)32 << 30) == FB_OK);
        CHECK(strict->open(0, &info) == FB_OK);
        CHECK(strict->stream_create(&s) == FB_OK);
        CHECK(e->open(strict, FB_CONV_FP32, &ctx, why, sizeof why) == FB_OK);
        CHECK(whole_step(e, ctx, s, &mc, (int)fit) == FB_OK);
        CHECK(fb_strict_mem_in_use() == 0);
        CHECK(whole_step(e, ctx, s, &mc, (int)(2 * fit)) == FB_ERR_NOMEM);
        CHECK(whole_step(e, ctx, s, &mc, (int)fit + 1) == FB_ERR_NOMEM);
        CHECK(fb_strict_mem_in_use() == 0);
        e->close(ctx);
        strict->stream_destroy(s);
        strict->close();
        CHECK(strict->set_capacity(0) == FB_OK);
    }
    fb_densenet_layers_free(&d);
    TEST_DONE();
}
