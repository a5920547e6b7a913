/* A DenseNet-121 data-parallel training step as Horovod or PyTorch DDP runs it, on a device
 * backend: the input pipeline's next batch (an image ring, image_ring.h) is copied to the
 * device on a copy stream and normalized; the compute stand-in (fb_densenet_step, our kernels)
 * runs forward and backward on the compute stream; the gradients are all-reduced in fusion
 * buckets while backward runs (overlap.h); then SGD with momentum updates every fp32 parameter.
 * Streams and events within a step; one synchronisation at its end, where the phases are read.
 *
 * What is reduced is a flat gradient buffer of DenseNet-121's real sizes in gradient-ready
 * order, filled once with the data pattern (kernels/pattern.h) and reduced out of place, so
 * that every step's sums can be checked: the pattern stands in for the stand-in's gradients,
 * whose values do not change what the exchange costs. */
#ifndef FB_TRAIN_STEP_H
#define FB_TRAIN_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "coll.h"
#include "conv_engine.h"
#include "trace.h"

struct fb_train_step_config {
    const struct fb_backend *be;
    const struct fb_coll *coll;
    struct fb_coll_comm *comm;  /* the group's collectives; borrowed */
    int rank, ranks;            /* this rank in the group, and the group's size */
    int batch, resolution, classes;
    enum fb_conv_prec prec;     /* the stand-in's GEMM inputs and activations */
    const char *dataset;        /* the input pipeline's images: "chestxray" or "imagenet" */
    int threads, depth;         /* its workers and ring slots */
    enum fb_mem host_kind;      /* its batches' memory: FB_MEM_PINNED or FB_MEM_PAGEABLE */
    size_t threshold;           /* fusion threshold, bytes (FB_FUSION_OFF: per tensor) */
    bool fp16_allreduce;        /* gradients on the wire as float16 (Horovod's Compression.fp16) */
    bool overlap;               /* all-reduce during backward; must be fb_overlap_possible */
    struct fb_stream *stream;   /* the compute stream; borrowed */
    long skip_bucket;           /* tests: a bucket never reduced (see overlap.h); -1 none */
};

/* One step's phases, in microseconds. They follow each other on the step's critical path
 * (the compute stream waits for the copy, the update for the last all-reduce), so
 * step_us - the others is what none of them covers (launches, hand-overs, the final sync). */
struct fb_step_times {
    double step_us;         /* host clock, from asking for the batch to the end-of-step sync */
    double data_wait_us;    /* host clock: blocked waiting for the input pipeline's batch */
    double h2d_us;          /* copy stream: the batch's host-to-device copy */
    double compute_us;      /* compute stream: normalize, forward and backward */
    double comm_exposed_us; /* compute stream: from the end of backward until every bucket is
                               reduced (what overlap did not hide) */
    double update_us;       /* compute stream: the optimizer update */
};

struct fb_train_step;

/* Opens the convolution engine, builds the model, starts the input pipeline's workers, fills
 * the buffers and creates the bucket engine. Not collective. *out is NULL on failure; a
 * message says what failed. */
fb_status fb_train_step_create(const struct fb_train_step_config *cfg, struct fb_train_step **out);
void fb_train_step_free(struct fb_train_step *ts); /* accepts NULL */

/* One whole training step, synchronised at its end; its phases into *t. With `trace`, its
 * spans are added (step number `step`). Collective over the group (the all-reduces). */
fb_status fb_train_step_run(struct fb_train_step *ts, struct fb_trace *trace, int step,
                            struct fb_step_times *t);

/* Poisons the reduced gradients, runs one step and counts the gradient sums that are wrong
 * (against the pattern's closed form, float16 included) and the stand-in's non-finite values.
 * Collective over the group. */
fb_status fb_train_step_check(struct fb_train_step *ts, size_t *wrong);

size_t fb_train_step_nbuckets(const struct fb_train_step *ts);
size_t fb_train_step_parameters(const struct fb_train_step *ts);
/* What does the compute ("im2col-openblas-fp32", "implicit-gemm-fp16"). */
const char *fb_train_step_engine(const struct fb_train_step *ts);

#endif
