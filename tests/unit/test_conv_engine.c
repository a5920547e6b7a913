/* The host convolution engine against references: every pass against the direct convolution
 * (fb_conv_direct, itself checked on values worked out by hand) on the shapes DenseNet-121 has
 * (7x7/2 pad 3 from 3 channels, 1x1, 3x3 pad 1) and odd ones; BatchNorm + ReLU forward and backward against a
 * plain formula and a finite-difference gradient; pools; gradient-slice accumulation; the
 * vendor-BLAS reference GEMM. Tolerance: |got - want| <= 1e-4 * sum|products| + 1e-6 (fp32
 * accumulation; a wrong index moves a value by a whole product, far more). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_engine.h"
#include "test.h"

static void fill(float *v, size_t n, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

#define shape fb_kconv_make

/* The reference itself, on values worked out by hand: a 1-image 3x3 input of one channel
 * (1..9), one 2x2 filter (1, 0, 0, -1), stride 1, no padding: y(p,q) = x(p,q) - x(p+1,q+1)
 * = -4 everywhere; with padding 1 the corners see one tap (-1 at the near corner, +9 at the
 * far one). */
static void check_reference(void)
{
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 0, 0, -1};
    const float dy[4] = {1, 1, 1, 1};
    struct fb_kconv cv = fb_kconv_make(1, 3, 3, 1, 1, 2, 1, 0);
    struct fb_kconv pad = fb_kconv_make(1, 3, 3, 1, 1, 2, 1, 1);
    double want[16] = {0}, mag[16] = {0};

    fb_conv_direct(&cv, FB_CONV_FWD, x, w, want, mag);
    for (int i = 0; i < 4; i++)
        CHECK(want[i] == -4.0);
    CHECK(mag[0] == 1.0 + 5.0);
    /* dgrad of all-ones: dx(y,x) = sum over taps that read it: +1 at (0,0)..(1,1) from w[0],
     * -1 at (1,1)..(2,2) from w[3]: dx = [1 1 0; 1 0 -1; 0 -1 -1] */
    memset(want, 0, sizeof want);
    fb_conv_direct(&cv, FB_CONV_DGRAD, dy, w, want, mag);
    CHECK(want[0] == 1 && want[1] == 1 && want[2] == 0 && want[4] == 0 && want[8] == -1 &&
          want[5] == -1);
    /* wgrad of all-ones: dw(r,s) = sum of the 2x2 window of x at offset (r,s): 12 16 24 28 */
    memset(want, 0, sizeof want);
    fb_conv_direct(&cv, FB_CONV_WGRAD, x, dy, want, mag);
    CHECK(want[0] == 12 && want[1] == 16 && want[2] == 24 && want[3] == 28);
    /* padding 1: a 4x4 output; its corner (0,0) sees only x(0,0) through w[3]: -1 */
    CHECK(pad.p == 4 && pad.q == 4);
    memset(want, 0, sizeof want);
    fb_conv_direct(&pad, FB_CONV_FWD, x, w, want, mag);
    CHECK(want[0] == -1.0 && want[15] == 9.0 && want[5] == 1.0 - 5.0);
}

static void check_conv(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx,
                       struct fb_kconv cv)
{
    size_t nx = (size_t)cv.n * cv.h * cv.w * cv.c, nw = (size_t)cv.k * cv.r * cv.s * cv.c,
           ny = (size_t)cv.n * cv.p * cv.q * cv.k;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *dy = malloc(ny * 4);

    fill(x, nx, 1);
    fill(w, nw, 2);
    fill(dy, ny, 3);
    for (int pass = FB_CONV_FWD; pass <= FB_CONV_WGRAD; pass++) {
        size_t nout = pass == FB_CONV_FWD ? ny : pass == FB_CONV_DGRAD ? nx : nw, bad = 0;
        float *got = malloc(nout * 4);
        double *want = calloc(nout, sizeof *want), *mag = calloc(nout, sizeof *mag);
        /* poison: a pass that leaves elements unwritten cannot pass */
        for (size_t i = 0; i < nout; i++)
            got[i] = NAN;
        CHECK(e->conv(ctx, &cv, pass, pass == FB_CONV_DGRAD ? dy : x,
                      pass == FB_CONV_WGRAD ? dy : w, got, NULL) == FB_OK);
        fb_conv_direct(&cv, (enum fb_conv_pass)pass, pass == FB_CONV_DGRAD ? dy : x,
                       pass == FB_CONV_WGRAD ? dy : w, want, mag);
        for (size_t i = 0; i < nout; i++)
            bad += !(fabs(got[i] - want[i]) <= 1e-4 * mag[i] + 1e-6);
        if (bad)
            fprintf(stderr, "conv %dx%d/%d pad %d c=%d k=%d %dx%d n=%d pass %d: %zu of %zu wrong\n",
                    cv.r, cv.s, cv.stride, cv.pad, cv.c, cv.k, cv.h, cv.w, cv.n, pass, bad, nout);
        CHECK(bad == 0);
        free(got);
        free(want);
        free(mag);
    }
    free(x);
    free(w);
    free(dy);
}

/* loss = sum(y * up) of BatchNorm + ReLU, in double, for the finite-difference check */
static double bn_loss(const float *x, size_t rows, int c, const float *gamma, const float *beta,
                      const float *up)
{
    double loss = 0.0;
    for (int j = 0; j < c; j++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < rows; i++)
            m += x[i * c + j];
        m /= (double)rows;
        for (size_t i = 0; i < rows; i++)
            v += (x[i * c + j] - m) * (x[i * c + j] - m);
        v /= (double)rows;
        for (size_t i = 0; i < rows; i++) {
            double yv = (x[i * c + j] - m) / sqrt(v + 1e-5) * gamma[j] + beta[j];
            loss += (yv > 0 ? yv : 0) * up[i * c + j];
        }
    }
    return loss;
}

static void check_bn(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx)
{
    enum { ROWS = 37, C = 5 };
    float x[ROWS * C], y[ROWS * C], dy[ROWS * C], dx[ROWS * C], gamma[C], beta[C], mv[2 * C],
        dgamma[C], dbeta[C], scratch[2 * C];

    fill(x, ROWS * C, 4);
    fill(dy, ROWS * C, 5);
    for (int j = 0; j < C; j++) {
        gamma[j] = 0.5f + 0.25f * (float)j;
        beta[j] = 0.1f * (float)(j - 2);
    }
    CHECK(e->bn_relu_fwd(ctx, x, y, ROWS, C, gamma, beta, mv, NULL) == FB_OK);
    for (int j = 0; j < C; j++) {
        double m = 0, v = 0;
        for (int i = 0; i < ROWS; i++)
            m += x[i * C + j];
        m /= ROWS;
        for (int i = 0; i < ROWS; i++)
            v += (x[i * C + j] - m) * (x[i * C + j] - m);
        v /= ROWS; /* biased, as training-mode BatchNorm normalizes */
        CHECK_NEAR(mv[j], m, 1e-6);
        CHECK_NEAR(mv[C + j], v, 1e-5);
        for (int i = 0; i < ROWS; i++) {
            double want = (x[i * C + j] - m) / sqrt(v + 1e-5) * gamma[j] + beta[j];
            CHECK_NEAR(y[i * C + j], want > 0 ? want : 0, 1e-5);
        }
    }
    CHECK(e->bn_relu_bwd(ctx, x, y, dy, dx, ROWS, C, gamma, mv, dgamma, dbeta, scratch, NULL) ==
          FB_OK);
    /* central differences of loss = sum(y * dy): dL/dx, dL/dgamma, dL/dbeta */
    for (int t = 0; t < ROWS * C; t += 7) {
        const double h = 1e-3;
        float xp[ROWS * C], xm[ROWS * C];
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[t] += (float)h;
        xm[t] -= (float)h;
        CHECK_NEAR(dx[t], (bn_loss(xp, ROWS, C, gamma, beta, dy) -
                           bn_loss(xm, ROWS, C, gamma, beta, dy)) / (2 * h), 2e-3);
    }
    for (int j = 0; j < C; j++) {
        const double h = 1e-3;
        float gp[C], gm[C], bp[C], bm[C];
        memcpy(gp, gamma, sizeof gp);
        memcpy(gm, gamma, sizeof gm);
        memcpy(bp, beta, sizeof bp);
        memcpy(bm, beta, sizeof bm);
        gp[j] += (float)h;
        gm[j] -= (float)h;
        bp[j] += (float)h;
        bm[j] -= (float)h;
        CHECK_NEAR(dgamma[j], (bn_loss(x, ROWS, C, gp, beta, dy) -
                               bn_loss(x, ROWS, C, gm, beta, dy)) / (2 * h), 2e-3);
        CHECK_NEAR(dbeta[j], (bn_loss(x, ROWS, C, gamma, bp, dy) -
                              bn_loss(x, ROWS, C, gamma, bm, dy)) / (2 * h), 2e-3);
    }
}

static void check_pools(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx)
{
    /* 5x5, 2 channels: max 3x3/2 pad 1 (the stem's) -> 3x3; avg 2x2/2 -> 2x2 */
    struct fb_kconv mx = shape(1, 5, 5, 2, 2, 3, 2, 1), av = shape(1, 5, 5, 2, 2, 2, 2, 0);
    float x[50], y[18], dy[18], dx[50], sum = 0;

    for (int i = 0; i < 50; i++)
        x[i] = (float)((i * 37) % 50); /* distinct values: one maximum per window */
    CHECK(e->pool_fwd(ctx, FB_POOL_MAX, &mx, x, y, NULL) == FB_OK);
    /* output (1,1) of channel 0: rows 1..3, columns 1..3 */
    {
        float want = -1;
        for (int r = 1; r <= 3; r++)
            for (int c = 1; c <= 3; c++)
                want = fmaxf(want, x[(r * 5 + c) * 2]);
        CHECK_NEAR(y[(1 * 3 + 1) * 2], want, 0);
    }
    for (int i = 0; i < 18; i++)
        dy[i] = 1.0f;
    CHECK(e->pool_bwd(ctx, FB_POOL_MAX, &mx, x, dy, dx, NULL) == FB_OK);
    for (int i = 0; i < 50; i++)
        sum += dx[i];
    CHECK_NEAR(sum, 18, 0); /* every output's gradient lands on exactly one input */
    CHECK(e->pool_fwd(ctx, FB_POOL_AVG, &av, x, y, NULL) == FB_OK);
    CHECK_NEAR(y[(1 * 2 + 0) * 2 + 1], (x[(2 * 5 + 0) * 2 + 1] + x[(2 * 5 + 1) * 2 + 1] +
                                        x[(3 * 5 + 0) * 2 + 1] + x[(3 * 5 + 1) * 2 + 1]) / 4, 1e-5);
    CHECK(e->pool_bwd(ctx, FB_POOL_AVG, &av, x, dy, dx, NULL) == FB_OK);
    CHECK_NEAR(dx[0], 0.25, 0);
    CHECK_NEAR(dx[(4 * 5 + 4) * 2], 0, 0); /* the last row and column are outside every window */
}

static void check_copy2d(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx)
{
    float dst[12] = {0}, src[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    /* 4 rows of a 3-wide buffer, 2 wide slices at offset 1 */
    CHECK(e->copy2d(ctx, dst + 1, 3, src, 2, 4, 2, false, NULL) == FB_OK);
    CHECK(dst[0] == 0 && dst[1] == 1 && dst[2] == 2 && dst[4] == 3 && dst[11] == 8);
    CHECK(e->copy2d(ctx, dst + 1, 3, src, 2, 4, 2, true, NULL) == FB_OK);
    CHECK(dst[0] == 0 && dst[1] == 2 && dst[11] == 16);
}

/* A concatenation of three pieces (widths 2, 1, 3) into a pitch of 7, and its split with the
 * middle piece accumulating. */
static void check_concat(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx)
{
    float a[4] = {1, 2, 3, 4}, b[2] = {5, 6}, c[6] = {7, 8, 9, 10, 11, 12}, cat[14];
    void *pieces[3] = {a, b, c};
    size_t widths[3] = {2, 1, 3};
    bool acc[3] = {false, true, false};
    static const float want[14] = {1, 2, 5, 7, 8, 9, -1, 3, 4, 6, 10, 11, 12, -1};

    for (int i = 0; i < 14; i++)
        cat[i] = -1;
    CHECK(e->concat(ctx, false, cat, 7, pieces, widths, NULL, 3, 2, NULL) == FB_OK);
    for (int i = 0; i < 14; i++)
        CHECK_NEAR(cat[i], want[i], 0);
    for (int i = 0; i < 14; i++)
        cat[i] = (float)(10 * i);
    CHECK(e->concat(ctx, true, cat, 7, pieces, widths, acc, 3, 2, NULL) == FB_OK);
    CHECK(a[0] == 0 && a[1] == 10 && a[2] == 70 && a[3] == 80);
    CHECK(b[0] == 5 + 20 && b[1] == 6 + 90); /* accumulated */
    CHECK(c[0] == 30 && c[2] == 50 && c[3] == 100 && c[5] == 120);
    CHECK(e->concat(ctx, false, cat, 5, pieces, widths, NULL, 3, 2, NULL) == FB_ERR_USAGE);
}

static void check_gemm(const struct fb_conv_engine *e, struct fb_conv_ctx *ctx)
{
    enum { M = 7, N = 5, K = 9 };
    float a[M * K], b[K * N], c[M * N];

    fill(a, M * K, 8);
    fill(b, K * N, 9);
    CHECK(e->ref_missing(ctx) == NULL);
    CHECK(e->gemm_ref(ctx, M, N, K, a, b, c, true, NULL) == FB_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int l = 0; l < K; l++)
                want += (double)a[i * K + l] * b[l * N + j];
            CHECK_NEAR(c[i * N + j], want, 1e-5);
        }
}

int main(void)
{
    const struct fb_conv_engine *e = &fb_conv_engine_host;
    struct fb_conv_ctx *ctx = NULL;
    char why[256] = "";

    check_reference();
    /* fp16 on host is waived with a reason, not an error */
    CHECK(e->open(&fb_backend_host, FB_CONV_FP16, &ctx, why, sizeof why) == FB_ERR_UNSUPPORTED);
    CHECK(ctx == NULL && strstr(why, "fp16"));
    CHECK(e->open(&fb_backend_host, FB_CONV_FP32, &ctx, why, sizeof why) == FB_OK);

    check_conv(e, ctx, shape(2, 19, 17, 3, 8, 7, 2, 3)); /* the stem's 7x7/2, odd sides */
    check_conv(e, ctx, shape(3, 5, 6, 13, 7, 1, 1, 0));  /* a bottleneck's 1x1 */
    check_conv(e, ctx, shape(2, 7, 5, 9, 4, 3, 1, 1));   /* a dense layer's 3x3 pad 1 */
    check_conv(e, ctx, shape(1, 6, 6, 4, 3, 3, 2, 0));   /* strided, no padding */
    check_conv(e, ctx, shape(4, 1, 1, 33, 14, 1, 1, 0)); /* the classifier as a 1x1 */
    check_bn(e, ctx);
    check_pools(e, ctx);
    check_copy2d(e, ctx);
    check_concat(e, ctx);
    check_gemm(e, ctx);
    e->close(ctx);
    e->close(NULL);

    /* the precision helpers */
    {
        enum fb_conv_prec p;
        float v[3] = {1.0f, -2.5f, 3.14159f}, back[3];
        uint16_t bits[3];
        CHECK(fb_conv_prec_parse("", FB_CONV_FP16, &p) == FB_OK && p == FB_CONV_FP16);
        CHECK(fb_conv_prec_parse("bf16", FB_CONV_FP32, &p) == FB_OK && p == FB_CONV_BF16);
        CHECK(fb_conv_prec_parse("fp64", FB_CONV_FP32, &p) == FB_ERR_USAGE);
        fb_conv_pack(FB_CONV_BF16, v, bits, 3);
        fb_conv_unpack(FB_CONV_BF16, bits, back, 3);
        CHECK(back[0] == 1.0f && back[1] == -2.5f && fabsf(back[2] - 3.14159f) < 0.02f);
        CHECK(bits[0] == 0x3f80);
        fb_conv_pack(FB_CONV_FP16, v, bits, 3);
        CHECK(bits[0] == 0x3c00);
    }
    TEST_DONE();
}
