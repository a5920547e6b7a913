/* The convolution engine table: how the `compute` stand-in runs DenseNet-121's layers on a
 * device backend. Two implementations, like the device backends: `host` (im2col + OpenBLAS
 * sgemm, BatchNorm and pools in plain C, fp32 only) and `cuda` (the implicit-GEMM kernels of
 * kernels/conv_gemm.h, and cuBLAS, dlopen'ed, as the ceiling); `cuda` is a stub answering
 * "not built" when the binary has no CUDA kernels. Layouts are those of kernels/conv_gemm.h:
 * activations NHWC, weights K x R x S x C, weight and BatchNorm gradients always fp32. */
#ifndef FB_CONV_ENGINE_H
#define FB_CONV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_gemm.h"
#include "backend.h"
#include "status.h"

/* Activation and weight types; the values are those of enum fb_kprec. */
enum fb_conv_prec { FB_CONV_FP32 = FB_KPREC_FP32, FB_CONV_FP16 = FB_KPREC_FP16,
                    FB_CONV_BF16 = FB_KPREC_BF16 };

enum fb_conv_pass {
    FB_CONV_FWD,   /* y  = x (*) w:    a = x,  b = w,  out = y (prec) */
    FB_CONV_DGRAD, /* dx = dy (*)^T w: a = dy, b = w,  out = dx (prec) */
    FB_CONV_WGRAD, /* dw = dy^T (*) x: a = x,  b = dy, out = dw (fp32) */
};

enum fb_pool { FB_POOL_MAX, FB_POOL_AVG }; /* avg with r x s = h x w is a global average */

struct fb_conv_ctx; /* an open engine: library handles, scratch; opaque per engine */

/* Most pieces one concat takes (kernels/pool_kernels.h's FB_KCONCAT_MAX). */
#define FB_CONV_CONCAT_MAX 32

struct fb_conv_engine {
    const char *name; /* "host", "cuda": the device backend it runs with */
    bool built;       /* false for the stub */

    /* Opens the engine for `prec` on backend `be` (which must be open). Returns
     * FB_ERR_UNSUPPORTED with `why` filled when this engine cannot run `prec` (fp16 on host),
     * FB_ERR_NOT_BUILT from the stub. The context is not thread-safe. */
    fb_status (*open)(const struct fb_backend *be, enum fb_conv_prec prec,
                      struct fb_conv_ctx **out, char *why, size_t whylen);
    void (*close)(struct fb_conv_ctx *ctx); /* accepts NULL */

    /* What does the work, for the CSV `transport` column: ours ("im2col-openblas",
     * "implicit-gemm") and the ceiling ("openblas", "cublas"). Needs no open context. */
    const char *(*describe)(bool ref);
    /* NULL when gemm_ref can run; otherwise why not ("no cuBLAS: ..."): the ceiling is then
     * waived, it is not an error. */
    const char *(*ref_missing)(const struct fb_conv_ctx *ctx);

    /* One pass of one convolution (see enum fb_conv_pass for the operands). Stream-ordered;
     * every pointer is device memory of `be`. */
    fb_status (*conv)(struct fb_conv_ctx *ctx, const struct fb_kconv *cv, enum fb_conv_pass pass,
                      const void *a, const void *b, void *out, struct fb_stream *s);
    /* BatchNorm (training statistics) + ReLU over rows x c, and its backward; the contract of
     * fb_kbn_relu_fwd / fb_kbn_relu_bwd. Stream-ordered. */
    fb_status (*bn_relu_fwd)(struct fb_conv_ctx *ctx, const void *x, void *y, size_t rows, int c,
                             const float *gamma, const float *beta, float *mean_var,
                             struct fb_stream *s);
    fb_status (*bn_relu_bwd)(struct fb_conv_ctx *ctx, const void *x, const void *y,
                             const void *dy, void *dx, size_t rows, int c, const float *gamma,
                             const float *mean_var, float *dgamma, float *dbeta, float *scratch,
                             struct fb_stream *s);
    /* A pool over cv's window (k = c): forward x -> y, and backward dy -> dx (dx overwritten;
     * max-pool routes each gradient to its window's first maximum of x; average divides by
     * r*s, padding counted). On cuda: kernels/pool_kernels.h. */
    fb_status (*pool_fwd)(struct fb_conv_ctx *ctx, enum fb_pool kind, const struct fb_kconv *cv,
                          const void *x, void *y, struct fb_stream *s);
    fb_status (*pool_bwd)(struct fb_conv_ctx *ctx, enum fb_pool kind, const struct fb_kconv *cv,
                          const void *x, const void *dy, void *dx, struct fb_stream *s);
    /* rows x width elements from src (row pitch src_ld elements) into dst (pitch dst_ld):
     * torch.cat's copies in NHWC and the slicing of its gradient. With accumulate, dst +=
     * src (gradient accumulation). On cuda: kernels/pool_kernels.h. */
    fb_status (*copy2d)(struct fb_conv_ctx *ctx, void *dst, size_t dst_ld, const void *src,
                        size_t src_ld, size_t rows, size_t width, bool accumulate,
                        struct fb_stream *s);
    /* torch.cat along channels in one call: split false, cat (rows x cat_ld) gets the n
     * pieces (rows x widths[j], pitch widths[j]) side by side from column 0; split true, its
     * gradient, each piece its slice of cat, added where acc[j] (acc may be NULL). n <=
     * FB_CONV_CONCAT_MAX. On cuda one kernel (kernels/pool_kernels.h, fb_kconcat). */
    fb_status (*concat)(struct fb_conv_ctx *ctx, bool split, void *cat, size_t cat_ld,
                        void *const *pieces, const size_t *widths, const bool *acc, size_t n,
                        size_t rows, struct fb_stream *s);
    /* The vendor BLAS on dense row-major operands of one GEMM shape: C (m x n) = A (m x k)
     * B (k x n), A and B in prec, C in prec or, with c_fp32, in fp32 (weight gradients);
     * fp32 accumulation. FB_ERR_UNSUPPORTED when ref_missing says so. Stream-ordered. */
    fb_status (*gemm_ref)(struct fb_conv_ctx *ctx, int m, int n, int k, const void *a,
                          const void *b, void *c, bool c_fp32, struct fb_stream *s);
};

extern const struct fb_conv_engine fb_conv_engine_host;
extern const struct fb_conv_engine fb_conv_engine_cuda; /* a stub without the CUDA kernels */

/* The engine for a device backend (by its name), or NULL. */
const struct fb_conv_engine *fb_conv_engine_for(const struct fb_backend *be);

/* "fp32", "fp16", "bf16"; and back (NULL or "" gives `dflt`); FB_ERR_USAGE when unknown. */
const char *fb_conv_prec_name(enum fb_conv_prec p);
fb_status fb_conv_prec_parse(const char *name, enum fb_conv_prec dflt, enum fb_conv_prec *out);
size_t fb_conv_prec_size(enum fb_conv_prec p); /* bytes per element: 4 or 2 */

/* Host conversions between floats and a precision's element bits (fp16: ties to even;
 * bf16: the upper half of the float, rounded to nearest even). Pure. */
void fb_conv_pack(enum fb_conv_prec p, const float *src, void *dst, size_t n);
void fb_conv_unpack(enum fb_conv_prec p, const void *src, float *dst, size_t n);

/* Output elements of one pass: n*p*q*k (fwd), n*h*w*c (dgrad), k*r*s*c (wgrad). */
size_t fb_conv_out_elements(const struct fb_kconv *cv, enum fb_conv_pass pass);
/* Elements of the two inputs of a pass (a, b as in enum fb_conv_pass). */
void fb_conv_in_elements(const struct fb_kconv *cv, enum fb_conv_pass pass, size_t *a, size_t *b);

/* A square-window convolution's shape, its output side computed (floor, as PyTorch). */
struct fb_kconv fb_kconv_make(int n, int h, int w, int c, int k, int r, int stride, int pad);

/* The direct convolution in double, every product visited once: one pass's expected output
 * want[] (a = x, b = w forward; a = dy, b = w for dgrad; a = x, b = dy for wgrad) and the sum
 * of the absolute products per output element (mag[], the scale accumulation errors are
 * proportional to). Both zeroed by the caller. The reference of fb_conv_check and the tests. */
void fb_conv_direct(const struct fb_kconv *cv, enum fb_conv_pass pass, const float *a,
                    const float *b, double *want, double *mag);

/* Checks one pass of an engine against a direct convolution in double on the host: random
 * inputs (seeded) rounded to the engine's precision, the engine's result copied back, and
 * every output element outside |got - want| <= rel_out * |want| + 1e-4 * sum|terms| + 1e-6
 * counted in *wrong (rel_out: the rounding of the output type, 0 for fp32 and for weight
 * gradients; 1e-4 of the sum of the absolute products bounds fp32 accumulation over the
 * shapes of DenseNet-121). Synchronous; allocates and frees device memory on `be`. */
fb_status fb_conv_check(const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                        const struct fb_backend *be, enum fb_conv_prec prec,
                        const struct fb_kconv *cv, enum fb_conv_pass pass, uint32_t seed,
                        struct fb_stream *s, size_t *wrong);

/* Checks gemm_ref the same way on an m x n x k product (fp32 output). Synchronous. */
fb_status fb_conv_check_gemm(const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                             const struct fb_backend *be, enum fb_conv_prec prec, int m, int n,
                             int k, struct fb_stream *s, size_t *wrong);

#endif
