/* The cuda convolution engine (our implicit-GEMM kernels) against the reference on small
 * shapes: each pass, in fp32, fp16 and bf16, checked element by element by fb_conv_check
 * against a direct convolution in double of the same rounded inputs (tolerance: the output
 * type's rounding, 1e-3 fp16 / 8e-3 bf16 relative, plus 1e-4 of the sum of |products| for fp32
 * accumulation); the host engine passes the same check (test_conv_engine), so both agree with
 * each other within it. Its pools (forward and backward, max with ties, average, global) and
 * copies (plain and accumulating) against the host engine's on the same rounded inputs, every
 * element, outputs NaN before the call (tolerance: the output rounding plus 1e-5 (1 + |want|)).
 * Also cuBLAS's ceiling GEMM, when the library is there. Exits 77 (skipped, never passed)
 * without the kernels built or without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_engine.h"
#include "test.h"

#define shape fb_kconv_make

/* Uniform in [-1, 1), or with `ties` one of {-1, -0.5, 0, 0.5, 1}, rounded to prec (so the
 * host engine sees what the device does); bits gets prec's bytes. */
static void fill(float *v, void *bits, size_t n, enum fb_conv_prec prec, uint32_t seed, bool ties)
{
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = ties ? 0.5f * (float)((int)(x >> 29) % 5 - 2)
                    : (float)((double)(x >> 8) / 8388608.0 - 1.0);
    }
    fb_conv_pack(prec, v, bits, n);
    fb_conv_unpack(prec, bits, v, n);
}

/* Elements of got outside rel |want| + 1e-5 (1 + |want|); NaN counts. */
static size_t count_off(const float *got, const float *want, size_t n, double rel)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !(fabs((double)got[i] - want[i]) <=
                 rel * fabs(want[i]) + 1e-5 * (1 + fabs(want[i])));
    return bad;
}

static double rel_out(enum fb_conv_prec prec)
{
    return prec == FB_CONV_FP16 ? 1e-3 : prec == FB_CONV_BF16 ? 8e-3 : 0.0;
}

/* Device buffers of a check: taken in order, all freed by its caller. */
struct dev {
    const struct fb_backend *be;
    void *p[4];
    int n;
};

static void *dev_put(struct dev *d, const void *host, size_t bytes, struct fb_stream *s)
{
    void *p = NULL;
    if (d->be->alloc(FB_MEM_DEVICE, bytes ? bytes : 1, &p) != FB_OK)
        return NULL;
    d->p[d->n++] = p;
    if (d->be->copy(p, host, bytes, FB_COPY_H2D, s) != FB_OK || d->be->stream_sync(s) != FB_OK)
        return NULL;
    return p;
}

static void dev_free(struct dev *d)
{
    for (int i = 0; i < d->n; i++)
        d->be->free(FB_MEM_DEVICE, d->p[i]);
}

/* One pool forward and backward on the cuda engine against the host engine's. */
static void check_pool(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx,
                       struct fb_conv_ctx *hctx, const struct fb_backend *be,
                       enum fb_conv_prec prec, enum fb_pool kind, struct fb_kconv cv, bool ties,
                       struct fb_stream *s)
{
    const struct fb_conv_engine *h = &fb_conv_engine_host;
    size_t nx = (size_t)cv.n * cv.h * cv.w * cv.c, ny = (size_t)cv.n * cv.p * cv.q * cv.c;
    size_t es = fb_conv_prec_size(prec), big = nx > ny ? nx : ny;
    float *x = malloc(nx * 4), *dy = malloc(ny * 4), *y = malloc(ny * 4), *dx = malloc(nx * 4);
    float *gy = malloc(ny * 4), *gdx = malloc(nx * 4);
    unsigned char *bits = malloc(big * 4), *nan = malloc(big * 4);
    struct dev d = {.be = be};
    void *dxin, *ddy, *dyout, *ddx;
    size_t bad_y = 0, bad_dx = 0;

    CHECK(x && dy && y && dx && gy && gdx && bits && nan);
    if (!x || !dy || !y || !dx || !gy || !gdx || !bits || !nan)
        goto out;
    memset(nan, 0xff, big * 4); /* NaN in every precision: unwritten elements fail */
    fill(x, bits, nx, prec, 11u + (uint32_t)cv.h, ties);
    CHECK((dxin = dev_put(&d, bits, nx * es, s)) != NULL);
    fill(dy, bits, ny, prec, 13u + (uint32_t)cv.w, false);
    CHECK((ddy = dev_put(&d, bits, ny * es, s)) != NULL);
    CHECK((dyout = dev_put(&d, nan, ny * es, s)) != NULL);
    CHECK((ddx = dev_put(&d, nan, nx * es, s)) != NULL);
    if (!dxin || !ddy || !dyout || !ddx)
        goto out;
    CHECK(e->pool_fwd(ctx, kind, &cv, dxin, dyout, s) == FB_OK);
    CHECK(e->pool_bwd(ctx, kind, &cv, dxin, ddy, ddx, s) == FB_OK);
    CHECK(be->copy(bits, dyout, ny * es, FB_COPY_D2H, s) == FB_OK);
    CHECK(be->stream_sync(s) == FB_OK);
    fb_conv_unpack(prec, bits, gy, ny);
    CHECK(be->copy(bits, ddx, nx * es, FB_COPY_D2H, s) == FB_OK);
    CHECK(be->stream_sync(s) == FB_OK);
    fb_conv_unpack(prec, bits, gdx, nx);
    CHECK(h->pool_fwd(hctx, kind, &cv, x, y, NULL) == FB_OK);
    CHECK(h->pool_bwd(hctx, kind, &cv, x, dy, dx, NULL) == FB_OK);
    bad_y = count_off(gy, y, ny, rel_out(prec));
    bad_dx = count_off(gdx, dx, nx, rel_out(prec));
    if (bad_y || bad_dx)
        fprintf(stderr, "%s %s pool %dx%d/%d pad %d on %dx%dx%d%s: %zu of %zu outputs and %zu of "
                "%zu input gradients differ from the host engine's\n", fb_conv_prec_name(prec),
                kind == FB_POOL_MAX ? "max" : "avg", cv.r, cv.s, cv.stride, cv.pad, cv.h, cv.w,
                cv.c, ties ? " (ties)" : "", bad_y, ny, bad_dx, nx);
    CHECK(bad_y == 0 && bad_dx == 0);
out:
    dev_free(&d);
    free(x);
    free(dy);
    free(y);
    free(dx);
    free(gy);
    free(gdx);
    free(bits);
    free(nan);
}

/* rows x width into dst at column `col` (pitch dld) from src (pitch sld), plain or adding, on
 * both engines from the same dst: every dst element compared, the untouched ones included. */
static void check_copy(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx,
                       struct fb_conv_ctx *hctx, const struct fb_backend *be,
                       enum fb_conv_prec prec, size_t rows, size_t width, size_t dld, size_t sld,
                       size_t col, bool acc, struct fb_stream *s)
{
    size_t nd = rows * dld, ns = rows * sld, es = fb_conv_prec_size(prec);
    float *dst = malloc(nd * 4), *src = malloc(ns * 4), *got = malloc(nd * 4);
    unsigned char *bits = malloc((nd > ns ? nd : ns) * 4);
    struct dev d = {.be = be};
    void *ddst, *dsrc;
    size_t bad;

    CHECK(dst && src && got && bits);
    if (!dst || !src || !got || !bits)
        goto out;
    fill(src, bits, ns, prec, 17u + (uint32_t)width, false);
    CHECK((dsrc = dev_put(&d, bits, ns * es, s)) != NULL);
    fill(dst, bits, nd, prec, 19u + (uint32_t)rows, false);
    CHECK((ddst = dev_put(&d, bits, nd * es, s)) != NULL);
    if (!dsrc || !ddst)
        goto out;
    CHECK(e->copy2d(ctx, (char *)ddst + col * es, dld, dsrc, sld, rows, width, acc, s) == FB_OK);
    CHECK(be->copy(bits, ddst, nd * es, FB_COPY_D2H, s) == FB_OK);
    CHECK(be->stream_sync(s) == FB_OK);
    fb_conv_unpack(prec, bits, got, nd);
    CHECK(fb_conv_engine_host.copy2d(hctx, dst + col, dld, src, sld, rows, width, acc, NULL) ==
          FB_OK);
    if ((bad = count_off(got, dst, nd, rel_out(prec))) != 0)
        fprintf(stderr, "%s copy2d%s %zu x %zu (pitches %zu, %zu, column %zu): %zu of %zu "
                "elements differ from the host engine's\n", fb_conv_prec_name(prec),
                acc ? " accumulate" : "", rows, width, dld, sld, col, bad, nd);
    CHECK(bad == 0);
out:
    dev_free(&d);
    free(dst);
    free(src);
    free(got);
    free(bits);
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
    struct fb_kconv gap = {.n = 2, .h = 5, .w = 3, .c = 13, .k = 13, .r = 5, .s = 3, .stride = 1,
                           .pad = 0, .p = 1, .q = 1};
    const struct {
        enum fb_pool kind;
        struct fb_kconv cv;
        bool ties;
    } pools[] = {
        {FB_POOL_MAX, shape(2, 13, 11, 64, 64, 3, 2, 1), false}, /* the stem's, odd size */
        {FB_POOL_MAX, shape(3, 9, 10, 16, 16, 3, 2, 1), true},   /* ties: the first max wins */
        {FB_POOL_MAX, shape(2, 7, 6, 5, 5, 3, 1, 1), true},      /* odd channels, 9 windows */
        {FB_POOL_AVG, shape(2, 8, 7, 128, 128, 2, 2, 0), false}, /* a transition's */
        {FB_POOL_AVG, shape(2, 9, 9, 24, 24, 3, 2, 1), false},   /* padding in the divisor */
        {FB_POOL_AVG, shape(2, 7, 7, 1024, 1024, 7, 1, 0), false}, /* the head's global pool */
        {FB_POOL_AVG, gap, false},                                /* odd global pool */
    };
    struct fb_device_info info;
    struct fb_stream *s = NULL;
    struct fb_conv_ctx *hctx = NULL;
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
    /* the host engine is the pools' and copies' reference: fp32, on host memory */
    CHECK(fb_conv_engine_host.open(&fb_backend_host, FB_CONV_FP32, &hctx, why, sizeof why) ==
          FB_OK);
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
        for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
            check_pool(e, ctx, hctx, be, prec, pools[i].kind, pools[i].cv, pools[i].ties, s);
        for (int acc = 0; acc < 2; acc++) {
            check_copy(e, ctx, hctx, be, prec, 37, 32, 96, 32, 32, acc, s); /* a growth slice */
            check_copy(e, ctx, hctx, be, prec, 23, 13, 29, 13, 5, acc, s);  /* odd: scalar path */
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
    fb_conv_engine_host.close(hctx);
    be->stream_destroy(s);
    be->close();
    TEST_DONE();
}
