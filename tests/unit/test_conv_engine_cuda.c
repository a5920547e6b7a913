/* The cuda convolution engine (our implicit-GEMM kernels) against the reference on small
 * shapes: each pass, in fp32, fp16 and bf16, checked element by element by fb_conv_check
 * against a direct convolution in double of the same rounded inputs (tolerance: the output
 * type's rounding, 1e-3 fp16 / 8e-3 bf16 relative, plus 1e-4 of the sum of |products| for fp32
 * accumulation); the host engine passes the same check (test_conv_engine), so both agree with
 * each other within it. Also cuBLAS's ceiling GEMM, when the library is there. Exits 77
 * (skipped, never passed) without the kernels built or without a GPU. */
#include <stdio.h>

#include "conv_engine.h"
#include "test.h"

static struct fb_kconv shape(int n, int h, int w, int c, int k, int r, int stride, int pad)
{
    struct fb_kconv cv = {.n = n, .h = h, .w = w, .c = c, .k = k, .r = r, .s = r,
                          .stride = stride, .pad = pad};
    cv.p = (h + 2 * pad - r) / stride + 1;
    cv.q = (w + 2 * pad - r) / stride + 1;
    return cv;
}

int main(void)
{
    const struct fb_backend *be = &fb_backend_cuda;
    const struct fb_conv_engine *e = &fb_conv_engine_cuda;
    const struct fb_kconv shapes[] = {
        shape(2, 19, 17, 3, 64, 7, 2, 3), /* the stem */
        shape(3, 7, 6, 96, 128, 1, 1, 0), /* a bottleneck 1x1 */
        shape(2, 7, 7, 128, 32, 3, 1, 1), /* a dense layer's 3x3 */
        shape(2, 5, 9, 13, 7, 3, 1, 1),   /* odd channels */
    };
    struct fb_device_info info;
    struct fb_stream *s = NULL;
    char why[256] = "";

    if (!e->built || !be->built) {
        printf("skipped: %s\n", "the cuda engine is not built (kernels/conv_gemm.cu, FB_WITH_CUDA)");
        return 77;
    }
    if (be->device_count(why, sizeof why) < 1) {
        printf("skipped: no GPU: %s\n", why);
        return 77;
    }
    CHECK(be->open(0, &info) == FB_OK);
    CHECK(be->stream_create(&s) == FB_OK);
    for (int prec = FB_CONV_FP32; prec <= FB_CONV_BF16; prec++) {
        struct fb_conv_ctx *ctx = NULL;
        if (e->open(be, prec, &ctx, why, sizeof why) != FB_OK) {
            fprintf(stderr, "cannot open the cuda engine for %s: %s\n", fb_conv_prec_name(prec), why);
            CHECK(0);
            continue;
        }
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int pass = FB_CONV_FWD; pass <= FB_CONV_WGRAD; pass++) {
                size_t wrong = 0;
                CHECK(fb_conv_check(e, ctx, be, prec, &shapes[i], pass, 31u + (uint32_t)i, s,
                                    &wrong) == FB_OK);
                if (wrong)
                    fprintf(stderr, "%s shape %zu pass %d: %zu wrong\n", fb_conv_prec_name(prec), i,
                            pass, wrong);
                CHECK(wrong == 0);
            }
        if (!e->ref_missing(ctx)) {
            size_t wrong = 0;
            CHECK(fb_conv_check_gemm(e, ctx, be, prec, 67, 45, 129, s, &wrong) == FB_OK);
            CHECK(wrong == 0);
        } else {
            printf("cuBLAS ceiling not checked: %s\n", e->ref_missing(ctx));
        }
        e->close(ctx);
    }
    be->stream_destroy(s);
    be->close();
    TEST_DONE();
}
