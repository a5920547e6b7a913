/* The `cuda` convolution engine: our implicit-GEMM and BatchNorm kernels (kernels/conv_gemm.h)
 * and pools and concatenation copies (kernels/pool_kernels.h) on the backend's stream, and
 * cuBLAS as the ceiling. cuBLAS is part of the CUDA toolkit but not of every machine's
 * install: it is dlopen'ed, never linked, so the binary starts without it and only the
 * reference mode is waived (with the reason) when it is missing. */
#include "conv_engine.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_kernels.h"
#include "log.h"

/* ---- cuBLAS, declared here with its C ABI (values from cublas_api.h, library_types.h) ---- */
typedef int cublas_status;
typedef struct cublasContext *cublas_handle;
enum { CUBLAS_OK = 0, CUBLAS_OP_NONE = 0, CUBLAS_COMPUTE_F32 = 68, CUBLAS_ALGO_DEFAULT = -1 };
enum { CUDA_TYPE_F32 = 0, CUDA_TYPE_F16 = 2, CUDA_TYPE_BF16 = 14 };

struct cublas {
    void *lib;
    cublas_status (*create)(cublas_handle *);
    cublas_status (*destroy)(cublas_handle);
    cublas_status (*set_stream)(cublas_handle, cudaStream_t);
    cublas_status (*gemm_ex)(cublas_handle, int, int, int, int, int, const void *, const void *,
                             int, int, const void *, int, int, const void *, void *, int, int,
                             int, int);
    cublas_handle handle;
};

struct fb_conv_ctx {
    const struct fb_backend *be;
    enum fb_conv_prec prec;
    struct cublas blas;
    char ref_why[160]; /* why the ceiling is waived; "" when cuBLAS is there */
};

/* Loads cuBLAS and creates a handle; false with why filled when it cannot. */
static bool cublas_load(struct cublas *b, char *why, size_t whylen)
{
    static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    static const char *const names[] = {"cublasCreate_v2", "cublasDestroy_v2",
                                        "cublasSetStream_v2", "cublasGemmEx"};
    void *sym[4];
    const char *err = NULL;
    cublas_status cs;

    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !b->lib; i++)
        if (!(b->lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL)))
            err = dlerror();
    if (!b->lib) {
        snprintf(why, whylen, "no cuBLAS (%s): install the CUDA toolkit's libcublas or put it on "
                 "LD_LIBRARY_PATH", err ? err : "cannot load libcublas.so");
        return false;
    }
    for (size_t i = 0; i < 4; i++)
        if (!(sym[i] = dlsym(b->lib, names[i]))) {
            snprintf(why, whylen, "libcublas lacks %s: too old", names[i]);
            goto fail;
        }
    /* ISO C has no void* to function pointer conversion; POSIX guarantees it works (dlsym). */
    memcpy(&b->create, &sym[0], sizeof sym[0]);
    memcpy(&b->destroy, &sym[1], sizeof sym[1]);
    memcpy(&b->set_stream, &sym[2], sizeof sym[2]);
    memcpy(&b->gemm_ex, &sym[3], sizeof sym[3]);
    if ((cs = b->create(&b->handle)) != CUBLAS_OK) {
        snprintf(why, whylen, "cublasCreate failed with status %d", cs);
        goto fail;
    }
    return true;
fail:
    dlclose(b->lib);
    memset(b, 0, sizeof *b);
    return false;
}

static fb_status cuda_status(int err, const char *what)
{
    if (err == 0)
        return FB_OK;
    fb_error("%s: %s (%s)", what, cudaGetErrorString((cudaError_t)err),
             cudaGetErrorName((cudaError_t)err));
    return err == cudaErrorMemoryAllocation ? FB_ERR_NOMEM : FB_ERR_BACKEND;
}

static fb_status ce_open(const struct fb_backend *be, enum fb_conv_prec prec,
                         struct fb_conv_ctx **out, char *why, size_t whylen)
{
    struct fb_conv_ctx *ctx;

    *out = NULL;
    if (!(ctx = calloc(1, sizeof *ctx)))
        return FB_ERR_NOMEM;
    ctx->be = be;
    ctx->prec = prec;
    if (prec != FB_CONV_FP32 && !fb_kconv_tensor_cores((int)prec))
        fb_warn("%s: this GPU has no %s tensor cores; the kernels run it on CUDA cores",
                fb_conv_prec_name(prec), fb_conv_prec_name(prec));
    if (!cublas_load(&ctx->blas, ctx->ref_why, sizeof ctx->ref_why))
        fb_warn("compute's cuBLAS ceiling waived: %s", ctx->ref_why);
    (void)why;
    (void)whylen;
    *out = ctx;
    return FB_OK;
}

static void ce_close(struct fb_conv_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->blas.lib) {
        ctx->blas.destroy(ctx->blas.handle);
        dlclose(ctx->blas.lib);
    }
    free(ctx);
}

static const char *ce_describe(bool ref) { return ref ? "cublas" : "implicit-gemm"; }

static const char *ce_ref_missing(const struct fb_conv_ctx *ctx)
{
    return ctx->blas.lib ? NULL : ctx->ref_why;
}

static fb_status ce_conv(struct fb_conv_ctx *ctx, const struct fb_kconv *cv,
                         enum fb_conv_pass pass, const void *a, const void *b, void *out,
                         struct fb_stream *s)
{
    void *stream = ctx->be->stream_native(s);
    int p = (int)ctx->prec;

    switch (pass) {
    case FB_CONV_FWD: return cuda_status(fb_kconv_fwd(cv, p, a, b, out, stream), "fb_kconv_fwd");
    case FB_CONV_DGRAD:
        return cuda_status(fb_kconv_dgrad(cv, p, a, b, out, stream), "fb_kconv_dgrad");
    default: return cuda_status(fb_kconv_wgrad(cv, p, a, b, out, stream), "fb_kconv_wgrad");
    }
}

static fb_status ce_bn_relu_fwd(struct fb_conv_ctx *ctx, const void *x, void *y, size_t rows,
                                int c, const float *gamma, const float *beta, float *mean_var,
                                struct fb_stream *s)
{
    return cuda_status(fb_kbn_relu_fwd((int)ctx->prec, x, y, rows, c, gamma, beta, mean_var,
                                       ctx->be->stream_native(s)),
                       "fb_kbn_relu_fwd");
}

static fb_status ce_bn_relu_bwd(struct fb_conv_ctx *ctx, const void *x, const void *y,
                                const void *dy, void *dx, size_t rows, int c, const float *gamma,
                                const float *mean_var, float *dgamma, float *dbeta,
                                float *scratch, struct fb_stream *s)
{
    return cuda_status(fb_kbn_relu_bwd((int)ctx->prec, x, y, dy, dx, rows, c, gamma, mean_var,
                                       dgamma, dbeta, scratch, ctx->be->stream_native(s)),
                       "fb_kbn_relu_bwd");
}

/* The pools and torch.cat's copies are kernels/pool_kernels.h's: real values, checked against
 * the host engine (tests/unit/test_conv_engine_cuda.c), so the step's traffic is the real one. */
static int kpool(enum fb_pool kind) { return kind == FB_POOL_MAX ? FB_KPOOL_MAX : FB_KPOOL_AVG; }

static fb_status ce_pool_fwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                             const struct fb_kconv *cv, const void *x, void *y,
                             struct fb_stream *s)
{
    return cuda_status(fb_kpool_fwd(cv, kpool(kind), (int)ctx->prec, x, y,
                                    ctx->be->stream_native(s)),
                       "fb_kpool_fwd");
}

static fb_status ce_pool_bwd(struct fb_conv_ctx *ctx, enum fb_pool kind,
                             const struct fb_kconv *cv, const void *x, const void *dy, void *dx,
                             struct fb_stream *s)
{
    return cuda_status(fb_kpool_bwd(cv, kpool(kind), (int)ctx->prec, x, dy, dx,
                                    ctx->be->stream_native(s)),
                       "fb_kpool_bwd");
}

/* A plain slice is a pitched cudaMemcpy2DAsync; accumulating one (dst += src) is a kernel. */
static fb_status ce_copy2d(struct fb_conv_ctx *ctx, void *dst, size_t dst_ld, const void *src,
                           size_t src_ld, size_t rows, size_t width, bool accumulate,
                           struct fb_stream *s)
{
    return cuda_status(fb_kcopy2d((int)ctx->prec, dst, dst_ld, src, src_ld, rows, width,
                                  accumulate, ctx->be->stream_native(s)),
                       accumulate ? "fb_kcopy2d (accumulate)" : "fb_kcopy2d");
}

_Static_assert(FB_CONV_CONCAT_MAX == FB_KCONCAT_MAX, "the engine's and the kernel's limits");

static fb_status ce_concat(struct fb_conv_ctx *ctx, bool split, void *cat, size_t cat_ld,
                           void *const *pieces, const size_t *widths, const bool *acc, size_t n,
                           size_t rows, struct fb_stream *s)
{
    int accumulate[FB_CONV_CONCAT_MAX];

    if (n > FB_CONV_CONCAT_MAX)
        return FB_ERR_USAGE;
    for (size_t j = 0; j < n; j++)
        accumulate[j] = acc && acc[j];
    return cuda_status(fb_kconcat((int)ctx->prec, split, cat, cat_ld, pieces, widths, accumulate,
                                  n, rows, ctx->be->stream_native(s)),
                       split ? "fb_kconcat (split)" : "fb_kconcat");
}

static fb_status ce_gemm_ref(struct fb_conv_ctx *ctx, int m, int n, int k, const void *a,
                             const void *b, void *c, bool c_fp32, struct fb_stream *s)
{
    static const int types[] = {[FB_CONV_FP32] = CUDA_TYPE_F32, [FB_CONV_FP16] = CUDA_TYPE_F16,
                                [FB_CONV_BF16] = CUDA_TYPE_BF16};
    const float one = 1.0f, zero = 0.0f;
    int in = types[ctx->prec], outt = c_fp32 ? CUDA_TYPE_F32 : in;
    cublas_status cs;

    if (!ctx->blas.lib)
        return FB_ERR_UNSUPPORTED;
    if ((cs = ctx->blas.set_stream(ctx->blas.handle,
                                   (cudaStream_t)ctx->be->stream_native(s))) != CUBLAS_OK)
        goto fail;
    /* Row-major C = A B is column-major C^T = B^T A^T: the operands swap, nothing is copied.
     * fp32 accumulation always (CUBLAS_COMPUTE_32F: fp32 inputs stay on CUDA cores, not
     * TF32, like our fp32 kernel). */
    if ((cs = ctx->blas.gemm_ex(ctx->blas.handle, CUBLAS_OP_NONE, CUBLAS_OP_NONE, n, m, k, &one,
                                b, in, n, a, in, k, &zero, c, outt, n, CUBLAS_COMPUTE_F32,
                                CUBLAS_ALGO_DEFAULT)) != CUBLAS_OK)
        goto fail;
    return FB_OK;
fail:
    fb_error("cuBLAS GEMM %d x %d x %d (%s) failed with status %d", m, n, k,
             fb_conv_prec_name(ctx->prec), cs);
    return FB_ERR_BACKEND;
}

const struct fb_conv_engine fb_conv_engine_cuda = {
    .name = "cuda",
    .built = true,
    .open = ce_open,
    .close = ce_close,
    .describe = ce_describe,
    .ref_missing = ce_ref_missing,
    .conv = ce_conv,
    .bn_relu_fwd = ce_bn_relu_fwd,
    .bn_relu_bwd = ce_bn_relu_bwd,
    .pool_fwd = ce_pool_fwd,
    .pool_bwd = ce_pool_bwd,
    .copy2d = ce_copy2d,
    .concat = ce_concat,
    .gemm_ref = ce_gemm_ref,
};
