/* Launchers for the pattern kernels (kernels/pattern_kernels.cu). C code calls these; it never
 * sees CUDA launch syntax. Each returns a cudaError_t as int (0 = success). `stream` is a
 * cudaStream_t. */
#ifndef FB_PATTERN_KERNELS_H
#define FB_PATTERN_KERNELS_H

#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stream-ordered: writes expect(i) into buf[0..count). */
int fb_kernel_fill(void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p, void *stream);

/* Synchronous: counts the elements of buf[0..count) that differ from expect(i) into *wrong. */
int fb_kernel_check(const void *buf, size_t count, enum fb_dtype dtype, struct fb_pattern p,
                    size_t *wrong, void *stream);

#ifdef __cplusplus
}
#endif

#endif
