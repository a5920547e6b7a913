/* A data loader's ring, as PyTorch's DataLoader runs it: worker threads each build whole
 * batches; batch n goes to ring slot n % depth; one consumer takes the batches strictly in order
 * and releases each when done with it, which frees its slot for batch n + depth. What a batch
 * holds is the caller's business (a fill callback), so the ring is tested on its own. Slots are
 * allocated through a device backend (pinned or pageable host memory). */
#ifndef FB_INPUT_PIPELINE_H
#define FB_INPUT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

/* Builds batch number `batch` into dst (slot_bytes bytes), on worker thread `worker`
 * (0..threads-1; one at a time per worker, so per-worker scratch needs no lock). A status other
 * than FB_OK ends the stream there: the consumer still gets the batches before it, then the
 * status from its take. */
struct fb_pipeline;
typedef fb_status (*fb_pipeline_fill_fn)(void *arg, struct fb_pipeline *p, int worker, long batch,
                                         void *dst);

struct fb_pipeline_config {
    const struct fb_backend *be;
    enum fb_mem kind;    /* FB_MEM_PINNED or FB_MEM_PAGEABLE */
    size_t slot_bytes;   /* one batch */
    int threads;         /* workers, >= 1 */
    int depth;           /* ring slots, >= 1 */
    fb_pipeline_fill_fn fill;
    void *arg;
};

/* A batch handed to the consumer. The sequence number lives here, not in the batch's bytes. */
struct fb_batch {
    long seq;   /* the batch number: 0, 1, 2, ... in the order taken */
    void *data; /* slot_bytes bytes, valid until released */
    int slot;
};

struct fb_pipeline;

/* Allocates the ring and starts the workers, which begin filling at once. *out is NULL on
 * failure (FB_ERR_NOMEM, FB_ERR_USAGE for a bad config, the backend's alloc status). */
fb_status fb_pipeline_start(const struct fb_pipeline_config *cfg, struct fb_pipeline **out);

/* Blocks until the next batch in order (0, 1, 2, ...) is full, and hands it out. Returns a
 * worker's failure status in place of the batch it failed to build, FB_ERR_USAGE when more than depth batches are held
 * (taking another would wait forever). One consumer thread only. */
fb_status fb_pipeline_take(struct fb_pipeline *p, struct fb_batch *b);

/* Gives a taken batch's slot back to the workers. Batches may be released in any order. */
void fb_pipeline_release(struct fb_pipeline *p, const struct fb_batch *b);

/* Stops the workers (one filling a batch finishes it first; none is left waiting), joins them
 * and frees the ring. Accepts NULL. */
void fb_pipeline_stop(struct fb_pipeline *p);

/* The gate: while closed, workers take on no new batch, and a fill that calls
 * fb_pipeline_gate_wait between its items stops there. A benchmark closes it while nobody times
 * the pipeline (between trials), so the ring does not fill up for free and flatter the next
 * trial. Open at start. */
void fb_pipeline_gate(struct fb_pipeline *p, bool open);

/* For fill callbacks, between two items: returns once the gate is open or the pipeline stops. */
void fb_pipeline_gate_wait(struct fb_pipeline *p);

/* The CPUs this process may run on (sched_getaffinity), at least 1: the default thread count. */
int fb_pipeline_cpus(void);

#endif
