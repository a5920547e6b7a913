/* Tensor fusion: how a data-parallel framework groups gradient tensors into all-reduce
 * buffers. Horovod fuses the tensors that are ready into one buffer up to
 * HOROVOD_FUSION_THRESHOLD (64 MiB up to 0.20, 128 MiB since; 0 turns fusion off); PyTorch DDP
 * fills 25 MiB buckets. Both take tensors in the order their gradients become ready. */
#ifndef FB_FUSION_H
#define FB_FUSION_H

#include <stddef.h>

#include "densenet.h"
#include "status.h"

/* Tensors [first, first + count) of the gradient-ready order, reduced as one buffer. */
struct fb_bucket {
    size_t first, count;
    size_t elements;
};

enum { FB_FUSION_OFF = 0 };
#define FB_FUSION_FLAT ((size_t)-1) /* everything in one buffer */

/* Greedy, in gradient-ready order: a bucket takes the next tensor while its bytes
 * (elements * elem_bytes) stay within `threshold`; a tensor larger than the threshold on its
 * own gets a bucket of its own. FB_FUSION_OFF gives one bucket per tensor, FB_FUSION_FLAT one
 * bucket. *out is malloc'ed (free() it). */
fb_status fb_fusion_plan(const struct fb_densenet *d, size_t elem_bytes, size_t threshold,
                         struct fb_bucket **out, size_t *nbuckets);

/* The same plan for any model: tensors of elements[0..n) elements, in gradient-ready order.
 * elements[i] * elem_bytes and the threshold must fit in size_t with room for one more tensor
 * (the caller's limits: `fabricbench mix` keeps each below 1e18). */
fb_status fb_fusion_plan_sizes(const size_t *elements, size_t n, size_t elem_bytes,
                               size_t threshold, struct fb_bucket **out, size_t *nbuckets);

#endif
