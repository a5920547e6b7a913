/* memfit's model: the parts add up, the fixed part is what the parameters and the optimizer
 * say, activations grow linearly with the batch, the batch chosen for a budget is the largest
 * that fits, and the buffers a confirmation allocates are the estimate, one by one. */
#include <stdlib.h>

#include "densenet.h"
#include "memfit.h"
#include "test.h"

static size_t sum(const size_t *v, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(void)
{
    const size_t params = 6968206; /* DenseNet-121 with 14 classes (docs/reference-figures.md) */
    struct fb_memfit_config fp32 = {224, 14, 4, 2}, fp16 = {224, 14, 2, 0};
    struct fb_memfit_parts one, two, eight, at, next;
    size_t *sizes, n;
    long b;

    CHECK(fb_memfit_estimate(&fp32, 1, &one) == FB_OK);
    CHECK(one.weights == params * 4);
    CHECK(one.grads == params * 4);
    CHECK(one.optimizer == params * 8); /* Adam: two fp32 moments per weight */
    CHECK(one.total == one.weights + one.grads + one.optimizer + one.activations + one.workspace);
    /* the input image and the stem: 224x224x3 in, 112x112x64 conv0 and norm0, 56x56x64 pool
     * (+ its int64 indices): a floor under one image's saved activations */
    CHECK(one.activations > (224 * 224 * 3 + 2 * 112 * 112 * 64 + 56 * 56 * 64) * 4 +
                                56 * 56 * 64 * 8);
    /* and DenseNet-121 at 224 keeps between 100 and 200 MB per fp32 image (the plain
     * implementation, measured by the memory-efficient DenseNet paper as ~quadratic) */
    CHECK(one.activations > 100e6 && one.activations < 200e6);

    CHECK(fb_memfit_estimate(&fp32, 2, &two) == FB_OK);
    CHECK(fb_memfit_estimate(&fp32, 8, &eight) == FB_OK);
    CHECK(eight.activations == 8 * one.activations);
    CHECK(eight.workspace == 8 * one.workspace);
    CHECK(eight.weights == one.weights && eight.optimizer == one.optimizer);

    /* mixed precision: half the activation bytes (max-pool's int64 indices stay), plus half
     * copies of the weights */
    CHECK(fb_memfit_estimate(&fp16, 1, &at) == FB_OK);
    CHECK((at.activations - 56 * 56 * 64 * 8) * 2 == one.activations - 56 * 56 * 64 * 8);
    CHECK(at.weights == params * 6);
    CHECK(at.optimizer == 0);

    /* the largest batch for a budget: it fits, one more does not */
    b = fb_memfit_batch_for(&fp32, (size_t)16 << 30);
    CHECK(b > 50 && b < 200);
    CHECK(fb_memfit_estimate(&fp32, (int)b, &at) == FB_OK && at.total <= (size_t)16 << 30);
    CHECK(fb_memfit_estimate(&fp32, (int)b + 1, &next) == FB_OK && next.total > (size_t)16 << 30);
    CHECK(fb_memfit_batch_for(&fp32, one.total - 1) == 0);
    CHECK(fb_memfit_batch_for(&fp32, one.total) == 1);

    /* the confirmation allocates exactly the estimate */
    CHECK(fb_memfit_buffers(&fp32, 8, &sizes, &n) == FB_OK);
    CHECK(n > 300 && sum(sizes, n) == eight.total);
    free(sizes);
    CHECK(fb_memfit_buffers(&fp16, 3, &sizes, &n) == FB_OK);
    CHECK(fb_memfit_estimate(&fp16, 3, &at) == FB_OK && sum(sizes, n) == at.total);
    free(sizes);

    fp32.act_bytes = 3;
    CHECK(fb_memfit_estimate(&fp32, 1, &at) == FB_ERR_USAGE);
    fp32.act_bytes = 4;
    CHECK(fb_memfit_estimate(&fp32, 0, &at) == FB_ERR_USAGE);
    TEST_DONE();
}
