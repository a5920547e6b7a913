/* The memory of a DenseNet-121 training step, as fabricbench's step holds it: one model, used
 * by the `memfit` benchmark (the largest batch that fits, confirmed by allocating it) and by the
 * step's own allocators (harness/train/densenet_step.c for the network, train_step.c for the
 * step's input, gradients and optimizer), which take their buffers from this plan in its order
 * and refuse to run when what they need differs from it by a byte. */
#ifndef FB_MEMFIT_H
#define FB_MEMFIT_H

#include <stddef.h>

#include "densenet_layers.h"
#include "status.h"

struct fb_memfit_config {
    int resolution;
    int classes;
    int act_bytes;   /* bytes of an activation: 2 for mixed precision (fp16, bf16), 4 for fp32 */
    int opt_slots;   /* fp32 optimizer state per weight: 0 SGD, 1 momentum (the step's), 2 Adam */
    int grad_bytes;  /* the all-reduced gradients' element: 4 (float32) or 2 (--fp16-allreduce) */
};

/* What each buffer is for. The network's (the step's compute, densenet_step.c), in order: */
enum fb_memfit_role {
    FB_BUF_IMAGE,      /* the batch in the compute precision, n x R x R x 3 */
    FB_BUF_BN_SCRATCH, /* BatchNorm backward's per-channel sums: 2 x the widest layer, fp32 */
    FB_BUF_TMP,        /* a layer's input gradient before it is added to one already there */
    FB_BUF_OUT,        /* per layer: its output */
    FB_BUF_GRAD,       /* per layer: the loss's gradient by its output */
    FB_BUF_W,          /* convolution and classifier weights, compute precision */
    FB_BUF_DW,         /* their gradients, fp32 */
    FB_BUF_GAMMA, FB_BUF_BETA, FB_BUF_DGAMMA, FB_BUF_DBETA, /* BatchNorm's, fp32 */
    FB_BUF_MEAN_VAR,   /* BatchNorm's saved batch mean and variance, fp32 */
    /* the step's own (train_step.c), after them: */
    FB_BUF_WIRE,       /* the batch as copied from the host, uint8 */
    FB_BUF_INPUT,      /* the batch normalized, float32 */
    FB_BUF_GRAD_SEND, FB_BUF_GRAD_RECV, /* every weight's gradient, all-reduced (grad_bytes) */
    FB_BUF_MASTER,     /* fp32 master weights */
    FB_BUF_OPT_STATE,  /* one per optimizer slot: fp32 per weight */
    FB_BUF_ROLES
};

/* One device buffer: its role, the layer it belongs to (-1: the step's own) and its bytes. */
struct fb_memfit_buf {
    enum fb_memfit_role role;
    long layer;
    size_t bytes;
};

/* Which buffers a plan lists: the network's, the step's own, or both (a whole step). */
enum { FB_MEMFIT_NET = 1, FB_MEMFIT_STEP = 2, FB_MEMFIT_ALL = 3 };

/* The buffers of a step at `batch` images (>= 1), in the order the step allocates them,
 * malloc'ed into *out. FB_ERR_USAGE on a bad config or batch. */
fb_status fb_memfit_plan(const struct fb_memfit_config *cfg, int batch, unsigned which,
                         struct fb_memfit_buf **out, size_t *n);

/* The role's name ("out", "grad", ...), for messages. */
const char *fb_memfit_role_name(enum fb_memfit_role role);

/* An allocator taking its buffers from a plan, in order: plan[*at] must be (role, layer, bytes),
 * and *at moves past it; else one error line naming what the plan lists and what the allocator
 * needs, and FB_ERR_INTERNAL (the model and the step have drifted apart). */
fb_status fb_memfit_take(const struct fb_memfit_buf *plan, size_t n, size_t *at,
                         enum fb_memfit_role role, long layer, size_t bytes);

/* After the last take: FB_ERR_INTERNAL and a line when the plan lists buffers never taken. */
fb_status fb_memfit_took_all(const struct fb_memfit_buf *plan, size_t n, size_t at);

/* Bytes of each part of a whole step at one batch. */
struct fb_memfit_parts {
    size_t weights;     /* master weights, their compute-precision copies, BatchNorm's vectors */
    size_t grads;       /* weight gradients: per layer (fp32) and the all-reduced pair */
    size_t optimizer;   /* opt_slots fp32 values per weight */
    size_t activations; /* the batch (wire, normalized, compute precision) and every output */
    size_t act_grads;   /* the gradient by every layer's output, the input gradient's buffer,
                           BatchNorm's scratch */
    size_t total;
};

/* The parts at `batch` images (>= 1): the plan's buffers summed. */
fb_status fb_memfit_estimate(const struct fb_memfit_config *cfg, int batch,
                             struct fb_memfit_parts *out);

/* The largest batch whose estimate fits in `budget` bytes; 0 when not even one image does.
 * Every buffer is a fixed size or a size per image, so this is exact for the model. */
long fb_memfit_batch_for(const struct fb_memfit_config *cfg, size_t budget);

#endif
