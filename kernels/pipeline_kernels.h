/* Launchers for the input pipeline's device work (kernels/pipeline_kernels.cu). C code calls
 * these; it never sees CUDA launch syntax. Each returns a cudaError_t as int (0 = success).
 * `stream` is a cudaStream_t; both are stream-ordered. */
#ifndef FB_PIPELINE_KERNELS_H
#define FB_PIPELINE_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ToTensor + Normalize on the device: `images` images of 3 planes of `plane` uint8 values
 * become floats, dst = (src / 255 - mean[c]) * inv_std[c]. */
int fb_kernel_normalize_u8(float *dst, const unsigned char *src, size_t images, size_t plane,
                           const float mean[3], const float inv_std[3], void *stream);

/* One thread spins on the GPU's nanosecond global timer for `us` microseconds: a consumer's
 * compute of known length that neither the clock rate nor boost can stretch. */
int fb_kernel_busy_wait(double us, void *stream);

#ifdef __cplusplus
}
#endif

#endif
