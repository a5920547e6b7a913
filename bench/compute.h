/* What compute lends another benchmark: its whole training step as one case, so that
 * `fabricbench locate` (bench/locate.c) times every node's compute stand-in through
 * fb_bench_compute's hooks and the one runner. */
#ifndef FB_COMPUTE_BENCH_H
#define FB_COMPUTE_BENCH_H

#include "bench.h"

/* Fills *c as compute's case of the whole step (our kernels, forward and backward, every group)
 * on every rank at once, for `batch` images (0: the backend's default, 8 on host, 32 on cuda) at
 * --resolution (0: 64 on host, 224 on cuda): its name, transport, FLOPs and images per
 * iteration, and the variant that frees compute's step with the case. FB_ERR_UNSUPPORTED, said
 * nowhere, where compute would be waived (no convolution engine for the backend, a precision
 * the host does not run); FB_ERR_USAGE for a bad --precision. */
fb_status fb_compute_step_case(const struct fb_ctx *ctx, long batch, struct fb_case *c);

#endif
