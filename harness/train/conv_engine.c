/* What the convolution engines share: precisions and their host conversions, operand sizes,
 * the engine of a backend, and the check of an engine against a direct convolution in double
 * (the reference every engine answers to, on any backend). */
#include "conv_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

const struct fb_conv_engine *fb_conv_engine_for(const struct fb_backend *be)
{
    if (be && be->on_cpu) /* host, and host-strict (its kernels: host_launch) */
        return &fb_conv_engine_host;
    if (be && strcmp(be->name, fb_conv_engine_cuda.name) == 0)
        return &fb_conv_engine_cuda;
    return NULL;
}

static const char *const prec_names[] = {[FB_CONV_FP32] = "fp32", [FB_CONV_FP16] = "fp16",
                                         [FB_CONV_BF16] = "bf16"};

const char *fb_conv_prec_name(enum fb_conv_prec p) { return prec_names[p]; }

fb_status fb_conv_prec_parse(const char *name, enum fb_conv_prec dflt, enum fb_conv_prec *out)
{
    if (!name || !*name) {
        *out = dflt;
        return FB_OK;
    }
    for (int p = 0; p < 3; p++)
        if (strcmp(name, prec_names[p]) == 0) {
            *out = (enum fb_conv_prec)p;
            return FB_OK;
        }
    return FB_ERR_USAGE;
}

size_t fb_conv_prec_size(enum fb_conv_prec p) { return p == FB_CONV_FP32 ? 4 : 2; }

static uint16_t bf16_from_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a quiet NaN */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void fb_conv_pack(enum fb_conv_prec p, const float *src, void *dst, size_t n)
{
    uint16_t *d16 = dst;

    if (p == FB_CONV_FP32) {
        memmove(dst, src, n * sizeof *src);
        return;
    }
    for (size_t i = 0; i < n; i++)
        d16[i] = p == FB_CONV_FP16 ? fb_half_from_float(src[i]) : bf16_from_float(src[i]);
}

void fb_conv_unpack(enum fb_conv_prec p, const void *src, float *dst, size_t n)
{
    const uint16_t *s16 = src;

    if (p == FB_CONV_FP32) {
        memmove(dst, src, n * sizeof *dst);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = p == FB_CONV_FP16 ? fb_half_to_float(s16[i]) : bf16_to_float(s16[i]);
}

size_t fb_conv_out_elements(const struct fb_kconv *cv, enum fb_conv_pass pass)
{
    switch (pass) {
    case FB_CONV_FWD: return (size_t)cv->n * cv->p * cv->q * cv->k;
    case FB_CONV_DGRAD: return (size_t)cv->n * cv->h * cv->w * cv->c;
    default: return (size_t)cv->k * cv->r * cv->s * cv->c;
    }
}

void fb_conv_in_elements(const struct fb_kconv *cv, enum fb_conv_pass pass, size_t *a, size_t *b)
{
    size_t x = (size_t)cv->n * cv->h * cv->w * cv->c, w = (size_t)cv->k * cv->r * cv->s * cv->c,
           y = (size_t)cv->n * cv->p * cv->q * cv->k;

    switch (pass) {
    case FB_CONV_FWD: *a = x; *b = w; break;
    case FB_CONV_DGRAD: *a = y; *b = w; break;
    default: *a = x; *b = y; break;
    }
}

struct fb_kconv fb_kconv_make(int n, int h, int w, int c, int k, int r, int stride, int pad)
{
    struct fb_kconv cv = {.n = n, .h = h, .w = w, .c = c, .k = k, .r = r, .s = r,
                          .stride = stride, .pad = pad};
    cv.p = (h + 2 * pad - r) / stride + 1;
    cv.q = (w + 2 * pad - r) / stride + 1;
    return cv;
}

/* Uniform in [-1, 1) from a 32-bit LCG: reproducible on every machine. */
static void fill_random(float *v, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)((double)(x >> 8) / 8388608.0 - 1.0);
    }
}

void fb_conv_direct(const struct fb_kconv *cv, enum fb_conv_pass pass, const float *a,
                    const float *b, double *want, double *mag)
{
    const float *x = pass == FB_CONV_DGRAD ? NULL : a;
    const float *w = pass == FB_CONV_WGRAD ? NULL : b;
    const float *dy = pass == FB_CONV_DGRAD ? a : pass == FB_CONV_WGRAD ? b : NULL;

    for (int n = 0; n < cv->n; n++)
        for (int p = 0; p < cv->p; p++)
            for (int q = 0; q < cv->q; q++)
                for (int k = 0; k < cv->k; k++)
                    for (int r = 0; r < cv->r; r++)
                        for (int s = 0; s < cv->s; s++) {
                            int y = p * cv->stride - cv->pad + r, xx = q * cv->stride - cv->pad + s;
                            size_t yi = (((size_t)n * cv->p + p) * cv->q + q) * cv->k + k;
                            if (y < 0 || y >= cv->h || xx < 0 || xx >= cv->w)
                                continue;
                            for (int c = 0; c < cv->c; c++) {
                                size_t xi = (((size_t)n * cv->h + y) * cv->w + xx) * cv->c + c;
                                size_t wi = (((size_t)k * cv->r + r) * cv->s + s) * cv->c + c;
                                double t;
                                size_t o;
                                if (pass == FB_CONV_FWD) {
                                    t = (double)x[xi] * w[wi];
                                    o = yi;
                                } else if (pass == FB_CONV_DGRAD) {
                                    t = (double)dy[yi] * w[wi];
                                    o = xi;
                                } else {
                                    t = (double)dy[yi] * x[xi];
                                    o = wi;
                                }
                                want[o] += t;
                                mag[o] += fabs(t);
                            }
                        }
}

static double out_rounding(enum fb_conv_prec prec, bool fp32_out)
{
    /* twice one rounding of the output type: 2^-11 (fp16), 2^-8 (bf16) */
    if (fp32_out || prec == FB_CONV_FP32)
        return 0.0;
    return prec == FB_CONV_FP16 ? 1e-3 : 8e-3;
}

static size_t count_wrong(const float *got, const double *want, const double *mag, size_t n,
                          double rel_out)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = rel_out * fabs(want[i]) + 1e-4 * mag[i] + 1e-6;
        if (!(fabs((double)got[i] - want[i]) <= tol)) /* NaN counts as wrong */
            wrong++;
    }
    return wrong;
}

/* Host operands a (na) and b (nb), rounded to prec, onto the device; room for `nout` outputs
 * of `out_size` bytes. */
static fb_status stage(const struct fb_backend *be, enum fb_conv_prec prec, float *a, size_t na,
                       float *b, size_t nb, size_t out_bytes, void *bits, void **da, void **db,
                       void **dout, struct fb_stream *s)
{
    size_t es = fb_conv_prec_size(prec);
    fb_status st;

    if ((st = be->alloc(FB_MEM_DEVICE, na * es, da)) != FB_OK ||
        (st = be->alloc(FB_MEM_DEVICE, nb * es, db)) != FB_OK ||
        (st = be->alloc(FB_MEM_DEVICE, out_bytes, dout)) != FB_OK)
        return st;
    /* The reference sees the operands exactly as the engine does: rounded to prec. */
    fb_conv_pack(prec, a, bits, na);
    fb_conv_unpack(prec, bits, a, na);
    if ((st = be->copy(*da, bits, na * es, FB_COPY_H2D, s)) != FB_OK ||
        (st = be->stream_sync(s)) != FB_OK)
        return st;
    fb_conv_pack(prec, b, bits, nb);
    fb_conv_unpack(prec, bits, b, nb);
    if ((st = be->copy(*db, bits, nb * es, FB_COPY_H2D, s)) != FB_OK)
        return st;
    return be->stream_sync(s);
}

fb_status fb_conv_check(const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                        const struct fb_backend *be, enum fb_conv_prec prec,
                        const struct fb_kconv *cv, enum fb_conv_pass pass, uint32_t seed,
                        struct fb_stream *s, size_t *wrong)
{
    size_t na, nb, nout = fb_conv_out_elements(cv, pass), big;
    bool fp32_out = pass == FB_CONV_WGRAD;
    size_t out_bytes = nout * (fp32_out ? 4 : fb_conv_prec_size(prec));
    float *a = NULL, *b = NULL, *got = NULL;
    double *want = NULL, *mag = NULL;
    void *bits = NULL, *da = NULL, *db = NULL, *dout = NULL;
    fb_status st = FB_ERR_NOMEM;

    fb_conv_in_elements(cv, pass, &na, &nb);
    big = na > nb ? na : nb;
    big = big > nout ? big : nout;
    if (!(a = malloc(na * sizeof *a)) || !(b = malloc(nb * sizeof *b)) ||
        !(got = malloc(nout * sizeof *got)) || !(want = calloc(nout, sizeof *want)) ||
        !(mag = calloc(nout, sizeof *mag)) || !(bits = malloc(big * 4)))
        goto out;
    fill_random(a, na, seed);
    fill_random(b, nb, seed + 7919u);
    if ((st = stage(be, prec, a, na, b, nb, out_bytes, bits, &da, &db, &dout, s)) != FB_OK ||
        (st = eng->conv(ctx, cv, pass, da, db, dout, s)) != FB_OK ||
        (st = be->copy(bits, dout, out_bytes, FB_COPY_D2H, s)) != FB_OK ||
        (st = be->stream_sync(s)) != FB_OK)
        goto out;
    fb_conv_unpack(fp32_out ? FB_CONV_FP32 : prec, bits, got, nout);
    fb_conv_direct(cv, pass, a, b, want, mag);
    *wrong = count_wrong(got, want, mag, nout, out_rounding(prec, fp32_out));
out:
    be->free(FB_MEM_DEVICE, da);
    be->free(FB_MEM_DEVICE, db);
    be->free(FB_MEM_DEVICE, dout);
    free(a);
    free(b);
    free(got);
    free(want);
    free(mag);
    free(bits);
    return st;
}

fb_status fb_conv_check_gemm(const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                             const struct fb_backend *be, enum fb_conv_prec prec, int m, int n,
                             int k, struct fb_stream *s, size_t *wrong)
{
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    size_t big = na > nb ? (na > nc ? na : nc) : (nb > nc ? nb : nc);
    float *a = NULL, *b = NULL, *got = NULL;
    double *want = NULL, *mag = NULL;
    void *bits = NULL, *da = NULL, *db = NULL, *dc = NULL;
    fb_status st = FB_ERR_NOMEM;

    if (!(a = malloc(na * sizeof *a)) || !(b = malloc(nb * sizeof *b)) ||
        !(got = malloc(nc * sizeof *got)) || !(want = calloc(nc, sizeof *want)) ||
        !(mag = calloc(nc, sizeof *mag)) || !(bits = malloc(big * 4)))
        goto out;
    fill_random(a, na, 5u);
    fill_random(b, nb, 6u);
    if ((st = stage(be, prec, a, na, b, nb, nc * 4, bits, &da, &db, &dc, s)) != FB_OK ||
        (st = eng->gemm_ref(ctx, m, n, k, da, db, dc, true, s)) != FB_OK ||
        (st = be->copy(got, dc, nc * 4, FB_COPY_D2H, s)) != FB_OK ||
        (st = be->stream_sync(s)) != FB_OK)
        goto out;
    for (int i = 0; i < m; i++)
        for (int l = 0; l < k; l++)
            for (int j = 0; j < n; j++) {
                double t = (double)a[(size_t)i * k + l] * b[(size_t)l * n + j];
                want[(size_t)i * n + j] += t;
                mag[(size_t)i * n + j] += fabs(t);
            }
    *wrong = count_wrong(got, want, mag, nc, 0.0);
out:
    be->free(FB_MEM_DEVICE, da);
    be->free(FB_MEM_DEVICE, db);
    be->free(FB_MEM_DEVICE, dc);
    free(a);
    free(b);
    free(got);
    free(want);
    free(mag);
    free(bits);
    return st;
}
