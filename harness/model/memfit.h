/* The largest per-GPU batch of DenseNet-121 training that fits: a model of what a training step
 * holds at its peak (PyTorch's plain implementation), and the tensors to allocate to confirm it
 * on the device. Used by the `memfit` benchmark and by the harness to pick a default batch. */
#ifndef FB_MEMFIT_H
#define FB_MEMFIT_H

#include <stddef.h>

#include "densenet_layers.h"
#include "status.h"

struct fb_memfit_config {
    int resolution;
    int classes;
    int act_bytes;   /* bytes of an activation: 2 for mixed precision (fp16, bf16), 4 for fp32 */
    int opt_slots;   /* fp32 optimizer state per weight: 0 SGD, 1 momentum, 2 Adam */
};

/* Bytes of each part at one batch. */
struct fb_memfit_parts {
    size_t weights;     /* fp32 master weights, plus their half-precision copies under autocast */
    size_t grads;       /* fp32 weight gradients */
    size_t optimizer;   /* opt_slots fp32 values per weight */
    size_t activations; /* the input batch and every layer output autograd keeps for backward */
    size_t workspace;   /* backward's transient gradients (see memfit.c) */
    size_t total;
};

/* The parts at `batch` images (>= 1). */
fb_status fb_memfit_estimate(const struct fb_memfit_config *cfg, int batch,
                             struct fb_memfit_parts *out);

/* The largest batch whose estimate fits in `budget` bytes; 0 when not even one image does.
 * Every part is a fixed cost plus a per-image cost, so this is exact for the model. */
long fb_memfit_batch_for(const struct fb_memfit_config *cfg, size_t budget);

/* The sizes of the separate buffers a step at `batch` holds (one per weight tensor and state,
 * one per saved activation, the workspace), malloc'ed into *sizes: what a confirmation
 * allocates one by one. Their sum is fb_memfit_estimate's total. */
fb_status fb_memfit_buffers(const struct fb_memfit_config *cfg, int batch, size_t **sizes,
                            size_t *n);

#endif
