/* The `host` convolution engine: DenseNet-121's layers on the CPU, fp32. Convolutions are
 * im2col into a scratch buffer (skipped for 1x1 stride-1 convolutions, whose input already is
 * the GEMM operand) and one OpenBLAS sgemm per pass and chunk of images; BatchNorm + ReLU,
 * pools and concatenation copies are plain C loops. It is both the CPU measurement and the
 * reference the GPU engine is checked against. Every pass is a kernel of the backend
 * (host_launch): at once on host, when its stream is waited for on host-strict, where device
 * memory is reached through fb_device_view. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "conv_engine.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

/* im2col scratch per call is capped: larger problems are done a chunk of images at a time,
 * which keeps a 224x224 batch of 32 from needing half a gigabyte of scratch. */
enum { COL_CAP_BYTES = 64 << 20 };

static const float BN_EPS = 1e-5f;

struct fb_conv_ctx {
    const struct fb_backend *be; /* its host_launch runs each pass as a kernel */
    float *col;
    size_t col_cap; /* floats */
    double *acc;    /* per-channel sums of BatchNorm */
    size_t acc_cap; /* doubles */
};

static fb_status grow(void **buf, size_t *cap, size_t want, size_t esize)
{
    void *p;
    if (want <= *cap)
        return FB_OK;
    if (!(p = realloc(*buf, want * esize)))
        return FB_ERR_NOMEM;
    *buf = p;
    *cap = want;
    return FB_OK;
}

/* OpenBLAS, loaded when the first engine opens: a library that starts a thread per CPU as it
 * loads (and joins them in exit(), forever where an address-space limit keeps one from mapping
 * its buffer) is loaded only by the commands that compute. cblas.h gives the types. */
static struct {
    void *lib;
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(openblas_set_num_threads) *set_threads;
    bool one_thread; /* an address-space limit: no worker threads (blas_load) */
    bool warned;
} blas;

/* Whether an address-space limit (ulimit -v) leaves less room than OpenBLAS's pool takes: per
 * worker thread its buffer and the C library's arena for the thread (128 MiB reserved each, as
 * measured with strace), for a thread per online CPU, with the process's present size counted. */
static bool address_space_tight(void)
{
    const double per_thread = 256.0 * 1024 * 1024;
    struct rlimit as;
    unsigned long pages = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), page = sysconf(_SC_PAGESIZE);
    FILE *f;

    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
        return false;
    if ((f = fopen("/proc/self/statm", "r"))) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (double)as.rlim_cur - (double)pages * (double)(page > 0 ? page : 4096) <
           (double)(cpus > 0 ? cpus : 1) * per_thread;
}

static fb_status blas_load(char *why, size_t whylen)
{
    static const char name[] = "libopenblas.so.0";
    bool set_env = false;
    void *lib;

    if (blas.lib)
        return FB_OK;
    /* Where an address-space limit leaves OpenBLAS's workers no room for their buffers, they
     * spin, and exit() then waits for them forever: it starts on the calling thread alone
     * (unless the user set its thread count), and stays so (host_open). */
    blas.one_thread = !getenv("OPENBLAS_NUM_THREADS") && address_space_tight();
    if (blas.one_thread)
        set_env = setenv("OPENBLAS_NUM_THREADS", "1", 0) == 0;
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (set_env)
        unsetenv("OPENBLAS_NUM_THREADS");
    if (!lib) {
        snprintf(why, whylen, "cannot load OpenBLAS (%s): %s", name, dlerror());
        return FB_ERR_UNSUPPORTED;
    }
    blas.sgemm = (__typeof__(cblas_sgemm) *)dlsym(lib, "cblas_sgemm");
    blas.set_threads = (__typeof__(openblas_set_num_threads) *)dlsym(lib,
                                                                     "openblas_set_num_threads");
    if (!blas.sgemm || !blas.set_threads) {
        snprintf(why, whylen, "%s lacks cblas_sgemm or openblas_set_num_threads", name);
        dlclose(lib);
        return FB_ERR_UNSUPPORTED;
    }
    blas.lib = lib; /* kept for the process: its threads live as long */
    return FB_OK;
}

static fb_status host_open(const struct fb_backend *be, enum fb_conv_prec prec,
                           struct fb_conv_ctx **out, char *why, size_t whylen)
{
    cpu_set_t set;
    int cpus = 1;
    fb_status st;

    *out = NULL;
    if (prec != FB_CONV_FP32) {
        snprintf(why, whylen, "%s on host: OpenBLAS has no %s GEMM with fp32 accumulation that "
                 "a CPU without it would run natively; use --precision fp32",
                 fb_conv_prec_name(prec), fb_conv_prec_name(prec));
        return FB_ERR_UNSUPPORTED;
    }
    if (!be->host_launch) {
        snprintf(why, whylen, "backend %s runs no host kernels", be->name);
        return FB_ERR_UNSUPPORTED;
    }
    if ((st = blas_load(why, whylen)) != FB_OK)
        return st;
    if (!(*out = calloc(1, sizeof **out)))
        return FB_ERR_NOMEM;
    (*out)->be = be;
    /* One BLAS thread per CPU this rank is bound to: more would fight the other ranks of the
     * node for the same cores, fewer would leave ours idle. */
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        cpus = CPU_COUNT(&set);
    if (!blas.one_thread) {
        blas.set_threads(cpus);
    } else if (!blas.warned) {
        blas.warned = true;
        fb_warn("compute on host: OpenBLAS on one thread, not %d: the address-space limit "
                "(ulimit -v) leaves too little room for its worker threads", cpus);
    }
    return FB_OK;
}

static void host_close(struct fb_conv_ctx *ctx)
{
    if (!ctx)
        return;
    free(ctx->col);
    free(ctx->acc);
    free(ctx);
}

static const char *host_describe(bool ref)
{
    return ref ? "openblas" : "im2col-openblas";
}

static const char *host_ref_missing(const struct fb_conv_ctx *ctx)
{
    (void)ctx;
    return NULL;
}

/* Rows [0, nb*p*q) of the im2col matrix of images n0..n0+nb: row (n, p, q), columns (r, s, c). */
static void im2col(const struct fb_kconv *cv, const float *x, int n0, int nb, float *col)
{
    size_t rsc = (size_t)cv->r * cv->s * cv->c, row = 0;

    for (int n = n0; n < n0 + nb; n++)
        for (int p = 0; p < cv->p; p++)
            for (int q = 0; q < cv->q; q++, row++) {
                float *dst = col + row * rsc;
                for (int r = 0; r < cv->r; r++)
                    for (int s = 0; s < cv->s; s++, dst += cv->c) {
                        int y = p * cv->stride - cv->pad + r, xx = q * cv->stride - cv->pad + s;
                        if (y < 0 || y >= cv->h || xx < 0 || xx >= cv->w)
                            memset(dst, 0, (size_t)cv->c * sizeof *dst);
                        else
                            memcpy(dst, x + (((size_t)n * cv->h + y) * cv->w + xx) * cv->c,
                                   (size_t)cv->c * sizeof *dst);
                    }
            }
}

/* The adjoint of im2col: adds each column row back onto the pixels it was read from. */
static void col2im(const struct fb_kconv *cv, const float *col, int n0, int nb, float *dx)
{
    size_t rsc = (size_t)cv->r * cv->s * cv->c, row = 0;

    memset(dx + (size_t)n0 * cv->h * cv->w * cv->c, 0,
           (size_t)nb * cv->h * cv->w * cv->c * sizeof *dx);
    for (int n = n0; n < n0 + nb; n++)
        for (int p = 0; p < cv->p; p++)
            for (int q = 0; q < cv->q; q++, row++) {
                const float *src = col + row * rsc;
                for (int r = 0; r < cv->r; r++)
                    for (int s = 0; s < cv->s; s++, src += cv->c) {
                        int y = p * cv->stride - cv->pad + r, xx = q * cv->stride - cv->pad + s;
                        float *d;
                        if (y < 0 || y >= cv->h || xx < 0 || xx >= cv->w)
                            continue;
                        d = dx + (((size_t)n * cv->h + y) * cv->w + xx) * cv->c;
                        for (int c = 0; c < cv->c; c++)
                            d[c] += src[c];
                    }
            }
}

static fb_status run_conv(struct fb_conv_ctx *ctx, const struct fb_kconv *cv,
                           enum fb_conv_pass pass, const void *a, const void *b, void *out,
                           struct fb_stream *s)
{
    bool direct = cv->r == 1 && cv->s == 1 && cv->stride == 1 && cv->pad == 0;
    int rsc = cv->r * cv->s * cv->c, pq = cv->p * cv->q, hw = cv->h * cv->w, nb;
    size_t per_image = (size_t)pq * rsc;
    fb_status st;

    (void)s;
    /* Images per chunk: as many as the im2col scratch cap allows, at least one. */
    nb = direct ? cv->n : (int)(COL_CAP_BYTES / 4 / (per_image ? per_image : 1));
    nb = nb < 1 ? 1 : nb > cv->n ? cv->n : nb;
    if (!direct && (st = grow((void **)&ctx->col, &ctx->col_cap, (size_t)nb * per_image,
                              sizeof *ctx->col)) != FB_OK)
        return st;
    for (int n0 = 0; n0 < cv->n; n0 += nb) {
        int m = (cv->n - n0 < nb ? cv->n - n0 : nb);
        const float *x = pass == FB_CONV_DGRAD ? NULL : (const float *)a + (size_t)n0 * hw * cv->c;
        const float *dy = pass == FB_CONV_FWD ? NULL
                          : (const float *)(pass == FB_CONV_DGRAD ? a : b) + (size_t)n0 * pq * cv->k;
        const float *col = direct ? x : ctx->col;

        if (!direct && pass != FB_CONV_DGRAD)
            im2col(cv, a, n0, m, ctx->col);
        switch (pass) {
        case FB_CONV_FWD: /* y (npq x k) = col (npq x rsc) w^T */
            blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m * pq, cv->k, rsc, 1.0f, col,
                       rsc, b, rsc, 0.0f, (float *)out + (size_t)n0 * pq * cv->k, cv->k);
            break;
        case FB_CONV_DGRAD: /* dcol (npq x rsc) = dy (npq x k) w (k x rsc), then col2im */
            blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m * pq, rsc, cv->k, 1.0f, dy,
                       cv->k, b, rsc, 0.0f,
                       direct ? (float *)out + (size_t)n0 * hw * cv->c : ctx->col, rsc);
            if (!direct)
                col2im(cv, ctx->col, n0, m, out);
            break;
        case FB_CONV_WGRAD: /* dw (k x rsc) += dy^T (k x npq) col (npq x rsc) */
            blas.sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cv->k, rsc, m * pq, 1.0f, dy,
                       cv->k, col, rsc, n0 == 0 ? 0.0f : 1.0f, out, rsc);
            break;
        }
    }
    return FB_OK;
}

/* Per-channel sums over rows x c: float partial sums over blocks of rows (which vectorize),
 * folded into double (a channel of a large batch has millions of rows). With y and dy:
 * the sums of the gradient g = dy where the ReLU passed it, and of g * (x - mean). */
enum { BN_BLOCK = 256 };

static fb_status run_bn_relu_fwd(struct fb_conv_ctx *ctx, const void *xv, void *yv, size_t rows,
                                  int c, const float *gamma, const float *beta, float *mean_var,
                                  struct fb_stream *s)
{
    const float *x = xv;
    float *y = yv, *ps, *pq, *a, *b;
    double *sum, *sq;
    fb_status st;

    (void)s;
    if ((st = grow((void **)&ctx->acc, &ctx->acc_cap, 2 * (size_t)c, sizeof *ctx->acc)) != FB_OK ||
        (st = grow((void **)&ctx->col, &ctx->col_cap, 4 * (size_t)c, sizeof *ctx->col)) != FB_OK)
        return st;
    sum = ctx->acc;
    sq = ctx->acc + c;
    ps = ctx->col;
    pq = ps + c;
    memset(ctx->acc, 0, 2 * (size_t)c * sizeof *ctx->acc);
    for (size_t i0 = 0; i0 < rows; i0 += BN_BLOCK) {
        size_t i1 = i0 + BN_BLOCK < rows ? i0 + BN_BLOCK : rows;
        memset(ps, 0, 2 * (size_t)c * sizeof *ps);
        for (size_t i = i0; i < i1; i++) {
            const float *xr = x + i * c;
            for (int j = 0; j < c; j++) {
                ps[j] += xr[j];
                pq[j] += xr[j] * xr[j];
            }
        }
        for (int j = 0; j < c; j++) {
            sum[j] += ps[j];
            sq[j] += pq[j];
        }
    }
    /* y = max(0, x a + b) with a = gamma rstd, b = beta - mean a */
    a = ctx->col + 2 * (size_t)c;
    b = a + c;
    for (int j = 0; j < c; j++) {
        double mean = sum[j] / (double)rows, var = sq[j] / (double)rows - mean * mean;
        mean_var[j] = (float)mean;
        mean_var[c + j] = (float)(var > 0 ? var : 0);
        a[j] = gamma[j] / sqrtf(mean_var[c + j] + BN_EPS);
        b[j] = beta[j] - mean_var[j] * a[j];
    }
    for (size_t i = 0; i < rows; i++) {
        const float *xr = x + i * c;
        float *yr = y + i * c;
        for (int j = 0; j < c; j++) {
            float v = xr[j] * a[j] + b[j];
            yr[j] = v > 0.0f ? v : 0.0f;
        }
    }
    return FB_OK;
}

static fb_status run_bn_relu_bwd(struct fb_conv_ctx *ctx, const void *xv, const void *yv,
                                  const void *dyv, void *dxv, size_t rows, int c,
                                  const float *gamma, const float *mean_var, float *dgamma,
                                  float *dbeta, float *scratch, struct fb_stream *s)
{
    const float *x = xv, *y = yv, *dy = dyv, *mean = mean_var;
    float *dx = dxv, *rstd = scratch, *pb, *pg, *ka, *kb, *kc;
    double *db, *dg, n = (double)rows;
    fb_status st;

    (void)s;
    if ((st = grow((void **)&ctx->acc, &ctx->acc_cap, 2 * (size_t)c, sizeof *ctx->acc)) != FB_OK ||
        (st = grow((void **)&ctx->col, &ctx->col_cap, 5 * (size_t)c, sizeof *ctx->col)) != FB_OK)
        return st;
    db = ctx->acc;
    dg = ctx->acc + c;
    pb = ctx->col;
    pg = pb + c;
    memset(ctx->acc, 0, 2 * (size_t)c * sizeof *ctx->acc);
    for (int j = 0; j < c; j++)
        rstd[j] = 1.0f / sqrtf(mean_var[c + j] + BN_EPS);
    /* dbeta = sum g, dgamma = sum g xhat = rstd sum g (x - mean) */
    for (size_t i0 = 0; i0 < rows; i0 += BN_BLOCK) {
        size_t i1 = i0 + BN_BLOCK < rows ? i0 + BN_BLOCK : rows;
        memset(pb, 0, 2 * (size_t)c * sizeof *pb);
        for (size_t i = i0; i < i1; i++) {
            const float *xr = x + i * c, *yr = y + i * c, *gr = dy + i * c;
            for (int j = 0; j < c; j++) {
                float g = yr[j] > 0.0f ? gr[j] : 0.0f;
                pb[j] += g;
                pg[j] += g * (xr[j] - mean[j]);
            }
        }
        for (int j = 0; j < c; j++) {
            db[j] += pb[j];
            dg[j] += pg[j];
        }
    }
    /* dx = gamma rstd (g - dbeta / n - xhat dgamma / n) = ka g + kb x + kc */
    ka = ctx->col + 2 * (size_t)c;
    kb = ka + c;
    kc = kb + c;
    for (int j = 0; j < c; j++) {
        double gr = (double)gamma[j] * rstd[j];
        dbeta[j] = (float)db[j];
        dgamma[j] = (float)(dg[j] * rstd[j]);
        ka[j] = (float)gr;
        kb[j] = (float)(-gr * rstd[j] * dgamma[j] / n);
        kc[j] = (float)(-gr * dbeta[j] / n + gr * rstd[j] * mean[j] * dgamma[j] / n);
    }
    for (size_t i = 0; i < rows; i++) {
        const float *xr = x + i * c, *yr = y + i * c, *gr = dy + i * c;
        float *dxr = dx + i * c;
        for (int j = 0; j < c; j++) {
            float g = yr[j] > 0.0f ? gr[j] : 0.0f;
            dxr[j] = ka[j] * g + kb[j] * xr[j] + kc[j];
        }
    }
    return FB_OK;
}

/* The window of output (p, q) clipped to the input: rows [*y0, *y1), columns [*x0, *x1). */
static void window(const struct fb_kconv *cv, int p, int q, int *y0, int *y1, int *x0, int *x1)
{
    *y0 = p * cv->stride - cv->pad;
    *x0 = q * cv->stride - cv->pad;
    *y1 = *y0 + cv->r < cv->h ? *y0 + cv->r : cv->h;
    *x1 = *x0 + cv->s < cv->w ? *x0 + cv->s : cv->w;
    *y0 = *y0 < 0 ? 0 : *y0;
    *x0 = *x0 < 0 ? 0 : *x0;
}

static fb_status run_pool_fwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                               const struct fb_kconv *cv, const void *xv, void *yv,
                               struct fb_stream *s)
{
    const float *x = xv;
    float *y = yv;
    /* PyTorch's AvgPool2d counts padding in the divisor; DenseNet's pools have none. */
    float inv = 1.0f / (float)(cv->r * cv->s);

    (void)ctx;
    (void)s;
    for (int n = 0; n < cv->n; n++)
        for (int p = 0; p < cv->p; p++)
            for (int q = 0; q < cv->q; q++) {
                float *o = y + (((size_t)n * cv->p + p) * cv->q + q) * cv->c;
                int y0, y1, x0, x1;
                window(cv, p, q, &y0, &y1, &x0, &x1);
                for (int c = 0; c < cv->c; c++)
                    o[c] = kind == FB_POOL_MAX ? -INFINITY : 0.0f;
                for (int yy = y0; yy < y1; yy++)
                    for (int xx = x0; xx < x1; xx++) {
                        const float *i = x + (((size_t)n * cv->h + yy) * cv->w + xx) * cv->c;
                        for (int c = 0; c < cv->c; c++)
                            o[c] = kind == FB_POOL_MAX ? (i[c] > o[c] ? i[c] : o[c]) : o[c] + i[c];
                    }
                if (kind == FB_POOL_AVG)
                    for (int c = 0; c < cv->c; c++)
                        o[c] *= inv;
            }
    return FB_OK;
}

static fb_status run_pool_bwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                               const struct fb_kconv *cv, const void *xv, const void *dyv,
                               void *dxv, struct fb_stream *s)
{
    const float *x = xv, *dy = dyv;
    float *dx = dxv, *best;
    float inv = 1.0f / (float)(cv->r * cv->s);
    fb_status st;

    (void)s;
    /* best[c]: the window's maximum, then NAN once its gradient went to the first one */
    if ((st = grow((void **)&ctx->col, &ctx->col_cap, (size_t)cv->c, sizeof *ctx->col)) != FB_OK)
        return st;
    best = ctx->col;
    memset(dx, 0, (size_t)cv->n * cv->h * cv->w * cv->c * sizeof *dx);
    for (int n = 0; n < cv->n; n++)
        for (int p = 0; p < cv->p; p++)
            for (int q = 0; q < cv->q; q++) {
                const float *g = dy + (((size_t)n * cv->p + p) * cv->q + q) * cv->c;
                int y0, y1, x0, x1;
                window(cv, p, q, &y0, &y1, &x0, &x1);
                if (kind == FB_POOL_MAX) {
                    for (int c = 0; c < cv->c; c++)
                        best[c] = -INFINITY;
                    for (int yy = y0; yy < y1; yy++)
                        for (int xx = x0; xx < x1; xx++) {
                            const float *i = x + (((size_t)n * cv->h + yy) * cv->w + xx) * cv->c;
                            for (int c = 0; c < cv->c; c++)
                                best[c] = i[c] > best[c] ? i[c] : best[c];
                        }
                }
                for (int yy = y0; yy < y1; yy++)
                    for (int xx = x0; xx < x1; xx++) {
                        size_t at = (((size_t)n * cv->h + yy) * cv->w + xx) * cv->c;
                        for (int c = 0; c < cv->c; c++) {
                            if (kind == FB_POOL_AVG) {
                                dx[at + c] += g[c] * inv;
                            } else if (x[at + c] == best[c]) {
                                dx[at + c] += g[c];
                                best[c] = NAN; /* equal to nothing: one winner per window */
                            }
                        }
                    }
            }
    return FB_OK;
}

static fb_status run_copy2d(struct fb_conv_ctx *ctx, void *dstv, size_t dst_ld, const void *srcv,
                             size_t src_ld, size_t rows, size_t width, bool accumulate,
                             struct fb_stream *s)
{
    float *dst = dstv;
    const float *src = srcv;

    (void)ctx;
    (void)s;
    for (size_t i = 0; i < rows; i++) {
        if (!accumulate) {
            memcpy(dst + i * dst_ld, src + i * src_ld, width * sizeof *dst);
            continue;
        }
        for (size_t j = 0; j < width; j++)
            dst[i * dst_ld + j] += src[i * src_ld + j];
    }
    return FB_OK;
}

static fb_status run_gemm_ref(struct fb_conv_ctx *ctx, int m, int n, int k, const void *a,
                               const void *b, void *c, bool c_fp32, struct fb_stream *s)
{
    (void)ctx;
    (void)c_fp32; /* everything is fp32 on host */
    (void)s;
    blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    return FB_OK;
}

/* A pass as a kernel: its arguments copied, its device addresses translated when it runs. */
enum kernel { K_CONV, K_BN_FWD, K_BN_BWD, K_POOL_FWD, K_POOL_BWD, K_COPY2D, K_GEMM };
enum { MAX_PTRS = 9 };

struct call {
    enum kernel k;
    struct fb_conv_ctx *ctx;
    struct fb_kconv cv;
    int op;           /* the pass, or the pool */
    int c, m, n, kk;
    size_t rows, z[2];
    bool flag;
    const void *p[MAX_PTRS]; /* device memory */
};

static fb_status run_call(void *arg)
{
    struct call *k = arg;
    void *p[MAX_PTRS];

    for (int i = 0; i < MAX_PTRS; i++)
        p[i] = fb_device_view(k->p[i]);
    switch (k->k) {
    case K_CONV: return run_conv(k->ctx, &k->cv, (enum fb_conv_pass)k->op, p[0], p[1], p[2], NULL);
    case K_BN_FWD:
        return run_bn_relu_fwd(k->ctx, p[0], p[1], k->rows, k->c, p[2], p[3], p[4], NULL);
    case K_BN_BWD:
        return run_bn_relu_bwd(k->ctx, p[0], p[1], p[2], p[3], k->rows, k->c, p[4], p[5], p[6],
                               p[7], p[8], NULL);
    case K_POOL_FWD: return run_pool_fwd(k->ctx, (enum fb_pool)k->op, &k->cv, p[0], p[1], NULL);
    case K_POOL_BWD:
        return run_pool_bwd(k->ctx, (enum fb_pool)k->op, &k->cv, p[0], p[1], p[2], NULL);
    case K_COPY2D:
        return run_copy2d(k->ctx, p[0], k->z[0], p[1], k->z[1], k->rows, (size_t)k->c, k->flag,
                          NULL);
    case K_GEMM: return run_gemm_ref(k->ctx, k->m, k->n, k->kk, p[0], p[1], p[2], k->flag, NULL);
    }
    return FB_ERR_INTERNAL;
}

static fb_status launch(struct call *k, struct fb_stream *s)
{
    return k->ctx->be->host_launch(s, run_call, k, sizeof *k);
}

static fb_status host_conv(struct fb_conv_ctx *ctx, const struct fb_kconv *cv,
                           enum fb_conv_pass pass, const void *a, const void *b, void *out,
                           struct fb_stream *s)
{
    struct call k = {.k = K_CONV, .ctx = ctx, .cv = *cv, .op = pass, .p = {a, b, out}};
    return launch(&k, s);
}

static fb_status host_bn_relu_fwd(struct fb_conv_ctx *ctx, const void *x, void *y, size_t rows,
                                  int c, const float *gamma, const float *beta, float *mean_var,
                                  struct fb_stream *s)
{
    struct call k = {.k = K_BN_FWD, .ctx = ctx, .rows = rows, .c = c,
                     .p = {x, y, gamma, beta, mean_var}};
    return launch(&k, s);
}

static fb_status host_bn_relu_bwd(struct fb_conv_ctx *ctx, const void *x, const void *y,
                                  const void *dy, void *dx, size_t rows, int c,
                                  const float *gamma, const float *mean_var, float *dgamma,
                                  float *dbeta, float *scratch, struct fb_stream *s)
{
    struct call k = {.k = K_BN_BWD, .ctx = ctx, .rows = rows, .c = c,
                     .p = {x, y, dy, dx, gamma, mean_var, dgamma, dbeta, scratch}};
    return launch(&k, s);
}

static fb_status host_pool_fwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                               const struct fb_kconv *cv, const void *x, void *y,
                               struct fb_stream *s)
{
    struct call k = {.k = K_POOL_FWD, .ctx = ctx, .cv = *cv, .op = kind, .p = {x, y}};
    return launch(&k, s);
}

static fb_status host_pool_bwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                               const struct fb_kconv *cv, const void *x, const void *dy,
                               void *dx, struct fb_stream *s)
{
    struct call k = {.k = K_POOL_BWD, .ctx = ctx, .cv = *cv, .op = kind, .p = {x, dy, dx}};
    return launch(&k, s);
}

static fb_status host_copy2d(struct fb_conv_ctx *ctx, void *dst, size_t dst_ld, const void *src,
                             size_t src_ld, size_t rows, size_t width, bool accumulate,
                             struct fb_stream *s)
{
    struct call k = {.k = K_COPY2D, .ctx = ctx, .z = {dst_ld, src_ld}, .rows = rows,
                     .c = (int)width, .flag = accumulate, .p = {dst, src}};
    return launch(&k, s);
}

/* A layer's concatenation (or its split) as one copy per piece, each a kernel on s. */
static fb_status host_concat(struct fb_conv_ctx *ctx, bool split, void *cat, size_t cat_ld,
                             void *const *pieces, const size_t *widths, const bool *acc, size_t n,
                             size_t rows, struct fb_stream *s)
{
    size_t col = 0;

    for (size_t j = 0; j < n; j++)
        col += widths[j];
    if (n > FB_CONV_CONCAT_MAX || col > cat_ld)
        return FB_ERR_USAGE;
    col = 0;
    for (size_t j = 0; j < n; j++) {
        float *slice = (float *)cat + col;
        fb_status st = split ? host_copy2d(ctx, pieces[j], widths[j], slice, cat_ld, rows,
                                           widths[j], acc && acc[j], s)
                             : host_copy2d(ctx, slice, cat_ld, pieces[j], widths[j], rows,
                                           widths[j], false, s);
        if (st != FB_OK)
            return st;
        col += widths[j];
    }
    return FB_OK;
}

static fb_status host_gemm_ref(struct fb_conv_ctx *ctx, int m, int n, int k, const void *a,
                               const void *b, void *c, bool c_fp32, struct fb_stream *s)
{
    struct call kc = {.k = K_GEMM, .ctx = ctx, .m = m, .n = n, .kk = k, .flag = c_fp32,
                      .p = {a, b, c}};
    return launch(&kc, s);
}

const struct fb_conv_engine fb_conv_engine_host = {
    .name = "host",
    .built = true,
    .open = host_open,
    .close = host_close,
    .describe = host_describe,
    .ref_missing = host_ref_missing,
    .conv = host_conv,
    .bn_relu_fwd = host_bn_relu_fwd,
    .bn_relu_bwd = host_bn_relu_bwd,
    .pool_fwd = host_pool_fwd,
    .pool_bwd = host_pool_bwd,
    .copy2d = host_copy2d,
    .concat = host_concat,
    .gemm_ref = host_gemm_ref,
};
