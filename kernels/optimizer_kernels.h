/* Launcher for the optimizer update (kernels/optimizer_kernels.cu). C code calls it; it never
 * sees CUDA launch syntax. Returns a cudaError_t as int (0 = success); stream-ordered on
 * `stream` (a cudaStream_t). */
#ifndef FB_OPTIMIZER_KERNELS_H
#define FB_OPTIMIZER_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SGD with momentum over n fp32 weights: v = momentum * v + scale * g; w -= lr * v. g is n
 * floats, or n IEEE halves when g_half (a gradient reduced in float16, widened per element). */
int fb_kernel_sgd_momentum(float *w, float *v, const void *g, int g_half, size_t n, float lr,
                           float momentum, float scale, void *stream);

#ifdef __cplusplus
}
#endif

#endif
