/* Launchers of the DenseNet-121 compute stand-in's kernels (kernels/conv_implicit_gemm.cu,
 * kernels/batchnorm_relu.cu): convolutions as implicit GEMMs (no im2col buffer), forward and
 * both backward passes, and the memory-bound BatchNorm + ReLU passes. C code calls these; it
 * never sees CUDA launch syntax. Each returns a cudaError_t as int (0 = success); all are
 * stream-ordered on `stream` (a cudaStream_t).
 *
 * Layouts: activations NHWC, contiguous (element (n, y, x, c) at ((n*H + y)*W + x)*C + c);
 * weights K x R x S x C, contiguous. `prec` says the type of activations and weights
 * (fp16/bf16 run on tensor cores with fp32 accumulation where the GPU has them; fp32 runs on
 * CUDA cores). Weight gradients are always fp32 (what is all-reduced and applied). */
#ifndef FB_CONV_GEMM_H
#define FB_CONV_GEMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fb_kprec { FB_KPREC_FP32 = 0, FB_KPREC_FP16 = 1, FB_KPREC_BF16 = 2 };

/* One convolution: input n x h x w x c, k filters of r x s x c, stride, zero padding `pad`,
 * output n x p x q x k with p = (h + 2 pad - r) / stride + 1 (likewise q). */
struct fb_kconv {
    int n, h, w, c;
    int k, r, s, stride, pad;
    int p, q;
};

/* GEMM views (M x N, reduction K), for FLOP counts and the cuBLAS ceiling:
 *   forward: y  = x (*) w      M = n*p*q, N = k,     K = r*s*c
 *   dgrad:   dx = dy (*)^T w   M = n*h*w, N = c,     K = k*r*s
 *   wgrad:   dw = dy^T (*) x   M = k,     N = r*s*c, K = n*p*q  */

/* y[n,p,q,k] = sum over r,s,c of x[n, p*stride - pad + r, q*stride - pad + s, c] * w[k,r,s,c] */
int fb_kconv_fwd(const struct fb_kconv *cv, int prec, const void *x, const void *w, void *y,
                 void *stream);
/* dx[n,h,w,c] = sum over the (p,q,k,r,s) that read input pixel (h,w) of dy[n,p,q,k] * w[k,r,s,c] */
int fb_kconv_dgrad(const struct fb_kconv *cv, int prec, const void *dy, const void *w, void *dx,
                   void *stream);
/* dw[k,r,s,c] (fp32) = sum over n,p,q of dy[n,p,q,k] * x[n, p*stride - pad + r, q*stride - pad + s, c] */
int fb_kconv_wgrad(const struct fb_kconv *cv, int prec, const void *x, const void *dy, float *dw,
                   void *stream);

/* BatchNorm (training mode) + ReLU over `rows` = n*h*w rows of `c` channels, in place of y:
 * per-channel mean and variance of x (fp32, biased), then y = max(0, (x - mean) * rsqrt(var +
 * 1e-5) * gamma + beta). mean_var holds 2*c floats of scratch (written). */
int fb_kbn_relu_fwd(int prec, const void *x, void *y, size_t rows, int c, const float *gamma,
                    const float *beta, float *mean_var, void *stream);
/* Its backward: with y the forward output and x its input, dgamma/dbeta (fp32, c each) and
 * dx = BatchNorm's data gradient of (dy masked where y == 0). scratch holds 2*c floats. */
int fb_kbn_relu_bwd(int prec, const void *x, const void *y, const void *dy, void *dx, size_t rows,
                    int c, const float *gamma, const float *mean_var, float *dgamma, float *dbeta,
                    float *scratch, void *stream);

/* Whether the current device runs `prec` on tensor cores: it has them (fp16: sm_70+, bf16:
 * sm_80+) and the code it loads was compiled for them (fb_kconv_tc_usable). */
int fb_kconv_tensor_cores(int prec);

/* The decision behind it, pure for tests: device_cc is the device's compute capability and
 * kernel_arch the virtual architecture the code it runs was compiled for (cudaFuncAttributes'
 * ptxVersion), both as 10 * major + minor. A build for sm_75 alone runs on an sm_90 device but
 * its bf16 tensor-core kernel is a trap there, so both must reach the precision's minimum. */
static inline int fb_kconv_tc_usable(int prec, int device_cc, int kernel_arch)
{
    int need = prec == FB_KPREC_FP16 ? 70 : prec == FB_KPREC_BF16 ? 80 : 0;
    return need > 0 && device_cc >= need && kernel_arch >= need;
}

/* For tests, so that every kernel variant can be checked: `tile` 64 or 128 forces that block
 * tile on all later convolution launches (anything else: chosen by shape), and `simt_only`
 * non-zero runs fp16/bf16 on CUDA cores as on a GPU without tensor cores. Process-wide, not
 * thread-safe; call with (0, 0) to restore the defaults. */
void fb_kconv_set_override(int tile, int simt_only);

#ifdef __cplusplus
}
#endif

#endif
