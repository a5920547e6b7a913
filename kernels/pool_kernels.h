/* Launchers of the DenseNet-121 compute stand-in's memory-bound glue (kernels/pool_kernels.cu):
 * max and average pools, forward and backward, and torch.cat's pitched copies with an
 * accumulating variant for the gradients that several layers add into. Same conventions as
 * kernels/conv_gemm.h, whose struct fb_kconv and enum fb_kprec they take: NHWC activations,
 * `prec` an enum fb_kprec, each returns a cudaError_t as int (0 = success) and is
 * stream-ordered on `stream` (a cudaStream_t). All arithmetic is fp32, rounded once on store. */
#ifndef FB_POOL_KERNELS_H
#define FB_POOL_KERNELS_H

#include <stddef.h>

#include "conv_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fb_kpool { FB_KPOOL_MAX = 0, FB_KPOOL_AVG = 1 };

/* A pool of kind `kind` over cv's window (r x s, stride, zero padding pad) on cv->c channels
 * (cv->k is ignored), input n x h x w x c to output n x p x q x c. Max: the largest element of
 * the window clipped to the input (padding never wins; NaN inputs are skipped; -inf for a
 * window wholly in the padding). Average: the sum of the clipped window divided by r*s, padding
 * counted (PyTorch's count_include_pad); with r x s = h x w, stride 1, pad 0 it is the global
 * average. Every output element is written. */
int fb_kpool_fwd(const struct fb_kconv *cv, int kind, int prec, const void *x, void *y,
                 void *stream);

/* Its backward, dx (n x h x w x c) from dy (n x p x q x c), dx overwritten (elements no window
 * reads get 0). Max routes each window's gradient to the window's first maximum of x in row
 * order (recomputed from x: no indices are stored), as the host engine does; average spreads
 * dy / (r*s) over the clipped window. Overlapping windows' contributions are summed in fp32 in
 * output order (p, then q), one thread per dx element: deterministic, no atomics. */
int fb_kpool_bwd(const struct fb_kconv *cv, int kind, int prec, const void *x, const void *dy,
                 void *dx, void *stream);

/* rows x width elements: dst[i*dst_ld + j] = src[i*src_ld + j], or with `accumulate` non-zero
 * dst[i*dst_ld + j] += src[...] (fp32 sum, one rounding). Pitches are in elements and must be
 * >= width (cudaErrorInvalidValue otherwise). The plain copy is cudaMemcpy2DAsync; dst and src
 * must not overlap unless they are the same elements (then accumulate doubles them). */
int fb_kcopy2d(int prec, void *dst, size_t dst_ld, const void *src, size_t src_ld, size_t rows,
               size_t width, int accumulate, void *stream);

/* Most pieces fb_kconcat takes (a DenseNet-121 block concatenates at most 25). */
#define FB_KCONCAT_MAX 32

/* torch.cat along channels (NHWC rows) in one kernel, not one pitched copy per piece (about 535
 * a DenseNet-121 step). split 0: cat's columns [0, sum of widths) get pieces[0], pieces[1], ...
 * side by side, piece j being rows x widths[j] with pitch widths[j]. split 1, its gradient:
 * each piece gets its slice of cat's columns, added to it (fp32 sum, one rounding) where
 * accumulate[j] is non-zero (accumulate may be NULL: none). cat's pitch is cat_ld elements.
 * cudaErrorInvalidValue for npieces > FB_KCONCAT_MAX or widths summing past cat_ld. */
int fb_kconcat(int prec, int split, void *cat, size_t cat_ld, void *const *pieces,
               const size_t *widths, const int *accumulate, size_t npieces, size_t rows,
               void *stream);

#ifdef __cplusplus
}
#endif

#endif
