/* memfit's model, the list of the step's buffers: each part is what its buffers say (weights
 * and gradients from the parameter count, the outputs and their gradients from the layer list),
 * activations grow linearly with the batch and the rest does not, the batch chosen for a budget
 * is the largest that fits, the plan's two halves make the whole, and bad configs are refused.
 * That the step allocates exactly this list is test_densenet_step's (and the step's own check,
 * densenet_step.c's take()). */
#include <stdlib.h>

#include "densenet.h"
#include "densenet_layers.h"
#include "memfit.h"
#include "test.h"

static size_t sum(const struct fb_memfit_buf *b, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += b[i].bytes;
    return s;
}

int main(void)
{
    const size_t params = 6968206; /* DenseNet-121 with 14 classes (docs/reference-figures.md) */
    struct fb_memfit_config fp32 = {224, 14, 4, 2, 4}, fp16 = {224, 14, 2, 1, 2};
    struct fb_memfit_parts one, two, eight, at, next;
    struct fb_memfit_buf *b, *net, *own;
    struct fb_densenet_layers d;
    size_t n, nn, no, outs = 0, sum_out = 0, bn = 0, gemm_w = 0, conv_linear_params = 0;
    long batch;

    CHECK(fb_memfit_estimate(&fp32, 1, &one) == FB_OK);
    CHECK(one.total == one.weights + one.grads + one.optimizer + one.activations + one.act_grads);
    CHECK(one.optimizer == params * 8); /* Adam: two fp32 moments per weight */

    /* the plan against the layer list, one image at 224 in fp32 */
    CHECK(fb_densenet_layers_build(1, 224, 14, &d) == FB_OK);
    for (size_t i = 0; i < d.nlayers; i++) {
        const struct fb_layer *l = &d.layers[i];
        sum_out += fb_layer_out_elements(l) * 4;
        if (l->kind == FB_LAYER_NORM)
            bn += (size_t)l->c;
        else if (l->kind == FB_LAYER_CONV || l->kind == FB_LAYER_LINEAR)
            conv_linear_params += l->kind == FB_LAYER_LINEAR ? (size_t)l->k * l->c : l->params;
    }
    CHECK(fb_memfit_plan(&fp32, 1, FB_MEMFIT_ALL, &b, &n) == FB_OK);
    CHECK(sum(b, n) == one.total);
    for (size_t i = 0; i < n; i++) {
        CHECK(b[i].layer >= -1 && b[i].layer < (long)d.nlayers);
        if (b[i].role == FB_BUF_OUT) {
            CHECK(b[i].bytes == fb_layer_out_elements(&d.layers[b[i].layer]) * 4);
            outs++;
        }
        if (b[i].role == FB_BUF_W)
            gemm_w += b[i].bytes;
    }
    CHECK(outs == d.nlayers);
    free(b);
    /* classifier bias aside, the GEMM weights are every conv and linear weight, in fp32 */
    CHECK(gemm_w == conv_linear_params * 4);
    /* weights: the compute copies, BatchNorm's gamma, beta and mean/var (4 x c), fp32 masters */
    CHECK(one.weights == gemm_w + bn * 4 * 4 + params * 4);
    /* gradients: per layer fp32 (GEMMs, BatchNorm's two), then the all-reduced send/recv pair */
    CHECK(one.grads == gemm_w + bn * 2 * 4 + 2 * params * 4);
    /* every output and its gradient; the batch three times (compute copy, uint8, float32) */
    CHECK(one.activations == sum_out + 224 * 224 * 3 * (4 + 1 + 4));
    CHECK(one.act_grads > sum_out && one.act_grads < sum_out + 2 * 112 * 112 * 64 * 4 + 65536);
    /* which is about 2 x 135 MB for one fp32 image: twice what PyTorch's autograd keeps */
    CHECK(one.activations + one.act_grads > 250e6 && one.activations + one.act_grads < 300e6);
    fb_densenet_layers_free(&d);

    /* linear in the batch: the per-image parts scale, the fixed ones stay */
    CHECK(fb_memfit_estimate(&fp32, 2, &two) == FB_OK);
    CHECK(fb_memfit_estimate(&fp32, 8, &eight) == FB_OK);
    CHECK(eight.activations == 8 * one.activations);
    CHECK(eight.weights == one.weights && eight.optimizer == one.optimizer &&
          eight.grads == one.grads);
    CHECK(eight.total - one.total == 7 * (two.total - one.total));

    /* mixed precision: half the activation bytes (the uint8 and float32 batch stay), the
     * compute copies of the weights in half, fp16 gradients on the wire, one momentum slot */
    CHECK(fb_memfit_estimate(&fp16, 1, &at) == FB_OK);
    CHECK((at.activations - 224 * 224 * 3 * 5) * 2 == one.activations - 224 * 224 * 3 * 5);
    CHECK(at.weights == gemm_w / 2 + bn * 4 * 4 + params * 4);
    CHECK(at.grads == gemm_w + bn * 2 * 4 + 2 * params * 2);
    CHECK(at.optimizer == params * 4);

    /* the two halves are the whole, in order: the network's first */
    CHECK(fb_memfit_plan(&fp16, 3, FB_MEMFIT_ALL, &b, &n) == FB_OK);
    CHECK(fb_memfit_plan(&fp16, 3, FB_MEMFIT_NET, &net, &nn) == FB_OK);
    CHECK(fb_memfit_plan(&fp16, 3, FB_MEMFIT_STEP, &own, &no) == FB_OK);
    CHECK(nn + no == n && nn > 300 && no == 6); /* wire, input, send, recv, master, 1 slot */
    for (size_t i = 0; i < n && nn + no == n; i++) {
        const struct fb_memfit_buf *x = i < nn ? &net[i] : &own[i - nn];
        CHECK(b[i].role == x->role && b[i].layer == x->layer && b[i].bytes == x->bytes);
    }
    CHECK(own[no - 1].role == FB_BUF_OPT_STATE && own[0].role == FB_BUF_WIRE);
    CHECK(own[0].bytes == 3 * 224 * 224 * 3);
    free(b);
    free(net);
    free(own);

    /* the largest batch for a budget: it fits, one more does not */
    batch = fb_memfit_batch_for(&fp16, (size_t)32 << 30);
    CHECK(batch > 150 && batch < 300); /* a 32 GB V100: about 250 images, fp16 */
    CHECK(fb_memfit_estimate(&fp16, (int)batch, &at) == FB_OK && at.total <= (size_t)32 << 30);
    CHECK(fb_memfit_estimate(&fp16, (int)batch + 1, &next) == FB_OK &&
          next.total > (size_t)32 << 30);
    CHECK(fb_memfit_batch_for(&fp32, one.total - 1) == 0);
    CHECK(fb_memfit_batch_for(&fp32, one.total) == 1);

    fp32.act_bytes = 3;
    CHECK(fb_memfit_estimate(&fp32, 1, &at) == FB_ERR_USAGE);
    fp32.act_bytes = 4;
    fp32.grad_bytes = 8;
    CHECK(fb_memfit_plan(&fp32, 1, FB_MEMFIT_ALL, &b, &n) == FB_ERR_USAGE && !b && n == 0);
    fp32.grad_bytes = 4;
    CHECK(fb_memfit_estimate(&fp32, 0, &at) == FB_ERR_USAGE);
    CHECK(fb_memfit_plan(&fp32, 1, 0, &b, &n) == FB_ERR_USAGE);
    TEST_DONE();
}
