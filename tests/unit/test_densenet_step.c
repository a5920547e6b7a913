/* The training step's sequence on the host engine: its FLOP count against the published
 * 2.834 G multiply-accumulates per 224x224 image (a step = 3x forward, less the stem
 * convolution's data gradient), the groups adding up to the whole, a real step at a small
 * shape that produces finite values, and one grad-ready time per parameter layer, in backward
 * order and non-decreasing. */
#include <math.h>
#include <string.h>

#include "densenet_step.h"
#include "test.h"

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
    e->close(ctx);
    be->stream_destroy(s);
    fb_densenet_layers_free(&d);
    TEST_DONE();
}
