/* One DenseNet-121 training step's compute on a device backend, through a convolution engine:
 * the layers of fb_densenet_layers forward in order, then backward in reverse (per convolution
 * the data-gradient and weight-gradient GEMMs, per BatchNorm + ReLU its backward, per torch.cat
 * the slicing and accumulation of its gradient), with the moment each weight gradient is
 * ready. A reference mode runs the same GEMM shapes alone through the vendor BLAS (the
 * ceiling); a group can be run alone, forward or backward, to time it. */
#ifndef FB_DENSENET_STEP_H
#define FB_DENSENET_STEP_H

#include <stddef.h>

#include "backend.h"
#include "conv_engine.h"
#include "densenet_layers.h"

enum fb_step_passes { FB_STEP_FWD = 1u, FB_STEP_BWD = 2u, FB_STEP_BOTH = 3u };

enum fb_step_mode {
    FB_STEP_OURS,  /* every layer: GEMMs on the engine's kernels, and the memory-bound layers */
    FB_STEP_CONVS, /* the convolutions and the classifier only, on the engine's kernels */
    FB_STEP_REF,   /* the same GEMM shapes on dense operands through gemm_ref (the ceiling) */
};

enum { FB_STEP_ALL_GROUPS = -1 };

/* What to allocate: the activations, gradients and weights of a training step, and/or the
 * dense operands of the reference GEMMs. */
enum { FB_STEP_WITH_TRAIN = 1u, FB_STEP_WITH_REF = 2u };

/* When the gradient of one layer's parameters was ready: a convolution's weight (1 tensor), a
 * BatchNorm's weight and bias (2 tensors), the classifier's weight (1; its bias is left out). */
struct fb_grad_ready {
    size_t layer;   /* index into the layer list */
    int tensors;
    size_t params;  /* elements, as fb_layer params (the classifier: weight only) */
    double us;      /* microseconds from the start of the backward pass */
};

struct fb_densenet_step;

/* Called in a backward pass right after one parameter layer's gradient kernels and its ready
 * event are enqueued on the step's stream: the layer's index, and that event (a communication
 * stream can wait on it; on host the gradients are already computed). Layers come in backward
 * order, as fb_densenet_step_grad_ready lists them. A status other than FB_OK stops the pass
 * and is returned by fb_densenet_step_run. */
typedef fb_status (*fb_grad_ready_fn)(void *arg, size_t layer, struct fb_event *ready);

/* Installs (or with fn NULL removes) the gradient-ready hook; arg is passed through. */
void fb_densenet_step_on_ready(struct fb_densenet_step *st, fb_grad_ready_fn fn, void *arg);

/* Allocates on `be` (FB_MEM_DEVICE) what `what` asks for, fills inputs, weights and the loss
 * gradient with reproducible values, and keeps d, be, eng and ctx (not owned; they must
 * outlive the step). Work goes on stream s. FB_ERR_NOMEM / the backend's status on failure,
 * nothing left allocated. Not collective. */
fb_status fb_densenet_step_create(const struct fb_densenet_layers *d, const struct fb_backend *be,
                                  const struct fb_conv_engine *eng, struct fb_conv_ctx *ctx,
                                  enum fb_conv_prec prec, unsigned what, struct fb_stream *s,
                                  struct fb_densenet_step **out);
void fb_densenet_step_free(struct fb_densenet_step *st); /* accepts NULL */

/* Moves the step to stream s (a caller that keeps the step longer than the stream it was
 * made with, such as compute from one case to the next): its work goes on s from now, and
 * its events are made anew, so none outlives the stream or case they belonged to. The old
 * stream must be synchronised (or gone). FB_ERR_NOMEM / the backend's status on failure (the
 * step is then unusable: free it). */
fb_status fb_densenet_step_use_stream(struct fb_densenet_step *st, struct fb_stream *s);

/* Enqueues the layers of `group` (an index into fb_layer_group_names, or FB_STEP_ALL_GROUPS)
 * in `mode`: forward (in order) and/or backward (in reverse), per `passes`. A group alone reads
 * the activations and gradients an earlier whole step left, so run one whole step first.
 * Stream-ordered. FB_ERR_USAGE when the step lacks what the mode needs; FB_ERR_UNSUPPORTED
 * when mode is FB_STEP_REF and the engine has no reference (ref_missing). */
fb_status fb_densenet_step_run(struct fb_densenet_step *st, enum fb_step_mode mode, int group,
                               unsigned passes);

/* Multiply-accumulates a run of `group` and `passes` does (any mode: the same GEMMs): forward
 * n*p*q*k*r*s*c per convolution (n*k*c for the classifier); backward twice that, but once for
 * the first convolution, whose input gradient nobody needs. Pure. */
double fb_densenet_run_macs(const struct fb_densenet_layers *d, int group, unsigned passes);

/* After a whole step in FB_STEP_OURS or FB_STEP_CONVS, its stream synchronised: the parameter
 * layers in the order their gradients became ready (backward order), up to `cap` of them into
 * out; returns how many there are (the convolutions, BatchNorms and classifier). The times
 * come from backend events recorded right after each gradient's last kernel. */
size_t fb_densenet_step_grad_ready(const struct fb_densenet_step *st, struct fb_grad_ready *out,
                                   size_t cap);

/* Synchronous: counts non-finite values in what the last run of (group, passes) produced: the
 * group's output (forward) and the weight gradient of its first convolution (backward). */
fb_status fb_densenet_step_nonfinite(struct fb_densenet_step *st, int group, unsigned passes,
                                     size_t *bad);

/* The convolution shape of a layer (pools too: k = c; the global average pool's window is the
 * whole input; the classifier is a 1x1 convolution of a 1x1 input). Pure. */
struct fb_kconv fb_layer_kconv(const struct fb_layer *l);

#endif
